"""The held-out manifest: canonical, regenerating the same worlds byte for byte, never in a
training split; the oracle scores 100% on held-out worlds in real Chromium."""

from __future__ import annotations

import re
from pathlib import Path

from typer.testing import CliRunner

from tests.eval.conftest import HELDOUT_SAMPLE
from tests.rl.conftest import SHIPPED
from webworld.pipeline import DEFAULT_THEMES
from webworld.cli.main import app
from webworld.data.heldout import MANIFEST, load_manifest, manifest_bytes
from webworld.data.splits import assign_splits
from webworld.eval.heldout import heldout_spec
from webworld.eval.results import read_results
from webworld.render.themes import choose_theme
from webworld.rl.tasks import load_worlds
from webworld.spec.archetypes import match_archetype
from webworld.spec.io import load_spec

runner = CliRunner()


def test_manifest_is_canonical_and_names_what_the_proposer_makes() -> None:
    manifest = load_manifest()
    assert manifest_bytes(manifest) == MANIFEST.read_bytes()
    assert len(set(manifest.ids())) == len(manifest.worlds)
    kinds = {w.kind for w in manifest.worlds}
    assert kinds == {"new-archetype", "new-world", "new-look"}
    for entry in manifest.worlds:
        spec = heldout_spec(entry)  # raises if the proposer names it otherwise
        assert spec.id == entry.id
        archetype = spec.provenance.archetype
        assert (archetype in manifest.held_out_archetypes) == (entry.kind == "new-archetype")
        if entry.kind == "new-look":
            base = manifest.world(entry.base)
            assert entry.look not in (base.look, choose_theme(heldout_spec(base)))
        else:
            assert entry.look == choose_theme(spec)  # rendered as `webworld build` would


def test_held_out_worlds_never_land_in_train(heldout: Path) -> None:
    manifest = load_manifest()
    training = [match_archetype(t).archetype.key for t in DEFAULT_THEMES]
    training += [load_spec(p).provenance.archetype for p in SHIPPED.glob("*.json")]
    assert not set(training) & set(manifest.held_out_archetypes)
    ids = manifest.ids() + [f"world_{i}" for i in range(30)]
    splits, note = assign_splits(ids, seed=3, held_out=manifest.ids())
    assert not set(splits["train"]) & set(manifest.ids())
    assert set(manifest.ids()) <= set(splits["test"]) and "held-out" in note
    worlds = load_worlds(heldout / "sites", heldout / "trajectories")  # splits by default
    assert {w.split for w in worlds.worlds.values()} == {"test"}


def test_materialising_again_gives_the_same_bytes(heldout: Path, tmp_path: Path) -> None:
    world, again = HELDOUT_SAMPLE[0], tmp_path / "again"
    made = runner.invoke(app, ["eval", "heldout", "--world", world, "--out", str(again)])
    assert made.exit_code == 0 and "new-archetype" in made.output, made.output
    files = [p.relative_to(heldout) for p in sorted((heldout / "sites" / world).rglob("*"))
             if p.is_file()]
    files += [Path("specs") / f"{world}.json", Path("trajectories") / world / "candidates.jsonl"]
    assert len(files) > 5
    for rel in files:
        assert (again / rel).read_bytes() == (heldout / rel).read_bytes(), rel
    assert not (tmp_path / ".again.partial").exists()


def test_oracle_scores_100_and_random_what_it_scores(heldout: Path, tmp_path: Path) -> None:
    oracle = runner.invoke(app, ["eval", "--policy", "oracle", "--suite", "heldout",
                                 "--heldout-dir", str(heldout), "-n", "1",
                                 "--out", str(tmp_path / "oracle.jsonl")])
    assert oracle.exit_code == 0, oracle.output
    records = read_results(tmp_path / "oracle.jsonl")
    assert len(records) >= 4 and all(r["success"] and r["reward"] == 1.0 for r in records)
    assert {r["kind"] for r in records} == {"new-archetype", "new-look"}
    assert "100.0%" in oracle.output

    rand = runner.invoke(app, ["eval", "--policy", "random", "--suite", "heldout", "--heldout-dir",
                               str(heldout), "-n", "1", "--max-steps", "5",
                               "--out", str(tmp_path / "random.jsonl"),
                               "--report", str(tmp_path / "random.html"), "--traces", "2"])
    assert rand.exit_code == 0, rand.output
    records = read_results(tmp_path / "random.jsonl")
    rate = 100 * sum(r["success"] for r in records) / len(records)
    html = (tmp_path / "random.html").read_text()
    assert f"success {rate:.1f}%" in html and "Why episodes failed" in html
    assert html.count('<img src="data:image/png;base64,') >= 2
    assert re.search(r'class="box" style="left:[\d.]+%;top:[\d.]+%', html)
    assert "<script" not in html


def test_the_dense_suite_is_the_same_worlds_denser(tmp_path: Path) -> None:
    from webworld.eval.heldout import DENSE_GENERATOR, suite_dir

    for entry in load_manifest().worlds:
        dense = heldout_spec(entry, DENSE_GENERATOR)
        assert dense.id == entry.id and dense.provenance.generator_version == DENSE_GENERATOR
        assert any(e.area for p in dense.pages for e in p.elements)
    assert suite_dir(tmp_path / "h", "heldout-dense") == tmp_path / "h-dense"
    world = HELDOUT_SAMPLE[0]
    made = runner.invoke(app, ["eval", "heldout", "--dense", "--world", world,
                               "--out", str(tmp_path / "h")])
    assert made.exit_code == 0, made.output
    assert "heldout-dense" in made.output and not (tmp_path / "h").exists()
    spec = load_spec(tmp_path / "h-dense" / "specs" / f"{world}.json")
    assert spec.provenance.generator_version == DENSE_GENERATOR
    worlds = load_worlds(tmp_path / "h-dense" / "sites", tmp_path / "h-dense" / "trajectories")
    assert worlds.instances(None)  # verified in Chromium: the oracle has its paths
