"""The accounting engine: results and their accuracy contract, numerics, closed forms, PLD/RDP/φ accountants.

Imports nothing from :mod:`dpsampling.samplers` or :mod:`dpsampling.papers`.
"""
