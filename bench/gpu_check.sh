#!/usr/bin/env bash
# bench/gpu_check.sh — every check of the CUDA backend that needs an NVIDIA GPU, in one go.
#
#   bench/gpu_check.sh            (or: make gpu-check)
#
# Run it from a checkout on a machine with an NVIDIA driver (the CUDA toolkit is optional: NVRTC and
# compute-sanitizer are used when found, under $CUDA_HOME or /usr/local/cuda). It runs, in order:
#   1. the conformance suite (tests/test_*.c built with -DACCEL_TEST_HAVE_CUDA) with
#      ACCEL_TEST_BACKEND=cuda, signal points by cuStreamWriteValue64 — it must RUN (not skip) and pass
#   2. the same with ACCEL_CUDA_NO_MEMOPS=1: signal points by the event ring (the fallback)
#   3. tests/test_cuda.c: unavailable paths, NVRTC, PTX JIT errors, and the out-of-bounds kernel that
#      must end in ACCEL_ERROR_DEVICE_LOST without a hang (a 120 s limit catches a hang)
#   4. compute-sanitizer (memcheck, racecheck, synccheck; SANITIZER_TOOLS picks, SANITIZER_TIMEOUT limits
#      each program, default 1800 s) over the suite, when installed
#   5. the examples with the `cuda` argument
#   6. the benchmark (bench/cuda.c), full run: the table and BENCH lines to paste into the issue note
# The last line is "gpu_check: N passed, N failed"; the exit status is non-zero when anything failed.
#
# Options: --no-build uses the binaries already in build/ (built elsewhere and copied in); step names
# (suite ring test_cuda sanitizer examples bench) run only those steps, in the order above.
set -u
cd "$(dirname "$0")/.."
build=1 steps=()
for a in "$@"; do
    case $a in --no-build) build=0 ;; *) steps+=("$a") ;; esac
done
want() { (( ${#steps[@]} == 0 )) || [[ " ${steps[*]} " == *" $1 "* ]]; }
passed=0 failed=0 failures=()
log=$(mktemp)
trap 'rm -f "$log"' EXIT

ok()   { passed=$((passed + 1)); echo "==== ok: $1"; }
bad()  { failed=$((failed + 1)); failures+=("$1"); echo "==== FAILED: $1"; }

# run.sh's last line must show tests that passed, none failed, and no program skipped wholesale
suite() {  # NAME ENV...
    local name=$1 line p f s
    shift
    echo "==== $name"
    env "$@" TEST_TIMEOUT=${TEST_TIMEOUT:-600} tests/run.sh --config "$name" build/cuda/test_* 2>&1 | tee "$log"
    line=$(tail -n 1 "$log")
    if [[ $line =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed,\ ([0-9]+)\ skipped ]]; then
        p=${BASH_REMATCH[1]} f=${BASH_REMATCH[2]} s=${BASH_REMATCH[3]}
        if (( f == 0 && p > 0 )) && ! grep -q 'is unavailable here' "$log"; then ok "$name ($line)"; else bad "$name ($line)"; fi
    else
        bad "$name (no summary)"
    fi
}

echo "==== machine"
nvidia-smi 2>/dev/null || echo "(nvidia-smi not found)"
cuda_home=${CUDA_HOME:-/usr/local/cuda}
[[ -z ${ACCEL_NVRTC_LIBRARY:-} && -f $cuda_home/lib64/libnvrtc.so ]] && export ACCEL_NVRTC_LIBRARY=$cuda_home/lib64/libnvrtc.so

bins=(build/cuda/test_* build/gcc/test_cuda build/saxpy build/pipeline build/frames build/bench_cuda)
if (( build )); then
    echo "==== build"
    make -j"$(nproc)" -k "${bins[@]}" >/dev/null 2>&1 || make -k "${bins[@]}"
fi

want suite && suite cuda-memops ACCEL_TEST_BACKEND=cuda
want ring && suite cuda-event-ring ACCEL_TEST_BACKEND=cuda ACCEL_CUDA_NO_MEMOPS=1

want test_cuda && {
echo "==== test_cuda (incl. out-of-bounds kernel -> DEVICE_LOST, 120 s limit)"
if timeout -k 10 120 build/gcc/test_cuda 2>&1 | tee "$log"; then
    if grep -q 'SKIP out_of_bounds_kernel_loses_the_device' "$log"; then bad "test_cuda: the GPU tests skipped"; else ok "test_cuda"; fi
else
    bad "test_cuda (exit ${PIPESTATUS[0]}; 124 = hang)"
fi
}

sanitizer=$(command -v compute-sanitizer || echo "$cuda_home/bin/compute-sanitizer")
if ! want sanitizer; then
    :
elif [[ -x $sanitizer ]]; then
    for tool in ${SANITIZER_TOOLS:-memcheck racecheck synccheck}; do
        all_ok=1
        for t in build/cuda/test_*; do
            echo "==== compute-sanitizer --tool $tool $t"
            ACCEL_TEST_BACKEND=cuda timeout -k 10 "${SANITIZER_TIMEOUT:-1800}" "$sanitizer" --tool "$tool" --error-exitcode 99 "$t" >"$log" 2>&1
            rc=$?
            tail -n 5 "$log"
            if (( rc != 0 && rc != 77 )); then all_ok=0; echo "  -> exit $rc"; grep -m 20 -E '=====+ (ERROR|Invalid|Race)' "$log"; fi
        done
        if (( all_ok )); then ok "compute-sanitizer $tool"; else bad "compute-sanitizer $tool"; fi
    done
else
    echo "==== compute-sanitizer not found: skipped"
fi

want examples && for e in build/saxpy build/pipeline build/frames; do
    echo "==== $e cuda"
    if timeout -k 10 300 "$e" cuda; then ok "$e cuda"; else bad "$e cuda (exit $?)"; fi
done

want bench && {
echo "==== bench"
if timeout -k 10 600 build/bench_cuda; then ok "bench_cuda"; else bad "bench_cuda (exit $?)"; fi
}

echo
for f in "${failures[@]}"; do echo "  FAILED: $f"; done
echo "gpu_check: $passed passed, $failed failed"
(( failed == 0 ))
