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

from .engine.accountant import DEFAULT_REL_TOL
from .engine.result import AccountingResult
from .engine.validation import DIRECTIONS, METHODS
from .samplers import SAMPLERS, account


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


def _run(a) -> AccountingResult:
    """One question to :func:`dpsampling.samplers.account`.

    shuffle (lower bound, E_C sets) and deterministic (exact) are one epoch of --steps batches (Chua et al.
    2024): --q is checked against 1/steps and --method, --bound, --rel-tol do not apply to them.
    """
    if not (0 < a.rel_tol <= 0.1):
        raise ValueError(f"--rel-tol must be in (0, 0.1] (got {a.rel_tol!r})")
    one_epoch = a.sampler in ("shuffle", "deterministic")
    kw = dict(steps=a.steps, q=a.q, direction=a.direction)
    if not one_epoch:
        kw.update(method=a.method, rel_tol=a.rel_tol)
    if a.command == "sigma":
        return account(a.sampler, "sigma", (a.epsilon, a.delta), **kw)
    if not one_epoch:
        kw["bound"] = a.bound
    target = a.delta if a.command == "epsilon" else a.epsilon
    return account(a.sampler, a.command, target, sigma=a.sigma, **kw)


def _flag_names(message: str) -> str:
    """Library messages name parameters ('delta must be ...'); the CLI names flags."""
    head, _, rest = message.partition(" ")
    flag = {"delta_target": "delta", "rel_tol": "rel-tol"}.get(head, head)
    return f"--{flag} {rest}" if head.isidentifier() else message


def main(argv=None) -> int:
    logging.getLogger().setLevel(logging.ERROR)
    args = _parser().parse_args(argv)
    try:
        res = _run(args)
    except ValueError as exc:
        print(f"dpsampling: error: {_flag_names(str(exc))}", file=sys.stderr)
        return 2
    except RuntimeError as exc:  # e.g. cf.CFAccuracyError: the φ inversion cannot meet its error budget
        print(f"dpsampling: error: {exc}", file=sys.stderr)
        return 1
    out = {"command": args.command, "sampler": args.sampler, **res.as_dict()}
    print(json.dumps(out, default=lambda x: None if isinstance(x, float) and math.isnan(x) else str(x)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
