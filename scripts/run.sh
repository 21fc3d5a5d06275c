#!/usr/bin/env bash
# Set up (if needed) and run the main job on the offline default: `webworld build`.
# Extra arguments go to `webworld build` (e.g. --theme "recipe site" --profile hard).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/webworld build "$@"
