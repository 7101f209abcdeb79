#!/usr/bin/env bash
# Runs @durable-streams/server-conformance-tests (pinned in package-lock.json) against a freshly
# started `strand serve --ds-long-poll-timeout 500ms --auth false`, prints the suite's own
# pass/fail counts, stops the server, and exits non-zero when any test fails.
# Env: STRAND (the strand launcher; default ../strand), DS_WORKSPACE (default conf), DS_DURABILITY (default fsync),
#      DS_SUBSCRIPTIONS=false to skip the opt-in subscription group, VITEST_ARGS (e.g. -t 'SSE').
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
STRAND="${STRAND:-$HERE/../strand}"
cd "$HERE"
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules ]; then
  npm ci --no-audit --no-fund --loglevel=error
fi
DATA="$(mktemp -d)"
LOG="$DATA.server.log"
: >"$LOG"
"$STRAND" serve --port 0 --data "$DATA" --auth false --durability "${DS_DURABILITY:-fsync}" --ds-long-poll-timeout 500ms >"$LOG" 2>&1 &
SERVER=$!
cleanup() {
  kill "$SERVER" 2>/dev/null || true
  wait "$SERVER" 2>/dev/null || true
  rm -rf "$DATA" "$LOG" "$DATA.vitest.log"
}
trap cleanup EXIT
URL=""
for _ in $(seq 1 600); do
  URL="$(sed -n 's/^strand listening on \(http[^ ]*\).*/\1/p' "$LOG" | head -n 1 || true)"
  [ -n "$URL" ] && break
  kill -0 "$SERVER" 2>/dev/null || { echo "strand exited before listening:"; cat "$LOG"; exit 1; }
  sleep 0.2
done
[ -n "$URL" ] || { echo "strand did not start within 120 s:"; cat "$LOG"; exit 1; }
export DS_URL="$URL/ds/${DS_WORKSPACE:-conf}"
echo "conformance: running against $DS_URL"
set +e
# shellcheck disable=SC2086
NO_COLOR=1 npx vitest run --config vitest.config.mjs ${VITEST_ARGS:-} 2>&1 | tee "$DATA.vitest.log"
RC=${PIPESTATUS[0]}
set -e
echo "conformance summary: $(sed 's/\x1b\[[0-9;]*m//g' "$DATA.vitest.log" | grep -E '^ *Tests ' | tail -n 1 | xargs)"
exit "$RC"
