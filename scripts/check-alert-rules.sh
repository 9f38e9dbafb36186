#!/usr/bin/env bash
# Checks the example alert rules of deploy/prometheus/ with Prometheus's own tool: the rules
# parse (`promtool check rules`) and each alert fires on the series that should raise it and on
# no other (`promtool test rules` over dirauth-alerts.test.yml).
#   usage: scripts/check-alert-rules.sh [ROOT]     (ROOT defaults to the repository)
# Prints promtool's messages; exits 1 if either refuses, 77 (ctest's skip) when promtool is not
# installed (Debian's prometheus package; scripts/install-test-tools.sh installs it).
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
command -v promtool >/dev/null || { echo "check-alert-rules: promtool is not installed" >&2; exit 77; }
dir="$root/deploy/prometheus"
promtool check rules "$dir/dirauth-alerts.yml"
# promtool test rules reads rule_files relative to the test file's directory.
(cd "$dir" && promtool test rules dirauth-alerts.test.yml)
echo "check-alert-rules: the rules parse and every alert's tests pass"
