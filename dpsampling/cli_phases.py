"""``dpsampling epsilon|delta|sigma --phases FILE`` (or repeated ``--phase``): a run of several phases on the command
line.  The phases are read by :mod:`dpsampling.phases_io`, asked of :mod:`dpsampling.phases` (the one answer of a
run, as the Python API's), and printed by the command line's one printer (one JSON object with the phases listed, or
``--text``: :func:`dpsampling.render.answer_text`).  A flag that describes a single run (``--sampler``, ``--sigma``,
``--q``, ``--steps``, ``--epochs``, ``--method``, ``--bound``, ``--relation``, a sampler's own option other than
``--rel-tol``) is refused with ``--phases``: each phase carries its own.
"""

from __future__ import annotations

import dataclasses
import warnings

#: flags (argparse dests) that apply to a run of phases besides the target; every other flag given is refused
APPLY = ("command", "delta", "epsilon", "direction", "force", "rel_tol", "phases", "phase", "scale", "text")
#: why a single run's flag does not apply to a run of phases
_WHY = "each phase gives its own sampler, sigma, q, steps and epochs"


def _flag(dest):
    return "--" + dest.replace("_", "-")


def refused(args) -> str | None:
    """The message refusing the first flag given that does not apply with --phases / --phase, or None."""
    if args.phases is not None and args.phase:
        return "--phases and --phase together: give the run's phases either in a file (--phases) or as --phase flags"
    source = "--phases" if args.phases is not None else "--phase"
    for dest, value in vars(args).items():
        if dest in APPLY or value is None or value is False:
            continue
        why = ("a run is answered under its phases' neighbouring relation" if dest == "relation" else _WHY)
        return f"{_flag(dest)} does not apply with {source} ({why})"
    return None


def _scale(text):
    if text is None or text == "all":
        return "all"
    try:
        return int(text)
    except ValueError:
        return text  # refused by dpsampling.phases.sigma, naming --scale


def main(args, fail, error_text, accuracy_text, print_answer) -> int:
    """Answer ``args`` (a parsed epsilon/delta/sigma command with --phases or --phase); the command line's helpers
    (``fail``, ``error_text``, ``accuracy_text``, ``print_answer``) word errors and print the answer."""
    from . import phases as api
    from . import phases_io
    from .engine.errors import ParameterError

    why = refused(args)
    if why is not None:
        return fail(why, 2)
    try:
        if args.phases is not None:
            run, origins = phases_io.read_file(args.phases)
        else:
            pairs = [phases_io.parse_flag(text, n + 1) for n, text in enumerate(args.phase)]
            run, origins = [p for p, _ in pairs], [f"--phase {o}" for _, o in pairs]
    except ParameterError as exc:
        return fail(error_text(exc), 2)
    source = f"--phases {args.phases}: " if args.phases is not None else ""
    kw = {"direction": args.direction, "force": args.force}
    if args.rel_tol is not None:
        kw["rel_tol"] = args.rel_tol
    scale = _scale(getattr(args, "scale", None)) if args.command == "sigma" else None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            if args.command == "epsilon":
                res = api.epsilon(run, args.delta, **kw)
            elif args.command == "delta":
                res = api.delta(run, args.epsilon, **kw)
            else:
                res = api.sigma(run, args.epsilon, args.delta, scale=scale, **kw)
    except ValueError as exc:
        text = str(exc)
        if text.startswith("phase "):  # a phase's own error: name its row
            return fail(source + phases_io.where(origins, text), 2)
        return fail(error_text(exc), 2)
    except (RuntimeError, ArithmeticError) as exc:
        return fail(accuracy_text(exc), 1)
    listed = [dataclasses.asdict(p) for p in run]
    head = {"phases": listed} if scale is None else {"phases": listed, "scale": scale}
    return print_answer(args, res, head, listed, scale)


__all__ = ["APPLY", "main", "refused"]
