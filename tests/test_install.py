"""The light install: the repo's wheel, installed with only the core's dependencies into a fresh
venv outside the repo (torch & co. absent), builds a world, exports it and plays it; a command
that needs the `train` extra says so in one line (exit 2).

Nothing is downloaded: the fresh venv sees exactly the core's requirement closure, linked from
this venv's site-packages (a folder of symlinks and a .pth)."""

from __future__ import annotations

import importlib.metadata as metadata
import json
import os
import shutil
import subprocess
import sys
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from webworld import errors
from webworld.errors import MissingExtraError, missing_extra

REPO = Path(__file__).resolve().parents[1]
TRAIN_STACK = ("torch", "transformers", "trl", "tensorboard", "matplotlib")
EXTRA_LINE = ("error: training (and hf: policies) needs the `train` extra (torch is not "
              "installed): pip install 'webworld[train]'")
# modules that may fail to import on the core: training itself, the frameworks' envs, and
# BrowserGym (installed apart by scripts/setup.sh, --no-deps)
NEEDS_AN_EXTRA = {"webworld.train.": TRAIN_STACK, "webworld.rl.browsergym": ("browsergym",),
                  "webworld.interop.openenv": ("openenv",),
                  "webworld.interop.verifiers": ("verifiers",)}
HANG_GUARD_S = 300


def build_wheel(out: Path) -> Path:
    """The wheel of the repo's package, built from a copy (the build leaves nothing in the repo)."""
    src = out / "src"
    src.mkdir(parents=True)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, src / name)
    shutil.copytree(REPO / "webworld", src / "webworld",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                    "--disable-pip-version-check", "-w", str(out), str(src)],
                   check=True, timeout=HANG_GUARD_S)
    return next(out.glob("webworld-*.whl"))


def wheel_requirements(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as whl:
        name = next(n for n in whl.namelist() if n.endswith(".dist-info/METADATA"))
        return Parser().parsestr(whl.read(name).decode()).get_all("Requires-Dist") or []


def needed(requires: list[str], extras: set[str]) -> list[Requirement]:
    """The requirements that hold with just these extras (none for the core)."""
    reqs = [Requirement(r) for r in requires]
    return [r for r in reqs if r.marker is None
            or any(r.marker.evaluate({"extra": extra}) for extra in extras | {""})]


def core_closure(wheel: Path) -> dict[str, metadata.Distribution]:
    """The installed distributions the wheel's core needs, recursively, without any extra."""
    found: dict[str, metadata.Distribution] = {}
    todo = needed(wheel_requirements(wheel), set())
    while todo:
        req = todo.pop()
        key = canonicalize_name(req.name)
        if key in found:
            continue
        dist = metadata.distribution(req.name)  # not installed here: the dev venv lacks a core dep
        found[key] = dist
        todo += needed(dist.requires or [], set(req.extras))
    return found


def expose(dists: dict[str, metadata.Distribution], folder: Path) -> None:
    """Link each distribution's top-level packages, modules and dist-info into ``folder``."""
    folder.mkdir()
    for name, dist in dists.items():
        assert dist.files is not None, f"{name} has no RECORD: cannot tell its files"
        tops = {f.parts[0] for f in dist.files if f.parts[0] not in ("..", "__pycache__")}
        for top in sorted(t for t in tops if not t.endswith(".pth")):
            link = folder / top
            if not link.exists():  # a namespace folder two distributions share: linked once
                link.symlink_to(Path(str(dist.locate_file(top))))


def make_core_venv(root: Path, wheel: Path) -> Path:
    """A fresh venv in ``root`` with the wheel and the core's closure only; its bin folder."""
    expose(core_closure(wheel), root / "core-site")
    venv = root / "venv"
    subprocess.run([sys._base_executable, "-m", "venv", "--without-pip", str(venv)],
                   check=True, timeout=HANG_GUARD_S)
    python = venv / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             check=True, capture_output=True, text=True).stdout.strip()
    Path(purelib, "webworld-core.pth").write_text(f"{root / 'core-site'}\n")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q",
                    "--disable-pip-version-check", "--no-deps", "--no-index", str(wheel)],
                   check=True, timeout=HANG_GUARD_S)
    return venv / "bin"


def run_in(bin_dir: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """A program of the fresh venv, run in ``cwd``, seeing nothing of the repo or this venv."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP")}
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    return subprocess.run([str(bin_dir / args[0]), *args[1:]], cwd=cwd, env=env, text=True,
                          capture_output=True, timeout=HANG_GUARD_S)


def ok(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 0, f"{proc.args} exit {proc.returncode}:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def test_a_missing_module_of_an_extra_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    absent = "webworld_test_absent_module"
    monkeypatch.setitem(errors.EXTRA_MODULES, absent, "train")
    found = missing_extra(ModuleNotFoundError(f"No module named '{absent}'", name=f"{absent}.sub"))
    assert isinstance(found, MissingExtraError) and found.exit_code == 2
    assert str(found) == EXTRA_LINE.removeprefix("error: ").replace("torch", absent)
    # an installed module failing inside (a broken install), or one no extra brings: no extra
    assert missing_extra(ModuleNotFoundError("No module named 'pydantic.x'", name="pydantic.x")) is None
    monkeypatch.setitem(errors.EXTRA_MODULES, "pydantic", "train")
    assert missing_extra(ModuleNotFoundError("No module named 'pydantic'", name="pydantic")) is None


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_wheel(tmp_path_factory.mktemp("wheel"))


@pytest.fixture(scope="module")
def core_bin(tmp_path_factory: pytest.TempPathFactory, wheel: Path) -> Path:
    root = tmp_path_factory.mktemp("core-install")
    assert not root.resolve().is_relative_to(REPO)
    return make_core_venv(root, wheel)


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An empty folder outside the repo, the commands' working directory."""
    return tmp_path_factory.mktemp("core-work")


def test_wheel_ships_every_data_file(wheel: Path) -> None:
    """What the package reads at run time beside its code (templates, JSON, static files)."""
    data = {p.relative_to(REPO).as_posix() for p in (REPO / "webworld").rglob("*")
            if p.is_file() and p.suffix not in (".py", ".pyc") and "__pycache__" not in p.parts}
    assert data, "the package has no data files: the check below would pass on nothing"
    with zipfile.ZipFile(wheel) as whl:
        assert data - set(whl.namelist()) == set()


SCAN = """
import importlib, json, pkgutil, webworld
failed = {}
for mod in pkgutil.walk_packages(webworld.__path__, "webworld."):
    if mod.name.endswith("__main__"):
        continue
    try:
        importlib.import_module(mod.name)
    except ImportError as exc:
        failed[mod.name] = exc.name
print(json.dumps({"file": webworld.__file__, "failed": failed}))
"""


def test_core_install_has_no_training_stack(core_bin: Path, work: Path) -> None:
    probe = "import importlib.util as u, sys; print([m for m in sys.argv[1:] if u.find_spec(m)])"
    assert ok(run_in(core_bin, work, "python", "-c", probe, *TRAIN_STACK)).strip() == "[]"
    scan = json.loads(ok(run_in(core_bin, work, "python", "-c", SCAN)))
    assert Path(scan["file"]).is_relative_to(core_bin.parent), scan["file"]  # the wheel, not the repo
    for module, missing in scan["failed"].items():
        allowed = [stack for prefix, stack in NEEDS_AN_EXTRA.items() if module.startswith(prefix)]
        assert allowed and missing.partition(".")[0] in allowed[0], \
            f"{module} needs {missing}, which the core install does not have"
    # the training stack is reached for, so the check above saw it missing
    assert any(m.startswith("webworld.train.") for m in scan["failed"]), scan


def test_build_export_and_play_on_the_core(core_bin: Path, work: Path) -> None:
    ok(run_in(core_bin, work, "webworld", "build", "--theme", "online bookstore", "--profile",
              "easy", "--max-instances", "1", "--max-shortest", "1", "--max-longer", "0",
              "--workers", "2"))
    [spec] = (work / "fsm_specs").glob("*.json")
    world = spec.stem
    verified = (work / "trajectories" / world / "verified.jsonl").read_text().splitlines()
    assert verified, "build verified no trajectory"
    manifest = json.loads((work / "datasets/webworld/manifest.json").read_text())
    assert manifest["worlds"].keys() == {world}
    assert sum(s["trajectories"] for s in manifest["splits"].values()) == len(verified)

    ok(run_in(core_bin, work, "webworld", "export", "trajectories", "--out", "datasets/compact",
              "--format", "sft", "--observation", "compact"))
    compact = json.loads((work / "datasets/compact/manifest.json").read_text())
    assert compact["observation"] == "compact"
    rows = (work / "datasets/compact/sft/train.jsonl").read_text().splitlines()
    assert len(rows) == compact["splits"]["train"]["steps"] > 0

    played = ok(run_in(core_bin, work, "webworld", "env", "play", world, "--policy", "oracle"))
    assert "episode over: return 1," in played and played.rstrip().endswith("success"), played

    # what needs torch says which extra brings it, in one line, exit 2
    for command in (["train", "sft", "--data", "datasets/webworld", "--model", "tiny", "--out", "runs/sft"],
                    ["train", "rl", "--model", "tiny", "--worlds", ".", "--out", "runs/rl"],
                    ["eval", "--policy", "hf:tiny", "--suite", ".", "--out", "results.jsonl"]):
        proc = run_in(core_bin, work, "webworld", *command)
        assert (proc.returncode, proc.stderr.strip()) == (2, EXTRA_LINE), (command, proc.stderr)
