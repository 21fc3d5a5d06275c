"""The dataset card shows the dataset: its pictures are the export's own screenshots, and an
export of trajectories verified without screenshots is a text-only dataset that says so."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import datasets
import pytest
import yaml
from PIL import Image
from trl.data_utils import is_conversational

from tests.conftest import World
from tests.data.factory import WORLDS, dump, make_traj_root, make_trajectory
from webworld.data.export import CARD_PICTURES, export_dataset, load_sft_dataset, load_steps
from webworld.data.reading import RecordError
from webworld.errors import UsageError
from webworld.verify.replay import ReplayConfig
from webworld.verify.runner import verify_worlds

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# a Markdown image, or an HTML one (a card may use either)
IMAGE_LINK = re.compile(r"!\[[^\]]*\]\(\s*<?([^)\s>]+)|<img\b[^>]*\bsrc=[\"']([^\"']+)")


def linked_images(card: str) -> list[str]:
    return [md or html for md, html in IMAGE_LINK.findall(card)]


def test_every_picture_of_the_card_is_one_of_the_datasets_screenshots(tmp_path: Path) -> None:
    made = make_traj_root(tmp_path / "traj")
    out = tmp_path / "out"
    export_dataset(tmp_path / "traj", out, progress=False)  # the defaults, as `webworld export`
    links = linked_images((out / "README.md").read_text())
    assert len(links) == CARD_PICTURES
    stored = {p.read_bytes() for p in (out / "images").rglob("*.png")}
    assert len(stored) == sum(len(t["steps"]) for ts in made.values() for t in ts)
    worlds = set()
    for link in links:
        picture = (out / link).resolve()
        assert picture.is_relative_to(out.resolve()) and picture.is_file(), link
        assert picture.read_bytes() in stored, f"{link} is not one of the dataset's screenshots"
        worlds.add(Path(link).parts[1])  # images/<world>/<trajectory>/<n>.png
    assert len(worlds) == CARD_PICTURES  # from different worlds: the card shows the variety
    assert not (out / "assets").exists()


# --- text-only: verified with --no-screenshots ------------------------------------------------


@pytest.fixture(scope="module")
def text_only(bookstore: World, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The bookstore's candidates verified in Chromium without screenshots, then exported."""
    root = tmp_path_factory.mktemp("text_only")
    world_dir = root / "traj" / bookstore.spec.id
    world_dir.mkdir(parents=True)
    shutil.copy(bookstore.world_dir / "candidates.jsonl", world_dir)
    [stats] = verify_worlds([bookstore.site_dir], root / "traj", workers=1,
                            config=ReplayConfig(screenshots=False))
    assert stats.verified == len(bookstore.explored.candidates) > 0
    export_dataset(root / "traj", root / "out", splits=(1.0, 0.0, 0.0), progress=False)
    return world_dir, root / "out"


def test_a_world_verified_without_screenshots_names_none(text_only) -> None:
    world_dir, _ = text_only
    steps = [s for line in (world_dir / "verified.jsonl").read_text().splitlines()
             for s in json.loads(line)["steps"]]
    assert steps and all(s["observation"]["screenshot"] is None for s in steps)
    assert not (world_dir / "images").exists()


def test_the_export_is_text_only_in_every_format(text_only, tmp_path: Path) -> None:
    world_dir, out = text_only
    verified = [json.loads(line) for line in (world_dir / "verified.jsonl").read_text().splitlines()]
    n_steps = sum(len(t["steps"]) for t in verified)
    manifest = json.loads((out / "manifest.json").read_text())
    assert (manifest["steps"], manifest["screenshots"]) == (n_steps, 0)
    assert not (out / "images").exists() and "images" not in manifest["paths"]
    for path in out.rglob("*"):
        assert not (path.is_file() and PNG_SIGNATURE in path.read_bytes()), path
    for source in ("parquet", "hf"):
        steps = load_steps(out, "train", source=source, cache_dir=str(tmp_path / source))
        assert steps.num_rows == n_steps
        assert steps["screenshot"] == [None] * n_steps and all(steps["axtree"])
    chats = [json.loads(line) for line in (out / "sft" / "train.jsonl").read_text().splitlines()]
    assert len(chats) == n_steps
    assert all(is_conversational(c) and c["screenshot"] is None for c in chats)
    assert load_sft_dataset(out, "train", cache_dir=str(tmp_path / "sft")).num_rows == n_steps
    with pytest.raises(UsageError, match="text-only export"):
        load_sft_dataset(out, "train", with_images=True, cache_dir=str(tmp_path / "vlm"))
    trajectories = [json.loads(line) for line in (out / "jsonl" / "train.jsonl").read_text().splitlines()]
    assert [t["id"] for t in trajectories] == [t["id"] for t in verified]
    assert all(s["observation"]["screenshot"] is None for t in trajectories for s in t["steps"])
    # the folder loads by its card's configs, as from the Hub
    by_card = datasets.load_dataset(str(out), split="train", cache_dir=str(tmp_path / "card"))
    assert by_card.num_rows == n_steps and set(by_card["screenshot"]) == {None}


def test_the_card_says_text_only_and_shows_no_picture(text_only) -> None:
    _, out = text_only
    _, header, body = (out / "README.md").read_text().split("---\n", 2)
    meta = yaml.safe_load(header)
    assert "text-only" in meta["tags"] and "screenshots" not in meta["tags"]
    assert "image-text-to-text" not in meta["task_categories"]
    assert "**Text-only.**" in body and "--no-screenshots" in body
    assert linked_images(body) == [] and "## Screenshots" not in body
    assert "images/<world>" not in body and "with_images=True" not in body


def test_some_steps_without_screenshots_export_beside_the_others(tmp_path: Path) -> None:
    """One world verified without screenshots, the others with: each keeps what it has."""
    made = make_traj_root(tmp_path / "traj")
    plain = "flights_easy_s0"
    for traj in made[plain]:
        for step in traj["steps"]:
            step["observation"]["screenshot"] = None
    shutil.rmtree(tmp_path / "traj" / plain / "images")
    (tmp_path / "traj" / plain / "verified.jsonl").write_text(dump(made[plain]))
    summary = export_dataset(tmp_path / "traj", tmp_path / "out", progress=False)
    plain_steps = sum(len(t["steps"]) for t in made[plain])
    assert summary.steps - summary.screenshots == plain_steps > 0 and not summary.text_only
    assert any(f"{plain}: {plain_steps} of {plain_steps} steps have no screenshot" in n
               for n in summary.notes)
    rows = [r for split in load_steps(tmp_path / "out", cache_dir=str(tmp_path / "c")).values()
            for r in split]
    for row in rows:
        if row["world_id"] == plain:
            assert row["screenshot"] is None
        else:
            assert isinstance(row["screenshot"], Image.Image)
            assert row["screenshot"].size == WORLDS[row["world_id"]][1]
    card = (tmp_path / "out" / "README.md").read_text()
    assert "**Text-only.**" not in card and all(f"/{plain}/" not in link for link in linked_images(card))
    for split in ("train", "validation", "test"):
        chats = load_sft_dataset(tmp_path / "out", split, with_images=True, cache_dir=str(tmp_path / split))
        for chat in chats:
            assert len(chat["images"]) == (chat["world_id"] != plain)


def test_a_record_naming_a_screenshot_it_lacks_is_still_refused(tmp_path: Path) -> None:
    """Null is "verified without one"; a named file that is not there is a broken folder."""
    wdir = tmp_path / "traj" / "bookshop_easy_s0"
    traj = make_trajectory("bookshop_easy_s0", 0, None)  # screenshots named, none written
    wdir.mkdir(parents=True)
    (wdir / "verified.jsonl").write_text(dump([traj]))
    with pytest.raises(RecordError, match="no such file .*older webworld"):
        export_dataset(tmp_path / "traj", tmp_path / "out", progress=False)
