#!/usr/bin/env bash
# bench.sh [--with-nginx | --several | --flood] [BENCH OPTIONS...]: builds the release build
# (build/release, warnings as errors) and runs bench_authority against the dirauthd it just built.
#
# The benchmark prints each figure next to an anchor measured in the same run (bench/README.md):
# the machine's Ed25519 verify rate for registrations, and nginx serving the same bytes for
# snapshot reads when nginx is installed. --with-nginx installs nginx (nginx-light, else nginx)
# through apt-get first, without letting the package start its own server; without it, a machine
# lacking nginx skips that anchor and says so. Every other option goes to bench_authority, e.g.
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

with_nginx=0
several=0
flood=0
bench_args=()
for argument in "$@"; do
	case "$argument" in
	--with-nginx) with_nginx=1 ;;
	--several) several=1 ;;
	--flood) flood=1 ;;
	-h | --help)
		sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'
		exit 0
		;;
	*) bench_args+=("$argument") ;;
	esac
done

have_nginx() {
	command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ]
}

# Installs nginx with a policy-rc.d that keeps the package from starting the system nginx (the
# benchmark starts its own, on loopback, with a temporary configuration).
install_nginx() {
	local sudo_cmd=()
	if [ "$(id -u)" -ne 0 ]; then
		command -v sudo >/dev/null || { echo "bench.sh: run as root or install sudo to install nginx" >&2; return 1; }
		sudo_cmd=(sudo)
	fi
	local policy=/usr/sbin/policy-rc.d placed_policy=0
	if [ ! -e "$policy" ]; then
		printf '#!/bin/sh\nexit 101\n' | "${sudo_cmd[@]}" tee "$policy" >/dev/null
		"${sudo_cmd[@]}" chmod 0755 "$policy"
		placed_policy=1
	fi
	export DEBIAN_FRONTEND=noninteractive
	local status=0
	"${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends nginx-light ||
		"${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends nginx ||
		{ "${sudo_cmd[@]}" apt-get update -q &&
			{ "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends nginx-light ||
				"${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends nginx; }; } ||
		status=$?
	if [ "$placed_policy" -eq 1 ]; then
		"${sudo_cmd[@]}" rm -f "$policy"
	fi
	return "$status"
}

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

if [ "$with_nginx" -eq 1 ] && ! have_nginx; then
	echo "bench.sh: installing nginx for the read-path anchor" >&2
	install_nginx || echo "bench.sh: nginx could not be installed; the nginx anchor will be skipped" >&2
fi

cmake -S . -B build/release -DDIRAUTH_WERROR=ON >/dev/null
cmake --build build/release -j"$jobs" --target dirauthd bench_authority

exec build/release/bench/bench_authority --dirauthd build/release/server/dirauthd "${bench_args[@]}"
