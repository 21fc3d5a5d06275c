"""SFT warm start on the ``sft/`` split of a ``webworld export``.

Each exported record is one step's chat (system, user, assistant) built by
:mod:`webworld.data.prompting`, the very prompt a policy reads when it acts: the prompt is
tokenised as the rollout engine tokenises it, and the loss is the mean negative log-likelihood
of the assistant reply's tokens (up to its stop token) and of nothing else.

The loop is the RL learner's scoring (:func:`~webworld.train.batch.reply_logits`), so it is
fast where TRL's SFTTrainer cannot be on a CPU: the system prompt every chat starts with (about
half of a compact turn's tokens) runs once per batch, the LM head runs only on the reply
positions, batches hold chats of similar length (little padding), and a model family may train
only its top layers (``train_layers``). With the study switches ``relabel_ids`` (or ``shuffle_ids``),
``vary_values``, ``move_choices``, ``rename_choices`` and ``vary_dates`` every epoch sees each
chat anew (:mod:`webworld.data.augment`: its element ids renumbered, the value it types
replaced, the element it picks moved to a sibling's place or renamed, the day it picks moved),
so ids, values, choices and dates come from reading the page and the task, not from
remembering a few sites. A checkpoint comes every
``checkpoint_every`` optimiser steps, at each epoch's end (with the validation loss) and at
the last step, written whole or not at all; a run started again with the same ``out``
resumes from its last checkpoint. The result is ``out/model`` (loadable by
:func:`webworld.train.models.load_policy` and ``webworld eval --policy hf:out/model``) and
``out/sft_summary.json``.
"""

from __future__ import annotations

import json
import math
import random
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator

from webworld.data.augment import move_choice, relabel_ids, rename_choice, vary_date, vary_value
from webworld.data.switches import SFT as SFT_SWITCHES
from webworld.data.switches import StudySwitches, require_applicable
from webworld.errors import UsageError
from webworld.fsio import atomic_write_json, replace_dir, staging_dir
from webworld.settings import aliases, switches
from webworld.train.defaults import (
    SFT_EPOCHS,
    SFT_MIN_STEPS,
    sft_learning_rate,
    sft_steps,
    train_layers,
)
from webworld.train.models import (
    autocast,
    load_policy,
    resolve_device,
    resolve_precision,
    save_policy,
    train_top_layers,
)

if TYPE_CHECKING:
    import torch
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

SUMMARY = "sft_summary.json"
STATE = "trainer_state.json"  # the name transformers gives it: the dashboard reads either
POOL = 32  # batches whose chats are sorted by length together (length bucketing)


class SFTSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    data: Path = Field(description="An export folder with sft/train.jsonl and optionally "
                                   "sft/validation.jsonl (`webworld export --format sft`).")
    extra_data: list[Path] = Field([], description="More exports (of other worlds, in the same "
                                   "observation mode) whose training chats join the first's; "
                                   "validation stays the first export's, comparable across runs.")
    model: str = Field("tiny", description="The policy to start from: tiny, smollm2, gemma3 (the "
                                           "gemma3 extra) or a local model folder.")
    out: Path = Field(description="The run folder: checkpoints/, model/ (the result) and "
                                  f"{SUMMARY}; a run there resumes from its last checkpoint.")
    epochs: float = Field(SFT_EPOCHS, gt=0, description="Passes over the training split.")
    min_steps: int = Field(SFT_MIN_STEPS, ge=1, description="Optimiser steps at least, however "
                                                            "few the chats.")
    learning_rate: float | None = Field(None, gt=0, description="Peak learning rate (warm-up, "
                                        "then linear decay); default: the model family's.",
                                        json_schema_extra=aliases("--lr"))
    warmup_ratio: float = Field(0.03, ge=0, lt=1, description="Share of the steps of linear "
                                                              "warm-up.")
    train_layers: int | None = Field(None, ge=0, description="Train only the top K transformer "
                                     "layers and the final norm (0: all of the model); default: "
                                     "the model family's.")
    batch_size: int = Field(8, ge=1, description="Chats per batch.")
    grad_accum: int = Field(1, ge=1, description="Batches per optimiser step.")
    max_length: int = Field(2048, ge=8, description="Tokens per chat; a longer chat is dropped "
                                                    "(counted in the summary).")
    seed: int = Field(0, description="Seeds the tiny model's weights and the data order.")
    device: Literal["auto", "cpu", "cuda"] = Field("auto", description="auto: CUDA when "
                                                                       "there is one.")
    precision: Literal["auto", "fp32", "bf16"] = Field(
        "auto", description="Compute: bf16 (auto on CUDA) or fp32; weights and the optimiser "
                            "stay fp32.")
    max_steps: int = Field(-1, description="Optimiser steps in all; overrides epochs and "
                                           "min_steps when > 0.")
    checkpoint_every: int = Field(100, ge=1, description="Optimiser steps between checkpoints "
                                                         "(and one at each epoch's end).")
    save_total_limit: int = Field(2, ge=1, description="Checkpoints kept (the newest).")
    study: StudySwitches = Field(default_factory=StudySwitches, description="Study switches "
                                 "that change the training chats (each epoch anew, or "
                                 "skip_detours: once).", json_schema_extra=switches(*SFT_SWITCHES))

    @field_validator("study")
    @classmethod
    def _switches_of_sft(cls, study: StudySwitches) -> StudySwitches:
        require_applicable(study, SFT_SWITCHES, "train sft")
        return study


@dataclass
class SFTResult:
    model_dir: Path
    train_loss: float  # mean over this run's optimiser steps (NaN: none were left to take)
    validation_losses: list[float]  # one per epoch end (and at a max_steps stop)
    steps: int  # the global step reached, counting steps of resumed runs
    seconds: float


@dataclass
class Chat:
    """One training example: the prompt's tokens and the reply's (its stop token included)."""

    prompt_ids: list[int]
    reply_ids: list[int]

    def __len__(self) -> int:
        return len(self.prompt_ids) + len(self.reply_ids)


@dataclass
class RunState:
    """What a checkpoint keeps of the run besides the weights and the optimiser."""

    step: int = 0
    log_history: list[dict[str, float]] = field(default_factory=list)


def run_sft(settings: SFTSettings, *, progress: bool = True) -> SFTResult:
    """Fine-tune ``settings.model`` on the export's chats; writes ``out/model`` and the summary."""
    import torch

    started = time.monotonic()
    device = resolve_device(settings.device)
    train_chats = training_chats(settings)
    has_validation = _split_path(settings.data, "validation").is_file()
    validation_chats = read_split(settings.data, "validation") if has_validation else []
    resume = last_checkpoint(settings.out)
    source = str(resume / "model") if resume is not None else settings.model
    model, tokenizer = load_policy(source, seed=settings.seed, device=device,
                                   dtype=torch.float32)
    settings = resolved(settings, model, len(train_chats))
    # the policy remembers the page text it learnt from: RL and eval default to it
    model.config.webworld_observation = export_observation(settings.data)
    given = len(train_chats)
    train_chats, train = fitting_chats(tokenizer, train_chats, settings.max_length)
    if not train:
        raise UsageError(f"every training chat is longer than max_length={settings.max_length}",
                         str(_split_path(settings.data, "train")))
    validation = encode_chats(tokenizer, validation_chats, settings.max_length)
    augmented = (partial(augmented_chats, tokenizer, train_chats, settings)
                 if settings.study.augments else None)
    trainer = _Trainer(settings, model, tokenizer, train, validation, device, augmented)
    state = RunState()
    if resume is not None:
        state = trainer.load(resume)
    losses = trainer.train(state, progress)
    save_policy(model, tokenizer, settings.out / "model")
    result = SFTResult(
        model_dir=settings.out / "model",
        train_loss=float(np.mean(losses)) if losses else math.nan,
        validation_losses=[e["eval_loss"] for e in state.log_history if "eval_loss" in e],
        steps=state.step, seconds=round(time.monotonic() - started, 2))
    _write_summary(settings, result, train=given, kept=len(train),
                   resumed_from=str(resume) if resume else None)
    return result


def resolved(settings: SFTSettings, model: PreTrainedModel, chats: int) -> SFTSettings:
    """The family's learning rate and trained layers where none were given, the step count
    (``epochs`` over the chats but at least ``min_steps``; ``max_steps`` > 0 overrides both),
    and the compute ``auto`` picks on the model's device (so the summary says which ran)."""
    changes: dict[str, Any] = {
        "precision": resolve_precision(settings.precision, str(next(model.parameters()).device))}
    if settings.learning_rate is None:
        changes["learning_rate"] = sft_learning_rate(model)
    if settings.train_layers is None:
        changes["train_layers"] = train_layers(model)
    if settings.max_steps <= 0:
        changes["max_steps"] = sft_steps(chats, settings.batch_size * settings.grad_accum,
                                         settings.epochs, settings.min_steps)
    return settings.model_copy(update=changes)


def training_chats(settings: SFTSettings) -> list[list[dict[str, str]]]:
    """The training split of ``data`` and of each ``extra_data`` export, which must have been
    made in the same observation mode (the policy acts in one)."""
    chats = read_split(settings.data, "train", skip_detours=settings.study.skip_detours)
    mode = export_observation(settings.data)
    for extra in settings.extra_data:
        more = read_split(extra, "train", skip_detours=settings.study.skip_detours)  # an export, first
        if export_observation(extra) != mode:
            raise UsageError(f"this export's observation mode is {export_observation(extra)!r}, "
                             f"the first's ({settings.data}) {mode!r}: export both in one mode",
                             str(Path(extra) / "manifest.json"))
        chats += more
    return chats


def export_observation(data: Path) -> str | None:
    """The observation mode an export was made with (its manifest), if it says."""
    try:
        return json.loads((Path(data) / "manifest.json").read_text(encoding="utf-8"))["observation"]
    except (OSError, ValueError, KeyError, TypeError):
        return None


# --- data ------------------------------------------------------------------------------------


def read_split(data: Path, split: str, *, skip_detours: bool = False
               ) -> list[list[dict[str, str]]]:
    """``sft/<split>.jsonl`` as chats (role and content of each message; screenshots and ids
    dropped), each ending with the assistant's reply; with ``skip_detours`` without the chats
    the export marks ``detour``."""
    path = _split_path(data, split)
    if not path.is_file():
        raise UsageError(f"no SFT {split} split here; make one with `webworld export TRAJ_ROOT "
                         f"--out {data} --format sft`", str(path))
    chats = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            record = _record(line, f"{path}:{n}")
            if not (skip_detours and _detour(record, f"{path}:{n}")):
                chats.append(_chat(record, f"{path}:{n}"))
    if not chats:
        raise UsageError(f"the SFT {split} split has no chats", str(path))
    return chats


def _split_path(data: Path, split: str) -> Path:
    return Path(data) / "sft" / f"{split}.jsonl"


def _record(line: str, where: str) -> dict[str, Any]:
    try:
        record = json.loads(line)
    except ValueError:
        record = None
    if not isinstance(record, dict):
        raise UsageError("not an SFT record: want {\"messages\": [{\"role\", \"content\"}, ...]}",
                         where)
    return record


def _detour(record: dict[str, Any], where: str) -> bool:
    if "detour" not in record:
        raise UsageError("this export marks no detours (made before `webworld export` wrote "
                         "them): export it again to skip them", where)
    return bool(record["detour"])


def _chat(record: dict[str, Any], where: str) -> list[dict[str, str]]:
    try:
        messages = record["messages"]
        chat = [{"role": m["role"], "content": m["content"]} for m in messages]
    except (KeyError, TypeError):
        raise UsageError("not an SFT record: want {\"messages\": [{\"role\", \"content\"}, ...]}",
                         where) from None
    if len(chat) < 2 or chat[-1]["role"] != "assistant":
        raise UsageError("an SFT chat ends with the assistant's reply, after its prompt", where)
    return chat


def encode_chat(tokenizer: PreTrainedTokenizerBase, chat: list[dict[str, str]],
                stop_ids: list[int]) -> Chat:
    """The prompt's tokens as the rollout engine makes them (chat template, generation
    prompt), and the reply's up to and including its first stop token: what a policy samples."""
    prompt = tokenizer.apply_chat_template(chat[:-1], tokenize=True, add_generation_prompt=True,
                                           return_dict=False)
    whole = tokenizer.apply_chat_template(chat, tokenize=True, return_dict=False)
    if whole[:len(prompt)] != prompt:
        raise UsageError("the chat template does not extend the prompt with the reply: "
                         "cannot tell the reply's tokens")
    reply = whole[len(prompt):]
    stop = next((i for i, t in enumerate(reply) if t in stop_ids), None)
    return Chat(prompt, reply[:stop + 1] if stop is not None else reply)


def encode_chats(tokenizer: PreTrainedTokenizerBase, chats: list[list[dict[str, str]]],
                 max_length: int | None) -> list[Chat]:
    """Every chat that fits ``max_length`` tokens (None: any length) with its reply."""
    return fitting_chats(tokenizer, chats, max_length)[1]


def augmented_chats(tokenizer: PreTrainedTokenizerBase, chats: list[list[dict[str, str]]],
                    settings: SFTSettings, epoch: int) -> list[Chat]:
    """``chats`` encoded with the augmentations ``settings`` asks for, drawn anew for each
    (seed, epoch): the same in a resumed run."""
    rng = random.Random(f"{settings.seed}-{epoch}")
    if settings.study.move_choices:
        chats = [move_choice(chat, rng) for chat in chats]
    if settings.study.rename_choices:
        chats = [rename_choice(chat, rng) for chat in chats]
    if settings.study.vary_values:
        chats = [vary_value(chat, rng) for chat in chats]
    if settings.study.vary_dates:
        chats = [vary_date(chat, rng) for chat in chats]
    if settings.study.relabel_ids or settings.study.shuffle_ids:
        chats = [relabel_ids(chat, rng, ordered=not settings.study.shuffle_ids) for chat in chats]
    return encode_chats(tokenizer, chats, None)


def fitting_chats(tokenizer: PreTrainedTokenizerBase, chats: list[list[dict[str, str]]],
                  max_length: int | None) -> tuple[list[list[dict[str, str]]], list[Chat]]:
    """The chats that fit ``max_length`` tokens with their reply, as given and encoded."""
    from webworld.train.engine import stop_token_ids

    stops = stop_token_ids(tokenizer)
    pairs = [(chat, encode_chat(tokenizer, chat, stops)) for chat in chats]
    kept = [(chat, c) for chat, c in pairs
            if c.reply_ids and (max_length is None or len(c) <= max_length)]
    return [chat for chat, _ in kept], [c for _, c in kept]


def epoch_batches(lengths: list[int], batch_size: int, seed: int, epoch: int) -> list[list[int]]:
    """One epoch's batches of chat indices: shuffled, sorted by length within pools of
    :data:`POOL` batches (so a batch pads little), and the batches in random order. The same
    (seed, epoch) gives the same batches, so a resumed run sees the data as a whole run would."""
    rng = np.random.default_rng([seed, epoch])
    order = rng.permutation(len(lengths)).tolist()
    pool = POOL * batch_size
    batches = []
    for start in range(0, len(order), pool):
        chunk = sorted(order[start:start + pool], key=lambda i: lengths[i])
        batches += [chunk[i:i + batch_size] for i in range(0, len(chunk), batch_size)]
    return [batches[i] for i in rng.permutation(len(batches)).tolist()]


# --- the loop --------------------------------------------------------------------------------


class _Trainer:
    def __init__(self, settings: SFTSettings, model: Any, tokenizer: Any, train: list[Chat],
                 validation: list[Chat], device: str,
                 augmented: Callable[[int], list[Chat]] | None = None) -> None:
        import torch

        self.settings, self.model, self.tokenizer = settings, model, tokenizer
        self.train_chats, self.validation, self.augmented = train, validation, augmented
        self.device = device  # settings come resolved (run_sft's `resolved`): bf16 or fp32
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else \
            tokenizer.eos_token_id
        trainable = train_top_layers(model, settings.train_layers or 0)
        self.optimizer = torch.optim.AdamW(trainable, lr=settings.learning_rate, weight_decay=0.0)
        total, warmup = settings.max_steps, math.ceil(settings.warmup_ratio * settings.max_steps)
        self.schedule = torch.optim.lr_scheduler.LambdaLR(
            self.optimizer, lambda s: (s + 1) / warmup if s < warmup else
            max(0.0, (total - s) / max(1, total - warmup)))
        self.per_epoch = math.ceil(len(train) / settings.batch_size)
        self._epochs: dict[int, tuple[list[Chat], list[list[int]]]] = {}

    def batches_of_step(self, step: int) -> Iterator[tuple[int, list[Chat]]]:
        """(epoch, chats) of each batch optimiser step ``step`` (0-based) learns from."""
        ga = self.settings.grad_accum
        for g in range(step * ga, (step + 1) * ga):
            epoch, k = divmod(g, self.per_epoch)
            if epoch not in self._epochs:  # an epoch's chats (augmented anew) and batches
                chats = self.augmented(epoch) if self.augmented else self.train_chats
                self._epochs = {epoch: (chats, epoch_batches([len(c) for c in chats],
                                                             self.settings.batch_size,
                                                             self.settings.seed, epoch))}
            chats, batches = self._epochs[epoch]
            yield epoch, [chats[i] for i in batches[k]]

    def train(self, state: RunState, progress: bool) -> list[float]:
        """Optimiser steps from ``state.step`` to ``max_steps``; the loss of each."""
        from rich.progress import Progress

        total, losses = self.settings.max_steps, []
        self.model.train()
        with Progress(disable=not progress, transient=True) as bar:
            task = bar.add_task("SFT", total=total, completed=state.step)
            while state.step < total:
                loss, epoch = self.step(state.step)
                state.step += 1
                losses.append(loss)
                epoch_end = state.step * self.settings.grad_accum % self.per_epoch == 0
                last = state.step == total
                if state.step % 10 == 0 or last:
                    state.log_history.append({"step": state.step, "epoch": epoch,
                                              "loss": round(float(np.mean(losses[-10:])), 6),
                                              "learning_rate": self.schedule.get_last_lr()[0]})
                    if progress and not bar.console.is_terminal:  # a log file: one line
                        bar.console.print(f"SFT step {state.step}/{total}: "
                                          f"{state.log_history[-1]}")
                if (epoch_end or last) and self.validation:
                    state.log_history.append({"step": state.step, "epoch": epoch,
                                              "eval_loss": self.validation_loss()})
                if epoch_end or last or state.step % self.settings.checkpoint_every == 0:
                    self.save(state)
                bar.update(task, completed=state.step,
                           description=f"SFT loss {np.mean(losses[-10:]):.3f}")
        self.model.eval()
        return losses

    def step(self, step: int) -> tuple[float, int]:
        """One optimiser step: (its mean loss, the epoch it is in)."""
        import torch

        self.optimizer.zero_grad(set_to_none=True)
        parts, epochs = [], []
        for epoch, batch in self.batches_of_step(step):
            loss = self.loss(batch)
            (loss / self.settings.grad_accum).backward()
            parts.append(float(loss.detach()))
            epochs.append(epoch)
        trainable = [p for g in self.optimizer.param_groups for p in g["params"]]
        torch.nn.utils.clip_grad_norm_(trainable, 1.0)
        self.optimizer.step()
        self.schedule.step()
        return float(np.mean(parts)), epochs[-1]

    def loss(self, chats: list[Chat]) -> torch.Tensor:
        """Mean negative log-likelihood of the batch's reply tokens."""
        import torch

        from webworld.train.batch import reply_batch, reply_logits

        batch = reply_batch([(c.prompt_ids, c.reply_ids) for c in chats],
                            [len(c.reply_ids) for c in chats], self.pad_id)
        with autocast(self.device, self.settings.precision):
            logits = reply_logits(self.model, batch)  # (N, V) fp32
        return torch.nn.functional.cross_entropy(logits, batch.targets.to(logits.device))

    def validation_loss(self) -> float:
        import torch

        was_training = self.model.training
        self.model.eval()
        total, tokens = 0.0, 0
        with torch.no_grad():
            order = sorted(range(len(self.validation)), key=lambda i: len(self.validation[i]))
            size = self.settings.batch_size
            for start in range(0, len(order), size):
                chats = [self.validation[i] for i in order[start:start + size]]
                n = sum(len(c.reply_ids) for c in chats)
                total += float(self.loss(chats)) * n
                tokens += n
        self.model.train(was_training)
        return round(total / max(tokens, 1), 6)

    # --- checkpoints ---------------------------------------------------------------------

    def save(self, state: RunState) -> None:
        import torch

        folder = self.settings.out / "checkpoints" / f"checkpoint-{state.step}"
        with staging_dir(folder) as tmp:
            save_policy(self.model, self.tokenizer, tmp / "model")
            torch.save({"optimizer": self.optimizer.state_dict(),
                        "schedule": self.schedule.state_dict()}, tmp / "optimizer.pt")
            atomic_write_json(tmp / STATE, {"global_step": state.step,
                                            "log_history": state.log_history})
            replace_dir(tmp, folder)
        for old in checkpoints(self.settings.out)[:-self.settings.save_total_limit]:
            shutil.rmtree(old, ignore_errors=True)

    def load(self, folder: Path) -> RunState:
        """The optimiser, schedule and progress of a checkpoint (its weights are loaded)."""
        import torch

        saved = torch.load(folder / "optimizer.pt", weights_only=False)
        self.optimizer.load_state_dict(saved["optimizer"])
        self.schedule.load_state_dict(saved["schedule"])
        state = json.loads((folder / STATE).read_text(encoding="utf-8"))
        return RunState(state["global_step"], state["log_history"])


def checkpoints(out: Path) -> list[Path]:
    folder = Path(out) / "checkpoints"
    found = [p for p in folder.glob("checkpoint-*") if (p / STATE).is_file()] \
        if folder.is_dir() else []
    return sorted(found, key=lambda p: int(p.name.rsplit("-", 1)[-1]))


def last_checkpoint(out: Path) -> Path | None:
    found = checkpoints(out)
    return found[-1] if found else None


def _write_summary(settings: SFTSettings, result: SFTResult, *, train: int, kept: int,
                   resumed_from: str | None) -> None:
    summary: dict[str, Any] = {
        **asdict(result), "model_dir": str(result.model_dir),
        "train_loss": result.train_loss if math.isfinite(result.train_loss) else None,
        "train_chats": train, "dropped_too_long": train - kept,
        "resumed_from": resumed_from, "settings": settings.model_dump(mode="json"),
    }
    atomic_write_json(settings.out / SUMMARY, summary)
