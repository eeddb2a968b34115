#!/usr/bin/env bash
# Turns edits made in a prepared tree into a git format-patch file of a
# series, with the fixed identity and date that keep patch files stable.
#
#   scripts/mkpatch.sh <pristine-tree> <edited-tree> <series> <message-file> <file>...
#
# The pristine tree is one prepared without the new patch (for example the
# vanilla variant's tree); the files listed are compared between the two.
set -euo pipefail
[ $# -ge 5 ] || { sed -n '2,9p' "$0"; exit 2; }
pristine=$1 edited=$2 series=$3 msg=$4; shift 4
repo=$(cd "$(dirname "$0")/.." && pwd)
scratch=$(mktemp -d); trap 'rm -rf "$scratch"' EXIT
export GIT_AUTHOR_NAME="Kubelet Toolchain" GIT_AUTHOR_EMAIL="toolchain@kubelet-toolchain.invalid" \
       GIT_COMMITTER_NAME="Kubelet Toolchain" GIT_COMMITTER_EMAIL="toolchain@kubelet-toolchain.invalid" \
       GIT_AUTHOR_DATE="2026-11-22T00:00:00Z" GIT_COMMITTER_DATE="2026-11-22T00:00:00Z"
git -C "$scratch" init -q
for f in "$@"; do
  if [ -e "$pristine/$f" ]; then mkdir -p "$scratch/$(dirname "$f")"; cp "$pristine/$f" "$scratch/$f"; fi
done
git -C "$scratch" add -A && git -C "$scratch" commit -qm base --allow-empty
for f in "$@"; do
  if [ -e "$edited/$f" ]; then mkdir -p "$scratch/$(dirname "$f")"; cp "$edited/$f" "$scratch/$f"; else rm -f "$scratch/$f"; fi
done
git -C "$scratch" add -A && git -C "$scratch" commit -q -F "$msg"
mkdir -p "$repo/patches/$series"
n=$(ls "$repo/patches/$series" | grep -c '\.patch$' || true)
git -C "$scratch" format-patch -q --zero-commit --no-signature --start-number $((10#$n + 1)) -o "$repo/patches/$series" HEAD~1
ls "$repo/patches/$series"
