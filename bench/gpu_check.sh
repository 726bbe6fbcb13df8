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
#   3a. recover: tests/test_recover.c (both signal-point modes; its lost-device test must run, not skip:
#      the out-of-bounds kernel loses the context, accel_device_recover resets it, saxpy runs again
#      within 5 s; 100 recovers without growth) and examples/failure.c's recovery part with `cuda`.
#      NVIDIA's driver (580, H200) keeps the sticky error after the reset for the rest of the process:
#      the recover then returns ACCEL_ERROR_DEVICE_LOST and says so, the test skips with that reason
#      after checking it, the example says the device stayed lost; both count as ok, and say so
#   3b. blocking: bench/cuda_blocking.c, which driver calls block the host while a stream waits on the
#      GPU (what accel's "cuda: releases" and host-to-host copy kernel rest on; a table, for the note);
#      then --contexts: the releases behind a wait in another context (the second GPU's, or a context of
#      its own on the same GPU), and whether that context's stream waits on this one's pinned word
#   4. compute-sanitizer (memcheck, racecheck, synccheck; SANITIZER_TOOLS picks, SANITIZER_TIMEOUT limits
#      each program, default 1800 s) over the suite, when installed
#   5. the examples with the `cuda` argument (examples/native.c: its GEMMs by cuBLAS where libcublas loads)
#   5b. nccl: examples/nccl_allreduce.c (NCCL all-reduce and cuBLAS GEMM as native steps between accel
#      kernels, checked on the host; then 20 x 64 MiB all-reduces as native steps vs raw on a stream of
#      its own: the ratio, target <= 1.05). NCCL (libnccl.so.2) and cuBLAS are loaded at run time
#      (ACCEL_EXAMPLE_NCCL_LIBRARY, ACCEL_EXAMPLE_CUBLAS_LIBRARY); without NCCL the step says so.
#   5c. native: bench/cuda.c --native, figures 14 (kernel -> native step -> kernel vs raw stream order)
#      and 15 (a chain of 1024^3 SGEMMs by cuBLAS in queue order vs raw stream order, target 1.05; it
#      says "figure 15 skipped" with the reason where libcublas cannot be loaded or started)
#   6. the benchmark (bench/cuda.c), full run: the table and BENCH lines to paste into the issue note,
#      and the counts per step (figures 5, 9-12) on both sides: wake-ups of accel's queue workers and
#      of the caller; driver calls read n/a on a real driver (tests/mock_cuda.c counts them); then
#      bench/device_waits.c: a CPU signal waited on by a CUDA queue on the GPU (its device word), in the
#      ring mode (gated on the host), and raw cuStreamWaitValue64 on a pinned word: ns and worker
#      wake-ups per step (the suite's tests/test_device_waits.c checks the same path's results). The
#      bench step also says whether the driver took cuStreamBatchMemOp (a gated point's two writes),
#      and runs figures 9, 10 and 17 again with signal points by the event ring (figure 18, the
#      host cost of each driver call, says which of the two a chain's step pays more for)
#   7. vulkan: the Vulkan suite and bench/vulkan.c on the GPU's Vulkan driver, when build/vulkan/ holds
#      them (they need glslc and the Vulkan headers to build: build them elsewhere with
#      `make build-vulkan build/bench_vulkan build/bench_devices build/bench_shared_waits
#      build/cuda-vulkan/test_devices` and copy
#      build/ in (bench_devices: peer copies between two Vulkan devices on the GPU, imported memory vs
#      staged, and rows 8-9: CUDA and Vulkan on one GPU, a CUDA queue's copy of Vulkan memory imported
#      with cuImportExternalMemory vs a raw program importing the same memory, target >= 0.9x; a Vulkan
#      queue's copy of a CUDA buffer imported likewise (its cuMemCreate memory exported as a POSIX fd) vs a
#      raw program's own export, target >= 0.9x; row 10, what such a buffer costs to make, beside a raw
#      cuMemCreate and the plain cuMemAlloc); cuda-vulkan: tests/test_devices.c with CUDA under test and
#      a Vulkan device of the same GPU as the second device (ACCEL_TEST_PEER=vulkan: its
#      cuda_and_vulkan_*, vulkan_*_cuda_memory and *_waits_on_*_signals_on_the_gpu tests must run, not
#      skip (the last two: a CUDA queue waits on a Vulkan signal's imported semaphore, a Vulkan queue on a
#      CUDA signal through a semaphore it lends CUDA, which a CUDA stream raises); its pair tests wait across
#      the two devices on the GPU through the Vulkan signals' imported timeline semaphores); both again with
#      ACCEL_VULKAN_NO_EXTERNAL_SEMAPHORE=1 (test_devices and test_ordering: those waits gated on the
#      host, the fallback); bench_shared_waits: a Vulkan signal waited on by a CUDA queue and by another
#      Vulkan device's queue through the shared semaphore vs raw programs, and a CUDA signal waited on
#      by a Vulkan queue through the semaphore it lends CUDA (row 5) vs a raw
#      cuSignalExternalSemaphoresAsync (targets <= 1.2x); the loader
#      libvulkan.so.1 must be
#      installed). NV_ICD names the driver's manifest (default: the NVIDIA one under /usr/local/nvidia,
#      else the loader's own search).
# The last line is "gpu_check: N passed, N failed"; the exit status is non-zero when anything failed.
# What it builds and runs comes from the Makefile (`make -s gpu-check-list`), never from what build/
# holds, so a fresh clone builds everything before the first step. Where no CUDA device can be opened
# (the suite's first program says the backend "is unavailable here"; ACCEL_CUDA_LIBRARY may point at a
# driver such as build/mock/libcuda_mock.so) the GPU steps are skipped: it says why and exits 77.
#
# Options: --no-build uses the binaries already in build/ (built elsewhere and copied in); --list builds
# (unless --no-build), prints each step's programs and whether they exist, and exits; step names
# (suite ring test_cuda recover blocking sanitizer examples nccl native bench vulkan) run only those steps,
# in the order above.
set -u -o pipefail   # a step's status is its program's, not tee's
cd "$(dirname "$0")/.."
build=1 list=0 steps=()
for a in "$@"; do
    case $a in --no-build) build=0 ;; --list) list=1 ;; *) steps+=("$a") ;; esac
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
    env "$@" TEST_TIMEOUT=${TEST_TIMEOUT:-600} tests/run.sh --config "$name" "${suite_bins[@]}" 2>&1 | tee "$log"
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

# the programs, by name from the Makefile (a glob over build/ matches nothing before the first build)
suite_bins=() example_bins=() nccl_bins=()
while read -r kind path; do
    case $kind in suite) suite_bins+=("$path") ;; example) example_bins+=("$path") ;; nccl) nccl_bins+=("$path") ;; esac
done < <(make -s --no-print-directory gpu-check-list)
if (( ${#suite_bins[@]} == 0 || ${#example_bins[@]} == 0 )); then
    echo "gpu_check: \`make gpu-check-list\` named no programs (${#suite_bins[@]} suite, ${#example_bins[@]} examples)"
    exit 1
fi
# recover: its programs are in the suite's and the examples'
bins=("${suite_bins[@]}" build/gcc/test_cuda "${example_bins[@]}" "${nccl_bins[@]}" build/bench_cuda build/cuda_blocking
      build/bench_device_waits)
if (( build )); then
    echo "==== build (${#bins[@]} programs)"
    make -j"$(nproc)" -k "${bins[@]}" >/dev/null 2>&1 || make -k "${bins[@]}"
fi
if (( list )); then
    for b in "${bins[@]}"; do
        case $b in build/cuda/*) step="suite, ring, sanitizer" ;; build/gcc/test_cuda) step=test_cuda ;;
                   build/bench_cuda | build/bench_device_waits) step=bench ;;
                   build/cuda_blocking) step=blocking ;; build/nccl_allreduce) step=nccl ;; *) step=examples ;; esac
        if [[ -x $b ]]; then echo "  built    $b  ($step)"; else echo "  MISSING  $b  ($step)"; fi
    done
    for b in "${bins[@]}"; do [[ -x $b ]] || exit 1; done
    exit 0
fi

# no CUDA device: say why (accel's log) and skip every GPU step
probe=$(ACCEL_TEST_BACKEND=cuda ACCEL_TEST_VERBOSE=1 timeout -k 10 120 build/cuda/test_programs device_info_is_sane 2>&1)
if [[ $? == 77 && $probe == *"is unavailable here"* ]]; then
    echo "$probe" | grep -m 6 -E 'unavailable|accel_cuda' | sed 's/^ */  /'
    echo "gpu_check: no CUDA device here: all steps skipped (the ${#bins[@]} programs are built)"
    exit 77
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

want recover && {
echo "==== recover (out-of-bounds kernel -> DEVICE_LOST -> accel_device_recover -> saxpy within 5 s)"
for mode in 0 1; do
    if ACCEL_TEST_BACKEND=cuda ACCEL_CUDA_NO_MEMOPS=$mode timeout -k 10 600 build/cuda/test_recover 2>&1 | tee "$log"; then
        if grep -q 'SKIP recover_of_a_lost_device: the CUDA driver keeps the sticky error' "$log"; then
            ok "test_recover (NO_MEMOPS=$mode; the driver keeps a sticky error: a lost device stays lost, as documented)"
        elif grep -q 'SKIP recover_of_a_lost_device' "$log"; then bad "test_recover (NO_MEMOPS=$mode): the lost-device test skipped"
        else ok "test_recover (NO_MEMOPS=$mode)"; fi
    else
        bad "test_recover (NO_MEMOPS=$mode, exit ${PIPESTATUS[0]}; 124 = hang)"
    fi
done
if timeout -k 10 120 build/failure cuda 2>&1 | tee "$log" && grep -q 'the device came back' "$log"; then ok "failure cuda (recovery)"
elif grep -q 'the driver kept the device lost' "$log"; then ok "failure cuda (the driver kept the device lost, as documented)"
else bad "failure cuda (recovery)"; fi
}

want blocking && {
echo "==== cuda_blocking (which driver calls block while a stream waits on the GPU)"
if timeout -k 10 120 build/cuda_blocking; then ok "cuda_blocking"; else bad "cuda_blocking (exit $?)"; fi
echo "==== cuda_blocking --contexts (the same behind a wait in another context; a portable word across them)"
if timeout -k 10 60 build/cuda_blocking --contexts; then ok "cuda_blocking --contexts"; else bad "cuda_blocking --contexts (exit $?)"; fi
}

sanitizer=$(command -v compute-sanitizer || echo "$cuda_home/bin/compute-sanitizer")
if ! want sanitizer; then
    :
elif [[ -x $sanitizer ]]; then
    for tool in ${SANITIZER_TOOLS:-memcheck racecheck synccheck}; do
        all_ok=1
        for t in "${suite_bins[@]}"; do
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

want examples && for e in "${example_bins[@]}"; do
    echo "==== $e cuda"
    if timeout -k 10 300 "$e" cuda; then ok "$e cuda"; else bad "$e cuda (exit $?)"; fi
done

want nccl && for e in "${nccl_bins[@]}"; do
    echo "==== $e cuda (NCCL + cuBLAS in queue order, then 64 MiB all-reduces vs raw)"
    timeout -k 10 300 "$e" cuda 2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
    if (( rc != 0 )); then bad "$e (exit $rc)"
    elif grep -q '^nccl_allreduce: skipped' "$log"; then echo "==== nccl: $(grep -m1 '^nccl_allreduce: skipped' "$log")"
    else ok "$e"; fi
done

want native && {
echo "==== native steps: bench_cuda --native (14: kernel -> native step -> kernel; 15: cuBLAS SGEMM chain)"
if timeout -k 10 300 build/bench_cuda --native 2>&1 | tee "$log"; then
    why=$(grep -m 1 -o 'figure 15 skipped: .*' "$log")
    if [[ -n $why ]]; then ok "bench_cuda --native ($why)"; else ok "bench_cuda --native"; fi
else
    bad "bench_cuda --native (exit ${PIPESTATUS[0]})"
fi
}

want bench && {
echo "==== bench"
if timeout -k 10 600 build/bench_cuda 2>&1 | tee "$log"; then ok "bench_cuda"; else bad "bench_cuda (exit ${PIPESTATUS[0]})"; fi
# a signal point behind a host gate writes the mirror and the progress word in one cuStreamBatchMemOp;
# accel logs it once where the driver refuses that (then two cuStreamWriteValue64): say which it was
if grep -q 'cuStreamBatchMemOp failed' "$log"; then
    echo "==== bench: $(grep -m1 -o 'cuStreamBatchMemOp failed.*' "$log")"
else
    echo "==== bench: cuStreamBatchMemOp taken (mirror and progress writes in one call)"
fi
# the chains with signal points by the event ring (cuEventRecord, as raw's; figures 5 and 12 skip there:
# their raw baselines need memory operations): figure 18 says what each call costs, this whether events
# would serve a chain better than memory writes
echo "==== bench: figures 9, 10, 17 with ACCEL_CUDA_NO_MEMOPS=1 (signal points by the event ring)"
if ACCEL_CUDA_NO_MEMOPS=1 timeout -k 10 300 build/bench_cuda --figures 9,10,17; then ok "bench_cuda (ring mode)"
else bad "bench_cuda (ring mode, exit $?)"; fi
echo "==== bench_device_waits (a CPU signal waited on by a CUDA queue: on the GPU, ring mode, raw)"
if timeout -k 10 300 build/bench_device_waits; then ok "bench_device_waits"; else bad "bench_device_waits (exit $?)"; fi
}

want vulkan && {
vk_bins=(build/vulkan/test_*)
nv_icd=${NV_ICD:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
vk_env=(ACCEL_TEST_BACKEND=vulkan)
[[ -f $nv_icd ]] && vk_env+=(VK_DRIVER_FILES="$nv_icd")
if [[ ! -x ${vk_bins[0]} ]]; then
    echo "==== vulkan: build/vulkan/ holds no tests (build them where glslc is: make build-vulkan build/bench_vulkan): skipped"
else
    suite_bins=("${vk_bins[@]}")
    suite vulkan-gpu "${vk_env[@]}"
    if [[ -x build/bench_vulkan ]]; then
        echo "==== bench_vulkan"
        if env "${vk_env[@]}" timeout -k 10 300 build/bench_vulkan; then ok "bench_vulkan"; else bad "bench_vulkan (exit $?)"; fi
    fi
    # two Vulkan devices on the GPU with their waits on the host (the shared-semaphore path's fallback)
    suite_bins=(build/vulkan/test_devices build/vulkan/test_ordering)
    [[ -x build/vulkan/test_devices ]] && suite vulkan-gpu-no-shared-semaphores "${vk_env[@]}" ACCEL_VULKAN_NO_EXTERNAL_SEMAPHORE=1
    if [[ -x build/cuda-vulkan/test_devices ]]; then   # CUDA and Vulkan on one GPU: imported memory and semaphores
        suite_bins=(build/cuda-vulkan/test_devices)
        suite cuda-vulkan-gpu "${vk_env[@]}" ACCEL_TEST_BACKEND=cuda ACCEL_TEST_PEER=vulkan
        if grep -q 'SKIP cuda_and_vulkan_copies_through_imported_memory' "$log"; then
            bad "cuda-vulkan-gpu: the imported-memory tests skipped ($(grep -m1 -o 'SKIP cuda_and_vulkan_copies.*' "$log"))"
        fi
        if grep -q 'SKIP vulkan_copies_through_exported_cuda_memory' "$log"; then   # the other way
            why=$(grep -m1 -o 'SKIP vulkan_copies_through.*' "$log")
            bad "cuda-vulkan-gpu: the exported CUDA memory tests skipped ($why)"
        fi
        for t in cuda_waits_on_vulkan_signals_on_the_gpu vulkan_waits_on_cuda_signals_on_the_gpu; do
            if grep -q "SKIP $t" "$log"; then   # the shared semaphores, both ways
                bad "cuda-vulkan-gpu: $t skipped ($(grep -m1 -o "SKIP $t.*" "$log"))"
            fi
        done
        suite cuda-vulkan-gpu-gated "${vk_env[@]}" ACCEL_TEST_BACKEND=cuda ACCEL_TEST_PEER=vulkan ACCEL_VULKAN_NO_EXTERNAL_SEMAPHORE=1
    fi
    if [[ -x build/bench_shared_waits ]]; then   # waits across devices of the GPU: shared timeline semaphores
        echo "==== bench_shared_waits"
        if env "${vk_env[@]}" timeout -k 10 300 build/bench_shared_waits; then ok "bench_shared_waits"; else bad "bench_shared_waits (exit $?)"; fi
    fi
    if [[ -x build/bench_devices ]]; then   # peer copies: rows 5-9, imported memory vs staged on the GPU
        echo "==== bench_devices"
        if env "${vk_env[@]}" timeout -k 10 300 build/bench_devices; then ok "bench_devices"; else bad "bench_devices (exit $?)"; fi
    fi
fi
}

echo
for f in "${failures[@]}"; do echo "  FAILED: $f"; done
echo "gpu_check: $passed passed, $failed failed"
(( failed == 0 ))
