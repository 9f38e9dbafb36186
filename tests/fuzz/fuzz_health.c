/*
 * fuzz_health.c: health_parse() and health_parse_note() on arbitrary bytes, and the check of an
 * accepted note against a fixed registration that names an endpoint key.
 *
 * Whatever is accepted must be canonical (its re-encoding is the input text, byte for byte) and
 * can never state a class outside the four; the check against the registration must end in one of
 * its documented answers. Anything else aborts, so the fuzzer reports it.
 */
#include "base/error.h"
#include "schema/health.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* tests/vectors/documents/health/registration.note, without its signature: only its keys are
 * used. */
static const char registration_text[] =
    "dirauth registration v1\n"
    "namespace example-net\n"
    "service ccc2876b7de7171c34d35b4bac727349681ce93570cbc10a3cb4288ab51e1174\n"
    "class mix-gateway\n"
    "provider provider.example+7f30315d+ASmsuuFBvMrwsi4alNNNC8c2HlJtC/4SyJeUvJMilm3X\n"
    "sequence 1\n"
    "issued-at 1767225600\n"
    "expires 1769817600\n"
    "endpoint 7a0b5a1043587339f2260fbecb03d04d3aaab3cc9333d8664515ec52de148cbb quic gw1.example.net:443 "
    "eu-west high modern\n"
    "endpoint 86b7b7cebc03ae3c7dbf0050eab1581d89e230038131a0daaf8852c3eff03f75 tls [2001:db8::1]:8443 "
    "eu-west medium baseline\n"
    "endpoint bb4eedfe38354be5e13aca8187d9724ac0720aae57cab48f6905f6e3397690bc onion route_Example-1 "
    "us-east low hybrid-crypto\n"
    "endpoint-key 7a0b5a1043587339f2260fbecb03d04d3aaab3cc9333d8664515ec52de148cbb "
    "endpoint.example+c53d41c9+Ad3jvM7H86ZqERX0XXIPTcE1w658TiLco4/bHv1qSV/4\n";

static void check_canonical(const struct health_statement *s, const uint8_t *text, size_t len)
{
	struct buffer out;
	buffer_init(&out);
	if (health_encode(s, &out) != 0 || out.len != len || memcmp(out.data, text, len) != 0)
		abort();
	if (!health_class_name(s->health_class) || !health_signer_name(s->signer))
		abort();
	buffer_free(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct health_statement s;
	if (health_parse(data, size, &s) == 0)
		check_canonical(&s, data, size);
	struct note *note = NULL;
	if (health_parse_note(data, size, &s, &note) != 0) {
		if (note)
			abort();
		return 0;
	}
	check_canonical(&s, note->text, note->text_len);
	struct registration r;
	if (registration_parse((const uint8_t *)registration_text, sizeof(registration_text) - 1, &r) != 0)
		abort();
	int rc = health_verify_note(note, &s, &r);
	if (rc != 0 && rc != DIRAUTH_ERR_MISMATCH && rc != DIRAUTH_ERR_NOT_FOUND &&
	    rc != DIRAUTH_ERR_UNKNOWN_KEY && rc != DIRAUTH_ERR_SIGNATURE && rc != DIRAUTH_ERR_CRYPTO)
		abort();
	registration_clear(&r);
	note_free(note);
	return 0;
}
