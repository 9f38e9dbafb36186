#!/usr/bin/env bash
# Checks every include of every module against the layering table of docs/architecture.md:
#   - a project header is included by its path from the root ("schema/note.h"), which names its
#     module; an include that names no module is refused;
#   - a module includes only its own headers and those of the modules its row allows;
#   - an external library's header is included only by the modules its row names.
# tests/ and bench/ are not modules and may include anything.
#   usage: scripts/check-layering.sh [ROOT]     (ROOT defaults to the repository)
# Prints one line per violation and exits 1 if there is any, 0 otherwise.
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
doc="$root/docs/architecture.md"
[ -f "$doc" ] || { echo "check-layering: $doc not found" >&2; exit 2; }

# "module: allowed allowed ..." lines from the table between the markers.
table() { # marker
	awk -v start="<!-- $1 -->" -v end="<!-- /$1 -->" '
		$0 == start { inside = 1; next }
		$0 == end { inside = 0 }
		inside && /^\| `/ {
			n = split($0, cell, "|")
			key = cell[2]; gsub(/[` ]/, "", key)
			vals = cell[3]; gsub(/`/, "", vals); gsub(/^ +| +$/, "", vals)
			print key ":" vals
		}' "$doc"
}
declare -A allowed=() library_users=()
while IFS=: read -r module uses; do allowed[$module]=" $module $uses "; done < <(table layering)
while IFS=: read -r header users; do library_users[$header]=" $users "; done < <(table libraries)
[ "${#allowed[@]}" -gt 0 ] || { echo "check-layering: no layering table in $doc" >&2; exit 2; }

# The module of a path, into $found: the longest module name that is a folder prefix of it
# (remembered by folder: no subshell per include, which kept the check slow).
declare -A module_of_folder=()
module_of() {
	local path=$1 folder=${1%/*} best="" m
	if [ -n "${module_of_folder[$folder]+set}" ]; then
		found=${module_of_folder[$folder]}
		return
	fi
	for m in "${!allowed[@]}"; do
		case "$path" in
		"$m"/*) [ "${#m}" -gt "${#best}" ] && best=$m ;;
		esac
	done
	module_of_folder[$folder]=$best
	found=$best
}

violations=0
cd "$root"
while IFS= read -r file; do
	module_of "$file"
	self=$found
	[ -n "$self" ] || continue
	while IFS= read -r line; do
		number=${line%%:*}
		text=${line#*:}
		if [[ $text =~ \#[[:space:]]*include[[:space:]]*\"([^\"]+)\" ]]; then
			header=${BASH_REMATCH[1]}
			module_of "$header"
			target=$found
			if [ -z "$target" ] || [ ! -f "$header" ]; then
				echo "$file:$number: \"$header\" names no module header (include it by its path from the root)"
				violations=$((violations + 1))
			elif [[ ${allowed[$self]} != *" $target "* ]]; then
				echo "$file:$number: $self may not include $header ($target is not in its row of docs/architecture.md)"
				violations=$((violations + 1))
			fi
		elif [[ $text =~ \#[[:space:]]*include[[:space:]]*\<([^\>]+)\> ]]; then
			header=${BASH_REMATCH[1]}
			for library in "${!library_users[@]}"; do
				case "$header" in
				"$library" | "$library"*/* | "${library%/}"/*)
					if [[ ${library_users[$library]} != *" $self "* ]]; then
						echo "$file:$number: $self may not include <$header> (only${library_users[$library]% })"
						violations=$((violations + 1))
					fi
					;;
				esac
			done
		fi
	done < <(grep -n '^[[:space:]]*#[[:space:]]*include' "$file" || true)
done < <(find . -path ./build -prune -o -path ./tests -prune -o -path ./bench -prune -o \
	\( -name '*.c' -o -name '*.h' \) -type f -print | sed 's|^\./||' | sort)

if [ "$violations" -gt 0 ]; then
	echo "check-layering: $violations violation(s)"
	exit 1
fi
echo "check-layering: every include follows docs/architecture.md"
