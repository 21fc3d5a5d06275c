"""The eval report: one self-contained HTML file (no script, images inlined) with the
success tables and 95% intervals, a success-by-archetype chart, the failure reasons,
and a few episode traces (each step's screenshot with the acted element outlined)."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

from jinja2 import Environment, select_autoescape

from webworld.data.png import png_size
from webworld.eval.results import Rate, error_counts, failures, group_of, rates
from webworld.eval.runner import load_traces
from webworld.fsio import atomic_write_text

TEMPLATE = Path(__file__).with_name("report.html.j2")


def box_style(box: list[float] | None, size: tuple[int, int] | None) -> str:
    """CSS placing an element's box [x, y, w, h] (CSS px) over its screenshot, in percent;
    empty when there is no box or it lies below the picture (acting scrolls to it)."""
    if not box or not size or not size[0] or not size[1] or box[1] >= size[1]:
        return ""
    (x, y, w, h), (width, height) = box, size
    return (f"left:{100 * x / width:.2f}%;top:{100 * y / height:.2f}%;"
            f"width:{100 * w / width:.2f}%;height:{100 * h / height:.2f}%")


def _trace_view(trace: dict[str, Any]) -> dict[str, Any]:
    steps = []
    for step in trace["trace"]:
        view = {**step, "src": "", "box": ""}
        if step.get("image") and Path(step["image"]).is_file():
            data = Path(step["image"]).read_bytes()
            view["src"] = "data:image/png;base64," + base64.b64encode(data).decode()
            view["box"] = box_style(step.get("box"), png_size(data[:24]))
        steps.append(view)
    return {**trace, "trace": steps}


def render_report(records: list[dict[str, Any]], results: Path, title: str) -> str:
    env = Environment(autoescape=select_autoescape(default=True, default_for_string=True))
    overall = Rate("all", len(records), sum(bool(r["success"]) for r in records))
    miniwob = all(r["suite"].startswith("miniwob") for r in records)
    return env.from_string(TEMPLATE.read_text(encoding="utf-8")).render(
        title=title, episodes=len(records), overall=overall,
        steps_mean=f"{sum(r['steps'] for r in records) / max(len(records), 1):.1f}",
        by_suite=rates(records, lambda r: r["suite"]), by_group=rates(records, group_of),
        group_word="task" if miniwob else "archetype (held-out kind)",
        failure_rows=failures(records).most_common(),
        error_rows=error_counts(records).most_common(),
        traces=[_trace_view(t) for t in load_traces(results)])


def write_report(records: list[dict[str, Any]], results: Path, out: Path) -> Path:
    title = f"{records[0]['policy']} on {records[0]['suite']}" if records else results.name
    return atomic_write_text(out, render_report(records, results, title))
