/*
 * keyring.c: keyrings from pinned identities and certificates, notes verified against them, and
 * the words for a refusal (see keyring.h).
 *
 * The verdict is certificate_keyring_verify's (schema/certificate.c). Two times are judged as
 * one: the ring is reduced to the certificates whose window contains both, and the reduced ring
 * gives the verdict, so that two keys of one identity still count once and a key covering only one
 * of the times counts for neither. What this file adds is the words. A refusal "not certified at
 * T" is only actionable when it says which key signed and which window its certificate covers (an
 * expired certificate, a signer that still serves the old key, a pin of a signing key where the
 * identity belongs), so the explanation walks the note's signatures against the ring once more.
 */
#include "verify/keyring.h"

#include "base/error.h"
#include "verify/detail.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The explanation inside a refusal is kept to half a detail, so the sentence around it fits. */
#define EXPLANATION_MAX (VERIFY_DETAIL_MAX / 2)

int verify_keyring_new(const struct note_verifier *identities, size_t identity_count,
                       struct certificate_keyring **out, char *detail, size_t detail_cap)
{
	struct certificate_keyring *ring;
	int rc;

	*out = NULL;
	verify_detail_clear(detail, detail_cap);
	ring = malloc(sizeof(*ring));
	if (ring == NULL) {
		verify_detail_set(detail, detail_cap, "out of memory");
		return DIRAUTH_ERR_NOMEM;
	}
	rc = certificate_keyring_init(ring, identities, identity_count);
	if (rc != 0) {
		verify_detail_set(detail, detail_cap, "the identities cannot be pinned: %s",
		                  dirauth_strerror(rc));
		free(ring);
		return DIRAUTH_ERR_CONFIG;
	}
	*out = ring;
	return 0;
}

int verify_keyring_add_certificates(struct certificate_keyring *ring, const uint8_t *certificates, size_t len,
                                    size_t *added, char *detail, size_t detail_cap)
{
	size_t kept = 0;
	int rc;

	verify_detail_clear(detail, detail_cap);
	if (added != NULL)
		*added = 0;
	rc = certificate_keyring_add_bundle(ring, certificates, len, &kept);
	if (rc == DIRAUTH_ERR_NOMEM || rc == DIRAUTH_ERR_CRYPTO) {
		verify_detail_set(detail, detail_cap, "certificates: %s", dirauth_strerror(rc));
		return rc;
	}
	if (rc != 0) {
		verify_detail_set(detail, detail_cap, "certificates: not a certificate bundle: %s",
		                  dirauth_strerror(rc));
		return rc;
	}
	if (added != NULL)
		*added = kept;
	return 0;
}

int verify_keyring_build(const struct note_verifier *identities, size_t identity_count,
                         const uint8_t *certificates, size_t len, struct certificate_keyring **out,
                         size_t *added, char *detail, size_t detail_cap)
{
	struct certificate_keyring *ring = NULL;
	int rc;

	*out = NULL;
	if (added != NULL)
		*added = 0;
	rc = verify_keyring_new(identities, identity_count, &ring, detail, detail_cap);
	if (rc == 0)
		rc = verify_keyring_add_certificates(ring, certificates, len, added, detail, detail_cap);
	if (rc != 0) {
		verify_keyring_free(ring);
		return rc;
	}
	*out = ring;
	return 0;
}

void verify_keyring_free(struct certificate_keyring *ring)
{
	free(ring);
}

int verify_keyring_for_identity(const struct certificate_keyring *ring, const char *name,
                                struct certificate_keyring **out)
{
	struct certificate_keyring *narrow;

	*out = NULL;
	narrow = calloc(1, sizeof(*narrow));
	if (narrow == NULL)
		return DIRAUTH_ERR_NOMEM;
	for (size_t i = 0; i < ring->identity_count; i++) {
		if (strcmp(ring->identities[i].name, name) == 0)
			narrow->identities[narrow->identity_count++] = ring->identities[i];
	}
	if (narrow->identity_count == 0) {
		free(narrow);
		return DIRAUTH_ERR_NOT_FOUND;
	}
	/* Only certificates of the kept identities: the ring accepted each because a pinned identity
	 * signed it, so a certificate naming this authority is one of theirs. */
	for (size_t i = 0; i < ring->certificate_count; i++) {
		if (strcmp(ring->certificates[i].authority, name) == 0)
			narrow->certificates[narrow->certificate_count++] = ring->certificates[i];
	}
	*out = narrow;
	return 0;
}

/* Appends a formatted phrase to out, "; "-separated, truncating. */
static void append_phrase(char *out, size_t cap, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

static void append_phrase(char *out, size_t cap, const char *format, ...)
{
	size_t used = strnlen(out, cap);
	va_list args;
	int n;

	if (used + 1 >= cap)
		return;
	if (used > 0) {
		n = snprintf(out + used, cap - used, "; ");
		if (n < 0 || (size_t)n >= cap - used)
			return;
		used += (size_t)n;
	}
	va_start(args, format);
	vsnprintf(out + used, cap - used, format, args);
	va_end(args);
}

/* Whether a certificate's window [valid-after, valid-until) contains every time from first to last. */
static int window_covers(const struct certificate *certificate, uint64_t first, uint64_t last)
{
	return certificate->valid_after <= first && last < certificate->valid_until;
}

static const char *pin_source(const char *pinned_by)
{
	return pinned_by != NULL ? pinned_by : "the keyring";
}

void verify_note_explain(const struct certificate_keyring *ring, const struct note *note, uint64_t at,
                         uint64_t also_at, const char *pinned_by, char *out, size_t out_cap)
{
	uint64_t first = at < also_at ? at : also_at;
	uint64_t last = at < also_at ? also_at : at;

	if (out == NULL || out_cap == 0)
		return;
	out[0] = '\0';
	for (size_t s = 0; s < note->signature_count; s++) {
		const struct note_signature *signature = &note->signatures[s];
		const struct certificate *outside = NULL;
		int covered = 0;
		int is_identity = 0;
		int name_pinned = 0;

		for (size_t c = 0; c < ring->certificate_count; c++) {
			const struct certificate *certificate = &ring->certificates[c];
			if (certificate->signing_key.key_id != signature->key_id ||
			    strcmp(certificate->signing_key.name, signature->name) != 0)
				continue;
			if (window_covers(certificate, first, last))
				covered = 1;
			else if (outside == NULL)
				outside = certificate;
		}
		if (covered)
			continue;
		for (size_t i = 0; i < ring->identity_count; i++) {
			if (strcmp(ring->identities[i].name, signature->name) != 0)
				continue;
			name_pinned = 1;
			if (ring->identities[i].key_id == signature->key_id)
				is_identity = 1;
		}
		if (outside != NULL) {
			char after[VERIFY_TIME_TEXT_MAX];
			char until[VERIFY_TIME_TEXT_MAX];
			verify_format_time(outside->valid_after, after);
			verify_format_time(outside->valid_until, until);
			append_phrase(out, out_cap, "%s key %08" PRIx32 " is certified only from %s until %s",
			              signature->name, signature->key_id, after, until);
		} else if (is_identity) {
			append_phrase(
			    out, out_cap,
			    "%s key %08" PRIx32
			    " is a pinned identity key, which signs only certificates, not statements",
			    signature->name, signature->key_id);
		} else if (name_pinned) {
			append_phrase(out, out_cap,
			              "%s key %08" PRIx32
			              " has no certificate from the pinned identity of %s",
			              signature->name, signature->key_id, signature->name);
		} else {
			append_phrase(out, out_cap, "%s key %08" PRIx32 " is not an authority of %s",
			              signature->name, signature->key_id, pin_source(pinned_by));
		}
	}
	if (out[0] == '\0')
		snprintf(out, out_cap,
		         "no other authority's certified key signed; the keys of one authority count once");
}

int verify_note(const struct verify_pins *pins, const struct note *note, uint64_t at, uint64_t also_at,
                struct verify_signers *signers, char *detail, size_t detail_cap)
{
	const struct certificate_keyring *ring = pins->ring;
	struct certificate_keyring *covering;
	struct verify_signers own;
	char explanation[EXPLANATION_MAX];
	char when[2 * VERIFY_TIME_TEXT_MAX + 8];
	char also_when[VERIFY_TIME_TEXT_MAX];
	uint64_t first = at < also_at ? at : also_at;
	uint64_t last = at < also_at ? also_at : at;
	size_t kept = 0;
	int rc;

	verify_detail_clear(detail, detail_cap);
	if (signers == NULL)
		signers = &own;
	memset(signers, 0, sizeof(*signers));
	signers->pinned = ring->identity_count;
	/* The same pins, and only the certificates valid over the whole span: then the one verdict of
	 * certificate_keyring_verify (at either time) is the verdict for both. */
	covering = malloc(sizeof(*covering));
	if (covering == NULL) {
		verify_detail_set(detail, detail_cap, "out of memory");
		return DIRAUTH_ERR_NOMEM;
	}
	*covering = *ring;
	for (size_t c = 0; c < ring->certificate_count; c++) {
		if (window_covers(&ring->certificates[c], first, last))
			covering->certificates[kept++] = ring->certificates[c];
	}
	covering->certificate_count = kept;
	rc = certificate_keyring_verify(covering, note, at, pins->threshold, &signers->count, signers->names,
	                                sizeof(signers->names));
	free(covering);
	if (rc == 0)
		return 0;
	verify_format_time(at, when);
	if (also_at != at) {
		size_t used = strlen(when);
		verify_format_time(also_at, also_when);
		snprintf(when + used, sizeof(when) - used, " and at %s", also_when);
	}
	if (rc == DIRAUTH_ERR_UNKNOWN_KEY) {
		verify_note_explain(ring, note, at, also_at, pins->pinned_by, explanation,
		                    sizeof(explanation));
		verify_detail_set(detail, detail_cap,
		                  "signed by a key not certified by any pinned identity at %s (%s)", when,
		                  explanation);
	} else if (rc == DIRAUTH_ERR_THRESHOLD) {
		verify_note_explain(ring, note, at, also_at, pins->pinned_by, explanation,
		                    sizeof(explanation));
		verify_detail_set(detail, detail_cap,
		                  "too few signatures: %zu of %zu authorities signed with a key certified at "
		                  "%s, %s requires %zu (counted: %s; not counted: %s)",
		                  signers->count, ring->identity_count, when, pin_source(pins->pinned_by),
		                  pins->threshold, signers->names, explanation);
	} else if (rc == DIRAUTH_ERR_SIGNATURE) {
		verify_detail_set(detail, detail_cap,
		                  "bad signature: a signature by a certified signing key does not verify");
	} else {
		verify_detail_set(detail, detail_cap, "cannot verify signatures: %s", dirauth_strerror(rc));
	}
	return rc;
}
