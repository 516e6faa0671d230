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

FORMATS = ("text", "markdown")


def _line_value(row):
    """The text of the sampler row's ε (:func:`dpsampling.render.cell`): an interval, an exact value (rounded up,
    as everywhere) or a one-sided bound."""
    from . import render

    return render.cell(row["lower"], row["upper"], row["kind"], row["value"])


def _upper_text(row):
    """A line stated as the run's ε: the upper end, rounded up (an exact value as :func:`render.exact` prints it)."""
    from . import render

    if row["kind"] == "exact":
        return render.exact(row["value"])
    up = row["upper"] if isinstance(row["upper"], float) and math.isfinite(row["upper"]) else row["value"]
    return render.bound(up, "upper")


def _footnote(spec, base, p, row):
    from . import render

    rels = (p["relation"], row["relation"])
    base_t = render.tagged(base.words, p["relation"], rels)
    if spec.role == "baseline":
        return f"(*) This run used {base.words} sampling: this is its guarantee."
    head = f"(*) This run did not use {base.words} sampling, so the {base_t} number is not its guarantee."
    if row.get("upper_best_known", spec.upper_best_known):
        low = row["lower"] if math.isfinite(row["lower"]) else row["value"]
        me = render.tagged(spec.run.replace("a ", "this ", 1), row["relation"], rels)
        if low > p["upper"]:
            proof = (f" For {me} it is provably wrong: its epsilon is at least {render.bound(low, 'lower')} (a lower "
                     f"bound, {spec.lower_source})")
        else:
            proof = (f" No proof is known that {spec.words} is as private as {base.words} sampling, nor is the "
                     f"{base.words} number proven wrong here (the lower bound is {render.bound(low, 'lower')})")
        return (f"{head}{proof}; the best known upper bound is {spec.upper_source}, "
                f"{render.bound(row['upper'], 'upper')}: the interval above is certified.")
    what = {"exact": "exact", "upper": "an upper bound"}.get(row["kind"], "certified interval")
    if row["kind"] == "upper" and math.isfinite(row["lower"]):
        what = "certified interval"
    return (f"{head} Its epsilon with the sampler used is {_line_value(row)}"
            f"{' under ' + render.relation_words(row['relation']) if row['relation'] != p['relation'] else ''} "
            f"({what}).")


def _rows(dataset_size, batch_size, epochs, sigma, delta, names, relation, **kw):
    """sampler -> its audit row under ``relation``, and the relation of each line: a line whose sampler's analysis
    does not cover ``relation`` is asked under its own relation instead (and says so)."""
    from dpsampling.auditing import NOT_COVERED, audit

    df = audit(dataset_size, batch_size, delta=delta, epochs=epochs, sigma=sigma, samplers=names, relation=relation,
               **kw)
    rows = {r["sampler"]: r for r in df.to_dict("records")}
    own = [n for n in names if NOT_COVERED in str(rows[n]["flags"]).split(";")]
    if own:
        from dpsampling import samplers

        if not any(samplers.get_spec(n).batch == "capped" for n in own):
            kw = {k: v for k, v in kw.items() if k != "max_batch_size"}  # the cap is refused where it applies to none
        df2 = audit(dataset_size, batch_size, delta=delta, epochs=epochs, sigma=sigma, samplers=tuple(own), **kw)
        rows.update({r["sampler"]: r for r in df2.to_dict("records")})
        df.attrs["skipped"] = {k: v for k, v in df.attrs["skipped"].items() if k not in own}
        df.attrs["skipped"].update(df2.attrs["skipped"])
    for name in names:
        if name in df.attrs["skipped"]:
            raise df.attrs["skipped"][name]  # a line of the statement cannot be computed: say why
    return rows


def statement(dataset_size, batch_size, *, epochs, sigma, delta, sampler, format="text", accuracy="default",
              force=False, max_batch_size=None, relation=None) -> str:
    """The privacy statement of a DP-SGD run of ``epochs`` passes over ``dataset_size`` examples in batches of
    ``batch_size`` at noise multiplier ``sigma``, batches drawn by ``sampler`` (one of
    :data:`dpsampling.samplers.SAMPLERS`); ``format`` "text" (80 columns, TF Privacy's layout) or "markdown".
    Every line is under ``relation`` (default: the sampler's own, ``spec.relation``); a line whose sampler's analysis
    does not cover it is stated under its own relation, named on the line.
    Bad input raises ParameterError naming the parameter; a row predicted beyond the time limit raises CostError
    (``force=True`` computes it).  ``max_batch_size``: the cap of a sampler that caps its batches (as the audit's)."""
    from dpsampling import samplers

    from . import render

    spec = samplers.get_spec(sampler)
    from dpsampling.engine.validation import check_choice

    check_choice("format", format, FORMATS)
    if epochs is None or sigma is None:
        raise ParameterError("epochs" if epochs is None else "sigma", "given", None,
                             message="epochs and sigma are required (a statement describes a run that was made)")
    relation = spec.relation if relation is None else relation
    once, base = samplers.with_role("once_per_epoch"), samplers.with_role("baseline")
    names = tuple(dict.fromkeys((once.name, base.name, sampler)))
    rows = _rows(dataset_size, batch_size, epochs, sigma, delta, names, relation, accuracy=accuracy, force=force,
                 max_batch_size=max_batch_size)
    d, p, row = rows[once.name], rows[base.name], rows[sampler]
    from dpsampling import __version__

    intro = (f"DP-SGD performed over {dataset_size} examples with {batch_size} examples per iteration, noise "
             f"multiplier {sigma:g} for {epochs} epochs, batches drawn by {spec.drawn}.")
    scope = "This privacy guarantee protects the release of all model checkpoints in addition to the final model."
    how = (f"Example-level DP with {render.relation_words(relation)} at delta = {delta:g} computed with dpsampling "
           f"{__version__} (PLD accounting, certified bounds):")

    dagger = [r for r in (d, p, row) if r["relation"] != relation]

    def own(r):  # a line under another relation than the statement's is marked, and its footnote says why
        return " (†)" if r["relation"] != relation else ""

    lines = [(f"Epsilon with each example occurring once per epoch{own(d)}:", _upper_text(d), d["relation"]),
             (f"Epsilon assuming {base.words} sampling (*){own(p)}:", _upper_text(p), p["relation"]),
             (f"Epsilon with the sampler used ({sampler}){own(row)}:", _line_value(row), row["relation"])]
    note = _footnote(spec, base, p, row)
    if dagger:
        from dpsampling.samplers.relations import coverage

        why = "; ".join(dict.fromkeys(coverage(samplers.get_spec(r["sampler"]), relation).why for r in dagger))
        rels = " and ".join(dict.fromkeys(render.relation_words(r["relation"]) for r in dagger))
        note += f"\n\n(†) Under {rels}: not covered under {render.relation_words(relation)} ({why})."
    if format == "markdown":
        table = ["| | ε | relation |", "|---|---|---|",
                 *(f"| {label.rstrip(':')} | {val} | {render.relation(rel)} |" for label, val, rel in lines)]
        return "\n\n".join([intro, scope, how.replace("delta = ", "δ = "), "\n".join(table), note]) + "\n"
    width = max(len(label) for label, _, _ in lines) + 1
    vw = max(12, *(len(val) for _, val, _ in lines))
    block = "\n".join(f"    {label.ljust(width)}{val.rjust(vw)}" for label, val, _ in lines)

    def fill(text):
        return textwrap.fill(text, 80, break_on_hyphens=False)  # "once-per-epoch" stays one word

    paras = [fill(intro), fill(scope), fill(how) + "\n" + block, *(fill(n) for n in note.split("\n\n"))]
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
    s.add_argument("--relation", choices=("add_remove", "zero_out", "replace_one"), default=None,
                   help="state every line under this neighbouring relation (default: the sampler's own); a line "
                        "whose analysis does not cover it is stated under its own, named")
    s.add_argument("--markdown", action="store_true", help="Markdown instead of 80-column text")


def main(args, fail, error_text) -> int:
    """Run the ``statement`` subcommand: print the statement; bad input: one line naming the flag, exit 2
    (``fail(message, code)`` prints it, ``error_text(exc)`` words a library error for the command line)."""
    try:
        text = statement(args.dataset_size, args.batch_size, epochs=args.epochs, sigma=args.sigma, delta=args.delta,
                         sampler=args.sampler, format="markdown" if args.markdown else "text", accuracy=args.accuracy,
                         force=args.force, max_batch_size=args.max_batch_size, relation=args.relation)
    except ValueError as exc:
        return fail(error_text(exc), 2)
    except (RuntimeError, ArithmeticError) as exc:
        return fail(str(exc) or type(exc).__name__, 1)
    print(text, end="")
    return 0


__all__ = ["FORMATS", "add_parser", "main", "statement"]
