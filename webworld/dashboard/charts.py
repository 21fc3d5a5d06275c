"""Chart geometry for server-drawn SVG (no chart library in the page): line charts of a
run's metrics, several runs overlaid for comparisons."""

from __future__ import annotations

import math
from dataclasses import dataclass

WIDTH, HEIGHT = 360, 190
LEFT, RIGHT, TOP, BOTTOM = 44, 10, 10, 26
COLORS = ("#2f6db5", "#d9480f", "#2b8a3e", "#862e9c", "#c2255c", "#5c940d", "#1098ad", "#e67700")


@dataclass
class Line:
    name: str
    color: str
    points: str          # SVG polyline points
    dots: list[tuple[float, float]]


@dataclass
class Chart:
    title: str
    lines: list[Line]
    x_ticks: list[tuple[float, str]]
    y_ticks: list[tuple[float, str]]
    width: int = WIDTH
    height: int = HEIGHT

    @property
    def empty(self) -> bool:
        return not any(line.dots for line in self.lines)


def _nice(value: float) -> str:
    if value == 0:
        return "0"
    if abs(value) >= 1000 or abs(value) < 0.01:
        return f"{value:.2g}"
    return f"{value:.3g}"


def line_chart(title: str, series: dict[str, list[tuple[float, float]]], *,
               unit: bool = False) -> Chart:
    """One panel; each series a line in its own colour; axes span every series (``unit``:
    a share, drawn on the whole 0..1 scale when it stays inside it)."""
    finite = {name: [(x, y) for x, y in pts if math.isfinite(x) and math.isfinite(y)]
              for name, pts in series.items()}
    xs = [x for pts in finite.values() for x, _ in pts]
    ys = [y for pts in finite.values() for _, y in pts]
    if not xs:
        return Chart(title, [Line(n, COLORS[i % len(COLORS)], "", []) for i, n in enumerate(finite)],
                     [], [])
    x0, x1 = min(xs), max(xs)
    y0, y1 = min(ys), max(ys)
    if unit and 0 <= y0 and y1 <= 1:
        y0, y1 = 0.0, 1.0
    if y1 - y0 < 1e-12:
        y0, y1 = y0 - 0.5, y1 + 0.5
    if x1 - x0 < 1e-12:
        x0, x1 = x0 - 1, x1 + 1

    def sx(x: float) -> float:
        return LEFT + (x - x0) / (x1 - x0) * (WIDTH - LEFT - RIGHT)

    def sy(y: float) -> float:
        return HEIGHT - BOTTOM - (y - y0) / (y1 - y0) * (HEIGHT - TOP - BOTTOM)

    lines = []
    for i, (name, pts) in enumerate(finite.items()):
        dots = [(round(sx(x), 1), round(sy(y), 1)) for x, y in sorted(pts)]
        lines.append(Line(name, COLORS[i % len(COLORS)], " ".join(f"{a},{b}" for a, b in dots), dots))
    x_ticks = [(round(sx(v), 1), _nice(v)) for v in (x0, (x0 + x1) / 2, x1)]
    y_ticks = [(round(sy(v), 1), _nice(v)) for v in (y0, (y0 + y1) / 2, y1)]
    return Chart(title, lines, x_ticks, y_ticks)
