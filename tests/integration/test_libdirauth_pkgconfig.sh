#!/usr/bin/env bash
# libdirauth as a packager and its users get it: `cmake --install` of this build into a fresh
# prefix, then a separate small project that knows nothing of this tree, compiled and linked with
# `pkg-config --cflags --libs dirauth` alone, run against the installed shared library: it makes a
# context for the example chain's trust bundle, feeds it the chain's answers and prints what it
# verified. Also checks what was installed: the header, libdirauth.so -> .so.0.2 -> .so.0.2.0, the
# pkg-config file's version, and that pkg-config's flags point into the prefix.
#   usage: test_libdirauth_pkgconfig.sh BUILD-DIR SOURCE-DIR [EXTRA-CFLAGS]
# EXTRA-CFLAGS: a sanitizer build's (its library needs the sanitizer's runtime in the program).
set -euo pipefail
build=$1 source=$2 extra=${3:-}
command -v pkg-config >/dev/null || { echo "no pkg-config: skipped"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix

cmake --install "$build" --prefix "$prefix" --component Unspecified >"$work/install.log" 2>&1 ||
	{ cat "$work/install.log"; exit 1; }
pc=$(find "$prefix" -name dirauth.pc -print -quit)
[ -n "$pc" ] || { echo "no dirauth.pc installed"; exit 1; }
export PKG_CONFIG_PATH=$(dirname "$pc")
[ "$(pkg-config --modversion dirauth)" = "0.2.0" ] || { echo "version: $(pkg-config --modversion dirauth)"; exit 1; }
libdir=$(pkg-config --variable=libdir dirauth)
includedir=$(pkg-config --variable=includedir dirauth)
[ -f "$includedir/dirauth/dirauth.h" ] || { echo "no header under $includedir"; exit 1; }
[ "$(readlink "$libdir/libdirauth.so")" = "libdirauth.so.0.2" ] || { echo "libdirauth.so link"; exit 1; }
[ "$(readlink "$libdir/libdirauth.so.0.2")" = "libdirauth.so.0.2.0" ] || { echo "libdirauth.so.0.2 link"; exit 1; }
case "$(cd "$libdir" && pwd -P)" in "$(cd "$prefix" && pwd -P)"/*) ;; *) echo "libdir $libdir outside $prefix"; exit 1 ;; esac

mkdir "$work/project"
cat >"$work/project/main.c" <<'PROGRAM'
#include <dirauth/dirauth.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t now(void *user) { (void)user; return 1767225750; }
static int state_read(void *user, const char *ns, uint8_t *out, size_t cap, size_t *len)
{ (void)user; (void)ns; (void)out; (void)cap; *len = 0; return 0; }
static int state_write(void *user, const char *ns, const uint8_t *bytes, size_t len)
{ (void)user; (void)ns; (void)bytes; (void)len; return 0; }

static unsigned char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	unsigned char *b = malloc(1 << 20);
	if (f == NULL || b == NULL) exit(3);
	*len = fread(b, 1, 1 << 20, f);
	fclose(f);
	return b;
}

int main(int argc, char **argv)
{
	struct dirauth_callbacks cb = {0};
	struct dirauth_result result = {0};
	struct dirauth_context *context = NULL;
	struct dirauth_update *update = NULL;
	const char *path;
	size_t len, max, count = 0;
	char file[4096];
	cb.now = now; cb.state_read = state_read; cb.state_write = state_write;
	if (argc != 2) return 2;
	snprintf(file, sizeof(file), "%s/trust-bundle.txt", argv[1]);
	unsigned char *bundle = slurp(file, &len);
	if (dirauth_context_new(&cb, bundle, len, NULL, &context, &result) != DIRAUTH_SUCCESS) return 4;
	if (dirauth_update_begin(context, "mix", &update, &result) != DIRAUTH_SUCCESS) return 5;
	while (dirauth_update_next(update, &path, &max)) {
		const char *name = strcmp(path, "/v1/certificates") == 0 ? "certificates.txt"
		                 : strstr(path, "latest") != NULL ? "header.note" : "body.txt";
		snprintf(file, sizeof(file), "%s/%s", argv[1], name);
		unsigned char *bytes = slurp(file, &len);
		enum dirauth_status status = dirauth_update_feed(update, 200, "", bytes, len, &result);
		free(bytes);
		if (status != DIRAUTH_SUCCESS) { printf("%s: %s\n", dirauth_status_name(status), result.detail); return 6; }
	}
	dirauth_update_free(update);
	struct dirauth_endpoint endpoints[8];
	if (dirauth_endpoints(context, "mix", "mix-gateway", endpoints, 8, &count, &result) != DIRAUTH_SUCCESS) return 7;
	printf("verified %zu endpoints, first %s\n", count, endpoints[0].address);
	dirauth_context_free(context);
	free(bundle);
	return 0;
}
PROGRAM
# shellcheck disable=SC2046
# shellcheck disable=SC2086
cc -std=c11 -Wall -Werror $extra -o "$work/project/resolver" "$work/project/main.c" $(pkg-config --cflags --libs dirauth) \
	-Wl,-rpath,"$libdir"
output=$("$work/project/resolver" "$source/tests/vectors/chain")
echo "$output"
[ "$output" = "verified 2 endpoints, first 192.0.2.10:443" ] || { echo "unexpected output"; exit 1; }
# It runs on the installed library, not the build tree's.
# (ldd's output is read whole first: grep -q would close the pipe early, and pipefail would fail
# the test on ldd's SIGPIPE.)
loaded=$(ldd "$work/project/resolver")
grep -qF "$libdir/libdirauth.so.0.2" <<<"$loaded" || { echo "$loaded"; exit 1; }
echo "test_libdirauth_pkgconfig: linked through pkg-config from $prefix"
