"""The CLI end to end, with good and bad input (in-process, plus one real subprocess)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.conftest import make_small_world
from webworld.cli.main import app
from webworld.spec.io import spec_to_json

runner = CliRunner()


def run(*args: str):
    return runner.invoke(app, list(args), catch_exceptions=False)


@pytest.fixture
def in_tmp(tmp_path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_generate_validate_explore(in_tmp: Path) -> None:
    result = run("generate", "--theme", "online bookstore", "--profile", "medium", "--seed", "1")
    assert result.exit_code == 0, result.output
    spec_path = in_tmp / "fsm_specs" / "online_bookstore_medium_s1.json"
    assert spec_path.is_file() and "wrote" in result.output

    result = run("validate", str(spec_path))
    assert result.exit_code == 0 and "valid" in result.output

    result = run("validate", str(spec_path), "--json")
    assert result.exit_code == 0
    assert json.loads(result.output)["valid"] is True

    result = run("explore", str(spec_path), "--max-shortest", "2", "--max-instances", "3")
    assert result.exit_code == 0, result.output
    lines = (in_tmp / "trajectories" / "online_bookstore_medium_s1" / "candidates.jsonl"
             ).read_text().splitlines()
    tasks = {json.loads(line)["task_id"] for line in lines}
    assert tasks == {t["id"] for t in json.loads(spec_path.read_text())["tasks"]}
    assert "cut:" in result.output  # the small caps cut something and say so


def test_invalid_spec_exits_1_with_findings(in_tmp: Path) -> None:
    data = json.loads(spec_to_json(make_small_world()))
    data["pages"][1]["actions"][0]["navigate"] = "nowhere"
    path = in_tmp / "broken.json"
    path.write_text(json.dumps(data))
    result = run("validate", str(path), "--json")
    assert result.exit_code == 1
    report = json.loads(result.output)
    assert report["valid"] is False
    assert any(f["code"] == "dangling-reference"
               and f["path"] == "$.pages[1].actions[0].navigate" for f in report["findings"])


@pytest.mark.parametrize("content, expected", [
    ('{"id": "x",\n "pages": [}', "malformed JSON at line 2, column 12"),
    ('{"id": "x", "name": "x", "theme": "x", "home": "h", "pages": [{"id": "h"}]}',
     "$.pages[0].title: Field required"),
])
@pytest.mark.parametrize("command", ["validate", "explore", "improve"])
def test_unusable_input_exits_2_with_one_clear_message(in_tmp: Path, command: str, content: str,
                                                       expected: str) -> None:
    path = in_tmp / "bad.json"
    path.write_text(content)
    result = run(command, str(path))
    assert result.exit_code == 2
    assert expected in result.output and "Traceback" not in result.output
    assert not (in_tmp / "trajectories").exists()


def test_usage_errors(in_tmp: Path) -> None:
    result = run("generate", "--theme", "shop", "--profile", "extreme")
    assert result.exit_code == 2 and "extreme" in result.output
    result = run("validate", "missing.json")
    assert result.exit_code == 2 and "missing.json: no such file" in result.output
    result = run("generate", "--theme", "  ")
    assert result.exit_code == 2 and "theme must not be empty" in result.output


def test_improve_repairs_a_spec_in_place(in_tmp: Path) -> None:
    data = json.loads(spec_to_json(make_small_world()))
    data["pages"][2]["actions"] = [a for a in data["pages"][2]["actions"] if not a.get("is_back")]
    path = in_tmp / "w.json"
    path.write_text(json.dumps(data))
    assert run("validate", str(path)).exit_code == 1
    result = run("improve", str(path))
    assert result.exit_code == 0, result.output
    assert run("validate", str(path)).exit_code == 0


def test_schema_command(in_tmp: Path) -> None:
    result = run("spec", "schema")
    assert result.exit_code == 0
    assert json.loads(result.output)["title"] == "WorldSpec"
    assert run("spec", "schema", "--out", "s.json").exit_code == 0
    assert json.loads((in_tmp / "s.json").read_text())["title"] == "WorldSpec"


def test_build_goes_from_theme_to_verified_dataset(in_tmp: Path) -> None:
    result = run("build", "--theme", "hotel", "--profile", "easy", "--max-shortest", "1",
                 "--max-instances", "1", "--max-longer", "0", "--workers", "2",
                 "--specs-out", "A", "--sites-out", "B", "--out", "C", "--dataset-out", "D")
    assert result.exit_code == 0, result.output
    assert re.search(r"verified (\d+) of \1 candidates \(100.0%\)", result.output)
    world = next((in_tmp / "C").iterdir())
    assert (world / "verified.jsonl").read_text().count("\n") >= 3
    assert (in_tmp / "D" / "README.md").is_file()
    assert (in_tmp / "B" / world.name / "manifest.json").is_file()
    assert (in_tmp / "A" / f"{world.name}.json").is_file()
    # the summary names the folders it wrote, not the defaults
    summary = " ".join(result.output.split())
    assert "Specs: A/ sites: B/ data: C/<world>/ dataset: D/" in summary
    assert "fsm_specs" not in summary and not (in_tmp / "trajectories").exists()
    # verified without screenshots, then exported: a text-only dataset that says so
    (in_tmp / "E" / world.name).mkdir(parents=True)
    shutil.copy(world / "candidates.jsonl", in_tmp / "E" / world.name)
    plain = run("verify", "--sites", "B", "--trajectories", "E", "--no-screenshots")
    assert plain.exit_code == 0, plain.output
    exported = run("export", "E", "--out", "F")
    assert exported.exit_code == 0, exported.output
    assert "**Text-only.**" in (in_tmp / "F" / "README.md").read_text()
    assert not (in_tmp / "F" / "images").exists()


def test_console_script_runs_as_a_real_process(tmp_path: Path) -> None:
    exe = shutil.which("webworld", path=str(Path(sys.executable).parent))
    assert exe, "the webworld console script is installed next to the interpreter"
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    proc = subprocess.run([exe, "validate", str(bad)], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 2
    assert "malformed JSON at line 1, column 2" in proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout


def _described(group, path: tuple[str, ...] = ()) -> list[tuple[str, str]]:
    """(command, the help text the user is shown) for every command and sub-command."""
    found = []
    for name, command in getattr(group, "commands", {}).items():
        found.append((" ".join((*path, name)), command.help or ""))
        found += _described(command, (*path, name))
    return found


def test_every_command_says_what_it_does_in_flowing_paragraphs() -> None:
    """Typer's rich help prints a docstring's line breaks as they are, so the lines wrapped
    for the source would come out ragged in `webworld --help` and on each command's page."""
    import typer

    described = _described(typer.main.get_command(app))
    assert len(described) > 30 and {"build", "train rl", "env parity"} <= dict(described).keys()
    for command, text in described:
        assert text, f"webworld {command} has no help"
        assert all("\n" not in paragraph for paragraph in text.split("\n\n")), command
