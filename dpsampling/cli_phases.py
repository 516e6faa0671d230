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


def cost_text(exc) -> str:
    """A cost refusal in a run of phases: the phases' keys to change (their flags do not apply), or --force."""
    keys = [d for d in exc.drivers if d in ("sigma", "q", "steps", "epochs")]
    return exc.text("--force", {d: (f"the phase's {d}" if d == keys[0] else d) if d in keys else None
                                for d in exc.drivers})


def _error(exc, source, origins, error_text) -> str:
    """One line for a library error about a run of phases: a phase's own error names its row."""
    from . import phases_io
    from .samplers.spec import CostError

    if isinstance(exc, CostError):
        return source + phases_io.where(origins, cost_text(exc))
    text = str(exc)
    if text.startswith("phase "):
        return source + phases_io.where(origins, text)
    return error_text(exc)


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
        run, origins = _read(args)
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
        return fail(_error(exc, source, origins, error_text), 2)
    except (RuntimeError, ArithmeticError) as exc:
        return fail(accuracy_text(exc), 1)
    listed = [dataclasses.asdict(p) for p in run]
    head = {"phases": listed} if scale is None else {"phases": listed, "scale": scale}
    return print_answer(args, res, head, listed, scale)


#: the audit's flags that apply to a run of phases; every other audit flag given is refused
AUDIT_APPLY = ("command", "delta", "samplers", "force", "json", "phases", "phase", "accuracy")


def _read(args):
    """(phases, origins) from --phases or --phase, or raise the ParameterError worded for the command line."""
    from . import phases_io

    if args.phases is not None:
        return phases_io.read_file(args.phases)
    pairs = [phases_io.parse_flag(text, n + 1) for n, text in enumerate(args.phase)]
    return [p for p, _ in pairs], [f"--phase {o}" for _, o in pairs]


def audit_main(args, fail, error_text) -> int:
    """``dpsampling audit --phases FILE`` (or --phase): :func:`dpsampling.phases_audit.audit_phases`, printed by
    :func:`dpsampling.render.phases_audit_text` (``--json``: one object {question, phases, rows, not_computed})."""
    import json

    from . import phases_audit, phases_io, render
    from .engine.errors import ParameterError

    source = "--phases" if args.phases is not None else "--phase"
    if args.phases is not None and args.phase:
        return fail("--phases and --phase together: give the run's phases either in a file (--phases) or as --phase "
                    "flags", 2)
    for dest, value in vars(args).items():
        if dest not in AUDIT_APPLY and value not in (None, False):
            return fail(f"{_flag(dest)} does not apply with {source} (each phase gives its own sigma, q, steps and "
                        f"epochs; the audit asks ε of the schedule under each sampler)", 2)
    if args.accuracy != "default":
        return fail(f"--accuracy does not apply with {source} (a run of phases is answered to --rel-tol's default "
                    f"width)", 2)
    if args.delta is None:
        return fail("the following arguments are required: --delta", 2)
    origins = []
    try:
        run, origins = _read(args)
        rows = phases_audit.audit_phases(run, args.delta, samplers=args.samplers, force=args.force)
    except ParameterError as exc:
        return fail(_error(exc, f"--phases {args.phases}: " if args.phases else "", origins, error_text), 2)
    except (RuntimeError, ArithmeticError) as exc:
        return fail(str(exc) or type(exc).__name__, 1)
    listed = [dataclasses.asdict(p) for p in run]
    if all(r.result is None for r in rows):  # as the audit: only when no row answers does it fail
        return fail("no sampler answers this run of phases: " + "; ".join(f"{r.sampler}: {r.why}" for r in rows), 2)
    if args.json:
        recs = phases_audit.records(rows)
        print(json.dumps({"question": "epsilon", "delta": args.delta, "phases": listed,
                          "rows": [r for r in recs if "not_computed" not in r],
                          "not_computed": {r["sampler"]: r["not_computed"] for r in recs if "not_computed" in r}}))
    else:
        print(render.phases_audit_text(rows, listed, args.delta))
    return 0


__all__ = ["APPLY", "AUDIT_APPLY", "audit_main", "main", "refused"]
