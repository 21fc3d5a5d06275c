#!/usr/bin/env bash
# Set up (if needed) and run the default test suite; extra arguments go to pytest
# (e.g. `scripts/test.sh -m slow` for the slow tests).
set -euo pipefail
cd "$(dirname "$0")/.."
case " $* " in
    *slow*|*gpu*) bash scripts/setup.sh dev,e2e ;;  # slow / GPU tests need llama.cpp and SmolLM2
    *) bash scripts/setup.sh dev ;;
esac
# the slowest tests are listed at the end, to keep the suite within its 15 minutes
# three workers on 2 cores: many tests wait on Chromium, Ray or a subprocess, not the CPU
exec .venv/bin/python -m pytest -n "${WEBWORLD_TEST_WORKERS:-3}" --durations=15 "$@"
