/*
 * service_checks.c: the checks a signing request meets after its statement is parsed, in the
 * order it meets them: whose statement it is (a configured namespace or origin, the log key's
 * own log, any log), its times by the signer's own clock and schedules, and last the ledger.
 *
 * Which checks apply is the operation's row (service_operations.c); this file only runs them.
 * A check whose facts the statement's parser did not give cannot run, and denies: an operation
 * whose parser forgot a field is refused, never waved through. The ledger record comes last and
 * under the ledger's lock, so of two requests for one (origin, epoch) or one log the second sees
 * what the first recorded; it is durable before anything is signed.
 */
#include "signer/service_internal.h"

#include "crypto/crypto.h"
#include "base/error.h"
#include "schedule/schedule.h"

#include <string.h>

/* The sentence for a ledger refusal. */
static int service_ledger_refusal(struct signer_response *response, int rc, const char *what,
                                  const struct service_request_state *state)
{
	switch (rc) {
	case DIRAUTH_ERR_ROLLBACK:
		if (state->has_epoch)
			return signer_service_refuse(
			    response, rc, "%s for %.255s epoch %llu is below the highest epoch signed", what,
			    state->origin, (unsigned long long)state->epoch);
		return signer_service_refuse(response, rc, "%s for %.255s is smaller than the latest one",
		                             what, state->origin);
	case DIRAUTH_ERR_COLLISION:
		if (state->has_epoch)
			return signer_service_refuse(
			    response, rc,
			    "a different %s for %.255s epoch %llu is already signed: refusing to "
			    "equivocate",
			    what, state->origin, (unsigned long long)state->epoch);
		return signer_service_refuse(
		    response, rc,
		    "a different %s of the same size for %.255s is already signed: refusing to "
		    "equivocate",
		    what, state->origin);
	case DIRAUTH_ERR_MISMATCH:
		return signer_service_refuse(
		    response, rc,
		    "old_size does not match the size of the latest %s for %.255s (ask "
		    "checkpoint-state)",
		    what, state->origin);
	case DIRAUTH_ERR_PROOF:
		return signer_service_refuse(
		    response, rc, "the consistency proof from the latest %s for %.255s does not verify", what,
		    state->origin);
	default:
		return signer_service_refuse(response, rc, "the ledger failed: %s", dirauth_strerror(rc));
	}
}

/* The statement must belong to the signer's configuration: *ns gets the namespace whose
 * schedule judges it (NULL only for a log the configuration does not name). */
int signer_service_check_scope(const struct signer_service *service, const struct service_operation *row,
                               const struct service_statement *statement, const struct signer_namespace **ns,
                               struct signer_response *response)
{
	*ns = NULL;
	switch (row->scope) {
	case SERVICE_SCOPE_NAMESPACE:
		*ns = signer_service_namespace_by_name(service, statement->namespace_name);
		if (!*ns)
			return signer_service_refuse(
			    response, DIRAUTH_ERR_REFUSED,
			    "the %s is for namespace %.64s, which is not in the signer's configuration",
			    row->what, statement->namespace_name ? statement->namespace_name : "-");
		return 0;
	case SERVICE_SCOPE_ORIGIN:
		*ns = signer_service_namespace_by_origin(service, statement->origin);
		if (!*ns)
			return signer_service_refuse(
			    response, DIRAUTH_ERR_REFUSED,
			    "the %s is for origin %.255s, which no namespace of the signer's "
			    "configuration has",
			    row->what, statement->origin ? statement->origin : "-");
		if (!statement->namespace_name || strcmp((*ns)->name, statement->namespace_name) != 0)
			return signer_service_refuse(
			    response, DIRAUTH_ERR_REFUSED,
			    "the %s names namespace %.64s, but origin %.255s is namespace %s in the signer's "
			    "configuration",
			    row->what, statement->namespace_name ? statement->namespace_name : "-",
			    (*ns)->origin, (*ns)->name);
		return 0;
	case SERVICE_SCOPE_LOG: {
		const struct note_verifier *log = signer_key_verifier(service->log_key);
		if (!statement->origin || strcmp(statement->origin, log->name) != 0)
			return signer_service_refuse(
			    response, DIRAUTH_ERR_REFUSED,
			    "the checkpoint's origin %.128s is not the log key's name %s",
			    statement->origin ? statement->origin : "-", log->name);
		*ns = signer_service_namespace_by_origin(service, statement->origin);
		if (!*ns)
			return signer_service_refuse(response, DIRAUTH_ERR_INTERNAL,
			                             "the log key's origin %s is not configured", log->name);
		return 0;
	}
	case SERVICE_SCOPE_ANY_LOG:
		*ns = signer_service_namespace_by_origin(service, statement->origin);
		return 0;
	case SERVICE_SCOPE_NONE:
	default:
		return 0;
	}
}

/* The signing key's certificate must be valid at the moment of signing, not only at start. */
static int service_check_certificate(const struct signer_service *service, uint64_t now,
                                     struct signer_response *response)
{
	if (now < service->certificate.valid_after)
		return signer_service_refuse(
		    response, DIRAUTH_ERR_STALE,
		    "the signing key's certificate is not valid until %llu (now %llu)",
		    (unsigned long long)service->certificate.valid_after, (unsigned long long)now);
	if (now >= service->certificate.valid_until)
		return signer_service_refuse(
		    response, DIRAUTH_ERR_STALE, "the signing key's certificate expired at %llu (now %llu)",
		    (unsigned long long)service->certificate.valid_until, (unsigned long long)now);
	return 0;
}

/* now plus the skew, saturating: a clock file may say anything. */
static uint64_t service_latest_time(const struct signer_service *service, uint64_t now)
{
	return now > UINT64_MAX - service->clock_skew ? UINT64_MAX : now + service->clock_skew;
}

/* The latest moment whose epoch ns may be preparing: now plus the skew, plus the namespace's
 * prepare_seconds (the snapshot of an epoch is voted on and signed that long before it begins). */
static uint64_t service_prepared_time(const struct signer_service *service, const struct signer_namespace *ns,
                                      uint64_t now)
{
	uint64_t latest = service_latest_time(service, now);
	uint64_t prepare = ns ? ns->schedule.prepare : 0;
	return latest > UINT64_MAX - prepare ? UINT64_MAX : latest + prepare;
}

/* The epoch of a vote or header must be a current one of its origin's schedule by the signer's
 * own clock: one that contains a moment within the skew of now, or, when the namespace's
 * snapshots are prepared before their epoch (prepare_seconds), one whose preparation has begun
 * within the skew of now. A compromised dirauthd asking for a far epoch would otherwise make
 * every real epoch after it a rollback for ever. */
static int service_check_epoch(const struct signer_service *service, uint64_t now,
                               const struct service_operation *row, const struct signer_namespace *ns,
                               uint64_t epoch, struct signer_response *response)
{
	uint64_t earliest = now > service->clock_skew ? now - service->clock_skew : 0;
	uint64_t first = 0, last = 0;
	if (schedule_epoch_of(&ns->schedule, service_prepared_time(service, ns, now), &last) != 0)
		return signer_service_refuse(
		    response, DIRAUTH_ERR_STALE,
		    "the %s's epoch %llu of %.255s has not begun: no epoch has by the "
		    "signer's clock (now %llu, genesis %llu)",
		    row->what, (unsigned long long)epoch, ns->origin, (unsigned long long)now,
		    (unsigned long long)ns->schedule.genesis);
	if (schedule_epoch_of(&ns->schedule, earliest, &first) != 0)
		first = 0;
	if (epoch > last)
		return signer_service_refuse(
		    response, DIRAUTH_ERR_STALE,
		    "the %s's epoch %llu of %.255s has not begun by the signer's clock: "
		    "the latest epoch within %llu s of now (%llu) is %llu",
		    row->what, (unsigned long long)epoch, ns->origin, (unsigned long long)service->clock_skew,
		    (unsigned long long)now, (unsigned long long)last);
	if (epoch < first)
		return signer_service_refuse(
		    response, DIRAUTH_ERR_STALE,
		    "the %s's epoch %llu of %.255s is over by the signer's clock: the "
		    "earliest epoch within %llu s of now (%llu) is %llu",
		    row->what, (unsigned long long)epoch, ns->origin, (unsigned long long)service->clock_skew,
		    (unsigned long long)now, (unsigned long long)first);
	return 0;
}

/* A header's times are its epoch's by the schedule, to the second: no other valid-after,
 * fresh-until or valid-until is ever signed for that epoch. */
static int service_check_epoch_times(const struct service_operation *row, const struct signer_namespace *ns,
                                     const struct service_statement *statement,
                                     struct signer_response *response)
{
	struct epoch_times expected;
	if (schedule_epoch_times(&ns->schedule, statement->epoch, &expected) != 0)
		return signer_service_refuse(
		    response, DIRAUTH_ERR_STALE,
		    "the %s's epoch %llu of %.255s has no times in the signer's schedule", row->what,
		    (unsigned long long)statement->epoch, ns->origin);
	if (statement->times.valid_after != expected.valid_after ||
	    statement->times.fresh_until != expected.fresh_until ||
	    statement->times.valid_until != expected.valid_until)
		return signer_service_refuse(
		    response, DIRAUTH_ERR_MISMATCH,
		    "the %s's times (valid-after %llu, fresh-until %llu, valid-until %llu) are not those "
		    "of epoch %llu of %.255s by the signer's schedule (%llu, %llu, %llu)",
		    row->what, (unsigned long long)statement->times.valid_after,
		    (unsigned long long)statement->times.fresh_until,
		    (unsigned long long)statement->times.valid_until, (unsigned long long)statement->epoch,
		    ns->origin, (unsigned long long)expected.valid_after,
		    (unsigned long long)expected.fresh_until, (unsigned long long)expected.valid_until);
	return 0;
}

/* A statement's own time must be now, give or take the clock skew (and, for a snapshot being
 * prepared, its namespace's prepare_seconds ahead), and inside the signing key's certificate:
 * otherwise a compromised dirauthd could have statements signed today that verifiers would count
 * tomorrow, after the compromise is over. */
static int service_check_dated(const struct signer_service *service, const struct signer_namespace *ns,
                               uint64_t now, uint64_t at, const char *what, struct signer_response *response)
{
	uint64_t latest = service_prepared_time(service, ns, now);
	if (at > latest)
		return signer_service_refuse(
		    response, DIRAUTH_ERR_STALE,
		    "the %s is dated %llu, more than %llu s after the signer's clock (%llu)", what,
		    (unsigned long long)at, (unsigned long long)(latest - now), (unsigned long long)now);
	if (at < service->certificate.valid_after)
		return signer_service_refuse(
		    response, DIRAUTH_ERR_STALE,
		    "the %s is dated %llu, before the signing key's certificate (valid after %llu)", what,
		    (unsigned long long)at, (unsigned long long)service->certificate.valid_after);
	return 0;
}

static int service_check_recent(const struct signer_service *service, uint64_t now, uint64_t at,
                                const char *what, struct signer_response *response)
{
	if (at < now && now - at > service->clock_skew)
		return signer_service_refuse(
		    response, DIRAUTH_ERR_STALE,
		    "the %s is dated %llu, more than %llu s before the signer's clock (%llu)", what,
		    (unsigned long long)at, (unsigned long long)service->clock_skew, (unsigned long long)now);
	return 0;
}

/* The latest epoch of ns begun (or being prepared) by now plus the skew; *begun is false before
 * genesis. */
static void service_latest_epoch(const struct signer_service *service, uint64_t now,
                                 const struct signer_namespace *ns, bool *begun, uint64_t *epoch)
{
	*epoch = 0;
	*begun = schedule_epoch_of(&ns->schedule, service_prepared_time(service, ns, now), epoch) == 0;
}

/* A receipt promises the epoch its registration is published by. dirauthd promises the epoch
 * after the current one (two after, when its clock failed), so a promise further out is no
 * promise a monitor could hold it to in time. */
static int service_check_publish_by(const struct signer_service *service, uint64_t now,
                                    const struct service_operation *row, const struct signer_namespace *ns,
                                    uint64_t publish_by, struct signer_response *response)
{
	bool begun;
	uint64_t latest;
	service_latest_epoch(service, now, ns, &begun, &latest);
	if (publish_by > latest + SIGNER_RECEIPT_EPOCHS_AHEAD)
		return signer_service_refuse(
		    response, DIRAUTH_ERR_STALE,
		    "the %s promises epoch %llu of namespace %s, more than %d epochs past "
		    "epoch %llu, the latest begun by the signer's clock within %llu s",
		    row->what, (unsigned long long)publish_by, ns->name, SIGNER_RECEIPT_EPOCHS_AHEAD,
		    (unsigned long long)latest, (unsigned long long)service->clock_skew);
	return 0;
}

static int service_check_tree_size(const struct signer_service *service, uint64_t now,
                                   const struct service_operation *row, const struct signer_namespace *ns,
                                   uint64_t tree_size, struct signer_response *response)
{
	bool begun;
	uint64_t latest;
	if (!ns)
		return 0; /* another operator's log: its schedule is not the signer's to know */
	service_latest_epoch(service, now, ns, &begun, &latest);
	uint64_t most = begun ? latest + 1 : 0;
	if (tree_size > most)
		return signer_service_refuse(
		    response, DIRAUTH_ERR_STALE,
		    "the %s of %.255s has %llu entries, more than the %llu epochs of its "
		    "schedule begun by the signer's clock within %llu s (one entry per "
		    "epoch)",
		    row->what, ns->origin, (unsigned long long)tree_size, (unsigned long long)most,
		    (unsigned long long)service->clock_skew);
	return 0;
}

/* Runs the time checks the row names, in a fixed order. A check whose facts the parser did not
 * give cannot run, and denies. */
int signer_service_check_times(const struct signer_service *service, uint64_t now,
                               const struct service_operation *row, const struct signer_namespace *ns,
                               const struct service_statement *statement, struct signer_response *response)
{
	unsigned checks = row->time_checks;
	int rc = 0;
	if ((checks & (SERVICE_TIME_EPOCH | SERVICE_TIME_EPOCH_TIMES)) && (!ns || !statement->has_epoch))
		return signer_service_refuse(response, DIRAUTH_ERR_INTERNAL, "the %s has no epoch to check",
		                             row->what);
	if ((checks & SERVICE_TIME_EPOCH_TIMES) && !statement->has_times)
		return signer_service_refuse(response, DIRAUTH_ERR_INTERNAL, "the %s has no times to check",
		                             row->what);
	if ((checks & (SERVICE_TIME_DATED | SERVICE_TIME_RECENT)) && !statement->has_date)
		return signer_service_refuse(response, DIRAUTH_ERR_INTERNAL, "the %s has no date to check",
		                             row->what);
	if ((checks & SERVICE_TIME_PUBLISH_BY) && (!ns || !statement->has_publish_by))
		return signer_service_refuse(response, DIRAUTH_ERR_INTERNAL, "the %s has no promise to check",
		                             row->what);
	if ((checks & SERVICE_TIME_TREE_SIZE) && !statement->has_tree)
		return signer_service_refuse(response, DIRAUTH_ERR_INTERNAL, "the %s has no size to check",
		                             row->what);

	if (checks & SERVICE_TIME_CERTIFICATE)
		rc = service_check_certificate(service, now, response);
	if (rc == 0 && (checks & SERVICE_TIME_EPOCH))
		rc = service_check_epoch(service, now, row, ns, statement->epoch, response);
	if (rc == 0 && (checks & SERVICE_TIME_EPOCH_TIMES))
		rc = service_check_epoch_times(row, ns, statement, response);
	if (rc == 0 && (checks & SERVICE_TIME_RECENT))
		rc = service_check_recent(service, now, statement->date, row->what, response);
	if (rc == 0 && (checks & SERVICE_TIME_DATED))
		rc = service_check_dated(service, ns, now, statement->date, row->what, response);
	if (rc == 0 && (checks & SERVICE_TIME_PUBLISH_BY))
		rc = service_check_publish_by(service, now, row, ns, statement->publish_by, response);
	if (rc == 0 && (checks & SERVICE_TIME_TREE_SIZE))
		rc = service_check_tree_size(service, now, row, ns, statement->tree_size, response);
	return rc;
}

/* Checks and records the statement in the ledger, under the ledger's lock: of two requests for
 * one (origin, epoch) or one log, the second sees what the first recorded. The record is
 * durable when this returns 0. */
int signer_service_record(struct signer_service *service, const struct service_operation *row,
                          const struct signer_request *request, const struct service_statement *statement,
                          const struct service_request_state *state, struct signer_response *response)
{
	uint8_t digest[CRYPTO_SHA256_SIZE];
	int rc = 0;
	switch (row->ledger) {
	case SERVICE_LEDGER_EPOCH:
		rc = crypto_sha256(request->text, request->text_len, digest);
		if (rc)
			return signer_service_refuse(response, rc, "hashing failed");
		pthread_mutex_lock(&service->ledger_lock);
		rc = ledger_record_epoch(service->ledger, row->epoch_kind, statement->origin,
		                         statement->epoch, digest);
		pthread_mutex_unlock(&service->ledger_lock);
		break;
	case SERVICE_LEDGER_CHECKPOINT:
		pthread_mutex_lock(&service->ledger_lock);
		/* Another operator's log takes a record for ever: their number is bounded, so that the
		 * ledger keeps room for this signer's own namespaces. */
		if (!signer_service_namespace_by_origin(service, statement->origin) &&
		    (rc =
		         ledger_checkpoint_room(service->ledger, statement->origin, SIGNER_OTHER_LOGS_MAX))) {
			pthread_mutex_unlock(&service->ledger_lock);
			return signer_service_refuse(
			    response, rc,
			    rc == DIRAUTH_ERR_FULL
			        ? "the ledger already holds the checkpoints of %d logs that no "
			          "namespace of this signer names"
			        : "the ledger could not be read (%d logs at most)",
			    SIGNER_OTHER_LOGS_MAX);
		}
		rc = ledger_record_checkpoint(service->ledger, row->checkpoint_kind, statement->origin,
		                              statement->tree_size, statement->root, request->old_size,
		                              request->proof, request->proof_count);
		pthread_mutex_unlock(&service->ledger_lock);
		break;
	case SERVICE_LEDGER_NONE:
	default:
		return 0;
	}
	if (rc)
		return service_ledger_refusal(response, rc, row->what, state);
	return 0;
}
