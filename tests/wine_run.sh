#!/bin/sh
# tests/wine_run.sh WINE PROGRAM.exe: runs one mingw test program under wine, after making sure a
# wineserver that stays up 30 s past its last client serves the prefix. With wine's default 3 s,
# the server could exit between two programs while the next one was connecting ("wine client error:
# recvmsg: Connection reset by peer", no summary line); one started once before the whole suite had
# long exited by the time the mingw configuration ran. A server started before (by wineboot, with the
# default) can still go away that way.
#
# A run that wine itself ended before the program printed its summary line is run again, up to three
# tries in all, and what each such try printed is shown with "wine_run:" before it, so the log keeps
# it. Wine ended it where the run failed without a summary line and either wine said so ("wine client
# error", a line that starts with "wine:" or "wineserver:") or nothing at all was printed with exit
# code 1 (wine's own exit for a lost server: a test program prints its summary line on every path
# that returns, and a crash exits with the exception's code, not 1). Any other failure is the
# program's own and stands as it is. WINEPREFIX and WINEDEBUG come from the caller.
wine=$1
shift
out=$(mktemp "${TMPDIR:-/tmp}/wine_run.XXXXXX") || exit 2

wine_ended_it() {  # wine_ended_it RC: the last try failed before the program's end, and wine ended it
    [ "$1" != 0 ] || return 1
    ! grep -Eq '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped' "$out" || return 1
    grep -Eq 'wine client error|^wine:|^wineserver:' "$out" && return 0
    [ "$1" = 1 ] && [ ! -s "$out" ]
}

try=1
while :; do
    wineserver -p30 >/dev/null 2>&1 || true   # starts one, or finds the prefix's running one
    "$wine" "$@" >"$out" 2>&1
    rc=$?
    if [ "$try" -ge 3 ] || ! wine_ended_it "$rc"; then break; fi
    if [ -s "$out" ]; then said="it printed:"; else said="it printed nothing"; fi
    echo "wine_run: try $try of $*: wine ended it (exit $rc) before its summary line; $said"
    sed 's/^/wine_run:   /' "$out"
    try=$((try + 1))
    sleep 1
done
cat "$out"
rm -f "$out"
exit "$rc"
