"""Accountants for the libraries practitioners train with: :mod:`.opacus` (PyTorch) and :mod:`.jax_privacy` (JAX).

Each module imports its library on import (install the extras: ``pip install 'dpsampling[opacus]'`` or
``'dpsampling[jax]'``); every number they give comes from :func:`dpsampling.samplers.account` or
:func:`dpsampling.audit`, so an integration and the ``dpsampling`` command line give one answer per question.
"""
