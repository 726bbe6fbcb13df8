#!/usr/bin/env bash
# tests/check_build_lines.sh — each example's "Build and run" line, as its comment writes it, works in
# a fresh clone: the tracked files only (no build/), a plain `cc`, then the program runs on the CPU
# (examples/mpi_halo.c: mpicc and mpirun, skipped where there is no mpicc).
#
#   tests/check_build_lines.sh OUTDIR
set -euo pipefail
cd "$(dirname "$0")/.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1   # mpi_halo's mpirun line, as root in CI
out=${1:?usage: tests/check_build_lines.sh OUTDIR}
rm -rf "$out"
mkdir -p "$out"
out=$(cd "$out" && pwd)
if git rev-parse --git-dir >/dev/null 2>&1; then
    git ls-files -z -- accel.h accel_cuda.h accel_vulkan.h examples | xargs -0 cp --parents -t "$out"
else
    cp --parents -t "$out" accel*.h examples/*.c examples/*.h
fi
for src in examples/*.c; do
    line=$( { grep -A1 "Build and run (from the repository root):" "$src" || true; } | tail -n 1 | sed 's/^ *//')
    [[ $line == *"$(basename "$src")"* ]] || { echo "$src: no build line after 'Build and run (from the repository root):'"; exit 1; }
    line=${line%% \[cpu*}                                   # the argument list: run it with "cpu"
    if [[ $line == *mpicc* ]] && ! command -v mpicc >/dev/null 2>&1; then   # examples/mpi_halo.c
        echo "$src: skipped: no mpicc (Open MPI: libopenmpi-dev openmpi-bin)"
        continue
    fi
    echo "\$ $line cpu"
    rm -rf "$out/build"   # each line in a fresh copy: no build/ an earlier line made
    (cd "$out" && bash -c "$line cpu" > "$out/$(basename "$src" .c).out" 2>&1) ||
        { cat "$out/$(basename "$src" .c).out"; echo "$src: the build line failed in a fresh copy"; exit 1; }
    tail -n 1 "$out/$(basename "$src" .c).out"
done
echo "example build lines: ok"
