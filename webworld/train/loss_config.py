"""The losses' hyper-parameters, apart from :mod:`webworld.train.losses` so that the settings
(and the CLI options made from them) load without torch."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class LossConfig(BaseModel):
    """Hyper-parameters of every loss; defaults follow each method's paper (and TRL)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    epsilon_low: float = Field(0.2, gt=0, description="GRPO token clip below 1")
    epsilon_high: float = Field(0.2, gt=0, description="GRPO token clip above 1 (DAPO: 0.28)")
    gspo_epsilon_low: float = Field(3e-4, gt=0, description="GSPO sequence clip below 1 "
                                    "(length-normalised ratios stay near 1)")
    gspo_epsilon_high: float = Field(4e-4, gt=0, description="GSPO sequence clip above 1")
    sapo_tau_pos: float = Field(1.0, gt=0, description="SAPO gate temperature for A > 0")
    sapo_tau_neg: float = Field(1.05, gt=0, description="SAPO gate temperature for A <= 0 "
                                "(sharper: negative updates are riskier)")
    vespo_k_pos: float = Field(2.0, description="VESPO phi(W) = e^lambda W^k e^(-lambda W): k, A >= 0")
    vespo_lambda_pos: float = Field(3.0, description="VESPO lambda, A >= 0")
    vespo_k_neg: float = Field(3.0, description="VESPO k, A < 0")
    vespo_lambda_neg: float = Field(2.0, description="VESPO lambda, A < 0")
    # the paper averages over all tokens of the batch; webworld's failing episodes run more
    # turns than successful ones, so there they would outweigh successes on the tokens both
    # share (measured: 46e44e0:docs/tiny_tour.md). The default gives every episode the same weight.
    vespo_reduction: Literal["token", "sequence"] = Field(
        "sequence", description="VESPO's mean: over each episode's tokens, then over episodes; "
        "or over all tokens of the batch (the paper's)")
