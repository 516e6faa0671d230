"""dpsampling: privacy accounting of DP-SGD under different batch samplers.

The math lives here as pure functions (no file I/O); the Snakemake pipeline
(``Snakefile``, ``workflow/``, ``scripts/``) and the ``dpsampling`` command
line are thin layers on top.
"""

from .accountant import AccountingResult, calibrate_sigma, delta, epsilon

__version__ = "0.1.0"

__all__ = ["AccountingResult", "calibrate_sigma", "delta", "epsilon", "__version__"]
