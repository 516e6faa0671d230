"""Command line: what is ε (or δ, or σ) of *my* DP-SGD run under each sampler?

    dpsampling epsilon --sampler poisson --sigma 0.8 --q 1e-3 --steps 10000 --delta 1e-6
    dpsampling delta   --sampler wor     --sigma 0.8 --q 1e-3 --steps 10000 --epsilon 1
    dpsampling sigma   --sampler poisson --epsilon 1 --delta 1e-6 --q 1e-3 --steps 10000

Each prints one JSON object (value, kind, method, accuracy settings, neighbouring relation, ...).
Bad input exits with code 2 and a one-line message naming the flag.  The command line only parses and maps: every
check is the library's (:func:`dpsampling.samplers.account`, the spec's options, :func:`dpsampling.audit`), and a
ParameterError is mapped to its flag through the option tables (:data:`FLAGS`, the specs' ``Option.flag``).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import math
import os
import sys
import warnings
from typing import TYPE_CHECKING

from . import statements

if TYPE_CHECKING:
    from .engine.result import AccountingResult

# Start-up: the accountants import dp_accounting and through it scipy.stats (~1 s of CPU), so this module
# imports them only when a question is asked; --help and argument errors stay fast.  The parser is built from
# the sampler registry (dpsampling.samplers: each sampler's SPEC, which loads without scipy/dp_accounting).

#: library keyword -> command-line flag for the parameters every sampler shares (a sampler's own options carry
#: their flag in its SPEC); ParameterError.param is mapped through these two tables, never through message text
FLAGS = {"sigma": "sigma", "q": "q", "steps": "steps", "epochs": "epochs", "epsilon": "epsilon", "delta": "delta",
         "direction": "direction", "method": "method", "bound": "bound", "sampler": "sampler", "force": "force",
         "dataset_size": "dataset-size", "batch_size": "batch-size", "target_epsilon": "target-epsilon",
         "samplers": "samplers", "relation": "relation", "phases": "phases", "phase": "phase", "scale": "scale"}
DIRECTIONS = ("add", "remove", "add_remove")


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit code 2
        self.exit(2, f"dpsampling: error: {message}\n")


def _relations():
    from .samplers.spec import RELATIONS

    return RELATIONS


def _registry():
    from . import samplers

    return samplers


def _union(items):
    return tuple(dict.fromkeys(x for it in items for x in it if x is not None))


def cli_options():
    """flag -> (Option, [sampler names]) for every command-line option of every registered sampler."""
    out = {}
    for spec in _registry().specs():
        for o in spec.options:
            if o.cli:
                out.setdefault(o.flag, (o, []))[1].append(spec.name)
    return out


def flag_of(param, sampler=None):
    """The command-line flag (with --) of library parameter ``param``, or None."""
    if param in FLAGS:
        return "--" + FLAGS[param]
    reg = _registry()
    for spec in ([reg.get_spec(sampler)] if sampler in reg.SAMPLERS else []) + list(reg.specs()):
        o = spec.option(param)
        if o is not None and o.cli:
            return "--" + o.flag
    return None


def _accuracy_help(specs) -> str:
    """The audit's --accuracy: the ``accuracy`` option of the samplers that have one."""
    having = [(s.name, s.option("accuracy")) for s in specs if s.option("accuracy") is not None]
    return "; ".join(f"{name}: {o.help}" for name, o in having) or "unused (no sampler has an accuracy option)"


def _parser() -> argparse.ArgumentParser:
    reg = _registry()
    specs = reg.specs()
    p = _Parser(prog="dpsampling", description="Privacy accounting of DP-SGD under different batch samplers: "
                                                + ", ".join(reg.SAMPLERS) + ".")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)
    options = cli_options()

    def common(sp, quantity):
        sp.add_argument("--sampler", choices=reg.SAMPLERS, default=None,
                        help=f"batch sampler (default {reg.SAMPLERS[0]}): "
                             + "; ".join(f"{s.name} = {s.summary}" for s in specs)
                             + ". Samplers with one batch per step have q = 1/steps")
        if quantity != "sigma":
            sp.add_argument("--sigma", type=float, help="noise multiplier σ > 0 (required without --phases)")
        sp.add_argument("--q", type=float, default=None,
                        help="sampling rate γ in (0, 1]; required for "
                             + "/".join(s.name for s in specs if s.batch == "rate")
                             + ", = 1/steps (optional) otherwise")
        sp.add_argument("--steps", type=int, help="number of steps per epoch T >= 1 (required without --phases)")
        sp.add_argument("--epochs", type=int, default=None,
                        help="number of epochs E >= 1 (default 1): steps×epochs steps")
        sp.add_argument("--direction", choices=_union(s.directions for s in specs), default="add_remove",
                        help="neighbouring direction (default add_remove = max of both)")
        sp.add_argument("--method", choices=_union(s.methods for s in specs), default=None,
                        help="accountant (default: the sampler's first): "
                             + "; ".join(f"{s.name}: {', '.join(s.methods)}" for s in specs if s.methods)
                             + ". cf = Zhu et al. φ accountant, an estimate with its certified error; montecarlo "
                               "an estimate with its band; max_statistic the Chua et al. lower bound")
        sp.add_argument("--bound", choices=_union(b for s in specs for b in s.bounds.values()), default=None,
                        help="default: the sampler's first bound for the method"
                             if quantity != "sigma" else
                             "σ bounds per sampler (first = default; lower = the σ below which ε provably exceeds the "
                             "target): " + "; ".join(f"{s.name}: {'/'.join(s.sigma_bounds)}" for s in specs))
        for flag, (o, names) in options.items():
            kw = {"choices": o.choices} if o.choices is not None else {"type": o.type}
            where = ", ".join(names) + ("" if o.methods is None else f" --method {'/'.join(o.methods)}")
            sp.add_argument("--" + flag, default=None, help=f"{where}: {o.help}", **kw)
        sp.add_argument("--force", action="store_true",
                        help=f"run a question predicted to take more than {reg.TIME_LIMIT:g} s")
        sp.add_argument("--relation", choices=_relations(), default=None,
                        help="the neighbouring relation to answer under (default: the sampler's own); refused, with "
                             "why, where the sampler's analysis does not cover it")
        sp.add_argument("--phases", metavar="FILE",
                        help="a run of several phases: a CSV (header sampler,sigma,q,steps[,epochs]) or YAML file, one "
                             "phase per row (docs/cli.md); replaces --sampler/--sigma/--q/--steps/--epochs")
        sp.add_argument("--phase", action="append", metavar="KEY=VALUE,...",
                        help="one phase of a run, e.g. sampler=poisson,sigma=1.1,q=0.0042,steps=7050[,epochs=1]; "
                             "repeat for each phase (instead of --phases FILE)")
        if quantity == "sigma":
            sp.add_argument("--scale", default=None, metavar="all|I",
                            help="with --phases: 'all' (default) calibrates one multiplier of every phase's σ (their "
                                 "σ are relative weights), an index I the σ of phase I with the others as given")
        sp.add_argument("--text", action="store_true",
                        help="print the answer as text (its ends rounded outward, its relation, the run's phases) "
                             "instead of one JSON object")

    e = sub.add_parser("epsilon", help="ε for a target δ")
    common(e, "epsilon")
    e.add_argument("--delta", type=float, required=True, help="δ in (0, 1)")
    d = sub.add_parser("delta", help="δ for a target ε")
    common(d, "delta")
    d.add_argument("--epsilon", type=float, required=True, help="ε >= 0")
    s = sub.add_parser("sigma", help="smallest σ for a target (ε, δ)")
    common(s, "sigma")
    s.add_argument("--epsilon", type=float, required=True, help="ε >= 0")
    s.add_argument("--delta", type=float, required=True, help="δ in (0, 1)")
    _audit_parser(sub)
    statements.add_parser(sub, reg.SAMPLERS)
    return p


# --------------------------------------------------------------------------- audit

def _cap_arg(text):
    """--max-batch-size: an integer, or 'smallest' (checked by the audit, which names the flag)."""
    try:
        return int(text)
    except ValueError:
        return text


def _audit_parser(sub) -> None:
    reg = _registry()
    a = sub.add_parser("audit", help="ε (or σ, or the most epochs) of a training run under every batch sampler",
                       description="sigma+epochs: ε per sampler; target-epsilon+epochs: σ per sampler; "
                                   "target-epsilon+sigma: the most epochs per sampler.")
    a.add_argument("--dataset-size", type=int, help="number of training examples N >= 1 (required without --phases)")
    a.add_argument("--batch-size", type=int, help="batch size B in [1, N] (required without --phases)")
    a.add_argument("--epochs", type=int, help="epochs E >= 1 (leave out to ask for the most epochs)")
    a.add_argument("--sigma", type=float, help="noise multiplier σ > 0 (leave out to ask for σ)")
    a.add_argument("--delta", type=float, required=True, help="δ in (0, 1)")
    a.add_argument("--target-epsilon", type=float, help="target ε > 0 (asks for σ, or with --sigma the most epochs)")
    a.add_argument("--samplers", help=f"comma-separated subset of {','.join(reg.SAMPLERS)} (default: all; a row "
                                      f"predicted to take more than {reg.TIME_LIMIT:g} s is listed, not computed)")
    a.add_argument("--accuracy", choices=("default", "fine"), default="default", help=_accuracy_help(reg.specs()))
    a.add_argument("--force", action="store_true", help=f"compute rows predicted beyond {reg.TIME_LIMIT:g} s too")
    a.add_argument("--json", action="store_true",
                   help="print one JSON object {question, rows, verdicts, not_computed} (with --per-epoch: per_epoch)")
    a.add_argument("--max-batch-size", type=_cap_arg, metavar="B|smallest",
                   help="the cap of a sampler that caps its batches (adds its row), or 'smallest': the smallest cap "
                        "whose certified ε is within 1%% of the baseline's")
    a.add_argument("--per-epoch", action="store_true",
                   help="also every sampler's ε after each epoch 1 … E (--json: a list per_epoch)")
    a.add_argument("--relation", choices=_relations(), default=None,
                   help="answer every sampler under this neighbouring relation (default: each sampler's own); a "
                        "sampler whose analysis does not cover it is listed as not covered, with why")
    a.add_argument("--markdown", action="store_true", help="the table and verdicts as Markdown")
    a.add_argument("--plot", metavar="FILE", help="draw the per-epoch intervals to FILE (.png or .pdf; implies "
                                                  "--per-epoch; needs the 'pipeline' extra)")
    a.add_argument("--phases", metavar="FILE", help="a run of several phases (CSV or YAML, as for dpsampling epsilon "
                                                    "--phases): ε of the same schedule under each sampler")
    a.add_argument("--phase", action="append", metavar="KEY=VALUE,...",
                   help="one phase of a run (sampler=…,sigma=…,q=…,steps=…[,epochs=…]); repeat for each")


#: what to change in an audit when a row costs too much: its cost drivers are the run's steps and epochs
_BATCH_SIZE = "--batch-size (q = B/N, steps per epoch = ⌈N/B⌉)"
_AUDIT_DRIVERS = {"steps": _BATCH_SIZE, "epochs": "--epochs", "sigma": "--sigma", "q": _BATCH_SIZE, "method": None}


def _audit_text(df, markdown=False) -> str:
    """The audit as text or Markdown (:func:`dpsampling.render.audit_text` / ``audit_markdown``): the table with
    each row's relation, the reasons of rows not computed below it, the verdicts."""
    from . import render

    skipped = df.attrs.get("skipped", {})

    def reason_of(sampler):
        exc = skipped.get(sampler)
        if exc is None:
            return "predicted beyond the time limit"
        return _audit_error_text(exc, row=True)

    return (render.audit_markdown if markdown else render.audit_text)(df, reason_of)


def _audit_json(df) -> str:
    def clean(x):
        if isinstance(x, float) and math.isnan(x):
            return None
        return x.item() if hasattr(x, "item") else x

    rows = [{k: clean(v) for k, v in r.items()} for r in df.to_dict("records")]
    not_computed = {k: _audit_error_text(v, row=True) for k, v in df.attrs.get("skipped", {}).items()}
    out = {"question": df.attrs["question"], "relation": df.attrs.get("relation"), "rows": rows,
           "verdicts": df.attrs["verdicts"], "not_computed": not_computed}
    if df.attrs.get("smallest_cap"):
        out["smallest_cap"] = {k: dataclasses.asdict(v) for k, v in df.attrs["smallest_cap"].items()}
    if "per_epoch" in df.attrs:
        from .per_epoch_audit import records

        out["per_epoch"] = records(df.attrs["per_epoch"])
    return json.dumps(out)


def _audit_error_text(exc, row=False) -> str:
    """One line for an error of the audit: a cost refusal names the audit's flags (--force), a ParameterError its
    flag."""
    from .samplers.relations import NotCovered
    from .samplers.spec import CostError

    if isinstance(exc, CostError):
        return exc.text("--force", _AUDIT_DRIVERS)
    if isinstance(exc, NotCovered):  # says the sampler, the relation and why (an audit row: its reason alone)
        return exc.why if row else f"--relation {exc.relation}: {exc}"
    return _error_text(exc)


def _audit_main(a) -> int:
    from .auditing import audit

    if a.phases is not None or a.phase:
        from . import cli_phases

        return cli_phases.audit_main(a, _fail, _audit_error_text)
    missing = [f for f, v in (("--dataset-size", a.dataset_size), ("--batch-size", a.batch_size)) if v is None]
    if missing:
        return _fail("the following arguments are required: " + ", ".join(missing), 2)

    per_epoch = a.per_epoch or a.plot is not None
    if a.plot is not None:  # a path or a missing extra is refused before anything is computed
        from .plot import PlotError, check_available, check_path

        try:
            check_path(a.plot)
            check_available()
        except PlotError as exc:
            return _fail(str(exc), 2)
    try:
        df = audit(a.dataset_size, a.batch_size, delta=a.delta, epochs=a.epochs, sigma=a.sigma,
                   target_epsilon=a.target_epsilon, samplers=a.samplers, accuracy=a.accuracy, force=a.force,
                   per_epoch=per_epoch, max_batch_size=a.max_batch_size, relation=a.relation)
    except ValueError as exc:
        return _fail(_audit_error_text(exc), 2)
    except (RuntimeError, ArithmeticError) as exc:
        return _fail(str(exc) or type(exc).__name__, 1)
    if a.plot is not None:  # the picture, before anything is printed
        from .plot import PlotError, plot_per_epoch

        r0 = df.iloc[0]
        try:
            plot_per_epoch(df.attrs["per_epoch"], a.plot,
                           title=f"N = {r0['dataset_size']}, B = {r0['batch_size']}, σ = {r0['sigma']:g}, "
                                 f"δ = {r0['delta']:g}: ε after each epoch"
                                 + (f" (every band under {a.relation.replace('_', '-')})" if a.relation else ""))
        except PlotError as exc:
            return _fail(str(exc), 2)
    print(_audit_json(df) if a.json else _audit_text(df, a.markdown))
    if per_epoch and not a.json:  # the per-epoch table after the audit's
        from .per_epoch_audit import text

        print("\nε after each epoch:\n" + text(df.attrs["per_epoch"]))
    return 0


def _options(a, spec) -> dict:
    """The sampler options given on the command line (library name -> value): every option flag that was set, under
    the name of this sampler's option with that flag (else the first sampler's that has it); an unset option whose
    spec fills it (``Option.fill_unless``) gets its default.  No checks: :func:`dpsampling.samplers.account` makes
    them."""
    options, fill = {}, []
    method = a.method or spec.default_method
    for flag, (opt, _) in cli_options().items():
        own = spec.option(opt.name)
        if own is not None and (not own.cli or own.flag != flag):
            own = None
        v = getattr(a, flag.replace("-", "_"))
        if v is None:
            if own is not None and own.fill_unless and own.applies(a.command, method):
                fill.append(own)
            continue
        options[(own or opt).name] = v
    for own in fill:
        if own.fill_unless not in options:
            options[own.name] = own.default
    return options


def _run(a) -> AccountingResult:
    """One question to :func:`dpsampling.samplers.account`, as described by the sampler's SPEC.

    --steps is steps per epoch, --epochs the number of epochs (steps×epochs steps).  Samplers with one batch per
    step have q = 1/steps: --q is optional and checked.  The question is refused before any work if the sampler's
    cost model predicts more than the time limit (--force runs it).
    """
    reg = _registry()
    spec = reg.get_spec(a.sampler)
    target = a.delta if a.command == "epsilon" else a.epsilon if a.command == "delta" else (a.epsilon, a.delta)
    return reg.account(a.sampler, a.command, target, sigma=getattr(a, "sigma", None), steps=a.steps, epochs=a.epochs,
                       q=a.q, direction=a.direction, method=a.method, bound=a.bound, force=a.force,
                       relation=a.relation, **_options(a, spec))


def _error_text(exc, sampler=None) -> str:
    """One line for a library error: a ParameterError names the flag of its parameter (from the option tables),
    a cost refusal says the predicted time and --force; any other message is passed on as it is."""
    from .engine.errors import ParameterError
    from .samplers.spec import CostError

    from .samplers.relations import NotCovered

    if isinstance(exc, CostError):
        return exc.text("--force", {p: flag_of(p, sampler) or p for p in exc.drivers})
    if isinstance(exc, NotCovered):  # the sampler, the relation and why, in one sentence
        return f"--relation {exc.relation}: {exc}"
    if isinstance(exc, ParameterError):
        flag = flag_of(exc.param, sampler)
        if flag is not None:
            text = str(exc)
            if text.startswith(f"{exc.param} "):  # the message names the parameter first: name its flag instead
                return flag + text[len(exc.param):]
            if exc.missing:
                return f"{flag} is missing: {text}"
            return f"{flag} must be {exc.allowed} (got {exc.got!r}): {text}"
    return str(exc)


def _accuracy_text(exc, sampler=None) -> str:
    """One line for an accuracy failure; an error that names the parameters to change (``params``) names their flags."""
    text = str(exc) or type(exc).__name__
    params = getattr(exc, "params", ())
    if params:
        text += "; change " + " or ".join(flag_of(p, sampler) or p for p in params)
    return text


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
    argv = sys.argv[1:] if argv is None else list(argv)
    args = _parser().parse_args(argv)
    if args.command == "audit":
        return _audit_main(args)
    if args.command == "statement":
        return statements.main(args, _fail, _audit_error_text)
    if args.phases is not None or args.phase:
        from . import cli_phases

        return cli_phases.main(args, _fail, _error_text, _accuracy_text, _print_answer)
    missing = [f for f, v in (("--sigma", getattr(args, "sigma", 0)), ("--steps", args.steps)) if v is None]
    if missing:
        return _fail("the following arguments are required: " + ", ".join(missing), 2)
    if getattr(args, "scale", None) is not None:
        return _fail("--scale applies only to a run of phases (--phases FILE or --phase): a single run has one σ", 2)
    args.sampler = args.sampler or _registry().SAMPLERS[0]
    args.epochs = 1 if args.epochs is None else args.epochs
    try:
        with warnings.catch_warnings():  # numerical warnings (e.g. e^ε overflow at ε = 1e300) would break the one line
            warnings.simplefilter("ignore", RuntimeWarning)
            res = _run(args)
    except ValueError as exc:
        return _fail(_error_text(exc, args.sampler), 2)
    except (RuntimeError, ArithmeticError) as exc:  # e.g. cf.CFAccuracyError: φ cannot meet its error budget
        return _fail(_accuracy_text(exc, args.sampler), 1)
    run = [{"sampler": args.sampler, "sigma": getattr(args, "sigma", None), "q": args.q, "steps": args.steps,
            "epochs": args.epochs}]
    return _print_answer(args, res, {"sampler": args.sampler}, run)


def _target(args):
    return args.delta if args.command == "epsilon" else args.epsilon if args.command == "delta" else (args.epsilon,
                                                                                                       args.delta)


def _print_answer(args, res, head, run, scale=None) -> int:
    """Print an answer (one JSON object: ``head`` then the result's fields; ``--text``:
    :func:`dpsampling.render.answer_text` with the ``run``'s phases), or say why it is not printed (exit 1)."""
    from .engine.result import BELOW_FLOOR_FLAG, RELIABLE_DELTA_FLOOR

    # a certified interval wider than its accuracy setting asks (flag rel_width_not_reached or not_converged) is an
    # answer: both ends are proven, so it is printed with its flag and its width (accuracy.rel_width), as every
    # sampler's (issue 38: never no answer where a bound is proven)
    shown = res.value if res.value is not None else res.lower  # a one-sided lower answer: value null, its end lower
    if not _in_range(args.command, shown) and BELOW_FLOOR_FLAG in res.flags:
        return _fail(f"the {args.command} for these inputs is below the PLD reliability floor "
                     f"(δ < {RELIABLE_DELTA_FLOOR:g}): flagged, not reported", 1)
    if not _in_range(args.command, shown):
        return _fail(f"the {args.command} computed for these inputs ({shown!r}) is outside its valid range; "
                     f"not reported", 1)
    if args.text:
        from . import render

        print(render.answer_text(args.command, res, _target(args), run, scale))
        return 0
    out = {"command": args.command, **head, **res.as_dict()}
    print(json.dumps(out, default=lambda x: None if isinstance(x, float) and math.isnan(x) else str(x)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
