"""SFT warm start: TRL's SFTTrainer on the ``sft/`` split of a ``webworld export``.

Each exported record is one step's chat (system, user, assistant) built by
:mod:`webworld.data.prompting`, the very prompt a policy reads when it acts, so nothing is
re-formatted here: a record becomes TRL's conversational prompt-completion pair (prompt =
system + user, completion = the assistant reply) and TRL's completion-only loss trains on
the reply alone. Validation loss and a checkpoint come at the end of each epoch; a run
started again with the same ``out`` resumes from its last checkpoint. The result is
``out/model`` (loadable by :func:`webworld.train.models.load_policy` and ``webworld eval
--policy hf:out/model``) and ``out/sft_summary.json``.
"""

from __future__ import annotations

import contextlib
import json
import math
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from webworld.errors import UsageError
from webworld.fsio import atomic_write_json
from webworld.train.defaults import SFT_EPOCHS, SFT_MIN_STEPS, sft_learning_rate, sft_steps
from webworld.train.models import load_policy, resolve_device, save_policy

if TYPE_CHECKING:
    from datasets import Dataset
    from transformers import PreTrainedModel, PreTrainedTokenizerBase, TrainerState
    from trl import SFTTrainer

SUMMARY = "sft_summary.json"


class SFTSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    data: Path = Field(description="An export folder with sft/train.jsonl and optionally "
                                   "sft/validation.jsonl (`webworld export --format sft`).")
    model: str = Field("tiny", description="The policy to start from: tiny, smollm2 or a local "
                                           "model folder.")
    out: Path = Field(description="The run folder: checkpoints/, model/ (the result) and "
                                  f"{SUMMARY}; a run there resumes from its last checkpoint.")
    epochs: float = Field(SFT_EPOCHS, gt=0, description="Passes over the training split.")
    min_steps: int = Field(SFT_MIN_STEPS, ge=1, description="Optimiser steps at least, however "
                                                            "few the chats.")
    learning_rate: float | None = Field(None, gt=0, description="Peak learning rate (linear "
                                        "decay); default: the model family's.")
    batch_size: int = Field(8, ge=1, description="Chats per device batch.")
    grad_accum: int = Field(1, ge=1, description="Batches per optimiser step.")
    max_length: int = Field(2048, ge=8, description="Tokens per chat; longer chats are cut at "
                                                    "the end, and dropped if no reply is left.")
    seed: int = Field(0, description="Seeds the tiny model's weights and the data order.")
    device: Literal["auto", "cpu", "cuda"] = Field("auto", description="auto: CUDA when "
                                                                       "there is one.")
    max_steps: int = Field(-1, description="Optimiser steps in all; overrides epochs and "
                                           "min_steps when > 0.")
    save_total_limit: int = Field(2, ge=1, description="Checkpoints kept (the newest).")


@dataclass
class SFTResult:
    model_dir: Path
    train_loss: float  # mean over this run's optimiser steps (NaN: none were left to take)
    validation_losses: list[float]  # one per epoch end (and at a max_steps stop)
    steps: int  # the global step reached, counting steps of resumed runs
    seconds: float


def run_sft(settings: SFTSettings, *, progress: bool = True) -> SFTResult:
    """Fine-tune ``settings.model`` on the export's chats; writes ``out/model`` and the summary."""
    started = time.monotonic()
    train = read_split(settings.data, "train")
    has_validation = _split_path(settings.data, "validation").is_file()
    validation = read_split(settings.data, "validation") if has_validation else None
    device = resolve_device(settings.device)
    model, tokenizer = load_policy(settings.model, seed=settings.seed)  # the trainer places it
    settings = resolved(settings, model, len(train))
    # the policy remembers the page text it learnt from: RL and eval default to it
    model.config.webworld_observation = export_observation(settings.data)
    with _quiet(not progress):
        trainer = make_trainer(settings, model, tokenizer, train, validation, device, progress)
        kept = len(trainer.train_dataset)
        if kept == 0:
            raise UsageError(f"every training chat is longer than max_length={settings.max_length} "
                             "without its reply", str(_split_path(settings.data, "train")))
        resume = _last_checkpoint(settings.out / "checkpoints")
        model, train_loss, state = _train(trainer, resume)
        save_policy(model, tokenizer, settings.out / "model")
    losses = [float(e["eval_loss"]) for e in state.log_history if "eval_loss" in e]
    result = SFTResult(model_dir=settings.out / "model", train_loss=float(train_loss),
                       validation_losses=losses, steps=state.global_step,
                       seconds=round(time.monotonic() - started, 2))
    _write_summary(settings, result, train=len(train), kept=kept, resumed_from=resume)
    return result


def resolved(settings: SFTSettings, model: PreTrainedModel, chats: int) -> SFTSettings:
    """The family's learning rate if none was given, and the step count: ``epochs`` over the
    chats but at least ``min_steps`` (``max_steps`` > 0 overrides both)."""
    changes: dict[str, Any] = {}
    if settings.learning_rate is None:
        changes["learning_rate"] = sft_learning_rate(model)
    if settings.max_steps <= 0:
        changes["max_steps"] = sft_steps(chats, settings.batch_size * settings.grad_accum,
                                         settings.epochs, settings.min_steps)
    return settings.model_copy(update=changes)


def export_observation(data: Path) -> str | None:
    """The observation mode an export was made with (its manifest), if it says."""
    try:
        return json.loads((Path(data) / "manifest.json").read_text(encoding="utf-8"))["observation"]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _last_checkpoint(folder: Path) -> str | None:
    from transformers.trainer_utils import get_last_checkpoint

    return get_last_checkpoint(str(folder)) if folder.is_dir() else None


def _train(trainer: SFTTrainer, resume: str | None) -> tuple[PreTrainedModel, float, TrainerState]:
    """Train, on from ``resume`` if given: (model, mean train loss, trainer state). A run whose
    checkpoint is at its last step is not resumed: transformers would take one step past the
    end of a ``max_steps`` run; its model is the checkpoint's and the loss NaN."""
    from transformers import TrainerState

    if resume is not None:
        state = TrainerState.load_from_json(str(Path(resume) / "trainer_state.json"))
        total = trainer.set_initial_training_values(trainer.args, trainer.get_train_dataloader())[-1]
        if state.global_step >= total:
            return load_policy(resume)[0], math.nan, state
    output = trainer.train(resume_from_checkpoint=resume)
    return trainer.model, output.training_loss, trainer.state


def read_split(data: Path, split: str) -> Dataset:
    """``sft/<split>.jsonl`` as prompt-completion chats (screenshots and ids dropped)."""
    from datasets import Dataset

    path = _split_path(data, split)
    if not path.is_file():
        raise UsageError(f"no SFT {split} split here; make one with `webworld export TRAJ_ROOT "
                         f"--out {data} --format sft`", str(path))
    rows = [_prompt_completion(line, f"{path}:{n}")
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if line.strip()]
    if not rows:
        raise UsageError(f"the SFT {split} split has no chats", str(path))
    return Dataset.from_list(rows)


def _split_path(data: Path, split: str) -> Path:
    return Path(data) / "sft" / f"{split}.jsonl"


def _prompt_completion(line: str, where: str) -> dict[str, list[dict[str, str]]]:
    try:
        messages = json.loads(line)["messages"]
        chat = [{"role": m["role"], "content": m["content"]} for m in messages]
    except (ValueError, KeyError, TypeError):
        raise UsageError("not an SFT record: want {\"messages\": [{\"role\", \"content\"}, ...]}",
                         where) from None
    if len(chat) < 2 or chat[-1]["role"] != "assistant":
        raise UsageError("an SFT chat ends with the assistant's reply, after its prompt", where)
    return {"prompt": chat[:-1], "completion": chat[-1:]}


def make_trainer(settings: SFTSettings, model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase,
                 train: Dataset, validation: Dataset | None, device: str, progress: bool) -> SFTTrainer:
    """TRL's SFTTrainer with webworld's settings; the datasets are tokenised (and labelled)
    when it is built."""
    import torch
    import trl
    from transformers import PrinterCallback

    args = trl.SFTConfig(
        output_dir=str(settings.out / "checkpoints"),
        num_train_epochs=settings.epochs, max_steps=settings.max_steps,
        learning_rate=settings.learning_rate,
        per_device_train_batch_size=settings.batch_size, per_device_eval_batch_size=settings.batch_size,
        gradient_accumulation_steps=settings.grad_accum, max_length=settings.max_length,
        completion_only_loss=True,  # the loss is on the assistant's reply, never on the page
        eval_strategy="epoch" if validation is not None else "no",
        save_strategy="epoch", save_total_limit=settings.save_total_limit,
        logging_steps=10, report_to=[], seed=settings.seed, data_seed=settings.seed,
        use_cpu=device == "cpu", bf16=device == "cuda" and torch.cuda.is_bf16_supported(),
        activation_checkpointing=True,  # TRL's default (memory), by transformers 5's name
        disable_tqdm=not progress, dataset_num_proc=None)
    trainer = trl.SFTTrainer(model=model, args=args, train_dataset=train, eval_dataset=validation,
                             processing_class=tokenizer)
    if not progress:  # without tqdm, transformers prints every log line instead
        trainer.remove_callback(PrinterCallback)
    return trainer


def _write_summary(settings: SFTSettings, result: SFTResult, *, train: int, kept: int,
                   resumed_from: str | None) -> None:
    summary: dict[str, Any] = {
        **asdict(result), "model_dir": str(result.model_dir),
        "train_loss": result.train_loss if math.isfinite(result.train_loss) else None,
        "train_chats": train, "dropped_too_long": train - kept,
        "resumed_from": resumed_from, "settings": settings.model_dump(mode="json"),
    }
    atomic_write_json(settings.out / SUMMARY, summary)


@contextlib.contextmanager
def _quiet(quiet: bool) -> Iterator[None]:
    """Without ``progress``, also no bars from datasets (TRL tokenises through ``map``) nor
    from transformers (writing checkpoints)."""
    import datasets
    from transformers.utils import logging

    shown = (not datasets.are_progress_bars_disabled(), logging.is_progress_bar_enabled())
    if quiet:
        datasets.disable_progress_bars()
        logging.disable_progress_bar()
    try:
        yield
    finally:
        if quiet and shown[0]:
            datasets.enable_progress_bars()
        if quiet and shown[1]:
            logging.enable_progress_bar()
