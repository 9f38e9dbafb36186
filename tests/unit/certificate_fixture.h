/*
 * certificate_fixture.h: key certificates and certificate bundles made in a test, for the tests
 * of everything that verifies with certificates (check_fetch, check_register, check_certify).
 *
 * The certificates are made by tests/support/test_signed_notes.h, under the identity key's name.
 * Like canned_http.h, the helpers are static functions in a header that the tests include.
 */
#ifndef DIRAUTH_TEST_CERTIFICATE_FIXTURE_H
#define DIRAUTH_TEST_CERTIFICATE_FIXTURE_H

#include "base/buffer.h"
#include "schema/certificate.h"
#include "signer/key.h"
#include "test_signed_notes.h"

#include <check.h>

/* Appends to out the certificate note by which identity certifies signing for [after, until). */
__attribute__((unused)) static void fixture_certificate(const struct signer_key *identity,
                                                        const struct signer_key *signing, uint64_t after,
                                                        uint64_t until, struct buffer *out)
{
	ck_assert_int_eq(test_certificate_note(identity, signer_key_verifier(identity)->name,
	                                       signer_key_verifier(signing), after, until, out),
	                 0);
}

/* Appends to out a certificate bundle framing count certificate notes. */
__attribute__((unused)) static void fixture_certificate_bundle(const struct buffer *notes, size_t count,
                                                               struct buffer *out)
{
	const uint8_t *pointers[CERTIFICATE_BUNDLE_MAX];
	size_t lengths[CERTIFICATE_BUNDLE_MAX];

	ck_assert_uint_le(count, CERTIFICATE_BUNDLE_MAX);
	for (size_t i = 0; i < count; i++) {
		pointers[i] = notes[i].data;
		lengths[i] = notes[i].len;
	}
	ck_assert_int_eq(certificate_bundle_encode(pointers, lengths, count, out), 0);
}

#endif
