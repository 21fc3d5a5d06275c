"""Outside text that webworld draws or reports stays text: hostile page titles and action
labels in a spec's state-machine graph (Graphviz DOT, then SVG in the dashboard), and hostile
strings from a results file in the HTML eval report. (Spec text in the sites' templates, LLM
replies, imported files and the dashboard's own pages are covered in tests/render,
tests/agents, tests/interop and tests/dashboard/test_dashboard_http.py.)"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import make_small_world
from webworld.dashboard.graph import page_graph_dot, render_svg

HOSTILE = ['"]; evil [shape=box]; x [label="', "back\\slash \\N \\l \\G", "<b>html</b>",
           "line\nbreak", "</svg><script>alert(1)</script>"]


@pytest.mark.skipif(shutil.which("dot") is None, reason="needs Graphviz")
def test_hostile_titles_and_labels_are_drawn_as_written() -> None:
    spec = make_small_world()
    pages = [p.model_copy(update={"title": HOSTILE[i % len(HOSTILE)]})
             for i, p in enumerate(spec.pages)]
    for page in pages:
        page.actions[:] = [a.model_copy(update={"label": HOSTILE[j % len(HOSTILE)]})
                           for j, a in enumerate(page.actions)]
    svg = render_svg(page_graph_dot(spec.model_copy(update={"pages": pages})))
    assert svg.count('class="node') == len(pages)  # no node smuggled in
    assert "<script>" not in svg and "<b>" not in svg  # markup stays text
    assert "&quot;]; evil [shape=box]" in svg  # the DOT syntax in a title is shown as text


def test_the_eval_report_shows_hostile_results_as_text(tmp_path: Path) -> None:
    from webworld.eval.report import render_report

    record = {"key": "w/t#0", "suite": "heldout", "policy": "<img src=x onerror=alert(1)>",
              "task": "t<script>", "world": "w", "archetype": "<i>shop</i>", "kind": "new-world",
              "episode": 0, "seed": 0, "intent": "</td><script>alert(1)</script>",
              "success": False, "reward": 0.0, "steps": 1,
              "actions": ["click('<script>')"],
              "errors": [{"step": 1, "code": "syntax", "message": "<script>x</script>"}],
              "failure": "<b>gave_up</b>", "env_error": "", "tokens": {"prompt": 1, "completion": 1},
              "time_s": 0.1}
    html = render_report([record], tmp_path / "results.jsonl", "<script>title</script>")
    assert "<script>" not in html and "<img" not in html and "<b>gave_up" not in html
    assert "&lt;script&gt;" in html
