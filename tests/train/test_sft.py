"""SFT warm start on a tiny export: the tiny policy trains on the assistant replies only,
evaluates, checkpoints, resumes and leaves a loadable model."""

from __future__ import annotations

import json
import math
import re
import shutil
from pathlib import Path

import pytest
import torch
from pydantic import ValidationError

from tests.data.factory import make_traj_root
from webworld.data.export import export_dataset
from webworld.data.switches import StudySwitches
from webworld.errors import UsageError
from webworld.train.models import load_policy, tiny_model, tiny_tokenizer
from webworld.train.sft import SFTSettings, read_split, run_sft


@pytest.fixture(scope="module")
def export(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("sft")
    make_traj_root(root / "traj")
    export_dataset(root / "traj", root / "export", formats={"sft"}, progress=False)
    assert (root / "export" / "sft" / "validation.jsonl").is_file()
    return root / "export"


def settings(export: Path, out: Path, **changes: object) -> SFTSettings:
    """Small SFT settings; a study switch's name among ``changes`` turns it on."""
    fields: dict[str, object] = {"batch_size": 2, "max_steps": 3, "max_length": 1024, "device": "cpu"}
    study = {k: changes.pop(k) for k in list(changes) if k in StudySwitches.model_fields}
    return SFTSettings(data=export, out=out, **{**fields, **changes, "study": study})


def test_run_sft_trains_evaluates_saves_and_resumes(export: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    first = run_sft(settings(export, out), progress=False)
    assert first.steps == 3 and first.model_dir == out / "model"
    assert math.isfinite(first.train_loss) and first.train_loss > 0
    assert len(first.validation_losses) == 1 and math.isfinite(first.validation_losses[0])
    summary = json.loads((out / "sft_summary.json").read_text())
    assert summary["steps"] == 3 and summary["resumed_from"] is None
    assert summary["train_chats"] == 18 and summary["dropped_too_long"] == 0
    assert summary["settings"]["precision"] == "fp32"  # `auto` as resolved on a CPU
    model, tokenizer = load_policy(str(out / "model"))
    assert tokenizer.chat_template is not None and model.config.vocab_size == len(tokenizer)

    second = run_sft(settings(export, out, max_steps=5), progress=False)
    assert second.steps == 5  # went on from step 3, not from 0
    summary = json.loads((out / "sft_summary.json").read_text())
    assert summary["resumed_from"].endswith("checkpoint-3")
    assert len(second.validation_losses) == 2  # the first run's evaluation is kept
    kept = sorted(p.name for p in (out / "checkpoints").glob("checkpoint-*"))
    assert kept == ["checkpoint-3", "checkpoint-5"]

    again = run_sft(settings(export, out, max_steps=5), progress=False)
    assert again.steps == 5 and math.isnan(again.train_loss)  # nothing left: not a step more
    assert again.validation_losses == second.validation_losses
    assert json.loads((out / "sft_summary.json").read_text())["train_loss"] is None


def test_the_loss_is_on_the_reply_the_engine_would_sample(export: Path) -> None:
    """The prompt is tokenised as the rollout engine tokenises it, and the reply's tokens end
    at its stop token: the loss is on exactly what a policy samples, never on the page."""
    from webworld.train.engine import SamplingSettings, TransformersEngine
    from webworld.train.sft import encode_chats

    chats = read_split(export, "train")
    model, tokenizer = load_policy("tiny")
    engine = TransformersEngine(model, tokenizer, SamplingSettings())
    encoded = encode_chats(tokenizer, chats, 4096)
    assert len(encoded) == len(chats)
    for chat, example in zip(chats, encoded, strict=True):
        assert example.prompt_ids == engine.encode([chat[:-1]])[0]
        assert tokenizer.decode(example.reply_ids) == chat[-1]["content"] + "<|im_end|>"


def test_shared_prefix_and_bucketing_do_not_change_the_loss(export: Path) -> None:
    """The batched loss (system prompt run once, LM head on reply positions only) equals the
    plain per-chat negative log-likelihood of the replies."""
    import torch

    from webworld.train.batch import reply_batch, reply_logits
    from webworld.train.sft import encode_chats, epoch_batches

    model, tokenizer = load_policy("tiny", seed=3)
    chats = encode_chats(tokenizer, read_split(export, "train"), 4096)[:6]
    batch = reply_batch([(c.prompt_ids, c.reply_ids) for c in chats],
                        [len(c.reply_ids) for c in chats], tokenizer.pad_token_id)
    assert batch.shared > 100  # the system prompt
    with torch.no_grad():
        ours = torch.nn.functional.cross_entropy(reply_logits(model, batch), batch.targets)
        plain = []
        for c in chats:
            ids = torch.tensor([c.prompt_ids + c.reply_ids])
            logits = model(input_ids=ids).logits[0, len(c.prompt_ids) - 1:-1]
            plain.append(torch.nn.functional.cross_entropy(logits, torch.tensor(c.reply_ids),
                                                           reduction="sum"))
    torch.testing.assert_close(ours, torch.stack(plain).sum() / batch.targets.numel())
    lengths = [5, 50, 7, 48, 6, 49, 8, 47]
    batches = epoch_batches(lengths, 2, 0, 0)
    assert sorted(i for b in batches for i in b) == list(range(8))
    assert all(abs(lengths[b[0]] - lengths[b[1]]) <= 3 for b in batches)  # alike lengths
    assert batches == epoch_batches(lengths, 2, 0, 0) != epoch_batches(lengths, 2, 0, 1)


def test_top_layers_only_leave_the_rest_as_it_was(export: Path, tmp_path: Path) -> None:
    import torch

    run_sft(settings(export, tmp_path / "run", train_layers=1, learning_rate=1e-2),
            progress=False)
    before, _ = load_policy("tiny")
    after, _ = load_policy(str(tmp_path / "run" / "model"))
    same = {n for n, p in after.named_parameters()
            if torch.equal(p, dict(before.named_parameters())[n])}
    top = f"model.layers.{after.config.num_hidden_layers - 1}."
    assert same and all(not n.startswith(top) and n != "model.norm.weight" for n in same)
    assert any(n.startswith("model.embed_tokens") for n in same)  # frozen
    assert not any(n.startswith(top) for n in same)  # trained


def test_relabelled_ids_are_new_each_epoch_and_what_the_model_learns_from(
        export: Path, tmp_path: Path) -> None:
    from webworld.train.sft import augmented_chats, fitting_chats

    tokenizer = tiny_tokenizer()
    chats, encoded = fitting_chats(tokenizer, read_split(export, "train"), 1024)
    relabel = settings(export, tmp_path, relabel_ids=True)
    first, again, second = (augmented_chats(tokenizer, chats, relabel, e) for e in (0, 0, 1))
    assert len(first) == len(encoded) and first == again  # seeded: a resumed run sees the same
    differ = [a.prompt_ids != b.prompt_ids for a, b in zip(first, second, strict=True)]
    assert sum(differ) > len(differ) // 2  # each epoch draws new numbers
    assert sum(a.prompt_ids != b.prompt_ids for a, b in zip(first, encoded, strict=True)) > 0
    # the trainer learns from the renumbered chats: same seed and steps, another loss
    plain = run_sft(settings(export, tmp_path / "plain"), progress=False)
    relabelled = run_sft(settings(export, tmp_path / "relabel", relabel_ids=True), progress=False)
    assert plain.train_loss != relabelled.train_loss
    assert json.loads((tmp_path / "relabel" / "sft_summary.json").read_text())["settings"][
        "study"]["relabel_ids"] is True


def test_shuffled_ids_leave_page_order_and_exclude_relabelled_ids(
        export: Path, tmp_path: Path) -> None:
    """--study shuffle_ids: page lines' ids in no order (relabel_ids keeps page order); asking
    for both is a clear error, in settings and on the command line."""
    from typer.testing import CliRunner

    from webworld.cli.main import app
    from webworld.train.sft import augmented_chats, fitting_chats

    tokenizer = tiny_tokenizer()
    chats, _ = fitting_chats(tokenizer, read_split(export, "train"), 1024)

    def page_ids(mode: str) -> list[list[int]]:
        encoded = augmented_chats(tokenizer, chats, settings(export, tmp_path, **{mode: True}), 0)
        pages = (tokenizer.decode(chat.prompt_ids).split("Page:\n", 1)[1] for chat in encoded)
        return [[int(i) for i in re.findall(r"^\s*\[(\d+)\] ", page, re.M)] for page in pages]

    assert all(ids == sorted(ids) for ids in page_ids("relabel_ids"))
    shuffled = page_ids("shuffle_ids")
    assert sum(ids != sorted(ids) for ids in shuffled) > len(shuffled) // 4  # 2-line pages
    with pytest.raises(ValueError, match="choose one"):
        settings(export, tmp_path, relabel_ids=True, shuffle_ids=True)
    both = CliRunner().invoke(app, ["train", "sft", "--data", str(export), "--model", "tiny",
                                    "--out", str(tmp_path / "run"), "--study", "relabel_ids",
                                    "--study", "shuffle_ids"])
    assert both.exit_code == 2 and "choose one" in both.output and "Traceback" not in both.output


def test_moved_choices_reach_the_chats_an_epoch_learns_from(export: Path, tmp_path: Path) -> None:
    from webworld.data.prompting import step_messages
    from webworld.train.sft import augmented_chats, fitting_chats

    menu = "[1] button 'Browse', expanded\n  [2] menuitem 'Pets'\n  [3] menuitem 'Housing'"
    named, plain = (step_messages(task, menu, "https://p.test/", [], "Go.", "click('3')")
                    for task in ("Browse the Housing section.", "Browse a section."))
    tokenizer = tiny_tokenizer()
    chats, encoded = fitting_chats(tokenizer, [named, plain], 1024)
    moved = augmented_chats(tokenizer, chats, settings(export, tmp_path, move_choices=True), 0)
    assert moved[0].reply_ids != encoded[0].reply_ids  # the task names its choice: now '2'
    assert "click('2')" in tokenizer.decode(moved[0].reply_ids)
    assert moved[1] == encoded[1]
    renamed = augmented_chats(tokenizer, chats, settings(export, tmp_path, rename_choices=True),
                              0)
    assert "Housing" not in tokenizer.decode(renamed[0].prompt_ids)  # task and page renamed
    assert renamed[0].prompt_ids != encoded[0].prompt_ids and renamed[1] == encoded[1]
    dated = step_messages("Book it: pick the date 2027-04-21.", "[4] button 'Wednesday, 21 April "
                          "2027'", "https://p.test/", [], "Go.", "click('4')")
    chats, _ = fitting_chats(tokenizer, [dated], 1024)
    redated = augmented_chats(tokenizer, chats, settings(export, tmp_path, vary_dates=True), 0)
    assert "2027-04-21" not in tokenizer.decode(redated[0].prompt_ids)  # task and button moved


def test_chats_longer_than_max_length_are_dropped(export: Path, tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="longer than max_length"):
        run_sft(settings(export, tmp_path, max_length=16), progress=False)
    tokenizer = tiny_tokenizer()
    lengths = sorted(len(tokenizer.apply_chat_template(chat, tokenize=True, return_dict=False))
                     for chat in read_split(export, "train"))
    middle = lengths[len(lengths) // 2]  # the longer half goes
    run_sft(settings(export, tmp_path / "cut", max_length=middle), progress=False)
    summary = json.loads((tmp_path / "cut" / "sft_summary.json").read_text())
    assert 0 < summary["dropped_too_long"] < summary["train_chats"]


def test_bad_data_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="--format sft") as missing:
        run_sft(settings(tmp_path / "nothing", tmp_path / "out"), progress=False)
    assert missing.value.where == str(tmp_path / "nothing" / "sft" / "train.jsonl")
    split = tmp_path / "bad" / "sft" / "train.jsonl"
    split.parent.mkdir(parents=True)
    split.write_text('{"messages": [{"role": "user", "content": "hi"}]}\nnot json\n')
    with pytest.raises(UsageError, match="ends with the assistant") as bad:
        read_split(tmp_path / "bad", "train")
    assert bad.value.where == f"{split}:1"
    split.write_text("not json\n")
    with pytest.raises(UsageError, match="not an SFT record"):
        read_split(tmp_path / "bad", "train")


def test_settings_forbid_unknown_fields(tmp_path: Path) -> None:
    with pytest.raises(ValidationError):
        SFTSettings(data=tmp_path, out=tmp_path, epoch=2)  # type: ignore[call-arg]


def test_default_steps_scale_with_the_data_and_have_a_minimum(tmp_path: Path) -> None:
    """Today's one-world export trained 16 steps by default and could not act: now 3 epochs,
    at least 200 steps, and the family's learning rate."""
    from webworld.train.defaults import SFT_LEARNING_RATES, sft_steps
    from webworld.train.sft import resolved

    assert sft_steps(189, 8, 3.0, 200) == 200           # a one-world export
    assert sft_steps(3000, 8, 3.0, 200) == 1125         # 3 epochs of a bigger one
    model = tiny_model(tiny_tokenizer())
    model.config.webworld_family = "tiny"
    base = SFTSettings(data=tmp_path, out=tmp_path)
    chosen = resolved(base, model, chats=189)
    assert chosen.max_steps == 200 and chosen.learning_rate == SFT_LEARNING_RATES["tiny"]
    given = resolved(base.model_copy(update={"max_steps": 7, "learning_rate": 0.1}), model, 189)
    assert (given.max_steps, given.learning_rate) == (7, 0.1)


def test_the_policy_remembers_its_observation_mode(export: Path, tmp_path: Path) -> None:
    from webworld.train.models import policy_observation

    run_sft(settings(export, tmp_path / "run"), progress=False)
    mode = json.loads((export / "manifest.json").read_text())["observation"]
    assert policy_observation(str(tmp_path / "run" / "model"), "other") == mode
    assert policy_observation("tiny", "compact") == "compact"
    model, _ = load_policy(str(tmp_path / "run" / "model"))
    assert model.config.webworld_family == "tiny"


def test_the_cli_says_when_a_resumed_run_had_no_step_left(export: Path, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from webworld.cli.main import app

    command = ["train", "sft", "--data", str(export), "--model", "tiny", "--out",
               str(tmp_path / "run"), "--max-steps", "1", "--device", "cpu"]
    first, again = (CliRunner().invoke(app, command) for _ in range(2))
    assert first.exit_code == 0 and re.search(r"train loss \d+\.\d{4}", first.output), first.output
    assert again.exit_code == 0 and "nan" not in again.output
    assert "no step left to take" in " ".join(again.output.split())


def test_extra_exports_add_training_chats_in_the_same_observation_mode(
        export: Path, tmp_path: Path) -> None:
    """`--extra-data`: more worlds' training chats join the first export's; validation stays
    the first's; an export made in another observation mode is refused, naming its manifest."""
    traj = export.parent / "traj"
    whole = tmp_path / "whole"
    export_dataset(traj, whole, formats={"sft"}, splits=(1.0, 0.0, 0.0), progress=False)
    run_sft(settings(export, tmp_path / "run", extra_data=[whole]), progress=False)
    summary = json.loads((tmp_path / "run" / "sft_summary.json").read_text())
    assert summary["train_chats"] == 18 + len(read_split(whole, "train"))
    assert summary["settings"]["extra_data"] == [str(whole)]
    compact = tmp_path / "compact"
    export_dataset(traj, compact, formats={"sft"}, splits=(1.0, 0.0, 0.0), observation="compact",
                   progress=False)
    with pytest.raises(UsageError, match="observation mode is 'compact'") as mixed:
        run_sft(settings(export, tmp_path / "mixed", extra_data=[compact]), progress=False)
    assert mixed.value.where == str(compact / "manifest.json")
    with pytest.raises(UsageError, match="no SFT train split"):
        run_sft(settings(export, tmp_path / "none", extra_data=[tmp_path / "nothing"]),
                progress=False)


def test_bf16_compute_from_the_cli_learns_as_fp32_and_keeps_fp32_weights(
        export: Path, tmp_path: Path) -> None:
    """`--precision bf16`: the forward runs in bf16 (the losses move off fp32's by rounding,
    not more), the saved weights stay fp32, and the summary says which compute ran."""
    from typer.testing import CliRunner

    from webworld.cli.main import app

    runs = {}
    for precision in ("fp32", "bf16"):
        out = tmp_path / precision
        result = CliRunner().invoke(app, ["train", "sft", "--data", str(export), "--model",
                                          "tiny", "--out", str(out), "--max-steps", "3",
                                          "--batch-size", "2", "--device", "cpu",
                                          "--precision", precision])
        assert result.exit_code == 0, result.output
        runs[precision] = json.loads((out / "sft_summary.json").read_text())
        assert runs[precision]["settings"]["precision"] == precision
    fp32, bf16 = (runs[p]["validation_losses"][-1] for p in ("fp32", "bf16"))
    assert fp32 != bf16 and abs(fp32 - bf16) < 0.02 * fp32
    model, _ = load_policy(str(tmp_path / "bf16" / "model"))
    assert {p.dtype for p in model.parameters()} == {torch.float32}


def test_skip_detours_leaves_out_the_marked_chats(export: Path, tmp_path: Path) -> None:
    from webworld.train.sft import training_chats

    lines = (export / "sft" / "train.jsonl").read_text().splitlines()
    marked = sum(json.loads(line)["detour"] for line in lines)
    assert 0 < marked < len(lines)
    kept = training_chats(settings(export, tmp_path, skip_detours=True))
    assert len(kept) == len(lines) - marked == len(training_chats(settings(export, tmp_path))) - marked
    # an export made before the marks: a clear error naming the file and line
    old = tmp_path / "old"
    shutil.copytree(export, old)
    (old / "sft" / "train.jsonl").write_text("".join(
        json.dumps({k: v for k, v in json.loads(line).items() if k != "detour"}) + "\n"
        for line in lines))
    with pytest.raises(UsageError, match="export it again") as error:
        training_chats(settings(old, tmp_path, skip_detours=True))
    assert error.value.where == f"{old / 'sft' / 'train.jsonl'}:1"
