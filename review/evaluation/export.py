"""The report's paper-layout tables as plain tables, and those as CSV, LaTeX and text (pure).

A plain table is {name, title, note, stub, groups, columns, rows}: `groups` are header
cells spanning several columns ([label, span]), `rows` are {label, cells}. Rates are
fractions in the report and CSV, and percentages with two decimals (as the papers print
them) in LaTeX and text; an undefined value is an empty CSV cell, "--" in LaTeX and
"undefined" in text.
"""

from __future__ import annotations

import csv
import io
from typing import Any

from review.evaluation.paper import PAPER_METRICS

METRIC_TITLES = {"precision": "Precision", "recall": "Recall", "f1": "F1"}
RATE_COLUMNS_TAU = ("kept", "correct", "precision")


def _rate(kind: str, value: Any) -> dict[str, Any]:
    return {"kind": kind, "value": value}


def paper_plain_tables(report: dict[str, Any]) -> list[dict[str, Any]]:
    """One plain table per (aggregation, candidate group) of the report's paper section,
    with a column group per metric; then the tau selection and near-duplicate tables."""
    paper = report.get("paper")
    if not paper:
        return []
    columns = paper["columns"]
    compared = f"{paper['problems_compared']} problem{'s' if paper['problems_compared'] != 1 else ''}"
    scope = (f"{compared} where every origin has a suite; "
             f"{paper['problems_excluded']} excluded") if paper["same_problems"] else (
        f"{compared}; origins not restricted to the same problems")
    by = f"by {paper['difficulty_source']} difficulty" if paper["difficulty_source"] else "(no difficulty labels)"
    out = []
    for table in paper["tables"]:
        rows = []
        for index, origin in enumerate(paper["origins"]):
            cells = []
            for metric in PAPER_METRICS:
                cells += [_rate("rate", c["value"]) for c in table["metrics"][metric][index]["cells"]]
            rows.append({"label": origin, "cells": cells})
        out.append({
            "name": f"paper-{table['name']}",
            "title": f"{table['aggregation'].capitalize()} precision, recall and F1 {by}; "
                     f"candidates: {table['candidates']} ({table['programs']} program{'s' if table['programs'] != 1 else ''})",
            "note": f"{table['aggregation_label']}. {scope}."
                    + (" average = plain mean of the level columns." if "average" in columns else ""),
            "stub": "suite origin",
            "groups": [[METRIC_TITLES[m], len(columns)] for m in PAPER_METRICS],
            "columns": list(columns) * len(PAPER_METRICS),
            "rows": rows,
        })
    selection = report.get("tau_selection") or {}
    if selection:
        origins = list(selection)
        taus = [row["tau"] for row in next(iter(selection.values()))]
        out.append({
            "name": "tau-selection",
            "title": "Training data selection: candidates kept as positives (pass fraction >= tau) and how many "
                     "are correct",
            "note": "precision = correct / kept (the precision of the selected set); pooled over problems.",
            "stub": "tau",
            "groups": [[origin, 3] for origin in origins],
            "columns": list(RATE_COLUMNS_TAU) * len(origins),
            "rows": [
                {"label": tau, "cells": [
                    _rate("rate" if column == "precision" else "count", selection[origin][i][column])
                    for origin in origins for column in RATE_COLUMNS_TAU
                ]}
                for i, tau in enumerate(taus)
            ],
        })
    near = (report.get("near_duplicates") or {}).get("per_problem") or {}
    if near:
        pooled = report["near_duplicates"]["by_origin"]
        out.append({
            "name": "near-duplicates",
            "title": "Near-duplicate inputs: share of a suite's inputs, per problem",
            "note": f"rule: {report['near_duplicates']['rule']}; pooled = all inputs of the origin together.",
            "stub": "suite origin",
            "groups": [],
            "columns": ["problems", "mean share", "max share", "max at", "pooled share"],
            "rows": [
                {"label": origin, "cells": [
                    _rate("count", n["problems"]), _rate("rate", n["mean_share"]), _rate("rate", n["max_share"]),
                    _rate("text", n["max_pid"]), _rate("rate", pooled.get(origin, {}).get("share")),
                ]}
                for origin, n in near.items()
            ],
        })
    return out


def plain_table(report: dict[str, Any], name: str) -> dict[str, Any] | None:
    return next((t for t in paper_plain_tables(report) if t["name"] == name), None)


def _text_cell(cell: dict[str, Any], undefined: str) -> str:
    value = cell["value"]
    if value is None or value == "":
        return undefined
    if cell["kind"] == "rate":
        return f"{100 * value:.2f}"
    return str(value)


def _header_names(table: dict[str, Any]) -> list[str]:
    """Column names made unique with their group (precision/easy, ...)."""
    names = []
    groups = [g for g, span in table["groups"] for _ in range(span)]
    for i, column in enumerate(table["columns"]):
        names.append(f"{groups[i]}/{column}" if groups else column)
    return names


def table_csv(table: dict[str, Any]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([table["stub"], *_header_names(table)])
    for row in table["rows"]:
        writer.writerow([row["label"], *("" if c["value"] is None else c["value"] for c in row["cells"])])
    return out.getvalue()


def tables_csv(tables: list[dict[str, Any]]) -> str:
    """Every table in one CSV: a `table` column first, then the stub and its own columns."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    for table in tables:
        writer.writerow(["table", table["stub"], *_header_names(table)])
        for row in table["rows"]:
            writer.writerow([table["name"], row["label"],
                             *("" if c["value"] is None else c["value"] for c in row["cells"])])
    return out.getvalue()


_LATEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                  "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


def latex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in str(text))


def table_latex(table: dict[str, Any]) -> str:
    """A booktabs tabular (needs \\usepackage{booktabs}) with the title as a comment."""
    n = len(table["columns"])
    lines = [f"% {latex_escape(table['title'])}", f"% {latex_escape(table['note'])}",
             r"\begin{tabular}{l" + "r" * n + "}", r"\toprule"]
    if table["groups"]:
        heads, rules, at = [""], [], 2
        for label, span in table["groups"]:
            heads.append(rf"\multicolumn{{{span}}}{{c}}{{{latex_escape(label)}}}")
            rules.append(rf"\cmidrule(lr){{{at}-{at + span - 1}}}")
            at += span
        lines += [" & ".join(heads) + r" \\", " ".join(rules)]
    lines.append(" & ".join([latex_escape(table["stub"]), *(latex_escape(c) for c in table["columns"])]) + r" \\")
    lines.append(r"\midrule")
    for row in table["rows"]:
        cells = [latex_escape(_text_cell(c, "--")) for c in row["cells"]]
        lines.append(" & ".join([latex_escape(row["label"]), *cells]) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", ""]
    return "\n".join(lines)


def tables_latex(tables: list[dict[str, Any]]) -> str:
    return "\n".join(table_latex(t) for t in tables)


def table_text(table: dict[str, Any]) -> str:
    """Fixed-width text for a terminal, group labels above their columns."""
    header = [table["stub"], *table["columns"]]
    body = [[row["label"], *(_text_cell(c, "undefined") for c in row["cells"])] for row in table["rows"]]
    widths = [max(len(r[i]) for r in [header, *body]) for i in range(len(header))]
    at = 1
    for label, span in table["groups"]:
        # A group label wider than its columns widens the group's last column.
        short = len(label) - (sum(widths[at:at + span]) + 2 * (span - 1))
        if short > 0:
            widths[at + span - 1] += short
        at += span
    lines = [table["title"], f"  ({table['note']})"]
    if table["groups"]:
        parts, at = [" " * widths[0]], 1
        for label, span in table["groups"]:
            width = sum(widths[at:at + span]) + 2 * (span - 1)
            parts.append(label.center(width, "-"))
            at += span
        lines.append("  ".join(parts))
    for r in [header, *body]:
        lines.append("  ".join([r[0].ljust(widths[0]), *(c.rjust(w) for c, w in zip(r[1:], widths[1:], strict=True))]))
    return "\n".join(lines) + "\n"
