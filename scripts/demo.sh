#!/usr/bin/env bash
# The demo: one authority from keys-example/ as two processes, dirauth-signer (the keys, with a
# certificate issued here by the example identity key) and dirauthd (no key at all); two
# providers register a service each, the next epoch's snapshot is published, and a mirror that
# pins only the identity key fetches and verifies it; a mirror that pins a different authority
# refuses the same snapshot; the signer's audit log is shown; then the signer stops and dirauthd
# keeps serving reads but refuses to sign anything. Everything it starts is stopped at the end.
#   DEMO_KEEP=1 keeps the run directory (its path is printed).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

bash scripts/setup.sh
echo "building dirauthd, dirauth-signer and dirauthctl ..."
cmake -S "$root" -B build/release -DDIRAUTH_WERROR=ON >/dev/null
cmake --build build/release -j"$(nproc)" --target dirauthd dirauth-signer dirauthctl >/dev/null
dirauthd=$root/build/release/server/dirauthd
signer=$root/build/release/signer/dirauth-signer
dirauthctl=$root/build/release/ctl/dirauthctl

run=$(mktemp -d /tmp/dirauth-demo.XXXXXX)
daemon=
signer_pid=
cleanup() {
	for pid in $daemon $signer_pid; do
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	if [ "${DEMO_KEEP:-0}" = 1 ]; then echo "run directory kept: $run"; else rm -rf "$run"; fi
}
trap cleanup EXIT

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
port=18080
while port_in_use "$port"; do port=$((port + 1)); done
url=http://127.0.0.1:$port
epoch_seconds=3

# The example configurations, with this run's port, uid and short epochs so the demo is quick.
bash scripts/example-keys.sh "$run/keys"
mkdir -p "$run/data"
sed -e "s/port: 8080/port: $port/" -e "s/length_seconds: 60/length_seconds: $epoch_seconds/" \
	keys-example/dirauthd.yaml >"$run/dirauthd.yaml"
sed -e "s/^allowed_uid: 0 /allowed_uid: $(id -u) /" -e "s/length_seconds: 60/length_seconds: $epoch_seconds/" \
	keys-example/dirauth-signer.yaml >"$run/dirauth-signer.yaml"

# The offline identity key certifies the online signing key, from now for 30 days.
"$dirauthctl" certify --identity "$run/keys/authority1-identity.key" --signing-key "$run/keys/authority1.key" \
	--valid-after now --days 30 --out "$run/keys/authority1.cert" >"$run/certify.out"
echo "1. the identity key certified the signing key: $(grep -E 'valid' "$run/certify.out" | tr '\n' ' ')"

"$signer" --config "$run/dirauth-signer.yaml" --check-config >/dev/null
"$signer" --config "$run/dirauth-signer.yaml" >"$run/dirauth-signer.log" 2>&1 &
signer_pid=$!
for _ in $(seq 1 200); do
	[ -S "$run/signer.sock" ] && break
	kill -0 "$signer_pid" 2>/dev/null || { cat "$run/dirauth-signer.log"; exit 1; }
	sleep 0.05
done
echo "2. dirauth-signer holds the keys and listens on $run/signer.sock (0600, uid $(id -u) only)"

"$dirauthd" --config "$run/dirauthd.yaml" --check-config >/dev/null
"$dirauthd" --config "$run/dirauthd.yaml" >"$run/dirauthd.log" 2>&1 &
daemon=$!
for _ in $(seq 1 200); do
	curl -fs "$url/v1/ready" >/dev/null 2>&1 && break
	kill -0 "$daemon" 2>/dev/null || { cat "$run/dirauthd.log"; exit 1; }
	sleep 0.05
done
echo "3. dirauthd (no key) for authority1.dirauth.example is up and ready on $url (epochs of ${epoch_seconds}s, LMDB in $run/data)"

register() { # provider-key service-file
	"$dirauthctl" register --key "$run/keys/$1" --service "keys-example/$2" --server "$url" \
		--trust keys-example/trust-bundle.txt
}
out_a=$(register provider-a.key service-a.yaml)
echo "4. provider-a.example registered keys-example/service-a.yaml: $out_a"
out_b=$(register provider-b.key service-b.yaml)
echo "5. provider-b.example registered keys-example/service-b.yaml: $out_b"

promised=$(grep -Eo 'epoch [0-9]+' <<<"$out_b" | head -n 1 | cut -d' ' -f2)
echo "6. waiting for epoch $promised, the epoch both receipts promise ..."
for _ in $(seq 1 $((epoch_seconds * 40))); do
	current=$(curl -fs "$url/v1/mix/snapshots/latest" | sed -n 's/^epoch //p' || true)
	[ -n "$current" ] && [ "$current" -ge "$promised" ] && break
	sleep 0.1
done
[ -n "$current" ] && [ "$current" -ge "$promised" ] || { echo "no snapshot for epoch $promised"; exit 1; }
echo "   published: $(curl -fs "$url/v1/mix/snapshots/latest" | grep -E '^(epoch|records) ' | tr '\n' ' ')"

echo "7. a mirror pinning the identity key fetches the certificates and verifies the snapshot (certified signatures, body digest, Merkle root, every provider signature, bounds):"
"$dirauthctl" fetch --trust keys-example/trust-bundle.txt --server "$url" --namespace mix --out "$run/mirror" |
	sed 's/^/   /'
echo "   mirror files: $(cd "$run/mirror/mix" && ls | tr '\n' ' ')"

echo "8. a mirror that pins a different authority key refuses the same snapshot:"
"$dirauthctl" keygen --name impostor.example --out "$run/impostor.key" >"$run/impostor.pub"
sed "s|^authority .*|authority $(cat "$run/impostor.pub")|" keys-example/trust-bundle.txt >"$run/other-bundle.txt"
if "$dirauthctl" fetch --trust "$run/other-bundle.txt" --server "$url" --namespace mix --out "$run/other" 2>"$run/refusal"; then
	echo "   ERROR: the snapshot was accepted"
	exit 1
fi
sed 's/^/   /' "$run/refusal"

echo "9. the signer's audit log, one line per signature (what, origin, epoch, digest, key; never a secret):"
tail -n 4 "$run/signer-audit.log" | sed 's/^/   /'

echo "10. the signer stops: dirauthd still serves the snapshot but is not ready and signs nothing:"
kill "$signer_pid"
wait "$signer_pid" 2>/dev/null || true
signer_pid=
sleep 1.2 # dirauthd caches the signer's state for a second
echo "   GET /v1/mix/snapshots/latest: $(curl -s -o /dev/null -w '%{http_code}' "$url/v1/mix/snapshots/latest")"
echo "   GET /v1/ready: $(curl -s -w ' %{http_code}' "$url/v1/ready")"
# A new sequence of service-a, posted as is: dirauthd refuses it before storing anything.
"$dirauthctl" register --key "$run/keys/provider-a.key" --service keys-example/service-a.yaml --dry-run \
	--now $(($(date +%s) + 1)) >"$run/again.note"
echo "   POST /v1/registrations: $(curl -s -w ' %{http_code}' --data-binary @"$run/again.note" "$url/v1/registrations")"
echo "11. done: stopping dirauthd."
