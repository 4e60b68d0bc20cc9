"""Geometry of the curation page's server-side SVG charts (no script, so nothing for the CSP
to allow; every value is printed beside its bar and in the table under it)."""

from __future__ import annotations

from typing import Any

# Okabe-Ito, colour-blind safe; difficulty levels take them in order.
PALETTE = ("#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00", "#f0e442", "#000000")
WIDTH, LABEL_W, BAR_H, GAP = 560, 150, 18, 6


def share_bars(items: list[tuple[str, float | None, str]], title: str) -> dict[str, Any]:
    """Horizontal bars of shares (0-1), each with its printed value (`text`)."""
    plot = WIDTH - LABEL_W - 90
    bars = []
    for i, (label, share, text) in enumerate(items):
        w = round(plot * (share or 0.0), 1)
        bars.append({"label": label, "y": i * (BAR_H + GAP), "width": w, "text": text,
                     "text_x": round(LABEL_W + w + 6, 1)})
    return {"title": title, "width": WIDTH, "height": max(1, len(items)) * (BAR_H + GAP), "bars": bars,
            "label_w": LABEL_W, "label_x": LABEL_W - 6, "bar_h": BAR_H, "text_y": BAR_H - 4}


def stacked_bars(rows: list[tuple[str, list[float | None]]], segments: list[str], title: str) -> dict[str, Any]:
    """One 100% bar per row, split by segment share (Figure 3, right: difficulty mix)."""
    plot = WIDTH - LABEL_W - 20
    out = []
    for i, (label, shares) in enumerate(rows):
        x = float(LABEL_W)
        parts = []
        for k, share in enumerate(shares):
            w = round(plot * (share or 0.0), 1)
            if w > 0:
                parts.append({"x": round(x, 1), "width": w, "fill": PALETTE[k % len(PALETTE)],
                              "title": f"{segments[k]}: {100 * (share or 0):.0f}%"})
            x += w
        out.append({"label": label, "y": i * (BAR_H + GAP), "parts": parts})
    legend = [{"name": name, "fill": PALETTE[k % len(PALETTE)]} for k, name in enumerate(segments)]
    return {"title": title, "width": WIDTH, "height": max(1, len(rows)) * (BAR_H + GAP), "rows": out,
            "legend": legend, "label_x": LABEL_W - 6, "bar_h": BAR_H, "text_y": BAR_H - 4}


def page_charts(analysis: dict[str, Any]) -> dict[str, Any]:
    tables = {t["name"]: t for t in analysis["tables"]}
    tau = [(f"τ ≥ {row[0]:g}", row[2], f"{row[1]} ({100 * (row[2] or 0):.0f}%)") for row in tables["tau"]["rows"]]
    rules = [(row[1][:24], row[4], f"{row[2]} ({100 * (row[4] or 0):.0f}%)") for row in tables["rules"]["rows"]]
    mix = tables["difficulty"]
    levels = [row[0] for row in mix["rows"]]
    # Columns after "difficulty", "all": "all share", then one share column per tau.
    series = [("all data", [row[2] for row in mix["rows"]])]
    for j, name in enumerate(mix["columns"][3:], start=3):
        series.append((name.replace(" share", "").replace("tau", "τ "), [row[j] for row in mix["rows"]]))
    return {
        "tau": share_bars(tau, "Share kept by tau") if tau else None,
        "rules": share_bars(rules, "Share kept by rule") if rules else None,
        "difficulty": stacked_bars(series, levels, "Difficulty mix") if levels else None,
    }
