#!/usr/bin/env bash
# Make the kit a lent GPU machine needs to train and bench webworld there (see
# experiments/gpu_run.py): wheels of the packages that machine lacks, in the versions this
# venv runs, in .whl/; a few built worlds with their fast-env snapshots and their compact SFT
# export, and the SmolLM2 weights cut in three parts (a call carries at most 64 MiB), in gpu_kit/.
# Both folders are git-ignored. Idempotent: what is there is kept.
#   bash scripts/gpu_kit.sh            then, on the device, the calls it prints
#   bash scripts/gpu_kit.sh learning   also experiments/learning.py's worlds and export (its
#                                      build stages: about 80 minutes on 2 cores), for
#                                      `gpu_run.py --plan learning`
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh smollm2
py=.venv/bin/python
kit=gpu_kit

# the device image has torch, numpy, jinja2, networkx, rich, typer, tensorboard, matplotlib,
# pytest, tokenizers 0.23; webworld's training path needs these besides (transformers: the
# learner passes the KV cache as `cache=`, which the image's 5.17 lacks)
wheels="transformers pydantic pydantic-core annotated-types typing-inspection
        typing-extensions annotated-doc gymnasium farama-notifications faker miniwob gguf"
mkdir -p .whl
for name in $wheels; do
    version=$($py -c "import importlib.metadata as m; print(m.version('$name'))")
    ls .whl/ | grep -qi "^${name//-/_}-${version}-" && continue
    $py -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
        --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
        --platform manylinux2014_x86_64 -d .whl "$name==$version"
done
# the wheels again, stored uncompressed in one xz archive: 20 MB of wheels carry as 9 MB
if [ ! -f "$kit/wheels.tar.xz" ] || [ -n "$(find .whl -newer "$kit/wheels.tar.xz")" ]; then
    stored=$(mktemp -d)
    $py - .whl "$stored/wheels" <<'PY'
import sys, zipfile
from pathlib import Path
source, target = Path(sys.argv[1]), Path(sys.argv[2])
target.mkdir()
for wheel in sorted(source.glob("*.whl")):
    with zipfile.ZipFile(wheel) as packed, zipfile.ZipFile(target / wheel.name, "w") as stored:
        for entry in packed.infolist():
            data = packed.read(entry)
            entry.compress_type = zipfile.ZIP_STORED
            stored.writestr(entry, data)
PY
    mkdir -p "$kit" && tar cf - -C "$stored" wheels | xz -9 -T0 > "$kit/wheels.tar.xz.part"
    mv "$kit/wheels.tar.xz.part" "$kit/wheels.tar.xz" && rm -rf "$stored"
fi

worlds=$kit/worlds
if [ ! -f "$worlds/.done" ]; then
    .venv/bin/webworld build --profile easy --seed 1 --max-instances 2 --max-shortest 1 \
        --max-longer 0 --theme "online bookstore" --theme "car rental" --theme "job board" \
        --specs-out "$worlds/specs" --sites-out "$worlds/sites" --out "$worlds/trajectories" \
        --dataset-out "$kit/dataset-full"
    .venv/bin/webworld env snapshot --sites "$worlds/sites"
    .venv/bin/webworld export "$worlds/trajectories" --out "$kit/data" --format sft \
        --observation compact --splits 1,0,0
    rm -rf "$kit/dataset-full"
    touch "$worlds/.done"
fi

# bench/bench_rl.py's world with its snapshot (--keep): the device has no browser to build it
if [ ! -f "$kit/bench/.done" ]; then
    PYTHONPATH=bench $py - "$kit/bench" <<'PY'
import sys
from pathlib import Path
from bench_env import prepare
from bench_rl import WORLD
from benchkit import make_console
prepare(Path(sys.argv[1]), [WORLD], make_console())
PY
    touch "$kit/bench/.done"
fi
# what the device never reads (screenshots): a call carries at most 64 MiB
rm -rf "$kit"/data/images "$kit"/data/assets "$kit"/*/trajectories/*/images "$kit"/*/sites/*/static/*.png

# experiments/learning.py's training worlds and compact export, as built by its own stages,
# and the held-out worlds (as `webworld eval --suite heldout` makes them) with their snapshots
if [ "${1:-}" = learning ] && [ ! -f "$kit/learning/.done" ]; then
    $py experiments/learning.py --until build
    [ -d runs/heldout/sites ] || .venv/bin/webworld eval heldout --out runs/heldout --workers 2
    .venv/bin/webworld env snapshot --sites runs/heldout/sites
    rm -rf "$kit/learning" && mkdir -p "$kit/learning/worlds" "$kit/learning/data"
    cp -r runs/learning/worlds/sites runs/learning/worlds/trajectories "$kit/learning/worlds/"
    cp -r runs/learning/data/sft runs/learning/data/manifest.json "$kit/learning/data/"
    mkdir -p "$kit/learning/heldout" && cp -r runs/heldout/sites runs/heldout/trajectories \
        "$kit/learning/heldout/"
    rm -rf "$kit"/learning/*/trajectories/*/images "$kit"/learning/*/sites/*/static/*.png
    touch "$kit/learning/.done"
fi
# all of it compressed (33 MB as 5 MB): it rides with the wheels and the second weights part,
# so the SFT, the RL and the evals run in that one call
if [ "${1:-}" = learning ] && [ ! -f "$kit/learning.tar.xz" ]; then
    tar cf - -C "$kit/learning" worlds data heldout | xz -9 -T0 > "$kit/learning.tar.xz.part"
    mv "$kit/learning.tar.xz.part" "$kit/learning.tar.xz"
fi

# the CPU's SFT run of record (learning.py's sft-relabel), where it has finished, as its
# difference from SmolLM2 (57 MB of tensors): the device then starts RL from it
sft=runs/learning/sft-relabel
if [ "${1:-}" = learning ] && [ -f "$sft/model/config.json" ] && [ ! -f "$kit/sft-delta/delta.json" ]; then
    $py experiments/policy_delta.py pack "$sft" "$kit/sft-delta"
fi

# the weights in parts (scripts/carry_plan.py packs them with the rest into calls that fit)
if [ ! -f "$kit/smollm2/part-ac" ]; then
    gguf=$($py -c "from webworld.train.models import smollm2_gguf; print(smollm2_gguf())")
    rm -rf "$kit/smollm2" && mkdir -p "$kit/smollm2"
    split -b 49000000 "$gguf" "$kit/smollm2/part-"
fi
du -sh .whl "$kit" "$kit/smollm2"

# the device calls: a call carries at most 64 MiB with the repo's own files, so which kit file
# rides in which call is computed (scripts/carry_plan.py); other runs: the same script with
# other gpu_run.py flags, e.g. --plan dagger --rounds 3, or --plan scale --kit
# gpu_kit/learning.tar.xz --extra-data gpu_kit/scale-data.tar.xz (experiments/data_scale.py
# packs it), --bring-back RUN to send a trained policy back
echo "On the device, these calls in a row while the machine is warm (send each within 30 s"
echo "of the last answer, or the machine goes back with what they left on it):"
if [ "${1:-}" = learning ]; then
    delta=(); [ -f "$kit/sft-delta/delta.json" ] && delta=(--sft-delta "$kit/sft-delta")
    $py scripts/carry_plan.py --plan learning --kit "$kit/learning.tar.xz" "${delta[@]}" \
        --rl-lr 1e-4 --seeds 0 1 2 --skip zero-shot --eval-reserve 120 --budget 540
    echo "Then here: .venv/bin/python experiments/learning_gpu.py --from-device <the call's files_at>"
else
    $py scripts/carry_plan.py --carry "$kit/worlds" --carry "$kit/data" --carry "$kit/bench" \
        --kit "$kit" --budget 540
fi
