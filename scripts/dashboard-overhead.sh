#!/usr/bin/env bash
# Does an attached dashboard slow a rush? Rehearses the demo project N times
# with no dashboard and N times with zerg dashboard serving it and a client
# following its event stream (as a browser tab does), alternating, each on a
# fresh copy; prints each wall time and the medians.
# Usage: scripts/dashboard-overhead.sh [N]   (needs make build claude)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-5}
zerg=$PWD/bin/zerg
export ZERG_CLAUDE=$PWD/tools/claude/node_modules/.bin/claude NO_COLOR=1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"

once() { # $1: plain|dashboard
  local d=$tmp/$1-$RANDOM dash=
  mkdir -p "$d/home"; cp -r examples/demo "$d/repo"; chmod 755 "$d" "$d/home"
  ( cd "$d/repo" && printf '.zerg/runs/\n.zerg/cache/\n.zerg/audit.jsonl*\n' > .gitignore && git init -q -b main &&
    git add -A && git -c user.name=b -c user.email=b@example.invalid commit -qm demo )
  export HOME=$d/home ZERG_WORKSPACES=$d/home/ws
  if [ "$1" = dashboard ]; then
    (cd "$d/repo" && exec "$zerg" dashboard demo --open=false > "$d/url" 2>/dev/null) & dash=$!
    for _ in $(seq 50); do [ -s "$d/url" ] && break; sleep 0.1; done
    local u; u=$(sed -n 's/^zerg dashboard: \(http[^#]*\).*/\1/p' "$d/url")
    curl -sN "${u%/?t=*}/api/runs/demo/stream?t=${u#*t=}" > /dev/null 2>&1 & curlpid=$!
  fi
  local t0 t1; t0=$(date +%s.%N)
  (cd "$d/repo" && "$zerg" rush demo --rehearse > "$d/rush.out" 2>&1) || { cat "$d/rush.out"; exit 1; }
  t1=$(date +%s.%N)
  if [ -n "$dash" ]; then kill "$curlpid" 2>/dev/null || true; kill -INT "$dash"; wait "$dash" 2>/dev/null || true; fi
  echo "$t1 - $t0" | bc
}
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

: > "$tmp/plain"; : > "$tmp/dashboard"
for i in $(seq "$n"); do
  for mode in plain dashboard; do
    s=$(once $mode); echo "$mode run $i: ${s}s"; echo "$s" >> "$tmp/$mode"
  done
done
echo "median without dashboard: $(median < "$tmp/plain")s; with dashboard + a live client: $(median < "$tmp/dashboard")s (n=$n each)"
