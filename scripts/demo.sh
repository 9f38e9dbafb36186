#!/usr/bin/env bash
# The demo: three authorities on loopback, k = 2 of 3, each its own dirauth-signer (its keys),
# dirauthd (no key) and LMDB store, configured from keys-example/three-authorities/. Two
# providers register with all three; the next epoch's snapshot is co-signed by the three, its
# header appended to the transparency log under a checkpoint the three cosign, and a mirror that
# pins the three identity keys (threshold 2) and the log's keys verifies both. A provider's health
# statement and a revocation reach the next snapshot; a monitor watches the three and finds
# nothing; the consensus-health page is written; then one authority is killed and the epoch
# after is still published, with two signatures, and verified again.
#
# Time is a file clock per authority that this script advances, one second per DEMO_PACE_MS of
# real time (default 250), all three together, so that the epochs (10 s: prepared in the last
# 6 s before each starts, votes 2 s, signatures 2 s) pass quickly and always alike. The mirror
# reads the same clock (dirauthctl --now). Everything it starts is stopped on exit, on failure
# and on Ctrl-C.
#   DEMO_KEEP=1       keep the run directory (its path is printed): configurations, logs, stores,
#                     the mirror's files
#   DEMO_BUILD_DIR=D  build in D (default build/release)
#   DEMO_PREBUILT=1   skip the setup and the build: the programs of DEMO_BUILD_DIR are used as
#                     they are (the ctest `demo` runs it so)
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
if [ "${DEMO_PREBUILT:-0}" != 1 ]; then
	echo "Installing what is missing and building dirauthd, dirauth-signer, dirauthctl (output in ${log#"$root"/}) ..."
	quiet "setup (scripts/setup.sh)" bash scripts/setup.sh
	quiet "cmake" cmake -S "$root" -B "$build" -DDIRAUTH_WERROR=ON
	quiet "the build" cmake --build "$build" -j"$(nproc)" --target dirauthd dirauth-signer dirauthctl
fi
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
		echo "  authority1..3/: configurations, keys, logs, stores; mirror/mix/: the mirror's files;"
		echo "  monitor/: what the monitor keeps"
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
# uid, its signing key (0600 in a 0700 keys/), its log and cosignature keys (keys-example/log.key
# and cosignature.key for authority1, authorityN-log.key and authorityN-cosignature.key for the
# others), and a certificate its identity key issues now. The identity keys stay in offline/, as
# they would on an offline machine; keys/ keeps the providers'.
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
	if [ "$i" = 1 ]; then
		mv "$run/keys/log.key" "$run/keys/cosignature.key" "$dir/keys/"
	else
		mv "$run/keys/authority$i-log.key" "$dir/keys/log.key"
		mv "$run/keys/authority$i-cosignature.key" "$dir/keys/cosignature.key"
	fi
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
echo "3. One namespace, mix: the directory of mix gateways and mailbox providers, with its"
echo "   transparency log. Each signer also holds a log key and a cosignature key, whose verifier"
echo "   keys (dirauthctl key-verifiers) the others and every verifier pin:"
log_keys=()
witness_keys=()
for i in 1 2 3; do
	verifiers=$("$dirauthctl" key-verifiers --key "$run/authority$i/keys/log.key")
	log_key=$(sed -n 's/^ed25519 //p' <<<"$verifiers")
	verifiers=$("$dirauthctl" key-verifiers --key "$run/authority$i/keys/cosignature.key")
	witness_key=$(sed -n 's/^cosignature //p' <<<"$verifiers")
	log_keys+=(--log-key "$log_key")
	witness_keys+=(--witness-key "$witness_key")
	echo "   authority$i: log key ${log_key%%+*}+$(cut -d+ -f2 <<<"$log_key"), cosignature key ${witness_key%%+*}+$(cut -d+ -f2 <<<"$witness_key")"
done

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
	local noun=records
	[ "$records" = 1 ] && noun=record
	echo "   Epoch $1 published (valid from $after, $(utc "$after")), $records $noun,"
	echo "   signed by $(signers_of "$header")."
}
tick() { # one second of the clocks, DEMO_PACE_MS of real time
	set_clock $((clock + 1))
	sleep "$(awk "BEGIN { print $pace_ms / 1000 }")"
}
mirror() { # servers...: dirauthctl fetch as a mirror would, the log checked too, its lines indented
	local out status
	for _ in $(seq 1 $((2 * length))); do
		status=0
		out=$("$dirauthctl" fetch --trust "$trust" --namespace mix --out "$run/mirror" --now "$clock" \
			"${log_keys[@]}" "${witness_keys[@]}" "$@" 2>&1) || status=$?
		# 75: the header is not yet under a checkpoint the authorities cosigned; a moment later it is.
		[ "$status" -eq 75 ] || break
		tick
	done
	short <<<"$out" | sed 's/^/   mirror: /'
	return "$status"
}
checkpoint_of() { # i: one line on the checkpoint authority i serves: its size and who signed it
	local note=$run/checkpoint-$1
	curl -fs "$(url "$1")/v1/mix/log/checkpoint" >"$note"
	local size cosigners
	size=$(sed -n 2p "$note")
	cosigners=$(grep '^— .*/cosigner ' "$note" | cut -d' ' -f2 | sed 's|/cosigner||' | short | paste -sd, - | sed 's/,/, /g')
	local headers="$size headers"
	[ "$size" = 1 ] && headers="1 header"
	echo "   authority$1's log $(sed -n 1p "$note"): a checkpoint of $headers (size $size), signed by its log key and"
	echo "   cosigned by $cosigners."
}
in_log() { # epoch i: whether authority i's published checkpoint holds that epoch's header
	curl -fs --max-time 2 -o /dev/null "$(url "$2")/v1/mix/log/proof/$1"
}
body_of() { # epoch: the body the mirror kept for it
	echo "$run/mirror/mix/$1.body"
}
abbrev() { sed -E 's/\b([0-9a-f]{4})[0-9a-f]{56}([0-9a-f]{4})\b/\1…\2/g'; } # 64 hex digits -> 5a01…0001

first=${promised% } # what the receipts promise: the first epoch whose cut-off is still ahead
echo "5. The clocks run on; the three vote on epoch $first, compute the same snapshot and co-sign it:"
run_until_published "$first" 1 2 3
show_epoch "$first" 1
for _ in $(seq 1 $((2 * length))); do in_log "$first" 1 && break; tick; done
echo "6. Each authority appends the signed header to the log of mix and signs a checkpoint of the"
echo "   tree with its log key; the others cosign it, and it is served once 2 of the 3 have:"
checkpoint_of 1
echo "7. A mirror pinning the three identity keys with threshold 2 (the trust bundle $trust)"
echo "   and the three log and cosignature keys fetches it; it checks the signatures and certificates,"
echo "   the body, its Merkle root and every record, and that the header is in the log under a"
echo "   checkpoint cosigned by 2 of the 3 (the proof is kept, and checked again offline):"
mirror "${servers[@]}"
"$dirauthctl" verify "$run/mirror/mix/$first.tlog-proof" --trust "$trust" \
	--certificates "$run/mirror/mix/certificates" "${log_keys[@]}" "${witness_keys[@]}" |
	short | sed 's/^/   offline: /'

# --- the endpoint lifecycle: health and a revocation ---------------------------------------------
gateway=5a01000000000000000000000000000000000000000000000000000000000001
mailbox=5b01000000000000000000000000000000000000000000000000000000000001
echo "8. provider-a.example says its gateway $(abbrev <<<"$gateway") is draining (no new sessions), in a"
echo "   health statement signed by its key; provider-b.example retires its one mailbox endpoint"
echo "   $(abbrev <<<"$mailbox"), in a revocation signed by its key. Each goes to all three:"
out=$("$dirauthctl" health --key "$run/keys/provider-a.key" --service keys-example/service-a.yaml \
	--endpoint "$gateway" --class draining --now "$clock" "${servers[@]}")
lifecycle=$(grep -Eo 'in the view of epoch [0-9]+' <<<"$out" | cut -d' ' -f6 | sort -n | tail -n 1)
echo "   health statement: $(grep -c ' accepted: ' <<<"$out" || true) of 3 accepted, to be published in epoch $lifecycle"
out=$("$dirauthctl" revoke --key "$run/keys/provider-b.key" --service keys-example/service-b.yaml \
	--endpoint "$mailbox" --reason retired --now "$clock" "${servers[@]}")
revoked=$(grep -Eo 'in the view of epoch [0-9]+' <<<"$out" | cut -d' ' -f6 | sort -n | tail -n 1)
echo "   revocation: $(grep -c ' accepted: ' <<<"$out" || true) of 3 accepted, to be published in epoch $revoked"
[ "$revoked" -gt "$lifecycle" ] && lifecycle=$revoked
echo "   The clocks run on to that epoch; its snapshot is fetched by the mirror as before:"
run_until_published "$lifecycle" 1 2 3
show_epoch "$lifecycle" 1
mirror "${servers[@]}"
body=$(body_of "$lifecycle")
health_line=$(grep -a "^health [0-9a-f]* $gateway " "$body" || true)
revocation_line=$(grep -a "^revocation [0-9a-f]* $mailbox " "$body" || true)
[ -n "$health_line" ] || { echo "the snapshot of epoch $lifecycle lacks the health statement" >&2; exit 1; }
[ -n "$revocation_line" ] || { echo "the snapshot of epoch $lifecycle lacks the revocation" >&2; exit 1; }
# The records end where the health or revocation section begins.
if awk '/^(health|revocations) [0-9]+$/ { exit } { print }' "$body" | grep -aq "$mailbox"; then
	echo "the snapshot of epoch $lifecycle still lists the revoked endpoint" >&2
	exit 1
fi
echo "   In its body: the gateway's health, $(cut -d' ' -f4 <<<"$health_line"), signed by the $(cut -d' ' -f5 <<<"$health_line");"
echo "   the revocation of $(abbrev <<<"$mailbox"), listed since epoch $(cut -d' ' -f4 <<<"$revocation_line"); and no record"
echo "   lists the mailbox endpoint any more."

# --- the monitor --------------------------------------------------------------------------------
echo "9. A monitor watches the three authorities: it verifies every header they serve, that each is"
echo "   in the log under a cosigned checkpoint, that the checkpoints are one tree, and compares them:"
"$dirauthctl" monitor --trust "$trust" --source "$(url 1)" --source "$(url 2)" --source "$(url 3)" \
	"${log_keys[@]}" "${witness_keys[@]}" --state "$run/monitor" | short | sed 's/^/   /'

# --- the consensus-health page ------------------------------------------------------------------
page=$build/demo-health.html
echo "10. The consensus-health page, one static HTML page on who voted, signed and cosigned each epoch:"
status=0
"$dirauthctl" health-page --trust "$trust" --namespace mix --now "$clock" "${servers[@]}" --out "$page" \
	>"$run/health-page.out" 2>&1 || status=$?
case $status in
0) echo "    written to $page: no warning." ;;
1)
	echo "    written to $page, with $(grep -c . "$run/health-page.out") warnings, listed at its top; the first:"
	head -n 1 "$run/health-page.out" | short | sed 's/^/    /'
	;;
*) cat "$run/health-page.out" >&2; exit 1 ;;
esac

# --- one authority lost -------------------------------------------------------------------------
kill -KILL "${daemon_pids[3]}" "${signer_pids[3]}"
{ wait "${daemon_pids[3]}" "${signer_pids[3]}"; } 2>/dev/null || true
pids=("${daemon_pids[1]}" "${signer_pids[1]}" "${daemon_pids[2]}" "${signer_pids[2]}")
last=$((lifecycle + 1))
echo "11. authority3 is killed (SIGKILL, its dirauthd and signer); the other two go on without it:"
run_until_published "$last" 1 2
show_epoch "$last" 1
echo "12. The mirror fetches again, asking authority3 first; it verifies 2 of 3, that the new"
echo "    snapshot chains to the one it holds, and its place in the log, now cosigned by the two:"
mirror --server "$(url 3)" --server "$(url 1)" --server "$(url 2)" | sed 's/^   mirror/    mirror/'
echo "    mirror files: $(cd "$run/mirror/mix" && ls | tr '\n' ' ')"
echo "13. Done: stopping the four processes left."
