/*
 * capability.c: a private namespace's secret, made (capability new) and read (fetch
 * --capability-file); see capability.h.
 *
 * The secret is handled like a key: the new file is created O_EXCL with mode 0600, and every
 * buffer that held the secret is wiped before it is released.
 */
#include "ctl/capability.h"

#include "ctl/command.h"
#include "ctl/files.h"
#include "crypto/crypto.h"
#include "schema/encoding.h"
#include "base/error.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AUTHORIZATION_PREFIX "Authorization: Bearer "

static int secret_is_valid(const uint8_t *text, size_t len)
{
	if (len < CTL_CAPABILITY_MIN || len > CTL_CAPABILITY_MAX)
		return 0;
	for (size_t i = 0; i < len; i++) {
		uint8_t c = text[i];
		int ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		         c == '-' || c == '.' || c == '_' || c == '~' || c == '+' || c == '/' || c == '=';
		if (!ok)
			return 0;
	}
	return 1;
}

int ctl_capability_read(const char *what, const char *path, char authorization[CTL_AUTHORIZATION_MAX],
                        struct ctl_report *report)
{
	uint8_t *text = NULL;
	size_t len = 0;
	/* One byte past the longest secret: its line's newline. */
	static const struct ctl_file_limit limit = {CTL_CAPABILITY_MAX + 1, "a secret and its newline",
	                                            CTL_EXIT_DATA};
	int rc = ctl_file_read_reported(path, &limit, &text, &len, report, "%s: --capability-file %.200s",
	                                what, path);
	if (rc == DIRAUTH_ERR_BOUNDS)
		rc = DIRAUTH_ERR_SYNTAX;
	if (rc != 0)
		return rc;
	size_t secret_len = len > 0 && text[len - 1] == '\n' ? len - 1 : len;
	if (!secret_is_valid(text, secret_len)) {
		crypto_wipe(text, len);
		free(text);
		ctl_report_fail(report, CTL_EXIT_DATA,
		                "%s: --capability-file %.200s: not one secret of %d to %d bytes of "
		                "[A-Za-z0-9-._~+/=]",
		                what, path, CTL_CAPABILITY_MIN, CTL_CAPABILITY_MAX);
		return DIRAUTH_ERR_SYNTAX;
	}
	memcpy(authorization, AUTHORIZATION_PREFIX, sizeof AUTHORIZATION_PREFIX - 1);
	memcpy(authorization + sizeof AUTHORIZATION_PREFIX - 1, text, secret_len);
	authorization[sizeof AUTHORIZATION_PREFIX - 1 + secret_len] = 0;
	crypto_wipe(text, len);
	free(text);
	return 0;
}

int ctl_capability_new(const char *out_path, char sha256_hex[65], struct ctl_report *report)
{
	uint8_t random[CTL_CAPABILITY_BYTES], digest[CRYPTO_SHA256_SIZE];
	char line[64];
	int rc;

	if (crypto_random(random, sizeof random) != 0) {
		ctl_report_fail(report, CTL_EXIT_SOFTWARE, "capability new: no random source");
		return DIRAUTH_ERR_CRYPTO;
	}
	base64_encode(random, sizeof random, line);
	size_t len = strlen(line);
	rc = crypto_sha256((const uint8_t *)line, len, digest);
	if (rc == 0) {
		hex_encode(digest, sizeof digest, sha256_hex);
		line[len] = '\n';
		rc = ctl_file_create(out_path, (const uint8_t *)line, len + 1, 0600);
		if (rc != 0)
			ctl_report_fail(report, CTL_EXIT_CANNOT_CREATE, "capability new: %.200s: %s",
			                out_path,
			                rc == DIRAUTH_ERR_EXISTS ? "exists; a secret is never overwritten"
			                                         : dirauth_strerror(rc));
	} else {
		ctl_report_fail(report, CTL_EXIT_SOFTWARE, "capability new: cannot hash the secret");
	}
	crypto_wipe(random, sizeof random);
	crypto_wipe(line, sizeof line);
	crypto_wipe(digest, sizeof digest);
	return rc;
}

static const char capability_usage[] =
    "usage: dirauthctl capability new --out FILE\n"
    "\n"
    "Writes a new capability (the bearer secret of a private namespace: 32 random bytes in\n"
    "base64, one line) to FILE (created, mode 0600, never overwritten) and prints the lines\n"
    "that go under the namespace in dirauthd.yaml: private, capability_sha256 (the secret's\n"
    "SHA-256, all the configuration holds) and capability_file (the secret, which the requests\n"
    "to the other authorities of a set carry). Give FILE to each authority of the set and to\n"
    "each holder (dirauthctl fetch --capability-file FILE).\n";

static int run_capability_new(const struct ctl_arguments *arguments, struct ctl_report *report)
{
	char hex[65];

	if (ctl_capability_new(arguments->out, hex, report) != 0)
		return report->exit_code;
	printf("# capability written to %s (mode 0600). Under the namespace in dirauthd.yaml:\n"
	       "private: true\n"
	       "capability_sha256: %s\n"
	       "capability_file: %s\n",
	       arguments->out, hex, arguments->out);
	return CTL_EXIT_OK;
}

/* "new" is the program name of its own words. */
static const struct ctl_command capability_new_command = {
    .name = "capability new",
    .usage = capability_usage,
    .options = {CTL_REQUIRED(CTL_OPTION_OUT)},
    .run = run_capability_new,
};

int ctl_capability_command(int argc, char **argv, struct ctl_report *report)
{
	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		if (argc < 2) {
			ctl_report_fail(report, CTL_EXIT_USAGE, "capability: missing subcommand (new)");
			return report->exit_code;
		}
		fputs(capability_usage, stdout);
		return CTL_EXIT_OK;
	}
	if (strcmp(argv[1], "new") != 0) {
		ctl_report_fail(report, CTL_EXIT_USAGE, "capability: %.64s: unknown subcommand (new)",
		                argv[1]);
		return report->exit_code;
	}
	return ctl_command_run(&capability_new_command, argc - 1, argv + 1, report);
}
