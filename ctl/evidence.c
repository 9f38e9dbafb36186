/*
 * evidence.c: evidence files judged offline, kept once proven, written once, and dirauthctl
 * verify-evidence (see evidence.h).
 *
 * Every check is somebody else's: the file's grammar is schema/evidence.c, a checkpoint's text
 * and cosignatures schema/checkpoint.c, the consistency proof tlog/consistency.c and
 * crypto/merkle.c, a header's or a vote's authority signatures verify/keyring.c. What is decided
 * here is only what two statements that each verify show together.
 */
#include "ctl/evidence.h"

#include "ctl/command.h"
#include "ctl/files.h"
#include "ctl/trust_file.h"
#include "schema/certificate.h"
#include "schema/checkpoint.h"
#include "crypto/crypto.h"
#include "base/error.h"
#include "schema/note.h"
#include "schema/snapshot.h"
#include "schema/vote.h"
#include "tlog/consistency.h"
#include "verify/keyring.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PATH_CAPACITY 4096

static int fail(int rc, char *detail, size_t cap, const char *format, ...)
    __attribute__((format(printf, 4, 5)));

static int fail(int rc, char *detail, size_t cap, const char *format, ...)
{
	va_list args;
	if (detail != NULL && cap > 0) {
		va_start(args, format);
		vsnprintf(detail, cap, format, args);
		va_end(args);
	}
	return rc;
}

/* Adds "<name>+<key id>" to the verdict's names. */
static void name_key(struct ctl_evidence_verdict *v, const char *name, uint32_t key_id)
{
	size_t used = strlen(v->named);
	snprintf(v->named + used, sizeof v->named - used, "%s%s+%08" PRIx32, used > 0 ? ", " : "", name,
	         key_id);
	v->named_count++;
}

/* ---- checkpoints ---- */

struct signed_checkpoint {
	struct note *note;
	struct checkpoint checkpoint;
	uint8_t signed_by[EVIDENCE_KEYS_MAX]; /* 1 for each file key that signed or cosigned it */
	size_t signer_count;
};

static int read_checkpoint(const struct evidence *e, size_t i, struct signed_checkpoint *out, char *detail,
                           size_t cap)
{
	const struct evidence_part *part = &e->statements[i];
	int rc = note_parse(part->data, part->len, &out->note);
	if (rc == 0)
		rc = checkpoint_parse(out->note->text, out->note->text_len, &out->checkpoint);
	if (rc != 0)
		return fail(rc, detail, cap, "statement %zu: not a checkpoint note: %s", i + 1,
		            dirauth_strerror(rc));
	if (strcmp(out->checkpoint.origin, e->origin) != 0)
		return fail(DIRAUTH_ERR_MISMATCH, detail, cap,
		            "statement %zu: a checkpoint of '%s', the file is about '%s'", i + 1,
		            out->checkpoint.origin, e->origin);
	for (size_t k = 0; k < e->key_count; k++) {
		const struct note_verifier *key = &e->keys[k];
		size_t verified = 0;
		uint64_t timestamp = 0;
		if (key->type == NOTE_KEY_TYPE_COSIGNATURE_V1) {
			rc = cosignature_verify(out->note, key, &timestamp);
			verified = rc == 0;
			if (rc == DIRAUTH_ERR_UNKNOWN_KEY)
				rc = 0;
		} else {
			rc = note_verify(out->note, key, 1, NULL, &verified);
		}
		if (rc == DIRAUTH_ERR_SIGNATURE)
			return fail(rc, detail, cap,
			            "statement %zu: the signature of %s+%08" PRIx32 " does not verify", i + 1,
			            key->name, key->key_id);
		if (rc != 0)
			return fail(rc, detail, cap, "statement %zu: cannot verify: %s", i + 1,
			            dirauth_strerror(rc));
		out->signed_by[k] = verified > 0;
		out->signer_count += verified > 0;
	}
	if (out->signer_count == 0)
		return fail(DIRAUTH_ERR_UNKNOWN_KEY, detail, cap,
		            "statement %zu: signed by none of the %zu keys the file lists", i + 1,
		            e->key_count);
	return 0;
}

/* Names the keys that signed both, or when none did, every key of either. */
static void name_checkpoint_keys(const struct evidence *e, const struct signed_checkpoint c[2],
                                 struct ctl_evidence_verdict *v)
{
	for (size_t k = 0; k < e->key_count; k++)
		if (c[0].signed_by[k] && c[1].signed_by[k])
			name_key(v, e->keys[k].name, e->keys[k].key_id);
	if (v->named_count > 0)
		return;
	for (size_t k = 0; k < e->key_count; k++)
		if (c[0].signed_by[k] || c[1].signed_by[k])
			name_key(v, e->keys[k].name, e->keys[k].key_id);
}

static int verify_checkpoints(const struct evidence *e, struct ctl_evidence_verdict *v, char *detail,
                              size_t cap)
{
	struct signed_checkpoint c[2];
	merkle_hash proof[MERKLE_MAX_PROOF];
	size_t proof_len = 0;
	int rc;

	memset(c, 0, sizeof c);
	rc = read_checkpoint(e, 0, &c[0], detail, cap);
	if (rc == 0)
		rc = read_checkpoint(e, 1, &c[1], detail, cap);
	if (rc != 0)
		goto done;
	if (c[0].note->text_len == c[1].note->text_len &&
	    memcmp(c[0].note->text, c[1].note->text, c[0].note->text_len) == 0) {
		rc = fail(DIRAUTH_ERR_MISMATCH, detail, cap, "evidence: the same checkpoint twice");
		goto done;
	}
	struct signed_checkpoint *small = &c[0], *large = &c[1];
	if (small->checkpoint.tree_size > large->checkpoint.tree_size) {
		small = &c[1];
		large = &c[0];
	}
	if (small->checkpoint.tree_size == large->checkpoint.tree_size) {
		if (memcmp(small->checkpoint.root, large->checkpoint.root, MERKLE_HASH_SIZE) == 0) {
			snprintf(v->summary, sizeof v->summary,
			         "both checkpoints are of the tree of size %" PRIu64
			         " with one root: one tree",
			         small->checkpoint.tree_size);
			goto done;
		}
		v->proven = 1;
		name_checkpoint_keys(e, c, v);
		snprintf(v->summary, sizeof v->summary,
		         "two checkpoints of the log %s of size %" PRIu64 " with different roots: two trees",
		         e->origin, small->checkpoint.tree_size);
		goto done;
	}
	if (!e->has_consistency) {
		rc = fail(DIRAUTH_ERR_MISMATCH, detail, cap,
		          "evidence: checkpoints of sizes %" PRIu64 " and %" PRIu64
		          " without a consistency proof show nothing",
		          small->checkpoint.tree_size, large->checkpoint.tree_size);
		goto done;
	}
	rc = tlog_consistency_parse(e->consistency.data, e->consistency.len, proof, &proof_len);
	if (rc != 0) {
		rc = fail(rc, detail, cap, "consistency: not a consistency proof: %s", dirauth_strerror(rc));
		goto done;
	}
	rc = merkle_consistency_verify(small->checkpoint.tree_size, large->checkpoint.tree_size,
	                               small->checkpoint.root, large->checkpoint.root, proof, proof_len);
	if (rc == 0) {
		snprintf(v->summary, sizeof v->summary,
		         "the checkpoint of size %" PRIu64 " extends the one of size %" PRIu64
		         " (the consistency proof verifies): one tree",
		         large->checkpoint.tree_size, small->checkpoint.tree_size);
	} else if (rc == DIRAUTH_ERR_PROOF) {
		rc = 0;
		v->proven = 1;
		name_checkpoint_keys(e, c, v);
		snprintf(v->summary, sizeof v->summary,
		         "the log %s's checkpoint of size %" PRIu64
		         " is not shown to extend its checkpoint of "
		         "size %" PRIu64 ": the consistency proof it served does not verify",
		         e->origin, large->checkpoint.tree_size, small->checkpoint.tree_size);
	} else {
		rc = fail(rc, detail, cap, "consistency: cannot verify: %s", dirauth_strerror(rc));
	}
done:
	note_free(c[0].note);
	note_free(c[1].note);
	return rc;
}

/* ---- headers and votes ---- */

/* The keyring of the identities (the bundle's, else the file's) and the file's certificates. */
static int build_ring(const struct trust_bundle *bundle, const struct evidence *e,
                      struct certificate_keyring **ring, char *detail, size_t cap)
{
	const struct note_verifier *identities = e->keys;
	size_t count = e->key_count;
	int rc;

	if (bundle != NULL) {
		int pinned = 0;
		for (size_t i = 0; i < bundle->namespace_count; i++)
			pinned |= strcmp(bundle->namespaces[i].origin, e->origin) == 0;
		if (!pinned)
			return fail(DIRAUTH_ERR_CONFIG, detail, cap,
			            "evidence: the trust bundle pins no namespace of origin '%s'", e->origin);
		identities = bundle->authorities;
		count = bundle->authority_count;
	}
	if (count == 0)
		return fail(DIRAUTH_ERR_CONFIG, detail, cap,
		            "evidence: no authority identity to check the statements against (the file "
		            "lists no key; give --trust)");
	for (size_t i = 0; i < count; i++)
		if (identities[i].type != NOTE_KEY_TYPE_ED25519)
			return fail(DIRAUTH_ERR_CONFIG, detail, cap,
			            "evidence: key %s is no identity key (type 0x01)", identities[i].name);
	rc = verify_keyring_build(identities, count, e->certificates[0].data, e->certificates[0].len, ring,
	                          NULL, detail, cap);
	for (size_t i = 1; rc == 0 && i < e->certificate_count; i++)
		rc = verify_keyring_add_certificates(*ring, e->certificates[i].data, e->certificates[i].len,
		                                     NULL, detail, cap);
	return rc;
}

/* 0 when note is signed by the identity of sub (a ring narrowed to it) with a key certified at
 * at; else why not. */
static int signed_by(const struct certificate_keyring *sub, const struct note *note, uint64_t at)
{
	struct verify_pins pins = {sub, 1, "the evidence"};
	return verify_note(&pins, note, at, at, NULL, NULL, 0);
}

struct statement {
	struct note *note;
	uint64_t at;                       /* the header's valid-after; 0 for a vote */
	char authority[NOTE_NAME_MAX + 1]; /* a vote's */
};

static int read_statement(const struct evidence *e, size_t i, struct statement *out, char *detail, size_t cap)
{
	const struct evidence_part *part = &e->statements[i];
	const char *what = e->kind == EVIDENCE_HEADERS ? "snapshot header" : "vote";
	char origin[SNAPSHOT_ORIGIN_MAX + 1];
	uint64_t epoch;
	int rc = note_parse(part->data, part->len, &out->note);

	if (rc == 0 && e->kind == EVIDENCE_HEADERS) {
		struct snapshot_header header;
		rc = snapshot_header_parse(out->note->text, out->note->text_len, &header);
		memcpy(origin, header.origin, sizeof origin);
		epoch = header.epoch;
		out->at = header.valid_after;
	} else if (rc == 0) {
		struct vote vote;
		rc = vote_parse(out->note->text, out->note->text_len, &vote);
		memcpy(origin, vote.origin, sizeof origin);
		epoch = vote.epoch;
		memcpy(out->authority, vote.authority, sizeof out->authority);
	}
	if (rc != 0)
		return fail(rc, detail, cap, "statement %zu: not a signed %s note: %s", i + 1, what,
		            dirauth_strerror(rc));
	if (strcmp(origin, e->origin) != 0 || epoch != e->epoch)
		return fail(DIRAUTH_ERR_MISMATCH, detail, cap,
		            "statement %zu: a %s of %s epoch %" PRIu64
		            ", the file is about %s epoch %" PRIu64,
		            i + 1, what, origin, epoch, e->origin, e->epoch);
	return 0;
}

/* A vote carries no time: it counts when a certificate of the identity covered its key at the
 * start of that certificate's window. */
static int vote_signed_by(const struct certificate_keyring *sub, const struct note *note)
{
	int rc = DIRAUTH_ERR_UNKNOWN_KEY;
	for (size_t c = 0; c < sub->certificate_count && rc != 0 && rc != DIRAUTH_ERR_SIGNATURE; c++)
		rc = signed_by(sub, note, sub->certificates[c].valid_after);
	return rc;
}

static int verify_statements(const struct trust_bundle *bundle, const struct evidence *e,
                             struct ctl_evidence_verdict *v, char *detail, size_t cap)
{
	struct certificate_keyring *ring = NULL, *sub = NULL;
	struct statement s[2];
	size_t signers[2] = {0, 0};
	int rc;

	memset(s, 0, sizeof s);
	rc = read_statement(e, 0, &s[0], detail, cap);
	if (rc == 0)
		rc = read_statement(e, 1, &s[1], detail, cap);
	if (rc == 0 && s[0].note->text_len == s[1].note->text_len &&
	    memcmp(s[0].note->text, s[1].note->text, s[0].note->text_len) == 0)
		rc = fail(DIRAUTH_ERR_MISMATCH, detail, cap, "evidence: the same statement twice");
	if (rc == 0 && e->kind == EVIDENCE_VOTES && strcmp(s[0].authority, s[1].authority) != 0)
		rc = fail(DIRAUTH_ERR_MISMATCH, detail, cap, "evidence: votes of two authorities, %s and %s",
		          s[0].authority, s[1].authority);
	if (rc == 0)
		rc = build_ring(bundle, e, &ring, detail, cap);
	for (size_t a = 0; rc == 0 && a < ring->identity_count; a++) {
		const struct note_verifier *identity = &ring->identities[a];
		int both = 1;
		if (e->kind == EVIDENCE_VOTES && strcmp(identity->name, s[0].authority) != 0)
			continue;
		rc = verify_keyring_for_identity(ring, identity->name, &sub);
		for (size_t i = 0; rc == 0 && i < 2; i++) {
			int signed_rc = e->kind == EVIDENCE_HEADERS ? signed_by(sub, s[i].note, s[i].at)
			                                            : vote_signed_by(sub, s[i].note);
			if (signed_rc == DIRAUTH_ERR_SIGNATURE)
				rc = fail(signed_rc, detail, cap,
				          "statement %zu: a signature by a key %s certified does not verify",
				          i + 1, identity->name);
			else if (signed_rc == DIRAUTH_ERR_NOMEM || signed_rc == DIRAUTH_ERR_CRYPTO ||
			         signed_rc == DIRAUTH_ERR_INTERNAL)
				rc = fail(signed_rc, detail, cap, "statement %zu: cannot verify: %s", i + 1,
				          dirauth_strerror(signed_rc));
			else if (signed_rc == 0)
				signers[i]++;
			else
				both = 0;
		}
		if (rc == 0 && both)
			name_key(v, identity->name, identity->key_id);
		verify_keyring_free(sub);
		sub = NULL;
	}
	for (size_t i = 0; rc == 0 && i < 2; i++)
		if (signers[i] == 0)
			rc = fail(DIRAUTH_ERR_UNKNOWN_KEY, detail, cap,
			          "statement %zu: signed by no authority %s pins with a certified key", i + 1,
			          bundle != NULL ? "the trust bundle" : "the file");
	if (rc == 0) {
		v->proven = v->named_count > 0;
		if (e->kind == EVIDENCE_VOTES)
			snprintf(v->summary, sizeof v->summary,
			         "two different votes of %s for %s epoch %" PRIu64, s[0].authority, e->origin,
			         e->epoch);
		else if (v->proven)
			snprintf(v->summary, sizeof v->summary,
			         "two different snapshot headers for %s epoch %" PRIu64
			         ", both signed by %zu "
			         "authorit%s",
			         e->origin, e->epoch, v->named_count, v->named_count == 1 ? "y" : "ies");
		else
			snprintf(v->summary, sizeof v->summary,
			         "two different snapshot headers for %s epoch %" PRIu64
			         ", but no authority signed both",
			         e->origin, e->epoch);
	}
	verify_keyring_free(ring);
	note_free(s[0].note);
	note_free(s[1].note);
	return rc;
}

int ctl_evidence_verify(const struct trust_bundle *bundle, const uint8_t *file, size_t len,
                        struct ctl_evidence_verdict *verdict, char *detail, size_t detail_cap)
{
	struct evidence *e = malloc(sizeof *e);
	int rc;

	memset(verdict, 0, sizeof *verdict);
	if (detail != NULL && detail_cap > 0)
		detail[0] = '\0';
	if (e == NULL)
		return fail(DIRAUTH_ERR_NOMEM, detail, detail_cap, "evidence: out of memory");
	rc = evidence_parse(file, len, e);
	if (rc != 0) {
		free(e);
		return fail(rc, detail, detail_cap, "evidence: not an evidence file: %s",
		            dirauth_strerror(rc));
	}
	verdict->kind = e->kind;
	memcpy(verdict->origin, e->origin, sizeof verdict->origin);
	rc = e->kind == EVIDENCE_CHECKPOINTS ? verify_checkpoints(e, verdict, detail, detail_cap)
	                                     : verify_statements(bundle, e, verdict, detail, detail_cap);
	if (rc != 0) {
		enum evidence_kind kind = verdict->kind;
		memset(verdict, 0, sizeof *verdict);
		verdict->kind = kind;
	}
	free(e);
	return rc;
}

void ctl_evidence_between(struct evidence *e, enum evidence_kind kind, const struct trust_bundle *bundle,
                          const char *origin, uint64_t epoch, const uint8_t *first, size_t first_len,
                          const uint8_t *second, size_t second_len)
{
	memset(e, 0, sizeof(*e));
	e->kind = kind;
	snprintf(e->origin, sizeof(e->origin), "%s", origin);
	e->epoch = epoch;
	e->key_count =
	    bundle->authority_count < EVIDENCE_KEYS_MAX ? bundle->authority_count : EVIDENCE_KEYS_MAX;
	memcpy(e->keys, bundle->authorities, e->key_count * sizeof(e->keys[0]));
	e->statements[0] = (struct evidence_part){first, first_len};
	e->statements[1] = (struct evidence_part){second, second_len};
}

void ctl_evidence_add_certificates(struct evidence *e, const uint8_t *certificates, size_t len)
{
	if (len == 0 || e->certificate_count == EVIDENCE_CERTIFICATES_MAX)
		return;
	for (size_t i = 0; i < e->certificate_count; i++)
		if (e->certificates[i].len == len && memcmp(e->certificates[i].data, certificates, len) == 0)
			return;
	e->certificates[e->certificate_count++] = (struct evidence_part){certificates, len};
}

int ctl_evidence_write(const char *directory, enum evidence_kind kind, const char *namespace_name,
                       uint64_t number, const uint8_t *file, size_t len, char *path, size_t path_cap,
                       int *created)
{
	uint8_t digest[CRYPTO_SHA256_SIZE];
	char target[PATH_CAPACITY];
	int rc, n;

	if (created != NULL)
		*created = 0;
	rc = crypto_sha256(file, len, digest);
	if (rc != 0)
		return rc;
	n = snprintf(target, sizeof target, "%s/%s-%s-%" PRIu64 "-%02x%02x%02x%02x%02x%02x%02x%02x.evidence",
	             directory, evidence_kind_name(kind), namespace_name, number, digest[0], digest[1],
	             digest[2], digest[3], digest[4], digest[5], digest[6], digest[7]);
	if (n < 0 || (size_t)n >= sizeof target || (path != NULL && (size_t)n >= path_cap))
		return DIRAUTH_ERR_BOUNDS;
	if (path != NULL)
		memcpy(path, target, (size_t)n + 1);
	rc = ctl_directory_create(directory);
	if (rc != 0)
		return rc;
	rc = ctl_file_create(target, file, len, 0644);
	if (rc == DIRAUTH_ERR_EXISTS)
		return 0;
	if (rc == 0 && created != NULL)
		*created = 1;
	return rc;
}

/* Encodes e into file and proves it with the bundle. Returns 0 when it proves misbehaviour, else an
 * error with why. */
static int prove(const struct trust_bundle *bundle, const struct evidence *e, struct buffer *file, char *why,
                 size_t why_cap)
{
	struct ctl_evidence_verdict verdict;
	char detail[VERIFY_DETAIL_MAX];
	int rc;

	buffer_reset(file);
	rc = evidence_encode(e, file);
	if (rc != 0) {
		snprintf(why, why_cap, "cannot encode it: %s", dirauth_strerror(rc));
		return rc;
	}
	rc = ctl_evidence_verify(bundle, file->data, file->len, &verdict, detail, sizeof(detail));
	if (rc != 0) {
		/* The detail is cut short if it must be: its start says why. */
		snprintf(why, why_cap, "it does not verify: %.*s", (int)(sizeof(detail) / 2), detail);
		return rc;
	}
	if (!verdict.proven) {
		snprintf(why, why_cap, "it proves nobody's misbehaviour: %s", verdict.summary);
		return DIRAUTH_ERR_UNKNOWN_KEY;
	}
	return 0;
}

int ctl_evidence_keep(const struct trust_bundle *bundle, const struct evidence *e, const char *directory,
                      const char *namespace_name, uint64_t number, char *path, size_t path_cap, int *created,
                      char *why, size_t why_cap)
{
	struct buffer file;
	int rc;

	if (created != NULL)
		*created = 0;
	buffer_init(&file);
	rc = prove(bundle, e, &file, why, why_cap);
	if (rc != 0 && e->certificate_count == 2) {
		struct evidence second_alone = *e;
		char ignored[VERIFY_DETAIL_MAX];

		second_alone.certificates[0] = e->certificates[1];
		second_alone.certificate_count = 1;
		if (prove(bundle, &second_alone, &file, ignored, sizeof(ignored)) == 0)
			rc = 0;
	}
	if (rc == 0) {
		rc = ctl_evidence_write(directory, e->kind, namespace_name, number, file.data, file.len, path,
		                        path_cap, created);
		if (rc != 0)
			snprintf(why, why_cap, "cannot write into %s: %s", directory, dirauth_strerror(rc));
	}
	buffer_free(&file);
	return rc;
}

/* ---- dirauthctl verify-evidence ---- */

/* A file past the bound is not evidence: verify-evidence's status 1, not a usage or I/O one. */
static const struct ctl_file_limit evidence_limit = {EVIDENCE_MAX_BYTES, "an evidence file",
                                                     CTL_EVIDENCE_EXIT_INVALID};

static const char verify_evidence_usage[] =
    "usage: dirauthctl verify-evidence FILE [--trust BUNDLE]\n"
    "\n"
    "Checks an evidence file offline (two signed statements that cannot both be honest, as\n"
    "dirauthctl monitor and fetch write them) and names the misbehaving key or keys. Headers\n"
    "and votes are checked against the authorities of BUNDLE when given, else against the\n"
    "identity keys the file lists.\n"
    "\n"
    "  --trust BUNDLE   the trust bundle pinning the authorities\n"
    "\n"
    "exit status: 3 misbehaviour proven, 0 the statements do not conflict, 1 not valid\n"
    "evidence, 64 usage, 66/74 FILE or BUNDLE missing or unreadable, 78 bad trust bundle.\n";

static int run_verify_evidence(const struct ctl_arguments *arguments, struct ctl_report *report)
{
	struct trust_bundle *bundle = NULL;
	struct ctl_evidence_verdict verdict;
	const char *trust = arguments->trust, *path = arguments->operand;
	char detail[VERIFY_DETAIL_MAX];
	uint8_t *file = NULL;
	size_t len = 0;
	int rc, exit_code;

	if (trust != NULL) {
		bundle = malloc(sizeof *bundle);
		if (bundle == NULL) {
			ctl_report_fail(report, CTL_EXIT_SOFTWARE, "verify-evidence: out of memory");
			return report->exit_code;
		}
		if (ctl_trust_bundle_load(trust, bundle, report) != 0) {
			free(bundle);
			return report->exit_code;
		}
	}
	rc = ctl_file_read_reported(path, &evidence_limit, &file, &len, report, "verify-evidence: %s", path);
	if (rc != 0) {
		free(bundle);
		return report->exit_code;
	}
	rc = ctl_evidence_verify(bundle, file, len, &verdict, detail, sizeof detail);
	free(file);
	free(bundle);
	if (rc != 0) {
		ctl_report_fail(report, CTL_EVIDENCE_EXIT_INVALID,
		                "verify-evidence: %s: invalid evidence: %s", path, detail);
		return report->exit_code;
	}
	printf("%s evidence for %s: %s\n", evidence_kind_name(verdict.kind), verdict.origin, verdict.summary);
	if (verdict.proven) {
		printf("misbehaviour proven: %s\n", verdict.named);
		exit_code = CTL_EVIDENCE_EXIT_PROVEN;
	} else {
		printf("no misbehaviour shown\n");
		exit_code = CTL_EXIT_OK;
	}
	return exit_code;
}

static const struct ctl_command verify_evidence_command = {
    .name = "verify-evidence",
    .usage = verify_evidence_usage,
    .operand = "FILE",
    .options = {CTL_OPTION_TRUST},
    .run = run_verify_evidence,
};

int ctl_evidence_command(int argc, char **argv, struct ctl_report *report)
{
	return ctl_command_run(&verify_evidence_command, argc, argv, report);
}
