"""End-to-end tests with the real training libraries (Opacus on CPU PyTorch, JAX Privacy).

The main test suite skips them, with the reason, when the libraries are not installed; the integration step of
``.ci/run`` (tests/integrations/run.sh) installs them and sets DPSAMPLING_REQUIRE_INTEGRATIONS=1, so that a
missing library fails instead of skipping.
"""

import importlib
import os

import pytest

REQUIRE = os.environ.get("DPSAMPLING_REQUIRE_INTEGRATIONS") == "1"


def require(module, extra):
    """Import ``module``, or skip (fail under DPSAMPLING_REQUIRE_INTEGRATIONS=1) naming the extra to install."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        if REQUIRE:
            raise
        pytest.skip(f"{module} is not installed ({exc}); pip install 'dpsampling[{extra}]' (CPU torch first, "
                    f"README 'In your training library') or run tests/integrations/run.sh", allow_module_level=True)
