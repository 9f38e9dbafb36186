#!/bin/sh
# example-keys.sh DIR: copies the example keys (keys-example/*.key) into DIR with the modes that
# key loading insists on: DIR 0700, each key 0600.
#
# Git does not keep a file's mode beyond the executable bit, so a fresh clone has the example
# keys as 0644 and dirauth refuses to load them (a key readable by others is not a key). The
# demo and the tests therefore load these private copies instead. The keys are examples and
# not secret: see keys-example/README.md.
set -eu

if [ "$#" -ne 1 ] || [ -z "$1" ]; then
	echo "usage: $0 DIR" >&2
	exit 2
fi

source_dir=$(cd "$(dirname "$0")/../keys-example" && pwd)
target_dir=$1

umask 077
mkdir -p "$target_dir"
chmod 0700 "$target_dir"

found=0
for key in "$source_dir"/*.key; do
	[ -f "$key" ] || continue
	destination="$target_dir/$(basename "$key")"
	# Replace rather than write through whatever is there (it could be a symlink).
	rm -f "$destination"
	cp "$key" "$destination"
	chmod 0600 "$destination"
	found=$((found + 1))
done

if [ "$found" -eq 0 ]; then
	echo "$0: no keys in $source_dir" >&2
	exit 1
fi
