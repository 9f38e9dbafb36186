/*
 * service_keys.c: what the signing service opens with: its key files and certificates, and the
 * file permissions it insists on.
 *
 * A key file another user could read is a key that user holds; a key directory another user
 * could write is one where they could swap the key; a ledger directory they could write is a
 * memory they could roll back. So every file the signer trusts must be its own user's, with no
 * access for group and other, and a key's directory as well. The first certificate must
 * certify the signing key under the authority's identity and be valid at open: a signer that
 * starts is one whose signatures verifiers will accept. All certificates are served to dirauthd
 * as one bundle, read once here.
 */
#include "signer/service_internal.h"

#include "base/error.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Refuses path unless it is owned by the signer's own user and gives group and other nothing:
 * otherwise another user (dirauthd's, say) could replace what the signer trusts. what names it. */
int signer_service_check_private(const char *path, const char *what, bool directory, char *detail, size_t cap)
{
	struct stat st;
	if (lstat(path, &st) != 0) {
		signer_service_detail(detail, cap, "%s %s: %s", what, path, strerror(errno));
		return errno == ENOENT ? DIRAUTH_ERR_NOT_FOUND : DIRAUTH_ERR_IO;
	}
	if (directory ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode)) {
		signer_service_detail(detail, cap, "%s %s is not a %s", what, path,
		                      directory ? "directory" : "regular file");
		return DIRAUTH_ERR_PERMISSION;
	}
	if (st.st_uid != geteuid()) {
		signer_service_detail(detail, cap, "%s %s is owned by uid %u, not by the signer's uid %u",
		                      what, path, (unsigned)st.st_uid, (unsigned)geteuid());
		return DIRAUTH_ERR_PERMISSION;
	}
	if ((st.st_mode & 077) != 0) {
		signer_service_detail(
		    detail, cap, "%s %s has mode %04o: group and other must have no access (chmod %s)", what,
		    path, (unsigned)(st.st_mode & 07777), directory ? "0700" : "0600");
		return DIRAUTH_ERR_PERMISSION;
	}
	return 0;
}

/* Refuses a key whose directory grants group or other any permission: they could replace the
 * key file or, with read and execute, watch it. */
static int service_check_key_directory(const char *path, char *detail, size_t cap)
{
	char directory[PATH_MAX];
	const char *slash = strrchr(path, '/');
	struct stat st;
	size_t len;

	if (!slash) {
		directory[0] = '.';
		directory[1] = '\0';
	} else {
		len = slash == path ? 1 : (size_t)(slash - path);
		if (len >= sizeof(directory)) {
			signer_service_detail(detail, cap, "key path %s is too long", path);
			return DIRAUTH_ERR_CONFIG;
		}
		memcpy(directory, path, len);
		directory[len] = '\0';
	}
	if (stat(directory, &st) != 0) {
		signer_service_detail(detail, cap, "key directory %s: %s", directory, strerror(errno));
		return errno == ENOENT ? DIRAUTH_ERR_NOT_FOUND : DIRAUTH_ERR_IO;
	}
	if (!S_ISDIR(st.st_mode)) {
		signer_service_detail(detail, cap, "key directory %s is not a directory", directory);
		return DIRAUTH_ERR_PERMISSION;
	}
	if ((st.st_mode & 077) != 0) {
		signer_service_detail(
		    detail, cap,
		    "key directory %s has mode %04o: group and other must have no access (chmod 0700)",
		    directory, (unsigned)(st.st_mode & 07777));
		return DIRAUTH_ERR_PERMISSION;
	}
	if (st.st_uid != geteuid()) {
		signer_service_detail(detail, cap,
		                      "key directory %s is owned by uid %u, not by the signer's uid %u",
		                      directory, (unsigned)st.st_uid, (unsigned)geteuid());
		return DIRAUTH_ERR_PERMISSION;
	}
	return 0;
}

/* Loads the key file at path (what names it in messages) after checking its directory. */
int signer_service_load_key(const char *path, const char *what, struct signer_key **out, char *detail,
                            size_t cap)
{
	int rc = service_check_key_directory(path, detail, cap);
	if (rc)
		return rc;
	rc = signer_key_load(path, out);
	switch (rc) {
	case 0:
		rc = signer_service_check_private(path, what, false, detail, cap);
		if (rc) {
			signer_key_free(*out);
			*out = NULL;
		}
		break;
	case DIRAUTH_ERR_PERMISSION:
		signer_service_detail(
		    detail, cap,
		    "%s %s is not a regular 0600 file (group or other have access, or it is a "
		    "symlink): refused",
		    what, path);
		break;
	case DIRAUTH_ERR_NOT_FOUND:
		signer_service_detail(detail, cap, "%s %s does not exist", what, path);
		break;
	case DIRAUTH_ERR_SYNTAX:
		signer_service_detail(detail, cap, "%s %s is not a valid key file", what, path);
		break;
	default:
		signer_service_detail(detail, cap, "%s %s could not be loaded: %s", what, path,
		                      dirauth_strerror(rc));
		break;
	}
	return rc;
}

/* Reads a certificate file of at most CERTIFICATE_MAX_BYTES into a new buffer. */
static int service_read_certificate(const char *path, uint8_t **out, size_t *out_len, char *detail,
                                    size_t cap)
{
	int rc = DIRAUTH_ERR_CONFIG;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	uint8_t *data = NULL;
	size_t used = 0;
	struct stat st;

	*out = NULL;
	if (fd < 0) {
		signer_service_detail(detail, cap, "certificate %s: %s", path, strerror(errno));
		return DIRAUTH_ERR_CONFIG;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		signer_service_detail(detail, cap, "certificate %s is not a regular file", path);
		goto cleanup;
	}
	data = malloc(CERTIFICATE_MAX_BYTES + 1);
	if (!data) {
		rc = DIRAUTH_ERR_NOMEM;
		goto cleanup;
	}
	for (;;) {
		ssize_t got = read(fd, data + used, CERTIFICATE_MAX_BYTES + 1 - used);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			signer_service_detail(detail, cap, "certificate %s: %s", path, strerror(errno));
			goto cleanup;
		}
		if (got == 0)
			break;
		used += (size_t)got;
		if (used > CERTIFICATE_MAX_BYTES) {
			signer_service_detail(detail, cap, "certificate %s is longer than %d bytes", path,
			                      CERTIFICATE_MAX_BYTES);
			goto cleanup;
		}
	}
	*out = data;
	*out_len = used;
	data = NULL;
	rc = 0;
cleanup:
	free(data);
	close(fd);
	return rc;
}

static bool service_same_verifier(const struct note_verifier *a, const struct note_verifier *b)
{
	return strcmp(a->name, b->name) == 0 && a->key_id == b->key_id && a->type == b->type &&
	       memcmp(a->public_key, b->public_key, sizeof(a->public_key)) == 0;
}

/* Loads every certificate, checks the first certifies the signing key and is valid now, and
 * builds the bundle served by GET_CERTIFICATES. */
int signer_service_load_certificates(struct signer_service *service,
                                     const struct signer_service_options *options, uint64_t now, char *detail,
                                     size_t cap)
{
	uint8_t *notes[CERTIFICATE_BUNDLE_MAX] = {NULL};
	size_t lengths[CERTIFICATE_BUNDLE_MAX] = {0};
	size_t count = options->certificate_count;
	int rc = 0;

	if (count == 0 || count > CERTIFICATE_BUNDLE_MAX || !options->certificate_paths) {
		signer_service_detail(detail, cap, "between 1 and %d certificates must be configured",
		                      CERTIFICATE_BUNDLE_MAX);
		return DIRAUTH_ERR_CONFIG;
	}
	for (size_t i = 0; i < count && rc == 0; i++) {
		const char *path = options->certificate_paths[i];
		struct certificate certificate;
		if (!path) {
			signer_service_detail(detail, cap, "certificate %zu has no path", i + 1);
			rc = DIRAUTH_ERR_CONFIG;
			break;
		}
		rc = service_read_certificate(path, &notes[i], &lengths[i], detail, cap);
		if (rc)
			break;
		rc = certificate_parse_signed(notes[i], lengths[i], &certificate);
		if (rc) {
			signer_service_detail(
			    detail, cap,
			    "certificate %s is not a key certificate signed by its identity key: %s", path,
			    dirauth_strerror(rc));
			rc = DIRAUTH_ERR_CONFIG;
			break;
		}
		if (strcmp(certificate.authority, service->authority) != 0) {
			signer_service_detail(detail, cap, "certificate %s is for authority %s, not %s", path,
			                      certificate.authority, service->authority);
			rc = DIRAUTH_ERR_MISMATCH;
			break;
		}
		if (i > 0)
			continue;
		if (!service_same_verifier(&certificate.signing_key,
		                           signer_key_verifier(service->signing_key))) {
			char key_text[NOTE_VERIFIER_KEY_MAX + 1];
			note_verifier_format(&certificate.signing_key, key_text);
			signer_service_detail(detail, cap,
			                      "certificate %s certifies the key %s, not the signing key %s",
			                      path, key_text, options->signing_key_path);
			rc = DIRAUTH_ERR_MISMATCH;
			break;
		}
		if (now < certificate.valid_after) {
			signer_service_detail(
			    detail, cap, "certificate %s is not valid until %llu (now %llu)", path,
			    (unsigned long long)certificate.valid_after, (unsigned long long)now);
			rc = DIRAUTH_ERR_STALE;
			break;
		}
		if (now >= certificate.valid_until) {
			signer_service_detail(detail, cap, "certificate %s expired at %llu (now %llu)", path,
			                      (unsigned long long)certificate.valid_until,
			                      (unsigned long long)now);
			rc = DIRAUTH_ERR_STALE;
			break;
		}
		service->certificate = certificate;
	}
	if (rc == 0) {
		rc = certificate_bundle_encode((const uint8_t *const *)notes, lengths, count,
		                               &service->certificate_bundle);
		if (rc)
			signer_service_detail(detail, cap,
			                      "the certificates cannot be served as one bundle: %s",
			                      dirauth_strerror(rc));
	}
	for (size_t i = 0; i < count; i++)
		free(notes[i]);
	return rc;
}
