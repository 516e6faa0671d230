"""The one renderer: results as text and Markdown, every bound on its side and every number with its relation.

Everything the package prints about a result goes through here: the audit's table and verdicts (text and Markdown),
the per-epoch table, the statement's lines, the Opacus warnings and the plot's labels.  Two rules:

* **Every bound on its side.**  An upper end is rounded up, a lower end down (:func:`bound`, :func:`interval`, built
  on :func:`dpsampling.engine.result.outward`); an exact value is printed by :func:`exact` — rounded up (the safe
  side of ε, δ and σ) to :data:`DIGITS` significant digits — so it reads the same in every output.
* **Every number with its relation.**  A table has a relation column; a line that sets numbers under different
  neighbouring relations side by side names each one's relation (:func:`tagged`).

No sampler is named here: the words come from each sampler's spec.
"""

from __future__ import annotations

import math

from dpsampling.engine.result import bound_text, ends_text, interval_text, outward, separating_text

#: significant digits of a printed bound or exact value
DIGITS = 4
#: significant digits of a number in a verdict (bounds rounded outward)
VERDICT_DIGITS = 3
#: a relation in a table cell or after a number
RELATION_SHORT = {"add_remove": "add/remove", "zero_out": "zero-out", "replace_one": "replace-one"}
#: flags of an audit row that was not computed, and the words of its cell
NOT_COMPUTED_FLAGS = {"skipped_cost": "not computed", "not_computed": "not computed", "not_covered": "not covered"}
#: what an audit row's number is, by its kind
_WHAT = {"upper": "upper bound", "lower": "lower bound", "exact": "exact", "estimate": "estimate",
         "interval": "certified interval"}
#: the quantity of a question, as a column head
SYMBOL = {"epsilon": "ε", "sigma": "σ", "epochs": "epochs", "delta": "δ"}


# --------------------------------------------------------------------------- numbers

def bound(x, side, digits=DIGITS) -> str:
    """One bound: an upper end rounded up, a lower end down (:func:`dpsampling.engine.result.bound_text`)."""
    return bound_text(x, side, digits)


def exact(x, digits=DIGITS) -> str:
    """An exact value, the same text everywhere: rounded up (a reported ε, δ or σ must not understate it)."""
    return bound_text(x, "upper", digits)


def interval(lower, upper) -> str:
    """'[lower, upper]' rounded outward, with the digits that show the width
    (:func:`dpsampling.engine.result.interval_text`)."""
    return interval_text(lower, upper)


def separating(lo_end, hi_end) -> tuple:
    """Texts of ``lo_end`` rounded up and ``hi_end`` rounded down that still keep them apart."""
    return separating_text(lo_end, hi_end)


def ends(lower, upper) -> tuple:
    """Texts of an interval's ends rounded outward, with the digits that tell them apart."""
    return ends_text(lower, upper)


def relation(rel) -> str:
    """A relation in short words (add/remove, zero-out, replace-one); '' for None."""
    return RELATION_SHORT.get(rel, rel or "")


def relation_words(rel) -> str:
    """A relation as a statement writes it ("replace-one (substitution) adjacency")."""
    from dpsampling.samplers.spec import RELATION_WORDS

    return RELATION_WORDS.get(rel, rel or "")


def tagged(words, rel, others) -> str:
    """``words`` followed by its relation in parentheses when ``others`` (the relations of the numbers on the same
    line) are not all this one."""
    return f"{words} ({relation(rel)})" if any(o != rel for o in others) else words


def _finite(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def cell(lower, upper, kind, value, quantity="epsilon") -> str:
    """The text of one answer: an interval (both ends), an exact value, or a one-sided bound ('≤ x', '≥ x')."""
    if quantity == "epochs":
        return str(int(value)) if _finite(value) else "-"
    if kind == "exact" and _finite(value):
        return exact(value)
    if _finite(lower) and _finite(upper):
        return interval(lower, upper)
    if _finite(upper):
        return "≤ " + bound(upper, "upper")
    if _finite(lower):
        return "≥ " + bound(lower, "lower")
    if kind in ("upper", "lower") and _finite(value):
        return ("≤ " if kind == "upper" else "≥ ") + bound(value, kind)
    return bound(value, "value") if _finite(value) else "-"


# --------------------------------------------------------------------------- the audit

def _flags(r):
    return [f for f in (r.get("flags") or "").split(";") if f]


def _missing(r):
    """The words of a row that was not computed ('not computed', 'not covered'), or None."""
    for f in _flags(r):
        if f in NOT_COMPUTED_FLAGS:
            return NOT_COMPUTED_FLAGS[f]
    return None


def _what(r, question, spec):
    """What the number of an audit row is, in words."""
    both = question != "epochs" and _finite(r["lower"]) and _finite(r["upper"]) and r["kind"] != "exact"
    if _best_known_upper(r, spec) and question != "epochs":
        return "certified interval (best known upper)"
    if both and r["kind"] in ("upper", "interval"):
        return "certified interval" if question == "epsilon" else "interval (sufficient σ = upper end)"
    return _WHAT.get(r["kind"], r["kind"])


def audit_rows(df, reason_of) -> tuple:
    """(header, rows, notes): the audit table as cells — sampler, the answer, what it is, relation, method — and
    the notes below it ("sampler: not computed: why"; ``reason_of(sampler)`` words a row's reason)."""
    from dpsampling import samplers as _samplers

    q = df.attrs["question"]
    head = ("sampler", SYMBOL[q], "what it is", "relation", "method")
    rows, notes = [], []
    for r in df.to_dict("records"):
        spec = _samplers.get_spec(r["sampler"])
        missing = _missing(r)
        if missing:
            rows.append((r["sampler"], "-", f"{missing} (below)", relation(r["relation"]), r.get("method") or ""))
            notes.append(f"{r['sampler']}: {missing}: {reason_of(r['sampler'])}")
            continue
        what = _what(r, q, spec)
        if r["flags"]:
            what += f" [{r['flags']}]"
        val = cell(r["lower"], r["upper"], r["kind"], r["value"], q)
        rows.append((r["sampler"], val, what, relation(r["relation"]), method_text(r, q, spec)))
    return head, rows, notes


def method_text(r, question, spec) -> str:
    """The methods of an audit row's ends in words: "<lower_method> / <upper_method>" (one label when they agree or
    one end is missing; a best known upper end by its short label ``spec.upper_method``); the selector ``method``
    where the row names no end's method."""
    lm, um = (m if isinstance(m, str) and m else None for m in (r.get("lower_method"), r.get("upper_method")))
    prefix = "integer search on "
    if question == "epochs":
        lm, um = (None if um is None else um.removeprefix(prefix)), (None if lm is None else lm.removeprefix(prefix))
    if _best_known_upper(r, spec) and um is not None and spec.upper_method:
        um = spec.upper_method
    labels = [m for m in dict.fromkeys((lm, um)) if m]
    text = " / ".join(labels) if labels else (r.get("method") or "")
    return prefix + text if question == "epochs" and labels else text


def run_line(df) -> str:
    """The run the audit describes, in one line."""
    r0 = df.iloc[0]
    q = df.attrs["question"]
    run = (f"N = {r0['dataset_size']}, B = {r0['batch_size']}, {r0['steps']} steps/epoch, q = {r0['q']:.4g}, "
           f"δ = {r0['delta']:g}")
    if q == "epsilon":
        run += f", σ = {r0['sigma']:g}, {int(r0['epochs'])} epochs"
    elif q == "sigma":
        run += f", target ε = {r0['target_epsilon']:g}, {int(r0['epochs'])} epochs"
    else:
        run += f", σ = {r0['sigma']:g}, target ε = {r0['target_epsilon']:g}"
    rel = df.attrs.get("relation")
    return run + (f", every row under {relation_words(rel)}" if rel else "")


def audit_text(df, reason_of) -> str:
    """The audit as aligned text: the run, the table, the notes on rows not computed, the verdicts."""
    head, rows, notes = audit_rows(df, reason_of)
    lines = [head, *rows]
    w = [max(len(line[i]) for line in lines) for i in range(len(head) - 1)]
    out = []
    for line in lines:
        val = line[1].ljust(w[1]) if line is head else line[1].rjust(w[1])
        out.append("  ".join([line[0].ljust(w[0]), val, line[2].ljust(w[2]), line[3].ljust(w[3]),
                              line[4]]).rstrip())
    parts = [run_line(df), "", *out]
    if notes:
        parts += ["", *notes]
    return "\n".join([*parts, "", *("- " + v for v in df.attrs["verdicts"])])


def audit_markdown(df, reason_of) -> str:
    """The audit as Markdown: the run, a table (with the relation of each row), the notes, the verdicts."""
    head, rows, notes = audit_rows(df, reason_of)
    table = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head),
             *("| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in rows)]
    parts = [run_line(df), "", *table]
    if notes:
        parts += ["", *("- " + n for n in notes)]
    return "\n".join([*parts, "", *("- " + v for v in df.attrs["verdicts"])]) + "\n"


# --------------------------------------------------------------------------- verdicts

def _b(x, side):
    return bound(x, side, VERDICT_DIGITS)


def _has_interval(r):
    return _finite(r.get("lower")) and _finite(r.get("upper"))


def _compare(name, r, p, base, what, symbol, less_is):
    """A certified comparison of row ``r`` with the baseline row ``p`` on their intervals, or by how much the widths
    would have to shrink to decide it; each side named with its relation when they differ."""
    rels = (r["relation"], p["relation"])
    name_t, base_t = tagged(name, r["relation"], rels), tagged(base, p["relation"], rels)
    differ = r["relation"] != p["relation"]
    caveat = (" (different relations: not a like-for-like comparison; --relation puts every row under one)"
              if differ else "")
    if r["upper"] < p["lower"]:
        a, b = separating(r["upper"], p["lower"])
        return (f"{name_t} is certifiably below {base_t} here ({less_is}): {symbol} ≤ {a} < {b} ≤ "
                f"{symbol}_{base}{caveat}.")
    if r["lower"] > p["upper"]:
        a, b = separating(p["upper"], r["lower"])
        return f"{name_t} is certifiably above {base_t} here: {symbol} ≥ {b} > {a} ≥ {symbol}_{base}{caveat}."
    overlap = min(r["upper"], p["upper"]) - max(r["lower"], p["lower"])
    wr, wp = r["upper"] - r["lower"], p["upper"] - p["lower"]
    below, above = r["upper"] - p["lower"], p["upper"] - r["lower"]
    alone = (f"the upper end of {name} would have to fall by {below:.2g}, below {bound(p['lower'], 'lower', 5)}"
             if below <= above else
             f"the lower end of {name} would have to rise by {above:.2g}, above {bound(p['upper'], 'upper', 5)}")
    return (f"{name_t} ({symbol} ∈ {interval(r['lower'], r['upper'])}) and {base_t} ({symbol} ∈ "
            f"{interval(p['lower'], p['upper'])}) overlap by {overlap:.2g}: neither {what} is certifiably better; "
            f"the widths ({wr:.2g} and {wp:.2g}) would have to shrink by at least {overlap:.2g} in all to decide it "
            f"({alone}){caveat}.")


def _best_known_upper(r, spec):
    """A row whose upper end is certified but only the best known one (``upper_best_known``: shuffle's deterministic
    value, Chua et al. 2024 Thm 4.1), not claimed tight."""
    v = r.get("upper_best_known")
    return bool(spec.upper_best_known if v is None else v)


def _lower_of(r):
    return r["lower"] if _finite(r.get("lower")) else r["value"]


def _epsilon_verdicts(p, bs, rows, reliable):
    out = []
    for r, spec in rows:
        rels = (r["relation"], p["relation"])
        me, base = tagged(spec.words, r["relation"], rels), tagged(bs.words, p["relation"], rels)
        if _best_known_upper(r, spec):
            if reliable and _lower_of(r) > p["upper"]:
                out.append(f"{tagged(spec.run, r['relation'], rels)} reported with {base} accounting (ε ≤ "
                           f"{_b(p['upper'], 'upper')}) is provably wrong: its ε is at least "
                           f"{_b(_lower_of(r), 'lower')} (and at most {_b(r['upper'], 'upper')}).")
            else:
                out.append(f"the {me} lower bound ({_b(_lower_of(r), 'lower')}) does not exceed the {base} upper "
                           f"bound ({_b(p['upper'], 'upper')}): {bs.words} accounting of {spec.run} is not provably "
                           f"wrong here, nor proven right; the certified ε of {spec.words} is at most "
                           f"{_b(r['upper'], 'upper')} ({spec.upper_method}; no tighter upper bound is known).")
        elif r["kind"] == "exact":
            once = ("; so does one permutation reused every epoch: Chua et al.'s lower bound for it equals this "
                    "value") if spec.role == "once_per_epoch" else ""
            out.append(f"{me} have ε = {exact(r['value'])} exactly (rounded up{once}), "
                       f"{r['value'] / p['upper']:.3g}× the {base} ε ≤ {_b(p['upper'], 'upper')}.")
        elif _has_interval(p) and _has_interval(r):
            out.append(_compare(spec.words, r, p, bs.words, "sampler", "ε", "more private"))
    return out


def _sigma_verdicts(p, bs, rows, delta, target_epsilon, first=True):
    out = []
    if first and _has_interval(p) and p["lower"] < p["upper"]:
        lo, up = ends(p["lower"], p["upper"])
        out.append(f"{bs.words}: σ = {up} suffices and σ ≤ {lo} is provably insufficient (the smallest "
                   f"sufficient σ lies in between).")
    for r, spec in rows:
        rels = (r["relation"], p["relation"])
        me, base = tagged(spec.words, r["relation"], rels), tagged(bs.words, p["relation"], rels)
        if _best_known_upper(r, spec):
            if _lower_of(r) > p["value"]:
                out.append(f"{tagged(spec.run, r['relation'], rels)} trained with the {base} σ = "
                           f"{_b(p['value'], 'upper')} is provably not (ε = {target_epsilon:.3g}, δ = {delta:g})-DP: "
                           f"it needs σ > {_b(_lower_of(r), 'lower')} (σ = {_b(r['upper'], 'upper')} suffices).")
            else:
                out.append(f"the {base} σ = {_b(p['value'], 'upper')} is not provably too small for {me} (the "
                           f"{spec.words} lower bound only rules out σ ≤ {_b(_lower_of(r), 'lower')}); "
                           f"σ = {_b(r['upper'], 'upper')} certifies it.")
        elif r["kind"] == "exact":
            out.append(f"{me} need σ = {exact(r['value'])} (exact, rounded up), {r['value'] / p['value']:.3g}× the "
                       f"{base} σ = {_b(p['value'], 'upper')}.")
        elif _has_interval(r) and _has_interval(p) and r["lower"] < r["upper"] and p["lower"] < p["upper"]:
            out.append(_compare(spec.words, r, p, bs.words, "sampler", "σ", "less noise"))
        else:
            out.append(f"{me} needs σ ≤ {_b(r['value'], 'upper')} ({base}: {_b(p['value'], 'upper')}).")
    return out


def _epochs_verdicts(p, bs, rows, delta, target_epsilon, first=True):
    out = []
    for r, spec in rows:
        rels = (r["relation"], p["relation"])
        me, base = tagged(spec.words, r["relation"], rels), tagged(bs.words, p["relation"], rels)
        if _best_known_upper(r, spec):
            if r["value"] < p["value"]:
                n_ep = int(r["value"])
                beyond = f"beyond {n_ep} epoch{'s' if n_ep != 1 else ''}" if n_ep > 0 else "even after one epoch"
                out.append(f"{tagged(spec.run, r['relation'], rels)} trained for the {int(p['value'])} epochs "
                           f"{base} accounting allows is provably not (ε = {target_epsilon:.3g}, δ = {delta:g})-DP: "
                           f"{beyond} its ε provably exceeds the target ({int(r['lower'])} epochs are certified).")
            else:
                out.append(f"{base} accounting allows {int(p['value'])} epochs; the {me} lower bound rules out only "
                           f"more than {int(r['value'])}; {int(r['lower'])} epochs are certified for {spec.words}.")
    if first and p["upper"] > p["lower"]:
        out.append(f"{bs.words}: {int(p['lower'])} epochs are certified; more than {int(p['upper'])} provably exceed "
                   f"the target.")
    for r, spec in rows:
        if not _best_known_upper(r, spec):
            rels = (r["relation"], p["relation"])
            me, base = tagged(spec.words, r["relation"], rels), tagged(bs.words, p["relation"], rels)
            verb = "allow" if r["kind"] == "exact" else "allows at least"
            out.append(f"{me} {verb} {int(r['value'])} epochs ({base}: {int(p['value'])}).")
    return out


def verdicts(rows, question, delta, target_epsilon, reliable) -> list:
    """Plain-sentence verdicts of the audit's ``rows`` (dicts) against the baseline row (the sampler whose spec has
    role "baseline"); ``reliable``: the baseline's δ is above the PLD reliability floor."""
    from dpsampling import samplers as _samplers

    base = _samplers.with_role("baseline")
    if base is None or not any(r["sampler"] == base.name for r in rows):
        return []
    by = {r["sampler"]: r for r in rows if _missing(r) is None and _finite(r["value"])}
    if base.name not in by:
        return [f"no comparison with {base.words}: its row cannot be computed for these inputs (see the row)."]
    p = by[base.name]
    others = [(r, _samplers.get_spec(name)) for name, r in by.items() if name != base.name]
    order = sorted(others, key=lambda rs: (not _best_known_upper(*rs), rs[0]["kind"] != "exact"))
    out = []
    for r, spec in order:  # one verdict per row, the baseline restated under the row's relation where it can be
        pr = _as_relation(base, p, r["relation"])
        if question == "epsilon":
            out += _epsilon_verdicts(pr, base, [(r, spec)], reliable)
        elif question == "sigma":
            out += _sigma_verdicts(pr, base, [(r, spec)], delta, target_epsilon, first=not out)
        else:
            out += _epochs_verdicts(pr, base, [(r, spec)], delta, target_epsilon, first=not out)
    return out


def _as_relation(base, p, rel):
    """The baseline row ``p`` under ``rel`` where its numbers are the same there (a rate sampler's add-or-remove and
    zero-out curves are the same: :func:`dpsampling.samplers.relations.coverage`), else ``p`` as it is."""
    from dpsampling.samplers.relations import coverage

    if rel and rel != p["relation"] and coverage(base, rel).how == "same_curves" \
            and coverage(base, p["relation"]).how in ("native", "same_curves"):
        return {**p, "relation": rel}
    return p


def cap_verdict(spec, base, c, row, asked, smallest, base_row=None) -> str:
    """The smallest cap in words: which cap keeps ε within the factor of the baseline's, and what the asked cap
    gives (every ε an upper end, rounded up).  The baseline's ε is the larger of the search's certified upper end and
    the table's (``base_row``), so the verdict prints the table's number: within the factor of the smaller is within
    it of the larger."""
    pois = c.poisson_epsilon
    if base_row is not None and _finite(base_row.get("upper")) and base_row.get("relation") == row.get("relation"):
        pois = max(pois, base_row["upper"])
    text = (f"{spec.words}: the smallest cap whose certified ε is within {c.factor:.0%} of {base.words}'s "
            f"(ε ≤ {bound(pois, 'upper', VERDICT_DIGITS + 1)}) is B = {c.max_batch_size} "
            f"(the mean batch is {c.mean_batch_size:.4g}; there ε ≤ {bound(c.epsilon, 'upper', VERDICT_DIGITS + 1)})")
    if asked != smallest and _has_interval(row):
        text += f"; the cap asked, B = {asked}, gives ε ∈ {interval(row['lower'], row['upper'])}"
    return text + "."


# --------------------------------------------------------------------------- per epoch

def per_epoch_text(per_epoch) -> str:
    """ε after each epoch as an aligned table: one line per epoch, one column per sampler headed by its name and
    relation (an interval, an exact value or a one-sided bound per cell)."""
    records = per_epoch.to_dict("records")
    samplers = list(dict.fromkeys(r["sampler"] for r in records))
    rel = {r["sampler"]: r.get("relation") for r in records}
    cells = {(r["epoch"], r["sampler"]): cell(r["lower"], r["upper"], r["kind"], r["value"]) for r in records}
    epochs = sorted({e for e, _ in cells})
    head = ("epoch", *(f"{s} ({relation(rel[s])})" if rel[s] else s for s in samplers))
    lines = [head] + [(str(e), *(cells.get((e, s), "-") for s in samplers)) for e in epochs]
    w = [max(len(line[i]) for line in lines) for i in range(len(head))]
    return "\n".join("  ".join(c.rjust(w[i]) for i, c in enumerate(line)).rstrip() for line in lines)


def plot_label(sampler, what, rel) -> str:
    """A band's legend entry: the sampler, its relation and what the band is."""
    return f"{sampler} ({relation(rel)}): {what}" if rel else f"{sampler}: {what}"


def plot_axis_label(relations) -> str:
    """The ε axis: the relation every band shares, if one."""
    shared = set(relations)
    under = f" under {relation(shared.pop())}" if len(shared) == 1 else ", each band under its relation"
    return f"ε{under} (dashed: lower end)"


# --------------------------------------------------------------------------- one answer (epsilon/delta/sigma --text)

def _given(x) -> str:
    """A number the user gave (not a bound): its shortest repr, '-' for None."""
    return "-" if x is None else repr(float(x)) if not isinstance(x, int) else str(x)


def answer_text(command, result, target, run, scale=None) -> str:
    """The answer of ``dpsampling epsilon|delta|sigma --text``: the question, the answer on its side with what it is,
    its relation and the method of each end, then the run, one row per phase (``run``: dicts of sampler, sigma, q,
    steps, epochs; one row for a single setting).  A σ answer's table gives each phase's σ at the sufficient end
    (rounded up); ``scale`` ("all" or a phase index) says which σ a run's σ answer is."""
    symbol = SYMBOL[command]
    if command == "sigma":
        eps, dlt = target
        ask = f"for ε = {_given(eps)}, δ = {_given(dlt)}"
        if scale == "all" and len(run) > 1:
            head = f"σ multiplier c of every phase's σ {ask}"
            symbol = "c"
        elif scale not in (None, "all") and len(run) > 1:
            head = f"σ of phase {scale} {ask}, the other phases as given"
        else:
            head = f"σ {ask}"
    else:
        other = "δ" if command == "epsilon" else "ε"
        head = f"{symbol} at {other} = {_given(target)}"
    n = len(run)
    head += f", a run of {n} phases" if n > 1 else ""
    lm, um = result.lower_method, result.upper_method
    how = " / ".join(m for m in (lm, um) if m) or (result.method or "")
    what = _WHAT.get(result.kind, result.kind)
    if command == "sigma" and result.kind == "interval":
        what = "interval (lower provably insufficient, upper sufficient)"
    if result.kind == "estimate":  # not a bound: its value, said so (its band, if any, is in the JSON)
        value, what = f"≈ {bound(result.value, 'value')}", "estimate, not a bound"
    else:
        value = cell(result.lower, result.upper, result.kind, result.value, command)
    lines = [f"{head}, under {relation(result.relation)}:",
             f"  {symbol} = {value}  {what}; {how}"]
    if result.flags:
        lines.append("  flags: " + ", ".join(result.flags))
    certified = result.kind in ("exact", "interval", "upper")
    sig_head = "σ" if command != "sigma" else ("σ (sufficient)" if certified else "σ (estimate)")
    sufficient = (result.accuracy or {}).get("sigmas")
    rows = [("phase", "sampler", sig_head, "q", "steps × epochs")]
    for i, p in enumerate(run):
        if command == "sigma":
            s = sufficient[i] if sufficient else result.value
            if not sufficient and scale == "all" and s is not None:  # one setting: c times its weight
                s = s * float(p["sigma"])
            s_text = bound(s, "upper" if certified else "value") if s is not None else "-"
        else:
            s_text = _given(p["sigma"])
        rows.append((str(i), str(p["sampler"]), s_text, _given(p["q"]), f"{p['steps']} × {p['epochs']}"))
    w = [max(len(r[k]) for r in rows) for k in range(len(rows[0]))]
    lines += ["  " + "  ".join(c.ljust(w[k]) for k, c in enumerate(r)).rstrip() for r in rows]
    return "\n".join(lines)


def phases_audit_text(rows, run, delta) -> str:
    """The audit of a run of phases: one row per sampler (its ε interval on its side, what it is, its relation, the
    method of each end), the samplers not computed with why, then the run's phases."""
    head = ("sampler", "ε", "what it is", "relation", "method")
    table = [head]
    for r in rows:
        if r.result is None:
            continue
        res = r.result
        how = " / ".join(m for m in (res.lower_method, res.upper_method) if m) or (res.method or "")
        table.append((r.sampler, cell(res.lower, res.upper, res.kind, res.value), _WHAT.get(res.kind, res.kind),
                      relation(res.relation), how))
    w = [max(len(t[k]) for t in table) for k in range(len(head))]
    lines = [f"a run of {len(run)} phase{'s' if len(run) != 1 else ''}, δ = {_given(delta)}: ε of the same schedule "
             f"under each sampler", ""]
    lines += [("  ".join(c.rjust(w[k]) if k == 1 and i else c.ljust(w[k]) for k, c in enumerate(t))).rstrip()
              for i, t in enumerate(table)]
    skipped = [r for r in rows if r.result is None]
    if skipped:
        lines.append("")
        lines += [f"- {r.sampler}: not computed: {r.why}" for r in skipped]
    lines += ["", "phases (each row's sampler in place of the one given):"]
    ptable = [("phase", "σ", "q", "steps × epochs")]
    ptable += [(str(i), _given(p["sigma"]), _given(p["q"]), f"{p['steps']} × {p['epochs']}") for i, p in enumerate(run)]
    pw = [max(len(t[k]) for t in ptable) for k in range(4)]
    lines += ["  " + "  ".join(c.ljust(pw[k]) for k, c in enumerate(t)).rstrip() for t in ptable]
    return "\n".join(lines)


# --------------------------------------------------------------------------- warnings (integrations)

def certified_text(lower, upper) -> str:
    """'ε ≤ u', 'ε = v' or 'ε ∈ [l, u]' of a run's certified ends."""
    if lower is None:
        return f"ε ≤ {bound(upper, 'upper')}"
    if lower == upper:
        return f"ε = {exact(upper)}"
    return f"ε ∈ {interval(lower, upper)}"


def opacus_check_text(accountant_name, what, when, sigma, reported, reported_relation, delta, verdict, lower, upper,
                      used_relation, note, sampler) -> str:
    """The warning of an accountant that does not fit its loader: what it reports (and under which relation),
    whether that is wrong, and the certified ε of the sampler used under its relation (``sigma``: a number, or the
    words of a history that changes it)."""
    rels = (reported_relation, used_relation)
    sigma = sigma if isinstance(sigma, str) else f"{sigma:g}"
    return (f"dpsampling: accountant '{accountant_name}' {what}. {when[0].upper()}{when[1:]} at σ = {sigma} it "
            f"reports ε = {bound(reported, 'value')}{_rel_suffix(reported_relation, rels)} at δ = {delta:g}, which "
            f"is {verdict}: the certified {certified_text(lower, upper)}{_rel_suffix(used_relation, rels)} for this "
            f"run{note}. Use PrivacyEngine(accountant='dpsampling_{sampler}').")


def _rel_suffix(rel, rels):
    return f" under {relation_words(rel)}" if rel and any(o != rel for o in rels) else ""


def best_known_text(head, claim_relation, lower, upper, used_relation, proven) -> str:
    """The note of a sampler whose upper end is only the best known one: Poisson accounting's claim against its
    certified lower end (each under its relation when they differ)."""
    rels = (claim_relation, used_relation)
    if proven:
        verdict = f"which is provably too small (ε ≥ {bound(lower, 'lower')}{_rel_suffix(used_relation, rels)})"
    else:
        verdict = "which is not provably wrong here, but not proven either"
    return (f"{head}{_rel_suffix(claim_relation, rels)}, {verdict}; the ε returned, {bound(upper, 'upper')}, is the "
            f"best known upper bound")


__all__ = ["DIGITS", "RELATION_SHORT", "answer_text", "audit_markdown", "phases_audit_text", "audit_rows", "audit_text", "best_known_text", "bound",
           "cap_verdict", "cell", "certified_text", "ends", "exact", "interval", "opacus_check_text",
           "per_epoch_text", "plot_axis_label", "plot_label", "relation", "relation_words", "separating", "tagged",
           "verdicts", "outward"]
