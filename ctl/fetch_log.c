/*
 * fetch_log.c: the log step of a fetch (see fetch_log.h).
 *
 * The header is already verified by the trust bundle when this runs, so the log is asked about
 * exactly that text: the proof's extra must be a note of the same text, and the inclusion is of
 * that text, never of anything the proof names. The held checkpoint is read back like the held
 * header: not verified again (it was when it was taken), but a file that does not parse denies.
 */
#include "ctl/fetch_log.h"

#include "ctl/exchange.h"
#include "ctl/files.h"
#include "net/client.h"
#include "schema/checkpoint.h"
#include "base/error.h"
#include "schema/note.h"
#include "tlog/consistency.h"
#include "tlog/proof.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PATH_CAPACITY 4096
#define WHAT_MAX      (NAMESPACE_NAME_MAX + 16)

void ctl_fetch_log_init(struct ctl_fetch_log *log)
{
	memset(log, 0, sizeof(*log));
	buffer_init(&log->proof);
	buffer_init(&log->checkpoint);
}

void ctl_fetch_log_free(struct ctl_fetch_log *log)
{
	if (log == NULL)
		return;
	buffer_free(&log->proof);
	buffer_free(&log->checkpoint);
}

static int join_path(char *out, size_t cap, const char *directory, const char *namespace_name,
                     const char *name)
{
	int n = name != NULL ? snprintf(out, cap, "%s/%s/%s", directory, namespace_name, name)
	                     : snprintf(out, cap, "%s/%s", directory, namespace_name);
	return n < 0 || (size_t)n >= cap ? DIRAUTH_ERR_BOUNDS : 0;
}

static const struct ctl_file_limit held_checkpoint_limit = {TLOG_PROOF_NOTE_MAX, "a checkpoint note",
                                                            CTL_EXIT_DATA};

/* The held checkpoint, parsed; *held 0 when the mirror holds none. */
static int read_held(const char *what, const char *directory, const char *namespace_name, int *held,
                     struct checkpoint *checkpoint, struct ctl_report *report)
{
	char path[PATH_CAPACITY];
	uint8_t *bytes = NULL;
	struct note *note = NULL;
	size_t len = 0;
	int rc;

	*held = 0;
	if (join_path(path, sizeof(path), directory, namespace_name, CTL_FETCH_LOG_HELD) != 0) {
		ctl_report_fail(report, CTL_EXIT_CANNOT_CREATE, "%s: mirror directory path too long", what);
		return DIRAUTH_ERR_BOUNDS;
	}
	if (!ctl_file_exists(path))
		return 0;
	rc = ctl_file_read_reported(path, &held_checkpoint_limit, &bytes, &len, report,
	                            "%s: held checkpoint %s", what, path);
	if (rc != 0)
		return rc;
	rc = note_parse(bytes, len, &note);
	if (rc == 0)
		rc = checkpoint_parse(note->text, note->text_len, checkpoint);
	if (rc != 0)
		ctl_report_fail(report, rc == DIRAUTH_ERR_NOMEM ? CTL_EXIT_SOFTWARE : CTL_EXIT_DATA,
		                "%s: held checkpoint %s cannot be read back: %s", what, path,
		                dirauth_strerror(rc));
	else
		*held = 1;
	note_free(note);
	free(bytes);
	return rc;
}

/* Step 1 on a parsed proof: its extra is the fetched header's text, its checkpoint and the
 * inclusion of that text verify. */
static int check_proof(const char *what, const struct ctl_log_pins *pins,
                       const struct snapshot_header *header, const struct note *fetched,
                       const struct tlog_proof *proof, struct ctl_log_inclusion *inclusion,
                       struct ctl_report *report)
{
	struct note *carried = NULL;
	int rc =
	    proof->extra != NULL ? note_parse(proof->extra, proof->extra_len, &carried) : DIRAUTH_ERR_SYNTAX;

	if (rc == 0 && (carried->text_len != fetched->text_len ||
	                memcmp(carried->text, fetched->text, fetched->text_len) != 0))
		rc = DIRAUTH_ERR_MISMATCH;
	note_free(carried);
	if (rc != 0) {
		ctl_report_fail(report, rc == DIRAUTH_ERR_NOMEM ? CTL_EXIT_SOFTWARE : CTL_EXIT_DATA,
		                "%s: the proof of epoch %" PRIu64 " carries %s", what, header->epoch,
		                rc == DIRAUTH_ERR_MISMATCH ? "another header than the one fetched"
		                                           : "no header note");
		return rc;
	}
	return ctl_log_check_inclusion(what, pins, header->origin, proof, fetched->text, fetched->text_len,
	                               inclusion, report);
}

/* Step 2: the new checkpoint against the held one. */
static int check_consistency(const char *what, const struct checkpoint *held,
                             const struct ctl_log_inclusion *inclusion, ctl_fetch_log_consistency consistency,
                             void *context, struct ctl_report *report)
{
	merkle_hash proof[MERKLE_MAX_PROOF];
	struct buffer text;
	size_t proof_len = 0;
	int rc;

	if (inclusion->tree_size < held->tree_size) {
		ctl_report_fail(report, CTL_EXIT_DATA,
		                "%s: rollback: the server's checkpoint is of size %" PRIu64
		                ", this mirror holds one of size %" PRIu64,
		                what, inclusion->tree_size, held->tree_size);
		return DIRAUTH_ERR_ROLLBACK;
	}
	if (inclusion->tree_size == held->tree_size) {
		if (memcmp(inclusion->root, held->root, MERKLE_HASH_SIZE) == 0)
			return 0;
		ctl_report_fail(
		    report, CTL_EXIT_DATA,
		    "%s: inconsistent: the server's checkpoint of size %" PRIu64
		    " has another root than the one this mirror holds: the log shows two histories",
		    what, held->tree_size);
		return DIRAUTH_ERR_MISMATCH;
	}
	buffer_init(&text);
	rc = consistency(context, held->tree_size, inclusion->tree_size, &text, report);
	if (rc == 0) {
		rc = tlog_consistency_parse(text.data, text.len, proof, &proof_len);
		if (rc != 0)
			ctl_report_fail(report, CTL_EXIT_DATA,
			                "%s: consistency: the answer is not a consistency proof: %s", what,
			                dirauth_strerror(rc));
	}
	if (rc == 0) {
		rc = merkle_consistency_verify(held->tree_size, inclusion->tree_size, held->root,
		                               inclusion->root, proof, proof_len);
		if (rc == DIRAUTH_ERR_CRYPTO)
			ctl_report_fail(report, CTL_EXIT_SOFTWARE, "%s: consistency: cannot verify", what);
		else if (rc != 0)
			ctl_report_fail(report, CTL_EXIT_DATA,
			                "%s: inconsistent: the server's checkpoint of size %" PRIu64
			                " does not extend the one of size %" PRIu64
			                " this mirror holds (the consistency proof does not verify): the log "
			                "shows two histories",
			                what, inclusion->tree_size, held->tree_size);
	}
	buffer_free(&text);
	return rc;
}

int ctl_fetch_log_verify(const struct ctl_log_pins *pins, const char *directory,
                         const struct snapshot_header *header, const uint8_t *note, size_t note_len,
                         const uint8_t *proof_bytes, size_t proof_len, ctl_fetch_log_consistency consistency,
                         void *context, struct ctl_fetch_log *log, struct ctl_report *report)
{
	struct checkpoint held;
	struct tlog_proof *proof = NULL;
	struct note *fetched = NULL;
	char what[WHAT_MAX];
	int has_held = 0;
	int rc;

	log->checked = 0;
	if (pins == NULL || !pins->enabled)
		return 0;
	snprintf(what, sizeof(what), "fetch %s: log", header->namespace_name);
	rc = tlog_proof_parse(proof_bytes, proof_len, &proof);
	if (rc != 0) {
		ctl_report_fail(report, rc == DIRAUTH_ERR_NOMEM ? CTL_EXIT_SOFTWARE : CTL_EXIT_DATA,
		                "%s: the proof of epoch %" PRIu64 " is not a c2sp.org/tlog-proof file: %s",
		                what, header->epoch, dirauth_strerror(rc));
		return rc;
	}
	rc = note_parse(note, note_len, &fetched);
	if (rc != 0)
		ctl_report_fail(report, CTL_EXIT_SOFTWARE, "%s: the verified header does not parse again",
		                what);
	if (rc == 0)
		rc = check_proof(what, pins, header, fetched, proof, &log->inclusion, report);
	if (rc == 0)
		rc = read_held(what, directory, header->namespace_name, &has_held, &held, report);
	if (rc == 0 && has_held && strcmp(held.origin, header->origin) != 0) {
		ctl_report_fail(report, CTL_EXIT_DATA, "%s: the held checkpoint is of the log '%s', not '%s'",
		                what, held.origin, header->origin);
		rc = DIRAUTH_ERR_MISMATCH;
	}
	if (rc == 0 && has_held)
		rc = check_consistency(what, &held, &log->inclusion, consistency, context, report);
	if (rc == 0) {
		buffer_reset(&log->proof);
		buffer_reset(&log->checkpoint);
		if (buffer_append(&log->proof, proof_bytes, proof_len) != 0 ||
		    buffer_append(&log->checkpoint, proof->checkpoint_note, proof->checkpoint_note_len) !=
		        0) {
			ctl_report_fail(report, CTL_EXIT_SOFTWARE, "%s: out of memory", what);
			rc = DIRAUTH_ERR_NOMEM;
		}
	}
	if (rc == 0) {
		log->checked = 1;
		log->had_held = has_held;
		log->held_size = has_held ? held.tree_size : 0;
	}
	note_free(fetched);
	tlog_proof_free(proof);
	return rc;
}

/* The network half's source of consistency proofs. */
struct network {
	const char *const *headers;
	const char *what;
	const char *server_url;
	size_t base_len;
	const char *namespace_name;
};

static int download_consistency(void *context, uint64_t old_size, uint64_t new_size, struct buffer *out,
                                struct ctl_report *report)
{
	const struct network *network = context;
	struct net_response response;
	struct buffer url;
	int rc;

	net_response_init(&response);
	buffer_init(&url);
	rc = buffer_appendf(&url, "%.*s/v1/%s/log/consistency/%" PRIu64 "/%" PRIu64, (int)network->base_len,
	                    network->server_url, network->namespace_name, old_size, new_size);
	if (rc != 0)
		ctl_report_fail(report, CTL_EXIT_USAGE, "%s: server URL too long", network->what);
	if (rc == 0)
		rc = ctl_exchange_get(network->what, "consistency", (const char *)url.data, network->headers,
		                      TLOG_CONSISTENCY_MAX_BYTES, 0, &response, report);
	if (rc == 0 && buffer_append(out, response.body.data, response.body.len) != 0) {
		ctl_report_fail(report, CTL_EXIT_SOFTWARE, "%s: out of memory", network->what);
		rc = DIRAUTH_ERR_NOMEM;
	}
	net_response_free(&response);
	buffer_free(&url);
	return rc;
}

/* The stable code of a JSON error body, {"error":"<code>",...}, is code. */
static int error_code_is(const struct buffer *body, const char *code)
{
	char prefix[64];
	int n = snprintf(prefix, sizeof(prefix), "{\"error\":\"%s\"", code);
	return n > 0 && body->len >= (size_t)n && memcmp(body->data, prefix, (size_t)n) == 0;
}

int ctl_fetch_log_run(const struct ctl_log_pins *pins, const char *server_url, const char *authorization,
                      const char *directory, const struct snapshot_header *header, const uint8_t *note,
                      size_t note_len, struct ctl_fetch_log *log, struct ctl_report *report)
{
	const char *const headers[] = {authorization, NULL};
	struct network network;
	struct net_response response;
	struct buffer url;
	char what[WHAT_MAX];
	int rc;

	log->checked = 0;
	if (pins == NULL || !pins->enabled)
		return 0;
	snprintf(what, sizeof(what), "fetch %s: log", header->namespace_name);
	network.headers = headers;
	network.what = what;
	network.server_url = server_url;
	network.base_len = ctl_exchange_url_length(server_url);
	network.namespace_name = header->namespace_name;
	net_response_init(&response);
	buffer_init(&url);
	rc = buffer_appendf(&url, "%.*s/v1/%s/log/proof/%" PRIu64, (int)network.base_len, server_url,
	                    header->namespace_name, header->epoch);
	if (rc != 0)
		ctl_report_fail(report, CTL_EXIT_USAGE, "%s: server URL too long", what);
	if (rc == 0)
		rc = ctl_exchange_get(what, "proof", (const char *)url.data, headers, TLOG_PROOF_MAX_BYTES, 1,
		                      &response, report);
	if (rc == 0 && response.status == 404) {
		char description[CTL_REPORT_MAX / 2];
		net_describe_error(&response, description, sizeof(description));
		/* Published but not yet under a checkpoint: the log follows the publication. */
		if (error_code_is(&response.body, "epoch_not_in_log") ||
		    error_code_is(&response.body, "epoch_not_in_tree"))
			ctl_report_fail(report, CTL_EXIT_TEMPFAIL,
			                "%s: epoch %" PRIu64
			                " is not yet under a checkpoint of the server's log (%s); "
			                "try again later",
			                what, header->epoch, description);
		else
			ctl_report_fail(report, CTL_EXIT_PROTOCOL, "%s: proof: %s", what, description);
		rc = DIRAUTH_ERR_REFUSED;
	}
	if (rc == 0)
		rc = ctl_fetch_log_verify(pins, directory, header, note, note_len, response.body.data,
		                          response.body.len, download_consistency, &network, log, report);
	net_response_free(&response);
	buffer_free(&url);
	return rc;
}

int ctl_fetch_log_store(const char *directory, const char *namespace_name, uint64_t epoch,
                        const struct ctl_fetch_log *log, struct ctl_report *report)
{
	char namespace_directory[PATH_CAPACITY];
	char name[64];
	int rc;

	if (!log->checked)
		return 0;
	rc = join_path(namespace_directory, sizeof(namespace_directory), directory, namespace_name, NULL);
	if (rc == 0)
		rc = ctl_directory_create(namespace_directory);
	snprintf(name, sizeof(name), "%" PRIu64 CTL_FETCH_LOG_PROOF_FILE, epoch);
	if (rc == 0)
		rc = ctl_file_write_atomic(namespace_directory, name, log->proof.data, log->proof.len);
	/* Last: from here on the next fetch holds the log to this checkpoint. */
	if (rc == 0)
		rc = ctl_file_write_atomic(namespace_directory, CTL_FETCH_LOG_HELD, log->checkpoint.data,
		                           log->checkpoint.len);
	if (rc != 0)
		ctl_report_fail(report, rc == DIRAUTH_ERR_IO ? CTL_EXIT_IO : CTL_EXIT_CANNOT_CREATE,
		                "fetch %s: log: cannot write %s or %s in %s: %s", namespace_name, name,
		                CTL_FETCH_LOG_HELD, namespace_directory, dirauth_strerror(rc));
	return rc;
}
