/*
 * certificate.c: key certificates, certificate bundles, and the keyring that counts a
 * statement's signatures per pinned identity.
 *
 * An authority keeps its identity key offline and signs with an online signing key; the
 * certificate is the identity key's word that the signing key speaks for it during a window.
 * Verifiers pin identity keys only, so everything a verifier trusts about a signing key comes
 * from here. The codec is therefore as strict as every other document codec: the fields are read
 * in their one order, the encoder states every rule, and the parser refuses any input that does
 * not re-encode to the same bytes.
 *
 * The keyring keeps only certificates signed by a pinned identity, and counts a statement's
 * signatures per identity, not per key: during a rotation overlap two signing keys of one
 * authority may both sign, and that must not look like two authorities agreeing. A signing key
 * counts only when the statement's own time lies in its certificate's window, so an old or
 * stolen key cannot vouch for statements outside the time it was certified for.
 */
#include "schema/certificate.h"

#include "crypto/crypto.h"
#include "base/error.h"
#include "schema/names.h"
#include "schema/lines.h"

#include <stdbool.h>
#include <string.h>

#define CERTIFICATE_KIND     "dirauth key-certificate v1"
#define BUNDLE_KIND          "dirauth certificates v1"
/* The longest certificate line is "signing-key " and a verifier key of NOTE_VERIFIER_KEY_MAX
 * bytes (268 bytes). */
#define CERTIFICATE_LINE_MAX 320
/* The longest bundle line is "certificate " and a 20-digit length. */
#define BUNDLE_LINE_MAX      64
/* More identities than a keyring holds. */
#define KEYRING_IDENTITY_MAX                                                                                 \
	(sizeof(((struct certificate_keyring *)0)->identities) / sizeof(struct note_verifier))

/* A verifier that reads back as itself: an Ed25519 key whose key id belongs to its name and key,
 * which is what a verifier would compute later. */
static int verifier_is_canonical(const struct note_verifier *verifier)
{
	char text[NOTE_VERIFIER_KEY_MAX + 1];
	struct note_verifier reparsed;
	if (verifier->type != NOTE_KEY_TYPE_ED25519)
		return 0;
	size_t name_len = strnlen(verifier->name, sizeof(verifier->name));
	if (name_len == sizeof(verifier->name) || !note_name_is_valid(verifier->name, name_len))
		return 0;
	note_verifier_format(verifier, text);
	if (note_verifier_parse(text, strlen(text), &reparsed) != 0)
		return 0;
	return note_verifier_equal(verifier, &reparsed);
}

/* Every rule of the grammar that is not about spelling. */
static int certificate_check(const struct certificate *c)
{
	if (!names_key_name_field_is_ascii(c->authority, sizeof(c->authority)))
		return DIRAUTH_ERR_SYNTAX;
	if (!verifier_is_canonical(&c->identity) || !verifier_is_canonical(&c->signing_key))
		return DIRAUTH_ERR_SYNTAX;
	if (strcmp(c->identity.name, c->authority) != 0 || strcmp(c->signing_key.name, c->authority) != 0)
		return DIRAUTH_ERR_SYNTAX;
	/* One key in both roles would make the offline key an online one. */
	if (memcmp(c->identity.public_key, c->signing_key.public_key, sizeof(c->identity.public_key)) == 0)
		return DIRAUTH_ERR_SYNTAX;
	if (c->valid_after >= c->valid_until || c->valid_until - c->valid_after > CERTIFICATE_MAX_WINDOW)
		return DIRAUTH_ERR_SYNTAX;
	return 0;
}

int certificate_encode(const struct certificate *c, struct buffer *out)
{
	int rc = certificate_check(c);
	if (rc)
		return rc;
	char identity[NOTE_VERIFIER_KEY_MAX + 1], signing[NOTE_VERIFIER_KEY_MAX + 1];
	note_verifier_format(&c->identity, identity);
	note_verifier_format(&c->signing_key, signing);
	size_t start = out->len;
	rc = buffer_appendf(out,
	                    CERTIFICATE_KIND "\nauthority %s\nidentity %s\nsigning-key %s\nvalid-after %llu\n"
	                                     "valid-until %llu\n",
	                    c->authority, identity, signing, (unsigned long long)c->valid_after,
	                    (unsigned long long)c->valid_until);
	if (rc == 0 && out->len - start > CERTIFICATE_MAX_BYTES)
		rc = DIRAUTH_ERR_BOUNDS;
	if (rc)
		buffer_truncate(out, start);
	return rc;
}

static int expect_verifier(struct line_reader *reader, const char *keyword, struct note_verifier *out)
{
	struct text_span value;
	int rc = lines_expect(reader, keyword, &value);
	if (rc)
		return rc;
	return note_verifier_parse(value.data, value.len, out);
}

static int parse_fields(const uint8_t *text, size_t len, void *parsed)
{
	struct certificate *out = parsed;
	struct line_reader reader;
	struct text_span value;
	int rc;
	lines_init(&reader, text, len, CERTIFICATE_LINE_MAX);
	if ((rc = lines_expect_exact(&reader, CERTIFICATE_KIND)) != 0)
		return rc;
	if ((rc = lines_expect(&reader, "authority", &value)) != 0)
		return rc;
	if (value.len > NOTE_NAME_MAX)
		return DIRAUTH_ERR_BOUNDS;
	if (!note_name_is_valid(value.data, value.len))
		return DIRAUTH_ERR_SYNTAX;
	if ((rc = text_copy(value, out->authority, sizeof(out->authority))) != 0)
		return rc;
	if ((rc = expect_verifier(&reader, "identity", &out->identity)) != 0 ||
	    (rc = expect_verifier(&reader, "signing-key", &out->signing_key)) != 0 ||
	    (rc = lines_expect_u64(&reader, "valid-after", &out->valid_after)) != 0 ||
	    (rc = lines_expect_u64(&reader, "valid-until", &out->valid_until)) != 0)
		return rc;
	return lines_at_end(&reader) ? 0 : DIRAUTH_ERR_SYNTAX;
}

static int encode_certificate(const void *value, struct buffer *out)
{
	return certificate_encode(value, out);
}

static const struct lines_codec certificate_codec = {
    .max_bytes = CERTIFICATE_MAX_BYTES,
    .value_size = sizeof(struct certificate),
    .parse_fields = parse_fields,
    .encode = encode_certificate,
};

int certificate_parse(const uint8_t *text, size_t len, struct certificate *out)
{
	return lines_parse_document(&certificate_codec, text, len, out);
}

int certificate_parse_signed(const uint8_t *buf, size_t len, struct certificate *out)
{
	struct note *note = NULL;
	size_t verified_count = 0;
	int rc;
	memset(out, 0, sizeof(*out));
	if (len > CERTIFICATE_MAX_BYTES) {
		rc = DIRAUTH_ERR_BOUNDS;
		goto cleanup;
	}
	if ((rc = note_parse(buf, len, &note)) != 0)
		goto cleanup;
	if ((rc = certificate_parse(note->text, note->text_len, out)) != 0)
		goto cleanup;
	if ((rc = note_verify(note, &out->identity, 1, NULL, &verified_count)) != 0)
		goto cleanup;
	if (verified_count == 0)
		rc = DIRAUTH_ERR_UNKNOWN_KEY;
cleanup:
	note_free(note);
	if (rc)
		memset(out, 0, sizeof(*out));
	return rc;
}

int certificate_bundle_encode(const uint8_t *const *notes, const size_t *lengths, size_t count,
                              struct buffer *out)
{
	if (count > CERTIFICATE_BUNDLE_MAX)
		return DIRAUTH_ERR_BOUNDS;
	if (count > 0 && (!notes || !lengths))
		return DIRAUTH_ERR_SYNTAX;
	for (size_t i = 0; i < count; i++) {
		if (!notes[i] || lengths[i] == 0)
			return DIRAUTH_ERR_SYNTAX;
		if (lengths[i] > CERTIFICATE_MAX_BYTES)
			return DIRAUTH_ERR_BOUNDS;
	}
	size_t start = out->len;
	int rc = buffer_append_string(out, BUNDLE_KIND "\n");
	for (size_t i = 0; rc == 0 && i < count; i++) {
		rc = buffer_appendf(out, "certificate %llu\n", (unsigned long long)lengths[i]);
		if (rc == 0)
			rc = buffer_append(out, notes[i], lengths[i]);
	}
	if (rc == 0 && out->len - start > CERTIFICATE_BUNDLE_MAX_BYTES)
		rc = DIRAUTH_ERR_BOUNDS;
	if (rc)
		buffer_truncate(out, start);
	return rc;
}

int certificate_bundle_parse(const uint8_t *buf, size_t len,
                             struct certificate_bundle_entry entries[CERTIFICATE_BUNDLE_MAX], size_t *count)
{
	struct line_reader reader;
	struct text_span value;
	size_t found = 0;
	int rc;
	*count = 0;
	if (len > CERTIFICATE_BUNDLE_MAX_BYTES)
		return DIRAUTH_ERR_BOUNDS;
	lines_init(&reader, buf, len, BUNDLE_LINE_MAX);
	if ((rc = lines_expect_exact(&reader, BUNDLE_KIND)) != 0)
		return rc;
	while (!lines_at_end(&reader)) {
		uint64_t note_len;
		if (found == CERTIFICATE_BUNDLE_MAX)
			return DIRAUTH_ERR_BOUNDS;
		if ((rc = lines_expect(&reader, "certificate", &value)) != 0 ||
		    (rc = text_parse_u64(value, &note_len)) != 0)
			return rc;
		if (note_len == 0)
			return DIRAUTH_ERR_SYNTAX;
		if (note_len > CERTIFICATE_MAX_BYTES)
			return DIRAUTH_ERR_BOUNDS;
		if (note_len > len - reader.pos)
			return DIRAUTH_ERR_SYNTAX; /* truncated */
		entries[found].note = buf + reader.pos;
		entries[found].note_len = (size_t)note_len;
		reader.pos += (size_t)note_len;
		found++;
	}
	*count = found;
	return 0;
}

int certificate_keyring_init(struct certificate_keyring *ring, const struct note_verifier *identities,
                             size_t identity_count)
{
	memset(ring, 0, sizeof(*ring));
	if (identity_count > KEYRING_IDENTITY_MAX)
		return DIRAUTH_ERR_BOUNDS;
	if (identity_count > 0 && !identities)
		return DIRAUTH_ERR_SYNTAX;
	for (size_t i = 0; i < identity_count; i++) {
		if (identities[i].type != NOTE_KEY_TYPE_ED25519)
			return DIRAUTH_ERR_SYNTAX;
		ring->identities[i] = identities[i];
	}
	ring->identity_count = identity_count;
	return 0;
}

/* Index of the pinned identity that is exactly this key, or -1. */
static long identity_index(const struct certificate_keyring *ring, const struct note_verifier *identity)
{
	for (size_t i = 0; i < ring->identity_count && i < KEYRING_IDENTITY_MAX; i++) {
		if (note_verifier_equal(&ring->identities[i], identity))
			return (long)i;
	}
	return -1;
}

static int certificate_equal(const struct certificate *a, const struct certificate *b)
{
	return strcmp(a->authority, b->authority) == 0 && note_verifier_equal(&a->identity, &b->identity) &&
	       note_verifier_equal(&a->signing_key, &b->signing_key) && a->valid_after == b->valid_after &&
	       a->valid_until == b->valid_until;
}

int certificate_keyring_add(struct certificate_keyring *ring, const uint8_t *note, size_t len)
{
	struct certificate certificate;
	int rc = certificate_parse_signed(note, len, &certificate);
	if (rc)
		return rc;
	if (identity_index(ring, &certificate.identity) < 0)
		return DIRAUTH_ERR_UNKNOWN_KEY;
	for (size_t i = 0; i < ring->certificate_count; i++) {
		if (certificate_equal(&ring->certificates[i], &certificate))
			return 0;
	}
	if (ring->certificate_count >= CERTIFICATE_BUNDLE_MAX)
		return DIRAUTH_ERR_BOUNDS;
	ring->certificates[ring->certificate_count++] = certificate;
	return 0;
}

int certificate_keyring_add_bundle(struct certificate_keyring *ring, const uint8_t *buf, size_t len,
                                   size_t *added)
{
	struct certificate_bundle_entry entries[CERTIFICATE_BUNDLE_MAX];
	size_t count = 0;
	size_t added_count = 0;
	if (added)
		*added = 0;
	int rc = certificate_bundle_parse(buf, len, entries, &count);
	if (rc)
		return rc;
	for (size_t i = 0; i < count; i++) {
		size_t before = ring->certificate_count;
		rc = certificate_keyring_add(ring, entries[i].note, entries[i].note_len);
		/* Running out of memory or of the crypto library is not a verdict on the certificate:
		 * pass it up rather than quietly trusting fewer keys. */
		if (rc == DIRAUTH_ERR_NOMEM || rc == DIRAUTH_ERR_CRYPTO)
			return rc;
		if (rc == 0 && ring->certificate_count > before)
			added_count++;
	}
	if (added)
		*added = added_count;
	return 0;
}

/* Appends name to the ", "-separated list in out (capacity cap), truncating; out stays
 * NUL-terminated. */
static void names_append(char *out, size_t cap, const char *name)
{
	if (!out || cap == 0)
		return;
	size_t used = strnlen(out, cap);
	if (used + 1 >= cap)
		return;
	const char *parts[2] = {used > 0 ? ", " : "", name};
	for (size_t p = 0; p < 2; p++) {
		size_t part_len = strlen(parts[p]);
		size_t room = cap - 1 - used;
		size_t copy = part_len < room ? part_len : room;
		memcpy(out + used, parts[p], copy);
		used += copy;
		out[used] = 0;
	}
}

int certificate_keyring_verify(const struct certificate_keyring *ring, const struct note *note, uint64_t at,
                               size_t threshold, size_t *verified_count, char *verified_names,
                               size_t names_cap)
{
	uint8_t identity_verified[KEYRING_IDENTITY_MAX];
	size_t count = 0;
	memset(identity_verified, 0, sizeof(identity_verified));
	if (verified_count)
		*verified_count = 0;
	if (verified_names && names_cap > 0)
		verified_names[0] = 0;
	if (threshold == 0)
		return DIRAUTH_ERR_INTERNAL; /* a threshold of zero would accept anything */

	/* Every signature by a key certified for `at` is checked, even a repeat: none may fail. A
	 * signature is credited to one identity (the first certificate that covers it), and a
	 * signing public key is credited once whatever names it is certified under: a signed note's
	 * signature covers the text, not the key's name, so an identity that certified another
	 * authority's public key under its own name could otherwise copy that authority's
	 * signature line under its name and count twice. */
	const uint8_t *credited_keys[NOTE_MAX_SIGNATURES];
	size_t credited_key_count = 0;
	for (size_t s = 0; s < note->signature_count && s < NOTE_MAX_SIGNATURES; s++) {
		const struct note_signature *signature = &note->signatures[s];
		long credited = -1;
		const uint8_t *credited_key = NULL;
		for (size_t c = 0; c < ring->certificate_count && c < CERTIFICATE_BUNDLE_MAX; c++) {
			const struct certificate *certificate = &ring->certificates[c];
			const struct note_verifier *key = &certificate->signing_key;
			if (key->key_id != signature->key_id || strcmp(key->name, signature->name) != 0)
				continue;
			if (!(certificate->valid_after <= at && at < certificate->valid_until))
				continue;
			long index = identity_index(ring, &certificate->identity);
			if (index < 0)
				continue;
			if (signature->signature_len != CRYPTO_ED25519_SIGNATURE_SIZE)
				return DIRAUTH_ERR_SIGNATURE;
			int rc = crypto_ed25519_verify(key->public_key, note->text, note->text_len,
			                               signature->signature);
			if (rc)
				return rc;
			if (credited < 0) {
				credited = index;
				credited_key = key->public_key;
			}
		}
		if (credited < 0)
			continue;
		bool spoken = false;
		for (size_t k = 0; k < credited_key_count && !spoken; k++)
			spoken = memcmp(credited_keys[k], credited_key, CRYPTO_ED25519_PUBLIC_KEY_SIZE) == 0;
		if (spoken)
			continue;
		credited_keys[credited_key_count++] = credited_key;
		identity_verified[credited] = 1;
	}
	for (size_t i = 0; i < ring->identity_count && i < KEYRING_IDENTITY_MAX; i++) {
		if (!identity_verified[i])
			continue;
		count++;
		names_append(verified_names, names_cap, ring->identities[i].name);
	}
	if (verified_count)
		*verified_count = count;
	if (count == 0)
		return DIRAUTH_ERR_UNKNOWN_KEY;
	if (count < threshold)
		return DIRAUTH_ERR_THRESHOLD;
	return 0;
}
