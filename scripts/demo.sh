#!/usr/bin/env bash
# The demo: three authorities on loopback, k = 2 of 3, each its own dirauth-signer (its keys),
# dirauthd (no key) and LMDB store, configured from keys-example/three-authorities/. Two
# providers register with all three; the next epoch's snapshot is co-signed by the three and a
# mirror that pins the three identity keys (threshold 2) verifies it; then one authority is
# killed and the epoch after is still published, with two signatures, and verified again.
#
# Time is a file clock per authority that this script advances, one second per DEMO_PACE_MS of
# real time (default 250), all three together, so that the epochs (10 s: prepared in the last
# 6 s before each starts, votes 2 s, signatures 2 s) pass quickly and always alike. The mirror
# reads the same clock (dirauthctl --now). Everything it starts is stopped on exit, on failure
# and on Ctrl-C.
#   DEMO_KEEP=1       keep the run directory (its path is printed): configurations, logs, stores,
#                     the mirror's files
#   DEMO_BUILD_DIR=D  build in D (default build/release)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
build=${DEMO_BUILD_DIR:-build/release}
case $build in /*) ;; *) build=$root/$build ;; esac
pace_ms=${DEMO_PACE_MS:-250}
log=$build/demo-setup.log

# --- setup and build, quiet ----------------------------------------------------------------------
mkdir -p "$build"
: >"$log"
quiet() { # what... ; runs the rest of the arguments with their output in the log
	local what=$1
	shift
	if ! "$@" >>"$log" 2>&1; then
		echo "$what failed; the end of $log:" >&2
		tail -n 25 "$log" >&2
		exit 1
	fi
}
echo "Installing what is missing and building dirauthd, dirauth-signer, dirauthctl (output in ${log#"$root"/}) ..."
quiet "setup (scripts/setup.sh)" bash scripts/setup.sh
quiet "cmake" cmake -S "$root" -B "$build" -DDIRAUTH_WERROR=ON
quiet "the build" cmake --build "$build" -j"$(nproc)" --target dirauthd dirauth-signer dirauthctl
dirauthd=$build/server/dirauthd
signer=$build/signer/dirauth-signer
dirauthctl=$build/ctl/dirauthctl

# --- the run directory and its cleanup ---------------------------------------------------------
run=$(mktemp -d /tmp/dirauth-demo.XXXXXX)
pids=()
cleanup() {
	local status=$?
	trap - EXIT INT TERM
	trap '' PIPE # a closed stdout (demo.sh | head) must not stop the cleanup halfway
	for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
	for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
	if [ "$status" -eq 130 ] || [ "$status" -eq 143 ]; then
		echo "Interrupted: everything the demo started is stopped." >&2
	elif [ "$status" -ne 0 ]; then
		echo "The demo failed (status $status). The end of each log:" >&2
		for f in "$run"/authority*/dirauthd.log "$run"/authority*/dirauth-signer.log; do
			[ -f "$f" ] && { echo "== ${f#"$run"/}" >&2; tail -n 5 "$f" >&2; }
		done
	fi
	if [ "${DEMO_KEEP:-0}" = 1 ]; then
		echo "Run directory kept: $run"
		echo "  authority1..3/: configurations, keys, logs, stores; mirror/mix/: the mirror's files"
	else
		rm -rf "$run"
	fi
	exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
export no_proxy=127.0.0.1,localhost NO_PROXY=127.0.0.1,localhost # peers talk on loopback

utc() { date -u -d "@$1" '+%Y-%m-%d %H:%M:%S UTC'; }
short() { sed 's/\.dirauth\.example//g'; } # authority1.dirauth.example -> authority1
port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
ports=()
candidate=18081
for i in 1 2 3; do
	while port_in_use "$candidate"; do candidate=$((candidate + 1)); done
	ports[i]=$candidate
	candidate=$((candidate + 1))
done
url() { echo "http://127.0.0.1:${ports[$1]}"; }

# --- time: a recent genesis and a file clock ----------------------------------------------------
length=10
now=$(date +%s)
genesis=$((now - now % length - 2 * length)) # epoch 0 began 20 to 29 s ago, epoch 2 is current
clock=$((genesis + 2 * length + 1))
set_clock() { # unix seconds: all three clocks at once
	clock=$1
	for i in 1 2 3; do
		echo "$clock" >"$run/authority$i/clock.tmp"
		mv "$run/authority$i/clock.tmp" "$run/authority$i/clock"
	done
}
epoch_of() { echo $((($1 - genesis) / length)); }

# --- three authorities --------------------------------------------------------------------------
# Each authority gets its own folder: the example configuration with this run's ports, genesis and
# uid, its signing key (0600 in a 0700 keys/), and a certificate its identity key issues now. The
# identity keys stay in offline/, as they would on an offline machine; keys/ keeps the providers'.
bash scripts/example-keys.sh "$run/keys"
mkdir -m 0700 "$run/offline"
for i in 1 2 3; do
	dir=$run/authority$i
	mkdir -p "$dir/keys"
	chmod 0700 "$dir/keys"
	sed -e "s/port: 808$i/port: ${ports[i]}/" -e "s|127.0.0.1:8081\"|127.0.0.1:${ports[1]}\"|" \
		-e "s|127.0.0.1:8082\"|127.0.0.1:${ports[2]}\"|" -e "s|127.0.0.1:8083\"|127.0.0.1:${ports[3]}\"|" \
		-e "s/genesis: 0 .*/genesis: $genesis/" \
		"keys-example/three-authorities/authority$i/dirauthd.yaml" >"$dir/dirauthd.yaml"
	sed -e "s/^allowed_uid: 0 /allowed_uid: $(id -u) /" -e "s/genesis: 0 .*/genesis: $genesis/" \
		"keys-example/three-authorities/authority$i/dirauth-signer.yaml" >"$dir/dirauth-signer.yaml"
	mv "$run/keys/authority$i.key" "$dir/keys/"
	mv "$run/keys/authority$i-identity.key" "$run/offline/"
	"$dirauthctl" certify --identity "$run/offline/authority$i-identity.key" \
		--signing-key "$dir/keys/authority$i.key" --valid-after $((genesis - 3600)) --days 30 \
		--out "$dir/keys/authority$i.cert" >"$dir/certify.out"
done
set_clock "$clock"

start() { # i: the authority's signer, then its dirauthd
	local dir=$run/authority$1
	"$signer" --config "$dir/dirauth-signer.yaml" --check-config >/dev/null
	"$signer" --config "$dir/dirauth-signer.yaml" >"$dir/dirauth-signer.log" 2>&1 &
	pids+=($!)
	signer_pids[$1]=$!
	for _ in $(seq 1 200); do
		[ -S "$dir/signer.sock" ] && break
		sleep 0.05
	done
	"$dirauthd" --config "$dir/dirauthd.yaml" --check-config >/dev/null
	"$dirauthd" --config "$dir/dirauthd.yaml" >"$dir/dirauthd.log" 2>&1 &
	pids+=($!)
	daemon_pids[$1]=$!
}
signer_pids=()
daemon_pids=()
for i in 1 2 3; do start "$i"; done
for i in 1 2 3; do
	for _ in $(seq 1 200); do
		curl -fs "$(url "$i")/v1/ready" >/dev/null 2>&1 && break
		kill -0 "${daemon_pids[i]}" 2>/dev/null || { echo "dirauthd of authority$i stopped" >&2; exit 1; }
		sleep 0.05
	done
	curl -fs "$(url "$i")/v1/ready" >/dev/null || { echo "authority$i is not ready" >&2; exit 1; }
done

echo
echo "1. Three authorities, each holding its own keys, run as two processes each: dirauth-signer"
echo "   (the signing key) and dirauthd (no key, its own LMDB store). A snapshot needs 2 of the 3."
for i in 1 2 3; do
	out=$run/authority$i/certify.out
	until=$(sed -n 's/^valid-until *\([0-9]*\).*/\1/p' "$out")
	identity=$(sed -n 's/^identity *[^+]*+\([0-9a-f]*\)+.*/\1/p' "$out")
	signing=$(sed -n 's/^signing-key *[^+]*+\([0-9a-f]*\)+.*/\1/p' "$out")
	echo "   authority$i on $(url "$i"): identity key $identity (offline) certified signing key $signing until $(utc "$until")"
done
echo "2. Epochs of $length s from genesis $genesis ($(utc "$genesis")), so this is epoch $(epoch_of "$clock");"
echo "   each is prepared in the 6 s before it starts (votes 2 s, then signatures 2 s)."
echo "   The clocks are files this script advances, 1 s per $pace_ms ms: now $clock ($(utc "$clock"))."
echo "3. One namespace, mix: the directory of mix gateways and mailbox providers."

# --- providers register with all three ----------------------------------------------------------
servers=(--server "$(url 1)" --server "$(url 2)" --server "$(url 3)")
trust=keys-example/three-authorities/trust-bundle.txt
register() { # provider-key service-file description
	local out accepted
	out=$("$dirauthctl" register --key "$run/keys/$1" --service "keys-example/$2" --trust "$trust" \
		--now "$clock" "${servers[@]}") || { echo "$out" >&2; exit 1; }
	accepted=$(grep -c ' accepted: ' <<<"$out" || true)
	promised=$(grep -Eo 'published by epoch [0-9]+' <<<"$out" | sort -u | cut -d' ' -f4 | tr '\n' ' ')
	echo "   ${1%.key}.example registers $3 with all three: $accepted of 3 accepted, each receipt promises epoch ${promised% }"
}
echo "4. Providers register, each with a note signed by its own key, verifying each receipt:"
register provider-a.key service-a.yaml "a mix gateway (2 endpoints)"
register provider-b.key service-b.yaml "a mailbox provider (1 endpoint)"

# --- run the clock until an epoch is published ---------------------------------------------------
latest_epoch() { # i: the epoch of the latest snapshot authority i serves, or nothing
	curl -fs --max-time 2 "$(url "$1")/v1/mix/snapshots/latest" 2>/dev/null | sed -n 's/^epoch //p' || true
}
run_until_published() { # epoch authorities...: advance the clocks until each serves that epoch
	local epoch=$1 i e done_all
	shift
	for _ in $(seq 1 $((4 * length))); do
		done_all=1
		for i in "$@"; do
			e=$(latest_epoch "$i")
			[ -n "$e" ] && [ "$e" -ge "$epoch" ] || done_all=0
		done
		[ "$done_all" = 1 ] && return 0
		set_clock $((clock + 1))
		sleep "$(awk "BEGIN { print $pace_ms / 1000 }")"
	done
	echo "epoch $epoch was not published by authorities $*" >&2
	exit 1
}
signers_of() { # header file: the names in its signature lines
	grep '^— ' "$1" | cut -d' ' -f2 | short | paste -sd, - | sed 's/,/, /g'
}
show_epoch() { # epoch authority: one line on the published header
	local header=$run/epoch-$1.header
	curl -fs "$(url "$2")/v1/mix/snapshots/$1" >"$header"
	local after records
	after=$(sed -n 's/^valid-after //p' "$header")
	records=$(sed -n 's/^records //p' "$header")
	echo "   Epoch $1 published (valid from $after, $(utc "$after")), $records records,"
	echo "   signed by $(signers_of "$header")."
}
mirror() { # servers...: dirauthctl fetch as a mirror would, printing its lines indented
	"$dirauthctl" fetch --trust "$trust" --namespace mix --out "$run/mirror" --now "$clock" "$@" |
		short | sed 's/^/   mirror: /'
}

first=${promised% } # what the receipts promise: the first epoch whose cut-off is still ahead
echo "5. The clocks run on; the three vote on epoch $first, compute the same snapshot and co-sign it:"
run_until_published "$first" 1 2 3
show_epoch "$first" 1
echo "6. A mirror pinning the three identity keys with threshold 2 (the trust bundle $trust)"
echo "   fetches it and checks the signatures and certificates, body, Merkle root and every record:"
mirror "${servers[@]}"

# --- one authority lost -------------------------------------------------------------------------
kill -KILL "${daemon_pids[3]}" "${signer_pids[3]}"
wait "${daemon_pids[3]}" "${signer_pids[3]}" 2>/dev/null || true
pids=("${daemon_pids[1]}" "${signer_pids[1]}" "${daemon_pids[2]}" "${signer_pids[2]}")
echo "7. authority3 is killed (SIGKILL, its dirauthd and signer); the other two go on without it:"
run_until_published $((first + 1)) 1 2
show_epoch $((first + 1)) 1
echo "8. The mirror fetches again, asking authority3 first; it verifies 2 of 3 and that the new"
echo "   snapshot chains to the one it holds:"
mirror --server "$(url 3)" --server "$(url 1)" --server "$(url 2)"
echo "   mirror files: $(cd "$run/mirror/mix" && ls | tr '\n' ' ')"
echo "9. Done: stopping the four processes left."
