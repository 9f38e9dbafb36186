#!/bin/sh
# reads-netns.sh: bench_reads in a network namespace of its own, with the client's initial TCP
# receive buffer set.
#
# On loopback (a 64 KiB MTU) a connection can settle in a state where the client's receive buffer
# stays at its initial 128 KiB (net.ipv4.tcp_rmem's middle value): one 47,616-byte segment per
# round trip, each acknowledged, and more of the client's CPU per answer. Whether a connection
# falls into it depends on timing, for either server (bench/README.md, "Why the bodies' rate
# moves"). So bench_reads runs here with both servers and wrk under one setting, chosen with
# --rmem, in a namespace: the machine's own setting is not touched.
#
#   bench/reads-netns.sh [--rmem BYTES] [bench_reads options]
#
# --rmem: the initial receive buffer of every TCP socket in the namespace (default 1048576; the
# kernel's is 131072). Needs root (unshare -n) and iproute2 (to bring the namespace's loopback
# up); without them it exits 77, the skip code of the smoke test. Other options go to bench_reads,
# which is looked up next to this script's build tree (build/release) unless BENCH_READS names it.
set -eu

rmem=1048576
if [ "${1:-}" = "--rmem" ]; then
	[ $# -ge 2 ] || { echo "reads-netns.sh: --rmem needs a byte count" >&2; exit 2; }
	rmem=$2
	shift 2
fi
case $rmem in
'' | *[!0-9]*) echo "reads-netns.sh: --rmem takes a byte count, not '$rmem'" >&2; exit 2 ;;
esac
[ "$rmem" -ge 4096 ] || { echo "reads-netns.sh: --rmem must be at least 4096 bytes" >&2; exit 2; }

here=$(cd "$(dirname "$0")" && pwd)
bench_reads=${BENCH_READS:-$here/../build/release/bench/bench_reads}
[ -x "$bench_reads" ] || { echo "reads-netns.sh: no bench_reads at $bench_reads (build it, or set BENCH_READS)" >&2; exit 2; }

if [ "${READS_NETNS_INSIDE:-}" != 1 ]; then
	if ! command -v ip >/dev/null || ! unshare -n true 2>/dev/null; then
		echo "reads-netns.sh: skipped: needs root (unshare -n) and ip (iproute2)" >&2
		exit 77
	fi
	export READS_NETNS_INSIDE=1 BENCH_READS="$bench_reads"
	exec unshare -n "$0" --rmem "$rmem" "$@"
fi

ip link set lo up
max=$(sysctl -n net.ipv4.tcp_rmem | awk '{ print $3 }')
[ "$rmem" -le "$max" ] || max=$rmem
sysctl -qw net.ipv4.tcp_rmem="4096 $rmem $max"
echo "network namespace of its own; net.ipv4.tcp_rmem: $(sysctl -n net.ipv4.tcp_rmem)"
exec "$bench_reads" "$@"
