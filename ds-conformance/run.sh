#!/usr/bin/env bash
# Runs @durable-streams/server-conformance-tests (pinned in package-lock.json) against a freshly
# started `strand serve --ds-long-poll-timeout 500ms --auth false` (or cluster), prints the suite's own
# pass/fail counts, stops the server, and exits non-zero when any test fails.
# Env: STRAND (the strand launcher; default ../strand), DS_WORKSPACE (default conf), DS_DURABILITY (default fsync),
#      DS_SUBSCRIPTIONS=false to skip the opt-in subscription group, VITEST_ARGS (e.g. -t 'SSE'),
#      DS_CLUSTER=3 to run against a 3-node cluster on loopback instead (through a node that does not lead
#      the workspace's shard).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
STRAND="${STRAND:-$HERE/../strand}"
cd "$HERE"
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules ]; then
  npm ci --no-audit --no-fund --loglevel=error
fi
DATA="$(mktemp -d)"
LOG="$DATA.server.log"
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$DATA" "$DATA".*.log
}
trap cleanup EXIT
# starts one server with the given arguments, logging to $1; sets URL to where it listens
serve() {
  local log="$1"; shift
  : >"$log"
  "$STRAND" serve --port 0 --auth false --ds-long-poll-timeout 500ms "$@" >"$log" 2>&1 &
  PIDS+=("$!")
  URL=""
  for _ in $(seq 1 600); do
    URL="$(sed -n 's/^strand listening on \(http[^ ]*\).*/\1/p' "$log" | head -n 1 || true)"
    [ -n "$URL" ] && return 0
    kill -0 "${PIDS[-1]}" 2>/dev/null || { echo "strand exited before listening:"; cat "$log"; exit 1; }
    sleep 0.2
  done
  echo "strand did not start within 120 s:"; cat "$log"; exit 1
}
WS="${DS_WORKSPACE:-conf}"
if [ "${DS_CLUSTER:-0}" -gt 1 ]; then
  # a cluster on loopback; the suite talks to a node that does not lead the workspace's shard, so every
  # write travels through Raft to the leader and every read waits for the follower's read barrier
  PORTS=($(python3 -c "import socket
ss=[socket.socket() for _ in range(${DS_CLUSTER})]
[s.bind(('127.0.0.1',0)) for s in ss]
print(' '.join(str(s.getsockname()[1]) for s in ss))"))
  MEMBERS=""
  for i in $(seq 1 "$DS_CLUSTER"); do MEMBERS="$MEMBERS${MEMBERS:+,}n$i=127.0.0.1:${PORTS[$((i-1))]}"; done
  URLS=()
  for i in $(seq 1 "$DS_CLUSTER"); do
    serve "$DATA.n$i.log" --node-id "n$i" --cluster "$MEMBERS" --data "$DATA/n$i"
    URLS+=("$URL")
  done
  LEADER=""
  for _ in $(seq 1 600); do
    LEADER="$(curl -s "${URLS[0]}/v1/cluster/shard?ws=$WS" | sed -n 's/.*"leader":"\([^"]*\)".*/\1/p')"
    [ -n "$LEADER" ] && break
    sleep 0.2
  done
  [ -n "$LEADER" ] || { echo "no leader for workspace $WS's shard within 120 s"; cat "$DATA".n*.log; exit 1; }
  for i in $(seq 1 "$DS_CLUSTER"); do [ "n$i" != "$LEADER" ] && { URL="${URLS[$((i-1))]}"; break; }; done
  echo "conformance: a ${DS_CLUSTER}-node cluster, shard of $WS led by $LEADER; the suite talks to $URL"
else
  serve "$LOG" --data "$DATA" --durability "${DS_DURABILITY:-fsync}"
fi
export DS_URL="$URL/ds/$WS"
echo "conformance: running against $DS_URL"
set +e
# shellcheck disable=SC2086
NO_COLOR=1 npx vitest run --config vitest.config.mjs ${VITEST_ARGS:-} 2>&1 | tee "$DATA.vitest.log"
RC=${PIPESTATUS[0]}
set -e
echo "conformance summary: $(sed 's/\x1b\[[0-9;]*m//g' "$DATA.vitest.log" | grep -E '^ *Tests ' | tail -n 1 | xargs)"
exit "$RC"
