"""`webworld export` through Typer's test runner: defaults, options, summary, errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from tests.data.factory import make_traj_root
from webworld.cli.export_cmd import export_cmd

runner = CliRunner()


def _app() -> typer.Typer:
    # The command on its own app: the export's tests do not depend on other commands'
    # imports; test_registered_in_main checks the real `webworld` app.
    app = typer.Typer(pretty_exceptions_enable=False, add_completion=False)
    app.command("export")(export_cmd)
    app.command("noop")(lambda: None)  # two commands, so "export" stays a sub-command
    return app


def run(*args: str):
    return runner.invoke(_app(), ["export", *args], catch_exceptions=False)


@pytest.fixture
def in_tmp(tmp_path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    make_traj_root(tmp_path / "trajectories")
    return tmp_path


def test_defaults(in_tmp: Path) -> None:
    result = run()
    assert result.exit_code == 0, result.output
    out = in_tmp / "datasets" / "webworld"
    for path in ("README.md", "manifest.json", "parquet/train.parquet", "hf/dataset_dict.json",
                 "sft/test.jsonl", "jsonl/validation.jsonl"):
        assert (out / path).is_file(), path
    assert "webworld export" in result.output and "bookshop_easy_s0" in result.output
    assert "9 trajectories, 41 steps from 3 worlds" in result.output
    assert "skipped a partial last line (verified.jsonl:4)" in result.output
    assert "element_covered 2" in result.output


def test_formats_worlds_seed_and_splits(in_tmp: Path) -> None:
    result = run("trajectories", "--out", "data", "--format", "sft", "-f", "jsonl",
                 "--world", "hotels_easy_s0", "-w", "flights_easy_s0", "--seed", "5",
                 "--splits", "0.5,0.25,0.25")
    assert result.exit_code == 0, result.output
    manifest = json.loads((in_tmp / "data" / "manifest.json").read_text())
    assert manifest["formats"] == ["jsonl", "sft"] and manifest["seed"] == 5
    assert manifest["fractions"] == [0.5, 0.25, 0.25]
    assert sorted(manifest["worlds"]) == ["flights_easy_s0", "hotels_easy_s0"]
    assert not (in_tmp / "data" / "parquet").exists()
    assert "6 trajectories, 26 steps from 2 worlds" in result.output
    assert "validation is empty" in result.output


def test_errors_exit_2_with_file_and_line(in_tmp: Path) -> None:
    result = run("missing_root")
    assert result.exit_code == 2 and "error: missing_root: no such folder" in result.output
    path = in_tmp / "trajectories" / "flights_easy_s0" / "verified.jsonl"
    lines = path.read_text().splitlines()
    path.write_text("\n".join([lines[0], "[1, 2", lines[1]]) + "\n")
    result = run()
    assert result.exit_code == 2
    assert "verified.jsonl:2: not a JSON line" in result.output
    assert "Traceback" not in result.output
    assert not (in_tmp / "datasets" / "webworld").exists()
    result = run("--format", "csv")
    assert result.exit_code == 2 and "csv" in result.output
    result = run("--splits", "0.8,0.2")
    assert result.exit_code == 2 and "--splits takes three numbers" in result.output


def test_registered_in_main() -> None:
    from webworld.cli.main import app

    assert "export" in [c.name for c in app.registered_commands]


def test_the_action_form_of_the_replies(in_tmp: Path) -> None:
    result = run("trajectories", "--out", "ids", "--format", "sft", "--actions", "ids")
    assert result.exit_code == 0, result.output
    manifest = json.loads((in_tmp / "ids" / "manifest.json").read_text())
    assert manifest["actions"] == "ids" and 0 < manifest["named_steps"] < manifest["steps"]
    assert f"{manifest['named_steps']} of 41 steps' elements have a unique role and name; " \
           "the SFT replies act by id" in " ".join(result.output.split())
    bad = run("trajectories", "--out", "x", "--actions", "css")
    assert bad.exit_code == 2 and "unknown action form 'css'" in bad.output
