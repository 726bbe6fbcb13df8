#!/usr/bin/env bash
# tests/check_exports.sh "CC FLAGS" SOURCE OBJECT — compiles the implementation as a user would (no
# ACCEL_STATIC) and checks with nm that every global symbol it defines is named accel_* (the public API):
# nothing private (accel_i_*), nothing unprefixed, no driver names. Prints the offenders and exits 1.
set -u
cc=$1 src=$2 obj=$3
# shellcheck disable=SC2086  # the compiler command is a word list on purpose
$cc -c "$src" -o "$obj" || exit 1
syms=$(nm -g --defined-only "$obj" | awk 'NF >= 3 { print $3 }')
[[ -n $syms ]] || { echo "no exported symbols at all in $obj"; exit 1; }
bad=$(printf '%s\n' "$syms" | awk '!/^accel_/ || /^accel_i_/')
echo "$(printf '%s\n' "$syms" | wc -l) exported symbols"
if [[ -n $bad ]]; then echo "symbols outside the accel_* API:"; printf '  %s\n' $bad; exit 1; fi
exit 0
