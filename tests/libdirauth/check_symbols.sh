#!/usr/bin/env bash
# The shared library exports the functions of include/dirauth/dirauth.h and nothing else: every
# dynamic symbol it defines starts with dirauth_ (none of the project's internal modules, none of
# OpenSSL's or zstd's), and each function the header declares is there.
#   usage: check_symbols.sh LIBDIRAUTH.so HEADER
set -euo pipefail
library=$1 header=$2
defined=$(nm -D --defined-only "$library" | awk '{print $3}' | sort)
[ -n "$defined" ] || { echo "check_symbols: $library defines no dynamic symbol"; exit 1; }
stray=$(printf '%s\n' "$defined" | grep -v '^dirauth_' || true)
if [ -n "$stray" ]; then
	echo "check_symbols: $library exports symbols outside the dirauth_ prefix:"
	printf '%s\n' "$stray"
	exit 1
fi
declared=$(grep -o 'DIRAUTH_EXPORT[^(]*(' "$header" | grep -o 'dirauth_[a-z_]*(' | tr -d '(' | sort -u)
missing=$(comm -23 <(printf '%s\n' "$declared") <(printf '%s\n' "$defined"))
if [ -n "$missing" ]; then
	echo "check_symbols: declared in $header but not exported: $missing"
	exit 1
fi
soname=$(objdump -p "$library" | awk '$1 == "SONAME" {print $2}')
[ "$soname" = "libdirauth.so.0.2" ] || { echo "check_symbols: soname is '$soname', not libdirauth.so.0.2"; exit 1; }
echo "check_symbols: $(printf '%s\n' "$defined" | wc -l) symbols, all dirauth_, soname $soname"
