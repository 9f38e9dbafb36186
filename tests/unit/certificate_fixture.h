/*
 * certificate_fixture.h: key certificates and certificate bundles made in a test, for the tests
 * of everything that verifies with certificates (check_fetch, check_register, check_certify).
 *
 * The certificates are built from the schema codec directly (certificate_encode, signed with
 * signer_key_sign), not with dirauthctl's own certify code, so that the verifying side is tested
 * against certificates it did not make. Like canned_http.h, the helpers are static functions in a
 * header because the build links only test_support.c into the unit tests.
 */
#ifndef DIRAUTH_TEST_CERTIFICATE_FIXTURE_H
#define DIRAUTH_TEST_CERTIFICATE_FIXTURE_H

#include "schema/buffer.h"
#include "schema/certificate.h"
#include "signer/key.h"
#include "schema/note.h"

#include <check.h>
#include <stdio.h>
#include <string.h>

/* Appends to out the certificate note by which identity certifies signing for [after, until). */
__attribute__((unused)) static void fixture_certificate(const struct signer_key *identity,
                                                        const struct signer_key *signing, uint64_t after,
                                                        uint64_t until, struct buffer *out)
{
	struct certificate certificate;
	struct note_signature signature;
	struct buffer text;

	memset(&certificate, 0, sizeof(certificate));
	buffer_init(&text);
	snprintf(certificate.authority, sizeof(certificate.authority), "%s",
	         signer_key_verifier(identity)->name);
	certificate.identity = *signer_key_verifier(identity);
	certificate.signing_key = *signer_key_verifier(signing);
	certificate.valid_after = after;
	certificate.valid_until = until;
	ck_assert_int_eq(certificate_encode(&certificate, &text), 0);
	ck_assert_int_eq(signer_key_sign(identity, text.data, text.len, &signature), 0);
	ck_assert_int_eq(note_format(text.data, text.len, &signature, 1, out), 0);
	buffer_free(&text);
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
