"""Report JSON -> rows and chart series for the evaluation page (pure; no Django)."""

from __future__ import annotations

from typing import Any

from review.evaluation.export import paper_plain_tables

METRIC_COLUMNS = ("precision", "recall", "f1", "tpr", "tnr")
COUNT_COLUMNS = ("tp", "fp", "tn", "fn", "n")
COST_LABELS = {
    "all_tests": "every test",
    "fail_fast_suite_order": "stop at first failure, suite order",
    "fail_fast_hacking_first": "stop at first failure, hacking first",
}


def fmt(value: float | None, digits: int = 3) -> str:
    return "undefined" if value is None else f"{value:.{digits}f}"


def metric_row(label: str, m: dict[str, Any]) -> dict[str, Any]:
    return {"label": label, "counts": [m[c] for c in COUNT_COLUMNS], "metrics": [fmt(m[c]) for c in METRIC_COLUMNS],
            "undefined": [m[c] is None for c in METRIC_COLUMNS]}


def _display_cell(cell: dict[str, Any]) -> dict[str, Any]:
    value = cell["value"]
    if value is None:
        return {"text": "undefined", "undefined": True}
    return {"text": f"{100 * value:.2f}" if cell["kind"] == "rate" else str(value), "undefined": False}


def paper_page_tables(report: dict[str, Any]) -> list[dict[str, Any]]:
    """The same plain tables the CSV/LaTeX exports carry, with cells as the papers print them."""
    return [
        {**table, "rows": [{"label": row["label"], "cells": [_display_cell(c) for c in row["cells"]]}
                           for row in table["rows"]]}
        for table in paper_plain_tables(report)
    ]


def page_tables(report: dict[str, Any]) -> dict[str, Any]:
    grouped = {
        section: [
            {"origin": origin, "rows": [metric_row(group, m) for group, m in groups.items()]}
            for origin, groups in report.get(section, {}).items()
        ]
        for section in ("by_difficulty", "by_platform", "by_kind", "tau")
    }
    percents = sorted({p["percent"] for pts in report["redundancy"].values() for p in pts}, reverse=True)
    redundancy_rows = []
    for percent in percents:
        cells = []
        for points in report["redundancy"].values():
            point = next((p for p in points if p["percent"] == percent), None)
            cells += [fmt(point and point["precision"]), fmt(point and point["recall"])]
        redundancy_rows.append({"percent": percent, "cells": cells})
    cost_rows = [
        {"origin": origin, "mode": COST_LABELS.get(mode, mode), "n": c["n"], "mean": fmt(c["mean_s"], 4),
         "p95": fmt(c["p95_s"], 4)}
        for origin, modes in report["cost"].items() for mode, c in modes.items()
    ]
    near = report["near_duplicates"]
    near_rows = [
        {"origin": origin, "suites": t["suites"], "inputs": t["inputs"], "near": t["near_duplicate_inputs"],
         "share": fmt(t["share"]), "seconds": f"{t['seconds']:.3f}", "exact": t["exact"]}
        for origin, t in near["by_origin"].items()
    ]
    return {
        "paper": paper_page_tables(report),
        "by_origin": [metric_row(origin, m) for origin, m in report["by_origin"].items()],
        **grouped,
        "redundancy_origins": list(report["redundancy"]),
        "redundancy_rows": redundancy_rows,
        "cost_rows": cost_rows,
        "near_rows": near_rows,
        "near_seconds": f"{near['seconds']:.3f}",
        "near_rule": near["rule"],
        "misclassified": [{**m, "label": m["kind"].replace("_", " ")} for m in report.get("misclassified", [])],
    }


def chart_data(report: dict[str, Any]) -> dict[str, Any]:
    """Series for static/js/evaluation.js; null where a value is undefined."""
    return {
        "difficulty": {
            origin: {"labels": list(groups), "precision": [m["precision"] for m in groups.values()],
                     "recall": [m["recall"] for m in groups.values()]}
            for origin, groups in report["by_difficulty"].items()
        },
        "redundancy": {
            origin: {"labels": [p["percent"] for p in points], "precision": [p["precision"] for p in points],
                     "recall": [p["recall"] for p in points]}
            for origin, points in report["redundancy"].items()
        },
        "tau": {
            origin: {"labels": list(taus), "precision": [m["precision"] for m in taus.values()],
                     "recall": [m["recall"] for m in taus.values()]}
            for origin, taus in report["tau"].items()
        },
    }
