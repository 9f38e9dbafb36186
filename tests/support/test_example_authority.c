/*
 * test_example_authority.c: the example authority's key files and certificate for integration
 * tests (test_example_authority.h).
 */
#include "test_example_authority.h"

#include "schema/buffer.h"
#include "schema/certificate.h"
#include "schema/error.h"
#include "schema/note.h"
#include "test_support.h"

#include <check.h>
#include <stdio.h>
#include <string.h>

struct signer_key *test_run_key(const char *dir, const char *file)
{
	char path[1024];
	snprintf(path, sizeof(path), "%s/keys/%s", dir, file);
	struct signer_key *key = NULL;
	int rc = signer_key_load(path, &key);
	ck_assert_msg(rc == 0, "load %s: %s", path, dirauth_strerror(rc));
	return key;
}

void test_write_authority_certificate(const char *dir, uint64_t valid_after, uint64_t valid_until)
{
	struct signer_key *signing = test_run_key(dir, "authority1.key");
	struct signer_key *identity = test_run_key(dir, "authority1-identity.key");
	struct certificate certificate;
	memset(&certificate, 0, sizeof(certificate));
	strcpy(certificate.authority, "authority1.dirauth.example");
	certificate.identity = *signer_key_verifier(identity);
	certificate.signing_key = *signer_key_verifier(signing);
	certificate.valid_after = valid_after;
	certificate.valid_until = valid_until;
	struct buffer text, note;
	struct note_signature signature;
	buffer_init(&text);
	buffer_init(&note);
	ck_assert(certificate_encode(&certificate, &text) == 0);
	ck_assert(signer_key_sign(identity, text.data, text.len, &signature) == 0);
	ck_assert(note_format(text.data, text.len, &signature, 1, &note) == 0);
	char path[1024];
	snprintf(path, sizeof(path), "%s/keys/authority1.cert", dir);
	test_write_file(path, note.data, note.len, 0644);
	buffer_free(&text);
	buffer_free(&note);
	signer_key_free(signing);
	signer_key_free(identity);
}
