#!/usr/bin/env bash
# Checks that the manual pages have not fallen behind the programs:
#   - every command `dirauthctl --help` lists is an `.It Cm COMMAND` entry of dirauthctl(1), and
#     every option that command's --help lists is a `Fl -OPTION` of that entry;
#   - every key of a configuration parser's key tables (the `keys[]` arrays of server/config/*.c,
#     signer/signer_config.c, and the clock section's in settings/settings.c) is an
#     `.It Ic KEY` entry of dirauthd.yaml(5) or dirauth-signer.yaml(5).
# A key is looked for anywhere in its page, not under its own section: `name` appears in several.
#   usage: scripts/check-man-coverage.sh ROOT DIRAUTHCTL
# Prints what is missing and exits 1 if anything is.
set -euo pipefail
root=$1
ctl=$2
man=$root/docs/man
missing=0
fail() { echo "check-man-coverage: $*"; missing=1; }

# --- dirauthctl(1) ---
# The command list of --help: the lines under "commands:" up to the blank line; a name is what
# comes before the first run of two spaces (certificate show, capability new).
mapfile -t commands < <("$ctl" --help | awk '/^commands:/ {on = 1; next} on && /^$/ {exit}
	on && /^  [a-z]/ {sub(/^  /, ""); sub(/  .*/, ""); print}')
[ "${#commands[@]}" -ge 10 ] || { echo "check-man-coverage: read only ${#commands[@]} commands from dirauthctl --help" >&2; exit 1; }
for command in "${commands[@]}"; do
	# The entry: from its .It Cm line to the next command's, or the end of the list.
	entry=$(awk -v head=".It Cm $command" 'index($0, head) == 1 && (length($0) == length(head) ||
		substr($0, length(head) + 1, 1) == " ") {on = 1; print; next}
		on && (/^\.It Cm / || /^\.Ss / || /^\.Sh /) {exit} on {print}' "$man/dirauthctl.1")
	if [ -z "$entry" ]; then
		fail "dirauthctl.1 has no entry '.It Cm $command'"
		continue
	fi
	# The options of its usage line and of its option table (one --OPTION first on a line).
	read -r -a words <<<"$command"
	mapfile -t options < <("$ctl" "${words[@]}" --help | awk 'NR == 1, /^$/ {print; next}
		/^ +--[a-z]/ {print $1}' | grep -oE -- '--[a-z][a-z-]*' | sort -u)
	for option in "${options[@]}"; do
		[ "$option" = --help ] && continue
		grep -qE -- "Fl -${option#--}( |$)" <<<"$entry" ||
			fail "dirauthctl.1: '$command' does not list $option"
	done
done

# --- the configuration pages ---
# The quoted names of every `keys[] = { ... NULL };` table of a file (of one function when given).
key_tables() {
	awk -v function_name="${2:-}" '
		function_name != "" && /^[a-z].*\(/ {inside = index($0, function_name "(") > 0}
		function_name != "" && !inside {next}
		/keys\[\] = \{/ {on = 1}
		on {print}
		on && /NULL\};/ {on = 0}' "$1" | { grep -oE '"[a-z_]+"' || true; } | tr -d '"' | sort -u
}
check_keys() {
	local page=$1
	shift
	local keys
	keys=$(cat "$@" | sort -u)
	[ "$(wc -l <<<"$keys")" -ge 10 ] || { echo "check-man-coverage: read too few keys for $page" >&2; exit 1; }
	while read -r key; do
		grep -qE "^\.It Ic $key( |$)" "$man/$page" || fail "$page has no entry '.It Ic $key'"
	done <<<"$keys"
}
clock_keys=$(key_tables "$root/settings/settings.c" settings_clock)
[ "$(wc -l <<<"$clock_keys")" -eq 2 ] || { echo "check-man-coverage: cannot read the clock section's keys" >&2; exit 1; }
check_keys dirauthd.yaml.5 <(for f in "$root"/server/config/*.c; do key_tables "$f"; done) <(echo "$clock_keys")
check_keys dirauth-signer.yaml.5 <(key_tables "$root/signer/signer_config.c") <(echo "$clock_keys")

[ "$missing" -eq 0 ] && echo "check-man-coverage: ${#commands[@]} commands and their options, and every configuration key, are in the pages"
exit "$missing"
