#!/usr/bin/env bash
# The demo: one authority from keys-example/, two providers register a service each, the next
# epoch's snapshot is published, and a mirror fetches and verifies it; then a mirror that pins
# a different authority refuses the same snapshot. Everything it starts is stopped at the end.
#   DEMO_KEEP=1 keeps the run directory (its path is printed).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

bash scripts/setup.sh
echo "building dirauthd and dirauthctl ..."
cmake -S "$root" -B build/release -DDIRAUTH_WERROR=ON >/dev/null
cmake --build build/release -j"$(nproc)" --target dirauthd dirauthctl >/dev/null
dirauthd=$root/build/release/server/dirauthd
dirauthctl=$root/build/release/ctl/dirauthctl

run=$(mktemp -d /tmp/dirauth-demo.XXXXXX)
daemon=
cleanup() {
	if [ -n "$daemon" ]; then
		kill "$daemon" 2>/dev/null || true
		wait "$daemon" 2>/dev/null || true
	fi
	if [ "${DEMO_KEEP:-0}" = 1 ]; then echo "run directory kept: $run"; else rm -rf "$run"; fi
}
trap cleanup EXIT

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
port=18080
while port_in_use "$port"; do port=$((port + 1)); done
url=http://127.0.0.1:$port
epoch_seconds=3

# The example configuration, with this run's port and short epochs so the demo is quick.
bash scripts/example-keys.sh "$run/keys"
mkdir -p "$run/data"
sed -e "s/port: 8080/port: $port/" -e "s/length_seconds: 60/length_seconds: $epoch_seconds/" \
	keys-example/dirauthd.yaml >"$run/dirauthd.yaml"
"$dirauthd" --config "$run/dirauthd.yaml" --check-config >/dev/null
"$dirauthd" --config "$run/dirauthd.yaml" >"$run/dirauthd.log" 2>&1 &
daemon=$!
for _ in $(seq 1 200); do
	curl -fs "$url/v1/health" >/dev/null 2>&1 && break
	kill -0 "$daemon" 2>/dev/null || { cat "$run/dirauthd.log"; exit 1; }
	sleep 0.05
done
echo "1. authority authority1.dirauth.example is up on $url (epochs of ${epoch_seconds}s, LMDB in $run/data)"

register() { # provider-key service-file
	"$dirauthctl" register --key "$run/keys/$1" --service "keys-example/$2" --server "$url" \
		--trust keys-example/trust-bundle.txt
}
out_a=$(register provider-a.key service-a.yaml)
echo "2. provider-a.example registered keys-example/service-a.yaml: $out_a"
out_b=$(register provider-b.key service-b.yaml)
echo "3. provider-b.example registered keys-example/service-b.yaml: $out_b"

promised=$(grep -Eo 'epoch [0-9]+' <<<"$out_b" | head -n 1 | cut -d' ' -f2)
echo "4. waiting for epoch $promised, the epoch both receipts promise ..."
for _ in $(seq 1 $((epoch_seconds * 40))); do
	current=$(curl -fs "$url/v1/mix/snapshots/latest" | sed -n 's/^epoch //p' || true)
	[ -n "$current" ] && [ "$current" -ge "$promised" ] && break
	sleep 0.1
done
[ -n "$current" ] && [ "$current" -ge "$promised" ] || { echo "no snapshot for epoch $promised"; exit 1; }
echo "   published: $(curl -fs "$url/v1/mix/snapshots/latest" | grep -E '^(epoch|records) ' | tr '\n' ' ')"

echo "5. a mirror fetches and verifies the snapshot (threshold signatures, body digest, Merkle root, every provider signature, bounds):"
"$dirauthctl" fetch --trust keys-example/trust-bundle.txt --server "$url" --namespace mix --out "$run/mirror" |
	sed 's/^/   /'
echo "   mirror files: $(cd "$run/mirror/mix" && ls | tr '\n' ' ')"

echo "6. a mirror that pins a different authority key refuses the same snapshot:"
"$dirauthctl" keygen --name impostor.example --out "$run/impostor.key" >"$run/impostor.pub"
sed "s|^authority .*|authority $(cat "$run/impostor.pub")|" keys-example/trust-bundle.txt >"$run/other-bundle.txt"
if "$dirauthctl" fetch --trust "$run/other-bundle.txt" --server "$url" --namespace mix --out "$run/other" 2>"$run/refusal"; then
	echo "   ERROR: the snapshot was accepted"
	exit 1
fi
sed 's/^/   /' "$run/refusal"
echo "7. done: stopping dirauthd."
