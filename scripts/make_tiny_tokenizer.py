"""Train the byte-level BPE tokenizer shipped as ``webworld/train/tiny_tokenizer.json``.

``--model tiny`` needs a tokenizer and nothing may be downloaded, so one is trained here on
webworld's own text: the system prompt, the SFT chats of three shipped worlds in both
observation modes, and the strings of every shipped spec. The chats come from the real
pipeline (render, explore, verify in Chromium, export), so the vocabulary fits what a
policy reads. Everything is fixed (worlds,
limits, seeds, corpus order, trainer settings): running it again gives the same file.

    .venv/bin/python scripts/make_tiny_tokenizer.py [--out PATH] [--work DIR]

Verification in Chromium takes a few minutes; ``--work`` keeps (and reuses) the worlds.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

from webworld.data.prompting import SYSTEM_PROMPT
from webworld.fsio import atomic_write_text

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "webworld" / "train" / "tiny_tokenizer.json"
SPECS = ROOT / "fsm_specs"
WORLDS = ("flight_booking_easy_s0", "food_delivery_easy_s0", "online_bank_medium_s2")
EXPLORE_LIMITS = ("--max-shortest", "2", "--max-longer", "1", "--max-instances", "3")
MODES = ("compact", "full")
VOCAB_SIZE = 4096
SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|pad|>"]  # ids 0..3


def webworld(*args: str, cwd: Path) -> None:
    """The CLI installed next to this Python, so the worlds come from this checkout."""
    exe = Path(sys.executable).with_name("webworld")
    if not exe.exists():
        sys.exit(f"no webworld CLI next to {sys.executable}: run with the project's venv")
    subprocess.run([str(exe), *args], cwd=cwd, check=True, stdout=subprocess.DEVNULL)


def build_exports(work: Path) -> list[Path]:
    """Render, explore, verify and export the worlds; one SFT export per observation mode."""
    specs = [str(SPECS / f"{w}.json") for w in WORLDS]
    webworld("render", *specs, "--out", "sites", cwd=work)
    webworld("explore", *specs, "--out", "traj", *EXPLORE_LIMITS, cwd=work)
    webworld("verify", *WORLDS, "--sites", "sites", "--trajectories", "traj", "--workers", "2",
             cwd=work)
    exports = []
    for mode in MODES:
        webworld("export", "traj", "--out", f"export_{mode}", "--format", "sft", "--seed", "0",
                 "--observation", mode, cwd=work)
        exports.append(work / f"export_{mode}")
    return exports


def corpus(exports: list[Path]) -> list[str]:
    """Distinct texts in a fixed order: every message of the exported chats (as ``role``
    then content: the chat template writes the role names too) and every string of every
    shipped spec, whose page copy and names let the vocabulary fit worlds beyond the three.

    Distinct: the system prompt of every step and a page that many paths share would
    otherwise outweigh everything else.
    """
    texts = {f"system\n{SYSTEM_PROMPT}"}
    for export in exports:
        for path in sorted((export / "sft").glob("*.jsonl")):
            for line in path.read_text(encoding="utf-8").splitlines():
                texts.update(f"{m['role']}\n{m['content']}" for m in json.loads(line)["messages"])
    for spec in sorted(SPECS.glob("*.json")):
        texts.update(strings(json.loads(spec.read_text(encoding="utf-8"))))
    return sorted(texts)


def strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def train(texts: list[str]) -> Tokenizer:
    tokenizer = Tokenizer(models.BPE())
    # byte-level: every string is some sequence of the 256 byte symbols, so nothing is unknown
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(vocab_size=VOCAB_SIZE, min_frequency=1, show_progress=False,
                                  special_tokens=SPECIAL_TOKENS,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tokenizer.train_from_iterator(texts, trainer=trainer, length=len(texts))
    return tokenizer


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT, help="the tokenizer JSON to write")
    parser.add_argument("--work", type=Path, help="keep the worlds and exports here (default: a temp dir)")
    args = parser.parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="webworld-tok-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        texts = corpus(build_exports(work.resolve()))
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    tokenizer = train(texts)
    atomic_write_text(args.out, tokenizer.to_str())
    ids = tokenizer.encode(SYSTEM_PROMPT).ids
    print(f"wrote {args.out}: vocab {tokenizer.get_vocab_size()}, trained on {len(texts)} texts; "
          f"system prompt {len(SYSTEM_PROMPT)} chars -> {len(ids)} tokens")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
