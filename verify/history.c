/*
 * history.c: rollback, equivocation and the `previous` chain (see history.h).
 */
#include "verify/history.h"

#include "schema/error.h"
#include "verify/detail.h"
#include "verify/snapshot.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int verify_held_parse(const uint8_t *note_bytes, size_t len, struct verify_held *out, char *detail,
                      size_t detail_cap)
{
	struct note *note = NULL;
	int rc;

	verify_detail_clear(detail, detail_cap);
	memset(out, 0, sizeof(*out));
	rc = note_parse(note_bytes, len, &note);
	if (rc == 0)
		rc = snapshot_header_parse(note->text, note->text_len, &out->header);
	if (rc == 0)
		rc = snapshot_header_digest(note->text, note->text_len, out->digest);
	if (rc != 0) {
		verify_detail_set(detail, detail_cap, "held header cannot be read back: %s",
		                  dirauth_strerror(rc));
		memset(out, 0, sizeof(*out));
	}
	note_free(note);
	return rc;
}

int verify_history_compare(const struct verify_held *held, const uint8_t *note_bytes, size_t note_len,
                           const struct snapshot_header *header, int *newer, char *detail, size_t detail_cap)
{
	struct note *note = NULL;
	uint8_t digest[32];
	int rc;

	verify_detail_clear(detail, detail_cap);
	*newer = 0;
	rc = note_parse(note_bytes, note_len, &note);
	if (rc != 0) {
		verify_detail_set(detail, detail_cap, "header: not a signed note: %s", dirauth_strerror(rc));
		return rc;
	}
	rc = snapshot_header_digest(note->text, note->text_len, digest);
	note_free(note);
	if (rc != 0) {
		verify_detail_set(detail, detail_cap, "header: cannot hash the header: %s",
		                  dirauth_strerror(rc));
		return rc;
	}
	if (held->header.epoch > header->epoch) {
		verify_detail_set(detail, detail_cap,
		                  "rollback: the server offers epoch %" PRIu64
		                  ", this mirror holds epoch %" PRIu64,
		                  header->epoch, held->header.epoch);
		return DIRAUTH_ERR_ROLLBACK;
	}
	/* The same epoch may come back with more cosignatures; only different text is two histories.
	 * The digests are SHA-256 of the two texts, so equal digests are equal texts. */
	if (held->header.epoch == header->epoch && memcmp(held->digest, digest, sizeof(digest)) != 0) {
		verify_detail_set(detail, detail_cap,
		                  "equivocation: two different headers signed for epoch %" PRIu64,
		                  header->epoch);
		return DIRAUTH_ERR_MISMATCH;
	}
	*newer = header->epoch > held->header.epoch;
	return 0;
}

/* The refusal every broken link ends in, with what broke. */
static int chain_broken(const struct verify_chain *chain, char *detail, size_t detail_cap, const char *format,
                        ...) __attribute__((format(printf, 4, 5)));

static int chain_broken(const struct verify_chain *chain, char *detail, size_t detail_cap, const char *format,
                        ...)
{
	char what[VERIFY_DETAIL_MAX / 2];
	va_list args;

	va_start(args, format);
	vsnprintf(what, sizeof(what), format, args);
	va_end(args);
	verify_detail_set(detail, detail_cap,
	                  "history does not chain to the held snapshot (epoch %" PRIu64 "): %s",
	                  chain->held_epoch, what);
	return DIRAUTH_ERR_MISMATCH;
}

int verify_chain_begin(struct verify_chain *chain, const struct verify_pins *pins,
                       const struct verify_held *held, const struct snapshot_header *header,
                       uint64_t max_chain, char *detail, size_t detail_cap)
{
	verify_detail_clear(detail, detail_cap);
	memset(chain, 0, sizeof(*chain));
	chain->pins = *pins;
	snprintf(chain->namespace_name, sizeof(chain->namespace_name), "%s", header->namespace_name);
	snprintf(chain->origin, sizeof(chain->origin), "%s", header->origin);
	chain->held_epoch = held->header.epoch;
	chain->held_valid_after = held->header.valid_after;
	memcpy(chain->held_digest, held->digest, sizeof(chain->held_digest));
	if (header->epoch <= held->header.epoch) {
		verify_detail_set(detail, detail_cap,
		                  "history: epoch %" PRIu64 " is not newer than the held epoch %" PRIu64,
		                  header->epoch, held->header.epoch);
		return DIRAUTH_ERR_INTERNAL;
	}
	if (header->epoch - held->header.epoch > max_chain) {
		verify_detail_set(
		    detail, detail_cap,
		    "history: the server offers epoch %" PRIu64 ", %" PRIu64
		    " epochs past the held epoch %" PRIu64 ", more than the %" PRIu64
		    " this mirror walks back to check that one descends from the other; a mirror "
		    "away that long must be re-seeded deliberately",
		    header->epoch, header->epoch - held->header.epoch, held->header.epoch, max_chain);
		return DIRAUTH_ERR_BOUNDS;
	}
	chain->next_epoch = header->epoch;
	chain->next_valid_after = header->valid_after;
	memcpy(chain->expected, header->previous, sizeof(chain->expected));
	if (header->valid_after < chain->held_valid_after)
		return chain_broken(chain, detail, detail_cap,
		                    "epoch %" PRIu64 " is valid after %" PRIu64
		                    ", before the held header's valid-after %" PRIu64,
		                    header->epoch, header->valid_after, chain->held_valid_after);
	chain->started = 1;
	chain->reached = memcmp(chain->expected, chain->held_digest, sizeof(chain->expected)) == 0;
	return 0;
}

int verify_chain_add(struct verify_chain *chain, uint64_t epoch, const uint8_t *note_bytes, size_t note_len,
                     char *detail, size_t detail_cap)
{
	struct snapshot_header link;
	struct note *note = NULL;
	uint8_t digest[32];
	char why[VERIFY_DETAIL_MAX];
	int rc;

	verify_detail_clear(detail, detail_cap);
	if (!chain->started || chain->reached || epoch >= chain->next_epoch || epoch <= chain->held_epoch) {
		verify_detail_set(detail, detail_cap, "history: epoch %" PRIu64 " added out of order", epoch);
		return DIRAUTH_ERR_INTERNAL;
	}
	if (note_len > VERIFY_HEADER_NOTE_MAX) {
		verify_detail_set(detail, detail_cap, "history: epoch %" PRIu64 ": larger than %d bytes",
		                  epoch, VERIFY_HEADER_NOTE_MAX);
		return DIRAUTH_ERR_BOUNDS;
	}
	rc = note_parse(note_bytes, note_len, &note);
	if (rc != 0) {
		verify_detail_set(detail, detail_cap, "history: epoch %" PRIu64 ": not a signed note: %s",
		                  epoch, dirauth_strerror(rc));
		goto done;
	}
	rc = note->text_len > SNAPSHOT_HEADER_MAX_BYTES
	         ? DIRAUTH_ERR_BOUNDS
	         : snapshot_header_parse(note->text, note->text_len, &link);
	if (rc != 0) {
		verify_detail_set(detail, detail_cap, "history: epoch %" PRIu64 ": not a snapshot header: %s",
		                  epoch, dirauth_strerror(rc));
		goto done;
	}
	/* A link is a past statement: its keys are judged at its own time only. */
	rc = verify_note(&chain->pins, note, link.valid_after, link.valid_after, NULL, why, sizeof(why));
	if (rc != 0) {
		verify_detail_set(detail, detail_cap, "history: epoch %" PRIu64 ": %s", epoch, why);
		goto done;
	}
	if (link.epoch != epoch) {
		rc = chain_broken(chain, detail, detail_cap,
		                  "the header served for epoch %" PRIu64 " is for epoch %" PRIu64, epoch,
		                  link.epoch);
		goto done;
	}
	if (strcmp(link.namespace_name, chain->namespace_name) != 0 ||
	    strcmp(link.origin, chain->origin) != 0) {
		rc = chain_broken(chain, detail, detail_cap,
		                  "epoch %" PRIu64 " is of namespace '%s' and origin '%s'", epoch,
		                  link.namespace_name, link.origin);
		goto done;
	}
	if (link.valid_after > chain->next_valid_after || link.valid_after < chain->held_valid_after) {
		rc = chain_broken(chain, detail, detail_cap,
		                  "epoch %" PRIu64 " is valid after %" PRIu64
		                  ", outside the held header's %" PRIu64 " and epoch %" PRIu64 "'s %" PRIu64,
		                  epoch, link.valid_after, chain->held_valid_after, chain->next_epoch,
		                  chain->next_valid_after);
		goto done;
	}
	rc = snapshot_header_digest(note->text, note->text_len, digest);
	if (rc != 0) {
		verify_detail_set(detail, detail_cap,
		                  "history: epoch %" PRIu64 ": cannot hash the header: %s", epoch,
		                  dirauth_strerror(rc));
		goto done;
	}
	if (memcmp(digest, chain->expected, sizeof(digest)) != 0) {
		rc = chain_broken(chain, detail, detail_cap,
		                  "epoch %" PRIu64 " is not the previous header of epoch %" PRIu64, epoch,
		                  chain->next_epoch);
		goto done;
	}
	chain->next_epoch = link.epoch;
	chain->next_valid_after = link.valid_after;
	memcpy(chain->expected, link.previous, sizeof(chain->expected));
	chain->reached = memcmp(chain->expected, chain->held_digest, sizeof(chain->expected)) == 0;
done:
	note_free(note);
	return rc;
}

int verify_chain_reached(const struct verify_chain *chain)
{
	return chain->reached;
}

int verify_chain_finish(const struct verify_chain *chain, char *detail, size_t detail_cap)
{
	verify_detail_clear(detail, detail_cap);
	if (chain->started && chain->reached)
		return 0;
	return chain_broken(chain, detail, detail_cap,
	                    "the previous of epoch %" PRIu64
	                    " is no header the server holds after the held one, nor the held one",
	                    chain->next_epoch);
}
