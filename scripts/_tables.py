"""The Markdown table of the audit-style computations (sampler_audit, certified_intervals): one line per
(run, epochs) with the run's N, B, σ, δ and one cell per sampler.  Printed intervals are the audit's text
(:func:`interval_text`, rounded outward; one bound: :func:`bound_text`), imported here once for every pipeline table."""

from dpsampling.engine.result import bound_text, interval_text

__all__ = ["bound_text", "interval_text", "runs_table"]


def runs_table(df, title, intro, columns, cell, extra=None) -> str:
    """Markdown: ``# title``, the paragraph ``intro``, then a table with one line per run (in order of first
    appearance) and epochs (ascending): run, N, B, σ, δ, epochs, ``cell(row or None)`` per sampler in ``columns``
    and, with ``extra = (header, fn)``, one more column ``fn(first row of the line)``."""
    head = "| run | N | B | σ | δ | epochs | " + " | ".join(columns) + " |"
    if extra is not None:
        head += f" {extra[0]} |"
    lines = [f"# {title}", "", intro, "", head, "|" + "---|" * (6 + len(columns) + (extra is not None))]
    for run in dict.fromkeys(df["run"]):
        g = df[df["run"] == run]
        for e in sorted(g["epochs"].unique()):
            h = g[g["epochs"] == e]
            by = {r["sampler"]: r for r in h.to_dict("records")}
            r0 = h.iloc[0]
            line = (f"| {run} | {int(r0['dataset_size'])} | {int(r0['batch_size'])} | {r0['sigma']:g} | "
                    f"{r0['delta']:g} | {int(e)} | " + " | ".join(cell(by.get(c)) for c in columns) + " |")
            if extra is not None:
                line += f" {extra[1](r0)} |"
            lines.append(line)
    return "\n".join(lines) + "\n"
