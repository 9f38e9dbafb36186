/*
 * record_codec.h: how the store keeps one registration, compactly (internal to server/store).
 *
 * A registration note is canonical text: its parser accepts exactly the bytes its encoder
 * writes. So the store need not keep the text. It keeps the fields in binary (ids as 32 bytes
 * instead of 64 hex digits, enums as bytes, the provider key as a reference into a table of
 * keys) and the raw signature, and rebuilds the note byte for byte when it is read: about 40%
 * of the text's size. A note whose rebuilt bytes would differ (which canonical parsing rules
 * out, but the store checks rather than assumes) is kept as its bytes.
 *
 * Value layout (integers big-endian):
 *   u64 sequence, u64 stamp, u64 expires, u32 note length, 32 bytes note digest, u8 form, then
 *   u64 expiry slot when the form has RECORD_FORM_SLOTTED (every record written since store
 *   format 3; the key of its entry in the store's expiry index), then u16 endpoint count when
 *   the form has RECORD_FORM_COUNTED (every bytes form written since store format 4), then
 *   form 0 (bytes):   the note
 *   form 1 (compact): u32 provider key ref, u8 class, u64 issued-at, u16 endpoint count, each
 *                     endpoint: 32 id, u8 transport, u8 length + address, u8 length + region,
 *                     u8 capacity, u8 profile; then u8 signature length + signature.
 * The namespace and service id are the record's key; the note length lets a reader size a
 * snapshot without rebuilding a single note.
 */
#ifndef DIRAUTH_SERVER_STORE_RECORD_CODEC_H
#define DIRAUTH_SERVER_STORE_RECORD_CODEC_H

#include "base/buffer.h"
#include "schema/note.h"
#include "schema/registration.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RECORD_HEADER_SIZE  (8 + 8 + 8 + 4 + 32 + 1) /* without the slot */
#define RECORD_FORM_SLOTTED 0x80
#define RECORD_FORM_COUNTED 0x40

struct record_header {
	uint64_t sequence;
	uint64_t stamp;
	uint64_t expires;
	uint32_t note_len;
	uint8_t digest[32];
	uint8_t form;       /* 0 bytes, 1 compact (RECORD_FORM_SLOTTED cleared) */
	uint64_t slot;      /* 0: none, the record was written before store format 3 */
	bool counted;       /* the header holds the endpoint count (RECORD_FORM_COUNTED) */
	uint16_t endpoints; /* that count */
	size_t size;        /* the header's bytes: where the note's form begins */
};

/* Looks a provider key up by reference (for rebuilding), or finds or adds one (for keeping). */
struct record_keys {
	void *context;
	/* The verifier of reference ref; 0 or DIRAUTH_ERR_STORE. */
	int (*lookup)(void *context, uint32_t ref, struct note_verifier *out);
	/* The reference of key, made if new; 0 or an error. */
	int (*intern)(void *context, const struct note_verifier *key, uint32_t *ref);
};

/* Whether what record_decode_note rebuilds a record from rebuilds note exactly: namespace_name
 * and service_id (the record's key), sequence and expires (its header), r's other fields, and
 * signature's bytes under r's provider key name and id. Only such a note may be kept compact.
 * False when r or signature is NULL. Pure: callers run it before the write transaction. */
bool record_rebuilds(const char *namespace_name, const uint8_t service_id[32], uint64_t sequence,
                     uint64_t expires, const uint8_t *note, size_t note_len, const struct registration *r,
                     const struct note_signature *signature);

/* Appends the value for a registration of endpoint_count endpoints (at most
 * REGISTRATION_MAX_ENDPOINTS): header fields from the arguments (a slot of 0 writes none, the
 * layout before store format 3), and the note compact (from r and signature, its provider key
 * interned through keys) when compact, which must be record_rebuilds' answer for the same
 * arguments, else as bytes with the endpoint count in the header. Returns 0, DIRAUTH_ERR_SYNTAX (a count out
 * of range), DIRAUTH_ERR_NOMEM, or the keys' error. */
int record_encode(uint64_t sequence, uint64_t stamp, uint64_t expires, uint64_t slot,
                  const uint8_t digest[32], const uint8_t *note, size_t note_len, size_t endpoint_count,
                  bool compact, const struct registration *r, const struct note_signature *signature,
                  const struct record_keys *keys, struct buffer *out);

/* Reads the header of a value. Returns 0 or DIRAUTH_ERR_STORE (too short, unknown form, a
 * slot of 0 where the form says there is one, an endpoint count out of range). */
int record_decode_header(const uint8_t *value, size_t len, struct record_header *out);

/* The number of endpoints of the registration a value keeps (h its decoded header): read from the
 * header or the compact form, or counted as the note's endpoint lines in a bytes form written
 * before store format 4, without rebuilding anything. Returns 0 or DIRAUTH_ERR_STORE. */
int record_endpoint_count(const uint8_t *value, size_t len, const struct record_header *h, size_t *out);

/* Rebuilds the note of a value into out (reset first): namespace_name and service_id are the
 * record's key. Returns 0, DIRAUTH_ERR_STORE (damaged, or the rebuilt note does not have the
 * stored length and digest), DIRAUTH_ERR_NOMEM, the keys' error. */
int record_decode_note(const uint8_t *value, size_t len, const char *namespace_name,
                       const uint8_t service_id[32], const struct record_keys *keys, struct buffer *out);

#endif
