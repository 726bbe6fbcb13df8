#!/usr/bin/env bash
# tests/check_mpi.sh — examples/mpi_halo.c under mpirun on this machine (`make test`'s mpi-* checks).
#
#   tests/check_mpi.sh BINARY NP [ARG ...]
#
# Runs `mpirun -np NP --oversubscribe BINARY ARG...` (as root with --allow-run-as-root) under a time
# limit (MPI_CHECK_TIMEOUT, default 60 s: the launch itself takes seconds on a busy machine). Without
# --fail in the arguments it must exit 0 with "OK" and "cells match" (checked against the serial
# computation). With --fail KIND:RANK:STEP it must exit non-zero, with one "rank R:
# ACCEL_ERROR_SIGNAL_FAILED" line from every rank (a rank that finished its steps too: the run ends with
# an all-reduce), rank 0's "mpi_halo: FAILED: rank RANK failed at step STEP" line, and every rank settled
# within 5 s of the failure (its own "settled N ms after the failure" line).
# Environment: MPIRUN (default mpirun).
set -uo pipefail
bin=${1:?usage: tests/check_mpi.sh BINARY NP [ARG ...]}
np=${2:?usage: tests/check_mpi.sh BINARY NP [ARG ...]}
shift 2
args="$*"
root=()
[[ $(id -u) == 0 ]] && root=(--allow-run-as-root)
out=$(mktemp)
trap 'rm -f "$out"' EXIT
start=$(date +%s.%N)
timeout -k 5 "${MPI_CHECK_TIMEOUT:-60}" "${MPIRUN:-mpirun}" "${root[@]}" -np "$np" --oversubscribe "$bin" "$@" >"$out" 2>&1
rc=$?
secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
fail() { cat "$out"; echo "check_mpi: $* (exit $rc after $secs s: mpirun -np $np $bin $args)"; exit 1; }
(( rc == 124 || rc == 137 )) && fail "timed out: a rank hangs"
fail_arg= prev=
for a in "$@"; do [[ $prev == --fail ]] && fail_arg=$a; prev=$a; done
if [[ -z $fail_arg ]]; then
    (( rc == 0 )) || fail "the run failed"
    grep -qx OK "$out" || fail "no OK line"
    grep -q "cells match" "$out" || grep -q -- --no-check <<<"$*" || fail "no check against the serial computation"
    echo "mpi_halo, $np ranks: $(grep -m1 '^  exchange' "$out" | sed 's/^ *//') ($secs s)"
    exit 0
fi
(( rc != 0 )) || fail "exit 0 after --fail $fail_arg"
rank=$(cut -d: -f2 <<<"$fail_arg") step=$(cut -d: -f3 <<<"$fail_arg")
# as the program prints them (no leading zeros)
[[ $rank =~ ^[0-9]+$ && $step =~ ^[0-9]+$ ]] && rank=$((10#$rank)) step=$((10#$step))
n=$(grep -c '^rank [0-9]*: ACCEL_ERROR_SIGNAL_FAILED' "$out")
(( n == np )) || fail "$n of $np ranks reported ACCEL_ERROR_SIGNAL_FAILED"
grep -q "^mpi_halo: FAILED: rank $rank failed at step $step " "$out" ||
    fail "no 'mpi_halo: FAILED: rank $rank failed at step $step' line"
settled=$(sed -n 's/^rank [0-9]*: every request settled \([0-9.]*\) ms after the failure.*/\1/p' "$out")
(( $(wc -l <<<"$settled") == np )) || fail "not every rank said when it settled"
slowest=$(sort -g <<<"$settled" | tail -n 1)
awk -v s="$slowest" 'BEGIN { exit !(s < 5000) }' || fail "a rank settled $slowest ms after the failure (limit 5000)"
echo "mpi_halo, $np ranks, --fail $fail_arg: every rank saw ACCEL_ERROR_SIGNAL_FAILED, the last settled $slowest ms after the failure ($secs s with mpirun)"
