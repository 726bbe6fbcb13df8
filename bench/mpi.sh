#!/usr/bin/env bash
# bench/mpi.sh — examples/mpi_halo.c (accel: the exchange posted from a native step, the interior
# overlapping it) against bench/mpi_omp.c (the usual way: blocking MPI_Sendrecv, then an OpenMP loop),
# the same stencil, the same sizes, side by side.
#
#   bench/mpi.sh [--quick] [--rounds N]      (or: make bench-mpi [BENCH_ARGS=--quick])
#
# 2 ranks (NP=), 16 MiB of cells per rank (CELLS=2097152 doubles), 200 steps (STEPS=), a checksum
# all-reduced every 10 steps, one thread per rank (THREADS=: accel lanes and OMP_NUM_THREADS alike).
# Each round runs both programs, in alternating order (accel first in odd rounds); the figures are the
# medians over the rounds of each program's own wall time for the steps (the slowest rank's, launch
# excluded). exch is the time per step from posting the exchange to its completion (accel) or spent in
# MPI_Sendrecv (omp); wait is what accel's boundary kernel waited for it: the part the overlap did not
# hide. --quick: 3 rounds of 40 steps. The last line is "mpi: ratio R (accel/omp)".
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-7} steps=${STEPS:-200}
for a in "$@"; do
    case $a in
    --quick) rounds=3 steps=40 ;;
    --rounds=*) rounds=${a#*=} ;;
    *) echo "usage: bench/mpi.sh [--quick] [--rounds=N]" >&2; exit 2 ;;
    esac
done
np=${NP:-2} cells=${CELLS:-2097152} threads=${THREADS:-1} mpirun=${MPIRUN:-mpirun}
make -s --no-print-directory build/mpi_halo build/bench_mpi_omp
root=()
[[ $(id -u) == 0 ]] && root=(--allow-run-as-root)
run() {  # run accel|omp: prints the program's one line
    if [[ $1 == accel ]]; then
        "$mpirun" "${root[@]}" -np "$np" --oversubscribe build/mpi_halo --quiet --no-check --cells "$cells" \
            --steps "$steps" --every 10 --threads "$threads"
    else
        OMP_NUM_THREADS=$threads "$mpirun" "${root[@]}" -x OMP_NUM_THREADS -np "$np" --oversubscribe \
            build/bench_mpi_omp --cells "$cells" --steps "$steps" --every 10
    fi
}
field() { sed -n "s/.* $1 \([^ ]*\).*/\1/p" <<<"$2"; }
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR/2] + v[NR/2 + 1]) / 2 }'; }
least() { sort -g | head -n 1; }
echo "bench/mpi.sh: $np ranks x $cells cells ($((cells * 8 / 1048576)) MiB per rank), $steps steps," \
     "$threads thread(s) per rank, $rounds rounds"
echo "machine: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg) (other sessions share it: expect noise)"
declare -a aw ow ax ox awt
for ((r = 1; r <= rounds; r++)); do
    if (( r % 2 )); then order="accel omp"; else order="omp accel"; fi
    for p in $order; do
        line=$(run "$p")
        if [[ $p == accel ]]; then
            aw+=("$(field wall_ms "$line")") ax+=("$(field exch_us "$line")") awt+=("$(field wait_us "$line")")
            acs=$(field checksum "$line")
        else
            ow+=("$(field wall_ms "$line")"); ox+=("$(field exch_us "$line")"); ocs=$(field checksum "$line")
        fi
        echo "  round $r $p: $line"
    done
done
[[ $acs == "$ocs" ]] || echo "  note: checksums differ: accel $acs, omp $ocs"
a=$(printf '%s\n' "${aw[@]}" | median) o=$(printf '%s\n' "${ow[@]}" | median)
axm=$(printf '%s\n' "${ax[@]}" | median) oxm=$(printf '%s\n' "${ox[@]}" | median)
awm=$(printf '%s\n' "${awt[@]}" | median)
amin=$(printf '%s\n' "${aw[@]}" | least) omin=$(printf '%s\n' "${ow[@]}" | least)
printf '%-28s %12s %12s %16s %16s\n' "median of $rounds rounds" "wall ms" "best ms" "exchange us/step" \
    "exposed us/step"
printf '%-28s %12.1f %12.1f %16.1f %16.1f\n' "accel (native step, overlap)" "$a" "$amin" "$axm" "$awm"
printf '%-28s %12.1f %12.1f %16.1f %16.1f\n' "MPI_Sendrecv + OpenMP" "$o" "$omin" "$oxm" "$oxm"
awk -v a="$a" -v o="$o" -v am="$amin" -v om="$omin" -v ax="$axm" -v aw="$awm" 'BEGIN {
    printf "the overlap hides %.0f%% of the exchange on the accel side (%.1f of %.1f us per step exposed)\n",
           (ax > 0 ? 100 * (1 - aw / ax) : 100), aw, ax
    printf "best rounds: ratio %.3f\n", am / om
    printf "mpi: ratio %.3f (accel/omp, medians; target <= 1.10)\n", a / o }'
