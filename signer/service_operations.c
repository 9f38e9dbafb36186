/*
 * service_operations.c: the signer's operation table: one row per operation of the protocol,
 * naming the key that signs it, whose statement it is, its time checks, its ledger rule and how
 * durable its audit line is; with the parser of each signed statement and the answer of each
 * query.
 *
 * The table is the only place the signer decides these, so an operation cannot skip a check:
 * at open it is checked against the protocol's table (signer_protocol/signer_protocol.h) and for the
 * checks no row may omit. A parser accepts only its statement's canonical text within its
 * bound, and gives the checks the facts they judge (struct service_statement); there is no
 * operation that signs raw bytes.
 */
#include "signer/service_internal.h"

#include "base/error.h"
#include "schema/names.h"

#include <string.h>

/* ---- parsing: the statement each signing operation names ---- */

/* The facts of a receipt of either kind: whose it is, when it was accepted, and the epoch it
 * promises (a receipt's publish-by, a deregistration receipt's last listed epoch). */
static void service_statement_of_receipt(struct service_statement *statement, const char *authority,
                                         const char *namespace_name, uint64_t accepted_at,
                                         uint64_t promised_epoch)
{
	statement->authority = authority;
	statement->namespace_name = namespace_name;
	statement->has_date = true;
	statement->date = accepted_at;
	statement->has_publish_by = true;
	statement->publish_by = promised_epoch;
}

static int service_parse_receipt(const struct signer_request *request, union service_parsed *parsed,
                                 struct service_statement *statement, struct signer_response *response)
{
	struct receipt *receipt = &parsed->receipt;
	if (request->text_len > RECEIPT_MAX_BYTES ||
	    receipt_parse(request->text, request->text_len, receipt) != 0)
		return signer_service_refuse(response, DIRAUTH_ERR_REFUSED,
		                             "the text is not a valid receipt");
	service_statement_of_receipt(statement, receipt->authority, receipt->namespace_name,
	                             receipt->accepted_at, receipt->publish_by_epoch);
	return 0;
}

static int service_parse_deregistration_receipt(const struct signer_request *request,
                                                union service_parsed *parsed,
                                                struct service_statement *statement,
                                                struct signer_response *response)
{
	struct deregistration_receipt *receipt = &parsed->deregistration_receipt;
	if (request->text_len > DEREGISTRATION_RECEIPT_MAX_BYTES ||
	    deregistration_receipt_parse(request->text, request->text_len, receipt) != 0)
		return signer_service_refuse(response, DIRAUTH_ERR_REFUSED,
		                             "the text is not a valid deregistration receipt");
	service_statement_of_receipt(statement, receipt->authority, receipt->namespace_name,
	                             receipt->accepted_at, receipt->last_listed_epoch);
	return 0;
}

static int service_parse_vote(const struct signer_request *request, union service_parsed *parsed,
                              struct service_statement *statement, struct signer_response *response)
{
	struct vote *vote = &parsed->vote;
	if (request->text_len > VOTE_MAX_BYTES || vote_parse(request->text, request->text_len, vote) != 0)
		return signer_service_refuse(response, DIRAUTH_ERR_REFUSED, "the text is not a valid vote");
	statement->authority = vote->authority;
	statement->namespace_name = vote->namespace_name;
	statement->origin = vote->origin;
	statement->has_epoch = true;
	statement->epoch = vote->epoch;
	return 0;
}

static int service_parse_header(const struct signer_request *request, union service_parsed *parsed,
                                struct service_statement *statement, struct signer_response *response)
{
	struct snapshot_header *header = &parsed->header;
	if (request->text_len > SNAPSHOT_HEADER_MAX_BYTES ||
	    snapshot_header_parse(request->text, request->text_len, header) != 0)
		return signer_service_refuse(response, DIRAUTH_ERR_REFUSED,
		                             "the text is not a valid snapshot header");
	statement->namespace_name = header->namespace_name;
	statement->origin = header->origin;
	statement->has_epoch = true;
	statement->epoch = header->epoch;
	statement->has_times = true;
	statement->times.valid_after = header->valid_after;
	statement->times.fresh_until = header->fresh_until;
	statement->times.valid_until = header->valid_until;
	statement->has_date = true;
	statement->date = header->valid_after;
	return 0;
}

static int service_parse_checkpoint(const struct signer_request *request, union service_parsed *parsed,
                                    struct service_statement *statement, struct signer_response *response)
{
	struct checkpoint *checkpoint = &parsed->checkpoint;
	if (request->text_len > CHECKPOINT_MAX_BYTES ||
	    checkpoint_parse(request->text, request->text_len, checkpoint) != 0)
		return signer_service_refuse(response, DIRAUTH_ERR_REFUSED,
		                             "the text is not a valid checkpoint");
	statement->origin = checkpoint->origin;
	statement->has_tree = true;
	statement->tree_size = checkpoint->tree_size;
	memcpy(statement->root, checkpoint->root, sizeof(statement->root));
	/* dirauth's checkpoints carry no extension lines; accepting them would let dirauthd have
	 * free text signed, and two different signed notes for one tree head. */
	if (checkpoint->extension_count != 0)
		return signer_service_refuse(response, DIRAUTH_ERR_REFUSED,
		                             "checkpoint extension lines are not signed");
	if (request->proof_count > MERKLE_MAX_PROOF)
		return signer_service_refuse(response, DIRAUTH_ERR_REFUSED,
		                             "the consistency proof is too long");
	return 0;
}

/* ---- queries ---- */

static int service_get_keys(struct signer_service *service, const struct signer_request *request,
                            struct service_request_state *state, struct signer_response *response,
                            struct buffer *payload)
{
	char key_text[NOTE_VERIFIER_KEY_MAX + 1];
	int rc;

	(void)request;
	(void)state;
	note_verifier_format(signer_key_verifier(service->signing_key), key_text);
	rc = buffer_appendf(payload, "signing-key %s\n", key_text);
	if (!rc && service->log_key) {
		note_verifier_format(signer_key_verifier(service->log_key), key_text);
		rc = buffer_appendf(payload, "log-key %s\n", key_text);
	}
	if (!rc && service->cosignature_key) {
		note_verifier_format(&service->cosignature_verifier, key_text);
		rc = buffer_appendf(payload, "cosignature-key %s\n", key_text);
	}
	if (rc)
		return signer_service_refuse(response, rc, "the key list cannot be built");
	return 0;
}

static int service_get_certificates(struct signer_service *service, const struct signer_request *request,
                                    struct service_request_state *state, struct signer_response *response,
                                    struct buffer *payload)
{
	(void)request;
	(void)state;
	int rc = buffer_append(payload, service->certificate_bundle.data, service->certificate_bundle.len);
	if (rc)
		return signer_service_refuse(response, rc, "the certificate bundle cannot be copied");
	return 0;
}

static int service_checkpoint_state(struct signer_service *service, const struct signer_request *request,
                                    struct service_request_state *state, struct signer_response *response,
                                    struct buffer *payload)
{
	static const struct {
		enum ledger_checkpoint_kind kind;
		const char *word;
	} kinds[] = {{LEDGER_CHECKPOINT_SIGNED, "signed"}, {LEDGER_CHECKPOINT_COSIGNED, "cosigned"}};

	if (!names_origin_is_valid((const char *)request->text, request->text_len))
		return signer_service_refuse(response, DIRAUTH_ERR_REFUSED,
		                             "the text is not a checkpoint origin");
	memcpy(state->origin, request->text, request->text_len);
	state->origin[request->text_len] = '\0';
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		uint64_t size;
		merkle_hash root;
		char root_text[45];
		pthread_mutex_lock(&service->ledger_lock);
		int rc = ledger_checkpoint_latest(service->ledger, kinds[i].kind, state->origin, &size, root);
		pthread_mutex_unlock(&service->ledger_lock);
		if (rc == DIRAUTH_ERR_NOT_FOUND)
			continue;
		if (rc == 0) {
			base64_encode(root, sizeof(root), root_text);
			rc = buffer_appendf(payload, "%s %llu %s\n", kinds[i].word, (unsigned long long)size,
			                    root_text);
		}
		if (rc)
			return signer_service_refuse(response, rc, "the checkpoint state cannot be read: %s",
			                             dirauth_strerror(rc));
	}
	return 0;
}

/* ---- the table ---- */

/* A receipt and a deregistration receipt are judged alike: a deregistration receipt's promise,
 * the last epoch whose snapshot may list the service, is judged like a receipt's publish-by. */
#define SERVICE_RECEIPT_RULES                                                                                \
	.key = SERVICE_KEY_SIGNING, .scope = SERVICE_SCOPE_NAMESPACE,                                        \
	.time_checks =                                                                                       \
	    SERVICE_TIME_CERTIFICATE | SERVICE_TIME_DATED | SERVICE_TIME_RECENT | SERVICE_TIME_PUBLISH_BY,   \
	.ledger = SERVICE_LEDGER_NONE, .durable_audit = false

/* A receipt's line is handed to the system but not fsynced: the registration (or
 * deregistration) it answers is already durable in dirauthd's store and the receipt is with its
 * provider, so a power loss that drops the line loses no safety property, while an fsync per
 * receipt would halve the registration rate. Every statement the ledger guards is fsynced.
 *
 * Checkpoints carry no epoch and no time. A log gets one entry per published snapshot header of
 * its origin, so at most one per epoch: a checkpoint of a configured origin may not have more
 * entries than that origin's epochs begun by now plus the skew, which keeps one request from
 * spending the sizes of the log (a tree of 2^63 entries would leave no size to grow to). The
 * ledger's consistency rule does the rest. A cosignature is dated by the signer's own clock. */
static const struct service_operation service_operations[] = {
    {.operation = SIGNER_OP_SIGN_RECEIPT,
     .what = "receipt",
     SERVICE_RECEIPT_RULES,
     .parse = service_parse_receipt},
    {.operation = SIGNER_OP_SIGN_DEREGISTRATION_RECEIPT,
     .what = "deregistration receipt",
     SERVICE_RECEIPT_RULES,
     .parse = service_parse_deregistration_receipt},
    {.operation = SIGNER_OP_SIGN_VOTE,
     .what = "vote",
     .key = SERVICE_KEY_SIGNING,
     .scope = SERVICE_SCOPE_ORIGIN,
     .time_checks = SERVICE_TIME_CERTIFICATE | SERVICE_TIME_EPOCH,
     .ledger = SERVICE_LEDGER_EPOCH,
     .epoch_kind = LEDGER_VOTE,
     .durable_audit = true,
     .parse = service_parse_vote},
    {.operation = SIGNER_OP_SIGN_SNAPSHOT_HEADER,
     .what = "snapshot header",
     .key = SERVICE_KEY_SIGNING,
     .scope = SERVICE_SCOPE_ORIGIN,
     .time_checks =
         SERVICE_TIME_CERTIFICATE | SERVICE_TIME_EPOCH | SERVICE_TIME_EPOCH_TIMES | SERVICE_TIME_DATED,
     .ledger = SERVICE_LEDGER_EPOCH,
     .epoch_kind = LEDGER_SNAPSHOT_HEADER,
     .durable_audit = true,
     .parse = service_parse_header},
    {.operation = SIGNER_OP_SIGN_CHECKPOINT,
     .what = "checkpoint",
     .key = SERVICE_KEY_LOG,
     .scope = SERVICE_SCOPE_LOG,
     .time_checks = SERVICE_TIME_TREE_SIZE,
     .ledger = SERVICE_LEDGER_CHECKPOINT,
     .checkpoint_kind = LEDGER_CHECKPOINT_SIGNED,
     .durable_audit = true,
     .parse = service_parse_checkpoint},
    {.operation = SIGNER_OP_COSIGN_CHECKPOINT,
     .what = "cosigned checkpoint",
     .key = SERVICE_KEY_COSIGNATURE,
     .scope = SERVICE_SCOPE_ANY_LOG,
     .time_checks = SERVICE_TIME_TREE_SIZE,
     .ledger = SERVICE_LEDGER_CHECKPOINT,
     .checkpoint_kind = LEDGER_CHECKPOINT_COSIGNED,
     .durable_audit = true,
     .parse = service_parse_checkpoint},
    {.operation = SIGNER_OP_GET_KEYS, .what = "key list", .answer = service_get_keys},
    {.operation = SIGNER_OP_GET_CERTIFICATES,
     .what = "certificate bundle",
     .answer = service_get_certificates},
    {.operation = SIGNER_OP_CHECKPOINT_STATE, .what = "checkpoint state", .answer = service_checkpoint_state},
};

const struct service_operation *signer_service_operation_find(uint8_t operation)
{
	for (size_t i = 0; i < sizeof(service_operations) / sizeof(service_operations[0]); i++)
		if (service_operations[i].operation == operation)
			return &service_operations[i];
	return NULL;
}

/* The table must have a row for exactly the operations of the protocol, a signing row for each
 * one that signs, and in each row the checks its key and ledger rule cannot go without. Run at
 * open, so that a row added without them stops the signer before it signs anything. */
int signer_service_check_table(char *detail, size_t cap)
{
	for (unsigned operation = 0; operation <= UINT8_MAX; operation++) {
		const struct signer_operation_info *info = signer_operation_find((uint8_t)operation);
		const struct service_operation *row = signer_service_operation_find((uint8_t)operation);
		const char *problem = NULL;
		if (!info && !row)
			continue;
		if (!info || !row)
			problem = "is in one of the protocol's and the signer's tables only";
		else if (info->kind == SIGNER_OPERATION_SIGNS &&
		         (row->key == SERVICE_KEY_NONE || !row->parse || row->answer))
			problem = "signs, but has no key and parser";
		else if (info->kind == SIGNER_OPERATION_QUERIES &&
		         (row->key != SERVICE_KEY_NONE || !row->answer || row->parse ||
		          row->scope != SERVICE_SCOPE_NONE || row->time_checks ||
		          row->ledger != SERVICE_LEDGER_NONE))
			problem = "is a query, but signs or checks";
		else if (row->key == SERVICE_KEY_SIGNING && !(row->time_checks & SERVICE_TIME_CERTIFICATE))
			problem = "signs with the signing key without checking its certificate";
		else if (row->ledger == SERVICE_LEDGER_EPOCH &&
		         (row->scope != SERVICE_SCOPE_ORIGIN || !(row->time_checks & SERVICE_TIME_EPOCH)))
			problem = "records epochs without checking them against its origin's schedule";
		else if ((row->time_checks &
		          (SERVICE_TIME_EPOCH | SERVICE_TIME_EPOCH_TIMES | SERVICE_TIME_PUBLISH_BY)) &&
		         row->scope != SERVICE_SCOPE_ORIGIN && row->scope != SERVICE_SCOPE_NAMESPACE)
			problem = "checks epochs without a namespace to take the schedule from";
		else if ((row->scope == SERVICE_SCOPE_LOG || row->scope == SERVICE_SCOPE_ANY_LOG) &&
		         (row->ledger != SERVICE_LEDGER_CHECKPOINT ||
		          !(row->time_checks & SERVICE_TIME_TREE_SIZE)))
			problem = "signs a log's checkpoint without the checkpoint rules";
		if (problem) {
			signer_service_detail(detail, cap, "the signer's operation %u %s", operation,
			                      problem);
			return DIRAUTH_ERR_INTERNAL;
		}
	}
	return 0;
}
