/*
 * kinds.h: the kinds of signed statement intake takes, and where a statement comes from.
 *
 * Each kind is one entry of intake's table (pending.h, struct intake_kind): how it is bounded,
 * parsed, authorized and checked, which store table operation keeps it, and how it is answered
 * or receipted. Every way a statement arrives goes through its entry: a provider's or an
 * operator's post (submit.h, statements.h), a note fetched from another authority (peer.h), and
 * the store's committer, which applies the entry's store operation.
 */
#ifndef DIRAUTH_SERVER_INTAKE_KINDS_H
#define DIRAUTH_SERVER_INTAKE_KINDS_H

/* The kinds, in the order notes from peers are best taken: registrations before the statements
 * about them. */
enum intake_kind_id {
	INTAKE_REGISTRATION,
	INTAKE_HEALTH,
	INTAKE_REVOCATION,
	INTAKE_DEREGISTRATION,
	INTAKE_KIND_COUNT,
};

/* Where a statement comes from; what that changes is said once (pending.h, struct
 * intake_source_rules). */
enum intake_source {
	INTAKE_FROM_PROVIDER, /* posted to this authority by a provider or an operator */
	INTAKE_FROM_PEER,     /* held by another authority and learned from it */
};

#endif
