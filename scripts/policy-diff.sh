#!/usr/bin/env bash
# The differential test of the worker policy: decides the same tool calls
# with internal/policy as it is in the work tree and as it was at BASE
# (default: main), under nine policies of both modes, and lists every
# decision that differs. The calls are every string literal of the tests
# that decide tool calls (internal/policy, the hook's, the red team's, the
# confinement e2e test) and the corpus's Bash commands and file paths, each
# as a Bash command, and as the path of Read, Write and Grep.
#
#   scripts/policy-diff.sh [BASE] [OUT]
#
# Prints the counts (LOOSER: the work tree allows what BASE denied) and
# writes each difference with both reasons to OUT (default
# policy-diff.out). Nothing is written into the tree: BASE's package and the
# test are added with `go test -overlay`.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
base="${1:-main}"
out="${2:-$PWD/policy-diff.out}"
case "$out" in /*) ;; *) out="$PWD/$out" ;; esac
tmp="$(mktemp -d "${TMPDIR:-/tmp}/zerg-policy-diff.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
cd "$here"
rev="$(git rev-parse --verify --quiet "$base^{commit}")" || { echo "policy-diff: $base is no commit" >&2; exit 2; }
mkdir -p "$tmp/old"
printf '{"Replace":{' >"$tmp/overlay.json"
sep=""
for f in $(git ls-tree --name-only "$rev" internal/policy/ | grep '\.go$' | grep -v '_test\.go$'); do
	name="$(basename "$f")"
	git show "$rev:$f" | sed '1,/^package policy$/s/^package policy$/package policyold/' >"$tmp/old/$name"
	printf '%s"%s":"%s"' "$sep" "$here/internal/policyold/$name" "$tmp/old/$name" >>"$tmp/overlay.json"
	sep=","
done
cp "$here/scripts/policydiff/diff_test.go.txt" "$tmp/diff_test.go"
printf '%s"%s":"%s"}}' "$sep" "$here/internal/policy/zz_policydiff_test.go" "$tmp/diff_test.go" >>"$tmp/overlay.json"
echo "policy-diff: internal/policy at $(git rev-parse --short "$rev") ($base) against the work tree" >&2
POLICYDIFF_ROOT="$here" POLICYDIFF_OUT="$out" go test -v -count=1 -vet=off -overlay "$tmp/overlay.json" -run TestPolicyDiff ./internal/policy/ |
	grep -v "^ok\|^PASS$\|^=== RUN\|^--- PASS"
echo "policy-diff: differences in $out" >&2
