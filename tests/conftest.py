import logging

import pytest

logging.getLogger().setLevel(logging.ERROR)  # dp_accounting warns through the root logger


@pytest.fixture(scope="session")
def repo_root():
    from pathlib import Path

    return Path(__file__).resolve().parents[1]
