"""The export end to end: every format loads back, splits are by world, counts match."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import datasets
import huggingface_hub
import numpy as np
import pytest
import yaml
from PIL import Image
from trl.data_utils import is_conversational

from tests.data.factory import (
    FAST_PNG_WORLDS,
    WORLDS,
    dump,
    make_traj_root,
    make_trajectory,
)
from webworld.browser.observe import compact_text, named_form
from webworld.data import export as export_mod
from webworld.data.export import ExportSummary, export_dataset, load_sft_dataset, load_steps
from webworld.data.prompting import parse_reply
from webworld.data.reading import RecordError
from webworld.errors import UsageError, WebworldError

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> tuple[Path, Path, dict, ExportSummary]:
    base = tmp_path_factory.mktemp("export")
    made = make_traj_root(base / "traj")
    summary = export_dataset(base / "traj", base / "out", progress=False)
    return base / "traj", base / "out", made, summary


def _rows_by_split(out: Path, sub: str) -> dict[str, list[dict]]:
    return {p.stem: [json.loads(line) for line in p.read_text().splitlines()]
            for p in sorted((out / sub).glob("*.jsonl"))}


def test_counts_match_the_input(exported) -> None:
    _, out, made, summary = exported
    steps = {w: sum(len(t["steps"]) for t in ts) for w, ts in made.items()}
    assert sum(steps.values()) == 41  # 15 + 8 + 18: the factory's own arithmetic
    assert summary.trajectories == 9 and summary.steps == 41
    for w, ts in made.items():
        ws = summary.worlds[w]
        assert (ws.trajectories, ws.steps) == (len(ts), steps[w])
        assert ws.mean_length == pytest.approx(sum(t["length"] for t in ts) / len(ts))
        assert ws.theme == WORLDS[w][0]
    assert summary.worlds["bookshop_easy_s0"].skipped_lines == ["verified.jsonl:4"]
    assert summary.worlds["bookshop_easy_s0"].failures == {"element_covered": 2, "state_mismatch": 1}
    assert summary.worlds["flights_easy_s0"].failures == {}
    assert any("partial last line (verified.jsonl:4)" in n for n in summary.notes)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["steps"] == 41 and manifest["trajectories"] == 9
    assert manifest["paths"]["parquet"] == [f"parquet/{s}.parquet" for s in ("train", "validation", "test")]


def test_no_world_in_two_splits(exported) -> None:
    _, out, _, summary = exported
    seen: dict[str, set[str]] = {}
    for sub in ("jsonl", "sft"):
        for split, rows in _rows_by_split(out, sub).items():
            for r in rows:
                seen.setdefault(r["world_id"], set()).add(split)
    hf = datasets.load_from_disk(str(out / "hf"))
    for split in hf:
        for w in hf[split]["world_id"]:
            seen.setdefault(w, set()).add(split)
    assert set(seen) == set(WORLDS)
    assert all(len(splits) == 1 for splits in seen.values()), seen
    assert {w: next(iter(s)) for w, s in seen.items()} == {w: summary.split_of(w) for w in WORLDS}
    assert sorted(len(s.worlds) for s in summary.splits.values()) == [1, 1, 1]


def _pixels(image: Image.Image | Path) -> np.ndarray:
    with Image.open(image) if isinstance(image, Path) else contextlib.nullcontext(image) as im:
        return np.asarray(im.convert("RGB"))


def _source(traj_root: Path, by_id: dict, row: dict) -> Path:
    """The verifier's screenshot of a step row (or SFT record) of the export."""
    traj = by_id[row["trajectory_id"]]
    return traj_root / traj["world_id"] / traj["steps"][row["step"]]["observation"]["screenshot"]


@pytest.mark.parametrize("source", ["hf", "parquet"])
def test_load_steps_decodes_the_stored_screenshots(exported, source, tmp_path) -> None:
    """Step rows through load_steps: every screenshot an image with the verifier's pixels."""
    traj_root, out, made, summary = exported
    by_id = {t["id"]: t for ts in made.values() for t in ts}
    steps = load_steps(out, source=source, cache_dir=str(tmp_path))
    assert list(steps) == ["train", "validation", "test"]
    assert {s: steps[s].num_rows for s in steps} == {s: summary.splits[s].steps for s in steps}
    assert isinstance(steps["train"].features["screenshot"], datasets.Image)
    assert steps["train"].column_names == list(export_mod.STEP_COLUMNS)
    for split in steps:
        for row in steps[split]:
            assert isinstance(row["screenshot"], Image.Image)
            assert row["screenshot"].size == WORLDS[row["world_id"]][1]
            assert np.array_equal(_pixels(row["screenshot"]), _pixels(_source(traj_root, by_id, row)))
    one = load_steps(out, "test", source=source, cache_dir=str(tmp_path))
    assert one.num_rows == summary.splits["test"].steps
    with pytest.raises(UsageError, match="no split 'dev'"):
        load_steps(out, "dev", source=source, cache_dir=str(tmp_path))
    if source == "hf":  # nothing written next to the loaded files
        assert sorted(p.name for p in (out / "hf").iterdir()) == \
            ["dataset_dict.json", "test", "train", "validation"]


def test_parquet_rows_hold_the_screenshot_path(exported, tmp_path) -> None:
    _, out, made, _ = exported
    files = {s: str(out / "parquet" / f"{s}.parquet") for s in ("train", "validation", "test")}
    ds = datasets.load_dataset("parquet", data_files=files, cache_dir=str(tmp_path))
    assert ds["test"].features["screenshot"] == datasets.Value("string")
    rows = [r for s in ds for r in ds[s]]
    assert len(rows) == 41
    by_id = {t["id"]: t for ts in made.values() for t in ts}
    for row in rows:
        step = by_id[row["trajectory_id"]]["steps"][row["step"]]
        assert row["action"] == step["action"] and row["op"] == step["op"]
        assert row["bbox"] == step["bbox"] and row["value"] == step["value"]
        assert row["axtree"] == step["observation"]["axtree"]
        assert row["screenshot"] == f"images/{row['world_id']}/{row['trajectory_id']}/{row['step']}.png"
        assert row["is_last"] == (row["step"] == row["num_steps"] - 1)
        assert row["thought"]
    # the card's YAML configs make the folder itself loadable
    by_card = datasets.load_dataset(str(out), cache_dir=str(tmp_path / "card"))
    assert {s: by_card[s].num_rows for s in by_card} == {s: ds[s].num_rows for s in ds}


def test_each_screenshot_is_stored_once(exported) -> None:
    """images/ holds one PNG per step; no other file of the export holds a PNG, and every
    format points at those files (all of them, nothing else)."""
    traj_root, out, made, summary = exported
    stored = {p.relative_to(out).as_posix() for p in (out / "images").rglob("*") if p.is_file()}
    assert len(stored) == summary.steps == 41
    for path in out.rglob("*"):
        if path.is_file() and path.parts[len(out.parts)] != "images":
            assert PNG_SIGNATURE not in path.read_bytes(), f"{path} holds a PNG"
    pointed = {
        "jsonl": {st["observation"]["screenshot"] for rs in _rows_by_split(out, "jsonl").values()
                  for r in rs for st in r["steps"]},
        "sft": {r["screenshot"] for rs in _rows_by_split(out, "sft").values() for r in rs},
        "hf": {p for ds in datasets.load_from_disk(str(out / "hf")).values()
               for p in ds["screenshot"]},
        "parquet": set(),
    }
    for split in ("train", "validation", "test"):
        table = datasets.Dataset.from_parquet(str(out / "parquet" / f"{split}.parquet"))
        pointed["parquet"] |= set(table["screenshot"])
    for fmt, paths in pointed.items():
        assert paths == stored, fmt


def test_screenshots_are_stored_deflated_again(exported) -> None:
    """Screenshots the verifier wrote fast are stored smaller, with the same pixels; the
    others byte for byte."""
    traj_root, out, made, _ = exported
    smaller = 0
    for world, trajs in made.items():
        for traj in trajs:
            for n, step in enumerate(traj["steps"]):
                source = traj_root / world / step["observation"]["screenshot"]
                stored = out / "images" / world / traj["id"] / f"{n}.png"
                assert np.array_equal(_pixels(stored), _pixels(source))
                if world in FAST_PNG_WORLDS:
                    smaller += stored.stat().st_size < source.stat().st_size
                else:
                    assert stored.read_bytes() == source.read_bytes()
    assert smaller == sum(len(t["steps"]) for w in FAST_PNG_WORLDS for t in made[w]) > 0


def test_sft_records_are_trl_conversational(exported, tmp_path) -> None:
    traj_root, out, made, _ = exported
    by_id = {t["id"]: t for ts in made.values() for t in ts}
    records = [r for rows in _rows_by_split(out, "sft").values() for r in rows]
    assert len(records) == 41
    for rec in records:
        assert is_conversational(rec)
        assert [m["role"] for m in rec["messages"]] == ["system", "user", "assistant"]
        assert all(set(m) == {"role", "content"} and isinstance(m["content"], str)
                   for m in rec["messages"])
        traj = by_id[rec["trajectory_id"]]
        step = traj["steps"][rec["step"]]
        assert rec["action"] == step["action"]  # both forms; the reply acts by name
        assert rec["action_named"] == named_form(step["action"], step["observation"]["axtree"])
        assert parse_reply(rec["messages"][2]["content"]) == rec["action_named"]
        user = rec["messages"][1]["content"]
        assert traj["intent"] in user and step["observation"]["axtree"] in user
        for earlier in traj["steps"][:rec["step"]]:
            assert named_form(earlier["action"], earlier["observation"]["axtree"]) in user
        image = rec["screenshot"]
        assert "images" not in rec  # text-only models train on the records as they are
        assert image == f"images/{traj['world_id']}/{traj['id']}/{rec['step']}.png"  # portable
        assert np.array_equal(_pixels(out / image), _pixels(_source(traj_root, by_id, rec)))
        # a world's paths are one task instance: the shortest (2 FSM actions) takes search
        # and open_item, so a longer path's steps past them are the detours
        assert rec["detour"] is (traj["length"] > 2 and step["fsm_action"] not in
                                 ("search", "open_item"))
    assert sum(rec["detour"] for rec in records) == 14  # 2 and 4 in 5- and 7-step paths
    for split in ("train", "validation", "test"):
        ds = load_sft_dataset(out, split, with_images=True, cache_dir=str(tmp_path))
        for rec in ds:
            assert isinstance(rec["images"][0], Image.Image)
            assert np.array_equal(_pixels(rec["images"][0]), _pixels(_source(traj_root, by_id, rec)))


def test_both_action_forms_for_every_step(exported, tmp_path) -> None:
    """Rows and trajectories carry the id and the named form of each action; the SFT
    replies act by name where the name is unique (by default) or always by id."""
    traj_root, out, made, summary = exported
    rows = [r for split in datasets.load_from_disk(str(out / "hf")).values() for r in split]
    named = [r for r in rows if r["action_named"] != r["action"]]
    assert named and all(r["bid"] not in r["action_named"].split('"', 1)[0] for r in named)
    assert summary.named_steps == len(named) == json.loads(
        (out / "manifest.json").read_text())["named_steps"]
    for traj in (t for ts in _rows_by_split(out, "jsonl").values() for t in ts):
        for step in traj["steps"]:
            assert step["action_named"] == named_form(step["action"], step["observation"]["axtree"])
    export_dataset(traj_root, tmp_path / "ids", formats={"sft"}, actions="ids", progress=False)
    replies = [parse_reply(r["messages"][2]["content"])
               for rows in _rows_by_split(tmp_path / "ids", "sft").values() for r in rows]
    assert replies == [r["action"] for rows in _rows_by_split(tmp_path / "ids", "sft").values()
                       for r in rows]
    with pytest.raises(UsageError, match="unknown action form 'css'"):
        export_dataset(traj_root, tmp_path / "d", actions="css", progress=False)


def test_the_compact_observation_mode_and_public_urls(exported, tmp_path) -> None:
    """``--observation compact``: the SFT prompts show the compact text the environments
    show in that mode; rows carry both texts; URLs lose the run's loopback port."""
    traj_root, out, made, _ = exported
    summary = export_dataset(traj_root, tmp_path / "c", formats={"sft", "jsonl"},
                             observation="compact", progress=False)
    assert json.loads((tmp_path / "c" / "manifest.json").read_text())["observation"] == "compact"
    assert "**compact** observation mode" in (tmp_path / "c" / "README.md").read_text()
    by_id = {t["id"]: t for ts in made.values() for t in ts}
    records = [r for rows in _rows_by_split(tmp_path / "c", "sft").values() for r in rows]
    assert len(records) == summary.steps
    for rec in records:
        step = by_id[rec["trajectory_id"]]["steps"][rec["step"]]
        user = rec["messages"][1]["content"]
        assert user.endswith("Page:\n" + compact_text(step["observation"]["axtree"]))
        assert f"URL: https://{rec['world_id'].replace('_', '-')}.webworld.test/page/" in user
    full = [r for rows in _rows_by_split(out, "sft").values() for r in rows]
    assert all("127.0.0.1" not in r["messages"][1]["content"] for r in full)
    rows = datasets.load_from_disk(str(out / "hf"))["train"]
    assert rows[0]["axtree_compact"] == compact_text(rows[0]["axtree"])
    with pytest.raises(UsageError, match="unknown observation mode 'tiny'"):
        export_dataset(traj_root, tmp_path / "d", observation="tiny", progress=False)


def test_jsonl_trajectories_point_at_copied_images(exported) -> None:
    traj_root, out, made, _ = exported
    rows = [r for rs in _rows_by_split(out, "jsonl").values() for r in rs]
    assert sorted(r["id"] for r in rows) == sorted(t["id"] for ts in made.values() for t in ts)
    for r in rows:
        for n, step in enumerate(r["steps"]):
            rel = step["observation"]["screenshot"]
            assert rel == f"images/{r['world_id']}/{r['id']}/{n}.png"
            assert (out / rel).is_file() and step["thought"]


def test_card(exported) -> None:
    _, out, _, summary = exported
    text = (out / "README.md").read_text()
    _, header, body = text.split("---\n", 2)
    meta = yaml.safe_load(header)
    assert meta["license"] and "image-text-to-text" in meta["task_categories"]
    assert meta["configs"][0]["data_files"][0] == {"split": "train", "path": "parquet/train.parquet"}
    assert "| `bookshop_easy_s0` | " in body and "element_covered: 2, state_mismatch: 1" in body
    assert "| **total** | 3 | 9 | 41 |" in body
    assert body.count("### ") >= 2 and "Thought: " in body and "Action: " in body
    card = huggingface_hub.DatasetCard.load(out / "README.md")
    assert card.data.configs[0]["config_name"] == "default"


def test_deterministic_and_replaces_an_earlier_export(exported, tmp_path) -> None:
    traj_root, out, _, _ = exported
    target = tmp_path / "again"
    export_dataset(traj_root, target, formats={"jsonl", "sft"}, progress=False)
    (target / "stale.txt").write_text("from an older export")
    summary = export_dataset(traj_root, target, formats={"sft"}, progress=False)
    assert not (target / "stale.txt").exists() and not (target / "jsonl").exists()
    assert not (target / "parquet").exists() and summary.paths.keys() >= {"sft", "card"}
    for split in ("train", "validation", "test"):
        assert (target / "sft" / f"{split}.jsonl").read_bytes() == \
            (out / "sft" / f"{split}.jsonl").read_bytes()
    assert [p.name for p in tmp_path.iterdir()] == ["again"]  # no temp folders left behind


def test_world_filter_and_fill_order(exported, tmp_path) -> None:
    traj_root, _, _, _ = exported
    summary = export_dataset(traj_root, tmp_path / "two", formats={"jsonl"}, progress=False,
                             worlds=["hotels_easy_s0", "flights_easy_s0"])
    assert [len(summary.splits[s].worlds) for s in ("train", "validation", "test")] == [1, 0, 1]
    assert any("validation is empty" in n for n in summary.notes)
    assert not (tmp_path / "two" / "jsonl" / "validation.jsonl").exists()
    assert set(summary.worlds) == {"hotels_easy_s0", "flights_easy_s0"}
    assert summary.trajectories == 6
    with pytest.raises(UsageError, match="nowhere"):
        export_dataset(traj_root, tmp_path / "x", worlds=["nowhere"], progress=False)


def test_duplicate_ids_are_dropped(tmp_path) -> None:
    wdir = tmp_path / "traj" / "bookshop_easy_s0"
    wdir.mkdir(parents=True)
    t = make_trajectory("bookshop_easy_s0", 0, wdir)
    (wdir / "verified.jsonl").write_text(dump([t, t]))
    summary = export_dataset(tmp_path / "traj", tmp_path / "out", formats={"jsonl"},
                             progress=False)
    assert summary.trajectories == 1 and summary.worlds["bookshop_easy_s0"].duplicates == 1


def test_screenshots_are_copies(tmp_path) -> None:
    """A verifier run rewrites screenshots in place; an export must not change with them."""
    wdir = tmp_path / "traj" / "bookshop_easy_s0"
    t = make_trajectory("bookshop_easy_s0", 0, wdir)
    (wdir / "verified.jsonl").write_text(dump([t]))
    export_dataset(tmp_path / "traj", tmp_path / "out", formats={"jsonl"}, progress=False)
    source = wdir / t["steps"][0]["observation"]["screenshot"]
    copy = tmp_path / "out" / "images" / "bookshop_easy_s0" / t["id"] / "0.png"
    before = copy.read_bytes()
    with source.open("r+b") as handle:  # same inode, new bytes
        handle.write(b"\0" * 16)
    assert copy.read_bytes() == before != source.read_bytes()


# --- bad input ------------------------------------------------------------------------------


def _one_world(tmp_path: Path, lines: list[str]) -> Path:
    wdir = tmp_path / "traj" / "bookshop_easy_s0"
    wdir.mkdir(parents=True, exist_ok=True)
    make_trajectory("bookshop_easy_s0", 0, wdir)  # writes the screenshots
    (wdir / "verified.jsonl").write_text("".join(line + "\n" for line in lines))
    return tmp_path / "traj"


def _good() -> str:
    return json.dumps(make_trajectory("bookshop_easy_s0", 0, None))


def test_missing_root(tmp_path) -> None:
    with pytest.raises(UsageError) as info:
        export_dataset(tmp_path / "nope", tmp_path / "out", progress=False)
    assert str(tmp_path / "nope") in str(info.value)


def test_malformed_middle_line_names_file_and_line(tmp_path) -> None:
    root = _one_world(tmp_path, [_good(), "{not json", _good()])
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "manifest.json").write_text(json.dumps({"webworld_export": 1}))
    with pytest.raises(RecordError) as info:
        export_dataset(root, tmp_path / "out", progress=False)
    assert str(info.value).startswith(f"{root / 'bookshop_easy_s0' / 'verified.jsonl'}:2: ")
    assert isinstance(info.value, WebworldError)
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["manifest.json"]  # untouched
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "traj"]


@pytest.mark.parametrize("mutate, message", [
    (lambda t: t.pop("intent"), "intent: missing"),
    (lambda t: t["steps"][1].update(bbox="wide"), "steps[1].bbox"),
    (lambda t: t["steps"][0].update(action="os.system('x')"), "action grammar"),
    (lambda t: t["steps"][0].update(action="click('999')"), "bid is '10'"),
    (lambda t: t["steps"][2]["observation"].update(screenshot="images/missing.png"), "no such file"),
    (lambda t: t["steps"][0]["observation"].update(screenshot="../../x.png"), "outside the world"),
    (lambda t: t.update(world_id="other"), "folder's name"),
    (lambda t: t.update(steps=[]), "no steps"),
])
def test_bad_records(tmp_path, mutate, message) -> None:
    bad = json.loads(_good())
    mutate(bad)
    root = _one_world(tmp_path, [_good(), json.dumps(bad)])
    with pytest.raises(RecordError, match=r"verified\.jsonl:2: ") as info:
        export_dataset(root, tmp_path / "out", progress=False)
    assert message in str(info.value)


def test_bad_failure_line(tmp_path) -> None:
    root = _one_world(tmp_path, [_good()])
    (root / "bookshop_easy_s0" / "failures.jsonl").write_text('{"id": 1}\n{"id": 2}\n')
    with pytest.raises(RecordError, match=r"failures\.jsonl:1: id: expected str"):
        export_dataset(root, tmp_path / "out", progress=False)


def test_no_verified_records(tmp_path) -> None:
    root = _one_world(tmp_path, [])
    with pytest.raises(RecordError, match="no verified trajectories"):
        export_dataset(root, tmp_path / "out", progress=False)
    (root / "bookshop_easy_s0" / "verified.jsonl").unlink()
    with pytest.raises(RecordError, match="no <world>/verified.jsonl"):
        export_dataset(root, tmp_path / "out", progress=False)


def test_refuses_to_replace_a_folder_that_is_not_an_export(tmp_path) -> None:
    root = _one_world(tmp_path, [_good()])
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "thesis.tex").write_text("keep me")
    with pytest.raises(UsageError, match="not a webworld export"):
        export_dataset(root, precious, progress=False)
    assert (precious / "thesis.tex").read_text() == "keep me"
    with pytest.raises(UsageError, match="holds the input"):
        export_dataset(root, tmp_path, progress=False)


def test_bad_arguments(tmp_path) -> None:
    root = _one_world(tmp_path, [_good()])
    with pytest.raises(UsageError, match="unknown format"):
        export_dataset(root, tmp_path / "out", formats={"csv"}, progress=False)
    with pytest.raises(UsageError, match="sum to 1"):
        export_dataset(root, tmp_path / "out", splits=(0.5, 0.1, 0.1), progress=False)


def test_partial_last_line_cut_inside_a_character(tmp_path) -> None:
    """A trailing partial line (no newline) is skipped even when it cuts a UTF-8 character."""
    good = _good()
    root = _one_world(tmp_path, [good])
    path = root / "bookshop_easy_s0" / "verified.jsonl"
    with path.open("ab") as handle:
        handle.write('{"id": "é'.encode()[:-1])
    summary = export_dataset(root, tmp_path / "out", formats={"jsonl"}, progress=False)
    assert summary.trajectories == 1
    (line,) = (tmp_path / "out" / "jsonl" / "train.jsonl").read_text().splitlines()
    assert json.loads(line)["intent"] == json.loads(good)["intent"]
    assert summary.worlds["bookshop_easy_s0"].skipped_lines == ["verified.jsonl:2"]


def test_parquet_alone_still_stores_the_screenshots(exported, tmp_path) -> None:
    traj_root, _, _, _ = exported
    out = tmp_path / "p"
    summary = export_dataset(traj_root, out, formats={"parquet"}, progress=False)
    assert summary.paths["images"] == [out / "images"]
    assert len(list((out / "images").rglob("*.png"))) == summary.steps
    steps = load_steps(out, "train", cache_dir=str(tmp_path / "cache"))
    assert isinstance(steps[0]["screenshot"], Image.Image)
    with pytest.raises(UsageError, match="unknown source 'csv'"):
        load_steps(out, source="csv")
    with pytest.raises(UsageError, match="no parquet"):
        load_steps(tmp_path / "nothing")
