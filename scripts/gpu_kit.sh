#!/usr/bin/env bash
# Make the kit a lent GPU machine needs to run a recipe's training there, and print the device
# calls that carry it: the wheels of the packages that machine lacks (in the versions this venv
# runs), the SmolLM2 weights in parts, and a recipe run folder whose browser stages ran here
# (builds, fast-env snapshots, export, the held-out worlds), packed without screenshots. The
# device, which has no browser, then runs the recipe's SFT, RL and fast-env evals
# (scripts/carry_plan.py device: the same `webworld recipe run`, resumable) and brings the
# records back. gpu_kit/ and .whl/ are git-ignored; what is there is kept.
#   bash scripts/gpu_kit.sh [RECIPE [RUN_DIR]]   default: recipes/smollm2.toml runs/smollm2-kit
set -euo pipefail
cd "$(dirname "$0")/.."
recipe=${1:-recipes/smollm2.toml}
run=${2:-runs/smollm2-kit}
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

# the recipe's stages that need Chromium, here (resumable: a rerun skips what finished)
$py scripts/carry_plan.py prepare "$recipe" "$run"
# the run folder as the device reads it: no screenshots, no per-build datasets (33 MB as 5 MB)
if [ ! -f "$kit/run.tar.xz" ] || [ -n "$(find "$run/stages.json" -newer "$kit/run.tar.xz")" ]; then
    tar cf - -C "$run" --exclude='images' --exclude='assets' --exclude='static/*.png' \
        --exclude='./worlds/dataset-*' stages.json recipe.json worlds data heldout \
        | xz -9 -T0 > "$kit/run.tar.xz.part"
    mv "$kit/run.tar.xz.part" "$kit/run.tar.xz"
fi

# the weights in parts (scripts/carry_plan.py packs them with the rest into calls that fit)
if [ ! -f "$kit/smollm2/part-ac" ]; then
    gguf=$($py -c "from webworld.train.models import smollm2_gguf; print(smollm2_gguf())")
    rm -rf "$kit/smollm2" && mkdir -p "$kit/smollm2"
    split -b 49000000 "$gguf" "$kit/smollm2/part-"
fi
du -sh .whl "$kit" "$kit/run.tar.xz" "$kit/smollm2"

echo "On the device, these calls in a row while the machine is warm (then, here:"
echo "tar xzf <files_at>/records.tar.gz -C $run && webworld recipe report $run):"
$py scripts/carry_plan.py plan --recipe "$recipe" --budget 540
