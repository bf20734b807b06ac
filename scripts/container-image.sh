#!/usr/bin/env bash
# Builds the image container mode's end-to-end tests run workers in,
# localhost/zerg-test:bookworm, from Debian packages alone: no container
# registry is involved, so it builds wherever Debian's archive can be
# reached. mmdebstrap makes a minimal root filesystem, podman imports it.
#
# The image carries a label with the hash of its recipe (this script's
# suite, packages and image settings); when the engine already has the image
# with that label, nothing is done. Change the recipe and it is rebuilt.
#
# Usage: scripts/container-image.sh [--force]
#   ZERG_TEST_IMAGE  the tag (default localhost/zerg-test:bookworm)
#   ZERG_TEST_IMAGE_GO=1  also install golang-go (Debian's Go) in the image
set -euo pipefail

image=${ZERG_TEST_IMAGE:-localhost/zerg-test:bookworm}
suite=bookworm
variant=minbase
# git: zerg commits and bundles inside. curl, python3, zip, procps: the tools
# the sandbox red team's attacks use (e2e/rush), so that each attack really
# runs in container mode rather than failing for want of its program.
packages=(bash ca-certificates coreutils git curl python3 zip procps)
if [ "${ZERG_TEST_IMAGE_GO:-}" = 1 ]; then
  packages+=(golang-go)
fi
changes=(
  'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'
  'WORKDIR /'
  'CMD ["/bin/bash"]'
)
force=
[ "${1:-}" = --force ] && force=1

for tool in podman mmdebstrap; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "container-image: $tool is missing; run make podman (as root), or: sudo apt-get install podman runc uidmap fuse-overlayfs mmdebstrap" >&2
    exit 1
  fi
done

# The recipe: everything above that decides what the image holds.
recipe=$(printf '%s\n' "v1" "$suite" "$variant" "${packages[@]}" "${changes[@]}" | sha256sum | cut -c1-16)

if [ -z "$force" ] && podman image exists "$image"; then
  have=$(podman image inspect --format '{{index .Labels "zerg.recipe"}}' "$image" 2>/dev/null || true)
  if [ "$have" = "$recipe" ]; then
    echo "container-image: $image is up to date (recipe $recipe)"
    exit 0
  fi
  echo "container-image: $image has recipe ${have:-none}, want $recipe: rebuilding"
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
start=$(date +%s)
packlist=$(IFS=,; echo "${packages[*]}")
echo "container-image: mmdebstrap --variant=$variant --include=$packlist $suite"
# Debian's archive only; the mirror is mmdebstrap's default. --quiet keeps
# the log to errors; apt's own progress would be thousands of lines.
mmdebstrap --quiet --variant="$variant" --include="$packlist" \
  --aptopt='Acquire::Retries "3"' \
  --customize-hook='rm -rf "$1"/var/cache/apt/archives/*.deb "$1"/var/lib/apt/lists/*' \
  "$suite" "$tmp/rootfs.tar" || {
  echo "container-image: mmdebstrap failed: it needs Debian's package archive (the network, or an apt proxy); see its messages above" >&2
  exit 1
}
args=()
for c in "${changes[@]}"; do args+=(--change "$c"); done
args+=(--change "LABEL zerg.recipe=$recipe")
podman import --quiet "${args[@]}" "$tmp/rootfs.tar" "$image" >/dev/null
echo "container-image: built $image (recipe $recipe) in $(( $(date +%s) - start ))s"
