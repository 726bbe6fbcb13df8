#!/usr/bin/env bash
# tests/check_quickstart.sh — the quick starts compile as written and run, in C and in C++.
#
#   tests/check_quickstart.sh OUTDIR [NAME ...]     NAME: c | c++ | cuda | vulkan | same (default: all)
#
# Extracts the programs marked "begin NAME.c" ... "end NAME.c" from README.md (a fenced block between
# <!-- begin ... --> and <!-- end ... --> comments) and from the doc blocks at the top of accel.h,
# accel_cuda.h and accel_vulkan.h, then:
#   same    README.md's quickstart.c is accel.h's, character for character (after the indentation);
#   c       accel.h's quickstart.c with gcc -std=gnu11 and clang -std=c11 -D_POSIX_C_SOURCE=199309L (the
#           README's build lines), strict warnings, and runs it: "saxpy on ... (cpu): OK";
#   c++     the same file as C++11 (g++) and C++17 (clang++), runs it;
#   cuda    accel_cuda.h's quickstart_cuda.c as C and C++; without a driver (ACCEL_CUDA_LIBRARY pointing
#           nowhere) it runs on the CPU, and the log says why CUDA was skipped, as a warning, no error;
#           with MOCK_LIB set (tests/mock_cuda.c) it runs on the "cuda" backend;
#   vulkan  accel_vulkan.h's quickstart_vulkan.c: the header's glslc line, then C and C++; runs it on
#           lavapipe when LVP_ICD names its ICD file ("(vulkan): OK"), and with no driver (CPU, no error).
# Exit 0 when everything asked for passed; the first failure prints what it ran and stops.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: tests/check_quickstart.sh OUTDIR [NAME ...]}
shift
mkdir -p "$out"
what=("$@")
(( ${#what[@]} )) || what=(same c c++ cuda vulkan)
GCC=${GCC:-gcc} GXX=${GXX:-g++} CLANG=${CLANG:-clang} GLSLC=${GLSLC:-glslc}
WARN="-Wall -Wextra -Wpedantic -Werror -Wshadow"
CWARN="$WARN -Wstrict-prototypes -Wmissing-prototypes"

# extract FILE NAME: the lines between the markers, fences dropped, common indentation removed
extract() {
    awk -v name="$2" '
        index($0, "end " name) && on { on = 0; next }
        on && !/^[[:space:]]*```/ { print }
        index($0, "begin " name) { on = 1 }
    ' "$1" | awk '
        { line[NR] = $0; if ($0 ~ /[^ ]/) { match($0, /^ */); if (!set || RLENGTH < ind) { ind = RLENGTH; set = 1 } } }
        END { for (i = 1; i <= NR; i++) print substr(line[i], ind + 1) }
    ' > "$out/$2"
    [[ -s $out/$2 ]] || { echo "no program marked '$2' in $1"; exit 1; }
}

run() { echo "\$ $*"; "$@"; }
expect() {  # expect PATTERN COMMAND...: runs it, requires exit 0 and PATTERN in its output, no "accel: error" line
    local pat=$1 log
    shift
    log=$("$@" 2>&1) || { echo "$* failed:"; echo "$log"; exit 1; }
    echo "$log"
    grep -q -- "$pat" <<<"$log" || { echo "expected '$pat' in the output of $*"; exit 1; }
    if grep -q "^accel: error" <<<"$log"; then echo "an error was logged by $*"; exit 1; fi
}

for w in "${what[@]}"; do
    case $w in
    same)
        extract README.md quickstart.c && mv "$out/quickstart.c" "$out/readme_quickstart.c"
        extract accel.h quickstart.c
        diff -u "$out/quickstart.c" "$out/readme_quickstart.c" || { echo "README.md's quick start differs from accel.h's"; exit 1; }
        ;;
    c)
        extract accel.h quickstart.c
        run "$GCC" -std=gnu11 $CWARN -I. "$out/quickstart.c" -o "$out/qs_gcc" -lpthread -lm -ldl
        expect "(cpu): OK" "$out/qs_gcc"
        run "$CLANG" -std=c11 -D_POSIX_C_SOURCE=199309L $CWARN -I. "$out/quickstart.c" -o "$out/qs_clang" -lpthread -lm -ldl
        expect "(cpu): OK" "$out/qs_clang"
        ;;
    c++)
        extract accel.h quickstart.c
        run "$GXX" -std=c++11 $WARN -I. -x c++ "$out/quickstart.c" -o "$out/qs_gxx" -lpthread -ldl
        expect "(cpu): OK" "$out/qs_gxx"
        run "${CLANG}++" -std=c++17 $WARN -I. -x c++ "$out/quickstart.c" -o "$out/qs_clangxx" -lpthread -ldl
        expect "(cpu): OK" "$out/qs_clangxx"
        ;;
    cuda)
        extract accel_cuda.h quickstart_cuda.c
        run "$GCC" -std=gnu11 $CWARN -I. "$out/quickstart_cuda.c" -o "$out/qs_cuda" -lpthread -lm -ldl
        run "$GXX" -std=c++11 $WARN -I. -x c++ "$out/quickstart_cuda.c" -o "$out/qs_cuda_gxx" -lpthread -ldl
        for exe in qs_cuda qs_cuda_gxx; do
            expect "(cpu): OK" env ACCEL_CUDA_LIBRARY=/nonexistent/libcuda.so.1 "$out/$exe"
            expect "accel_cuda: unavailable" env ACCEL_CUDA_LIBRARY=/nonexistent/libcuda.so.1 "$out/$exe"
            if [[ -n ${MOCK_LIB:-} ]]; then
                expect "(cuda): OK" env ACCEL_CUDA_LIBRARY="$MOCK_LIB" ACCEL_NVRTC_LIBRARY="$MOCK_LIB" "$out/$exe"
            fi
        done
        ;;
    vulkan)
        extract accel_vulkan.h quickstart_vulkan.c
        glslc_line=$(grep -o 'glslc -fshader-stage=compute --target-env=vulkan1.2 -mfmt=c -o saxpy.spv.inc examples/kernels/saxpy.comp' accel_vulkan.h | head -n 1)
        [[ -n $glslc_line ]] || { echo "accel_vulkan.h lost its glslc line"; exit 1; }
        run ${glslc_line/glslc/$GLSLC}
        mv saxpy.spv.inc "$out/saxpy.spv.inc"
        run "$GCC" -std=gnu11 $CWARN -I. -I"$out" "$out/quickstart_vulkan.c" -o "$out/qs_vk" -lpthread -lm -ldl
        run "$GXX" -std=c++11 $WARN -I. -I"$out" -x c++ "$out/quickstart_vulkan.c" -o "$out/qs_vk_gxx" -lpthread -ldl
        for exe in qs_vk qs_vk_gxx; do
            if [[ -n ${LVP_ICD:-} ]]; then expect "(vulkan): OK" env VK_DRIVER_FILES="$LVP_ICD" "$out/$exe"; fi
            expect "(cpu): OK" env VK_DRIVER_FILES=/nonexistent/icd.json VK_ICD_FILENAMES=/nonexistent/icd.json "$out/$exe"
        done
        ;;
    *) echo "unknown check '$w'"; exit 2 ;;
    esac
done
echo "quick starts: ${what[*]}: ok"
