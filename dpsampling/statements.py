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


def phases_statement(phases, *, delta, dataset_size=None, format="text", force=False) -> str:
    """The privacy statement of a run of several phases (:class:`dpsampling.phases.Phase` each): every phase listed
    (its sampler, σ, q — with ``dataset_size`` the batch size q·N too — and steps × epochs), the whole run's certified
    ε(δ) interval under its relation (:func:`dpsampling.phases.epsilon`), the same schedule assuming the baseline
    (Poisson) sampler where a phase used another, and a footnote that says which number is the run's guarantee.
    Every bound on its side (:mod:`dpsampling.render`).  Bad input raises ParameterError naming the phase."""
    from dpsampling import __version__, samplers
    from dpsampling.samplers import phases as api
    from dpsampling.engine.validation import check_choice, check_int

    from . import render

    check_choice("format", format, FORMATS)
    if dataset_size is not None:
        dataset_size = check_int("dataset_size", dataset_size, 1)
    used = api.epsilon(phases, delta, force=force)
    run = list(phases)
    run = [p if isinstance(p, api.Phase) else api.Phase(**p) for p in run]
    base = samplers.with_role("baseline")
    others = [i for i, p in enumerate(run) if p.sampler != base.name]
    lines = [("Epsilon of the run (samplers used):", _interval_or_exact(used), used.relation)]
    if others:
        import dataclasses

        as_base = api.epsilon([dataclasses.replace(p, sampler=base.name) for p in run], delta, force=force)
        lines.append((f"Epsilon assuming {base.words} sampling (*):", _upper_of(as_base),
                      as_base.relation))
    rels = [rel for _, _, rel in lines]

    def phase_line(i, p):
        spec = samplers.get_spec(p.sampler)
        batch = f" (batches of {p.q * dataset_size:g} of {dataset_size} examples)" if dataset_size else ""
        epochs = f"{p.epochs} epoch{'s' if p.epochs != 1 else ''}"
        return (f"phase {i}: {spec.label} ({render.relation(spec.relation)}), noise multiplier {p.sigma:g}, "
                f"sampling rate {p.q:g}{batch}, {p.steps} steps × {epochs}")

    intro = f"DP-SGD performed in {len(run)} phase{'s' if len(run) != 1 else ''}, each composed with the others:"
    scope = "This privacy guarantee protects the release of all model checkpoints in addition to the final model."
    how = (f"Example-level DP with {render.relation_words(used.relation)} at delta = {delta:g} computed with "
           f"dpsampling {__version__} (PLD accounting, certified bounds: every phase's dominating pair composed "
           f"above, its dominated pair below):")
    if not others:
        note = f"This run used {base.words} sampling in every phase: the interval above is its guarantee."
    else:
        groups = {}
        for i in others:
            groups.setdefault(samplers.get_spec(run[i].sampler).label, []).append(str(i))
        which = "; ".join(f"phase{'s' if len(ix) > 1 else ''} {', '.join(ix)} ({label})" for label, ix in groups.items())
        note = (f"(*) This run did not use {base.words} sampling in {which}, so the "
                f"{render.tagged(base.words, lines[1][2], rels)} number is not its guarantee; its guarantee is the "
                f"first line, {render.cell(used.lower, used.upper, used.kind, used.value)}"
                f"{' under ' + render.relation_words(used.relation) if used.relation != lines[1][2] else ''}.")
    labels = [(render.tagged(label.rstrip(":"), rel, rels) + ":", val) for label, val, rel in lines]
    if format == "markdown":
        table = ["| | ε | relation |", "|---|---|---|",
                 *(f"| {label.rstrip(':')} | {val} | {render.relation(rel)} |" for label, val, rel in lines)]
        plist = "\n".join(f"- {phase_line(i, p)}" for i, p in enumerate(run))
        return "\n\n".join([intro, plist, scope, how.replace("delta = ", "δ = "), "\n".join(table), note]) + "\n"
    width = max(len(label) for label, _ in labels) + 1
    vw = max(12, *(len(val) for _, val in labels))

    def fill(text, indent=""):
        return textwrap.fill(text, 80, break_on_hyphens=False, initial_indent=indent,
                             subsequent_indent=indent + "  " if indent else "")

    block = "\n".join(f"    {label.ljust(width)}{val.rjust(vw)}" for label, val in labels)
    plist = "\n".join(fill(phase_line(i, p), "    ") for i, p in enumerate(run))
    return "\n\n".join([fill(intro) + "\n" + plist, fill(scope), fill(how) + "\n" + block, fill(note)]) + "\n"


def _interval_or_exact(r):
    from . import render

    return render.cell(r.lower, r.upper, r.kind, r.value)


def _upper_of(r):
    from . import render

    return render.exact(r.value) if r.kind == "exact" else render.bound(r.upper, "upper")


#: the statement's flags that describe a single run (required without --phases, refused with it)
SINGLE_RUN = ("batch_size", "epochs", "sigma", "sampler", "max_batch_size", "relation")
#: the flags required for a single run's statement
REQUIRED = ("dataset_size", "batch_size", "epochs", "sigma", "delta", "sampler")


def add_parser(sub, samplers) -> None:
    """Add the ``statement`` subcommand to the ``dpsampling`` command line's subparsers (``samplers``: the names)."""
    s = sub.add_parser("statement", help="a privacy statement for a paper (TF Privacy's layout, the sampler used)",
                       description="The once-per-epoch and Poisson ε, the ε of the sampler used, and a true footnote; "
                                   "with --phases, every phase of a run and the whole run's ε.")
    s.add_argument("--dataset-size", type=int, help="number of training examples N >= 1 (with --phases: optional, "
                                                    "prints each phase's batch size q·N)")
    s.add_argument("--batch-size", type=int, help="batch size B in [1, N]")
    s.add_argument("--epochs", type=int, help="epochs E >= 1")
    s.add_argument("--sigma", type=float, help="noise multiplier σ > 0")
    s.add_argument("--delta", type=float, help="δ in (0, 1)")
    s.add_argument("--sampler", choices=samplers, help="the batch sampler the run used")
    s.add_argument("--accuracy", choices=("default", "fine"), default="default",
                   help="accuracy of a certified interval computed to a requested width")
    s.add_argument("--max-batch-size", type=int, help="the cap of a sampler that caps its batches")
    s.add_argument("--force", action="store_true", help="compute a line predicted beyond the time limit")
    s.add_argument("--relation", choices=("add_remove", "zero_out", "replace_one"), default=None,
                   help="state every line under this neighbouring relation (default: the sampler's own); a line "
                        "whose analysis does not cover it is stated under its own, named")
    s.add_argument("--markdown", action="store_true", help="Markdown instead of 80-column text")
    s.add_argument("--phases", metavar="FILE", help="a run of several phases (CSV or YAML, as for dpsampling epsilon "
                                                    "--phases): every phase listed and the whole run's ε")
    s.add_argument("--phase", action="append", metavar="KEY=VALUE,...",
                   help="one phase of a run (sampler=…,sigma=…,q=…,steps=…[,epochs=…]); repeat for each")


def _phases_main(args, fail, error_text) -> int:
    from . import phases_io

    given = [f for f in SINGLE_RUN if getattr(args, f) is not None] + (["accuracy"] if args.accuracy != "default"
                                                                       else [])
    if given:
        flag = "--" + given[0].replace("_", "-")
        return fail(f"{flag} does not apply with {'--phases' if args.phases else '--phase'} (each phase gives its own "
                    f"sampler, sigma, q, steps and epochs)", 2)
    if args.phases is not None and args.phase:
        return fail("--phases and --phase together: give the run's phases either in a file (--phases) or as --phase "
                    "flags", 2)
    if args.delta is None:
        return fail("the following arguments are required: --delta", 2)
    from dpsampling.engine.errors import ParameterError

    try:
        if args.phases is not None:
            run, origins = phases_io.read_file(args.phases)
        else:
            pairs = [phases_io.parse_flag(text, n + 1) for n, text in enumerate(args.phase)]
            run, origins = [p for p, _ in pairs], [f"--phase {o}" for _, o in pairs]
    except ParameterError as exc:
        return fail(error_text(exc), 2)
    try:
        text = phases_statement(run, delta=args.delta, dataset_size=args.dataset_size,
                                format="markdown" if args.markdown else "text", force=args.force)
    except ValueError as exc:
        if str(exc).startswith("phase "):
            prefix = f"--phases {args.phases}: " if args.phases is not None else ""
            return fail(prefix + phases_io.where(origins, str(exc)), 2)
        return fail(error_text(exc), 2)
    except (RuntimeError, ArithmeticError) as exc:
        return fail(str(exc) or type(exc).__name__, 1)
    print(text, end="")
    return 0


def main(args, fail, error_text) -> int:
    """Run the ``statement`` subcommand: print the statement; bad input: one line naming the flag, exit 2
    (``fail(message, code)`` prints it, ``error_text(exc)`` words a library error for the command line)."""
    if args.phases is not None or args.phase:
        return _phases_main(args, fail, error_text)
    missing = ["--" + f.replace("_", "-") for f in REQUIRED if getattr(args, f) is None]
    if missing:
        return fail("the following arguments are required: " + ", ".join(missing), 2)
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


__all__ = ["FORMATS", "add_parser", "main", "phases_statement", "statement"]
