"""The dashboard over HTTP on 127.0.0.1: bad input gets a clear page or a 404, never a 500,
a traceback or a file from outside the served folders; files being written are read as
they are, never changed; big galleries come in pages."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from tests.dashboard.conftest import BUILT, Workspace, serve
from webworld.cli.main import app
from webworld.dashboard.app import CARDS_PER_PAGE

SECRET = "top-secret-outside-the-served-folders"


@pytest.fixture
def client(copy_of: Workspace) -> Iterator[tuple[httpx.Client, Workspace]]:
    (copy_of.root.parent / "secret.png").write_text(SECRET)
    (copy_of.root.parent / "secret.jsonl").write_text(SECRET)
    server = serve(copy_of.folders)
    with httpx.Client(base_url=server.url, timeout=30) as http:
        yield http, copy_of
    server.stop()


def clear_page(response: httpx.Response, status: int, *words: str) -> str:
    text = response.text
    assert response.status_code == status, (response.request.url, response.status_code, text[:300])
    assert "Traceback" not in text and SECRET not in text
    for word in words:
        assert word in text, (word, text[:500])
    return text


TRAVERSALS = [
    "/files/worlds/{w}/../../../secret.png",
    "/files/worlds/{w}/%2e%2e/%2e%2e/%2e%2e/secret.png",
    "/files/worlds/{w}/..%2f..%2f..%2fsecret.png",
    "/files/worlds/{w}//etc/passwd",
    "/files/worlds/{w}/candidates.jsonl",          # inside, but not a screenshot
    "/files/worlds/..%2f..%2f/secret.png",
    "/files/eval?run=oracle.jsonl&file=../../secret.png",
    "/files/eval?run=../secret.jsonl&file=x.png",
    "/runs/eval/../secret.jsonl",
    "/runs/eval/%2e%2e/secret.jsonl",
    "/runs/train/..%2f..",
    "/datasets/..%2f..%2f..",
    "/worlds/..%2f..%2fsecret",
    "/worlds/{w}/t/..%2f..%2fsecret",
]


@pytest.mark.parametrize("path", TRAVERSALS)
def test_paths_outside_the_served_folders_are_404(client, path: str) -> None:
    http, _ = client
    response = http.get(path.format(w=BUILT))
    assert response.status_code == 404, (path, response.status_code)
    assert SECRET not in response.text and "Traceback" not in response.text


def test_unknown_names_and_bad_queries(client) -> None:
    http, _ = client
    clear_page(http.get("/worlds/no_such_world"), 404, "Not found", "no_such_world")
    clear_page(http.get(f"/worlds/{BUILT}/t/no-such-trajectory"), 404, "no-such-trajectory")
    clear_page(http.get("/runs/eval/missing.jsonl"), 404, "missing.jsonl")
    clear_page(http.get("/runs/train/nothing"), 404)
    clear_page(http.get("/datasets/nothing"), 404)
    clear_page(http.get("/nowhere"), 404)
    clear_page(http.get("/worlds?page=abc"), 400, "malformed request: query.page", "valid integer")
    clear_page(http.get("/worlds?page=0"), 400)
    clear_page(http.get("/runs/compare?run=eval:oracle.jsonl"), 200, "pick two eval results")
    clear_page(http.get("/runs/compare?run=bogus"), 422, "expected eval:")
    clear_page(http.get("/runs/compare?run=eval:nothing.jsonl&run=eval:oracle.jsonl"), 404)
    assert http.get("/api/stamp", params={"view": "world", "id": "nope"}).status_code == 404


def test_half_written_and_broken_results_files(client) -> None:
    http, ws = client
    results = ws.root / "runs" / "random.jsonl"
    lines = results.read_text().splitlines()
    results.write_text(lines[0] + "\n" + lines[1][: len(lines[1]) // 2])   # killed mid-write
    before = results.read_bytes()
    page = clear_page(http.get("/runs/eval/random.jsonl"), 200, "1 episodes", "last line is incomplete")
    assert results.read_bytes() == before, "the dashboard must never change a file it reads"
    results.write_text(lines[0] + "\n{not json\n" + "\n".join(lines[1:]) + "\n")
    page = clear_page(http.get("/runs/eval/random.jsonl"), 200, "not JSON objects", "line 2")
    assert f"{len(lines)} episodes" in page
    (ws.root / "runs" / "oracle.jsonl").write_text("")  # emptied: no longer an eval result
    clear_page(http.get("/runs/eval/oracle.jsonl"), 404)
    clear_page(http.get("/runs"), 200, "Eval results (1)")
    metrics = ws.root / "runs" / "gspo-demo" / "metrics.jsonl"
    metrics.write_text(metrics.read_text() + '{"step": 6, "succ')
    clear_page(http.get("/runs/train/gspo-demo"), 200, "last line is incomplete", "Learning curves")


def test_a_training_run_shows_its_curves_and_a_flat_table(client) -> None:
    http, _ = client
    page = clear_page(http.get("/runs/train/gspo-demo"), 200, "Learning curves",
                      "KL(before || after) of an optimiser step")
    assert "updates" not in page  # the per-optimiser-step list is for TensorBoard, not a cell


def test_broken_spec_and_missing_parts(client) -> None:
    http, ws = client
    spec = ws.root / "fsm_specs" / f"{BUILT}.json"
    spec.write_text(spec.read_text()[:500])
    clear_page(http.get("/worlds"), 200, f"{BUILT}.json: not readable JSON")
    clear_page(http.get(f"/worlds/{BUILT}"), 422, "Cannot read this file", "malformed JSON at line")
    spec.unlink()  # then the site's own copy of the spec is used
    clear_page(http.get(f"/worlds/{BUILT}"), 200, "State machine")
    shutil.rmtree(ws.root / "sites")
    (ws.root / "trajectories" / BUILT / "verified.jsonl").unlink()
    clear_page(http.get(f"/worlds/{BUILT}"), 200, "no spec for this world", "Verified trajectories (0)")
    shutil.rmtree(ws.root / "runs")
    clear_page(http.get("/runs"), 200, "No training runs")


def test_gallery_comes_in_pages(client) -> None:
    http, ws = client
    spec = (ws.root / "fsm_specs" / f"{BUILT}.json").read_text()
    for i in range(30):
        (ws.root / "fsm_specs" / f"copy_{i:02d}.json").write_text(spec)
    total = 30 + len({BUILT, *[p.stem for p in (ws.root / "fsm_specs").glob("*.json")]} - {
        f"copy_{i:02d}" for i in range(30)})
    first = clear_page(http.get("/worlds"), 200, f"page 1 of 2 ({total} in all)")
    assert first.count('class="card"') == CARDS_PER_PAGE
    second = clear_page(http.get("/worlds", params={"page": 2}), 200)
    assert second.count('class="card"') == total - CARDS_PER_PAGE
    found = clear_page(http.get("/worlds", params={"q": "copy_1"}), 200)
    assert found.count('class="card"') == 10
    clear_page(http.get("/worlds", params={"page": 99}), 200, "page 2 of 2")


def test_security_headers_and_stamps(client) -> None:
    http, ws = client
    response = http.get("/worlds")
    assert "script-src 'self'" in response.headers["content-security-policy"]
    assert response.headers["x-content-type-options"] == "nosniff"
    stamp = http.get("/api/stamp", params={"view": "eval", "id": "random.jsonl"}).json()["stamp"]
    results = ws.root / "runs" / "random.jsonl"
    results.write_text(results.read_text() + json.dumps({"key": "x", "success": True,
                                                         "suite": "s"}) + "\n")
    assert http.get("/api/stamp", params={"view": "eval", "id": "random.jsonl"}).json()["stamp"] != stamp


def test_cli_refuses_a_missing_folder(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["dashboard", str(tmp_path / "nowhere")])
    assert result.exit_code == 2
    assert "no such folder" in result.output and "Traceback" not in result.output


ODD = ['[]', '"text"', '{"id": 5}', '{"id": "x", "steps": "many"}', '{"id": "y", "steps": [1, 2]}',
       '{"key": "k", "success": "yes", "suite": 3}', '{"step": "one", "loss": "nan"}', 'null']


def test_records_of_odd_shapes_never_give_a_500(client) -> None:
    """Every file the dashboard reads gets lines of other shapes; every view still answers
    with a page that says what was left out."""
    http, ws = client
    world = ws.root / "trajectories" / BUILT
    for path in (world / "verified.jsonl", world / "failures.jsonl", world / "candidates.jsonl",
                 ws.root / "runs" / "oracle.jsonl", ws.root / "runs" / "gspo-demo" / "metrics.jsonl"):
        kept = path.read_text().splitlines()[:1]
        path.write_text("\n".join(kept + ODD + ['{"trajectory": true}']) + "\n")
    (ws.root / "datasets" / "webworld" / "manifest.json").write_text(json.dumps(
        {"webworld_export": 1, "splits": [1], "worlds": {"a": 3, "b": {"failures": 2}},
         "formats": "jsonl"}))
    (ws.root / "runs" / "gspo-demo" / "config.json").write_text("[1, 2")
    first = json.loads((world / "verified.jsonl").read_text().splitlines()[0])["id"]
    for path in ("/", "/worlds", f"/worlds/{BUILT}", f"/worlds/{BUILT}/t/{first}", "/runs",
                 "/runs/eval/oracle.jsonl", "/runs/train/gspo-demo", "/datasets",
                 "/datasets/webworld", "/runs/compare?run=eval:oracle.jsonl&run=eval:random.jsonl"):
        response = http.get(path)
        assert response.status_code == 200, (path, response.status_code, response.text[:400])
        assert "Traceback" not in response.text
    page = http.get(f"/worlds/{BUILT}").text
    assert "lack the fields this file" in page and "are not JSON objects" in page
    assert "lack the fields" in http.get("/runs/eval/oracle.jsonl").text
