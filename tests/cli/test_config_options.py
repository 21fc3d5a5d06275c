"""The options of `train sft`, `train rl` and `eval` are their pydantic settings' fields: every
field (nested too) is an option with the field's default, bounds and help; a value out of
bounds is one line naming the flag (exit 2); and a settings object rendered as a command line
(`webworld.settings.command_line`, what recipes record) parses back to itself."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import typer
from pydantic import BaseModel, ValidationError
from rich.markup import escape
from typer.testing import CliRunner

from webworld.cli.config_options import parse
from webworld.cli.main import app
from webworld.data.switches import StudySwitches
from webworld.errors import UsageError
from webworld.eval.runner import EvalSettings
from webworld.settings import Setting, choices, command_line, optional_inner, settings_of
from webworld.train.config import RLConfig
from webworld.train.sft import SFTSettings

runner = CliRunner()

# each command, its settings model, and the flags it needs to get as far as validating them
COMMANDS: dict[str, tuple[list[str], type[BaseModel], list[str]]] = {
    "sft": (["train", "sft"], SFTSettings, ["--data", "d", "--out", "o"]),
    "rl": (["train", "rl"], RLConfig, []),
    "eval": (["eval"], EvalSettings, ["--policy", "random"]),
}
REQUIRED = {"sft": {"data": Path("d"), "out": Path("o")}, "rl": {}, "eval": {"policy": "random"}}


def click_command(path: list[str]) -> Any:
    command: Any = typer.main.get_command(app)
    for name in path:
        command = command.commands[name]
    return command


def options_of(path: list[str]) -> dict[str, Any]:
    return {p.name: p for p in click_command(path).params if p.name}


@pytest.mark.parametrize("name", COMMANDS)
def test_every_field_is_an_option_with_its_default_bounds_and_help(name: str) -> None:
    path, model, _ = COMMANDS[name]
    options = options_of(path)
    settings = settings_of(model)
    assert len(settings) >= 9 and any(len(s.path) > 1 for s in settings) == (name == "rl")
    for setting in settings:
        option = options.get(setting.param)
        assert option is not None, f"{setting.key} has no option"
        assert setting.flag in option.opts + option.secondary_opts
        assert set(setting.flags) <= set(option.opts)
        help_text = " ".join((option.help or "").split())
        shown = escape(setting.info.description or "")  # rich markup: "[llm]" shows as itself
        assert " ".join(shown.split()) in help_text, setting.key
        for _, operator, value in setting.bounds:
            assert f"{operator} {value}" in help_text, setting.key
        if setting.switches:
            continue
        if setting.required:
            assert option.default is None and "required" in help_text
        else:
            assert option.default == setting.default, setting.key
        if choices(setting.annotation):
            shown = optional_inner(option.type_descriptor.annotation)[0]
            assert choices(shown) == choices(setting.annotation), setting.key


def test_the_drifted_and_unreachable_settings_are_options_now() -> None:
    sft, rl = options_of(["train", "sft"]), options_of(["train", "rl"])
    assert {"warmup_ratio", "grad_accum"} <= set(sft)
    assert {"weight_decay", "max_step_kl", "loss__vespo_k_pos"} <= set(rl)
    assert "(>= 8)" in (sft["max_length"].help or "")
    assert "widens the curriculum" in (rl["curriculum_threshold"].help or "")


def out_of_bounds(setting: Setting) -> str | None:
    """A value just past one of the setting's bounds (None: it has none)."""
    inner, _ = optional_inner(setting.annotation)
    for keyword, _, bound in setting.bounds:
        step = 1 if inner is int else 0.5
        return str({"ge": bound - step, "gt": bound, "le": bound + step, "lt": bound}[keyword])
    return None


@pytest.mark.parametrize("name", COMMANDS)
def test_a_value_out_of_bounds_is_one_line_naming_the_flag(name: str) -> None:
    path, model, needed = COMMANDS[name]
    checked = 0
    for setting in settings_of(model):
        bad = out_of_bounds(setting)
        if bad is None:
            continue
        result = runner.invoke(app, [*path, *needed, setting.flag, bad])
        lines = [line for line in result.output.splitlines() if line.strip()]
        assert result.exit_code == 2, (setting.key, result.output)
        assert len(lines) == 1 and lines[0].startswith(f"error: {setting.flag}: "), result.output
        checked += 1
    assert checked >= 4


def another_value(setting: Setting, default: Any) -> Any:
    """A valid value of the setting other than ``default``."""
    inner, _ = optional_inner(setting.annotation)
    if setting.switches:
        return StudySwitches.model_validate({setting.info.json_schema_extra["switches"][-1]: True})
    if inner is bool:
        return not default
    if choices(inner):
        return next(c for c in choices(inner) if c != default)
    bounds = {keyword: value for keyword, _, value in setting.bounds}
    if inner in (int, float):
        low = bounds.get("ge", bounds.get("gt", 0))
        value = (default if isinstance(default, int | float) else low) + 1
        if "le" in bounds or "lt" in bounds:
            value = (low + bounds.get("le", bounds.get("lt"))) / 2
        return inner(value) if inner is int else float(value) + 0.25 * (inner is float)
    if inner is Path:
        return Path("some/where")
    if getattr(inner, "__origin__", None) is list:
        if inner.__args__ == (int,):
            return [1, 2]  # e.g. RL milestones: batches of the run
        return [Path("first"), Path("second")]
    return "some-text"


@pytest.mark.parametrize("name", COMMANDS)
def test_command_line_round_trips_through_the_cli_parser(name: str) -> None:
    path, model, _ = COMMANDS[name]
    base = model.model_validate(REQUIRED[name])
    assert command_line(path, base)[len(path):] == [
        part for key, value in REQUIRED[name].items() for part in (f"--{key}", str(value))]
    for setting in settings_of(model):
        if setting.secret:
            continue
        changed = REQUIRED[name] | nest(setting, another_value(setting, setting.default))
        if setting.key == "curriculum":
            changed["from_goal"] = 1  # a curriculum widens from_goal: it starts at 1
        settings = model.model_validate(changed)
        args = command_line(path, settings)
        assert {setting.flag, "--no-" + setting.flag[2:]} & set(args), (setting.key, args)
        assert parse(app, args, model).settings() == settings, (setting.key, args)


def nest(setting: Setting, value: Any) -> dict[str, Any]:
    data: Any = value
    for name in reversed(setting.path):
        data = {name: data}
    return data


def test_command_line_gives_only_what_differs_and_never_a_secret() -> None:
    settings = EvalSettings(policy="openai:m", llm_api_key="sk-hidden", episodes=4,
                            study=StudySwitches(ground_names=True, break_loops=True))
    args = command_line(["webworld", "eval"], settings)
    assert args == ["webworld", "eval", "--episodes", "4", "--policy", "openai:m",
                    "--study", "ground_names", "--study", "break_loops"]
    rl = RLConfig(steps=3, learning_rate=1e-4)
    assert command_line([], RLConfig(steps=3, learning_rate=1e-4, loss={"epsilon_high": 0.28}),
                        base=rl) == ["--loss-epsilon-high", "0.28"]
    with pytest.raises(ValueError, match="learning_rate"):
        command_line([], RLConfig(), base=rl)  # no flag gives None back


def test_flags_given_are_told_apart_from_defaults_over_a_base() -> None:
    """`train rl --config` puts a TOML file under the flags given, `--resume` a saved run."""
    given = parse(app, ["train", "rl", "--lr", "0.01", "-G", "4", "--loss-vespo-k-pos", "5"],
                  RLConfig)
    assert given.given == {"learning_rate", "group_size", "loss.vespo_k_pos"}
    config = given.settings({"steps": 3, "learning_rate": 1.0, "loss": {"vespo_k_neg": 4.0}})
    assert (config.steps, config.learning_rate, config.group_size) == (3, 0.01, 4)
    assert (config.loss.vespo_k_pos, config.loss.vespo_k_neg) == (5.0, 4.0)
    with pytest.raises(UsageError) as from_file:
        given.settings({"steps": 0}, "run.toml")
    assert str(from_file.value) == "run.toml: steps: Input should be greater than or equal to 1"
    with pytest.raises(UsageError) as from_flag:
        parse(app, ["train", "rl", "-G", "1"], RLConfig).settings({"steps": 3}, "run.toml")
    assert str(from_flag.value) == "--group-size: Input should be greater than or equal to 2"


def test_rl_reads_its_toml_under_the_flags(tmp_path: Path) -> None:
    toml = tmp_path / "run.toml"
    toml.write_text("steps = 0\n[loss]\nepsilon_low = 0.1\n")
    result = runner.invoke(app, ["train", "rl", "--config", str(toml), "--out", str(tmp_path)])
    assert result.exit_code == 2
    assert f"{toml}: steps: Input should be greater than or equal to 1" in result.output
    fixed = runner.invoke(app, ["train", "rl", "--config", str(toml), "--steps", "0",
                                "--out", str(tmp_path)])
    assert "error: --steps: Input should be greater than or equal to 1" in fixed.output


@pytest.mark.parametrize(("args", "message"), [
    (["train", "sft", "--data", "d", "--out", "o", "--study", "nope"],
     "error: --study: unknown switch 'nope'; known: relabel_ids, shuffle_ids"),
    (["train", "sft", "--data", "d", "--out", "o", "--study", "break_loops"],
     "error: --study: break_loops does not apply to train sft (it takes: relabel_ids"),
    (["train", "sft", "--data", "d", "--out", "o", "--study", "relabel-ids", "--study",
      "shuffle_ids"], "relabel_ids and shuffle_ids both renumber ids: choose one"),
    (["eval", "--policy", "random", "--study", "vary_dates"],
     "error: --study: vary_dates does not apply to webworld eval (it takes: ground_names, "
     "break_loops)"),
    (["eval", "turns", "x.jsonl", "--policy", "hf:m", "--study", "skip_detours"],
     "skip_detours does not apply to webworld eval turns"),
    (["eval", "--suite", "miniwob"], "error: --policy is required"),
])
def test_study_switches_are_one_option_checked_per_command(args: list[str], message: str) -> None:
    result = runner.invoke(app, args)
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert message in " ".join(result.output.split()), result.output


def test_study_switches_reach_the_settings() -> None:
    given = parse(app, ["train", "sft", "--data", "d", "--out", "o", "--study", "vary_dates",
                        "--study", "skip-detours"], SFTSettings)
    study = given.settings().study
    assert study.on() == ["vary_dates", "skip_detours"] and study.augments
    assert not SFTSettings(data="d", out="o", study={"skip_detours": True}).study.augments
    with pytest.raises(ValidationError, match="does not apply to train sft"):
        SFTSettings(data="d", out="o", study={"ground_names": True})
