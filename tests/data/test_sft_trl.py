"""The SFT export goes into TRL's SFTTrainer: one optimiser step on a tiny random model."""

from __future__ import annotations

from pathlib import Path

import trl

from tests.data.factory import WORLDS, make_traj_root
from tests.tiny_lm import tiny_causal_lm
from webworld.data.export import export_dataset, load_sft_dataset


def test_sft_trainer_takes_the_export(tmp_path: Path) -> None:
    make_traj_root(tmp_path / "traj")
    export_dataset(tmp_path / "traj", tmp_path / "out", formats={"sft"}, progress=False)
    model, tokenizer = tiny_causal_lm()
    args = trl.SFTConfig(output_dir=str(tmp_path / "run"), max_steps=1, per_device_train_batch_size=2,
                         report_to=[], save_strategy="no", use_cpu=True, max_length=256,
                         dataset_num_proc=None, disable_tqdm=True)
    from datasets import load_dataset

    as_is = load_dataset("json", data_files=str(tmp_path / "out" / "sft" / "train.jsonl"),
                         split="train", cache_dir=str(tmp_path / "c"))
    assert all(trl.data_utils.is_conversational(r) for r in as_is)
    trainer = trl.SFTTrainer(model=model, args=args, train_dataset=as_is, processing_class=tokenizer)
    result = trainer.train()
    assert result.global_step == 1 and result.training_loss > 0
    with_images = load_sft_dataset(tmp_path / "out", "train", with_images=True,
                                   cache_dir=str(tmp_path / "c"))
    first = with_images[0]
    assert first["images"][0].size == WORLDS[first["world_id"]][1]
