#!/usr/bin/env bash
# Headless-Chromium check of @durable-streams/client (pinned in package-lock.json) against
# `strand serve`: browser.test.mjs appends and follows a stream over SSE and long-poll through a
# dropped connection and a server restart, checks exactly-once in-order delivery, and saves
# target/ds-browser/page.png. Exits non-zero on failure.
# Env: STRAND (launcher; default ../strand), CHROMIUM (default /usr/bin/chromium).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$HERE"
CHROMIUM="${CHROMIUM:-/usr/bin/chromium}"
[ -x "$CHROMIUM" ] || { echo "ds-browser: no Chromium at $CHROMIUM (apt-get install chromium, or set CHROMIUM)"; exit 1; }
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules ]; then
  npm ci --no-audit --no-fund --loglevel=error
fi
CHROMIUM="$CHROMIUM" exec node browser.test.mjs
