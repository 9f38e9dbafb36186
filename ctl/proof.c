/*
 * proof.c: the log's pins, a checkpoint and an inclusion against them, an offline proof file
 * judged whole, and one downloaded (see proof.h).
 *
 * The order of the checks is the point, as in fetch.c: nothing the proof file says is believed
 * before what vouches for it verified. The header inside the file is judged by the trust bundle
 * first, so that a refusal says whether the authorities or the log failed; the checkpoint then by
 * the log's pins; the inclusion last, of the header's text, never of anything the file claims
 * the leaf is.
 */
#include "ctl/proof.h"

#include "ctl/client.h"
#include "ctl/exchange.h"
#include "ctl/files.h"
#include "net/client.h"
#include "schema/certificate.h"
#include "schema/checkpoint.h"
#include "schema/encoding.h"
#include "base/error.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ctl_log_pins_parse(const char *command, const char *const *log_keys, size_t log_key_count,
                       const char *const *witness_keys, size_t count, const char *threshold_text,
                       size_t default_quorum, struct ctl_log_pins *out, struct ctl_report *report)
{
	uint64_t quorum = default_quorum;

	memset(out, 0, sizeof(*out));
	if (log_key_count == 0) {
		if (count > 0 || threshold_text != NULL) {
			ctl_report_fail(report, CTL_EXIT_USAGE, "%s: %s needs --log-key", command,
			                count > 0 ? "--witness-key" : "--witness-threshold");
			return DIRAUTH_ERR_CONFIG;
		}
		return 0;
	}
	if (log_key_count > CTL_LOG_KEYS_MAX) {
		ctl_report_fail(report, CTL_EXIT_USAGE, "%s: --log-key: at most %d log keys", command,
		                CTL_LOG_KEYS_MAX);
		return DIRAUTH_ERR_CONFIG;
	}
	if (count > CTL_LOG_WITNESSES_MAX) {
		ctl_report_fail(report, CTL_EXIT_USAGE, "%s: --witness-key: at most %d witnesses", command,
		                CTL_LOG_WITNESSES_MAX);
		return DIRAUTH_ERR_CONFIG;
	}
	if (threshold_text != NULL && decimal_parse(threshold_text, strlen(threshold_text), &quorum) != 0) {
		ctl_report_fail(report, CTL_EXIT_USAGE, "%s: --witness-threshold: expected a decimal",
		                command);
		return DIRAUTH_ERR_CONFIG;
	}
	for (size_t i = 0; i < log_key_count; i++) {
		struct note_verifier *key = &out->log_keys[i];
		if (note_verifier_parse(log_keys[i], strlen(log_keys[i]), key) != 0) {
			ctl_report_fail(
			    report, CTL_EXIT_CONFIG,
			    "%s: --log-key: '%.200s' is not an Ed25519 verifier key (NAME+KEYID+BASE64)",
			    command, log_keys[i]);
			return DIRAUTH_ERR_CONFIG;
		}
		for (size_t j = 0; j < i; j++) {
			if (memcmp(out->log_keys[j].public_key, key->public_key, sizeof(key->public_key)) ==
			    0) {
				ctl_report_fail(report, CTL_EXIT_CONFIG,
				                "%s: --log-key %s+%08" PRIx32 " given twice", command,
				                key->name, key->key_id);
				return DIRAUTH_ERR_CONFIG;
			}
		}
	}
	for (size_t i = 0; i < count; i++) {
		struct note_verifier *witness = &out->witnesses[i];
		if (cosignature_verifier_parse(witness_keys[i], strlen(witness_keys[i]), witness) != 0) {
			ctl_report_fail(report, CTL_EXIT_CONFIG,
			                "%s: --witness-key: '%.200s' is not a cosignature verifier key (type "
			                "0x04, NAME+KEYID+BASE64)",
			                command, witness_keys[i]);
			return DIRAUTH_ERR_CONFIG;
		}
		/* One key counts once whatever its names (hard rule 10): two is a mistake to see. */
		for (size_t j = 0; j < i; j++) {
			if (memcmp(out->witnesses[j].public_key, witness->public_key,
			           sizeof(witness->public_key)) == 0) {
				ctl_report_fail(report, CTL_EXIT_CONFIG,
				                "%s: --witness-key %s: the key of witness %s given again",
				                command, witness->name, out->witnesses[j].name);
				return DIRAUTH_ERR_CONFIG;
			}
		}
	}
	if (quorum > count && threshold_text != NULL) {
		ctl_report_fail(report, CTL_EXIT_CONFIG,
		                "%s: --witness-threshold %" PRIu64
		                " is more than the %zu --witness-key given",
		                command, quorum, count);
		return DIRAUTH_ERR_CONFIG;
	}
	if (quorum > count) {
		ctl_report_fail(
		    report, CTL_EXIT_CONFIG,
		    "%s: by default the checkpoint must be cosigned by the trust bundle's threshold "
		    "(%" PRIu64 ") of witnesses, but %zu --witness-key given: give the witnesses' "
		    "keys, or --witness-threshold",
		    command, quorum, count);
		return DIRAUTH_ERR_CONFIG;
	}
	out->enabled = 1;
	out->log_key_count = log_key_count;
	out->witness_count = count;
	out->quorum = (size_t)quorum;
	return 0;
}

/* The checkpoint's refusal in words, with its exit status. */
static int checkpoint_refused(const char *what, int rc, const struct ctl_log_pins *pins,
                              const struct tlog_proof *proof, const char *origin, size_t cosigned,
                              struct ctl_report *report)
{
	switch (rc) {
	case DIRAUTH_ERR_CONFIG:
		ctl_report_fail(report, CTL_EXIT_CONFIG, "%s: checkpoint: the log's pins cannot be met",
		                what);
		break;
	case DIRAUTH_ERR_MISMATCH:
		ctl_report_fail(report, CTL_EXIT_DATA,
		                "%s: checkpoint: of the log '%s', not of the namespace's log '%s'", what,
		                proof->checkpoint.origin, origin);
		break;
	case DIRAUTH_ERR_SIGNATURE:
		ctl_report_fail(report, CTL_EXIT_DATA,
		                "%s: checkpoint: a signature by the log key or a pinned witness does not "
		                "verify",
		                what);
		break;
	case DIRAUTH_ERR_UNKNOWN_KEY:
		ctl_report_fail(report, CTL_EXIT_DATA,
		                "%s: checkpoint: signed by none of the %zu pinned log keys", what,
		                pins->log_key_count);
		break;
	case DIRAUTH_ERR_THRESHOLD:
		ctl_report_fail(report, CTL_EXIT_DATA,
		                "%s: checkpoint: cosigned by %zu of the %zu pinned witnesses, %zu required",
		                what, cosigned, pins->witness_count, pins->quorum);
		break;
	case DIRAUTH_ERR_NOMEM:
	case DIRAUTH_ERR_CRYPTO:
		ctl_report_fail(report, CTL_EXIT_SOFTWARE, "%s: checkpoint: cannot verify: %s", what,
		                dirauth_strerror(rc));
		break;
	default:
		ctl_report_fail(report, CTL_EXIT_DATA, "%s: checkpoint: not a checkpoint: %s", what,
		                dirauth_strerror(rc));
		break;
	}
	return rc;
}

int ctl_log_check_inclusion(const char *what, const struct ctl_log_pins *pins, const char *origin,
                            const struct tlog_proof *proof, const uint8_t *leaf, size_t leaf_len,
                            struct ctl_log_inclusion *out, struct ctl_report *report)
{
	struct checkpoint checkpoint;
	size_t cosigned = 0;
	int rc;

	memset(out, 0, sizeof(*out));
	if (!pins->enabled) {
		ctl_report_fail(report, CTL_EXIT_SOFTWARE, "%s: no log key pinned", what);
		return DIRAUTH_ERR_INTERNAL;
	}
	/* A log key's name is the origin (tlog/tlog.md): another is another log's key. */
	rc = ctl_client_log_pins_fit(what, pins, origin, report);
	if (rc != 0)
		return rc;
	/* Signed by one of the authorities' log keys: the one whose line is there decides. A key
	 * that did not sign says nothing; any other answer is the checkpoint's. */
	rc = DIRAUTH_ERR_UNKNOWN_KEY;
	for (size_t i = 0; i < pins->log_key_count && rc == DIRAUTH_ERR_UNKNOWN_KEY; i++) {
		struct tlog_policy policy = {origin, &pins->log_keys[i], pins->witnesses, pins->witness_count,
		                             pins->quorum};
		cosigned = 0;
		rc = tlog_checkpoint_verify(proof->note, &policy, &checkpoint, NULL, &cosigned);
	}
	if (rc != 0)
		return checkpoint_refused(what, rc, pins, proof, origin, cosigned, report);
	rc = tlog_proof_verify_entry(proof, leaf, leaf_len);
	if (rc == DIRAUTH_ERR_PROOF) {
		ctl_report_fail(report, CTL_EXIT_DATA,
		                "%s: inclusion: the header is not entry %" PRIu64
		                " of the checkpoint's tree of %" PRIu64
		                " (the proof does not lead from its text to the checkpoint's root)",
		                what, proof->index, checkpoint.tree_size);
		return rc;
	}
	if (rc != 0) {
		ctl_report_fail(report, CTL_EXIT_SOFTWARE, "%s: inclusion: cannot verify: %s", what,
		                dirauth_strerror(rc));
		return rc;
	}
	out->index = proof->index;
	out->tree_size = checkpoint.tree_size;
	memcpy(out->root, checkpoint.root, MERKLE_HASH_SIZE);
	out->cosigned = cosigned;
	out->witness_count = pins->witness_count;
	out->quorum = pins->quorum;
	return 0;
}

/* The clock and state of a context that checks offline proofs only: neither is ever used. */
static uint64_t no_clock(void *user)
{
	(void)user;
	return 0;
}

static int no_state_read(void *user, const char *namespace_name, uint8_t *out, size_t cap, size_t *len)
{
	(void)user, (void)namespace_name, (void)out, (void)cap;
	*len = 0;
	return 0;
}

static int no_state_write(void *user, const char *namespace_name, const uint8_t *bytes, size_t len)
{
	(void)user, (void)namespace_name, (void)bytes, (void)len;
	return -1;
}

int ctl_proof_verify(const struct trust_bundle *bundle, const uint8_t *certificates, size_t certificates_len,
                     const struct ctl_log_pins *pins, const uint8_t *file, size_t len,
                     struct dirauth_proof_info *result, struct ctl_report *report)
{
	static const struct dirauth_callbacks callbacks = {
	    .now = no_clock, .state_read = no_state_read, .state_write = no_state_write};
	struct dirauth_context *context = NULL;
	struct dirauth_result outcome = {0};

	memset(result, 0, sizeof(*result));
	int rc = ctl_client_context_new("verify", bundle, NULL, pins, &callbacks, &context, report);
	if (rc != 0)
		return rc;
	enum dirauth_status status =
	    dirauth_verify_proof_file(context, certificates, certificates_len, file, len, result, &outcome);
	/* The header verified (its origin known): a log key named otherwise is a pin of another log,
	 * given by mistake, whatever the log then said. */
	if (result->origin[0] != '\0')
		rc = ctl_client_log_pins_fit("verify", pins, result->origin, report);
	if (rc == 0 && status != DIRAUTH_SUCCESS) {
		ctl_report_fail(report, ctl_client_exit_code(status), "verify: %s", outcome.detail);
		rc = status == DIRAUTH_E_NOMEM ? DIRAUTH_ERR_NOMEM : DIRAUTH_ERR_REFUSED;
	}
	dirauth_result_clear(&outcome);
	dirauth_context_free(context);
	return rc;
}

/* Reads a named input file, with its failure in report. */
static int read_input(const char *label, const char *path, size_t max_bytes, uint8_t **bytes, size_t *len,
                      struct ctl_report *report)
{
	const struct ctl_file_limit limit = {max_bytes, NULL, CTL_EXIT_DATA};
	return ctl_file_read_reported(path, &limit, bytes, len, report, "verify: %s %s", label, path);
}

int ctl_proof_verify_files(const struct trust_bundle *bundle, const char *certificates_path,
                           const struct ctl_log_pins *pins, const char *proof_path,
                           struct dirauth_proof_info *result, struct ctl_report *report)
{
	uint8_t *file = NULL, *certificates = NULL;
	size_t file_len = 0, certificates_len = 0;
	int rc;

	memset(result, 0, sizeof(*result));
	rc = read_input("proof", proof_path, TLOG_PROOF_MAX_BYTES, &file, &file_len, report);
	if (rc == 0)
		rc = read_input("certificates", certificates_path, CERTIFICATE_BUNDLE_MAX_BYTES,
		                &certificates, &certificates_len, report);
	if (rc == 0)
		rc = ctl_proof_verify(bundle, certificates, certificates_len, pins, file, file_len, result,
		                      report);
	free(file);
	free(certificates);
	return rc;
}

/* The proof file downloaded is one of namespace_name's epoch: a tlog-proof whose extra is a
 * header note of that namespace and epoch. */
static int check_downloaded(const char *what, const struct ctl_proof_download *options, const uint8_t *body,
                            size_t len, uint64_t *size, uint64_t *index, struct ctl_report *report)
{
	struct snapshot_header header;
	struct tlog_proof *proof = NULL;
	struct note *note = NULL;
	int rc = tlog_proof_parse(body, len, &proof);

	if (rc == 0 && proof->extra == NULL)
		rc = DIRAUTH_ERR_SYNTAX;
	if (rc == 0)
		rc = note_parse(proof->extra, proof->extra_len, &note);
	if (rc == 0)
		rc = snapshot_header_parse(note->text, note->text_len, &header);
	if (rc != 0) {
		ctl_report_fail(report, rc == DIRAUTH_ERR_NOMEM ? CTL_EXIT_SOFTWARE : CTL_EXIT_DATA,
		                "%s: the answer is not a tlog-proof file carrying a snapshot header: %s",
		                what, dirauth_strerror(rc));
	} else if (strcmp(header.namespace_name, options->namespace_name) != 0 ||
	           header.epoch != options->epoch) {
		rc = DIRAUTH_ERR_MISMATCH;
		ctl_report_fail(report, CTL_EXIT_DATA,
		                "%s: the proof carries the header of %s epoch %" PRIu64
		                ", not the one asked for",
		                what, header.namespace_name, header.epoch);
	} else {
		if (size != NULL)
			*size = proof->checkpoint.tree_size;
		if (index != NULL)
			*index = proof->index;
	}
	note_free(note);
	tlog_proof_free(proof);
	return rc;
}

int ctl_proof_download_run(const struct ctl_proof_download *options, uint64_t *size, uint64_t *index,
                           struct ctl_report *report)
{
	struct net_response response;
	struct buffer url;
	char what[NAMESPACE_NAME_MAX + 16];
	size_t base_len = ctl_exchange_url_length(options->server_url);
	int rc;

	snprintf(what, sizeof(what), "proof %s", options->namespace_name);
	if (ctl_file_exists(options->out_path)) {
		ctl_report_fail(report, CTL_EXIT_CANNOT_CREATE, "%s: %s exists; it is never overwritten",
		                what, options->out_path);
		return DIRAUTH_ERR_EXISTS;
	}
	net_response_init(&response);
	buffer_init(&url);
	rc = buffer_appendf(&url, "%.*s/v1/%s/log/proof/%" PRIu64, (int)base_len, options->server_url,
	                    options->namespace_name, options->epoch);
	if (rc != 0)
		ctl_report_fail(report, CTL_EXIT_USAGE, "%s: server URL too long", what);
	if (rc == 0)
		rc = ctl_exchange_get(what, "proof", (const char *)url.data, NULL, TLOG_PROOF_MAX_BYTES, 0,
		                      &response, report);
	if (rc == 0)
		rc = check_downloaded(what, options, response.body.data, response.body.len, size, index,
		                      report);
	if (rc == 0) {
		rc = ctl_file_create(options->out_path, response.body.data, response.body.len, 0644);
		if (rc != 0)
			ctl_report_fail(report, rc == DIRAUTH_ERR_IO ? CTL_EXIT_IO : CTL_EXIT_CANNOT_CREATE,
			                "%s: cannot write %s: %s", what, options->out_path,
			                dirauth_strerror(rc));
	}
	net_response_free(&response);
	buffer_free(&url);
	return rc;
}
