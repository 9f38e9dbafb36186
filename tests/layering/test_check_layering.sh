#!/usr/bin/env bash
# The layering check refuses what docs/architecture.md forbids: on a copy of the sources it
# passes, then fails for each forbidden include added to the copy (a module using a module not
# in its row, a library header outside its modules, an include that names no module), and
# passes again once the include is gone.
#   usage: tests/layering/test_check_layering.sh SOURCE_DIR
set -euo pipefail
source_dir=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$source_dir" && find . -path ./build -prune -o -path ./.git -prune -o \
	\( -name '*.c' -o -name '*.h' -o -path ./docs/architecture.md -o -path ./scripts/check-layering.sh \) \
	-type f -print0 | tar --null -T - -cf -) | tar -C "$work" -xf -
check() { bash "$work/scripts/check-layering.sh" "$work" >"$work/out.txt" 2>&1; }

fails=0
expect() { # description expected-status
	local status=0
	check || status=$?
	if [ "$status" -ne "$2" ]; then
		echo "FAIL: $1: exit $status, expected $2"
		cat "$work/out.txt"
		fails=$((fails + 1))
	else
		echo "ok: $1"
	fi
}

# The unchanged copy passes (the ctest "layering" checks the real tree the same way).
expect "the unchanged copy passes" 0
base_count=$(grep -c ': ' "$work/out.txt" || true)

try_forbidden() { # description file line
	local file="$work/$2"
	cp "$file" "$file.orig"
	printf '%s\n' "$3" >>"$file"
	local status=0
	check || status=$?
	local count
	count=$(grep -c ': ' "$work/out.txt" || true)
	if [ "$status" -eq 1 ] && [ "$count" -gt "$base_count" ] && grep -q "$2" "$work/out.txt"; then
		echo "ok: refused: $1"
	else
		echo "FAIL: not refused: $1 (exit $status)"
		cat "$work/out.txt"
		fails=$((fails + 1))
	fi
	mv "$file.orig" "$file"
}

try_forbidden "schema including the store" schema/note.c '#include "server/store/store.h"'
try_forbidden "the read path including publication" server/readpath/prepared.c '#include "server/publish/publish.h"'
try_forbidden "a server room including the signer" server/intake/submit.c '#include "signer/key.h"'
try_forbidden "lmdb.h outside kv" server/store/store.c '#include <lmdb.h>'
try_forbidden "microhttpd.h in the store" server/store/store.c '#include <microhttpd.h>'
try_forbidden "an include that names no module" schema/note.c '#include "note.h"'
try_forbidden "a header that does not exist" clock/clock.c '#include "schema/nothing.h"'

expect "the copy passes again once the includes are gone" 0
[ "$fails" -eq 0 ] || exit 1
echo "the layering check refuses every forbidden include tried"
