#!/usr/bin/env bash
# bench.sh [--several | --flood] [BENCH OPTIONS...]: builds the release build (build/release,
# warnings as errors) and runs bench_authority against the dirauthd it just built.
#
# The benchmark prints each figure next to an anchor measured in the same run (bench/README.md):
# the machine's Ed25519 verify rate for registrations, and nginx serving the same bytes for
# snapshot reads. scripts/setup.sh installs nginx (nginx-light, else nginx) without letting the
# package start its own server; a machine where that failed skips the anchor and says so
# (--with-nginx, which used to install it, is still taken and does nothing more). Every other
# option goes to bench_authority, e.g.
#   scripts/bench.sh --registrations 5000 --threads 8
# --several runs bench_several instead: one epoch of five authorities (k = 3) against one
# authority alone publishing the same records, e.g.
#   scripts/bench.sh --several --records 100000
# --flood runs bench_flood instead: a legitimate client's latest-header GETs and registrations
# under 1,200 slow and idle connections from 20 loopback addresses, against the same unloaded, e.g.
#   scripts/bench.sh --flood --trickle 2000 --sources 50
#   JOBS   parallel build jobs (default: number of cores)
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${JOBS:-$(nproc)}

several=0
flood=0
bench_args=()
for argument in "$@"; do
	case "$argument" in
	--with-nginx) ;;
	--several) several=1 ;;
	--flood) flood=1 ;;
	-h | --help)
		sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'
		exit 0
		;;
	*) bench_args+=("$argument") ;;
	esac
done

bash scripts/setup.sh

if [ "$several" -eq 1 ]; then
	cmake -S . -B build/release -DDIRAUTH_WERROR=ON >/dev/null
	cmake --build build/release -j"$jobs" --target dirauthd dirauth-signer dirauthctl bench_several
	exec build/release/bench/bench_several "${bench_args[@]}"
fi

if [ "$flood" -eq 1 ]; then
	cmake -S . -B build/release -DDIRAUTH_WERROR=ON >/dev/null
	cmake --build build/release -j"$jobs" --target dirauthd dirauth-signer bench_flood
	exec build/release/bench/bench_flood "${bench_args[@]}"
fi

cmake -S . -B build/release -DDIRAUTH_WERROR=ON >/dev/null
cmake --build build/release -j"$jobs" --target dirauthd bench_authority

exec build/release/bench/bench_authority --dirauthd build/release/server/dirauthd "${bench_args[@]}"
