/*
 * history.c: rollback, equivocation and the `previous` chain (see history.h).
 */
#include "verify/history.h"

#include "base/error.h"
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

int verify_history_follows(const struct verify_held *before, const struct snapshot_header *next, char *detail,
                           size_t detail_cap)
{
	verify_detail_clear(detail, detail_cap);
	if (next->epoch <= before->header.epoch) {
		verify_detail_set(detail, detail_cap, "epoch %" PRIu64 " is not after epoch %" PRIu64,
		                  next->epoch, before->header.epoch);
		return DIRAUTH_ERR_MISMATCH;
	}
	if (next->valid_after < before->header.valid_after) {
		verify_detail_set(detail, detail_cap,
		                  "epoch %" PRIu64 " is valid after %" PRIu64 ", before epoch %" PRIu64
		                  "'s valid-after %" PRIu64,
		                  next->epoch, next->valid_after, before->header.epoch,
		                  before->header.valid_after);
		return DIRAUTH_ERR_MISMATCH;
	}
	if (memcmp(next->previous, before->digest, sizeof(before->digest)) != 0) {
		verify_detail_set(detail, detail_cap,
		                  "epoch %" PRIu64 " is not the previous header of epoch %" PRIu64,
		                  before->header.epoch, next->epoch);
		return DIRAUTH_ERR_MISMATCH;
	}
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
	                  chain->held.header.epoch, what);
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
	chain->held = *held;
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
	chain->next = *header;
	if (header->valid_after < held->header.valid_after)
		return chain_broken(chain, detail, detail_cap,
		                    "epoch %" PRIu64 " is valid after %" PRIu64
		                    ", before the held header's valid-after %" PRIu64,
		                    header->epoch, header->valid_after, held->header.valid_after);
	chain->started = 1;
	chain->reached = verify_history_follows(&chain->held, &chain->next, NULL, 0) == 0;
	return 0;
}

int verify_chain_add(struct verify_chain *chain, uint64_t epoch, const uint8_t *note_bytes, size_t note_len,
                     char *detail, size_t detail_cap)
{
	struct verify_held link;
	struct note *note = NULL;
	char why[VERIFY_DETAIL_MAX];
	int rc;

	verify_detail_clear(detail, detail_cap);
	if (!chain->started || chain->reached || epoch >= chain->next.epoch ||
	    epoch <= chain->held.header.epoch) {
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
	         : snapshot_header_parse(note->text, note->text_len, &link.header);
	if (rc != 0) {
		verify_detail_set(detail, detail_cap, "history: epoch %" PRIu64 ": not a snapshot header: %s",
		                  epoch, dirauth_strerror(rc));
		goto done;
	}
	/* A link is a past statement: its keys are judged at its own time only. */
	rc = verify_note(&chain->pins, note, link.header.valid_after, link.header.valid_after, NULL, why,
	                 sizeof(why));
	if (rc != 0) {
		verify_detail_set(detail, detail_cap, "history: epoch %" PRIu64 ": %s", epoch, why);
		goto done;
	}
	if (link.header.epoch != epoch) {
		rc = chain_broken(chain, detail, detail_cap,
		                  "the header served for epoch %" PRIu64 " is for epoch %" PRIu64, epoch,
		                  link.header.epoch);
		goto done;
	}
	if (strcmp(link.header.namespace_name, chain->namespace_name) != 0 ||
	    strcmp(link.header.origin, chain->origin) != 0) {
		rc = chain_broken(chain, detail, detail_cap,
		                  "epoch %" PRIu64 " is of namespace '%s' and origin '%s'", epoch,
		                  link.header.namespace_name, link.header.origin);
		goto done;
	}
	/* Within the walk's window: dated between the held header and the header that names it. */
	if (link.header.valid_after > chain->next.valid_after ||
	    link.header.valid_after < chain->held.header.valid_after) {
		rc = chain_broken(chain, detail, detail_cap,
		                  "epoch %" PRIu64 " is valid after %" PRIu64
		                  ", outside the held header's %" PRIu64 " and epoch %" PRIu64 "'s %" PRIu64,
		                  epoch, link.header.valid_after, chain->held.header.valid_after,
		                  chain->next.epoch, chain->next.valid_after);
		goto done;
	}
	rc = snapshot_header_digest(note->text, note->text_len, link.digest);
	if (rc != 0) {
		verify_detail_set(detail, detail_cap,
		                  "history: epoch %" PRIu64 ": cannot hash the header: %s", epoch,
		                  dirauth_strerror(rc));
		goto done;
	}
	if (verify_history_follows(&link, &chain->next, why, sizeof(why)) != 0) {
		rc = chain_broken(chain, detail, detail_cap, "%s", why);
		goto done;
	}
	chain->next = link.header;
	chain->reached = verify_history_follows(&chain->held, &chain->next, NULL, 0) == 0;
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
	                    chain->next.epoch);
}
