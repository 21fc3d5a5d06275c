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
head=(--head --port "$port" --temp-dir "$tmp" --include-dashboard false)
# `ray start` gives a raylet 30 s (fixed in Ray) to register; on 2 cores busy with other tests
# that can pass, so a cluster whose node timed out is stopped and started once more
start_cluster() {
    "$ray" start "${head[@]}" "${common[@]}" >"$tmp/head.log" 2>&1 \
        && "$ray" start --address "$RAY_ADDRESS" "${common[@]}" >"$tmp/node.log" 2>&1
}
if ! start_cluster; then
    cat "$tmp/head.log" "$tmp/node.log" 2>/dev/null | grep -q "timed out during startup" \
        || { cat "$tmp/head.log" "$tmp/node.log" >&2 2>/dev/null; exit 3; }
    "$ray" stop --force >/dev/null 2>&1 || true
    start_cluster || { cat "$tmp/head.log" "$tmp/node.log" >&2 2>/dev/null; exit 3; }
fi
"$@"
