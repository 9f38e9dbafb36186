#!/usr/bin/env bash
# Checks that every C source and header of the tree reads as .clang-format writes it: the
# project's code is formatted by clang-format, so a file it would change is a file someone forgot
# to format. Generated and vendored files are none; build trees are skipped.
#   usage: scripts/check-format.sh [ROOT]     (ROOT defaults to the repository)
# Prints the files that differ, then clang-format's first complaints, and exits 1 if there is any;
# 77 (ctest's skip) when clang-format is not installed.
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
command -v clang-format >/dev/null || { echo "check-format: clang-format is not installed" >&2; exit 77; }
cd "$root"
mapfile -d '' files < <(find . -path ./build -prune -o -path './.git' -prune -o \
	-type f \( -name '*.c' -o -name '*.h' \) -print0 | sort -z)
out=$(clang-format --dry-run -Werror "${files[@]}" 2>&1) && status=0 || status=1
if [ "$status" -ne 0 ]; then
	printf '%s\n' "$out" | grep -o '^[^:]*\.[ch]:' | sort -u | sed 's/:$//; s|^\./||' |
		while read -r file; do echo "$file: not as clang-format writes it (clang-format -i $file)"; done
	printf '%s\n' "$out" | head -n 12
	exit 1
fi
echo "check-format: ${#files[@]} files as clang-format writes them"
