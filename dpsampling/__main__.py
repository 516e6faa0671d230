"""``python -m dpsampling ...`` runs the ``dpsampling`` command line (the same entry point as the console script)."""

import sys

from dpsampling.cli import main

sys.exit(main())
