/*
 * fuzz_store_record.c: libFuzzer target for the values the store keeps its records in
 * (server/store/record_codec.h).
 *
 * A record is read back from LMDB, where a damaged page can put any bytes. Reading must stay
 * inside the value, refuse what it cannot rebuild, and never hand back a note other than the one
 * whose length and digest the header keeps. A note it rebuilds, kept again under the same header
 * (with the same slot or none) and read back, is the same note, and the header reads the same.
 */
#include "base/buffer.h"
#include "crypto/crypto.h"
#include "base/error.h"
#include "server/store/record_codec.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char provider_key[] = "example.com/foo+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k";

/* One provider key, reference 1. */
static int lookup(void *context, uint32_t ref, struct note_verifier *out)
{
	(void)context;
	if (ref != 1)
		return DIRAUTH_ERR_STORE;
	return note_verifier_parse(provider_key, strlen(provider_key), out) == 0 ? 0 : DIRAUTH_ERR_STORE;
}

static int intern(void *context, const struct note_verifier *key, uint32_t *ref)
{
	(void)context;
	(void)key;
	*ref = 1;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t service_id[32] = {0x5e};
	struct record_keys keys = {NULL, lookup, intern};
	struct record_header h, again_header;
	if (record_decode_header(data, size, &h) != 0)
		return 0;
	struct buffer note, value, again;
	buffer_init(&note);
	buffer_init(&value);
	buffer_init(&again);
	int rc = record_decode_note(data, size, "example", service_id, &keys, &note);
	if (rc == 0) {
		uint8_t digest[32];
		if (note.len != h.note_len || crypto_sha256(note.data, note.len, digest) != 0 ||
		    memcmp(digest, h.digest, 32) != 0)
			abort();
		/* Its endpoint count, if it has one (a bytes form written before store format 4 is
		 * counted from its endpoint lines): written again as bytes, it reads back the same. */
		size_t endpoints = 0;
		if (record_endpoint_count(data, size, &h, &endpoints) == 0) {
			if (record_encode(h.sequence, h.stamp, h.expires, h.slot, h.digest, note.data,
			                  note.len, endpoints, false, NULL, NULL, &keys, &value) != 0 ||
			    record_decode_header(value.data, value.len, &again_header) != 0 ||
			    record_decode_note(value.data, value.len, "example", service_id, &keys, &again) !=
			        0)
				abort();
			if (again.len != note.len || memcmp(again.data, note.data, note.len) != 0 ||
			    again_header.sequence != h.sequence || again_header.stamp != h.stamp ||
			    again_header.expires != h.expires || again_header.slot != h.slot ||
			    again_header.note_len != h.note_len || again_header.endpoints != endpoints)
				abort();
		}
	} else if (rc != DIRAUTH_ERR_STORE && rc != DIRAUTH_ERR_NOMEM) {
		abort();
	}
	buffer_free(&note);
	buffer_free(&value);
	buffer_free(&again);
	return 0;
}
