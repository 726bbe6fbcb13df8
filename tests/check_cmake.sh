#!/usr/bin/env bash
# tests/check_cmake.sh — CMakeLists.txt's INTERFACE target, consumed as the README says, from
#   c        project(app C)       + add_subdirectory + target_link_libraries(app PRIVATE accel)
#   cxx      project(app CXX)     the same, the quick start compiled as C++ (app.cpp)
#   mixed    project(app C CXX)   the quick start in C beside a C++ file that includes accel.h
#   fetch    project(app C)       + FetchContent_Declare(accel SOURCE_DIR ...) + FetchContent_MakeAvailable
# Each is configured, built and run (the program is accel.h's quick start: "saxpy on ... OK").
#
#   tests/check_cmake.sh OUTDIR [c|cxx|mixed|fetch ...]        (CMAKE=cmake by default)
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
out=${1:?usage: tests/check_cmake.sh OUTDIR [c|cxx|mixed|fetch ...]}
shift
what=("$@")
(( ${#what[@]} )) || what=(c cxx mixed fetch)
CMAKE=${CMAKE:-cmake}
unset MAKEFLAGS MFLAGS MAKELEVEL   # the consumers build on their own, not under the calling make
rm -rf "$out"
mkdir -p "$out"
out=$(cd "$out" && pwd)
tests/check_quickstart.sh "$out/src" same >/dev/null   # writes $out/src/quickstart.c (accel.h's)

consumer() {  # consumer NAME LANGUAGES SOURCES HOW: writes $out/NAME/CMakeLists.txt and its sources
    local dir=$out/$1
    mkdir -p "$dir"
    {
        echo "cmake_minimum_required(VERSION 3.14)"
        echo "project(app LANGUAGES $2)"
        case $4 in
            subdir) echo "add_subdirectory(\"$repo\" accel)" ;;
            fetch)  echo "include(FetchContent)"
                    echo "FetchContent_Declare(accel SOURCE_DIR \"$repo\")"
                    echo "FetchContent_MakeAvailable(accel)" ;;
        esac
        echo "add_executable(app $3)"
        echo "target_link_libraries(app PRIVATE accel::accel)"
    } > "$dir/CMakeLists.txt"
}

for w in "${what[@]}"; do
    case $w in
        c)     consumer c C app.c subdir
               cp "$out/src/quickstart.c" "$out/c/app.c" ;;
        cxx)   consumer cxx CXX app.cpp subdir
               cp "$out/src/quickstart.c" "$out/cxx/app.cpp" ;;
        mixed) consumer mixed "C CXX" "app.c names.cpp" subdir
               cp "$out/src/quickstart.c" "$out/mixed/app.c"
               printf '#include "accel.h"\n#include <string>\nstd::string accel_ok_name();\nstd::string accel_ok_name() { return accel_result_string(ACCEL_OK); }\n' \
                   > "$out/mixed/names.cpp" ;;
        fetch) consumer fetch C app.c fetch
               cp "$out/src/quickstart.c" "$out/fetch/app.c" ;;
        *) echo "unknown consumer '$w'"; exit 2 ;;
    esac
    echo "==== $w: $(sed -n 2p "$out/$w/CMakeLists.txt")"
    "$CMAKE" -S "$out/$w" -B "$out/$w/build" >"$out/$w/configure.log" 2>&1 || { cat "$out/$w/configure.log"; exit 1; }
    "$CMAKE" --build "$out/$w/build" >"$out/$w/build.log" 2>&1 || { cat "$out/$w/build.log"; exit 1; }
    result=$("$out/$w/build/app" 2>&1) || { echo "$result"; exit 1; }
    echo "$result"
    grep -q ": OK$" <<<"$result"
done
echo "cmake consumers: ${what[*]}: ok"
