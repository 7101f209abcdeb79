#!/usr/bin/env bash
# Tests the release as a user gets it: unpacks strand-VERSION.tar.gz ($1) into an empty directory,
# checks it holds only bin/ and lib/, that the launcher refuses a Java older than 25 and a JRE with
# a clear message, then (JAVA_HOME unset, the JDK found on PATH) runs `bin/strand serve --port 0`, appends
# and reads an entry and puts and gets a doc over HTTP, stops it with SIGTERM (exit 0 once it has
# closed cleanly) and starts it again on the same data to read the entry back.
# Env: JAVA_HOME (the JDK 25 to run it with; mvn sets it).
set -euo pipefail
TARBALL="$(readlink -f "$1")"
JDK="${JAVA_HOME:?JAVA_HOME must point to a JDK 25}"
WORK="$(mktemp -d)"
SERVER=""
cleanup() {
  if [ -n "$SERVER" ]; then kill "$SERVER" 2>/dev/null || true; wait "$SERVER" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT
fail() { echo "release test: FAILED: $*" >&2; [ -f "$WORK/server.log" ] && cat "$WORK/server.log" >&2; exit 1; }

tar -xzf "$TARBALL" -C "$WORK"
REL="$(find "$WORK" -mindepth 1 -maxdepth 1 -type d)"
[ "$(basename "$REL")" = "$(basename "$TARBALL" .tar.gz)" ] || fail "expected one directory $(basename "$TARBALL" .tar.gz) in the tarball, got $REL"
[ "$(ls "$REL" | tr '\n' ' ')" = "bin lib " ] || fail "expected only bin/ and lib/, got: $(ls "$REL")"
[ -x "$REL/bin/strand" ] || fail "bin/strand is not executable"
grep -q -- '--add-opens=java.base/java.lang=ALL-UNNAMED' "$REL/bin/strand" || fail "bin/strand lacks the strand.jvmFlags"
grep -q -- "^JIT='-XX:" "$REL/bin/strand" || fail "bin/strand lacks the strand.clusterJitFlags"
echo "release test: unpacked $(basename "$TARBALL"): bin/strand and $(ls "$REL/lib" | wc -l) jars"

# A Java older than 25 is refused with a message that says what is needed.
OLD="$WORK/old-jdk"
mkdir -p "$OLD/bin"
echo 'JAVA_VERSION="17.0.2"' >"$OLD/release"
printf '#!/bin/sh\necho "java should not have been started" >&2\nexit 3\n' >"$OLD/bin/java"
chmod +x "$OLD/bin/java"
set +e
MSG="$(env -u STRAND_JAVA_HOME JAVA_HOME="$OLD" "$REL/bin/strand" --version 2>&1)"
RC=$?
set -e
[ "$RC" -eq 1 ] || fail "an old JAVA_HOME: exit $RC, want 1 ($MSG)"
echo "$MSG" | grep -q "version 17" && echo "$MSG" | grep -q "needs a JDK 25" || fail "an old JAVA_HOME: unclear message: $MSG"
echo "release test: a Java 17 JAVA_HOME is refused: $(echo "$MSG" | head -n 1)"

# So is a Java 25 runtime without jdk.compiler (a JRE), which Chronicle needs.
echo 'JAVA_VERSION="25.0.1"' >"$OLD/release"
echo 'MODULES="java.base java.logging jdk.unsupported"' >>"$OLD/release"
set +e
MSG="$(env -u STRAND_JAVA_HOME JAVA_HOME="$OLD" "$REL/bin/strand" --version 2>&1)"
RC=$?
set -e
[ "$RC" -eq 1 ] || fail "a JRE: exit $RC, want 1 ($MSG)"
echo "$MSG" | grep -q "without the jdk.compiler module" || fail "a JRE: unclear message: $MSG"
echo "release test: a Java 25 JRE is refused: $(echo "$MSG" | head -n 1)"

# From here on the JDK is found on PATH, as on a machine with no JAVA_HOME.
DATA="$WORK/data"
start() {
  : >"$WORK/server.log"
  # A plain command, not a function, so $! is the launcher's pid, which it hands on to java by exec.
  env -u JAVA_HOME -u STRAND_JAVA_HOME PATH="$JDK/bin:$PATH" "$REL/bin/strand" serve --port 0 --data "$DATA" \
    >"$WORK/server.log" 2>&1 &
  SERVER=$!
  URL=""
  for _ in $(seq 1 600); do
    URL="$(sed -n 's/^strand listening on \(http[^ ]*\).*/\1/p' "$WORK/server.log" | head -n 1 || true)"
    [ -n "$URL" ] && break
    kill -0 "$SERVER" 2>/dev/null || fail "bin/strand serve exited before listening"
    sleep 0.2
  done
  [ -n "$URL" ] || fail "bin/strand serve did not listen within 120 s"
}
stop() {
  kill -TERM "$SERVER"
  set +e
  wait "$SERVER"
  local rc=$?
  set -e
  SERVER=""
  [ "$rc" -eq 0 ] || fail "after SIGTERM the server exited with $rc, want 0 (a clean stop)"
  if grep -q -E 'Exception|SEVERE' "$WORK/server.log"; then fail "the server log shows an error"; fi
}

start
AUTH="Authorization: Bearer $(cat "$DATA/root.token")"
REPLY="$(curl -sS -f -H "$AUTH" -XPOST "$URL/v1/ws/release/logs/smoke/entries" -d '{"data":{"hello":"release"}}')" \
  || fail "append failed"
echo "$REPLY" | grep -q '"lastSeq":1' || fail "append reply: $REPLY"
PAGE="$(curl -sS -f -H "$AUTH" "$URL/v1/ws/release/logs/smoke/entries?from=1")" || fail "read failed"
echo "$PAGE" | grep -q '"hello":"release"' || fail "read reply: $PAGE"
curl -sS -f -H "$AUTH" -XPUT "$URL/v1/ws/release/docs/smoke" -d '{"value":{"n":1}}' >/dev/null || fail "doc put failed"
DOC="$(curl -sS -f -H "$AUTH" "$URL/v1/ws/release/docs/smoke")" || fail "doc get failed"
echo "$DOC" | grep -q '"n":1' || fail "doc get reply: $DOC"
echo "release test: $URL appended and read one entry, put and got one doc"
stop
echo "release test: SIGTERM stopped it cleanly"

start
AUTH="Authorization: Bearer $(cat "$DATA/root.token")"
PAGE="$(curl -sS -f -H "$AUTH" "$URL/v1/ws/release/logs/smoke/entries?from=1")" || fail "read after restart failed"
echo "$PAGE" | grep -q '"hello":"release"' || fail "read after restart: $PAGE"
stop
echo "release test: passed (the entry survived a SIGTERM and a restart)"
