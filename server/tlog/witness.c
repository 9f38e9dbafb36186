/*
 * witness.c: add-checkpoint (c2sp.org/tlog-witness): the request's codec, and this authority
 * judging, cosigning and recording the checkpoints the other authorities send (witness.h).
 *
 * The order of the checks is the spec's, and each refusal comes before anything changes: the
 * body, the origin, the log's signature, the sizes, the witness's tree head, the proof; only then
 * does the signer cosign, and the new tree head is recorded before the cosignature leaves. The
 * signer re-checks the consistency against its own ledger, so even a witness confused about its
 * state cannot make it cosign a fork.
 */
#include "server/tlog/witness.h"

#include "logline/logline.h"
#include "schema/encoding.h"
#include "base/error.h"
#include "server/store/tlog_table.h"
#include "server/tlog/translog.h"
#include "tlog/policy.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define EM_DASH     "\xe2\x80\x94"
#define OLD_LINE    "old "
#define HASH_LINE   45 /* 44 characters of base64 and '\n' */
#define DECIMAL_MAX 20

/* ---- the request ---- */

void translog_add_checkpoint_free(struct translog_add_checkpoint *request)
{
	if (!request)
		return;
	note_free(request->note);
	request->note = NULL;
}

int translog_add_checkpoint_parse(const uint8_t *body, size_t len, struct translog_add_checkpoint *out)
{
	memset(out, 0, sizeof *out);
	if (!body && len)
		return DIRAUTH_ERR_SYNTAX;
	if (len > TRANSLOG_ADD_CHECKPOINT_MAX)
		return DIRAUTH_ERR_BOUNDS;
	/* old <size>\n */
	size_t prefix = sizeof OLD_LINE - 1;
	if (len < prefix || memcmp(body, OLD_LINE, prefix) != 0)
		return DIRAUTH_ERR_SYNTAX;
	const uint8_t *end = memchr(body + prefix, '\n', len - prefix);
	size_t digits = end ? (size_t)(end - (body + prefix)) : 0;
	if (!end || digits == 0 || digits > DECIMAL_MAX ||
	    decimal_parse((const char *)body + prefix, digits, &out->old_size) != 0)
		return DIRAUTH_ERR_SYNTAX;
	size_t at = prefix + digits + 1;
	/* proof lines until the empty line */
	for (;;) {
		if (at >= len)
			return DIRAUTH_ERR_SYNTAX;
		if (body[at] == '\n') {
			at++;
			break;
		}
		if (out->proof_count == TRANSLOG_ADD_CHECKPOINT_PROOF_MAX)
			return DIRAUTH_ERR_BOUNDS;
		size_t decoded = 0;
		if (len - at < HASH_LINE || body[at + HASH_LINE - 1] != '\n' ||
		    base64_decode((const char *)body + at, HASH_LINE - 1, out->proof[out->proof_count],
		                  MERKLE_HASH_SIZE, &decoded) != 0 ||
		    decoded != MERKLE_HASH_SIZE)
			return DIRAUTH_ERR_SYNTAX;
		out->proof_count++;
		at += HASH_LINE;
	}
	/* the checkpoint note, in its one spelling */
	out->note_bytes = body + at;
	out->note_len = len - at;
	int rc = note_parse(out->note_bytes, out->note_len, &out->note);
	if (rc == 0 && checkpoint_parse(out->note->text, out->note->text_len, &out->checkpoint) != 0)
		rc = DIRAUTH_ERR_SYNTAX;
	if (rc == 0) {
		struct buffer again;
		buffer_init(&again);
		rc = note_format(out->note->text, out->note->text_len, out->note->signatures,
		                 out->note->signature_count, &again);
		if (rc == 0 &&
		    (again.len != out->note_len || memcmp(again.data, out->note_bytes, again.len) != 0))
			rc = DIRAUTH_ERR_SYNTAX;
		buffer_free(&again);
	}
	if (rc) {
		translog_add_checkpoint_free(out);
		memset(out, 0, sizeof *out);
		return rc == DIRAUTH_ERR_NOMEM ? rc : DIRAUTH_ERR_SYNTAX;
	}
	return 0;
}

int translog_add_checkpoint_encode(uint64_t old_size, const merkle_hash *proof, size_t proof_count,
                                   const uint8_t *note, size_t note_len, struct buffer *out)
{
	if (proof_count > TRANSLOG_ADD_CHECKPOINT_PROOF_MAX)
		return DIRAUTH_ERR_BOUNDS;
	struct buffer body;
	buffer_init(&body);
	int rc = buffer_appendf(&body, "old %llu\n", (unsigned long long)old_size);
	for (size_t i = 0; rc == 0 && i < proof_count; i++) {
		char line[HASH_LINE + 1];
		base64_encode(proof[i], MERKLE_HASH_SIZE, line);
		line[HASH_LINE - 1] = '\n';
		rc = buffer_append(&body, line, HASH_LINE);
	}
	if (rc == 0)
		rc = buffer_append(&body, "\n", 1);
	if (rc == 0)
		rc = buffer_append(&body, note, note_len);
	if (rc == 0 && body.len > TRANSLOG_ADD_CHECKPOINT_MAX)
		rc = DIRAUTH_ERR_BOUNDS;
	if (rc == 0) {
		/* Only what the parser takes back. */
		struct translog_add_checkpoint check;
		rc = translog_add_checkpoint_parse(body.data, body.len, &check);
		translog_add_checkpoint_free(&check);
	}
	if (rc == 0)
		rc = buffer_append(out, body.data, body.len);
	buffer_free(&body);
	return rc;
}

int translog_signature_line(const struct note_signature *signature, struct buffer *out)
{
	uint8_t bytes[4 + NOTE_SIGNATURE_MAX];
	char text[((4 + NOTE_SIGNATURE_MAX + 2) / 3) * 4 + 1];
	size_t name_len = strnlen(signature->name, NOTE_NAME_MAX + 1);
	if (name_len == 0 || name_len > NOTE_NAME_MAX || !note_name_is_valid(signature->name, name_len) ||
	    signature->signature_len > NOTE_SIGNATURE_MAX)
		return DIRAUTH_ERR_SYNTAX;
	bytes[0] = (uint8_t)(signature->key_id >> 24);
	bytes[1] = (uint8_t)(signature->key_id >> 16);
	bytes[2] = (uint8_t)(signature->key_id >> 8);
	bytes[3] = (uint8_t)signature->key_id;
	memcpy(bytes + 4, signature->signature, signature->signature_len);
	base64_encode(bytes, 4 + signature->signature_len, text);
	return buffer_appendf(out, EM_DASH " %s %s\n", signature->name, text);
}

/* ---- the witness ---- */

struct translog_witness {
	struct translog_witness_options options;
	pthread_mutex_t lock; /* one request judged, cosigned and recorded at a time */
};

int translog_witness_new(const struct translog_witness_options *options, struct translog_witness **out)
{
	*out = NULL;
	if (!options || !options->config || !options->store || !options->signer)
		return DIRAUTH_ERR_INTERNAL;
	struct translog_witness *w = calloc(1, sizeof *w);
	if (!w)
		return DIRAUTH_ERR_NOMEM;
	w->options = *options;
	if (pthread_mutex_init(&w->lock, NULL) != 0) {
		free(w);
		return DIRAUTH_ERR_NOMEM;
	}
	*out = w;
	return 0;
}

void translog_witness_free(struct translog_witness *witness)
{
	if (!witness)
		return;
	pthread_mutex_destroy(&witness->lock);
	free(witness);
}

void translog_witness_answer_init(struct translog_witness_answer *answer)
{
	memset(answer, 0, sizeof *answer);
	buffer_init(&answer->body);
}

void translog_witness_answer_free(struct translog_witness_answer *answer)
{
	if (answer)
		buffer_free(&answer->body);
}

static const unsigned outcome_status[] = {
    [TRANSLOG_WITNESS_COSIGNED] = 200,      [TRANSLOG_WITNESS_BAD_REQUEST] = 400,
    [TRANSLOG_WITNESS_BAD_SIGNATURE] = 403, [TRANSLOG_WITNESS_UNKNOWN_LOG] = 404,
    [TRANSLOG_WITNESS_CONFLICT] = 409,      [TRANSLOG_WITNESS_TOO_LARGE] = 413,
    [TRANSLOG_WITNESS_INCONSISTENT] = 422,  [TRANSLOG_WITNESS_UNAVAILABLE] = 503,
    [TRANSLOG_WITNESS_FAILED] = 500,
};

static void answer_set(struct translog_witness_answer *answer, enum translog_witness_outcome outcome,
                       const char *format, ...) __attribute__((format(printf, 3, 4)));
static void answer_set(struct translog_witness_answer *answer, enum translog_witness_outcome outcome,
                       const char *format, ...)
{
	va_list args;
	answer->outcome = outcome;
	answer->status = outcome_status[outcome];
	va_start(args, format);
	vsnprintf(answer->detail, sizeof answer->detail, format, args);
	va_end(args);
}

/* A 409 naming size. */
static void answer_conflict(struct translog_witness_answer *answer, uint64_t size, const char *why)
{
	answer_set(answer, TRANSLOG_WITNESS_CONFLICT, "%s", why);
	answer->size = size;
	buffer_reset(&answer->body);
	if (buffer_appendf(&answer->body, "%llu\n", (unsigned long long)size) != 0)
		answer_set(answer, TRANSLOG_WITNESS_FAILED, "out of memory");
}

/* One request being judged. */
struct judging {
	struct translog_witness *w;
	const struct config_namespace *ns;
	struct translog_add_checkpoint request;
	struct translog_signer_keys own; /* this authority's signer's keys, when it answered */
	int signer_asked;                /* fetch_own_keys ran */
	int signer_answered;
	const struct note_verifier *log_key; /* the known log key that signed */
	struct translog_witness_answer *answer;
};

/* Logs a refusal of a checkpoint a known log key signed: it may be evidence. */
static void log_refusal(const struct judging *j, uint64_t witnessed_size, const merkle_hash witnessed_root)
{
	const struct translog_witness_options *o = &j->w->options;
	char key[NOTE_VERIFIER_KEY_MAX + 1], root[45], ours[45];
	note_verifier_format(j->log_key, key);
	base64_encode(j->request.checkpoint.root, MERKLE_HASH_SIZE, root);
	base64_encode(witnessed_root, MERKLE_HASH_SIZE, ours);
	logline_write(o->log, "dirauthd", logline_epoch_now(o->clock, &o->config->epoch), j->ns->name,
	              "add-checkpoint refused (%u): the checkpoint of %llu entries, root %s, signed by log "
	              "key %s, old size %llu; the tree head cosigned here is %llu entries, root %s: %s",
	              j->answer->status, (unsigned long long)j->request.checkpoint.tree_size, root, key,
	              (unsigned long long)j->request.old_size, (unsigned long long)witnessed_size, ours,
	              j->answer->detail);
}

/* The signer's keys, when it answers (a witness whose signer is away can still refuse). Asked
 * once per request, and only when needed: a checkpoint signed by a pinned key costs the signer
 * nothing until it passed every check. */
static void fetch_own_keys(struct judging *j)
{
	struct buffer payload;
	char why[SIGNER_DETAIL_MAX + 1];
	if (j->signer_asked)
		return;
	j->signer_asked = 1;
	buffer_init(&payload);
	if (signer_client_query(j->w->options.signer, SIGNER_OP_GET_KEYS, NULL, 0, &payload, why,
	                        sizeof why) == 0 &&
	    translog_signer_keys_parse(payload.data, payload.len, &j->own) == 0)
		j->signer_answered = 1;
	buffer_free(&payload);
}

/* Checks the note under each of count known log keys: j->log_key gets the first that signed.
 * Returns 0, or -1 with the answer set (a line under a known key that fails). */
static int verify_under(struct judging *j, const struct note_verifier *const *keys, size_t count)
{
	for (size_t i = 0; i < count; i++) {
		struct tlog_policy policy = {.origin = j->ns->origin, .log_key = keys[i], .quorum = 0};
		struct checkpoint verified;
		int rc = tlog_checkpoint_verify(j->request.note, &policy, &verified, NULL, NULL);
		if (rc == 0 && !j->log_key) {
			j->log_key = keys[i];
		} else if (rc == DIRAUTH_ERR_SIGNATURE) {
			answer_set(j->answer, TRANSLOG_WITNESS_BAD_SIGNATURE,
			           "A signature line under the log key %s+%08x does not verify.",
			           keys[i]->name, (unsigned)keys[i]->key_id);
			return -1;
		} else if (rc != 0 && rc != DIRAUTH_ERR_UNKNOWN_KEY) {
			answer_set(j->answer, TRANSLOG_WITNESS_BAD_REQUEST,
			           "The checkpoint cannot be checked: %s.", dirauth_strerror(rc));
			return -1;
		}
	}
	return 0;
}

/* 404 and 403: the log must be known and must have signed. Returns 0 to go on. */
static int check_log_signature(struct judging *j)
{
	const struct config *config = j->w->options.config;
	const struct note_verifier *keys[CONFIG_MAX_MEMBERS + 1];
	size_t count = 0;
	const char *origin = j->ns->origin;

	if (strcmp(j->request.checkpoint.origin, origin) != 0) {
		answer_set(j->answer, TRANSLOG_WITNESS_UNKNOWN_LOG,
		           "This witness knows no log of origin %.255s here: namespace %s is the log of %s.",
		           j->request.checkpoint.origin, j->ns->name, origin);
		return -1;
	}
	/* The pinned keys (the configuration refuses one key twice), then, when none of them signed,
	 * this authority's own. */
	for (size_t i = 0; i < config->member_count; i++)
		if (config->members[i].has_log_key && strcmp(config->members[i].log_key.name, origin) == 0)
			keys[count++] = &config->members[i].log_key;
	if (verify_under(j, keys, count) != 0)
		return -1;
	if (!j->log_key) {
		fetch_own_keys(j);
		int pinned = 0;
		for (size_t i = 0; i < count; i++)
			pinned |= note_verifier_equal(keys[i], &j->own.log_key);
		if (j->signer_answered && j->own.has_log_key && strcmp(j->own.log_key.name, origin) == 0 &&
		    !pinned) {
			keys[count++] = &j->own.log_key;
			if (verify_under(j, &keys[count - 1], 1) != 0)
				return -1;
		}
	}
	if (count == 0) {
		answer_set(j->answer, TRANSLOG_WITNESS_UNKNOWN_LOG,
		           "This witness knows no log key of origin %s.", origin);
		return -1;
	}
	if (!j->log_key) {
		answer_set(j->answer, TRANSLOG_WITNESS_BAD_SIGNATURE,
		           "The checkpoint is not signed by a log key this witness knows for %s.", origin);
		return -1;
	}
	return 0;
}

/* The signer's latest tree head of the origin: *has 0 when it holds none. */
static int signer_latest(struct judging *j, int *has, uint64_t *size, merkle_hash root)
{
	struct buffer payload;
	struct translog_signer_state state;
	char why[SIGNER_DETAIL_MAX + 1] = "";
	buffer_init(&payload);
	int rc = signer_client_query(j->w->options.signer, SIGNER_OP_CHECKPOINT_STATE,
	                             (const uint8_t *)j->ns->origin, strlen(j->ns->origin), &payload, why,
	                             sizeof why);
	if (rc == 0)
		rc = translog_signer_state_parse(payload.data, payload.len, &state);
	buffer_free(&payload);
	*has = 0;
	if (rc == 0) {
		rc = translog_signer_state_latest(&state, size, root);
		if (rc == 0)
			*has = 1;
		else if (rc == DIRAUTH_ERR_NOT_FOUND)
			rc = 0;
	}
	if (rc == DIRAUTH_ERR_UNAVAILABLE)
		answer_set(j->answer, TRANSLOG_WITNESS_UNAVAILABLE,
		           "This witness's signer cannot be reached: %s", why);
	else if (rc)
		answer_set(j->answer, TRANSLOG_WITNESS_FAILED, "This witness's signer state of %s: %s",
		           j->ns->origin, dirauth_strerror(rc));
	return rc;
}

/* The witness's tree head: the larger of the store's record and the signer's latest, the record
 * following the signer when it is behind. */
static int witnessed_head(struct judging *j, struct store_log_witnessed *head)
{
	struct store *store = j->w->options.store;
	int signer_has = 0;
	uint64_t signer_size = 0;
	merkle_hash signer_root;
	int rc = store_log_witnessed(store, j->ns->name, head);
	if (rc) {
		answer_set(j->answer, TRANSLOG_WITNESS_FAILED, "The witnessed tree head cannot be read: %s",
		           dirauth_strerror(rc));
		return rc;
	}
	if ((rc = signer_latest(j, &signer_has, &signer_size, signer_root)) != 0)
		return rc;
	if (!signer_has || (head->has && signer_size < head->size))
		return 0;
	if (head->has && signer_size == head->size) {
		if (memcmp(signer_root, head->root, MERKLE_HASH_SIZE) == 0)
			return 0;
		answer_set(j->answer, TRANSLOG_WITNESS_FAILED,
		           "The witnessed tree head of %llu entries is not the signer's.",
		           (unsigned long long)head->size);
		return DIRAUTH_ERR_COLLISION;
	}
	rc = store_log_witness_advance(store, j->ns->name, head->has ? head->size : 0, signer_size,
	                               signer_root);
	if (rc) {
		answer_set(j->answer, TRANSLOG_WITNESS_FAILED,
		           "The witnessed tree head cannot follow the signer's: %s", dirauth_strerror(rc));
		return rc;
	}
	head->has = true;
	head->size = signer_size;
	memcpy(head->root, signer_root, MERKLE_HASH_SIZE);
	return 0;
}

/* Has the signer cosign the checkpoint from head, checks the cosignature and records the new
 * head; fills the answer either way. */
static void cosign_and_record(struct judging *j, const struct store_log_witnessed *head)
{
	const struct checkpoint *c = &j->request.checkpoint;
	const struct note *note = j->request.note;
	struct note_signature signature;
	char why[SIGNER_DETAIL_MAX + 1] = "";
	int repeat = head->has && head->size == c->tree_size;
	uint64_t from = head->has ? head->size : 0;

	fetch_own_keys(j);
	if (!j->signer_answered || !j->own.has_cosigner) {
		answer_set(j->answer, TRANSLOG_WITNESS_UNAVAILABLE,
		           j->signer_answered ? "This witness's signer holds no cosignature key."
		                              : "This witness's signer cannot be reached.");
		return;
	}
	int rc = signer_client_sign(j->w->options.signer, SIGNER_OP_COSIGN_CHECKPOINT, note->text,
	                            note->text_len, repeat ? c->tree_size : from, j->request.proof,
	                            repeat ? 0 : j->request.proof_count, &signature, why, sizeof why);
	if (rc == DIRAUTH_ERR_UNAVAILABLE) {
		answer_set(j->answer, TRANSLOG_WITNESS_UNAVAILABLE,
		           "This witness's signer cannot be reached: %s", why);
		return;
	}
	if (rc == DIRAUTH_ERR_MISMATCH || rc == DIRAUTH_ERR_ROLLBACK || rc == DIRAUTH_ERR_COLLISION) {
		/* The signer's tree head moved (this authority's own log signed meanwhile), or the
		 * checkpoint contradicts it: name the size it holds now. */
		int has = 0;
		uint64_t size = 0;
		merkle_hash root;
		if (signer_latest(j, &has, &size, root) != 0)
			return;
		char sentence[SIGNER_DETAIL_MAX + 96];
		snprintf(sentence, sizeof sentence, "This witness's signer refuses the tree head: %s", why);
		answer_conflict(j->answer, has ? size : 0, sentence);
		if (rc == DIRAUTH_ERR_COLLISION)
			log_refusal(j, has ? size : 0, has ? root : head->root);
		return;
	}
	if (rc) {
		answer_set(j->answer, TRANSLOG_WITNESS_INCONSISTENT,
		           "This witness's signer refuses to cosign: %s", why);
		log_refusal(j, from, head->root);
		return;
	}

	/* What leaves is checked as the client will check it. */
	struct buffer cosigned;
	struct note *parsed = NULL;
	uint64_t timestamp = 0;
	buffer_init(&cosigned);
	rc = note_format(note->text, note->text_len, &signature, 1, &cosigned);
	if (rc == 0)
		rc = note_parse(cosigned.data, cosigned.len, &parsed);
	if (rc == 0)
		rc = cosignature_verify(parsed, &j->own.cosigner, &timestamp);
	note_free(parsed);
	buffer_free(&cosigned);
	if (rc) {
		answer_set(j->answer, TRANSLOG_WITNESS_FAILED,
		           "The cosignature the signer made does not verify: %s", dirauth_strerror(rc));
		return;
	}
	rc = store_log_witness_advance(j->w->options.store, j->ns->name, from, c->tree_size, c->root);
	if (rc) {
		answer_set(j->answer, TRANSLOG_WITNESS_FAILED, "The new tree head cannot be recorded: %s",
		           dirauth_strerror(rc));
		return;
	}
	buffer_reset(&j->answer->body);
	if ((rc = translog_signature_line(&signature, &j->answer->body)) != 0) {
		answer_set(j->answer, TRANSLOG_WITNESS_FAILED, "The cosignature line: %s",
		           dirauth_strerror(rc));
		return;
	}
	j->answer->outcome = TRANSLOG_WITNESS_COSIGNED;
	j->answer->status = outcome_status[TRANSLOG_WITNESS_COSIGNED];
	j->answer->detail[0] = 0;
}

/* Under the lock: the sizes against the witness's tree head, the proof, then cosigning. */
static void judge(struct judging *j)
{
	const struct checkpoint *c = &j->request.checkpoint;
	struct store_log_witnessed head;
	if (witnessed_head(j, &head) != 0)
		return;
	uint64_t size = head.has ? head.size : 0;
	if (j->request.old_size != size) {
		char sentence[128];
		snprintf(sentence, sizeof sentence,
		         "The old size is %llu; the tree head this witness cosigned last has %llu entries.",
		         (unsigned long long)j->request.old_size, (unsigned long long)size);
		answer_conflict(j->answer, size, sentence);
		return;
	}
	if (head.has && size == c->tree_size) {
		if (memcmp(head.root, c->root, MERKLE_HASH_SIZE) != 0) {
			answer_conflict(
			    j->answer, size,
			    "This witness cosigned another tree head of the same size: the log forked.");
			log_refusal(j, size, head.root);
			return;
		}
		if (j->request.proof_count != 0) {
			answer_set(j->answer, TRANSLOG_WITNESS_INCONSISTENT,
			           "The consistency proof between equal sizes is empty.");
			return;
		}
	} else if (size == 0) {
		/* No head, or the empty tree's: every tree extends it, with no proof. */
		if (j->request.proof_count != 0) {
			answer_set(j->answer, TRANSLOG_WITNESS_INCONSISTENT,
			           "The consistency proof from old size 0 is empty.");
			return;
		}
	} else if (merkle_consistency_verify(size, c->tree_size, head.root, c->root, j->request.proof,
	                                     j->request.proof_count) != 0) {
		answer_set(j->answer, TRANSLOG_WITNESS_INCONSISTENT,
		           "The consistency proof from %llu to %llu entries does not verify.",
		           (unsigned long long)size, (unsigned long long)c->tree_size);
		log_refusal(j, size, head.root);
		return;
	}
	cosign_and_record(j, &head);
}

int translog_witness_add_checkpoint(struct translog_witness *witness, size_t namespace_index,
                                    const uint8_t *body, size_t len, struct translog_witness_answer *answer)
{
	if (!witness || !answer || namespace_index >= witness->options.config->namespace_count)
		return DIRAUTH_ERR_INTERNAL;
	buffer_reset(&answer->body);
	answer->size = 0;
	struct judging j;
	memset(&j, 0, sizeof j);
	j.w = witness;
	j.ns = &witness->options.config->namespaces[namespace_index];
	j.answer = answer;

	int rc = translog_add_checkpoint_parse(body, len, &j.request);
	if (rc == DIRAUTH_ERR_BOUNDS && len > TRANSLOG_ADD_CHECKPOINT_MAX) {
		answer_set(answer, TRANSLOG_WITNESS_TOO_LARGE, "The request is longer than %d bytes.",
		           TRANSLOG_ADD_CHECKPOINT_MAX);
		return 0;
	}
	if (rc) {
		answer_set(answer,
		           rc == DIRAUTH_ERR_NOMEM ? TRANSLOG_WITNESS_FAILED : TRANSLOG_WITNESS_BAD_REQUEST,
		           "%s",
		           rc == DIRAUTH_ERR_BOUNDS ? "The request has more than 63 consistency proof lines."
		           : rc == DIRAUTH_ERR_NOMEM
		               ? "out of memory"
		               : "The request is not an old size line, consistency proof lines, an "
		                 "empty line and a checkpoint note.");
		return 0;
	}
	if (check_log_signature(&j) == 0) {
		if (j.request.old_size > j.request.checkpoint.tree_size)
			answer_set(answer, TRANSLOG_WITNESS_BAD_REQUEST,
			           "The old size %llu is above the checkpoint's size %llu.",
			           (unsigned long long)j.request.old_size,
			           (unsigned long long)j.request.checkpoint.tree_size);
		else if (j.request.checkpoint.extension_count != 0)
			answer_set(answer, TRANSLOG_WITNESS_BAD_REQUEST,
			           "A checkpoint of a dirauth log carries no extension lines.");
		else {
			pthread_mutex_lock(&witness->lock);
			judge(&j);
			pthread_mutex_unlock(&witness->lock);
		}
	}
	translog_add_checkpoint_free(&j.request);
	return 0;
}
