#!/usr/bin/env bash
# The README's demo: a real zerg rush, offline, on the bundled example project.
# Real git, the real pinned Claude Code CLI and real workers; only the model is
# scripted (zerg mockapi answers from the project's scenario.yaml).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
zerg="$here/bin/zerg"
[ -x "$zerg" ] || { echo "demo: $zerg is missing; run make build" >&2; exit 1; }

work="$(mktemp -d "${TMPDIR:-/tmp}/zerg-demo.XXXXXX")"
cp -R "$here/examples/demo/." "$work/"
cd "$work"
git init -q -b main
git add -A
git -c user.name="Zerg Demo" -c user.email=demo@zerg.invalid commit -q -m "greeter: empty project"

echo "== zerg init"
"$zerg" init
git add -A && git -c user.name="Zerg Demo" -c user.email=demo@zerg.invalid commit -q -m "zerg init"
echo
echo "== zerg graph show demo"
"$zerg" graph show demo
echo
echo "== zerg rush demo --rehearse"
"$zerg" rush demo --rehearse
echo
echo "== the integration branch"
git log --oneline --graph -n 30 zerg/demo/integration
echo
git ls-tree -r --name-only zerg/demo/integration | grep -v '^\.zerg/'
echo
echo "== sh tests/run.sh on the integration branch"
git worktree add -q --detach "$work/.check" zerg/demo/integration
(cd "$work/.check" && sh tests/run.sh)
git worktree remove --force "$work/.check"
echo
echo "The demo repository is $work (your main branch there is untouched)."
echo "Try: cd $work && $zerg status && $zerg logs L2-shout"
