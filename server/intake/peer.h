/*
 * peer.h: notes another authority holds, taken into this authority's store many at a time.
 *
 * An authority learns registrations, health statements and revocations from its peers' votes
 * (docs/protocol.md, "Consensus" and "Reconciliation"). Each note is checked exactly as intake
 * checks one a provider posts (the kind's own checks, with the allowances a note learned from a
 * peer has: no receipt, a statement's issued-at may be older than the clock skew), and stored
 * without a receipt (the provider holds the other authority's). Taking them one by one would cost
 * a durable commit each; here every note is started at once and the store's committer groups them
 * into a few commits, so ten thousand notes cost seconds, not minutes.
 */
#ifndef DIRAUTH_SERVER_INTAKE_PEER_H
#define DIRAUTH_SERVER_INTAKE_PEER_H

#include "server/api/api_error.h"
#include "server/intake/kinds.h"
#include "server/intake/submit.h"

#include <stddef.h>
#include <stdint.h>

/* One note and, once taken, its outcome. */
struct intake_peer_note {
	enum intake_kind_id kind; /* a registration, health statement or revocation */
	const uint8_t *note;      /* borrowed for the call */
	size_t len;
	enum api_error error; /* set by intake_take_peer_notes: API_ERROR_NONE when stored */
};

/* Checks and stores every note of notes[0..count), in that order as far as the store is
 * concerned (two registrations of one service are taken lowest sequence first when given so),
 * waiting until each has its outcome in its error field: API_ERROR_NONE stored, or the refusal
 * intake would give (a sequence not above the one held is API_ERROR_ROLLBACK or
 * API_ERROR_REPLAYED, which changes nothing). Returns how many were stored. Never fails as a
 * whole: a note that cannot even be started (no such kind, no memory) is refused
 * API_ERROR_INTERNAL. */
size_t intake_take_peer_notes(const struct submit_context *context, struct intake_peer_note *notes,
                              size_t count);

#endif
