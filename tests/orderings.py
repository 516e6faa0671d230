"""The one random sample of small-T settings that the ordering tests share (tests/engine/test_accountant.py: the
accountant's bounds; tests/samplers/test_account.py: the samplers'), drawn once from a seeded numpy generator in
ranges a user meets at small T: σ ∈ [0.5, 3], q ∈ [1e-3, 0.5] log-uniform, T ∈ [1, 50], ε ∈ [0.1, 4],
δ ∈ [1e-8, 1e-3] log-uniform; PLD at a fixed discretisation D (every inequality is a theorem there too)."""

import math

import numpy as np

N_SETTINGS = 12
D = 1e-3


def _settings():
    rng = np.random.default_rng(20261123)
    out = []
    for _ in range(N_SETTINGS):
        out.append(dict(sigma=float(rng.uniform(0.5, 3.0)), q=float(10 ** rng.uniform(-3, math.log10(0.5))),
                        steps=int(rng.integers(1, 51)), eps=float(rng.uniform(0.1, 4.0)),
                        delta=float(10 ** rng.uniform(-8, -3))))
    return out


SETTINGS = _settings()


def setting_id(s):
    return f"s{s['sigma']:.2f}-q{s['q']:.1e}-T{s['steps']}-e{s['eps']:.2f}"
