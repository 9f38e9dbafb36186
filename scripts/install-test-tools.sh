#!/usr/bin/env bash
# install-test-tools.sh: installs, through apt-get, the real programs some tests and benchmarks put
# beside dirauth, each skipped by its tests when absent:
#   nginx      (nginx-light if the archive has it) the shipped TLS proxy and mirror configurations
#   promtool   (Debian's prometheus) checking the metrics and testing the alert rules in deploy/
#   chromium   headless, reading and photographing the consensus-health page
# A no-op (exit 0) for each one already installed. Needs root (or sudo) only when it installs.
#
# No package may start its system service: a policy-rc.d that refuses every start is put in place
# for the install (unless one exists already) and removed after, so nothing is left running and
# nothing fails on a machine without an init system (a container). Exit status: 0 when all are
# installed or already there, 77 neither root nor sudo, else apt-get's for the first that failed.
set -euo pipefail

have() { command -v "$1" >/dev/null 2>&1 || [ -x "/usr/sbin/$1" ] || [ -x "/usr/bin/$1" ]; }

wanted=()
have nginx || wanted+=(nginx)
have promtool || wanted+=(prometheus)
have chromium || wanted+=(chromium)
[ "${#wanted[@]}" -eq 0 ] && exit 0

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null || { echo "install-test-tools: run as root or install sudo" >&2; exit 77; }
	sudo_cmd=(sudo)
fi

echo "install-test-tools: installing ${wanted[*]} (without starting any service)" >&2
policy=/usr/sbin/policy-rc.d
placed_policy=0
if [ ! -e "$policy" ]; then
	printf '#!/bin/sh\nexit 101\n' | "${sudo_cmd[@]}" tee "$policy" >/dev/null
	"${sudo_cmd[@]}" chmod 0755 "$policy"
	placed_policy=1
fi
export DEBIAN_FRONTEND=noninteractive
apt_install() { "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "$@"; }
install_one() { # package
	case "$1" in
	nginx) apt_install nginx-light || apt_install nginx ;;
	*) apt_install "$1" ;;
	esac
}
status=0
for package in "${wanted[@]}"; do
	install_one "$package" || { "${sudo_cmd[@]}" apt-get update -q && install_one "$package"; } ||
		{ [ "$status" -ne 0 ] || status=$?; }
done
if [ "$placed_policy" -eq 1 ]; then
	"${sudo_cmd[@]}" rm -f "$policy"
fi
# A policy-rc.d that was there already may have let a package start its server: stop it.
if [ -s /run/nginx.pid ]; then
	"${sudo_cmd[@]}" /usr/sbin/nginx -s quit 2>/dev/null || true
fi
exit "$status"
