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
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .engine.result import AccountingResult

# Start-up: the accountants import dp_accounting and through it scipy.stats (~1 s of CPU), so this module
# imports them only in _run, when a question is asked; --help and argument errors stay fast. The parser's
# choices and defaults are therefore literals here; tests/test_cli.py checks that they equal the library's
# (dpsampling.samplers.SAMPLERS, engine.validation.DIRECTIONS / METHODS, engine.accountant.DEFAULT_REL_TOL).
SAMPLERS = ("poisson", "wor", "shuffle", "deterministic")
DIRECTIONS = ("add", "remove", "add_remove")
METHODS = ("pld", "rdp", "analytic", "cf")
DEFAULT_REL_TOL = 1e-3


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit code 2
        self.exit(2, f"dpsampling: error: {message}\n")


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="dpsampling", description="Privacy accounting of DP-SGD under different batch samplers.")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    def common(sp, sigma=True):
        sp.add_argument("--sampler", choices=SAMPLERS, default="poisson",
                        help="batch sampler (default poisson); shuffle (lower bound, E_C sets) and deterministic "
                             "(exact) are one epoch of --steps batches, so --q must be 1/steps (Chua et al. 2024)")
        if sigma:
            sp.add_argument("--sigma", type=float, required=True, help="noise multiplier σ > 0")
        sp.add_argument("--q", type=float, required=True, help="sampling rate γ in (0, 1]")
        sp.add_argument("--steps", type=int, required=True, help="number of steps T >= 1")
        sp.add_argument("--direction", choices=DIRECTIONS, default="add_remove",
                        help="neighbouring direction (default add_remove = max of both)")
        sp.add_argument("--method", choices=METHODS, default="pld",
                        help="accountant (default pld); cf = Zhu et al. φ accountant, an estimate with its "
                             "certified error (epsilon/delta only)")
        sp.add_argument("--rel-tol", type=float, default=DEFAULT_REL_TOL,
                        help="relative accuracy of PLD results, in (0, 0.1]")

    e = sub.add_parser("epsilon", help="ε for a target δ")
    common(e)
    e.add_argument("--delta", type=float, required=True, help="δ in (0, 1)")
    e.add_argument("--bound", choices=("upper", "lower"), default="upper")
    d = sub.add_parser("delta", help="δ for a target ε")
    common(d)
    d.add_argument("--epsilon", type=float, required=True, help="ε >= 0")
    d.add_argument("--bound", choices=("upper", "lower"), default="upper")
    s = sub.add_parser("sigma", help="smallest σ for a target (ε, δ)")
    common(s, sigma=False)
    s.add_argument("--epsilon", type=float, required=True, help="ε >= 0")
    s.add_argument("--delta", type=float, required=True, help="δ in (0, 1)")
    return p


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
    target = math.log(mu) - 0.5 * math.log(steps)
    lo, hi = -700.0, 700.0  # log σ
    for _ in range(200):
        m = 0.5 * (lo + hi)
        if _log_step_loss_sd(math.exp(m), q) > target:
            lo = m
        else:
            hi = m
    return math.exp(hi)


def check_feasible(a) -> None:
    """Raise ValueError (exit 2) if the PLD for these inputs would not fit a laptop (see FEASIBLE_*)."""
    if a.method != "pld" or a.sampler in ("shuffle", "deterministic"):
        return
    sane = a.steps >= 1 and 0 < a.q <= 1 and (a.command == "sigma" or 0 < a.sigma < math.inf)
    if a.command == "sigma":
        sane = sane and 0 < a.delta < 1 and 0 <= a.epsilon < math.inf
    if not sane:
        return  # out-of-range values: the library names them
    if a.steps > MAX_PLD_STEPS:
        raise ValueError(f"--steps {a.steps} is more than the PLD accountant can compose on a laptop in reasonable "
                         f"time (limit {MAX_PLD_STEPS:.0e}); use --method rdp or --method cf")
    sigma = a.sigma if a.command != "sigma" else _sigma_for_gdp_mu(a.epsilon, a.delta, a.q, a.steps)
    points, work = pld_size_estimate(sigma, a.q, a.steps)
    if points > FEASIBLE_POINTS or work > FEASIBLE_WORK:
        raise ValueError(
            f"these inputs need a PLD of about {points:.2g} grid points composed {a.steps} times "
            f"(limits {FEASIBLE_POINTS:.0e} points, {FEASIBLE_WORK:.0e} points×log2(steps)): more memory/time than "
            f"a laptop has; use a larger --sigma, smaller --q or --steps, or --method rdp")


def _check_cli_values(a) -> None:
    """Ranges the library does not check itself, and non-finite values, named by flag."""
    for flag in ("sigma", "q", "epsilon", "delta", "rel_tol"):
        v = getattr(a, flag, None)
        if v is not None and math.isnan(v):
            raise ValueError(f"--{flag.replace('_', '-')} must be a number (got nan)")
    if not (0 < a.rel_tol <= 0.1):
        raise ValueError(f"--rel-tol must be in (0, 0.1] (got {a.rel_tol!r})")
    if getattr(a, "sigma", None) is not None and not (0 < a.sigma <= MAX_SIGMA):
        raise ValueError(f"--sigma must be in (0, {MAX_SIGMA:g}] (got {a.sigma!r}); beyond, every accountant "
                         f"underflows (ε, δ ≈ 0)")
    if a.command == "sigma" and not (0 <= a.epsilon <= MAX_SIGMA_EPSILON):
        raise ValueError(f"--epsilon must be in [0, {MAX_SIGMA_EPSILON:g}] for the sigma command (got {a.epsilon!r}): "
                         f"larger ε calls for σ → 0, which no PLD resolves")
    if a.sampler in ("poisson", "wor"):  # the accountant's own first checks, run before it is imported (start-up)
        from .engine import validation

        if a.command in ("delta", "sigma"):
            validation.check_epsilon(a.epsilon)
        if a.command in ("epsilon", "sigma"):
            validation.check_delta(a.delta)
        validation.check_rate(a.q)
        validation.check_steps(a.steps)


MAX_SIGMA_EPSILON = 100.0
MAX_SIGMA = 1e6


def _run(a) -> AccountingResult:
    """One question to :func:`dpsampling.samplers.account`.

    shuffle (lower bound, E_C sets) and deterministic (exact) are one epoch of --steps batches (Chua et al.
    2024): --q is checked against 1/steps and --method, --bound, --rel-tol do not apply to them.
    """
    _check_cli_values(a)
    one_epoch = a.sampler in ("shuffle", "deterministic")
    check_feasible(a)
    from .samplers import account  # heavy (dp_accounting, scipy): only once a question is asked

    kw = dict(steps=a.steps, q=a.q, direction=a.direction)
    if not one_epoch:
        kw.update(method=a.method, rel_tol=a.rel_tol)
    if a.command == "sigma":
        return account(a.sampler, "sigma", (a.epsilon, a.delta), **kw)
    if not one_epoch:
        kw["bound"] = a.bound
    target = a.delta if a.command == "epsilon" else a.epsilon
    return account(a.sampler, a.command, target, sigma=a.sigma, **kw)


FLAGS = {"sigma": "sigma", "q": "q", "steps": "steps", "epsilon": "epsilon", "delta": "delta",
         "delta_target": "delta", "rel_tol": "rel-tol", "direction": "direction", "sampler": "sampler",
         "method": "method", "bound": "bound"}


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
    args = _parser().parse_args(argv)
    try:
        res = _run(args)
    except ValueError as exc:
        return _fail(_flag_names(str(exc)), 2)
    except (RuntimeError, ArithmeticError) as exc:  # e.g. cf.CFAccuracyError: φ cannot meet its error budget
        return _fail(str(exc) or type(exc).__name__, 1)
    if not _in_range(args.command, res.value):
        return _fail(f"the {args.command} computed for these inputs ({res.value!r}) is outside its valid range; "
                     f"not reported", 1)
    out = {"command": args.command, "sampler": args.sampler, **res.as_dict()}
    print(json.dumps(out, default=lambda x: None if isinstance(x, float) and math.isnan(x) else str(x)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
