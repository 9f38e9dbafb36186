/*
 * method.h: the consensus method table's row, and the state that the common steps hand to a
 * method. Internal to the module: other modules see consensus.h only.
 *
 * consensus_compute() does what every method shares: it judges the parameters and each vote,
 * refuses too few votes, picks the method, agrees on the previous snapshot and keeps the votes
 * that name it. The method then turns the counting votes into the result: method 1 chooses
 * registration versions (registrations.c); method 2 chooses them the same way and adds health
 * and revocations (statements.c). Both write the body they choose through body.c, piece by piece,
 * to the caller's writer, and body.c fills the header that commits to it. A later method is a new
 * row in the table of consensus.c with its own compute function; an existing row never changes
 * meaning.
 */
#ifndef DIRAUTH_CONSENSUS_METHOD_H
#define DIRAUTH_CONSENSUS_METHOD_H

#include "consensus/consensus.h"
#include "base/buffer.h"
#include "crypto/crypto.h"
#include "crypto/merkle.h"

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
	consensus_body_fn body; /* where the body goes, piece by piece (body.c) */
	void *body_context;
	struct consensus_result *result;   /* method, previous and counting_votes already set */
	struct consensus_failure *failure; /* never NULL here */
};

struct consensus_method {
	uint64_t number;
	const char *summary;
	/* Fills run->result's record count, header and header_text, and writes the body through
	 * run->body (body.c). On a refusal sets
	 * run->failure (consensus_run_fail) and returns its code; the caller clears the result. */
	int (*compute)(struct consensus_run *run);
};

/* Records outcome and cause in run->failure and returns the outcome's dirauth_error. */
int consensus_run_fail(struct consensus_run *run, enum consensus_outcome outcome, int cause);

/* Method 1: registrations only (registrations.c). */
int consensus_registrations_compute(struct consensus_run *run);

/* One counting vote's record lines as the merge reads them: from its body's array, or through the
 * caller's lines (consensus_record_lines), in ascending order; each line is checked as it is read
 * (sequence >= 1, service ids strictly ascending), which is how a vote read through lines is
 * judged. */
struct consensus_line_cursor {
	const struct consensus_vote *vote;
	size_t vote_index; /* into run->votes, for a refusal that names it */
	size_t next;       /* the index of the line current holds, when loaded */
	int loaded;        /* current holds line next */
	struct vote_body_record current;
};

/* Method 1's step (d), which method 2 shares: the merge of the counting votes' lines, giving the
 * chosen version of each service (the k-th of the counting votes' versions), ascending by
 * service id. A computation walks it twice, once to judge and count what it chooses and once to
 * write it, and keeps none of it between the walks: the walks choose the same versions, in the
 * same order, because the rule is a function of the lines. */
struct consensus_choice {
	struct consensus_line_cursor cursors[CONSENSUS_AUTHORITIES_MAX];
	size_t count;  /* counting votes */
	size_t chosen; /* versions given so far */
};

/* Starts a walk of the chosen versions. */
void consensus_choice_begin(struct consensus_run *run, struct consensus_choice *choice);

/* The next chosen version: 1 with *version set, 0 after the last, or a refusal set through
 * consensus_run_fail (TOO_MANY_RECORDS past max_records; BAD_VOTE for an ill-formed line read
 * through a vote's lines; FAILED when the lines cannot be read). */
int consensus_choice_next(struct consensus_run *run, struct consensus_choice *choice,
                          struct vote_body_record *version);

/* Names version and the first counting vote that holds it in run->failure, and refuses with
 * outcome and cause (consensus_run_fail). */
int consensus_note_fail(struct consensus_run *run, const struct vote_body_record *version,
                        enum consensus_outcome outcome, int cause);

/* Method 2: registrations, health and revocations (statements.c). */
int consensus_lifecycle_compute(struct consensus_run *run);

/* Calls run->note for a chosen version and checks what it gives: present, within
 * REGISTRATION_MAX_BYTES, hashing to the version's digest. Returns 0 with *note and *note_len set,
 * or a refusal (NOTE_MISSING, NOTE_REFUSED, FAILED) set through consensus_run_fail. */
int consensus_note_take(struct consensus_run *run, const struct vote_body_record *version,
                        const uint8_t **note, size_t *note_len);

/* The body being written (body.c): what the header needs of the bytes gone by. */
struct consensus_body_writer {
	struct consensus_run *run;
	struct buffer line;                  /* the line being written */
	struct crypto_sha256_stream *sha256; /* over every byte written */
	struct merkle_builder tree;          /* over the record notes */
	uint64_t size;                       /* bytes written */
	uint64_t records;                    /* records written */
};

/* Each writes its piece to run->body after checking that the body stays within max_body_bytes,
 * and returns 0 or a refusal set through consensus_run_fail (BODY_TOO_LARGE: the bound, or a note
 * over its document's bound; FAILED: the writer's or the hash's failure). begin writes the head
 * for record_count records; record a record's line, its note and Merkle leaf; section a section's
 * count line (nothing for a count of 0); health and revocation an entry's line and note; write
 * any line and note (note may be NULL with note_len 0). */
int consensus_body_begin(struct consensus_run *run, struct consensus_body_writer *w, uint64_t record_count);
int consensus_body_write(struct consensus_body_writer *w, const uint8_t *line, size_t line_len,
                         const uint8_t *note, size_t note_len);
int consensus_body_record(struct consensus_body_writer *w, const uint8_t service_id[SERVICE_ID_SIZE],
                          const uint8_t *note, size_t note_len);
int consensus_body_section(struct consensus_body_writer *w, const char *keyword, size_t count);
int consensus_body_health(struct consensus_body_writer *w, const struct snapshot_health *entry);
int consensus_body_revocation(struct consensus_body_writer *w, const struct snapshot_revocation *entry);

/* The header of the body written: run->result's header (the params' namespace, origin, epoch and
 * times, the agreed previous, the method, and the body's record count, records root, size and
 * digest) and its text. Returns 0 or a FAILED refusal. */
int consensus_body_finish(struct consensus_body_writer *w);

/* Frees what the writer holds. Accepts a zeroed writer. */
void consensus_body_clear(struct consensus_body_writer *w);

#endif
