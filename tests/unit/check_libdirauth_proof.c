/*
 * check_libdirauth_proof.c: dirauth_verify_proof_file, a proof file checked offline, through the
 * library's public header.
 *
 * The header is the example chain's epoch 2 (tests/vectors/chain/: three authorities, threshold
 * 2, their certificates); the log is built here: a tree of three leaves whose middle one is that
 * header's text, a checkpoint signed by a log key generated for the test and cosigned by a
 * witness generated likewise (test_signed_notes.h), framed by tlog_proof_encode with the header
 * note as the extra, as dirauthd serves it. The context's clock reads years after the header
 * expired, and its state callbacks fail the test when called: a proof is judged at the header's
 * own time, with nothing installed and nothing written.
 *
 * Every refusal has its case, with its status and the part its detail names: not a proof file,
 * no extra, an extra that is no header note or is too large, a certificate bundle that does not
 * parse (malformed); a namespace the bundle does not pin, no log key, no log key of the origin,
 * pins that cannot be met (trust); another origin (mismatch); too few certified signatures,
 * certificates that cover a later time only, a changed header (signature); a checkpoint by
 * another log key, of another log, with too few cosignatures, a leaf that is not the header (log);
 * a NULL (argument).
 */
#include <dirauth/dirauth.h>

#include "test_keys.h"
#include "test_signed_notes.h"
#include "test_support.h"

#include "base/buffer.h"
#include "crypto/merkle.h"
#include "schema/certificate.h"
#include "schema/checkpoint.h"
#include "schema/note.h"
#include "signer/key.h"
#include "tlog/proof.h"
#include "verify/snapshot.h"

#include <check.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHAIN(file)     "tests/vectors/chain/" file
#define ORIGIN          "dirauth.example/mix"
#define LONG_AFTER      1900000000ULL /* 2030: the header of epoch 2 expired long before */
#define TREE_SIZE       3
#define HEADER_LEAF     1
#define CERTIFIED_FROM  1767225600ULL /* the chain's certificates' valid-after */
#define CERTIFIED_UNTIL 1775001600ULL
#define HEADER_VALID    1767225720ULL /* the header's valid-after */

struct fixture {
	uint8_t *bundle, *certificates, *header_note;
	size_t bundle_len, certificates_len, header_note_len;
	struct buffer header_text;
	struct signer_key *log_signer, *other_log_signer, *cosigner, *second_cosigner;
	struct note_verifier cosigner_verifier, second_verifier;
	char log_key[NOTE_VERIFIER_KEY_MAX + 1], other_log_key[NOTE_VERIFIER_KEY_MAX + 1];
	char witness[NOTE_VERIFIER_KEY_MAX + 1], second_witness[NOTE_VERIFIER_KEY_MAX + 1];
};

static struct fixture f;

static uint8_t *vector(const char *name, size_t *len)
{
	return test_read_file(test_source_path(name), len);
}

static void cosigner_new(const char *name, struct signer_key **key, struct note_verifier *verifier,
                         char text[NOTE_VERIFIER_KEY_MAX + 1])
{
	ck_assert_int_eq(signer_key_generate(name, key), 0);
	ck_assert_int_eq(
	    cosignature_verifier_from_ed25519(name, signer_key_verifier(*key)->public_key, verifier), 0);
	note_verifier_format(verifier, text);
}

static void setup(void)
{
	memset(&f, 0, sizeof f);
	f.bundle = vector(CHAIN("trust-bundle.txt"), &f.bundle_len);
	f.certificates = vector(CHAIN("certificates.txt"), &f.certificates_len);
	f.header_note = vector(CHAIN("header.note"), &f.header_note_len);
	buffer_init(&f.header_text);
	struct buffer note = {0};
	buffer_init(&note);
	ck_assert_int_eq(buffer_append(&note, f.header_note, f.header_note_len), 0);
	ck_assert_int_eq(test_note_text(&note, &f.header_text), 0);
	buffer_free(&note);
	/* Two log keys of the namespace's origin: the one pinned, and one nobody pinned. */
	ck_assert_int_eq(signer_key_generate(ORIGIN, &f.log_signer), 0);
	ck_assert_int_eq(signer_key_generate(ORIGIN, &f.other_log_signer), 0);
	note_verifier_format(signer_key_verifier(f.log_signer), f.log_key);
	note_verifier_format(signer_key_verifier(f.other_log_signer), f.other_log_key);
	cosigner_new("witness.example", &f.cosigner, &f.cosigner_verifier, f.witness);
	cosigner_new("second-witness.example", &f.second_cosigner, &f.second_verifier, f.second_witness);
}

static void teardown(void)
{
	free(f.bundle);
	free(f.certificates);
	free(f.header_note);
	buffer_free(&f.header_text);
	signer_key_free(f.log_signer);
	signer_key_free(f.other_log_signer);
	signer_key_free(f.cosigner);
	signer_key_free(f.second_cosigner);
}

/* The log built here: TREE_SIZE leaves, the header's text at HEADER_LEAF. */
static void leaf_hashes(merkle_hash hashes[TREE_SIZE])
{
	static const char *const others[TREE_SIZE] = {"an earlier header\n", NULL, "a later header\n"};
	for (size_t i = 0; i < TREE_SIZE; i++) {
		if (i == HEADER_LEAF)
			ck_assert_int_eq(merkle_leaf_hash(f.header_text.data, f.header_text.len, hashes[i]),
			                 0);
		else
			ck_assert_int_eq(
			    merkle_leaf_hash((const uint8_t *)others[i], strlen(others[i]), hashes[i]), 0);
	}
}

/* A proof file of entry index of that log (extra: NULL for none), its checkpoint of origin signed
 * by log_signer and cosigned by f.cosigner, into out (reset). */
static void make_proof(const char *origin, const struct signer_key *log_signer, uint64_t index,
                       const uint8_t *extra, size_t extra_len, struct buffer *out)
{
	merkle_hash hashes[TREE_SIZE], root, path[MERKLE_MAX_PROOF];
	size_t path_len = 0;
	struct buffer checkpoint;

	leaf_hashes(hashes);
	ck_assert_int_eq(merkle_root(hashes, TREE_SIZE, root), 0);
	ck_assert_int_eq(merkle_inclusion_proof(hashes, TREE_SIZE, index, path, &path_len), 0);
	buffer_init(&checkpoint);
	ck_assert_int_eq(test_cosigned_checkpoint(log_signer, f.cosigner, &f.cosigner_verifier, origin,
	                                          TREE_SIZE, root, HEADER_VALID + 60, &checkpoint),
	                 0);
	buffer_reset(out);
	ck_assert_int_eq(
	    tlog_proof_encode(index, path, path_len, extra, extra_len, checkpoint.data, checkpoint.len, out),
	    0);
	buffer_free(&checkpoint);
}

/* The proof dirauthd would serve for the header: entry HEADER_LEAF, the header note as extra. */
static void good_proof(struct buffer *out)
{
	make_proof(ORIGIN, f.log_signer, HEADER_LEAF, f.header_note, f.header_note_len, out);
}

static uint64_t long_after(void *user)
{
	(void)user;
	return LONG_AFTER;
}

static int state_read_never(void *user, const char *namespace_name, uint8_t *out, size_t cap, size_t *len)
{
	(void)user, (void)namespace_name, (void)out, (void)cap, (void)len;
	ck_abort_msg("an offline check read the state");
	return -1;
}

static int state_write_never(void *user, const char *namespace_name, const uint8_t *bytes, size_t len)
{
	(void)user, (void)namespace_name, (void)bytes, (void)len;
	ck_abort_msg("an offline check wrote the state");
	return -1;
}

/* A context of bundle with log_key_count log keys, witness_count witnesses and quorum. */
static struct dirauth_context *context_of(const uint8_t *bundle, size_t bundle_len,
                                          const char *const *log_keys, size_t log_key_count,
                                          const char *const *witnesses, size_t witness_count, size_t quorum)
{
	static const struct dirauth_callbacks callbacks = {
	    .now = long_after, .state_read = state_read_never, .state_write = state_write_never};
	struct dirauth_options options = {0};
	struct dirauth_result result = {0};
	struct dirauth_context *context = NULL;

	options.log_keys = log_keys;
	options.log_key_count = log_key_count;
	options.witness_keys = witnesses;
	options.witness_key_count = witness_count;
	options.witness_quorum = quorum;
	enum dirauth_status status =
	    dirauth_context_new(&callbacks, bundle, bundle_len, &options, &context, &result);
	ck_assert_msg(status == DIRAUTH_SUCCESS, "context: %s", result.detail);
	return context;
}

/* The chain's bundle, the pinned log key, the one witness, quorum 1. */
static struct dirauth_context *pinned_context(void)
{
	const char *log_keys[] = {f.log_key};
	const char *witnesses[] = {f.witness};
	return context_of(f.bundle, f.bundle_len, log_keys, 1, witnesses, 1, 1);
}

/* Checks proof with certificates in context: expects status, and a detail that starts with
 * words (a success: an empty one). */
static void expect(const struct dirauth_context *context, const uint8_t *certificates,
                   size_t certificates_len, const struct buffer *proof, enum dirauth_status expected,
                   const char *words, struct dirauth_proof_info *info)
{
	struct dirauth_result result = {0};
	enum dirauth_status status = dirauth_verify_proof_file(context, certificates, certificates_len,
	                                                       proof->data, proof->len, info, &result);
	ck_assert_msg(status == expected, "status %s, expected %s: %s", dirauth_status_name(status),
	              dirauth_status_name(expected), result.detail);
	ck_assert_int_eq(result.status, expected);
	if (expected == DIRAUTH_SUCCESS)
		ck_assert_str_eq(result.detail, "");
	else
		ck_assert_msg(strncmp(result.detail, words, strlen(words)) == 0,
		              "'%s' does not start with '%s'", result.detail, words);
	dirauth_result_clear(&result);
}

/* The chain's certificate bundle with its first certificate only (authority 1's). */
static void first_certificate_only(struct buffer *out)
{
	struct certificate_bundle_entry entries[CERTIFICATE_BUNDLE_MAX];
	size_t count = 0;
	ck_assert_int_eq(certificate_bundle_parse(f.certificates, f.certificates_len, entries, &count), 0);
	ck_assert_uint_eq(count, 3);
	const uint8_t *notes[] = {entries[0].note};
	const size_t lengths[] = {entries[0].note_len};
	buffer_init(out);
	ck_assert_int_eq(certificate_bundle_encode(notes, lengths, 1, out), 0);
}

/* A key of keys-example/ (signer_key_load refuses a file others may read, and git keeps no mode:
 * loaded from a private copy). */
static struct signer_key *example_key(const char *dir, const char *name)
{
	char from[512], copy[1024];
	size_t len = 0;
	struct signer_key *key = NULL;
	snprintf(from, sizeof from, "keys-example/%s", name);
	uint8_t *bytes = test_read_file(test_source_path(from), &len);
	snprintf(copy, sizeof copy, "%s/%s", dir, name);
	test_write_file(copy, bytes, len, 0600);
	free(bytes);
	ck_assert_int_eq(signer_key_load(copy, &key), 0);
	return key;
}

/* The three authorities' identity keys certify their signing keys again, valid from valid_after:
 * a certificate bundle of those, into out (initialised here). */
static void certificates_from(uint64_t valid_after, struct buffer *out)
{
	char dir[512];
	struct buffer notes[3];
	const uint8_t *bytes[3];
	size_t lengths[3];

	test_make_tempdir(dir, sizeof dir);
	for (int i = 0; i < 3; i++) {
		char identity_name[64], signing_name[64], authority[64];
		snprintf(identity_name, sizeof identity_name, "authority%d-identity.key", i + 1);
		snprintf(signing_name, sizeof signing_name, "authority%d.key", i + 1);
		snprintf(authority, sizeof authority, "authority%d.dirauth.example", i + 1);
		struct signer_key *identity = example_key(dir, identity_name);
		struct signer_key *signing = example_key(dir, signing_name);
		buffer_init(&notes[i]);
		ck_assert_int_eq(test_certificate_note(identity, authority, signer_key_verifier(signing),
		                                       valid_after, CERTIFIED_UNTIL, &notes[i]),
		                 0);
		bytes[i] = notes[i].data;
		lengths[i] = notes[i].len;
		signer_key_free(identity);
		signer_key_free(signing);
	}
	buffer_init(out);
	ck_assert_int_eq(certificate_bundle_encode(bytes, lengths, 3, out), 0);
	for (int i = 0; i < 3; i++)
		buffer_free(&notes[i]);
	test_remove_tree(dir);
}

START_TEST(test_a_proof_verifies_long_after_its_header_expired)
{
	struct dirauth_context *context = pinned_context();
	struct dirauth_proof_info info;
	struct dirauth_snapshot_info snapshot;
	struct buffer proof;
	merkle_hash hashes[TREE_SIZE], root;

	buffer_init(&proof);
	good_proof(&proof);
	expect(context, f.certificates, f.certificates_len, &proof, DIRAUTH_SUCCESS, "", &info);
	ck_assert_str_eq(info.namespace_name, "mix");
	ck_assert_str_eq(info.origin, ORIGIN);
	ck_assert_uint_eq(info.epoch, 2);
	ck_assert_uint_eq(info.signer_count, 3);
	ck_assert_uint_eq(info.authority_count, 3);
	ck_assert_str_eq(
	    info.signer_names,
	    "authority1.dirauth.example, authority2.dirauth.example, authority3.dirauth.example");
	ck_assert_uint_eq(info.index, HEADER_LEAF);
	ck_assert_uint_eq(info.tree_size, TREE_SIZE);
	leaf_hashes(hashes);
	ck_assert_int_eq(merkle_root(hashes, TREE_SIZE, root), 0);
	ck_assert_mem_eq(info.root, root, sizeof root);
	ck_assert_uint_eq(info.cosigned, 1);
	ck_assert_uint_eq(info.witness_count, 1);
	ck_assert_uint_eq(info.quorum, 1);
	/* No place for what was verified is fine; nothing was installed. */
	expect(context, f.certificates, f.certificates_len, &proof, DIRAUTH_SUCCESS, "", NULL);
	struct dirauth_result result = {0};
	ck_assert_int_eq(dirauth_snapshot(context, "mix", &snapshot, &result), DIRAUTH_E_NO_SNAPSHOT);
	dirauth_result_clear(&result);

	/* Certificates issued anew for the same signing keys verify it as well, as long as they cover
	 * the header's own valid-after (the control of the refusal below). */
	struct buffer certificates;
	certificates_from(CERTIFIED_FROM, &certificates);
	expect(context, certificates.data, certificates.len, &proof, DIRAUTH_SUCCESS, "", &info);
	buffer_free(&certificates);

	/* A log key of another log pinned beside it changes nothing. */
	struct note_verifier elsewhere;
	char elsewhere_key[NOTE_VERIFIER_KEY_MAX + 1];
	ck_assert_int_eq(note_verifier_from_ed25519("dirauth.example/mail",
	                                            signer_key_verifier(f.other_log_signer)->public_key,
	                                            &elsewhere),
	                 0);
	note_verifier_format(&elsewhere, elsewhere_key);
	const char *two_logs[] = {elsewhere_key, f.log_key};
	const char *witnesses[] = {f.witness};
	struct dirauth_context *both = context_of(f.bundle, f.bundle_len, two_logs, 2, witnesses, 1, 1);
	expect(both, f.certificates, f.certificates_len, &proof, DIRAUTH_SUCCESS, "", &info);
	dirauth_context_free(both);
	buffer_free(&proof);
	dirauth_context_free(context);
}
END_TEST

START_TEST(test_what_is_no_header_proof_is_malformed)
{
	struct dirauth_context *context = pinned_context();
	struct dirauth_proof_info info;
	struct buffer proof, large;
	buffer_init(&proof);
	buffer_init(&large);

	buffer_reset(&proof);
	ck_assert_int_eq(buffer_append(&proof, "not a proof\n", 12), 0);
	expect(context, f.certificates, f.certificates_len, &proof, DIRAUTH_E_MALFORMED,
	       "proof: not a c2sp.org/tlog-proof file", &info);
	/* Empty, and past the proof file's bound. */
	buffer_reset(&proof);
	expect(context, f.certificates, f.certificates_len, &proof, DIRAUTH_E_MALFORMED, "proof: ", &info);
	good_proof(&proof);
	ck_assert_int_eq(buffer_append(&large, proof.data, proof.len), 0);
	while (large.len <= TLOG_PROOF_MAX_BYTES)
		ck_assert_int_eq(buffer_append(&large, "\n", 1), 0);
	expect(context, f.certificates, f.certificates_len, &large, DIRAUTH_E_MALFORMED, "proof: ", &info);

	make_proof(ORIGIN, f.log_signer, HEADER_LEAF, NULL, 0, &proof);
	expect(context, f.certificates, f.certificates_len, &proof, DIRAUTH_E_MALFORMED,
	       "proof: carries no snapshot header", &info);
	make_proof(ORIGIN, f.log_signer, HEADER_LEAF, (const uint8_t *)"hello\n", 6, &proof);
	expect(context, f.certificates, f.certificates_len, &proof, DIRAUTH_E_MALFORMED,
	       "header: the proof's extra is not a signed snapshot header note", &info);
	/* The header's text without its signatures is no note either. */
	make_proof(ORIGIN, f.log_signer, HEADER_LEAF, f.header_text.data, f.header_text.len, &proof);
	expect(context, f.certificates, f.certificates_len, &proof, DIRAUTH_E_MALFORMED, "header: ", &info);
	/* An extra within the proof file's bound but larger than any header note. */
	buffer_reset(&large);
	ck_assert_int_eq(buffer_append(&large, f.header_note, f.header_note_len), 0);
	while (large.len <= VERIFY_HEADER_NOTE_MAX)
		ck_assert_int_eq(buffer_append(&large, "x", 1), 0);
	ck_assert_uint_le(large.len, TLOG_PROOF_EXTRA_MAX);
	make_proof(ORIGIN, f.log_signer, HEADER_LEAF, large.data, large.len, &proof);
	expect(context, f.certificates, f.certificates_len, &proof, DIRAUTH_E_MALFORMED,
	       "header: larger than a header note", &info);

	/* A certificate bundle that does not parse. */
	good_proof(&proof);
	expect(context, (const uint8_t *)"certificates\n", 13, &proof, DIRAUTH_E_MALFORMED,
	       "certificates: ", &info);
	ck_assert_str_eq(info.origin, "");        /* the header did not verify */
	ck_assert_uint_eq(info.witness_count, 1); /* the context's pins, whatever refused */
	ck_assert_uint_eq(info.quorum, 1);
	buffer_free(&proof);
	buffer_free(&large);
	dirauth_context_free(context);
}
END_TEST

/* A context of the fixture's pins over the fixture's bundle with its namespace line replaced by
 * namespace_line (the bundle's text into bundle, which the caller frees). */
static struct dirauth_context *context_pinning(const char *namespace_line, struct buffer *bundle)
{
	const char *log_keys[] = {f.log_key};
	const char *witnesses[] = {f.witness};
	test_text_replace(f.bundle, f.bundle_len, "namespace mix dirauth.example/mix", namespace_line,
	                  bundle);
	return context_of(bundle->data, bundle->len, log_keys, 1, witnesses, 1, 1);
}

START_TEST(test_unusable_trust_is_refused)
{
	struct dirauth_proof_info info;
	struct buffer proof, bundle;
	buffer_init(&proof);
	buffer_init(&bundle);
	good_proof(&proof);
	const char *log_keys[] = {f.log_key};
	const char *witnesses[] = {f.witness};

	/* A bundle of the same authorities that pins another namespace only. */
	struct dirauth_context *context = context_pinning("namespace mail dirauth.example/mail", &bundle);
	expect(context, f.certificates, f.certificates_len, &proof, DIRAUTH_E_TRUST,
	       "header: namespace mix is not in the trust bundle", &info);
	dirauth_context_free(context);

	/* No log key: the header verifies, and no checkpoint can be believed. */
	context = context_of(f.bundle, f.bundle_len, NULL, 0, NULL, 0, 0);
	expect(context, f.certificates, f.certificates_len, &proof, DIRAUTH_E_TRUST,
	       "checkpoint: no log key is pinned", &info);
	ck_assert_str_eq(info.origin, ORIGIN);
	ck_assert_uint_eq(info.epoch, 2);
	ck_assert_uint_eq(info.tree_size, 0);
	dirauth_context_free(context);

	/* A log key of another log only. */
	struct note_verifier elsewhere;
	char elsewhere_key[NOTE_VERIFIER_KEY_MAX + 1];
	ck_assert_int_eq(note_verifier_from_ed25519("dirauth.example/mail",
	                                            signer_key_verifier(f.log_signer)->public_key,
	                                            &elsewhere),
	                 0);
	note_verifier_format(&elsewhere, elsewhere_key);
	const char *other_log[] = {elsewhere_key};
	context = context_of(f.bundle, f.bundle_len, other_log, 1, witnesses, 1, 1);
	expect(context, f.certificates, f.certificates_len, &proof, DIRAUTH_E_TRUST,
	       "checkpoint: none of the 1 pinned log keys is of the log 'dirauth.example/mix'", &info);
	dirauth_context_free(context);

	/* One witness key given twice, and a quorum of two: one key counts once, so never met. */
	const char *twice[] = {f.witness, f.witness};
	context = context_of(f.bundle, f.bundle_len, log_keys, 1, twice, 2, 2);
	expect(context, f.certificates, f.certificates_len, &proof, DIRAUTH_E_TRUST,
	       "checkpoint: the log's pins cannot be met", &info);
	dirauth_context_free(context);
	buffer_free(&proof);
	buffer_free(&bundle);
}
END_TEST

START_TEST(test_another_origin_is_a_mismatch)
{
	struct dirauth_proof_info info;
	struct buffer proof, bundle;
	buffer_init(&proof);
	buffer_init(&bundle);
	good_proof(&proof);
	struct dirauth_context *context = context_pinning("namespace mix dirauth.example/elsewhere", &bundle);
	expect(
	    context, f.certificates, f.certificates_len, &proof, DIRAUTH_E_MISMATCH,
	    "header: wrong origin 'dirauth.example/mix', the trust bundle pins 'dirauth.example/elsewhere'",
	    &info);
	ck_assert_str_eq(info.origin, "");
	dirauth_context_free(context);
	buffer_free(&proof);
	buffer_free(&bundle);
}
END_TEST

START_TEST(test_signatures_are_judged_at_the_headers_own_time)
{
	struct dirauth_context *context = pinned_context();
	struct dirauth_proof_info info;
	struct buffer proof, certificates, changed;
	buffer_init(&proof);
	buffer_init(&changed);
	good_proof(&proof);

	/* One certified signature of the two the threshold needs. */
	first_certificate_only(&certificates);
	expect(context, certificates.data, certificates.len, &proof, DIRAUTH_E_SIGNATURE, "header: ", &info);
	ck_assert_str_eq(info.origin, "");
	buffer_free(&certificates);

	/* The same keys, certified only from after the header's valid-after: valid now, not then. */
	certificates_from(HEADER_VALID + 1, &certificates);
	expect(context, certificates.data, certificates.len, &proof, DIRAUTH_E_SIGNATURE, "header: ", &info);
	buffer_free(&certificates);

	/* No certificate at all. */
	expect(context, (const uint8_t *)"dirauth certificates v1\n", 24, &proof, DIRAUTH_E_SIGNATURE,
	       "header: ", &info);

	/* A header changed under its signatures (and the log built over the changed text would not
	 * help: the signatures are checked first). */
	test_text_replace(f.header_note, f.header_note_len, "records 2\n", "records 3\n", &changed);
	make_proof(ORIGIN, f.log_signer, HEADER_LEAF, changed.data, changed.len, &proof);
	expect(context, f.certificates, f.certificates_len, &proof, DIRAUTH_E_SIGNATURE, "header: ", &info);
	buffer_free(&changed);
	buffer_free(&proof);
	dirauth_context_free(context);
}
END_TEST

START_TEST(test_the_log_refuses)
{
	struct dirauth_context *context = pinned_context();
	struct dirauth_proof_info info;
	struct buffer proof;
	buffer_init(&proof);

	/* Signed by a log key of the origin that nobody pinned. */
	make_proof(ORIGIN, f.other_log_signer, HEADER_LEAF, f.header_note, f.header_note_len, &proof);
	expect(context, f.certificates, f.certificates_len, &proof, DIRAUTH_E_LOG,
	       "checkpoint: signed by none of the 1 pinned log keys", &info);
	ck_assert_str_eq(info.origin, ORIGIN); /* the header verified; the log did not */
	ck_assert_uint_eq(info.tree_size, 0);

	/* A checkpoint of another log, by the pinned key. */
	make_proof("dirauth.example/mail", f.log_signer, HEADER_LEAF, f.header_note, f.header_note_len,
	           &proof);
	expect(
	    context, f.certificates, f.certificates_len, &proof, DIRAUTH_E_LOG,
	    "checkpoint: of the log 'dirauth.example/mail', not of the namespace's log 'dirauth.example/mix'",
	    &info);

	/* A checkpoint changed under its signatures: one byte of its root. */
	good_proof(&proof);
	char *root = strstr((char *)proof.data, "\n3\n");
	ck_assert_ptr_nonnull(root);
	root[3] = root[3] == 'A' ? 'B' : 'A';
	expect(context, f.certificates, f.certificates_len, &proof, DIRAUTH_E_LOG,
	       "checkpoint: a signature by the log key or a pinned witness does not verify", &info);

	/* Two witnesses pinned, both required; one cosigned. */
	const char *log_keys[] = {f.log_key};
	const char *witnesses[] = {f.witness, f.second_witness};
	struct dirauth_context *two = context_of(f.bundle, f.bundle_len, log_keys, 1, witnesses, 2, 2);
	good_proof(&proof);
	expect(two, f.certificates, f.certificates_len, &proof, DIRAUTH_E_LOG,
	       "checkpoint: cosigned by 1 of the 2 pinned witnesses, 2 required", &info);
	ck_assert_uint_eq(info.witness_count, 2);
	ck_assert_uint_eq(info.quorum, 2);
	ck_assert_uint_eq(info.tree_size, 0); /* the log's part only once the whole proof verified */
	dirauth_context_free(two);

	/* A proof of another entry of the tree, with the header as its extra. */
	make_proof(ORIGIN, f.log_signer, 0, f.header_note, f.header_note_len, &proof);
	expect(context, f.certificates, f.certificates_len, &proof, DIRAUTH_E_LOG,
	       "inclusion: the header is not entry 0 of the checkpoint's tree of 3", &info);
	ck_assert_str_eq(info.origin, ORIGIN);
	ck_assert_uint_eq(info.index, 0);
	ck_assert_uint_eq(info.tree_size, 0);
	buffer_free(&proof);
	dirauth_context_free(context);
}
END_TEST

START_TEST(test_arguments_are_refused)
{
	struct dirauth_context *context = pinned_context();
	struct dirauth_result result = {0};
	struct buffer proof;
	buffer_init(&proof);
	good_proof(&proof);

	ck_assert_int_eq(dirauth_verify_proof_file(NULL, f.certificates, f.certificates_len, proof.data,
	                                           proof.len, NULL, &result),
	                 DIRAUTH_E_ARGUMENT);
	ck_assert_int_eq(
	    dirauth_verify_proof_file(context, f.certificates, f.certificates_len, NULL, 10, NULL, &result),
	    DIRAUTH_E_ARGUMENT);
	ck_assert_int_eq(dirauth_verify_proof_file(context, NULL, 10, proof.data, proof.len, NULL, &result),
	                 DIRAUTH_E_ARGUMENT);
	ck_assert_str_ne(result.detail, "");
	/* A NULL result is allowed. */
	ck_assert_int_eq(dirauth_verify_proof_file(context, f.certificates, f.certificates_len, proof.data,
	                                           proof.len, NULL, NULL),
	                 DIRAUTH_SUCCESS);
	dirauth_result_clear(&result);
	buffer_free(&proof);
	dirauth_context_free(context);
}
END_TEST

static Suite *libdirauth_proof_suite(void)
{
	Suite *suite = suite_create("libdirauth_proof");
	TCase *tc = tcase_create("proof_file");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_a_proof_verifies_long_after_its_header_expired);
	tcase_add_test(tc, test_what_is_no_header_proof_is_malformed);
	tcase_add_test(tc, test_unusable_trust_is_refused);
	tcase_add_test(tc, test_another_origin_is_a_mismatch);
	tcase_add_test(tc, test_signatures_are_judged_at_the_headers_own_time);
	tcase_add_test(tc, test_the_log_refuses);
	tcase_add_test(tc, test_arguments_are_refused);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	SRunner *runner = srunner_create(libdirauth_proof_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failed = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
