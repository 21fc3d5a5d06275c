"""The trainer learns ("it still solves CartPole"): on the button board (webworld.train.sanity)
a start policy that knows the reply format but presses a button at random succeeds at chance;
the real `webworld train rl` loop on the fast env, RL alone at N = 1, takes it to >= 0.9 within
a fixed budget for VESPO, GSPO, GRPO and SAPO.

The slow tests break the trainer on purpose (the loss's sign, the reply positions, the
advantages, a 100x learning rate) and check that the same budget then does not learn: the
learning test can fail.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import torch

from webworld.rl.tasks import load_worlds
from webworld.train import learner as learner_module
from webworld.train.batch import TurnBatch, turn_batch
from webworld.train.config import RLConfig
from webworld.train.engine import SamplingSettings, TransformersEngine
from webworld.train.loop import RLRun
from webworld.train.losses import LossOutput, get_loss
from webworld.train.models import load_policy
from webworld.train.rollout import make_vector_env, plan_batch, play_batch

# the fixed budget: 24 rollout batches of 4 x 8 episodes at learning rate 3e-4, three times the
# tiny family's default: experiments/learning_rates/REPORT.md measured that all 12 runs of the four losses
# reach 0.9 by batch 14 (median) at 3e-4 but only by batch 23-25 at 1e-4, the default chosen
# for its margin on SFT'd policies (no optimiser step in the sweep moved it by more than a KL
# of 0.007). Every other setting is the default (warm-up, temperature), but replies are cut
# at 32 tokens, enough for this family's (about 18). The sweep's replies pressed by id; the
# start policy now presses by name, as the prompt teaches, and VESPO's run passes 0.9 at batch 9.
LEARNING_RATE = 3e-4
BUDGET = dict(steps=24, tasks_per_step=4, group_size=8, envs=32, max_new_tokens=32,
              learning_rate=LEARNING_RATE, checkpoint_every=100)


def _train(board: Path, out: Path, algo: str, **kw) -> list[float]:
    config = RLConfig(algo=algo, model=str(board / "start"), worlds=board, split="all", out=out,
                      seed=0, **{**BUDGET, **kw})
    return [row["success_rate"] for row in RLRun(config).run().rows]


def test_the_start_policy_presses_a_button_at_chance(button_board: Path) -> None:
    model, tokenizer = load_policy(str(button_board / "start"))
    engine = TransformersEngine(model, tokenizer, SamplingSettings(
        max_new_tokens=BUDGET["max_new_tokens"], temperature=RLConfig().temperature))
    worlds = load_worlds(button_board / "sites", button_board / "trajectories")
    vec = make_vector_env(worlds, "fast", None, 32, "compact", None)
    try:
        batch = play_batch(vec, engine, plan_batch(worlds.instances(None), 1, 0, 8, 8), 1, 0)
    finally:
        vec.close()
    success = sum(e.success for e in batch.episodes) / len(batch.episodes)
    refused = sum(e.errors for e in batch.episodes) / len(batch.episodes)
    assert 0.1 <= success <= 0.4, success  # chance is 1/4
    assert refused < 0.3, refused           # it answers in the format


# VESPO (the default) in the default run; GRPO, GSPO and SAPO learn the board too (-m slow):
# a minute or two each was more than the suite's budget could keep
@pytest.mark.parametrize("algo", ["vespo", pytest.param("grpo", marks=pytest.mark.slow),
                                  pytest.param("gspo", marks=pytest.mark.slow),
                                  pytest.param("sapo", marks=pytest.mark.slow)])
def test_rl_alone_takes_the_board_from_chance_to_09(button_board: Path, tmp_path: Path,
                                                     algo: str) -> None:
    success = _train(button_board, tmp_path / algo, algo)
    assert success[0] <= 0.5, success
    assert sum(success[-3:]) / 3 >= 0.9, success


# --- the same test with the trainer broken on purpose ---------------------------------------


def _flipped_sign(name: str) -> Callable[..., LossOutput]:
    loss = get_loss(name)

    def flipped(*args, **kw) -> LossOutput:
        out = loss(*args, **kw)
        return LossOutput(-out.loss, out.reduction, out.stats)
    return flipped


def _shifted_positions(*args, **kw) -> TurnBatch:
    """Off by one: each reply token is scored by the hidden state *at* it, not before it."""
    batch = turn_batch(*args, **kw)
    pad = torch.zeros_like(batch.input_ids[:, :1])  # a column for the last token to read
    batch.input_ids = torch.cat([batch.input_ids, pad], 1)
    batch.attention_mask = torch.cat([batch.attention_mask, pad], 1)
    batch.positions = batch.positions + 1
    return batch


def _shuffled_advantages(rewards: torch.Tensor, groups: torch.Tensor) -> torch.Tensor:
    from webworld.train.losses import group_advantages

    advantages = group_advantages(rewards, groups)
    return advantages[torch.randperm(len(advantages), generator=torch.Generator().manual_seed(0))]


BREAKS = ["loss sign", "reply positions", "advantages", "100x learning rate"]


@pytest.mark.slow
@pytest.mark.parametrize("broken", BREAKS)
def test_a_broken_trainer_does_not_learn_the_board(button_board: Path, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch,
                                                   broken: str) -> None:
    kw = {}
    if broken == "loss sign":
        monkeypatch.setattr(learner_module, "get_loss", _flipped_sign)
    elif broken == "reply positions":
        monkeypatch.setattr(learner_module, "turn_batch", _shifted_positions)
    elif broken == "advantages":
        monkeypatch.setattr(learner_module, "group_advantages", _shuffled_advantages)
    else:
        kw["learning_rate"] = 100 * LEARNING_RATE
    success = _train(button_board, tmp_path / "run", "vespo", **kw)
    print(f"{broken}: final success {sum(success[-3:]) / 3:.2f}, curve {success}")
    assert sum(success[-3:]) / 3 < 0.9, success
