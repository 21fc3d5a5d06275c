"""What the templates show, computed from the records: a trajectory's steps with their
boxes and expected states, an eval's tables and traces, a comparison of runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from webworld.dashboard.reading import NotFound, Unreadable
from webworld.dashboard.runs import EvalRun, RunCatalog, TrainRun, curves
from webworld.dashboard.worlds import WorldCatalog
from webworld.data.png import png_size
from webworld.errors import UsageError
from webworld.eval.report import box_style
from webworld.eval.results import Rate, compare, error_counts, failures, group_of, rates
from webworld.eval.runner import load_traces, traces_dir


def _size(path: Path) -> tuple[int, int] | None:
    try:
        with path.open("rb") as handle:
            return png_size(handle.read(24))
    except OSError:
        return None


def _expected(value: Any) -> dict[str, Any] | None:
    """A candidate step's expected state: {"page": ..., "changes": {...}}, or None."""
    if not isinstance(value, dict):
        return None
    changes = value.get("changes")
    return {"page": value.get("page"), "changes": changes if isinstance(changes, dict) else {}}


def verified_steps(worlds: WorldCatalog, world: str, record: dict[str, Any] | None,
                   candidate: dict[str, Any] | None) -> list[dict[str, Any]]:
    """Each browser step: its screenshot and box, what the agent read and did, and, on the
    last step of each spec action, the state expected after it beside the true page."""
    if record is None:
        return []
    planned = {s.get("index"): s for s in (candidate or {}).get("steps", [])}
    steps = record["steps"]
    last_of = {s.get("fsm_index"): i for i, s in enumerate(steps)}
    out = []
    for i, step in enumerate(steps):
        obs = step.get("observation") if isinstance(step.get("observation"), dict) else {}
        shot = str(obs.get("screenshot") or "")
        try:
            size = _size(worlds.image(world, shot)) if shot else None
        except NotFound:
            size, shot = None, ""
        expected = _expected(planned.get(step.get("fsm_index"), {}).get("expected")) \
            if last_of.get(step.get("fsm_index")) == i else None
        # the server's variables are recorded once, at the end
        final = record.get("final_state") if isinstance(record.get("final_state"), dict) else {}
        true_vars = final.get("vars") if i == len(steps) - 1 else None
        out.append({**step, "url": obs.get("url", ""), "axtree": obs.get("axtree", ""),
                    "src": f"/files/worlds/{world}/{shot}" if shot else "",
                    "box": box_style(step.get("bbox"), size), "expected": expected,
                    "true_vars": true_vars if isinstance(true_vars, dict) else {}})
    return out


def planned_steps(candidate: dict[str, Any] | None,
                  failure: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The candidate's spec actions; the one a failure stopped at is marked."""
    if candidate is None:
        return []
    failed_at = failure.get("fsm_action") if failure else None
    out, marked = [], False
    for step in candidate.get("steps", []):
        failed = not marked and failed_at is not None and step.get("action") == failed_at
        marked = marked or failed
        params = step.get("params")
        out.append({**step, "failed": failed, "expected": _expected(step.get("expected")),
                    "params": params if isinstance(params, dict) else {}})
    return out


def eval_summary(records: list[dict[str, Any]]) -> dict[str, Any]:
    seconds = sum(float(r.get("time_s", 0.0)) for r in records)
    return {
        "overall": Rate("all", len(records), sum(bool(r["success"]) for r in records)),
        "by_suite": rates(records, lambda r: str(r["suite"])),
        "by_group": rates(records, group_of),
        "failures": failures(records).most_common(),
        "errors": error_counts({**r, "errors": r.get("errors") or []} for r in records).most_common(),
        "steps_mean": sum(r.get("steps", 0) for r in records) / max(len(records), 1),
        "policy": records[0].get("policy", "?") if records else "?",
        "episode_seconds": seconds / max(len(records), 1),
    }


def eval_traces(run: EvalRun) -> tuple[list[dict[str, Any]], str]:
    """(traces, problem): the recorded episode traces, screenshots served by /files/eval."""
    folder = traces_dir(run.found.path)
    try:
        traces = load_traces(run.found.path)
    except (ValueError, OSError) as exc:
        return [], f"a trace under {folder.name} is not readable ({exc})"
    for trace in traces:
        for step in trace.get("trace", []):
            image = Path(step.get("image") or "")
            relative = image.relative_to(folder).as_posix() if image.is_relative_to(folder) else ""
            step["src"] = "/files/eval?" + urlencode({"run": run.found.id, "file": relative}) \
                if relative else ""
            step["box_css"] = box_style(step.get("box"), _size(image)) if relative else ""
    return traces, ""


def comparison(runs: RunCatalog, picked: list[str]) -> dict[str, Any]:
    """Two eval results: the difference per group with intervals; training runs: their
    curves overlaid. Anything else: a page that says what to pick."""
    chosen = [_pick(runs, p) for p in picked]
    evals = [c for c in chosen if isinstance(c, EvalRun)]
    trains = [c for c in chosen if isinstance(c, TrainRun)]
    if len(evals) == 2 and not trains:
        try:
            rows = compare(evals[0].records, evals[1].records)
        except UsageError as exc:
            return {"problem": exc.args[0], "evals": evals}
        return {"evals": evals, "rows": rows,
                "summaries": [eval_summary(e.records) for e in evals]}
    if len(trains) >= 2 and not evals:
        return {"trains": trains, "charts": curves(trains)}
    return {"problem": "pick two eval results, or two or more training runs, on the Runs page"}


def _pick(runs: RunCatalog, picked: str) -> EvalRun | TrainRun:
    kind, _, run_id = picked.partition(":")
    if kind == "eval":
        return runs.eval_run(runs.get("eval", run_id))
    if kind == "train":
        return runs.train_run(runs.get("train", run_id))
    raise Unreadable("expected eval:<id> or train:<id>", picked)
