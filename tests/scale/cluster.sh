#!/usr/bin/env bash
# A real two-node Ray cluster (a head and a second node, started with `ray start`) inside a
# loopback-only network namespace, with token authentication (a fresh token, as
# `ray get-auth-token --generate` makes one); runs "$@" against it, then stops the cluster.
# Usage: unshare -n bash cluster.sh PYTHON COMMAND...   (RAY_ADDRESS and RAY_AUTH_TOKEN are
# set for COMMAND)
set -euo pipefail
ip link set lo up
python="$1"; shift
ray="$(dirname "$python")/ray"
export RAY_AUTH_MODE=token RAY_USAGE_STATS_ENABLED=0
RAY_AUTH_TOKEN="$("$python" -c 'import secrets; print(secrets.token_hex(32))')"
export RAY_AUTH_TOKEN
tmp="$(mktemp -d /tmp/ray-ww-XXXXXX)"  # short: Ray's socket paths must fit 107 bytes
port=$(( 20000 + RANDOM % 20000 ))
export RAY_ADDRESS="127.0.0.1:$port"
trap '"$ray" stop --force >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
common=(--node-ip-address 127.0.0.1 --num-cpus 1 --disable-usage-stats)
# `ray start` gives a raylet 30 s (fixed in Ray) to register; on 2 cores busy with other tests
# that can pass, so a node that timed out is stopped and started once more before giving up
start_node() {  # LOG ARGS...
    local log="$1"; shift
    "$ray" start "$@" "${common[@]}" >"$log" 2>&1 && return 0
    grep -q "timed out during startup" "$log" || { cat "$log" >&2; exit 3; }
    "$ray" stop --force >/dev/null 2>&1 || true
    [[ "$1" == --head ]] || "$ray" start --head --port "$port" --temp-dir "$tmp" \
        --include-dashboard false "${common[@]}" >"$tmp/head.log" 2>&1 \
        || { cat "$tmp/head.log" >&2; exit 3; }
    "$ray" start "$@" "${common[@]}" >>"$log" 2>&1 || { cat "$log" >&2; exit 3; }
}
start_node "$tmp/head.log" --head --port "$port" --temp-dir "$tmp" --include-dashboard false
start_node "$tmp/node.log" --address "$RAY_ADDRESS"
"$@"
