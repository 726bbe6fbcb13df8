#!/bin/sh
# tests/wine_run.sh WINE PROGRAM.exe: runs one mingw test program under wine, after making sure a
# wineserver that stays up 30 s past its last client serves the prefix. With wine's default 3 s,
# the server could exit between two programs while the next one was connecting ("wine client error:
# recvmsg: Connection reset by peer", no summary line); one started once before the whole suite had
# long exited by the time the mingw configuration ran. A server started before (by wineboot, with the
# default) can still go away that way: a run that wine itself ended so, before the program printed its
# summary line, is run once more (the program never ran; any failure of the program's own stands).
# WINEPREFIX and WINEDEBUG come from the caller.
wine=$1
shift
out=$(mktemp "${TMPDIR:-/tmp}/wine_run.XXXXXX") || exit 2
for try in 1 2; do
    wineserver -p30 >/dev/null 2>&1 || true   # starts one, or finds the prefix's running one
    "$wine" "$@" >"$out" 2>&1
    rc=$?
    if [ "$try" = 1 ] && grep -q 'wine client error' "$out" &&
       ! grep -Eq '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped' "$out"; then
        sleep 1
        continue
    fi
    break
done
cat "$out"
rm -f "$out"
exit "$rc"
