"""Command line: what is ε (or δ, or σ) of *my* DP-SGD run under each sampler?

    dpsampling epsilon --sampler poisson --sigma 0.8 --q 1e-3 --steps 10000 --delta 1e-6
    dpsampling delta   --sampler wor     --sigma 0.8 --q 1e-3 --steps 10000 --epsilon 1
    dpsampling sigma   --sampler poisson --epsilon 1 --delta 1e-6 --q 1e-3 --steps 10000

Each prints one JSON object (value, kind, method, accuracy settings, ...).
Bad input exits with code 2 and a one-line message naming the flag.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import sys
import warnings
from typing import TYPE_CHECKING

from . import statement

if TYPE_CHECKING:
    from .engine.result import AccountingResult

# Start-up: the accountants import dp_accounting and through it scipy.stats (~1 s of CPU), so this module
# imports them only in _run, when a question is asked; --help and argument errors stay fast. The parser's
# choices and defaults are therefore literals here; tests/test_cli.py checks that they equal the library's
# (dpsampling.samplers.SAMPLERS, engine.validation.DIRECTIONS / METHODS, engine.accountant.DEFAULT_REL_TOL).
SAMPLERS = ("poisson", "wor", "shuffle", "deterministic", "balls_and_bins")
DIRECTIONS = ("add", "remove", "add_remove")
METHODS = ("pld", "rdp", "analytic", "cf")
DEFAULT_REL_TOL = 1e-3


#: balls_and_bins methods besides pld (certified bounds)
BNB_METHODS = ("montecarlo", "max_statistic")
#: Monte Carlo samples per direction when neither --mc-samples nor --mc-half-width is given
MC_SAMPLES = 100_000
#: samplers with one batch per step (q = 1/steps)
ONE_BATCH_PER_STEP = ("shuffle", "deterministic", "balls_and_bins")


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit code 2
        self.exit(2, f"dpsampling: error: {message}\n")


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="dpsampling", description="Privacy accounting of DP-SGD under different batch samplers.")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    def common(sp, sigma=True):
        sp.add_argument("--sampler", choices=SAMPLERS, default="poisson",
                        help="batch sampler (default poisson); shuffle (lower bound with the deterministic value as "
                             "upper end), deterministic (exact) and balls_and_bins (certified bounds) have one batch "
                             "per step, so q = 1/steps (Chua et al. 2024, 2025)")
        if sigma:
            sp.add_argument("--sigma", type=float, required=True, help="noise multiplier σ > 0")
        sp.add_argument("--q", type=float, default=None,
                        help="sampling rate γ in (0, 1]; required for poisson/wor, = 1/steps (optional) otherwise")
        sp.add_argument("--steps", type=int, required=True, help="number of steps per epoch T >= 1")
        sp.add_argument("--epochs", type=int, default=1, help="number of epochs E >= 1 (default 1): steps×epochs steps")
        sp.add_argument("--direction", choices=DIRECTIONS, default="add_remove",
                        help="neighbouring direction (default add_remove = max of both)")
        sp.add_argument("--method", choices=METHODS + BNB_METHODS, default="pld",
                        help="accountant (default pld); cf = Zhu et al. φ accountant, an estimate with its "
                             "certified error (epsilon/delta only); balls_and_bins: pld (certified bounds), "
                             "montecarlo (δ or ε estimate with its band), max_statistic (Chua et al. lower bound)")
        sp.add_argument("--rel-tol", type=float, default=DEFAULT_REL_TOL,
                        help="relative accuracy of PLD results, in (0, 0.1]")
        sp.add_argument("--accuracy", choices=("default", "fine"), default=None,
                        help="balls_and_bins certified bounds: default (relative width ≤ 5e-2) or fine (≤ 1e-2)")
        sp.add_argument("--shuffle-mode", choices=("dynamic", "persistent"), default=None,
                        help="shuffle: a fresh permutation every epoch (dynamic, default) or one reused (persistent)")
        sp.add_argument("--mc-samples", type=int, default=None,
                        help=f"balls_and_bins --method montecarlo: samples per direction (default {MC_SAMPLES:g}); "
                             "with --mc-half-width, the sample budget")
        sp.add_argument("--mc-seed", type=int, default=None, help="balls_and_bins --method montecarlo: seed (default 0)")
        sp.add_argument("--failure-prob", type=float, default=None,
                        help="balls_and_bins --method montecarlo: probability β in (0, 1) that the band misses δ "
                             "(default 0.01)")
        sp.add_argument("--mc-half-width", type=float, default=None,
                        help="balls_and_bins --method montecarlo: requested half-width of the band on δ; the sample "
                             "size is computed (exit 1 if it exceeds --mc-samples)")

    e = sub.add_parser("epsilon", help="ε for a target δ")
    common(e)
    e.add_argument("--delta", type=float, required=True, help="δ in (0, 1)")
    e.add_argument("--bound", choices=("upper", "lower"), default=None, help="default: the sampler's first bound")
    d = sub.add_parser("delta", help="δ for a target ε")
    common(d)
    d.add_argument("--epsilon", type=float, required=True, help="ε >= 0")
    d.add_argument("--bound", choices=("upper", "lower"), default=None, help="default: the sampler's first bound")
    s = sub.add_parser("sigma", help="smallest σ for a target (ε, δ)")
    common(s, sigma=False)
    s.add_argument("--epsilon", type=float, required=True, help="ε >= 0")
    s.add_argument("--delta", type=float, required=True, help="δ in (0, 1)")
    s.add_argument("--bound", choices=("upper", "lower"), default=None,
                   help="shuffle: lower = the σ below which ε provably exceeds the target (the only σ it gives)")
    _audit_parser(sub)
    statement.add_parser(sub)
    return p


# --------------------------------------------------------------------------- audit

_AUDIT_FLAGS = {"dataset_size": "dataset-size", "batch_size": "batch-size", "epochs": "epochs", "sigma": "sigma",
                "delta": "delta", "target_epsilon": "target-epsilon", "samplers": "samplers",
                "accuracy": "accuracy"}


def _audit_parser(sub) -> None:
    a = sub.add_parser("audit", help="ε (or σ, or the most epochs) of a training run under every batch sampler",
                       description="sigma+epochs: ε per sampler; target-epsilon+epochs: σ per sampler; "
                                   "target-epsilon+sigma: the most epochs per sampler.")
    a.add_argument("--dataset-size", type=int, required=True, help="number of training examples N >= 1")
    a.add_argument("--batch-size", type=int, required=True, help="batch size B in [1, N]")
    a.add_argument("--epochs", type=int, help="epochs E >= 1 (leave out to ask for the most epochs)")
    a.add_argument("--sigma", type=float, help="noise multiplier σ > 0 (leave out to ask for σ)")
    a.add_argument("--delta", type=float, required=True, help="δ in (0, 1)")
    a.add_argument("--target-epsilon", type=float, help="target ε > 0 (asks for σ, or with --sigma the most epochs)")
    a.add_argument("--samplers", help="comma-separated subset of poisson,wor,shuffle,deterministic,balls_and_bins "
                                      "(default: all; balls_and_bins only when cheap)")
    a.add_argument("--accuracy", choices=("default", "fine"), default="default",
                   help="balls_and_bins PLD_accounting accuracy")
    a.add_argument("--json", action="store_true", help="print one JSON object {rows, verdicts, question}")


def _audit_flag_names(message: str) -> str:
    """audit() names parameters (``batch_size must be ...``); the CLI names flags (``--batch-size``)."""
    import re

    return re.sub(r"(?<![\w-])(" + "|".join(_AUDIT_FLAGS) + r")(?![\w(])",
                  lambda m: "--" + _AUDIT_FLAGS[m.group(1)], message)


_AUDIT_WHAT = {"upper": "upper bound", "lower": "lower bound", "exact": "exact", "estimate": "estimate",
               "interval": "interval [lower, upper]"}


def _audit_text(df) -> str:
    """An aligned table (sampler, value, what it is, method) followed by the verdict lines."""
    q = df.attrs["question"]
    head = {"epsilon": "ε", "sigma": "σ", "epochs": "epochs"}[q]

    def num(x):
        if isinstance(x, float) and math.isnan(x):
            return "-"
        return f"{int(x)}" if q == "epochs" else f"{x:.4g}"

    lines = [("sampler", head, "what it is", "method")]
    for r in df.to_dict("records"):
        if "skipped_cost" in r["flags"]:
            lines.append((r["sampler"], "-", "not computed (costly; --samplers balls_and_bins forces it)",
                          r["method"]))
            continue
        if r["kind"] == "interval":
            val = f"[{num(r['lower'])}, {num(r['upper'])}]"
        else:
            val = num(r["value"])
        what = _AUDIT_WHAT.get(r["kind"], r["kind"])
        if r["kind"] == "upper" and not math.isnan(r["lower"]) and r["lower"] != r["value"] and q == "epsilon":
            what += f" (lower {num(r['lower'])})"
        if r["flags"]:
            what += f" [{r['flags']}]"
        lines.append((r["sampler"], val, what, r["method"]))
    w = [max(len(l[i]) for l in lines) for i in range(3)]
    out = ["  ".join([l[0].ljust(w[0]), l[1].rjust(w[1]) if l is not lines[0] else l[1].ljust(w[1]),
                      l[2].ljust(w[2]), l[3]]).rstrip() for l in lines]
    r0 = df.iloc[0]
    run = (f"N = {r0['dataset_size']}, B = {r0['batch_size']}, {r0['steps_per_epoch']} steps/epoch, q = {r0['q']:.4g}, "
           f"δ = {r0['delta']:g}")
    if q == "epsilon":
        run += f", σ = {r0['sigma']:g}, {int(r0['epochs'])} epochs"
    elif q == "sigma":
        run += f", target ε = {r0['target_epsilon']:g}, {int(r0['epochs'])} epochs"
    else:
        run += f", σ = {r0['sigma']:g}, target ε = {r0['target_epsilon']:g}"
    return "\n".join([run, "", *out, "", *("- " + v for v in df.attrs["verdicts"])])


def _audit_json(df) -> str:
    def clean(x):
        if isinstance(x, float) and math.isnan(x):
            return None
        return x.item() if hasattr(x, "item") else x

    rows = [{k: clean(v) for k, v in r.items()} for r in df.to_dict("records")]
    return json.dumps({"question": df.attrs["question"], "rows": rows, "verdicts": df.attrs["verdicts"]})


def _audit_main(a) -> int:
    from .audit import audit

    for flag in ("sigma", "delta", "target_epsilon"):
        v = getattr(a, flag)
        if v is not None and not math.isfinite(v):
            return _fail(f"--{_AUDIT_FLAGS[flag]} must be a finite number (got {v!r})", 2)
    try:
        df = audit(a.dataset_size, a.batch_size, delta=a.delta, epochs=a.epochs, sigma=a.sigma,
                   target_epsilon=a.target_epsilon, samplers=a.samplers, accuracy=a.accuracy)
    except ValueError as exc:
        return _fail(_audit_flag_names(str(exc)), 2)
    except (RuntimeError, ArithmeticError) as exc:
        return _fail(str(exc) or type(exc).__name__, 1)
    print(_audit_json(df) if a.json else _audit_text(df))
    return 0


# Feasibility: a PLD of a composed subsampled Gaussian needs about (width of its privacy-loss
# support) / d grid points, and self-composition costs about that many points times log2(T).
# Beyond these limits a laptop runs out of memory or patience (measured: σ = 1e-3, q = 0.5, T = 1e3
# took > 5 GB; σ = 0.8, q = 1e-3, T = 1e9 and σ = 100, q = 1, T = 1e9 ran > 60 s without an answer),
# so the CLI says so up front instead of trying.
FEASIBLE_POINTS = 2e6
FEASIBLE_WORK = 2e7
# The accountant refines the discretisation until the composed error meets --rel-tol, which for many
# compositions goes far below 1e-3 (σ = 1.5, q = 1e-3, T = 1e6, rel-tol 0.01 lands at d = 1e-5 and takes
# 19 s; T = 1e7 ran > 100 s): beyond MAX_PLD_STEPS the CLI points to the RDP or φ accountant.
MAX_PLD_STEPS = 10**6
# balls_and_bins: PLD_accounting's cost grows with the steps per epoch and as ε falls (measured wall per certified
# bracket on 2 cores, 2026-11-25: every σ ∈ [0.35, 2] × 100–1000 steps × 1–10 epochs ≤ 15 s, 45 of 48 such points
# ≤ 10 s; 10 000 steps × 2 epochs at σ = 3 five minutes); the range is 100–1000 steps × 1–10 epochs.
# Monte Carlo: normal draws per direction.
MAX_BNB_PLD_STEPS = 10**4
MAX_MC_DRAWS = 10**10
_TAIL_SDS = 8.0  # the PLD keeps the loss support within about ±8 standard deviations (tail mass ~1e-15)
_ESTIMATE_DISCRETIZATION = 1e-3  # the accountant refines from 1e-2; 1e-3 is where rel_tol 1e-3 usually lands


def _log_step_loss_sd(sigma, q):
    """log of (an upper estimate of) the per-step privacy-loss spread of a q-subsampled Gaussian:
    min(1/σ, q·sqrt(e^{1/σ²} − 1)) (the exact spread for q = 1; the χ²-divergence scale for small q)."""
    log_x = -2.0 * math.log(sigma)  # x = 1/σ², kept in log space (σ may be 1e-300 or 1e300)
    if log_x < -230:  # e^x − 1 = x to double precision
        log_expm1 = log_x
    elif log_x < math.log(700):
        log_expm1 = math.log(math.expm1(math.exp(log_x)))
    else:  # log(e^x − 1) = x for x ≥ 700 (and x may overflow to inf: then the PLD is infeasible anyway)
        log_expm1 = math.exp(min(log_x, 709.0))
    return min(-math.log(sigma), math.log(q) + 0.5 * log_expm1)


def pld_size_estimate(sigma, q, steps, discretization=_ESTIMATE_DISCRETIZATION):
    """(grid points, points × log2 T) of the composed PLD: a cheap estimate, no PLD is built."""
    width = 2 * _TAIL_SDS * (math.exp(min(_log_step_loss_sd(sigma, q) + 0.5 * math.log(steps), 700.0))
                             + math.exp(min(-math.log(sigma), 700.0)))
    points = width / discretization
    return points, points * max(1.0, math.log2(steps))


def _sigma_for_gdp_mu(epsilon, delta, q, steps):
    """σ at which the composed loss spread sqrt(T)·s(σ, q) equals the Gaussian-DP μ of (ε, δ):
    μ solves ε = z_δ μ + μ²/2 (z_δ the standard normal quantile of 1 − δ); bisection in log σ."""
    from statistics import NormalDist

    z = NormalDist().inv_cdf(1 - delta) if delta < 0.5 else 0.0
    mu = -z + math.sqrt(z * z + 2 * epsilon) if epsilon > 0 else 1e-300
    from dpsampling.engine.numerics import bisect

    target = math.log(mu) - 0.5 * math.log(steps)
    _, hi = bisect(lambda m: _log_step_loss_sd(math.exp(m), q) > target, -700.0, 700.0, 200)  # in log σ
    return math.exp(hi)


def check_feasible(a) -> None:
    """Raise ValueError (exit 2) if the PLD for these inputs would not fit a laptop (see FEASIBLE_*)."""
    if a.sampler == "balls_and_bins" and a.steps >= 1 and a.epochs >= 1:
        total = a.steps * a.epochs
        if a.method == "pld" and total > MAX_BNB_PLD_STEPS:
            raise ValueError(f"--steps × --epochs = {total} is more than the balls_and_bins certified bounds "
                             f"(PLD_accounting) compute in reasonable time (limit {MAX_BNB_PLD_STEPS:.0e}; "
                             f"T=1000 × 5 epochs at σ=2 takes ~80 s); use --method max_statistic (lower bound) or montecarlo")
        n = a.mc_samples or MC_SAMPLES
        if a.method == "montecarlo" and n * total > MAX_MC_DRAWS:
            raise ValueError(f"--mc-samples × --steps × --epochs = {n * total:.2g} normal draws per direction is more "
                             f"than a laptop draws in reasonable time (limit {MAX_MC_DRAWS:.0e}); lower --mc-samples")
    if a.method != "pld" or a.sampler not in ("poisson", "wor"):
        return
    sane = a.steps >= 1 and a.epochs >= 1 and 0 < a.q <= 1 and (a.command == "sigma" or 0 < a.sigma < math.inf)
    if a.command == "sigma":
        sane = sane and 0 < a.delta < 1 and 0 <= a.epsilon < math.inf
    if not sane:
        return  # out-of-range values: the library names them
    steps = a.steps * a.epochs
    if steps > MAX_PLD_STEPS:
        raise ValueError(f"--steps {steps} is more than the PLD accountant can compose on a laptop in reasonable "
                         f"time (limit {MAX_PLD_STEPS:.0e}); use --method rdp or --method cf")
    sigma = a.sigma if a.command != "sigma" else _sigma_for_gdp_mu(a.epsilon, a.delta, a.q, steps)
    points, work = pld_size_estimate(sigma, a.q, steps)
    if points > FEASIBLE_POINTS or work > FEASIBLE_WORK:
        raise ValueError(
            f"these inputs need a PLD of about {points:.2g} grid points composed {steps} times "
            f"(limits {FEASIBLE_POINTS:.0e} points, {FEASIBLE_WORK:.0e} points×log2(steps)): more memory/time than "
            f"a laptop has; use a larger --sigma, smaller --q or --steps, or --method rdp")


def _check_cli_values(a) -> None:
    """Ranges the library does not check itself, non-finite values, and flags that do not apply, named by flag."""
    for flag in ("sigma", "q", "epsilon", "delta", "rel_tol", "failure_prob", "mc_half_width"):
        v = getattr(a, flag, None)
        if v is not None and math.isnan(v):
            raise ValueError(f"--{flag.replace('_', '-')} must be a number (got nan)")
    if not (0 < a.rel_tol <= 0.1):
        raise ValueError(f"--rel-tol must be in (0, 0.1] (got {a.rel_tol!r})")
    if a.epochs < 1:
        raise ValueError(f"--epochs must be an integer >= 1 (got {a.epochs!r})")
    if a.q is None and a.sampler in ("poisson", "wor"):
        raise ValueError(f"--q is required for --sampler {a.sampler} (the sampling rate, in (0, 1])")
    if getattr(a, "sigma", None) is not None and not (0 < a.sigma <= MAX_SIGMA):
        raise ValueError(f"--sigma must be in (0, {MAX_SIGMA:g}] (got {a.sigma!r}); beyond, every accountant "
                         f"underflows (ε, δ ≈ 0)")
    if a.command == "sigma" and not (0 <= a.epsilon <= MAX_SIGMA_EPSILON):
        raise ValueError(f"--epsilon must be in [0, {MAX_SIGMA_EPSILON:g}] for the sigma command (got {a.epsilon!r}): "
                         f"larger ε calls for σ → 0, which no PLD resolves")
    bnb = a.sampler == "balls_and_bins"
    if a.method in BNB_METHODS and not bnb:
        raise ValueError(f"--method {a.method} applies to --sampler balls_and_bins only")
    if bnb and a.method not in ("pld",) + BNB_METHODS:
        raise ValueError(f"--method must be pld, montecarlo or max_statistic for --sampler balls_and_bins "
                         f"(got {a.method!r})")
    if a.method == "montecarlo" and a.command == "sigma":
        raise ValueError("--method montecarlo answers the delta and epsilon commands only (an estimate with its band "
                         "cannot certify a σ); use --method pld")
    if a.method == "montecarlo" and a.command == "epsilon" and a.mc_half_width is not None:
        raise ValueError("--mc-half-width applies to the delta command only (a half-width on δ); for epsilon give "
                         "--mc-samples")
    if a.method == "max_statistic" and a.command == "sigma":
        raise ValueError("--method max_statistic gives a lower bound on ε only and cannot certify a σ; use --method pld")
    if a.accuracy is not None and not (bnb and a.method == "pld"):
        raise ValueError("--accuracy applies to --sampler balls_and_bins with --method pld only")
    if a.shuffle_mode is not None and a.sampler != "shuffle":
        raise ValueError("--shuffle-mode applies to --sampler shuffle only")
    mc = {"mc_samples": a.mc_samples, "mc_seed": a.mc_seed, "failure_prob": a.failure_prob,
          "mc_half_width": a.mc_half_width}
    for flag, v in mc.items():
        if v is not None and a.method != "montecarlo":
            raise ValueError(f"--{flag.replace('_', '-')} applies to --sampler balls_and_bins --method montecarlo only")
    if a.mc_samples is not None and a.mc_samples < 1:
        raise ValueError(f"--mc-samples must be an integer >= 1 (got {a.mc_samples!r})")
    if a.mc_samples is not None and a.mc_samples > MAX_MC_SAMPLES:
        raise ValueError(f"--mc-samples must be at most {MAX_MC_SAMPLES:.0e} (got {a.mc_samples!r})")
    if a.mc_seed is not None and a.mc_seed < 0:
        raise ValueError(f"--mc-seed must be an integer >= 0 (got {a.mc_seed!r})")
    if a.failure_prob is not None and not (0 < a.failure_prob < 1):
        raise ValueError(f"--failure-prob must be in (0, 1) (got {a.failure_prob!r})")
    if a.mc_half_width is not None and not (0 < a.mc_half_width < math.inf):
        raise ValueError(f"--mc-half-width must be > 0 (got {a.mc_half_width!r})")
    if a.sampler in ("poisson", "wor"):  # the accountant's own first checks, run before it is imported (start-up)
        from .engine import validation

        if a.command in ("delta", "sigma"):
            validation.check_epsilon(a.epsilon)
        if a.command in ("epsilon", "sigma"):
            validation.check_delta(a.delta)
        validation.check_rate(a.q)
        validation.check_steps(a.steps)


MAX_MC_SAMPLES = 10**9
MAX_SIGMA_EPSILON = 100.0
MAX_SIGMA = 1e6


def _run(a) -> AccountingResult:
    """One question to :func:`dpsampling.samplers.account`.

    --steps is steps per epoch, --epochs the number of epochs (steps×epochs steps).  shuffle (lower bound,
    upper end = deterministic), deterministic (exact) and balls_and_bins have one batch per step: --q is
    optional and checked against 1/steps; --method, --bound, --rel-tol do not apply to shuffle/deterministic
    (today's one-epoch calls print what they printed before).
    """
    _check_cli_values(a)
    check_feasible(a)
    from .samplers import account  # heavy (dp_accounting, scipy): only once a question is asked

    kw = dict(steps=a.steps, epochs=a.epochs, q=a.q, direction=a.direction)
    if a.sampler in ("poisson", "wor"):
        kw.update(method=a.method, rel_tol=a.rel_tol)
    elif a.sampler == "balls_and_bins":
        kw["method"] = a.method
        if a.accuracy is not None:
            kw["accuracy"] = a.accuracy
        if a.method == "montecarlo":
            kw.update(seed=0 if a.mc_seed is None else a.mc_seed,
                      beta=0.01 if a.failure_prob is None else a.failure_prob)
            if a.mc_half_width is None or a.command == "epsilon":
                kw["n"] = MC_SAMPLES if a.mc_samples is None else a.mc_samples
            else:
                kw.update(half_width=a.mc_half_width, max_samples=MAX_MC_SAMPLES if a.mc_samples is None
                          else a.mc_samples)
    elif a.sampler == "shuffle" and a.shuffle_mode is not None:
        kw["mode"] = a.shuffle_mode
    if a.command == "sigma":
        if a.sampler != "deterministic":
            kw["bound"] = a.bound
        return account(a.sampler, "sigma", (a.epsilon, a.delta), **kw)
    if a.sampler in ("poisson", "wor", "balls_and_bins"):
        kw["bound"] = a.bound
    target = a.delta if a.command == "epsilon" else a.epsilon
    try:
        return account(a.sampler, a.command, target, sigma=a.sigma, **kw)
    except RuntimeError as exc:  # MCAccuracyError: the band asked for needs more samples than the budget
        if a.method != "montecarlo":
            raise
        if a.command == "epsilon":
            raise RuntimeError(f"Monte Carlo cannot bound epsilon at --delta {a.delta:g} with --mc-samples "
                               f"{kw['n']}: {exc}; raise --mc-samples") from None
        raise RuntimeError(f"Monte Carlo cannot reach --mc-half-width {a.mc_half_width:g} within --mc-samples "
                           f"{kw['max_samples']}: {exc}; raise --mc-samples or --mc-half-width") from None


FLAGS = {"sigma": "sigma", "q": "q", "steps": "steps", "epsilon": "epsilon", "delta": "delta",
         "delta_target": "delta", "rel_tol": "rel-tol", "direction": "direction", "sampler": "sampler",
         "method": "method", "bound": "bound", "epochs": "epochs", "mode": "shuffle-mode", "accuracy": "accuracy",
         "n": "mc-samples", "max_samples": "mc-samples", "seed": "mc-seed", "beta": "failure-prob",
         "half_width": "mc-half-width"}


def _flag_names(message: str) -> str:
    """Library messages name parameters ('delta must be ...'); the CLI names flags (others unchanged)."""
    head, _, rest = message.partition(" ")
    return f"--{FLAGS[head]} {rest}" if head in FLAGS else message


def _fail(message: str, code: int) -> int:
    """One line on stderr, exit code 2 (bad input) or 1 (accuracy / numerical failure)."""
    print("dpsampling: error: " + " ".join(str(message).split()), file=sys.stderr)
    return code


def _in_range(command: str, value) -> bool:
    """ε ∈ [0, ∞], δ ∈ [0, 1], σ ∈ (0, ∞)."""
    if not isinstance(value, (int, float)) or math.isnan(value):
        return False
    return {"epsilon": 0 <= value, "delta": 0 <= value <= 1, "sigma": 0 < value < math.inf}[command]


def main(argv=None) -> int:
    logging.getLogger().setLevel(logging.ERROR)
    # One OpenBLAS thread for this process (numpy is not loaded yet; a value the user set wins): dp_accounting's
    # δ(ε) is an np.dot whose idle OpenBLAS threads spin after each call (~0.15 CPU-s of a T = 1e5 query).
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    args = _parser().parse_args(argv)
    if args.command == "audit":
        return _audit_main(args)
    if args.command == "statement":
        return statement.main(args)
    try:
        with warnings.catch_warnings():  # numerical warnings (e.g. e^ε overflow at ε = 1e300) would break the one line
            warnings.simplefilter("ignore", RuntimeWarning)
            res = _run(args)
    except ValueError as exc:
        return _fail(_flag_names(str(exc)), 2)
    except (RuntimeError, ArithmeticError) as exc:  # e.g. cf.CFAccuracyError: φ cannot meet its error budget
        return _fail(str(exc) or type(exc).__name__, 1)
    if not _in_range(args.command, res.value) and "delta_below_1e-12" in res.flags:
        return _fail(f"the {args.command} for these inputs is below the PLD reliability floor (δ < 1e-12): flagged, "
                     f"not reported", 1)
    if not _in_range(args.command, res.value):
        return _fail(f"the {args.command} computed for these inputs ({res.value!r}) is outside its valid range; "
                     f"not reported", 1)
    out = {"command": args.command, "sampler": args.sampler, **res.as_dict()}
    print(json.dumps(out, default=lambda x: None if isinstance(x, float) and math.isnan(x) else str(x)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
