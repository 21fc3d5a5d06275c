"""The GPU kit runs a recipe (scripts/carry_plan.py): the recipe is split between a machine with
Chromium (builds, snapshots, export) and the lent GPU machine, which has none; the device's
half of a tiny recipe runs through on the CPU with the server, the browser, Ray, datasets, TRL
and openai unimportable, as on the device."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.rl.conftest import Built
from webworld.data.export import export_dataset

ROOT = Path(__file__).resolve().parents[2]
# what the device image lacks and the kit does not carry (scripts/gpu_kit.sh)
BLOCKED = ("fastapi", "starlette", "uvicorn", "multipart", "playwright", "ray", "datasets", "trl",
           "openai", "browsergym")
BLOCKER = f"""
import sys
class Blocked:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {BLOCKED!r}:
            raise ImportError("blocked " + name)
sys.meta_path.insert(0, Blocked())
"""


def carry_plan():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("carry_plan", ROOT / "scripts" / "carry_plan.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("carry_plan", module)  # its dataclass looks itself up
    spec.loader.exec_module(module)
    return module


def test_the_trainer_the_fast_env_and_the_recipe_import_without_server_browser_or_ray() -> None:
    probe = BLOCKER + """
import webworld.cli.main, webworld.train.loop, webworld.train.sft, webworld.rl.fast.env
import webworld.eval.runner, webworld.recipe.runner, webworld.recipe.load, webworld.recipe.report
print("imported")
"""
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True)
    assert done.stdout.strip() == "imported", done.stderr[-2000:]


def test_the_device_gets_the_stages_that_need_no_browser() -> None:
    from webworld.recipe.load import load_recipe

    recipe = load_recipe(ROOT / "recipes" / "smollm2.toml")
    bound = carry_plan().browser_bound(recipe, Path("RUN"))
    assert {"rl progress-live s0", "eval train-rl-progress-live-s0", "eval heldout-random",
            "eval heldout-oracle", "eval heldout-zero-shot", "eval miniwob-random",
            "eval miniwob-rl-progress-s1"} <= bound
    assert not {"sft shuffled", "rl success s0", "rl progress s2", "eval train-sft-shuffled",
                "eval heldout-sft-shuffled", "eval heldout-rl-progress-grounded-s1"} & bound


TINY_RECIPE = """
name = "kit"
[[worlds]]
name = "w"
profile = "easy"
themes = ["flight booking"]
[export]
formats = ["sft"]
observation = "compact"
splits = [1.0, 0.0, 0.0]
[sft]
name = "s"
model = "tiny"
max_steps = 2
[[rl]]
name = "r"
split = "all"
steps = 1
tasks_per_step = 1
group_size = 2
max_new_tokens = 16
[[evals]]
name = "fast-rl"
policy = "rl:r"
suite = "worlds"
fast = true
episodes = 1
[[evals]]
name = "live-random"
policy = "random"
suite = "worlds"
"""


@pytest.fixture()
def prepared(flight: Built, tmp_path: Path) -> Path:
    """A run folder as `carry_plan.py prepare` leaves it: built worlds with their snapshots,
    their export, and the stage log saying so."""
    run = tmp_path / "run"
    for part in ("sites", "trajectories"):
        shutil.copytree(flight.root / part, run / "worlds" / part,
                        ignore=shutil.ignore_patterns("*.lock"))
    (run / "worlds" / "sites" / ".snapshots-done").touch()
    export_dataset(run / "worlds" / "trajectories", run / "data", formats={"sft"},
                   splits=(1.0, 0.0, 0.0), observation="compact", progress=False)
    done = {"command": "webworld ...", "wall": 1.0}
    (run / "stages.json").write_text(json.dumps({"build w": done, "snapshots": done,
                                                 "export": done}))
    return run


@pytest.mark.slow  # minutes on 2 cores; the stages split is checked in the default run
@pytest.mark.timeout(1200)  # a hang guard: the flight world may be built first (minutes)
def test_the_devices_half_of_a_recipe_runs_without_a_browser(prepared: Path,
                                                            tmp_path: Path) -> None:
    recipe = tmp_path / "kit.toml"
    recipe.write_text(TINY_RECIPE)
    device = BLOCKER + f"""
import runpy
sys.argv = ["carry_plan.py", "device", {str(recipe)!r}, {str(prepared)!r},
            "--set", "device.device=cpu", "--set", "device.threads=1"]
runpy.run_path("scripts/carry_plan.py", run_name="__main__")
"""
    done = subprocess.run([sys.executable, "-c", device], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    assert "left to a machine with a browser: eval live-random" in done.stdout
    log = json.loads((prepared / "stages.json").read_text())
    assert {"sft s", "rl r s0", "eval fast-rl-s0"} <= set(log)
    assert not any(entry.get("ended") is False for entry in log.values())
    assert "eval live-random" not in log and log["build w"]["wall"] == 1.0  # not run again
    played = (prepared / "eval" / "fast-rl-s0.jsonl").read_text().splitlines()
    assert played and all("success" in json.loads(line) for line in played)
    assert (prepared / "rl-r-s0" / "model" / "config.json").is_file()
