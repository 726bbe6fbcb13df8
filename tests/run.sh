#!/usr/bin/env bash
# tests/run.sh — run test programs and compile checks, and sum their results into one line.
#
#   tests/run.sh [--config NAME] [--runner "CMD ..."] [--cmd NAME "SHELL COMMAND"] [PROGRAM ...] ...
#
# Arguments are read left to right:
#   --config NAME    the configuration the following entries belong to (output lines get "[NAME] ")
#   --runner "CMD"   prefix for the following programs ("" = run directly; e.g. "node tests/wasi_run.mjs")
#   --cmd NAME CMD   a check: CMD runs under bash; exit 0 counts 1 passed, anything else 1 failed
#   --skip NAME WHY  a check that cannot run here: counts 1 skipped
#   PROGRAM          a test program: it prints a last line "N passed, N failed, N skipped" and exits
#                    0 (ok), 1 (failures) or 77 (everything skipped). Its counts are added up. A program
#                    that is missing (did not build), crashes, times out, or prints no summary line
#                    counts as 1 failed (in addition to what its summary line reported).
#
# Environment: TEST_TIMEOUT (seconds per program, default 900).
# Output: each program's output prefixed by its configuration, a per-configuration table, the skipped
# tests by reason (from the programs' "SKIP test: reason" lines and the --skip entries), and as the very
# last line the sum "N passed, N failed, N skipped". Exit status 1 when anything failed.
set -u

timeout_s=${TEST_TIMEOUT:-900}
config=default
runner=""
total_p=0 total_f=0 total_s=0
configs=()
declare -A cfg_p=() cfg_f=() cfg_s=() cfg_fails=() cfg_t=()   # cfg_t: seconds its programs ran
declare -A skip_n=() skip_where=()   # per skip reason: how many, and in which configurations
summary_re='^([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped[[:space:]]*$'
tmp=$(mktemp "${TMPDIR:-/tmp}/accel-test.XXXXXX") || exit 2
trap 'rm -f "$tmp"' EXIT

if command -v timeout >/dev/null 2>&1; then with_timeout=(timeout -k 10 "$timeout_s"); else with_timeout=(); fi

use_config() {
    config=$1
    if [[ -z ${cfg_p[$config]+x} ]]; then
        configs+=("$config")
        cfg_p[$config]=0 cfg_f[$config]=0 cfg_s[$config]=0 cfg_fails[$config]="" cfg_t[$config]=0
    fi
}

add() {  # passed failed skipped [name-of-failure]
    cfg_p[$config]=$(( ${cfg_p[$config]} + $1 ))
    cfg_f[$config]=$(( ${cfg_f[$config]} + $2 ))
    cfg_s[$config]=$(( ${cfg_s[$config]} + $3 ))
    total_p=$(( total_p + $1 )) total_f=$(( total_f + $2 )) total_s=$(( total_s + $3 ))
    if (( $2 > 0 )); then cfg_fails[$config]+=" $4"; fi
}

skip_reason() {  # skip_reason COUNT REASON: count skipped tests under their reason
    local n=$1 why=$2
    skip_n[$why]=$(( ${skip_n[$why]:-0} + n ))
    case " ${skip_where[$why]:-} " in *" $config "*) ;; *) skip_where[$why]+=" $config" ;; esac
}
skip_reasons_of() {  # the "SKIP test: reason" lines of a program's output; sets skip_found to their count
    local line
    skip_found=0
    while IFS= read -r line; do
        skip_reason 1 "${line#SKIP *: }"
        skip_found=$(( skip_found + 1 ))
    done < <(grep -E '^SKIP [^ :]+: ' "$1")
}

describe_rc() {
    case $1 in
        124|137) echo "timed out after ${timeout_s}s" ;;
        126|127) echo "could not be started (exit $1)" ;;
        66) echo "exit code 66: a ThreadSanitizer report" ;;
        *) if (( $1 > 128 && $1 < 160 )); then echo "killed by signal $(( $1 - 128 ))$(kill -l $(( $1 - 128 )) 2>/dev/null | sed 's/^/ (SIG/;s/$/)/')"
           else echo "exit code $1"; fi ;;
    esac
}

run_program() {
    local prog=$1 name rc p=0 f=0 s=0 line have=0 t0=$SECONDS secs
    name=$(basename "$prog")
    if [[ ! -f $prog ]]; then
        echo "[$config] $name: FAILED (not built: $prog is missing; see the build output above)"
        add 0 1 0 "$name(not-built)"
        return
    fi
    echo "[$config] ---- $name"
    # shellcheck disable=SC2086  # the runner is a word list on purpose
    "${with_timeout[@]}" $runner "$prog" >"$tmp" 2>&1 </dev/null
    rc=$?
    secs=$(( SECONDS - t0 ))
    cfg_t[$config]=$(( ${cfg_t[$config]} + secs ))
    sed "s/^/[$config]   /" "$tmp"
    line=$(grep -E "$summary_re" "$tmp" | tail -n 1)
    if [[ -n $line && $line =~ $summary_re ]]; then
        have=1 p=${BASH_REMATCH[1]} f=${BASH_REMATCH[2]} s=${BASH_REMATCH[3]}
    fi
    case $rc in
        0)  if (( ! have )); then f=$(( f + 1 )); echo "[$config] $name: FAILED (exit 0 but no summary line)";
            elif (( f > 0 )); then echo "[$config] $name: FAILED ($line)";
            else echo "[$config] $name: ok ($line) ${secs}s"; fi ;;
        77) if (( ! have )); then s=$(( s + 1 )); fi
            if (( f > 0 )); then echo "[$config] $name: FAILED ($line, exit 77)";
            else echo "[$config] $name: skipped${line:+ ($line)}"; fi ;;
        1)  if (( ! have )); then f=$(( f + 1 )); echo "[$config] $name: FAILED (exit 1, no summary line)";
            else
                if (( f == 0 )); then f=1; fi
                echo "[$config] $name: FAILED ($line)"
            fi ;;
        *)  f=$(( f + 1 ))
            echo "[$config] $name: FAILED ($(describe_rc "$rc")${line:+; its last summary: $line})" ;;
    esac
    add "$p" "$f" "$s" "$name"
    skip_reasons_of "$tmp"
    if (( s > skip_found )); then skip_reason $(( s - skip_found )) "$name: skipped without a reason line (exit $rc)"; fi
}

run_check() {
    local name=$1 cmd=$2 rc t0=$SECONDS secs
    bash -c "$cmd" >"$tmp" 2>&1 </dev/null
    rc=$?
    secs=$(( SECONDS - t0 ))
    cfg_t[$config]=$(( ${cfg_t[$config]} + secs ))
    if (( rc == 0 )); then
        echo "[$config] check $name: ok ${secs}s"
        add 1 0 0 "$name"
    else
        echo "[$config] check $name: FAILED ($(describe_rc "$rc"))"
        echo "[$config]   \$ $cmd"
        sed "s/^/[$config]   /" "$tmp"
        add 0 1 0 "$name"
    fi
}

use_config "$config"
started=$SECONDS
while (( $# > 0 )); do
    case $1 in
        --config) use_config "$2"; shift 2 ;;
        --runner) runner=$2; shift 2 ;;
        --cmd)    run_check "$2" "$3"; shift 3 ;;
        --skip)   echo "[$config] check $2: skipped ($3)"; add 0 0 1 "$2"; skip_reason 1 "$2: $3"; shift 3 ;;
        --)       shift ;;
        -*)       echo "run.sh: unknown option $1" >&2; exit 2 ;;
        *)        run_program "$1"; shift ;;
    esac
done

echo
echo "==== summary ($(( SECONDS - started ))s)"
for c in "${configs[@]}"; do
    if [[ $c == default ]] && (( cfg_p[$c] + cfg_f[$c] + cfg_s[$c] == 0 )); then continue; fi
    printf '  %-15s %4d passed, %d failed, %d skipped  %5ss%s\n' "$c" "${cfg_p[$c]}" "${cfg_f[$c]}" "${cfg_s[$c]}" \
        "${cfg_t[$c]}" \
        "${cfg_fails[$c]:+   FAILED:${cfg_fails[$c]}}"
done
if (( total_s > 0 )); then
    echo "==== skipped, by reason (count, reason, configurations)"
    for why in "${!skip_n[@]}"; do
        printf '%6d  %s  [%s ]\n' "${skip_n[$why]}" "$why" "${skip_where[$why]}"
    done | sort -k1,1nr -k2
fi
echo "$total_p passed, $total_f failed, $total_s skipped"
(( total_f == 0 ))
