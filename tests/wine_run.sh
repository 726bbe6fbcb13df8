#!/bin/sh
# tests/wine_run.sh WINE PROGRAM.exe: runs one mingw test program under wine, after making sure a
# wineserver that stays up 30 s past its last client serves the prefix. With wine's default 3 s,
# the server could exit between two programs while the next one was connecting ("wine client error:
# recvmsg: Connection reset by peer", no summary line); one started once before the whole suite had
# long exited by the time the mingw configuration ran. WINEPREFIX and WINEDEBUG come from the caller.
wine=$1
shift
wineserver -p30 >/dev/null 2>&1 || true   # starts one, or finds the prefix's running one
exec "$wine" "$@"
