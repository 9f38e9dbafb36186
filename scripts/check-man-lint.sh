#!/usr/bin/env bash
# Checks every manual page under docs/man/ with mandoc's linter: a page that mandoc warns about
# renders wrongly somewhere (man, mandoc, groff), so a warning fails as an error does.
#   usage: scripts/check-man-lint.sh [ROOT]     (ROOT defaults to the repository)
# Prints mandoc's messages and exits 1 if there is any; 77 (ctest's skip) when mandoc is not
# installed (scripts/setup.sh installs it).
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
command -v mandoc >/dev/null || { echo "check-man-lint: mandoc is not installed" >&2; exit 77; }
shopt -s nullglob
pages=("$root"/docs/man/*.[0-9])
[ "${#pages[@]}" -gt 0 ] || { echo "check-man-lint: no pages under $root/docs/man" >&2; exit 1; }
status=0
for page in "${pages[@]}"; do
	out=$(mandoc -Tlint -Wwarning "$page" 2>&1) || status=1
	[ -z "$out" ] || { printf '%s\n' "$out"; status=1; }
done
[ "$status" -eq 0 ] && echo "check-man-lint: ${#pages[@]} pages without a warning"
exit "$status"
