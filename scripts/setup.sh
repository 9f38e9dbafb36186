#!/usr/bin/env bash
# Installs what dirauth needs to build and test on Debian 12, and the real programs some tests put
# beside it: nginx, promtool and chromium (scripts/install-test-tools.sh, which keeps the packages
# from starting their services). Idempotent: when every package is already
# installed it changes nothing and exits 0. Needs root (or sudo) only when it installs.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  build-essential cmake pkg-config clang libclang-rt-14-dev clang-format
  libmicrohttpd-dev libssl-dev liblmdb-dev lmdb-utils libyaml-dev check
  libzstd-dev zlib1g-dev libcurl4-openssl-dev
  curl ca-certificates golang-go golang-golang-x-mod-dev mandoc
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

# nginx, promtool and chromium are for some tests only: they skip without them, so a failure to
# install them is not fatal.
install_test_tools() {
  bash scripts/install-test-tools.sh || echo "setup: nginx, promtool or chromium could not be installed; the tests that need them will skip" >&2
}

if [ "${#missing[@]}" -eq 0 ]; then
  install_test_tools
  exit 0
fi

echo "setup: installing ${missing[*]}" >&2
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "setup: run as root or install sudo" >&2; exit 77; }
  sudo_cmd=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -q
"${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
install_test_tools
