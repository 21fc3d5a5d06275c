"""Training settings per model family, chosen by measurement.

The RL learning rates come from the sweep of ``experiments/learning_rates/run.py`` on the
learnable task family (:mod:`webworld.train.sanity`); ``experiments/learning_rates/REPORT.md``
has its table and command. A model folder carries its family in its config
(``webworld_family``, written when webworld saves a policy), so an SFT output of SmolLM2 gets
SmolLM2's settings.
"""

from __future__ import annotations

from typing import Any

# peak RL learning rate (AdamW, after warm-up) per family; "other" is a cautious default for a
# model webworld has not measured
RL_LEARNING_RATES: dict[str, float] = {"tiny": 1e-4, "smollm2": 1e-5, "other": 1e-6}

# SFT (warm-up, then linear decay from this peak): tiny starts from random weights; SmolLM2's
# rate is for its top layers (experiments/sft_settings/REPORT.md: the sweep)
SFT_LEARNING_RATES: dict[str, float] = {"tiny": 1e-3, "smollm2": 1e-3, "other": 2e-5}
# SFT and RL train the top K transformer layers of a pretrained model (0: all of it); tiny
# starts from random weights and trains everything. SmolLM2: its top 8 of 30 layers at 1e-3
# reached the whole model's validation loss (at 3e-4, the best rate for it) in 56% of its wall
# time (experiments/sft_settings/REPORT.md)
TRAIN_LAYERS: dict[str, int] = {"tiny": 0, "smollm2": 8, "other": 0}
# an SFT run takes at least this many optimiser steps, however small the dataset (a one-world
# export is a few hundred chats: one epoch of it is too few steps to learn the format)
SFT_MIN_STEPS = 200
SFT_EPOCHS = 3.0


def family_of(model: Any) -> str:
    """``tiny``, ``smollm2`` or ``other``: what the model's config says, else its shape."""
    config = model.config
    family = getattr(config, "webworld_family", None)
    if family in RL_LEARNING_RATES:
        return family
    smollm2_shape = (getattr(config, "model_type", ""), getattr(config, "hidden_size", 0),
                     getattr(config, "num_hidden_layers", 0)) == ("llama", 576, 30)
    return "smollm2" if smollm2_shape else "other"


def rl_learning_rate(model: Any) -> float:
    return RL_LEARNING_RATES[family_of(model)]


def sft_learning_rate(model: Any) -> float:
    return SFT_LEARNING_RATES[family_of(model)]


def train_layers(model: Any) -> int:
    return TRAIN_LAYERS[family_of(model)]


def sft_steps(chats: int, batch: int, epochs: float, min_steps: int) -> int:
    """Optimiser steps of an SFT run: ``epochs`` over the chats, and at least ``min_steps``."""
    per_epoch = -(-chats // batch)
    return max(min_steps, round(per_epoch * epochs))
