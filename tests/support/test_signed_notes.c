/*
 * test_signed_notes.c: certificates and checkpoints signed by the tests and the benchmarks
 * (test_signed_notes.h).
 */
#include "test_signed_notes.h"

#include "schema/certificate.h"
#include "schema/checkpoint.h"
#include "base/error.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int test_certificate_note(const struct signer_key *identity, const char *authority,
                          const struct note_verifier *signing, uint64_t valid_after, uint64_t valid_until,
                          struct buffer *out)
{
	struct certificate certificate;
	struct note_signature signature;
	struct buffer text;
	size_t start = out->len;

	memset(&certificate, 0, sizeof(certificate));
	snprintf(certificate.authority, sizeof(certificate.authority), "%s", authority);
	certificate.identity = *signer_key_verifier(identity);
	certificate.signing_key = *signing;
	certificate.valid_after = valid_after;
	certificate.valid_until = valid_until;
	buffer_init(&text);
	int rc = certificate_encode(&certificate, &text);
	if (rc == 0)
		rc = signer_key_sign(identity, text.data, text.len, &signature);
	if (rc == 0)
		rc = note_format(text.data, text.len, &signature, 1, out);
	if (rc)
		buffer_truncate(out, start);
	buffer_free(&text);
	return rc;
}

int test_certificate_write(const struct signer_key *identity, const char *authority,
                           const struct note_verifier *signing, uint64_t valid_after, uint64_t valid_until,
                           const char *path)
{
	struct buffer note;
	buffer_init(&note);
	int rc = test_certificate_note(identity, authority, signing, valid_after, valid_until, &note);
	if (rc == 0) {
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0 || fchmod(fd, 0644) != 0 || write(fd, note.data, note.len) != (ssize_t)note.len)
			rc = DIRAUTH_ERR_IO;
		if (fd >= 0 && close(fd) != 0)
			rc = DIRAUTH_ERR_IO;
	}
	buffer_free(&note);
	return rc;
}

int test_cosigned_checkpoint(const struct signer_key *log_signer, const struct signer_key *cosigner,
                             const struct note_verifier *cosigner_verifier, const char *origin, uint64_t size,
                             const merkle_hash root, uint64_t timestamp, struct buffer *out)
{
	struct checkpoint checkpoint;
	struct buffer text, message;
	struct note_signature signatures[2];
	uint8_t raw[64];
	size_t start = out->len;

	memset(&checkpoint, 0, sizeof checkpoint);
	snprintf(checkpoint.origin, sizeof checkpoint.origin, "%s", origin);
	checkpoint.tree_size = size;
	memcpy(checkpoint.root, root, MERKLE_HASH_SIZE);
	buffer_init(&text);
	buffer_init(&message);
	int rc = checkpoint_encode(&checkpoint, &text);
	if (rc == 0)
		rc = signer_key_sign(log_signer, text.data, text.len, &signatures[0]);
	if (rc == 0)
		rc = cosignature_message(timestamp, text.data, text.len, &message);
	if (rc == 0)
		rc = signer_key_sign_raw(cosigner, message.data, message.len, raw);
	if (rc == 0) {
		cosignature_signature(cosigner_verifier, timestamp, raw, &signatures[1]);
		rc = note_format(text.data, text.len, signatures, 2, out);
	}
	if (rc)
		buffer_truncate(out, start);
	buffer_free(&text);
	buffer_free(&message);
	return rc;
}

int test_note_text(const struct buffer *note_bytes, struct buffer *text)
{
	struct note *note = NULL;
	buffer_reset(text);
	int rc = note_parse(note_bytes->data, note_bytes->len, &note);
	if (rc == 0)
		rc = buffer_append(text, note->text, note->text_len);
	note_free(note);
	return rc;
}
