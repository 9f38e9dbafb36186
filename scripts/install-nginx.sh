#!/usr/bin/env bash
# install-nginx.sh: installs nginx (nginx-light if the archive has it, else nginx) through apt-get,
# for the tests and benchmarks that start their own nginx on loopback. A no-op (exit 0) when nginx
# is already installed. Needs root (or sudo) only when it installs.
#
# The package must not start the system's nginx: a policy-rc.d that refuses every start is put in
# place for the install (unless one exists already) and removed after, so nothing is left running
# and nothing fails on a machine without an init system (a container). Exit status: 0 installed or
# already there, 77 neither root nor sudo, else apt-get's.
set -euo pipefail

if command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ]; then
	exit 0
fi

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null || { echo "install-nginx: run as root or install sudo" >&2; exit 77; }
	sudo_cmd=(sudo)
fi

echo "install-nginx: installing nginx (without starting it)" >&2
policy=/usr/sbin/policy-rc.d
placed_policy=0
if [ ! -e "$policy" ]; then
	printf '#!/bin/sh\nexit 101\n' | "${sudo_cmd[@]}" tee "$policy" >/dev/null
	"${sudo_cmd[@]}" chmod 0755 "$policy"
	placed_policy=1
fi
export DEBIAN_FRONTEND=noninteractive
install_package() {
	"${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends nginx-light ||
		"${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends nginx
}
status=0
install_package || { "${sudo_cmd[@]}" apt-get update -q && install_package; } || status=$?
if [ "$placed_policy" -eq 1 ]; then
	"${sudo_cmd[@]}" rm -f "$policy"
fi
# A policy-rc.d that was there already may have let the package start its server: stop it.
if [ "$status" -eq 0 ] && [ -s /run/nginx.pid ]; then
	"${sudo_cmd[@]}" /usr/sbin/nginx -s quit 2>/dev/null || true
fi
exit "$status"
