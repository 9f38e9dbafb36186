/*
 * test_example_authority.h: the example authority's key files in a test's run directory, as
 * scripts/example-keys.sh writes them into <dir>/keys/, and the certificate by which its identity
 * key vouches for its signing key. The integration tests that start one real dirauthd and
 * dirauth-signer share these; everything aborts the test (ck_abort) on failure.
 */
#ifndef DIRAUTH_TEST_EXAMPLE_AUTHORITY_H
#define DIRAUTH_TEST_EXAMPLE_AUTHORITY_H

#include "signer/key.h"

#include <stdint.h>

/* The key file <dir>/keys/<file>, loaded. The caller frees it (signer_key_free). */
struct signer_key *test_run_key(const char *dir, const char *file);

/* Writes <dir>/keys/authority1.cert: authority1-identity.key certifies authority1.key for
 * "authority1.dirauth.example" from valid_after to valid_until. */
void test_write_authority_certificate(const char *dir, uint64_t valid_after, uint64_t valid_until);

#endif
