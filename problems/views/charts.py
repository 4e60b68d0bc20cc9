"""Geometry for the small server-side SVG bar charts of the home page.

Server-side SVG needs no script (so nothing to allow in the CSP) and prints every label and
value, so the charts read without hovering and in a screenshot.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Bar:
    label: str
    value: int
    y: int
    width: float
    text_x: float
    css: str = ""


@dataclass
class BarChart:
    bars: list[Bar]
    height: int
    width: int
    label_width: int
    bar_height: int
    plot_width: int
    title: str = ""

    @property
    def label_x(self) -> int:
        return self.label_width - 6

    @property
    def text_y(self) -> int:
        return self.bar_height - 4


def bar_chart(
    items: list[tuple[str, int] | tuple[str, int, str]], *, width: int = 420, label_width: int = 150,
    bar_height: int = 18, gap: int = 6, title: str = "",
) -> BarChart:
    """Horizontal bars scaled to the largest value, leaving room to print the value after each bar."""
    plot_width = width - label_width - 56
    top = max([item[1] for item in items] + [1])
    bars = []
    for i, item in enumerate(items):
        label, value = item[0], item[1]
        css = item[2] if len(item) > 2 else ""
        w = plot_width * value / top
        bars.append(Bar(label=label, value=value, y=i * (bar_height + gap), width=round(w, 1),
                        text_x=round(label_width + w + 6, 1), css=css))
    height = max(1, len(items)) * (bar_height + gap)
    return BarChart(bars=bars, height=height, width=width, label_width=label_width, bar_height=bar_height,
                    plot_width=plot_width, title=title)
