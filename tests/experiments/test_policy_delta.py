"""experiments/policy_delta.py: an SFT model carried as its difference from the base, rebuilt
on the other side into the same policy."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "experiments"))

from policy_delta import WEIGHTS, apply, pack  # noqa: E402

from webworld.train.models import load_policy, save_policy, train_top_layers  # noqa: E402


@pytest.fixture()
def trained(tmp_path: Path) -> Path:
    """A tiny "SFT run": its top layer and final norm moved, as train_top_layers leaves them."""
    model, tokenizer = load_policy("tiny")
    torch.manual_seed(1)
    with torch.no_grad():
        for p in train_top_layers(model, 1):
            p.add_(torch.randn_like(p) * 0.05)
    model.config.webworld_observation = "compact"  # what the run's config says travels too
    run = tmp_path / "run"
    save_policy(model, tokenizer, run / "model")
    (run / "sft_summary.json").write_text(json.dumps({"steps": 3}))
    return run


def test_the_rebuilt_policy_is_the_trained_one(trained: Path, tmp_path: Path) -> None:
    moved = len(train_top_layers(load_policy("tiny")[0], 1))
    assert pack(trained, tmp_path / "delta", "tiny") == moved  # the moved tensors only
    apply(tmp_path / "delta", tmp_path / "rebuilt")

    want, tokenizer = load_policy(str(trained / "model"))
    got, _ = load_policy(str(tmp_path / "rebuilt" / "model"))
    base = load_policy("tiny")[0].state_dict()
    for name, tensor in want.state_dict().items():
        rebuilt = got.state_dict()[name]
        if torch.equal(tensor, base[name]):
            assert torch.equal(rebuilt, tensor), name  # untouched: bit for bit
        else:
            torch.testing.assert_close(rebuilt, tensor, rtol=1e-3, atol=1e-4)  # via fp16
    ids = tokenizer("click('4')", return_tensors="pt").input_ids
    with torch.no_grad():
        torch.testing.assert_close(got(ids).logits, want(ids).logits, rtol=1e-2, atol=1e-3)
    assert got.config.webworld_observation == "compact"
    assert json.loads((tmp_path / "rebuilt" / "sft_summary.json").read_text()) == {"steps": 3}


def test_a_delta_for_another_base_is_refused_by_name(trained: Path, tmp_path: Path) -> None:
    from safetensors.torch import load_file, save_file

    pack(trained, tmp_path / "delta", "tiny")
    weights = load_file(str(tmp_path / "delta" / WEIGHTS))
    weights["model.layers.99.mlp.up_proj.weight"] = torch.zeros(2, 2)
    save_file(weights, str(tmp_path / "delta" / WEIGHTS))
    with pytest.raises(SystemExit, match="tensors the base tiny lacks: model.layers.99"):
        apply(tmp_path / "delta", tmp_path / "rebuilt")
    assert not (tmp_path / "rebuilt" / "model").exists()  # nothing half-written
