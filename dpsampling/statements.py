"""A privacy statement for a paper: TF Privacy's layout, with the sampler actually used and a caveat that is true.

TF Privacy's ``compute_dp_sgd_privacy_statement`` prints two numbers, "each example occurring once per epoch" and
"assuming Poisson sampling (*)", and footnotes the second with the belief that a shuffled run's ε "should be closer
to this value".  :func:`statement` keeps that layout, adds the ε of the sampler the run used (its certified
interval), and replaces the footnote by what is known: whether the baseline number is this run's guarantee, and, for
a sampler whose upper end is not certified, whether the audit proves the baseline number wrong.  Every number is
:func:`dpsampling.audit`'s row for that sampler: the once-per-epoch line is the row of the sampler whose
``spec.role`` is "once_per_epoch", the Poisson line the row of the "baseline" sampler; the wording (how batches are
drawn, the neighbouring relation, where each end comes from) is the sampler's spec.  Every bound is printed on its
side (:func:`dpsampling.engine.result.bound_text`: upper ends rounded up, lower ends down; a value stated as the
run's ε, exact or not, is an upper end).  σ is the noise multiplier of the sum of clipped gradients (no
microbatching factor).
"""

from __future__ import annotations

import math
import textwrap

from dpsampling.engine.errors import ParameterError
from dpsampling.engine.result import bound_text

FORMATS = ("text", "markdown")
#: significant digits of a printed ε
DIGITS = 4


def _up(x):
    return bound_text(x, "upper", DIGITS)


def _down(x):
    return bound_text(x, "lower", DIGITS)


def _sampler_eps(row):
    """(text, what) of the sampler row's ε: an interval, an upper bound or an exact value (printed as an upper end:
    the statement says ε is at most the number)."""
    if not (math.isnan(row["lower"]) or math.isnan(row["upper"])) and row["kind"] not in ("exact",):
        return f"[{_down(row['lower'])}, {_up(row['upper'])}]", "certified interval"
    return _up(row["value"]), {"upper": "upper bound", "exact": "exact"}.get(row["kind"], row["kind"])


def _footnote(spec, base, p, row):
    if spec.role == "baseline":
        return f"(*) This run used {base.words} sampling: this is its guarantee."
    head = f"(*) This run did not use {base.words} sampling, so the {base.words} number is not its guarantee."
    if not spec.upper_certified:
        if row["lower"] > p["upper"]:
            proof = (f" For {spec.run.replace('a ', 'this ', 1)} it is provably wrong: its epsilon is at least "
                     f"{_down(row['lower'])} (a lower bound, {spec.lower_source})")
        else:
            proof = (f" No proof is known that {spec.words} is as private as {base.words} sampling, nor is the "
                     f"{base.words} number proven wrong here (the lower bound is {_down(row['lower'])})")
        return (f"{head}{proof}; the best known upper bound is {spec.upper_source}, {_up(row['upper'])}: the "
                f"interval above is certified.")
    eps, what = _sampler_eps(row)
    return f"{head} Its epsilon with the sampler used is {eps} ({what})."


def statement(dataset_size, batch_size, *, epochs, sigma, delta, sampler, format="text", accuracy="default",
              force=False, max_batch_size=None) -> str:
    """The privacy statement of a DP-SGD run of ``epochs`` passes over ``dataset_size`` examples in batches of
    ``batch_size`` at noise multiplier ``sigma``, batches drawn by ``sampler`` (one of
    :data:`dpsampling.samplers.SAMPLERS`); ``format`` "text" (80 columns, TF Privacy's layout) or "markdown".
    Bad input raises ParameterError naming the parameter; a row predicted beyond the time limit raises CostError
    (``force=True`` computes it).  ``max_batch_size``: the cap of a sampler that caps its batches (as the audit's)."""
    from dpsampling import samplers
    from dpsampling.auditing import audit

    spec = samplers.get_spec(sampler)
    from dpsampling.engine.validation import check_choice

    check_choice("format", format, FORMATS)
    if epochs is None or sigma is None:
        raise ParameterError("epochs" if epochs is None else "sigma", "given", None,
                             message="epochs and sigma are required (a statement describes a run that was made)")
    once, base = samplers.with_role("once_per_epoch"), samplers.with_role("baseline")
    names = tuple(dict.fromkeys((once.name, base.name, sampler)))
    df = audit(dataset_size, batch_size, delta=delta, epochs=epochs, sigma=sigma, samplers=names,
               accuracy=accuracy, force=force, max_batch_size=max_batch_size)
    rows = {r["sampler"]: r for r in df.to_dict("records")}
    for name in names:
        if name in df.attrs["skipped"]:
            raise df.attrs["skipped"][name]  # a line of the statement cannot be computed: say why
    d, p, row = rows[once.name], rows[base.name], rows[sampler]
    eps, _ = _sampler_eps(row)
    from dpsampling import __version__

    intro = (f"DP-SGD performed over {dataset_size} examples with {batch_size} examples per iteration, noise "
             f"multiplier {sigma:g} for {epochs} epochs, batches drawn by {spec.drawn}.")
    scope = "This privacy guarantee protects the release of all model checkpoints in addition to the final model."
    how = (f"Example-level DP with {spec.relation_words} at delta = {delta:g} computed with dpsampling "
           f"{__version__} (PLD accounting, certified bounds):")
    lines = [("Epsilon with each example occurring once per epoch:", _up(d["value"])),
             (f"Epsilon assuming {base.words} sampling (*):", _up(p["value"])),
             (f"Epsilon with the sampler used ({sampler}):", eps)]
    note = _footnote(spec, base, p, row)
    if format == "markdown":
        table = ["| | ε |", "|---|---|",
                 *(f"| {label.rstrip(':')} | {val} |" for label, val in lines)]
        return "\n\n".join([intro, scope, how.replace("delta = ", "δ = "), "\n".join(table), note]) + "\n"
    width = max(len(label) for label, _ in lines) + 1
    vw = max(12, *(len(val) for _, val in lines))
    block = "\n".join(f"    {label.ljust(width)}{val.rjust(vw)}" for label, val in lines)
    def fill(text):
        return textwrap.fill(text, 80, break_on_hyphens=False)  # "once-per-epoch" stays one word

    paras = [fill(intro), fill(scope), fill(how) + "\n" + block, fill(note)]
    return "\n\n".join(paras) + "\n"


def add_parser(sub, samplers) -> None:
    """Add the ``statement`` subcommand to the ``dpsampling`` command line's subparsers (``samplers``: the names)."""
    s = sub.add_parser("statement", help="a privacy statement for a paper (TF Privacy's layout, the sampler used)",
                       description="The once-per-epoch and Poisson ε, the ε of the sampler used, and a true footnote.")
    s.add_argument("--dataset-size", type=int, required=True, help="number of training examples N >= 1")
    s.add_argument("--batch-size", type=int, required=True, help="batch size B in [1, N]")
    s.add_argument("--epochs", type=int, required=True, help="epochs E >= 1")
    s.add_argument("--sigma", type=float, required=True, help="noise multiplier σ > 0")
    s.add_argument("--delta", type=float, required=True, help="δ in (0, 1)")
    s.add_argument("--sampler", choices=samplers, required=True, help="the batch sampler the run used")
    s.add_argument("--accuracy", choices=("default", "fine"), default="default",
                   help="accuracy of a certified interval computed to a requested width")
    s.add_argument("--max-batch-size", type=int, help="the cap of a sampler that caps its batches")
    s.add_argument("--force", action="store_true", help="compute a line predicted beyond the time limit")
    s.add_argument("--markdown", action="store_true", help="Markdown instead of 80-column text")


def main(args, fail, error_text) -> int:
    """Run the ``statement`` subcommand: print the statement; bad input: one line naming the flag, exit 2
    (``fail(message, code)`` prints it, ``error_text(exc)`` words a library error for the command line)."""
    try:
        text = statement(args.dataset_size, args.batch_size, epochs=args.epochs, sigma=args.sigma, delta=args.delta,
                         sampler=args.sampler, format="markdown" if args.markdown else "text", accuracy=args.accuracy,
                         force=args.force, max_batch_size=args.max_batch_size)
    except ValueError as exc:
        return fail(error_text(exc), 2)
    except (RuntimeError, ArithmeticError) as exc:
        return fail(str(exc) or type(exc).__name__, 1)
    print(text, end="")
    return 0


__all__ = ["FORMATS", "add_parser", "main", "statement"]
