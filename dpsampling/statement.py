"""A privacy statement for a paper: TF Privacy's layout, with the sampler actually used and a caveat that is true.

TF Privacy's ``compute_dp_sgd_privacy_statement`` prints two numbers, "each example occurring once per epoch" and
"assuming Poisson sampling (*)", and footnotes the second with the belief that a shuffled run's ε "should be closer
to this value".  :func:`statement` keeps that layout, adds the ε of the sampler the run used (its certified
interval), and replaces the footnote by what is known: whether the Poisson number is this run's guarantee, and, for
a shuffled run, whether the audit proves it wrong.  Every number is :func:`dpsampling.audit.audit`'s row for
that sampler (the once-per-epoch line is its ``deterministic`` row, the Poisson line its ``poisson`` row).
σ is the noise multiplier of the sum of clipped gradients (no microbatching factor).
"""

from __future__ import annotations

import math
import sys
import textwrap

#: how each sampler draws its batches, for the statement's first sentence
DRAWN = {
    "poisson": "Poisson sampling (each example in each step independently with probability B/N)",
    "wor": "sampling without replacement (a fresh batch of B distinct examples each step)",
    "shuffle": "shuffling (a fresh random permutation each epoch, cut into batches of B)",
    "deterministic": "a fixed order (the same partition into batches every epoch)",
    "balls_and_bins": "balls-and-bins (each epoch every example in one uniformly random step)",
}
FORMATS = ("text", "markdown")
#: the samplers, a literal as in cli.py (importing dpsampling.samplers loads the accountants: --help stays fast);
#: tests/test_statement.py checks that it equals dpsampling.samplers.SAMPLERS
SAMPLERS = tuple(DRAWN)


def _num(x):
    return f"{x:.3f}"


def _sampler_eps(row):
    """(text, what) of the sampler row's ε: an interval, an upper bound or an exact value."""
    if row["kind"] == "interval" or (row["kind"] == "upper" and not math.isnan(row["lower"])):
        return f"[{_num(row['lower'])}, {_num(row['upper'])}]", "certified interval"
    return _num(row["value"]), {"upper": "upper bound", "exact": "exact"}.get(row["kind"], row["kind"])


def _footnote(sampler, p, row):
    if sampler == "poisson":
        return "(*) This run used Poisson sampling: this is its guarantee."
    head = "(*) This run did not use Poisson sampling, so the Poisson number is not its guarantee."
    if sampler == "shuffle":
        if row["lower"] > p["upper"]:
            proof = (f" For this shuffled run it is provably wrong: its epsilon is at least {_num(row['lower'])} "
                     f"(a lower bound, Chua et al. 2024)")
        else:
            proof = (" No proof is known that shuffled batches are as private as Poisson sampling, nor is the "
                     f"Poisson number proven wrong here (the lower bound is {_num(row['lower'])})")
        return (f"{head}{proof}; the best known upper bound is the once-per-epoch value "
                f"{_num(row['upper'])} (Chua et al. 2024, Thm 4.1): the interval above is certified.")
    eps, what = _sampler_eps(row)
    return f"{head} Its epsilon with the sampler used is {eps} ({what})."


def statement(dataset_size, batch_size, *, epochs, sigma, delta, sampler, format="text", accuracy="default") -> str:
    """The privacy statement of a DP-SGD run of ``epochs`` passes over ``dataset_size`` examples in batches of
    ``batch_size`` at noise multiplier ``sigma``, batches drawn by ``sampler`` (one of
    :data:`dpsampling.samplers.SAMPLERS`); ``format`` "text" (80 columns, TF Privacy's layout) or "markdown".
    Bad input raises ValueError naming the parameter."""
    from dpsampling.audit import audit

    if sampler not in SAMPLERS:
        raise ValueError(f"sampler must be one of {', '.join(SAMPLERS)} (got {sampler!r})")
    if format not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)} (got {format!r})")
    if epochs is None or sigma is None:
        raise ValueError("epochs and sigma are required (a statement describes a run that was made)")
    samplers = tuple(dict.fromkeys(("deterministic", "poisson", sampler)))
    df = audit(dataset_size, batch_size, delta=delta, epochs=epochs, sigma=sigma, samplers=",".join(samplers),
               accuracy=accuracy)
    rows = {r["sampler"]: r for r in df.to_dict("records")}
    d, p, row = rows["deterministic"], rows["poisson"], rows[sampler]
    eps, _ = _sampler_eps(row)
    from dpsampling import __version__

    intro = (f"DP-SGD performed over {dataset_size} examples with {batch_size} examples per iteration, noise "
             f"multiplier {sigma:g} for {epochs} epochs, batches drawn by {DRAWN[sampler]}.")
    scope = "This privacy guarantee protects the release of all model checkpoints in addition to the final model."
    how = (f"Example-level DP with add-or-remove-one adjacency at delta = {delta:g} computed with dpsampling "
           f"{__version__} (PLD accounting, certified bounds):")
    lines = [("Epsilon with each example occurring once per epoch:", _num(d["value"])),
             ("Epsilon assuming Poisson sampling (*):", _num(p["value"])),
             (f"Epsilon with the sampler used ({sampler}):", eps)]
    note = _footnote(sampler, p, row)
    if format == "markdown":
        table = ["| | ε |", "|---|---|",
                 *(f"| {label.rstrip(':')} | {val} |" for label, val in lines)]
        return "\n\n".join([intro, scope, how.replace("delta = ", "δ = "), "\n".join(table), note]) + "\n"
    width = max(len(label) for label, _ in lines) + 1
    vw = max(12, *(len(val) for _, val in lines))
    block = "\n".join(f"    {label.ljust(width)}{val.rjust(vw)}" for label, val in lines)
    paras = [textwrap.fill(intro, 80), textwrap.fill(scope, 80), textwrap.fill(how, 80) + "\n" + block,
             textwrap.fill(note, 80)]
    return "\n\n".join(paras) + "\n"


_FLAGS = {"dataset_size": "--dataset-size", "batch_size": "--batch-size", "epochs": "--epochs", "sigma": "--sigma",
          "delta": "--delta", "sampler": "--sampler", "accuracy": "--accuracy"}


def add_parser(sub) -> None:
    """Add the ``statement`` subcommand to the ``dpsampling`` command line's subparsers."""
    s = sub.add_parser("statement", help="a privacy statement for a paper (TF Privacy's layout, the sampler used)",
                       description="The once-per-epoch and Poisson ε, the ε of the sampler used, and a true footnote.")
    s.add_argument("--dataset-size", type=int, required=True, help="number of training examples N >= 1")
    s.add_argument("--batch-size", type=int, required=True, help="batch size B in [1, N]")
    s.add_argument("--epochs", type=int, required=True, help="epochs E >= 1")
    s.add_argument("--sigma", type=float, required=True, help="noise multiplier σ > 0")
    s.add_argument("--delta", type=float, required=True, help="δ in (0, 1)")
    s.add_argument("--sampler", choices=SAMPLERS, required=True, help="the batch sampler the run used")
    s.add_argument("--accuracy", choices=("default", "fine"), default="default",
                   help="balls_and_bins PLD_accounting accuracy")
    s.add_argument("--markdown", action="store_true", help="Markdown instead of 80-column text")


def main(args) -> int:
    """Run the ``statement`` subcommand: print the statement; bad input: one line naming the flag, exit 2."""
    import re

    try:
        text = statement(args.dataset_size, args.batch_size, epochs=args.epochs, sigma=args.sigma, delta=args.delta,
                         sampler=args.sampler, format="markdown" if args.markdown else "text", accuracy=args.accuracy)
    except ValueError as exc:
        msg = re.sub(r"(?<![\w-])(" + "|".join(_FLAGS) + r")(?![\w(])", lambda m: _FLAGS[m.group(1)], str(exc))
        print("dpsampling: error: " + " ".join(msg.split()), file=sys.stderr)
        return 2
    except (RuntimeError, ArithmeticError) as exc:
        print("dpsampling: error: " + " ".join(str(exc).split()), file=sys.stderr)
        return 1
    print(text, end="")
    return 0


__all__ = ["DRAWN", "FORMATS", "SAMPLERS", "add_parser", "main", "statement"]


class _CallableModule(__import__("types").ModuleType):
    """Importing this module sets the package attribute ``dpsampling.statement`` to the module itself, shadowing the
    lazily exported function (as for :mod:`dpsampling.audit`); a callable module keeps ``dpsampling.statement(...)``
    meaning :func:`statement` either way."""

    def __call__(self, *args, **kwargs):
        return statement(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
