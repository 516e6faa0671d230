"""Random sidedness: every certified end of every sampler against an independent reference, at seeded random settings.

A setting is drawn per sampler from the ranges of issue 38 (σ 0.05–20, total steps 1–1e6, δ 1e-12–1e-2, q 1e-5–0.5,
caps from the mean batch to the dataset size), asked through :func:`dpsampling.samplers.account` as a user would
(the cost model's refusals are counted, not run), and each end is checked against a reference that shares no code
with the end it checks:

* deterministic: the Gaussian at σ/√E in mpmath (``references.gaussian_epsilon``): the answer must equal it to a few
  ulps, and every other one-batch-per-step sampler's lower end must be at or below it (its upper end is a bound of
  the same relation: shuffle's is that value, balls-and-bins' at most it where it is finite);
* poisson: dp_accounting's PLD pair at a discretisation 10× finer than ours, read in δ: our lower end is not above its
  pessimistic (upper) curve and our upper end not below its optimistic (lower) one, each up to dp_accounting's
  measured rounding of δ (:data:`DP_ACCOUNTING_DELTA_ERROR`) or its composition's proven rounding bound where larger
  (below δ ≈ 1e-10 that rounding is the reference's error, not ours);
* wor: dp_accounting's RDP accountant for ``SampledWithoutReplacementDpEvent`` under REPLACE_ONE (an upper bound on
  the same relation, as our WOR answer): our lower end ≤ it;
* balls_and_bins (small T): PLD_accounting's certified range (``references.allocation_range``): the two intervals
  overlap; at any T, the lower end ≤ the deterministic value;
* truncated_poisson: dp_accounting's ``TruncatedSubsampledGaussianDpEvent`` through its PLD accountant (an upper
  bound): our lower end ≤ it;
* shuffle: lower end ≤ the deterministic value (Chua et al. Thm 4.1) and upper end ≥ it.

Monotonicity ladders (``ladder``) ask three settings that differ in σ, δ or the number of epochs: the true ε is
non-increasing in σ and δ and non-decreasing in epochs, so the lower end of the more private setting must not exceed
the upper end of the less private one.

Used by ``tests/test_sidedness.py`` (the fast tier, a few settings per sampler on every CI run) and
``bench/bench_sidedness.py`` (the long tier, hundreds of settings, run by hand).  No assertion here: each check
returns a list of failures (strings), so the long tier can report every one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

#: the ranges of the draws (issue 38)
SIGMA = (0.05, 20.0)
TOTAL_STEPS = (1, 1_000_000)
DELTA = (1e-12, 1e-2)
Q = (1e-5, 0.5)


@dataclass
class Setting:
    sampler: str
    delta: float
    sigma: float
    steps: int
    epochs: int
    q: float | None = None
    options: dict = field(default_factory=dict)

    def kwargs(self) -> dict:
        return dict(sigma=self.sigma, steps=self.steps, epochs=self.epochs, q=self.q, **self.options)

    def __str__(self):
        opts = "".join(f" {k}={v}" for k, v in self.options.items())
        q = "" if self.q is None else f" q={self.q:.3g}"
        return (f"{self.sampler} δ={self.delta:.3g} σ={self.sigma:.4g} steps={self.steps} epochs={self.epochs}"
                f"{q}{opts}")


def _loguniform(rng, lo, hi):
    return float(math.exp(rng.uniform(math.log(lo), math.log(hi))))


#: the narrower ranges of a capped sampler in the fast tier (its questions and dp_accounting's truncated event cost
#: tens of seconds at σ < 0.3 or δ < 1e-9: those are the long tier's)
FAST_CAPPED = dict(sigma=(0.3, 20.0), delta=(1e-9, 1e-2), total_steps=(1, 10_000))


def draw(rng: np.random.Generator, sampler: str, fast: bool = False) -> Setting:
    """One random setting of ``sampler`` (its batch model decides whether q is free and whether there is a cap;
    ``fast``: a capped sampler's ranges are :data:`FAST_CAPPED`)."""
    from dpsampling.samplers import get_spec

    spec = get_spec(sampler)
    narrow = fast and spec.batch == "capped"
    sigma = _loguniform(rng, *(FAST_CAPPED["sigma"] if narrow else SIGMA))
    delta = _loguniform(rng, *(FAST_CAPPED["delta"] if narrow else DELTA))
    total = int(round(_loguniform(rng, *(FAST_CAPPED["total_steps"] if narrow else TOTAL_STEPS))))
    epochs = int(round(_loguniform(rng, 1, max(1, total) ** 0.5)))  # at most √total epochs
    steps = max(1, total // epochs)
    if spec.batch == "one_per_step":
        return Setting(sampler, delta, sigma, steps, epochs)
    q = _loguniform(rng, *Q)
    if spec.batch == "capped":
        n = int(round(_loguniform(rng, max(20.0, 2.0 / q), 2e5)))
        mean = q * (n - 1)
        cap = int(round(_loguniform(rng, max(1.0, mean), n)))
        return Setting(sampler, delta, sigma, steps, epochs, q, {"dataset_size": n, "max_batch_size": cap})
    return Setting(sampler, delta, sigma, steps, epochs, q)


def predicted_seconds(s: Setting) -> float:
    """What the sampler's cost model predicts for the ε question of ``s`` (inf if it cannot run at all, or not
    within the memory limit)."""
    from dpsampling.samplers import get_spec, question

    spec = get_spec(s.sampler)
    try:
        c = spec.cost(question(s.sampler, "epsilon", s.delta, **s.kwargs()))
    except (TypeError, ValueError, ArithmeticError):
        return 0.0
    from dpsampling.samplers.spec import MEMORY_LIMIT

    return math.inf if c.why or c.bytes > MEMORY_LIMIT else float(c.seconds)  # beyond memory: refused, forced or not


def answer(s: Setting):
    """Our answer to the ε(δ) question of ``s``, as a user gets it."""
    from dpsampling.samplers import account

    return account(s.sampler, "epsilon", s.delta, **s.kwargs())


def _deterministic(s: Setting) -> float:
    from dpsampling.references import gaussian_epsilon

    return gaussian_epsilon(s.delta, s.sigma, s.epochs).lower


def _ends(r):
    lo = r.lower if r.lower is not None else (r.value if r.kind == "exact" else None)
    up = r.upper if r.upper is not None else (r.value if r.kind == "exact" else None)
    return lo, up


def references(s: Setting, r) -> list:
    """The failures of answer ``r`` to setting ``s`` against its independent references ([] if none)."""
    lo, up = _ends(r)
    out = []

    def below(a, b, what):  # a ≤ b must hold
        if a is not None and b is not None and not a <= b:
            out.append(f"{s}: {what}: {a!r} > {b!r}")

    if lo is not None and up is not None:
        below(lo, up, "lower end above upper end")
    if s.sampler == "deterministic":
        exact = _deterministic(s)
        if not math.isclose(r.value, exact, rel_tol=1e-12, abs_tol=1e-300):
            out.append(f"{s}: deterministic {r.value!r} != mpmath {exact!r}")
    elif s.sampler in ("shuffle", "balls_and_bins") and r.kind == "exact":
        # one step per epoch: the answer is the deterministic one (kind exact, the closed form in floats, not a
        # lower end): held to the deterministic sampler's check (long tier seed 2027: balls_and_bins σ 1.677, δ
        # 5.12e-6, one step: 2.5204899099546694 against mpmath's 2.5204899099546667, 1.1e-15 relative)
        exact = _deterministic(s)
        if not math.isclose(r.value, exact, rel_tol=1e-12, abs_tol=1e-300):
            out.append(f"{s}: one batch per epoch {r.value!r} != mpmath {exact!r}")
    elif s.sampler in ("shuffle", "balls_and_bins"):
        exact = _deterministic(s)
        below(lo, exact, "lower end above the deterministic value (mpmath)")
        if s.sampler == "shuffle":
            below(exact * (1 - 1e-12), up, "upper end below the deterministic value (mpmath)")
        if s.sampler == "balls_and_bins" and s.steps * s.epochs <= 200 and s.steps > 1:
            from dpsampling.references import allocation_range

            ref = allocation_range(s.delta, sigma=s.sigma, steps=s.steps, epochs=s.epochs, abs_tol=0.01)
            below(lo, ref.upper, "lower end above PLD_accounting's upper end")
            below(ref.lower, up, "upper end below PLD_accounting's lower end")
    elif s.sampler == "poisson":
        out += _poisson_pair(s, lo, up, _finer(r))
    elif s.sampler == "wor":
        below(lo, _wor_rdp(s), "lower end above dp_accounting's RDP (WOR, replace-one)")
    elif s.sampler == "truncated_poisson":
        below(lo, _truncated_dp_accounting(s), "lower end above dp_accounting's truncated event")
    return out


#: the absolute error of dp_accounting's composed δ(ε) (FFT rounding and truncation): measured 0.5–4.5e-14 whatever δ
#: is (engine/result.py, RELIABLE_DELTA_FLOOR's evidence); a reference end is trusted up to this much in δ
DP_ACCOUNTING_DELTA_ERROR = 1e-13


def _poisson_pair(s, lo, up, d) -> list:
    """dp_accounting's PLD pair at discretisation ``d`` (pessimistic connect-the-dots above, optimistic privacy
    buckets below; ``references._gaussian_pld``, composed by its ``self_compose``), compared in δ: our lower end ε_lo
    must have δ_pess(ε_lo) ≥ δ − err (else it is above the pessimistic ε(δ)), our upper end ε_up δ_opt(ε_up) ≤ δ + err
    — with err = :data:`DP_ACCOUNTING_DELTA_ERROR`, so that the reference's own rounding, which dominates below
    δ ≈ 1e-10, is not taken for our error."""
    from dpsampling.references import _gaussian_pld

    out, total = [], s.steps * s.epochs
    one_pess = _gaussian_pld(float(s.sigma), 1.0, float(s.q), float(d), True)
    one_opt = _gaussian_pld(float(s.sigma), 1.0, float(s.q), float(d), False)
    pess, opt = one_pess.self_compose(int(total)), one_opt.self_compose(int(total))
    if lo is not None and lo > 0:
        err = max(DP_ACCOUNTING_DELTA_ERROR, _fft_error(one_pess, pess, total, lo))
        if pess.get_delta_for_epsilon(lo) < s.delta - err:
            out.append(f"{s}: lower end {lo!r} above dp_accounting's pessimistic PLD (d = {d:.1e}): its δ there is "
                       f"{pess.get_delta_for_epsilon(lo)!r} < δ (its rounding bound {err:.2g})")
    if up is not None and math.isfinite(up):
        err = max(DP_ACCOUNTING_DELTA_ERROR, _fft_error(one_opt, opt, total, up))
        if opt.get_delta_for_epsilon(up) > s.delta + err:
            out.append(f"{s}: upper end {up!r} below dp_accounting's optimistic PLD (d = {d:.1e}): its δ there is "
                       f"{opt.get_delta_for_epsilon(up)!r} > δ (its rounding bound {err:.2g})")
    return out


def _fft_error(one, composed, total, epsilon) -> float:
    """A bound on what the FFT composition's rounding may move the reference's δ(ε) by, max over its directions
    (the bound of engine/pld.py's composition_error and rounding_at: a 2-norm bound on the masses' error times the
    weights' norm).  Long tier seed 2030, Poisson σ 0.665, q 8.85e-4, 11768 steps, δ 1.4e-11: the reference's δ at
    the φ accountant's certified lower end was 2.5e-13 below δ (another composition of the same pmf: 6e-13 above;
    the bound is 7.8e-10), so below δ ≈ 1e-9 at such T no reference in δ decides, and none is claimed."""
    from dp_accounting.pld import pld_pmf

    from dpsampling.engine import pld

    if total <= 1:
        return 0.0
    out = 0.0
    for o, c in zip(pld.direction_pmfs(one, "add_remove"), pld.direction_pmfs(composed, "add_remove")):
        if not isinstance(c, pld_pmf.DensePLDPmf):
            continue
        o = o if isinstance(o, pld_pmf.DensePLDPmf) else o.to_dense_pmf()
        out = max(out, pld.rounding_at(c, pld.composition_error(o._probs, int(total), c._probs), float(epsilon)))
    return out


def _finer(r) -> float:
    """A discretisation 10× finer than the one our answer used (1e-4 if it does not say)."""
    acc = r.accuracy or {}
    d = acc.get("discretization") or acc.get("value_discretization_interval")
    try:
        d = float(d) / 10.0
    except (TypeError, ValueError):
        d = 1e-4
    # a reference finer than 1e-5 costs minutes (dp_accounting's grid grows as 1/d); a coarser pair is still a pair
    # of bounds, only a weaker check
    return max(d, 1e-5)


def _wor_rdp(s: Setting) -> float:
    """dp_accounting's RDP ε of WOR batches under replace-one: ``SampledWithoutReplacementDpEvent`` of a dataset
    of n records and batches of b = q·n, the Gaussian's noise multiplier halved (sensitivity 2 under replace-one, as
    dp_accounting's convention for this event)."""
    import dp_accounting as dpa
    from dp_accounting.rdp import RdpAccountant

    n = max(int(round(1.0 / s.q)) * 100, 100)
    b = max(1, int(round(s.q * n)))
    acc = RdpAccountant(neighboring_relation=dpa.NeighboringRelation.REPLACE_ONE)
    ev = dpa.SampledWithoutReplacementDpEvent(n, b, dpa.GaussianDpEvent(s.sigma / 2.0))
    acc.compose(ev, s.steps * s.epochs)
    return float(acc.get_epsilon(s.delta))


def _truncated_dp_accounting(s: Setting) -> float:
    """dp_accounting's PLD ε of ``TruncatedSubsampledGaussianDpEvent`` (an upper bound, add/remove)."""
    import dp_accounting as dpa
    from dp_accounting.pld import PLDAccountant

    ev = dpa.TruncatedSubsampledGaussianDpEvent(dataset_size=s.options["dataset_size"], sampling_probability=s.q,
                                                truncated_batch_size=s.options["max_batch_size"],
                                                noise_multiplier=s.sigma)
    acc = PLDAccountant()
    acc.compose(ev, s.steps * s.epochs)
    return float(acc.get_epsilon(s.delta))


def ladder(s: Setting) -> list:
    """Failures of the monotonicity ladders around ``s`` (σ × {1, 1.25}, δ × {1, 4}, epochs {E, E + 1}): the lower
    end of the more private setting must not exceed the upper end of the less private one."""
    out = []
    pairs = [("sigma", s, Setting(**{**s.__dict__, "sigma": s.sigma * 1.25})),
             ("delta", s, Setting(**{**s.__dict__, "delta": min(s.delta * 4, 0.5)})),
             ("epochs", Setting(**{**s.__dict__, "epochs": s.epochs + 1}), s)]
    for what, less_private, more_private in pairs:
        lo, _ = _ends(answer(more_private))
        _, up = _ends(answer(less_private))
        if lo is not None and up is not None and not lo <= up:
            out.append(f"{s}: ladder in {what}: lower end {lo!r} of the more private setting > upper end {up!r}")
    return out


def settings(seed: int, sampler: str, n: int, max_seconds: float, fast: bool = False) -> tuple:
    """(``n`` settings of ``sampler`` predicted under ``max_seconds`` each, number of draws refused as slower),
    drawn from ``np.random.default_rng([seed, index of sampler])``."""
    from dpsampling.samplers import SAMPLERS

    rng = np.random.default_rng([seed, SAMPLERS.index(sampler)])
    out, refused = [], 0
    while len(out) < n:
        s = draw(rng, sampler, fast)
        if predicted_seconds(s) <= max_seconds:
            out.append(s)
        else:
            refused += 1
            if refused > 200 * n:
                break
    return out, refused
