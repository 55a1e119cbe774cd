#!/usr/bin/env bash
# Every output of every definition in two commits, compared byte for byte: the proof that a change which should move
# no output (a refactoring) moved none. Renders (NOS and AVD), exports (k8s, nccl, slurm, telemetry), the HTML report
# and lint (its text and exit code) for inventories/*/cluster.yaml and tests/data/**/cluster.yaml, in a worktree per
# commit, with this checkout's venv.
#   ci/compare-outputs.sh BEFORE AFTER      e.g. ci/compare-outputs.sh 47bc307 HEAD
set -euo pipefail
cd "$(dirname "$0")/.."
before=${1:?a commit}; after=${2:?a commit}
work=$(mktemp -d)
trap 'git worktree remove --force "$work/a" >/dev/null 2>&1; git worktree remove --force "$work/b" >/dev/null 2>&1; rm -rf "$work"' EXIT
outputs() {   # $1: checkout, $2: output directory
    (
        mkdir -p "$2" && cd "$1" && shopt -s nullglob && export GPUFABRIC_NO_CACHE=1 GPUFABRIC_JOBS=1
        for def in inventories/*/cluster.yaml tests/data/*/cluster.yaml tests/data/*/*/cluster.yaml; do
            name=$(echo "$def" | tr / _)
            "$VENV/python" -m fabric render "$def" -o "$2/$name/render" >/dev/null 2>"$2/$name.render.err" || echo "render $?" >>"$2/$name.rc"
            if grep -q eos "$def"; then "$VENV/python" -m fabric render "$def" --format avd -o "$2/$name/avd" >/dev/null 2>&1 || true; fi
            for kind in k8s nccl slurm telemetry; do
                "$VENV/python" -m fabric export "$kind" "$def" -o "$2/$name/export" >/dev/null 2>>"$2/$name.export.err" || echo "export $kind $?" >>"$2/$name.rc"
            done
            "$VENV/python" -m fabric report "$def" -o "$2/$name/report" >/dev/null 2>&1 || echo "report $?" >>"$2/$name.rc"
            "$VENV/python" -m fabric lint "$def" >"$2/$name.lint" 2>&1 || echo "lint $?" >>"$2/$name.rc"
        done
    )
}
VENV=$PWD/.venv/bin
git worktree add -q --detach "$work/a" "$before"
git worktree add -q --detach "$work/b" "$after"
outputs "$work/a" "$work/before"
outputs "$work/b" "$work/after"
files=$(find "$work/after" -type f | wc -l)
if diff -r "$work/before" "$work/after"; then
    echo "identical: $files files from $(git rev-parse --short "$before") and $(git rev-parse --short "$after")"
else
    echo "outputs differ between $before and $after (above)" >&2
    exit 1
fi
