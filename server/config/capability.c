/*
 * capability.c: the private-namespace keys of dirauthd's configuration and the capability file
 * that the peers' requests carry (capability.h).
 *
 * The configuration names a digest so that the file an operator shares, backs up or pastes into
 * a ticket opens no private namespace. The secret file is read like a key file: no symbolic
 * link, no access by group or others, a bounded read, every copy wiped.
 */
#include "server/config/capability.h"

#include "schema/encoding.h"
#include "base/error.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The capability file: the secret and one newline, and one byte more to see a longer file. */
#define CAPABILITY_FILE_READ (CONFIG_CAPABILITY_MAX + 2)

int config_capability_is_valid(const char *text, size_t len)
{
	if (len < CONFIG_CAPABILITY_MIN || len > CONFIG_CAPABILITY_MAX)
		return 0;
	for (size_t i = 0; i < len; i++) {
		char c = text[i];
		int ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		         c == '-' || c == '.' || c == '_' || c == '~' || c == '+' || c == '/' || c == '=';
		if (!ok)
			return 0;
	}
	return 1;
}

static int parse_private(struct settings_reader *state, const struct settings_node *v, int *out)
{
	int rc = settings_expect_kind(state, v, SETTINGS_SCALAR, "namespace private");
	if (rc)
		return rc;
	if (v->plain && strcmp(v->text, "true") == 0)
		*out = 1;
	else if (v->plain && strcmp(v->text, "false") == 0)
		*out = 0;
	else
		return settings_fail(state, v->line, "namespace private must be true or false");
	return 0;
}

static int parse_digest(struct settings_reader *state, const struct settings_node *v,
                        uint8_t out[CRYPTO_SHA256_SIZE])
{
	char text[2 * CRYPTO_SHA256_SIZE + 2];
	int rc = settings_string(state, v, "namespace capability_sha256", text, sizeof text);
	if (rc)
		return rc;
	size_t len = strlen(text);
	int lower = len == 2 * CRYPTO_SHA256_SIZE;
	for (size_t i = 0; lower && i < len; i++)
		lower = (text[i] >= '0' && text[i] <= '9') || (text[i] >= 'a' && text[i] <= 'f');
	if (!lower || hex_decode(text, len, out, CRYPTO_SHA256_SIZE) != 0)
		return settings_fail(state, v->line,
		                     "namespace capability_sha256 must be 64 lower-case hex digits (the "
		                     "SHA-256 of the secret: printf %%s SECRET | sha256sum)");
	return 0;
}

int config_capability_parse(struct settings_reader *state, const struct settings_node *item,
                            struct config_capability *out)
{
	const struct settings_node *private_node = settings_lookup(item, "private");
	const struct settings_node *digest = settings_lookup(item, "capability_sha256");
	const struct settings_node *file = settings_lookup(item, "capability_file");
	int rc;

	memset(out, 0, sizeof *out);
	out->line = item->line;
	if (private_node && (rc = parse_private(state, private_node, &out->is_private)))
		return rc;
	if (!out->is_private) {
		if (digest || file)
			return settings_fail(state, (digest ? digest : file)->line,
			                     "capability_sha256 and capability_file are for a private "
			                     "namespace (private: true)");
		return 0;
	}
	if (!digest)
		return settings_fail(state, item->line,
		                     "a private namespace needs capability_sha256 (the SHA-256 of its "
		                     "secret)");
	if ((rc = parse_digest(state, digest, out->sha256)))
		return rc;
	if (file) {
		if ((rc = settings_path(state, file, "namespace capability_file", out->file)))
			return rc;
		out->file_line = file->line;
	}
	return 0;
}

/* Reads at most cap bytes of path into buf: *len gets how many. 0, or the errno-like refusal in
 * state. */
static int read_secret_file(struct settings_reader *state, const struct config_capability *c, char *buf,
                            size_t cap, size_t *len)
{
	/* O_NONBLOCK: a FIFO opens at once (and is refused below) instead of waiting for a writer. */
	int fd = open(c->file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	struct stat st;
	*len = 0;
	if (fd < 0)
		return settings_fail(state, c->file_line, "capability_file %.200s: %s", c->file,
		                     errno == ELOOP ? "is a symbolic link" : strerror(errno));
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return settings_fail(state, c->file_line, "capability_file %.200s is not a regular file",
		                     c->file);
	}
	if (st.st_mode & (S_IRWXG | S_IRWXO)) {
		close(fd);
		return settings_fail(state, c->file_line,
		                     "capability_file %.200s may be read or written by group or others "
		                     "(chmod 600 it)",
		                     c->file);
	}
	while (*len < cap) {
		ssize_t n = read(fd, buf + *len, cap - *len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int saved = errno;
			close(fd);
			return settings_fail(state, c->file_line, "capability_file %.200s: %s", c->file,
			                     strerror(saved));
		}
		if (n == 0)
			break;
		*len += (size_t)n;
	}
	close(fd);
	return 0;
}

int config_capability_load(struct settings_reader *state, struct config_capability *out,
                           int several_authorities)
{
	char buf[CAPABILITY_FILE_READ];
	uint8_t digest[CRYPTO_SHA256_SIZE];
	size_t len = 0;
	int rc;

	if (!out->is_private)
		return 0;
	if (!out->file[0])
		return several_authorities
		           ? settings_fail(state, out->line,
		                           "a private namespace served by several authorities needs "
		                           "capability_file (the secret its requests to the others carry)")
		           : 0;
	if ((rc = read_secret_file(state, out, buf, sizeof buf, &len)))
		goto cleanup;
	if (len > 0 && buf[len - 1] == '\n')
		len--;
	if (!config_capability_is_valid(buf, len)) {
		rc = settings_fail(state, out->file_line,
		                   "capability_file %.200s must hold one secret of %d to %d bytes of "
		                   "[A-Za-z0-9-._~+/=] (e.g. head -c 32 /dev/urandom | base64)",
		                   out->file, CONFIG_CAPABILITY_MIN, CONFIG_CAPABILITY_MAX);
		goto cleanup;
	}
	if (crypto_sha256((const uint8_t *)buf, len, digest) != 0) {
		rc = settings_fail(state, out->file_line, "capability_file %.200s cannot be hashed",
		                   out->file);
		goto cleanup;
	}
	if (!crypto_equal(digest, out->sha256, sizeof digest)) {
		rc = settings_fail(state, out->file_line,
		                   "the SHA-256 of capability_file %.200s is not the namespace's "
		                   "capability_sha256",
		                   out->file);
		goto cleanup;
	}
	memcpy(out->secret, buf, len);
	out->secret[len] = 0;
	out->secret_len = len;
cleanup:
	crypto_wipe(buf, sizeof buf);
	crypto_wipe(digest, sizeof digest);
	return rc;
}

void config_capability_wipe(struct config_capability *capability)
{
	if (!capability)
		return;
	crypto_wipe(capability->secret, sizeof capability->secret);
	capability->secret_len = 0;
}
