#!/usr/bin/env bash
# `go install github.com/zergrush/zerg/cmd/zerg@VERSION` from a clean module
# cache, offline: the module as the proxy would serve VERSION of this
# checkout's HEAD (git archive, the go.mod, an .info), in a file proxy of
# its own; every dependency from the machine's module download cache (a
# proxy's layout too), nothing from the network; a new empty GOMODCACHE and
# GOPATH; the checksum database off (it is not reachable offline, and
# go install m@v does not read m's go.sum). So the installed binary's own
# record of what it was built from is checked instead: every dependency
# compiled in must have the version and hash go.sum records. Then the
# binary must print "zerg VERSION". make test runs it (docs/macos.md says
# what this proves and what it cannot).
#
# Usage: scripts/go-install-check.sh [VERSION]   (default v0.0.0-installcheck)
set -euo pipefail
cd "$(dirname "$0")/.."

version=${1:-v0.0.0-installcheck}
module=$(go list -m)
cache=$(go env GOMODCACHE)/cache/download
work=$(mktemp -d)
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT

# The module's path in a proxy is its path with capitals escaped (!x).
escaped=$(printf '%s' "$module" | sed 's/[A-Z]/!\L&/g')
at="$work/proxy/$escaped/@v"
mkdir -p "$at"
git archive --format=zip --prefix="$module@$version/" -o "$at/$version.zip" HEAD
git show HEAD:go.mod >"$at/$version.mod"
printf '{"Version":"%s","Time":"%s"}\n' "$version" "$(git log -1 --format=%cI HEAD)" >"$at/$version.info"
printf '%s\n' "$version" >"$at/list"

env -u GONOSUMDB -u GOPRIVATE -u GONOPROXY -u GOINSECURE \
	GOMODCACHE="$work/modcache" GOPATH="$work/gopath" GOBIN="$work/bin" \
	GOPROXY="file://$work/proxy,file://$cache" GOSUMDB=off GOTOOLCHAIN=local GOWORK=off \
	go install "$module/cmd/zerg@$version"

# "dep PATH VERSION h1:HASH" (or "=> PATH VERSION h1:HASH" for a
# replacement, which go.mod must not have).
if go version -m "$work/bin/zerg" | grep -q '^[[:space:]]*=>'; then
	echo "go install $module/cmd/zerg@$version: the binary was built with a replace directive" >&2
	exit 1
fi
sums=$(git show HEAD:go.sum)
deps=0
while read -r kind path ver hash; do
	[ "$kind" = dep ] || continue
	deps=$((deps + 1))
	if ! grep -qxF "$path $ver $hash" <<<"$sums"; then
		echo "go install $module/cmd/zerg@$version: built with $path $ver $hash, which go.sum does not record" >&2
		exit 1
	fi
done < <(go version -m "$work/bin/zerg")
if [ "$deps" -eq 0 ]; then
	echo "go install $module/cmd/zerg@$version: the binary records no dependency to check" >&2
	exit 1
fi

got=$("$work/bin/zerg" --version)
if [ "$got" != "zerg $version" ]; then
	echo "go install $module/cmd/zerg@$version: the binary says \"$got\", not \"zerg $version\"" >&2
	exit 1
fi
echo "go install $module/cmd/zerg@$version: ok from an empty module cache, offline: $got, $deps dependencies as go.sum records them"
