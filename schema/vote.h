/*
 * vote.h: an authority's vote for one namespace and epoch: its signed view of what it holds.
 *
 * Vote text (signed note by the authority's signing key; grammar in schema/vote.md):
 *   dirauth vote v1
 *   namespace <namespace name>
 *   origin <origin>
 *   epoch <decimal>
 *   authority <authority name>
 *   records <count>
 *   records-root <Merkle root hex over the registration notes it holds>
 *   body-sha256 <hex of the vote body (schema/vote-body.md)>
 *   previous-epoch <the latest snapshot published with k signatures that it holds; 0: none>
 *   previous <hex SHA-256 of that snapshot's header text; 64 zeros for none>
 *   consensus-methods <decimal> [<decimal> ...]
 *
 * The signer signs at most one vote per (origin, epoch) and never one for an epoch lower than
 * the highest it voted in.
 */
#ifndef DIRAUTH_SCHEMA_VOTE_H
#define DIRAUTH_SCHEMA_VOTE_H

#include "base/buffer.h"
#include "schema/note.h"
#include "schema/registration.h"
#include "schema/snapshot.h"

#include <stddef.h>
#include <stdint.h>

#define VOTE_MAX_BYTES   2048
#define VOTE_METHODS_MAX 16

struct vote {
	char namespace_name[NAMESPACE_NAME_MAX + 1];
	char origin[SNAPSHOT_ORIGIN_MAX + 1];
	uint64_t epoch;
	char authority[NOTE_NAME_MAX + 1];
	uint64_t record_count;
	uint8_t records_root[32];
	uint8_t body_sha256[32];
	uint64_t previous_epoch; /* less than epoch; 0 with previous all zeros when none */
	uint8_t previous[32];
	size_t method_count;                /* 1..VOTE_METHODS_MAX */
	uint64_t methods[VOTE_METHODS_MAX]; /* strictly ascending, each >= 1 */
};

int vote_encode(const struct vote *v, struct buffer *out);
/* Refuses non-canonical text. Returns 0, DIRAUTH_ERR_SYNTAX, DIRAUTH_ERR_BOUNDS. */
int vote_parse(const uint8_t *text, size_t len, struct vote *out);

#endif
