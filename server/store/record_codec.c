/*
 * record_codec.c: compact registrations in the store (record_codec.h).
 *
 * Rebuilding a note is its encoder's work (registration_encode, note_format) over the fields
 * kept; the digest kept with it is checked after every rebuild, so a damaged or mis-encoded value
 * is an error, never a different note.
 */
#include "server/store/record_codec.h"

#include "crypto/crypto.h"
#include "base/error.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { RECORD_FORM_BYTES = 0, RECORD_FORM_COMPACT = 1 };

static void put_uint(uint8_t *p, uint64_t v, size_t width)
{
	for (size_t i = width; i-- > 0;) {
		p[i] = (uint8_t)v;
		v >>= 8;
	}
}

static int append_uint(struct buffer *out, uint64_t v, size_t width)
{
	uint8_t field[8];
	put_uint(field, v, width);
	return buffer_append(out, field, width);
}

static int append_short_string(struct buffer *out, const char *text)
{
	size_t len = strlen(text);
	if (len > 255)
		return DIRAUTH_ERR_BOUNDS;
	int rc = append_uint(out, len, 1);
	return rc ? rc : buffer_append(out, text, len);
}

/* A bounded reader over a value. */
struct reader {
	const uint8_t *data;
	size_t len;
	size_t at;
	bool failed;
};

static const uint8_t *read_bytes(struct reader *r, size_t n)
{
	if (r->failed || n > r->len - r->at) {
		r->failed = true;
		return NULL;
	}
	const uint8_t *p = r->data + r->at;
	r->at += n;
	return p;
}

static uint64_t read_uint(struct reader *r, size_t width)
{
	const uint8_t *p = read_bytes(r, width);
	uint64_t v = 0;
	for (size_t i = 0; p && i < width; i++)
		v = (v << 8) | p[i];
	return v;
}

static void read_string(struct reader *r, char *out, size_t cap)
{
	size_t len = (size_t)read_uint(r, 1);
	const uint8_t *p = read_bytes(r, len);
	if (!p || len >= cap) {
		r->failed = true;
		out[0] = 0;
		return;
	}
	memcpy(out, p, len);
	out[len] = 0;
}

static int append_header(uint64_t sequence, uint64_t stamp, uint64_t expires, uint64_t slot, size_t note_len,
                         const uint8_t digest[32], uint8_t form, size_t endpoint_count, struct buffer *out)
{
	bool counted = form == RECORD_FORM_BYTES;
	int rc = append_uint(out, sequence, 8);
	if (!rc)
		rc = append_uint(out, stamp, 8);
	if (!rc)
		rc = append_uint(out, expires, 8);
	if (!rc)
		rc = append_uint(out, note_len, 4);
	if (!rc)
		rc = buffer_append(out, digest, 32);
	if (!rc)
		rc = append_uint(
		    out, form | (slot ? RECORD_FORM_SLOTTED : 0) | (counted ? RECORD_FORM_COUNTED : 0), 1);
	if (!rc && slot)
		rc = append_uint(out, slot, 8);
	if (!rc && counted)
		rc = append_uint(out, endpoint_count, 2);
	return rc;
}

static int append_compact(const struct registration *r, const struct note_signature *signature, uint32_t ref,
                          struct buffer *out)
{
	int rc = append_uint(out, ref, 4);
	if (!rc)
		rc = append_uint(out, (uint64_t)r->service_class, 1);
	if (!rc)
		rc = append_uint(out, r->issued_at, 8);
	if (!rc)
		rc = append_uint(out, r->endpoint_count, 2);
	for (size_t i = 0; !rc && i < r->endpoint_count; i++) {
		const struct endpoint_descriptor *e = &r->endpoints[i];
		rc = buffer_append(out, e->endpoint_id, ENDPOINT_ID_SIZE);
		if (!rc)
			rc = append_uint(out, (uint64_t)e->transport, 1);
		if (!rc)
			rc = append_short_string(out, e->address);
		if (!rc)
			rc = append_short_string(out, e->region);
		if (!rc)
			rc = append_uint(out, (uint64_t)e->capacity, 1);
		if (!rc)
			rc = append_uint(out, (uint64_t)e->profile, 1);
	}
	if (!rc && signature->signature_len > 255)
		rc = DIRAUTH_ERR_BOUNDS;
	if (!rc)
		rc = append_uint(out, signature->signature_len, 1);
	if (!rc)
		rc = buffer_append(out, signature->signature, signature->signature_len);
	return rc;
}

/* The note r and signature make, into out (reset first). */
static int rebuild(const struct registration *r, const struct note_signature *signature, struct buffer *out)
{
	struct buffer text;
	buffer_init(&text);
	buffer_reset(out);
	int rc = registration_encode(r, &text);
	if (!rc)
		rc = note_format(text.data, text.len, signature, 1, out);
	buffer_free(&text);
	return rc;
}

/* The compact form has no room for endpoint-key lines: a registration with one is kept as bytes. */
static int has_endpoint_keys(const struct registration *r)
{
	for (size_t i = 0; i < r->endpoint_count; i++)
		if (r->endpoints[i].has_key)
			return 1;
	return 0;
}

bool record_rebuilds(const char *namespace_name, const uint8_t service_id[32], uint64_t sequence,
                     uint64_t expires, const uint8_t *note, size_t note_len, const struct registration *r,
                     const struct note_signature *signature)
{
	/* Decoding takes these from the key, the header and the provider key, not from r: a note
	 * they would not rebuild (a caller's fields that disagree with its note, a signature under
	 * another key's name) is kept as bytes. */
	if (!r || !signature || strcmp(r->namespace_name, namespace_name) != 0 ||
	    memcmp(r->service_id, service_id, SERVICE_ID_SIZE) != 0 || r->sequence != sequence ||
	    r->expires != expires || strcmp(signature->name, r->provider.name) != 0 ||
	    signature->key_id != r->provider.key_id || signature->signature_len > 255 || has_endpoint_keys(r))
		return false;
	struct buffer rebuilt;
	buffer_init(&rebuilt);
	bool same = rebuild(r, signature, &rebuilt) == 0 && rebuilt.len == note_len &&
	            memcmp(rebuilt.data, note, note_len) == 0;
	buffer_free(&rebuilt);
	return same;
}

int record_encode(uint64_t sequence, uint64_t stamp, uint64_t expires, uint64_t slot,
                  const uint8_t digest[32], const uint8_t *note, size_t note_len, size_t endpoint_count,
                  bool compact, const struct registration *r, const struct note_signature *signature,
                  const struct record_keys *keys, struct buffer *out)
{
	size_t start = out->len;
	int rc = 0;
	uint32_t ref = 0;
	if (endpoint_count > REGISTRATION_MAX_ENDPOINTS)
		return DIRAUTH_ERR_SYNTAX;
	if (compact && (rc = keys->intern(keys->context, &r->provider, &ref)))
		return rc;
	rc = append_header(sequence, stamp, expires, slot, note_len, digest,
	                   compact ? RECORD_FORM_COMPACT : RECORD_FORM_BYTES, endpoint_count, out);
	if (!rc)
		rc = compact ? append_compact(r, signature, ref, out) : buffer_append(out, note, note_len);
	if (rc)
		out->len = start;
	return rc;
}

int record_decode_header(const uint8_t *value, size_t len, struct record_header *out)
{
	struct reader r = {.data = value, .len = len};
	out->sequence = read_uint(&r, 8);
	out->stamp = read_uint(&r, 8);
	out->expires = read_uint(&r, 8);
	out->note_len = (uint32_t)read_uint(&r, 4);
	const uint8_t *digest = read_bytes(&r, 32);
	uint8_t form = (uint8_t)read_uint(&r, 1);
	out->form = (uint8_t)(form & (0xff ^ RECORD_FORM_SLOTTED ^ RECORD_FORM_COUNTED));
	out->slot = form & RECORD_FORM_SLOTTED ? read_uint(&r, 8) : 0;
	out->counted = (form & RECORD_FORM_COUNTED) != 0;
	out->endpoints = out->counted ? (uint16_t)read_uint(&r, 2) : 0;
	if (r.failed || (out->form != RECORD_FORM_BYTES && out->form != RECORD_FORM_COMPACT) ||
	    (form & RECORD_FORM_SLOTTED && out->slot == 0) || out->endpoints > REGISTRATION_MAX_ENDPOINTS)
		return DIRAUTH_ERR_STORE;
	memcpy(out->digest, digest, 32);
	out->size = r.at;
	return 0;
}

int record_endpoint_count(const uint8_t *value, size_t len, const struct record_header *h, size_t *out)
{
	static const char line[] = "\nendpoint "; /* not an endpoint-key line */
	size_t count = 0;
	if (h->counted) {
		*out = h->endpoints;
		return 0;
	}
	if (h->form == RECORD_FORM_COMPACT) {
		struct reader rd = {.data = value, .len = len, .at = h->size};
		read_bytes(&rd, 4 + 1 + 8); /* provider key ref, class, issued-at */
		count = (size_t)read_uint(&rd, 2);
		if (rd.failed)
			return DIRAUTH_ERR_STORE;
	} else {
		for (size_t at = h->size; at + sizeof line - 1 <= len; at++)
			if (value[at] == '\n' && memcmp(value + at, line, sizeof line - 1) == 0)
				count++;
	}
	if ((h->form == RECORD_FORM_COMPACT && count == 0) || count > REGISTRATION_MAX_ENDPOINTS)
		return DIRAUTH_ERR_STORE;
	*out = count;
	return 0;
}

static int decode_compact(struct reader *rd, const struct record_header *h, const char *namespace_name,
                          const uint8_t service_id[32], const struct record_keys *keys, struct buffer *out)
{
	struct registration r;
	struct note_signature signature;
	memset(&r, 0, sizeof r);
	memset(&signature, 0, sizeof signature);
	snprintf(r.namespace_name, sizeof r.namespace_name, "%s", namespace_name);
	memcpy(r.service_id, service_id, SERVICE_ID_SIZE);
	r.sequence = h->sequence;
	r.expires = h->expires;
	uint32_t ref = (uint32_t)read_uint(rd, 4);
	r.service_class = (enum service_class)read_uint(rd, 1);
	r.issued_at = read_uint(rd, 8);
	r.endpoint_count = (size_t)read_uint(rd, 2);
	if (rd->failed || r.endpoint_count == 0 || r.endpoint_count > REGISTRATION_MAX_ENDPOINTS)
		return DIRAUTH_ERR_STORE;
	int rc = keys->lookup(keys->context, ref, &r.provider);
	if (rc)
		return rc;
	r.endpoints = calloc(r.endpoint_count, sizeof *r.endpoints);
	if (!r.endpoints)
		return DIRAUTH_ERR_NOMEM;
	for (size_t i = 0; i < r.endpoint_count && !rd->failed; i++) {
		struct endpoint_descriptor *e = &r.endpoints[i];
		const uint8_t *id = read_bytes(rd, ENDPOINT_ID_SIZE);
		if (id)
			memcpy(e->endpoint_id, id, ENDPOINT_ID_SIZE);
		e->transport = (enum transport)read_uint(rd, 1);
		read_string(rd, e->address, sizeof e->address);
		read_string(rd, e->region, sizeof e->region);
		e->capacity = (enum capacity_class)read_uint(rd, 1);
		e->profile = (enum capability_profile)read_uint(rd, 1);
	}
	signature.signature_len = (size_t)read_uint(rd, 1);
	const uint8_t *bytes = read_bytes(rd, signature.signature_len);
	if (rd->failed || rd->at != rd->len || signature.signature_len > NOTE_SIGNATURE_MAX) {
		registration_clear(&r);
		return DIRAUTH_ERR_STORE;
	}
	memcpy(signature.signature, bytes, signature.signature_len);
	snprintf(signature.name, sizeof signature.name, "%s", r.provider.name);
	signature.key_id = r.provider.key_id;
	rc = rebuild(&r, &signature, out);
	registration_clear(&r);
	return rc == DIRAUTH_ERR_NOMEM ? rc : rc ? DIRAUTH_ERR_STORE : 0;
}

int record_decode_note(const uint8_t *value, size_t len, const char *namespace_name,
                       const uint8_t service_id[32], const struct record_keys *keys, struct buffer *out)
{
	struct record_header h;
	int rc = record_decode_header(value, len, &h);
	if (rc)
		return rc;
	struct reader rd = {.data = value, .len = len, .at = h.size};
	buffer_reset(out);
	if (h.form == RECORD_FORM_BYTES)
		rc = buffer_append(out, value + h.size, len - h.size);
	else
		rc = decode_compact(&rd, &h, namespace_name, service_id, keys, out);
	if (rc)
		return rc;
	uint8_t digest[32];
	if (out->len != h.note_len || crypto_sha256(out->data, out->len, digest) != 0 ||
	    memcmp(digest, h.digest, 32) != 0)
		return DIRAUTH_ERR_STORE;
	return 0;
}
