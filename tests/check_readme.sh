#!/usr/bin/env bash
# tests/check_readme.sh — the README's apt line is .ci/packages (the one list), each package once.
set -euo pipefail
cd "$(dirname "$0")/.."
line=$(grep -A2 'apt line: tests/check_readme.sh' README.md | grep '^sudo apt-get install' || true)
[[ -n $line ]] || { echo "README.md: no apt line after the 'apt line' marker"; exit 1; }
readme=$(tr ' ' '\n' <<<"${line#sudo apt-get install -y --no-install-recommends }" | grep -v '^$')
list=$(grep -v '^#' .ci/packages | awk 'NF { print $1 }')
dups=$(sort <<<"$readme" | uniq -d)
[[ -z $dups ]] || { echo "README.md's apt line names these twice: $dups"; exit 1; }
diff <(sort <<<"$readme") <(sort <<<"$list") || { echo "README.md's apt line differs from .ci/packages (< README, > list)"; exit 1; }
echo "README apt line = .ci/packages ($(wc -l <<<"$list") packages)"
