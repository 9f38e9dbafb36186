/*
 * method.h: the consensus method table's row, and the state that the common steps hand to a
 * method. Internal to the module: other modules see consensus.h only.
 *
 * consensus_compute() does what every method shares: it judges the parameters and each vote,
 * refuses too few votes, picks the method, agrees on the previous snapshot and keeps the votes
 * that name it. The method then turns the counting votes into the result: method 1 chooses
 * registration versions (registrations.c); method 2 chooses them the same way and adds health
 * and revocations (lifecycle.c). A later method is a new row in the table of consensus.c with its
 * own compute function; an existing row never changes meaning.
 */
#ifndef DIRAUTH_CONSENSUS_METHOD_H
#define DIRAUTH_CONSENSUS_METHOD_H

#include "consensus/consensus.h"

#include <stddef.h>
#include <stdint.h>

/* One computation, from the common steps to the method. */
struct consensus_run {
	const struct consensus_params *params;
	const struct consensus_vote *votes; /* all the votes given */
	size_t vote_count;
	size_t counting[CONSENSUS_AUTHORITIES_MAX]; /* indexes of the votes that count, ascending */
	size_t counting_count;
	consensus_note_fn note;
	void *note_context;
	struct consensus_result *result;   /* method, previous and counting_votes already set */
	struct consensus_failure *failure; /* never NULL here */
};

struct consensus_method {
	uint64_t number;
	const char *summary;
	/* Fills run->result's records, header, header_text and body. On a refusal sets
	 * run->failure (consensus_run_fail) and returns its code; the caller clears the result. */
	int (*compute)(struct consensus_run *run);
};

/* Records outcome and cause in run->failure and returns the outcome's dirauth_error. */
int consensus_run_fail(struct consensus_run *run, enum consensus_outcome outcome, int cause);

/* Method 1: registrations only (registrations.c). */
int consensus_registrations_compute(struct consensus_run *run);

/* Method 1's step (d), which method 2 shares: fills run->result->records with the chosen version
 * of every service (the k-th of the counting votes' versions), ascending by service id. Returns
 * 0 or a refusal set through consensus_run_fail (TOO_MANY_RECORDS, FAILED). */
int consensus_choose_versions(struct consensus_run *run);

/* Names version and the first counting vote that holds it in run->failure, and refuses with
 * outcome and cause (consensus_run_fail). */
int consensus_note_fail(struct consensus_run *run, const struct vote_body_record *version,
                        enum consensus_outcome outcome, int cause);

/* Method 2: registrations, health and revocations (lifecycle.c). */
int consensus_lifecycle_compute(struct consensus_run *run);

#endif
