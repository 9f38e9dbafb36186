#!/usr/bin/env bash
# check-examples.sh ROOT DIRAUTHD DIRAUTH_SIGNER DIRAUTHCTL: every shipped example configuration passes the programs' own
# --check-config, keys included.
#
# The examples are keys-example/ (one authority), keys-example/three-authorities/ (the demo's
# three) and each authority of deploy/examples/*/. For each authority a scratch directory gets a
# copy of its dirauthd.yaml and dirauth-signer.yaml, absolute paths (/etc, /var/lib, /run) moved
# under the scratch directory, and the keys the signer's file names, with the modes the signer
# insists on (0600 in a 0700 directory: git keeps neither):
#   - keys-example: the example keys themselves (not secret), each authority's signing, log and
#     cosignature key, and a certificate its example identity key issues now;
#   - deploy/examples: keys made now with dirauthctl (the examples ship only verifier keys, whose
#     private halves were discarded), named as the file's comments say to make them.
# Then `dirauth-signer --check-config` and `dirauthd --check-config` must both exit 0. For
# keys-example, the verifier keys the members' log_key and cosignature_key pin must also be
# exactly those `dirauthctl key-verifiers` prints for the example key files, so that the demo's
# log runs with the keys its configuration names.
# Prints one line per configuration checked and exits 1 at the first that fails.
set -euo pipefail
if [ "$#" -ne 4 ]; then
	echo "usage: $0 ROOT DIRAUTHD DIRAUTH_SIGNER DIRAUTHCTL" >&2
	exit 2
fi
root=$(cd "$1" && pwd)
dirauthd=$2
signer=$3
ctl=$4
scratch=$(mktemp -d /tmp/dirauth-examples.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
umask 077
now=$(date +%s)
failed=0

fail() {
	echo "check-examples: $*" >&2
	failed=1
}

# value FILE KEY: the first `KEY: value` of a YAML file, without a comment or brackets.
value() {
	sed -n "s/^$2: *\([^#]*\).*/\1/p" "$1" | head -n 1 | tr -d '[] '
}

# certify DIR NAME IDENTITY_KEY SIGNING_KEY CERT: a certificate valid from an hour ago.
certify() {
	"$ctl" certify --identity "$3" --signing-key "$4" --valid-after $((now - 3600)) --days 30 \
		--out "$5" --now "$now" >/dev/null
}

# check DIR LABEL: both programs' --check-config on the copies in DIR.
check() {
	local out
	if ! out=$("$signer" --config "$1/dirauth-signer.yaml" --check-config 2>&1); then
		fail "$2/dirauth-signer.yaml: $out"
		return
	fi
	if ! out=$("$dirauthd" --config "$1/dirauthd.yaml" --check-config 2>&1); then
		fail "$2/dirauthd.yaml: $out"
		return
	fi
	echo "ok: $2 (dirauth-signer.yaml, dirauthd.yaml)"
}

# copy SRC DIR: the two configurations, absolute paths moved under DIR; a clock file for a file
# clock.
copy() {
	mkdir -p "$2"
	for f in dirauthd.yaml dirauth-signer.yaml; do
		sed -e "s#\([ [:space:]\[]\)/etc/#\1$2/etc/#g" -e "s#\([ [:space:]\[]\)/var/lib/#\1$2/var/lib/#g" \
			-e "s#\([ [:space:]\[]\)/run/#\1$2/run/#g" "$1/$f" >"$2/$f"
	done
	echo "$now" >"$2/clock"
	mkdir -p "$2/etc" "$2/var/lib" "$2/run/dirauth-signer"
	chmod 0755 "$2/run/dirauth-signer"
}

# pinned FILE VKEY: whether the configuration FILE pins VKEY (a log_key or cosignature_key).
pinned() {
	grep -qF "\"$2\"" "$1"
}

# --- keys-example: one authority -----------------------------------------------------------------
dir=$scratch/keys-example
copy "$root/keys-example" "$dir"
bash "$root/scripts/example-keys.sh" "$dir/keys"
certify "$dir" authority1.dirauth.example "$dir/keys/authority1-identity.key" "$dir/keys/authority1.key" \
	"$dir/keys/authority1.cert"
check "$dir" keys-example

# --- keys-example/three-authorities ----------------------------------------------------------------
bash "$root/scripts/example-keys.sh" "$scratch/example-keys"
for i in 1 2 3; do
	dir=$scratch/three/authority$i
	copy "$root/keys-example/three-authorities/authority$i" "$dir"
	mkdir -m 0700 "$dir/keys"
	cp "$scratch/example-keys/authority$i.key" "$dir/keys/"
	if [ "$i" = 1 ]; then
		cp "$scratch/example-keys/log.key" "$scratch/example-keys/cosignature.key" "$dir/keys/"
	else
		cp "$scratch/example-keys/authority$i-log.key" "$dir/keys/log.key"
		cp "$scratch/example-keys/authority$i-cosignature.key" "$dir/keys/cosignature.key"
	fi
	certify "$dir" "authority$i.dirauth.example" "$scratch/example-keys/authority$i-identity.key" \
		"$dir/keys/authority$i.key" "$dir/keys/authority$i.cert"
	check "$dir" "keys-example/three-authorities/authority$i"
	log_key=$("$ctl" key-verifiers --key "$dir/keys/log.key" | sed -n 's/^ed25519 //p')
	cosigner=$("$ctl" key-verifiers --key "$dir/keys/cosignature.key" | sed -n 's/^cosignature //p')
	for j in 1 2 3; do
		config=$root/keys-example/three-authorities/authority$j/dirauthd.yaml
		pinned "$config" "$log_key" || fail "$config does not pin authority$i's log key $log_key"
		pinned "$config" "$cosigner" || fail "$config does not pin authority$i's cosignature key $cosigner"
	done
done

# --- deploy/examples --------------------------------------------------------------------------------
for config in "$root"/deploy/examples/*/*/dirauthd.yaml; do
	source_dir=$(dirname "$config")
	label=${source_dir#"$root"/}
	dir=$scratch/$label
	copy "$source_dir" "$dir"
	name=$(value "$dir/dirauth-signer.yaml" authority)
	origin=$(sed -n 's/^ *origin: *\([^ #]*\).*/\1/p' "$dir/dirauth-signer.yaml" | head -n 1)
	signing=$(value "$dir/dirauth-signer.yaml" signing_key)
	cert=$(value "$dir/dirauth-signer.yaml" certificates)
	log=$(value "$dir/dirauth-signer.yaml" log_key)
	cosignature=$(value "$dir/dirauth-signer.yaml" cosignature_key)
	if [ -z "$log" ] || [ -z "$cosignature" ]; then
		fail "$label/dirauth-signer.yaml names no log_key or cosignature_key"
		continue
	fi
	mkdir -p "$(dirname "$signing")"
	chmod 0700 "$(dirname "$signing")"
	"$ctl" identity-keygen --name "$name" --out "$dir/identity.key" >/dev/null
	"$ctl" keygen --name "$name" --out "$signing" >/dev/null
	"$ctl" keygen --name "$origin" --out "$log" >/dev/null
	"$ctl" keygen --name "$name/cosigner" --out "$cosignature" >/dev/null
	certify "$dir" "$name" "$dir/identity.key" "$signing" "$cert"
	check "$dir" "$label"
	grep -q "^ *log_key: " "$config" && grep -q "^ *cosignature_key: " "$config" ||
		fail "$label/dirauthd.yaml pins no member's log_key or cosignature_key"
done

exit "$failed"
