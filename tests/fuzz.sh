#!/usr/bin/env bash
# tests/fuzz.sh SECONDS FUZZER... — runs each libFuzzer binary for SECONDS seconds, starting from a copy
# of its committed seed corpus: tests/fuzz_spirv_corpus/ for fuzz_spirv (inputs up to 4096 bytes), else
# tests/fuzz_corpus/ (up to 2048 bytes) (new inputs go to build/fuzz/run-NAME/corpus, crashes to
# build/fuzz/run-NAME/artifacts/). Prints, per fuzzer, how long it ran and how many inputs it executed, then
# "N passed, N failed, N skipped" (one test per fuzzer). A crash, leak, timeout (30 s per input) or
# contract violation fails; add the artifact as tests/fuzz_corpus/regress-NN (fuzz_spirv: to
# tests/fuzz_spirv_corpus/) so the suite replays it.
set -u
secs=$1
shift
p=0 f=0 s=0
for bin in "$@"; do
    name=$(basename "$bin")
    work=build/fuzz/run-$name
    if [[ ! -x $bin ]]; then
        echo "[fuzz] $name: FAILED (not built)"
        f=$(( f + 1 ))
        continue
    fi
    case $name in
        fuzz_spirv*) seeds=tests/fuzz_spirv_corpus max_len=4096 ;;
        *) seeds=tests/fuzz_corpus max_len=2048 ;;
    esac
    rm -rf "$work/corpus"
    mkdir -p "$work/corpus" "$work/artifacts"
    cp "$seeds"/* "$work/corpus/"
    echo "[fuzz] $name: ${secs}s from $(ls "$seeds" | wc -l) seed inputs"
    t0=$SECONDS
    ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1} \
        "$bin" -max_total_time="$secs" -max_len="$max_len" -timeout=30 -rss_limit_mb=3072 -print_final_stats=1 \
        -artifact_prefix="$work/artifacts/" "$work/corpus" >"$work/log" 2>&1
    rc=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log" | tail -n 1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$work/log" | tail -n 1)
    cov=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$work/log" | sed -n 's/.*\(cov: [0-9]*\).*/\1/p' | tail -n 1)
    echo "[fuzz] $name: ran $(( SECONDS - t0 ))s, ${execs:-?} executions (${rate:-?}/s), ${cov:-cov: ?}, corpus $(ls "$work/corpus" | wc -l) inputs"
    if (( rc == 0 )); then
        p=$(( p + 1 ))
    else
        f=$(( f + 1 ))
        echo "[fuzz] $name: FAILED (exit $rc); the end of its log:"
        grep -v '^    #[0-9]' "$work/log" | tail -n 40 | sed "s/^/[fuzz]   /"
        ls "$work/artifacts" | sed "s|^|[fuzz]   artifact: $work/artifacts/|"
    fi
done
echo "$p passed, $f failed, $s skipped"
(( f == 0 ))
