#!/usr/bin/env bash
# check-unit-security.sh ROOT: the exposure systemd rates for each daemon's unit,
# deploy/systemd/dirauthd.service and dirauth-signer.service, is at most 2.0 (systemd's scale runs
# from 0, the most confined, to 10; "OK" ends at 3.9, "SAFE" at 1.9).
#
# The rating is `systemd-analyze security --offline=true UNIT`, which judges the unit file itself
# without a running systemd: the sandboxing it asks for, not what a host grants. A unit with no
# sandboxing at all is rated first, and must come out above the bound, so that a reading that
# cannot fail (a changed output, a number not found) is an error rather than a pass.
# Exits 0 when both units are within the bound, 1 when one is not, 77 (skipped) without a
# systemd-analyze that can judge a unit file offline (systemd 250 and later).
set -euo pipefail
root=$(cd "$1" && pwd)
bound=2.0

if ! command -v systemd-analyze >/dev/null 2>&1; then
	echo "check-unit-security: no systemd-analyze here; skipped"
	exit 77
fi
scratch=$(mktemp -d /tmp/dirauth-units.XXXXXX)
trap 'rm -rf "$scratch"' EXIT

# exposure UNIT_FILE: the overall exposure level, e.g. 1.2.
exposure() {
	systemd-analyze security --offline=true --no-pager "$1" 2>"$scratch/stderr" |
		sed -n 's/^→ Overall exposure level for [^:]*: \([0-9]*\.[0-9]\).*/\1/p'
}

printf '[Service]\nExecStart=/usr/bin/true\n' >"$scratch/bare.service"
bare=$(exposure "$scratch/bare.service" || true)
if [ -z "$bare" ]; then
	if grep -qi 'offline\|unrecognized option\|unknown option' "$scratch/stderr"; then
		echo "check-unit-security: this systemd-analyze cannot judge a unit offline; skipped"
		cat "$scratch/stderr"
		exit 77
	fi
	echo "check-unit-security: no exposure level read for a bare unit:" >&2
	cat "$scratch/stderr" >&2
	exit 1
fi
if ! awk -v a="$bare" -v b="$bound" 'BEGIN { exit !(a > b) }'; then
	echo "check-unit-security: a unit without sandboxing is rated $bare, not above $bound: the reading is wrong" >&2
	exit 1
fi

status=0
for unit in dirauthd dirauth-signer; do
	file=$root/deploy/systemd/$unit.service
	level=$(exposure "$file" || true)
	if [ -z "$level" ]; then
		echo "check-unit-security: no exposure level read for $file:" >&2
		cat "$scratch/stderr" >&2
		status=1
	elif awk -v a="$level" -v b="$bound" 'BEGIN { exit !(a > b) }'; then
		echo "check-unit-security: $unit.service is rated $level, above $bound; what it allows:" >&2
		systemd-analyze security --offline=true --no-pager "$file" 2>&1 | grep '✗' >&2 || true
		status=1
	else
		echo "ok: $unit.service exposure $level (at most $bound; a bare unit is $bare)"
	fi
done
exit "$status"
