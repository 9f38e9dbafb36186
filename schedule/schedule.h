/*
 * schedule.h: the epoch schedule, as pure arithmetic.
 *
 * Time is cut into epochs of `length` seconds starting at `genesis`: epoch E covers
 * [genesis + E*length, genesis + (E+1)*length). The snapshot of epoch E is valid from the start
 * of E (valid-after), is the current one until the end of E (fresh-until), and may be used until
 * valid-after + validity_epochs*length (valid-until). dirauthd's scheduler, its intake (which
 * promises an epoch in each receipt) and dirauth-signer (which signs only for the current epoch
 * of an origin) all compute with these functions, so they cannot disagree about an epoch.
 *
 * No clock is read here: every function takes the time it judges.
 */
#ifndef DIRAUTH_SCHEDULE_SCHEDULE_H
#define DIRAUTH_SCHEDULE_SCHEDULE_H

#include <stdint.h>

/* Largest accepted epoch length and validity: far beyond any sensible schedule, small enough
 * that no computation below can overflow for any genesis up to SCHEDULE_GENESIS_MAX. */
#define SCHEDULE_LENGTH_MAX   (7ULL * 86400)
#define SCHEDULE_VALIDITY_MAX 1000ULL
#define SCHEDULE_GENESIS_MAX  (1ULL << 40)

struct epoch_schedule {
	uint64_t genesis;         /* unix seconds at which epoch 0 begins */
	uint64_t length;          /* seconds per epoch, 1..SCHEDULE_LENGTH_MAX */
	uint64_t validity_epochs; /* epochs a snapshot stays usable, 1..SCHEDULE_VALIDITY_MAX */
	/* The preparation of epoch E's snapshot (docs/protocol.md): its cut-off and vote are prepare
	 * seconds before start(E), votes are taken for vote seconds, then signatures for signature
	 * seconds; prepare >= vote + signature, prepare < length. All 0 for one authority alone. */
	uint64_t prepare;
	uint64_t vote;
	uint64_t signature;
};

/* The moments of one epoch's preparation. */
struct epoch_phases {
	uint64_t vote_at;            /* the cut-off: the content is sealed and the vote made */
	uint64_t vote_deadline;      /* votes are taken until here */
	uint64_t signature_deadline; /* signatures are taken until here, then the snapshot is published */
	uint64_t start;              /* its valid-after */
};

/* The times of one epoch's snapshot. */
struct epoch_times {
	uint64_t valid_after;
	uint64_t fresh_until;
	uint64_t valid_until;
};

/* 0 when schedule's fields are in range (length and validity as above, genesis at most
 * SCHEDULE_GENESIS_MAX, the phases as above), else DIRAUTH_ERR_CONFIG. */
int schedule_check(const struct epoch_schedule *schedule);

/* The epoch that contains now. Returns 0, or DIRAUTH_ERR_NOT_FOUND when now is before genesis
 * (no epoch has started). */
int schedule_epoch_of(const struct epoch_schedule *schedule, uint64_t now, uint64_t *epoch);

/* The first epoch whose snapshot can still take a registration committed at now: the snapshot of
 * epoch E holds what was committed before vote_at(E), so it is the first epoch whose cut-off is
 * after now (0 before the first cut-off: the first snapshot). */
uint64_t schedule_destination_epoch(const struct epoch_schedule *schedule, uint64_t now);

/* The epoch being prepared or served at now: E from vote_at(E) until vote_at(E + 1). Returns 0,
 * or DIRAUTH_ERR_NOT_FOUND before the first cut-off. */
int schedule_current_epoch(const struct epoch_schedule *schedule, uint64_t now, uint64_t *epoch);

/* The moments of epoch's preparation. Returns 0, or DIRAUTH_ERR_BOUNDS when they would overflow
 * or fall before time 0. */
int schedule_epoch_phases(const struct epoch_schedule *schedule, uint64_t epoch, struct epoch_phases *out);

/* The times of epoch's snapshot. Returns 0, or DIRAUTH_ERR_BOUNDS when they would overflow. */
int schedule_epoch_times(const struct epoch_schedule *schedule, uint64_t epoch, struct epoch_times *out);

#endif
