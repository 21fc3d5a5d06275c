#!/usr/bin/env bash
# Make the kit a lent GPU machine needs to train and bench webworld there (see
# experiments/gpu_run.py): wheels of the packages that machine lacks, in the versions this
# venv runs, in .whl/; a few built worlds with their fast-env snapshots and their compact SFT
# export, and the SmolLM2 weights cut in three parts (a call carries at most 64 MiB), in gpu_kit/.
# Both folders are git-ignored. Idempotent: what is there is kept.
#   bash scripts/gpu_kit.sh            then, on the device, the two calls it prints
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
# difference from SmolLM2 (57 MB of tensors, a call of its own; its small files, 3.6 MB, ride
# with the last weights part): the device then starts RL from it
sft=runs/learning/sft-relabel
if [ "${1:-}" = learning ] && [ -f "$sft/model/config.json" ] && [ ! -f "$kit/sft-delta/delta.json" ]; then
    $py experiments/policy_delta.py pack "$sft" "$kit/sft-delta"
    rm -rf "$kit/sft-delta-small" && mkdir -p "$kit/sft-delta-small"
    find "$kit/sft-delta" -type f ! -name delta.safetensors -exec cp {} "$kit/sft-delta-small/" \;
fi

# the weights in parts that ride beside the rest: a call carries at most 64 MiB (67.1 MB),
# the repo's own files (8 MB, and growing: check the sums) included
if [ ! -f "$kit/smollm2/part-ac" ]; then
    gguf=$($py -c "from webworld.train.models import smollm2_gguf; print(smollm2_gguf())")
    rm -rf "$kit/smollm2" && mkdir -p "$kit/smollm2"
    split -b 49000000 "$gguf" "$kit/smollm2/part-"
fi
du -sh .whl "$kit" "$kit/smollm2"
cat <<'NEXT'
On the device, calls in a row while the machine is warm (a call carries at most 64 MiB; send
each within 30 s of the last answer, or the machine goes back with what they left on it):
  1. carry ["gpu_kit/smollm2/part-aa", "gpu_kit/wheels.tar.xz"]:
     mkdir -p /tmp/kit && cp gpu_kit/smollm2/part-aa gpu_kit/wheels.tar.xz /tmp/kit/
  2. carry ["gpu_kit/smollm2/part-ab", "gpu_kit/smollm2/part-ac", "gpu_kit/worlds",
            "gpu_kit/data", "gpu_kit/bench"]:
     python3 experiments/gpu_run.py --wheels /tmp/kit/wheels.tar.xz --gguf-parts /tmp/kit/part-aa \
         gpu_kit/smollm2/part-ab gpu_kit/smollm2/part-ac --out "$OUT"
The learning runs instead of 2 (RL and evals in one call of 10 minutes):
  2. where gpu_kit/sft-delta exists (the CPU's SFT run; without it SFT runs there, 276 s,
     and 2, the cp of 3 and --sft-delta are left out):
     carry ["gpu_kit/sft-delta/delta.safetensors"]:
     mkdir -p /tmp/kit/sft-delta && cp gpu_kit/sft-delta/delta.safetensors /tmp/kit/sft-delta/
  3. carry ["gpu_kit/smollm2/part-ab", "gpu_kit/smollm2/part-ac", "gpu_kit/learning.tar.xz",
            "gpu_kit/sft-delta-small"]:
     cp gpu_kit/sft-delta-small/* /tmp/kit/sft-delta/ && python3 experiments/gpu_run.py \
         --wheels /tmp/kit/wheels.tar.xz --gguf-parts /tmp/kit/part-aa gpu_kit/smollm2/part-ab \
         gpu_kit/smollm2/part-ac --plan learning --kit gpu_kit/learning.tar.xz \
         --sft-delta /tmp/kit/sft-delta --rl-lr 1e-4 --seeds 0 1 2 --skip zero-shot \
         --eval-reserve 120 --budget 540 --out "$OUT"
  4. with the device time left, carry nothing: the evals go on where 3 cut them
     python3 experiments/gpu_run.py --plan learning --kit gpu_kit/learning.tar.xz \
         --sft-delta /tmp/kit/sft-delta --seeds 0 1 2 --skip zero-shot --eval-reserve <left> \
         --budget <the device time left, less a minute> --out "$OUT"
Then here: .venv/bin/python experiments/learning_gpu.py --from-device <the call's files_at>
RL across leases: --bring-back rl-progress-s0 (one run a call) sends that run's policy back in
parts; the import puts it in gpu_kit/rl-progress-s0-delta, which a later lease carries as
--sft-delta (RL goes on from it, with a fresh optimiser).
Rounds of corrections (DAgger) instead of RL: in 3 and 4, --plan dagger --rounds 3 in place of
--rl-lr 1e-4 --seeds 0 1 2 --skip zero-shot (a round there: an eval of the training worlds, an SFT
epoch, a held-out eval); its results.tar.gz holds eval/, data-r*/ and dagger-r*/ (no page yet).
SFT on more worlds (experiments/data_scale.py first: it packs gpu_kit/scale-data.tar.xz), after 1:
  2. carry ["gpu_kit/smollm2/part-ab", "gpu_kit/smollm2/part-ac", "gpu_kit/learning.tar.xz",
            "gpu_kit/scale-data.tar.xz"]:
     python3 experiments/gpu_run.py --wheels /tmp/kit/wheels.tar.xz --gguf-parts /tmp/kit/part-aa \
         gpu_kit/smollm2/part-ab gpu_kit/smollm2/part-ac --plan scale --kit gpu_kit/learning.tar.xz \
         --extra-data gpu_kit/scale-data.tar.xz --eval-reserve 150 --budget 540 --out "$OUT"
  3. with the device time left, carry nothing: the same command without --wheels and
     --gguf-parts, --budget <the device time left, less a minute>
Then here: .venv/bin/python experiments/data_scale.py --from-device <the call's files_at>
(One run for longer at a GPU's batch: --scale-runs sft-scale-aug --sft-epochs 3 --sft-batch 32,
and a record and page of its own here: --record experiments/results/data-scale-2 --doc ...;
--bring-back sft-scale-aug sends its weights back in parts, which data_scale.py --from-device
puts in gpu_kit/sft-scale-aug-delta: a later lease carries it as --sft-delta and starts RL there.)
NEXT
