/*
 * test_example_authority.c: the example authority's key files and certificate for integration
 * tests (test_example_authority.h).
 */
#include "test_example_authority.h"

#include "base/error.h"
#include "test_signed_notes.h"

#include <check.h>
#include <stdio.h>

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
	char path[1024];
	snprintf(path, sizeof(path), "%s/keys/authority1.cert", dir);
	ck_assert(test_certificate_write(identity, "authority1.dirauth.example", signer_key_verifier(signing),
	                                 valid_after, valid_until, path) == 0);
	signer_key_free(signing);
	signer_key_free(identity);
}
