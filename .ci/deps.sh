#!/usr/bin/env bash
# .ci/deps.sh — the packages of .ci/packages (the one list) for `make test` and .ci/run.
#
#   .ci/deps.sh --list      print the packages this machine needs (nodejs only without a node >= 18)
#   .ci/deps.sh --missing   print those of --list that are not installed (dpkg-query), one a line;
#                           exit 2 where there is no dpkg-query (not a Debian-like system)
#   .ci/deps.sh --install   apt-get update + apt-get install of all of them (root)
#   .ci/deps.sh --ensure    what `make test` (and so .ci/run) does first: nothing when every package
#                           is installed (or when this is not a Debian-like system: missing tools are
#                           then skipped by the tests); otherwise installs the missing ones with
#                           apt-get as root or through sudo (without a password prompt), and else
#                           prints the one install line and exits 1. ACCEL_NO_INSTALL=1 only reports
#                           what is missing and exits 0.
# For the check of this script (`make test`'s deps-script check): ACCEL_DEPS_PACKAGES=FILE reads another
# list, ACCEL_DEPS_AS_USER=1 behaves as a user without root or sudo.
set -euo pipefail
if [[ -n ${ACCEL_DEPS_PACKAGES:-} ]]; then ACCEL_DEPS_PACKAGES=$(realpath "$ACCEL_DEPS_PACKAGES"); fi
cd "$(dirname "$0")"

node_ok() {  # node >= 18 (node:wasi with preview1)
    command -v node >/dev/null 2>&1 || return 1
    local major
    major=$(node --version 2>/dev/null | sed -n 's/^v\([0-9][0-9]*\).*/\1/p')
    [[ -n $major ]] && (( major >= 18 ))
}

packages() {
    local name cond
    while read -r name cond; do
        [[ -z $name || $name == \#* ]] && continue
        if [[ $cond == if-no-node18 ]] && node_ok; then continue; fi
        echo "$name"
    done < "${ACCEL_DEPS_PACKAGES:-packages}"
}

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }

apt_install() {  # apt_install [sudo] PACKAGE...
    local pre=()
    if [[ $1 == sudo ]]; then pre=(sudo -n); shift; fi
    echo "==== apt-get install $*"
    "${pre[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
    "${pre[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@"
}

missing_packages() { local p; for p in "${all[@]}"; do installed "$p" || echo "$p"; done; }

mapfile -t all < <(packages)
case ${1:-} in
--list) printf '%s\n' "${all[@]}" ;;
--missing) command -v dpkg-query >/dev/null 2>&1 || exit 2; missing_packages ;;
--install) apt_install "${all[@]}" ;;
--ensure)
    if ! command -v dpkg-query >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
        echo "==== not a Debian-like system: install the equivalents of .ci/packages; tests whose tools are missing are skipped"
        exit 0
    fi
    mapfile -t missing < <(missing_packages)
    (( ${#missing[@]} )) || exit 0
    if [[ ${ACCEL_NO_INSTALL:-} == 1 ]]; then
        echo "==== missing packages (ACCEL_NO_INSTALL=1: not installing; their tests are skipped): ${missing[*]}"
        exit 0
    fi
    if [[ $(id -u) -eq 0 && -z ${ACCEL_DEPS_AS_USER:-} ]]; then apt_install "${missing[@]}"
    elif [[ -z ${ACCEL_DEPS_AS_USER:-} ]] && command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        apt_install sudo "${missing[@]}"
    else
        echo "==== make test needs these packages; install them with this one line, then run make test again"
        echo "==== (or run ACCEL_NO_INSTALL=1 make test to skip the tests that need them):"
        echo "sudo apt-get install -y --no-install-recommends ${missing[*]}"
        exit 1
    fi
    ;;
*) echo "usage: .ci/deps.sh --list | --missing | --install | --ensure" >&2; exit 2 ;;
esac
