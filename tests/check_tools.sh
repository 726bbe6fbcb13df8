#!/usr/bin/env bash
# tests/check_tools.sh — with every package of .ci/packages installed, `make test` skips nothing for a
# missing tool (`make test`'s tools-of-.ci/packages check).
#
#   tests/check_tools.sh --why-not         why the check does not apply here (one line), or nothing when
#                                          every package of `.ci/deps.sh --list` is installed
#   tests/check_tools.sh VAR=VALUE ...     the Makefile's tool variables (HAVE_GLSLC=1, LVP_ICD=/usr/...):
#                                          fails, naming each, when one is empty; then probes the tools
#                                          the Makefile only looks for in a recipe (spirv-val, valgrind,
#                                          libFuzzer)
#
# The Makefile decides at parse time; `make test` therefore installs first and parses again (test-run).
# A make that parsed before the install sees the packages installed but its HAVE_* empty: this fails.
# Environment: SPIRVVAL, VALGRIND, CLANG (the Makefile passes its own), SCRATCH (a directory for the
# libFuzzer probe, default build/checks).
set -uo pipefail
cd "$(dirname "$0")/.."

if [[ ${1:-} == --why-not ]]; then
    missing=$(.ci/deps.sh --missing 2>/dev/null)
    case $? in
        0) [[ -z $missing ]] || echo "packages of .ci/packages not installed: $(echo $missing)" ;;
        2) echo "no dpkg-query (not a Debian-like system): cannot tell what .ci/packages installed" ;;
        *) echo ".ci/deps.sh --missing failed" ;;
    esac
    exit 0
fi

# what each variable stands for: the package(s) behind it, and what `make test` skips without it
what() {
    case $1 in
        HAVE_GLSLC)      echo "glslc (package glslc): SPIR-V test kernels, vulkan configurations, example kernel checks" ;;
        HAVE_VK_HEADERS) echo "<vulkan/vulkan_core.h> (libvulkan-dev): vulkan configurations, vk-* checks" ;;
        VULKAN_INC_OK)   echo "<vulkan/vulkan_core.h> (libvulkan-dev): the all-in-one-tu checks" ;;
        HAVE_VULKAN)     echo "Vulkan headers + glslc (libvulkan-dev, glslc): vulkan configurations" ;;
        LVP_ICD)         echo "lavapipe's ICD json (mesa-vulkan-drivers): the vulkan suite's pinned driver" ;;
        VK_LAYER)        echo "the validation layer (vulkan-validationlayers): vulkan runs without validation" ;;
        HAVE_MINGW)      echo "x86_64-w64-mingw32-gcc + wine (gcc-mingw-w64-x86-64-win32, wine, wine64): mingw" ;;
        HAVE_EMCC)       echo "emcc (emscripten): the emscripten configuration and checks" ;;
        WASM_LD)         echo "wasm-ld (lld-14): run-wasm" ;;
        HAVE_WASI)       echo "wasi-libc + wasm-ld (wasi-libc, lld-14): run-wasm" ;;
        HAVE_TCC)        echo "tcc (tcc): the tcc-header check" ;;
        HAVE_CMAKE)      echo "cmake (cmake): the cmake check" ;;
        HAVE_TBB)        echo "oneTBB (libtbb-dev): bench/cpu.c figure 9's oneTBB side" ;;
        HAVE_MPI)        echo "mpicc + mpirun (libopenmpi-dev, openmpi-bin): the mpi-halo checks, make bench-mpi" ;;
        *)               echo "(a tool of .ci/packages)" ;;
    esac
}

skipped=()
n=0
for arg in "$@"; do
    var=${arg%%=*} val=${arg#*=}
    n=$(( n + 1 ))
    [[ -n $val ]] || skipped+=("$var is empty: $(what "$var")")
done

probe() {  # probe NAME WHAT COMMAND...
    local name=$1 desc=$2
    shift 2
    n=$(( n + 1 ))
    "$@" >/dev/null 2>&1 || skipped+=("$name not found: $desc")
}
probe "${SPIRVVAL:-spirv-val}" "spirv-val (spirv-tools): the SPIR-V kernel builds" command -v "${SPIRVVAL:-spirv-val}"
probe "${VALGRIND:-valgrind}" "valgrind (valgrind): make test-valgrind" command -v "${VALGRIND:-valgrind}"
scratch=${SCRATCH:-build/checks}
mkdir -p "$scratch"
fuzz_probe() {
    printf '%s\n' 'int LLVMFuzzerTestOneInput(const unsigned char* d, unsigned long n);' \
        'int LLVMFuzzerTestOneInput(const unsigned char* d, unsigned long n) { (void)d; (void)n; return 0; }' |
        "${CLANG:-clang}" -fsanitize=fuzzer -x c - -o "$scratch/fuzz_probe"
}
probe libFuzzer "${CLANG:-clang} -fsanitize=fuzzer (libclang-rt-14-dev): make fuzz" fuzz_probe

if (( ${#skipped[@]} )); then
    echo "every package of .ci/packages is installed, yet make test would skip for want of these tools:"
    printf '  %s\n' "${skipped[@]}"
    exit 1
fi
echo "all $n tools of .ci/packages found"
