/*
 * check_witness.c: this authority as a c2sp.org/tlog-witness witness (server/tlog/witness.h)
 * over real HTTP on loopback (http_fixture.h: a real signer, store and HTTP server), and the
 * add-checkpoint request's parser.
 *
 * The fixture's dirauthd is authority1 of a set of two whose configuration pins authority2's
 * log key (named dirauth.example/mix) and cosignature key. The test plays authority2: it builds
 * trees in memory, signs their checkpoints with that log key and posts them. Every status of the
 * spec is met: 200 with a cosignature line that verifies under the witness's cosignature key, 409
 * with the witness's size as text/x.tlog.size (an old size that does not match; a fork of the
 * same size), 422 (a wrong proof; a proof of another tree, inconsistent with the head cosigned
 * last), 403 (an unknown key; a failing line under the known key), 404 (another origin; a
 * namespace whose log is unknown), 400 (garbage; an old size above the checkpoint's), 413, 503
 * (the signer stopped). After each refusal the witnessed tree head, in the store and at the
 * signer, is what it was. The configuration's log keys and witnesses are checked as well.
 */
#include "canned_http.h"
#include "http_fixture.h"

#include "schema/checkpoint.h"
#include "schema/encoding.h"
#include "crypto/merkle.h"
#include "server/publish/publish.h"
#include "server/store/tlog_table.h"
#include "server/tlog/cosigning.h"
#include "server/tlog/translog.h"
#include "server/tlog/witness.h"
#include "signer/key.h"
#include "tlog/policy.h"

#define ORIGIN      "dirauth.example/mix"
#define TREE_MAX    16
#define ADD_PATH    "/v1/mix/log/add-checkpoint"
#define TEST_PEER   "authority2.dirauth.example"
#define TEST_COSIGN "authority2.dirauth.example/cosigner"

/* A tree of leaves "<label> <i>". */
struct tree {
	merkle_hash leaves[TREE_MAX];
};

static void tree_make(struct tree *t, const char *label)
{
	for (unsigned i = 0; i < TREE_MAX; i++) {
		char leaf[64];
		int n = snprintf(leaf, sizeof leaf, "%s %u\n", label, i);
		ck_assert_int_eq(merkle_leaf_hash((const uint8_t *)leaf, (size_t)n, t->leaves[i]), 0);
	}
}

static void tree_root(const struct tree *t, uint64_t size, merkle_hash out)
{
	ck_assert_int_eq(merkle_root(t->leaves, size, out), 0);
}

/* The keys of the set: authority2's, made for the test. */
struct peer {
	struct signer_key *identity, *log, *cosigner, *stranger_log, *self_identity;
	struct note_verifier cosigner_key;
};

static struct peer peer;

static void peer_make(void)
{
	ck_assert_int_eq(signer_key_generate(TEST_PEER, &peer.identity), 0);
	ck_assert_int_eq(signer_key_generate(ORIGIN, &peer.log), 0);
	ck_assert_int_eq(signer_key_generate(TEST_COSIGN, &peer.cosigner), 0);
	ck_assert_int_eq(signer_key_generate(ORIGIN, &peer.stranger_log), 0);
	ck_assert_int_eq(signer_key_generate("authority1.dirauth.example", &peer.self_identity), 0);
	ck_assert_int_eq(cosignature_verifier_from_ed25519(
	                     TEST_COSIGN, signer_key_verifier(peer.cosigner)->public_key, &peer.cosigner_key),
	                 0);
}

static void peer_free(void)
{
	signer_key_free(peer.identity);
	signer_key_free(peer.log);
	signer_key_free(peer.cosigner);
	signer_key_free(peer.stranger_log);
	signer_key_free(peer.self_identity);
	memset(&peer, 0, sizeof peer);
}

/* The authorities section pinning authority2's log and cosignature keys, and extra lines of it
 * (witnesses). */
static void open_witness_with(struct fixture *f, const char *extra)
{
	char self[NOTE_VERIFIER_KEY_MAX + 1], identity[NOTE_VERIFIER_KEY_MAX + 1],
	    log[NOTE_VERIFIER_KEY_MAX + 1], cosigner[NOTE_VERIFIER_KEY_MAX + 1], text[2048];
	peer_make();
	note_verifier_format(signer_key_verifier(peer.self_identity), self);
	note_verifier_format(signer_key_verifier(peer.identity), identity);
	note_verifier_format(signer_key_verifier(peer.log), log);
	note_verifier_format(&peer.cosigner_key, cosigner);
	snprintf(text, sizeof text,
	         "http: { threads: 2 }\n"
	         "authorities:\n"
	         "  threshold: 2\n"
	         "  members:\n"
	         "    - { name: authority1.dirauth.example, identity: \"%s\", url: \"http://127.0.0.1:1\" }\n"
	         "    - { name: %s, identity: \"%s\", url: \"http://127.0.0.1:2\",\n"
	         "        log_key: \"%s\", cosignature_key: \"%s\" }\n"
	         "%s",
	         self, TEST_PEER, identity, log, cosigner, extra);
	fixture_open_with(f, 0, text);
}

static void open_witness(struct fixture *f)
{
	open_witness_with(f, "");
}

static void close_witness(struct fixture *f)
{
	fixture_close(f);
	peer_free();
}

/* The checkpoint note of the first size leaves of t, signed by key (and, when tamper, with
 * that signature's last byte changed). */
static void checkpoint_note(const struct tree *t, uint64_t size, const struct signer_key *key, int tamper,
                            struct buffer *out)
{
	struct checkpoint c;
	struct buffer text;
	struct note_signature signature;
	memset(&c, 0, sizeof c);
	snprintf(c.origin, sizeof c.origin, "%s", ORIGIN);
	c.tree_size = size;
	tree_root(t, size, c.root);
	buffer_init(&text);
	ck_assert_int_eq(checkpoint_encode(&c, &text), 0);
	ck_assert_int_eq(signer_key_sign(key, text.data, text.len, &signature), 0);
	if (tamper)
		signature.signature[signature.signature_len - 1] ^= 1;
	buffer_init(out);
	ck_assert_int_eq(note_format(text.data, text.len, &signature, 1, out), 0);
	buffer_free(&text);
}

/* The request body: old size, the proof from it in t (proof_tree: the tree the proof is of),
 * the checkpoint of size leaves of t signed by key. */
static void request_body(const struct tree *t, const struct tree *proof_tree, uint64_t old_size,
                         uint64_t size, const struct signer_key *key, struct buffer *out)
{
	merkle_hash proof[MERKLE_MAX_PROOF];
	size_t proof_len = 0;
	struct buffer note;
	if (old_size > 0 && old_size < size)
		ck_assert_int_eq(
		    merkle_consistency_proof(proof_tree->leaves, size, old_size, proof, &proof_len), 0);
	checkpoint_note(t, size, key, 0, &note);
	buffer_init(out);
	ck_assert_int_eq(translog_add_checkpoint_encode(old_size, proof, proof_len, note.data, note.len, out),
	                 0);
	buffer_free(&note);
}

static void add(struct fixture *f, const char *path, const struct buffer *body, struct response *out)
{
	request(f, "POST", path, body->data, body->len, 0, NULL, out);
}

/* The witnessed head in the store and the signer's latest tree head of the origin. */
struct head {
	struct store_log_witnessed stored;
	uint64_t signer_size;
	merkle_hash signer_root;
};

static void head_read(struct fixture *f, struct head *h)
{
	struct buffer payload;
	struct translog_signer_state state;
	char why[SIGNER_DETAIL_MAX + 1];
	memset(h, 0, sizeof *h);
	ck_assert_int_eq(store_log_witnessed(f->store, "mix", &h->stored), 0);
	buffer_init(&payload);
	ck_assert_int_eq(signer_client_query(f->signer, SIGNER_OP_CHECKPOINT_STATE, (const uint8_t *)ORIGIN,
	                                     strlen(ORIGIN), &payload, why, sizeof why),
	                 0);
	ck_assert_int_eq(translog_signer_state_parse(payload.data, payload.len, &state), 0);
	int rc = translog_signer_state_latest(&state, &h->signer_size, h->signer_root);
	ck_assert(rc == 0 || rc == DIRAUTH_ERR_NOT_FOUND);
	buffer_free(&payload);
}

static void expect_head(struct fixture *f, uint64_t size, const merkle_hash root)
{
	struct head h;
	head_read(f, &h);
	ck_assert(h.stored.has);
	ck_assert_uint_eq(h.stored.size, size);
	ck_assert_uint_eq(h.signer_size, size);
	ck_assert(memcmp(h.stored.root, root, MERKLE_HASH_SIZE) == 0);
	ck_assert(memcmp(h.signer_root, root, MERKLE_HASH_SIZE) == 0);
}

/* The witness's cosignature key, from the fixture signer's key file. */
static void witness_cosigner(struct fixture *f, struct note_verifier *out)
{
	struct signer_key *key = NULL;
	ck_assert_int_eq(signer_key_load(f->signer_process.cosignature_key_path, &key), 0);
	ck_assert_int_eq(cosignature_verifier_from_ed25519(signer_key_verifier(key)->name,
	                                                   signer_key_verifier(key)->public_key, out),
	                 0);
	signer_key_free(key);
}

/* A 200: one cosignature line by the witness's key over the checkpoint the body carried. */
static void expect_cosigned(struct fixture *f, const struct buffer *body, const struct response *r)
{
	ck_assert_msg(r->status == 200, "status %ld: %s", r->status,
	              r->body.data ? (char *)r->body.data : "");
	ck_assert_str_eq(header(r, "Content-Type"), "text/plain; charset=utf-8");
	ck_assert(r->body.len > 4 && memcmp(r->body.data, "\xe2\x80\x94 ", 4) == 0);
	ck_assert(r->body.data[r->body.len - 1] == '\n');
	ck_assert(memchr(r->body.data, '\n', r->body.len) == r->body.data + r->body.len - 1); /* one line */
	struct translog_add_checkpoint parsed;
	ck_assert_int_eq(translog_add_checkpoint_parse(body->data, body->len, &parsed), 0);
	struct buffer cosigned;
	buffer_init(&cosigned);
	ck_assert_int_eq(buffer_append(&cosigned, parsed.note_bytes, parsed.note_len), 0);
	ck_assert_int_eq(buffer_append(&cosigned, r->body.data, r->body.len), 0);
	struct note *note = NULL;
	ck_assert_int_eq(note_parse(cosigned.data, cosigned.len, &note), 0);
	struct note_verifier cosigner;
	witness_cosigner(f, &cosigner);
	uint64_t timestamp = 0;
	ck_assert_int_eq(cosignature_verify(note, &cosigner, &timestamp), 0);
	ck_assert_uint_gt(timestamp, 0);
	note_free(note);
	buffer_free(&cosigned);
	translog_add_checkpoint_free(&parsed);
}

static void expect_conflict(const struct response *r, uint64_t size)
{
	char expected[32];
	snprintf(expected, sizeof expected, "%llu\n", (unsigned long long)size);
	ck_assert_msg(r->status == 409, "status %ld: %s", r->status,
	              r->body.data ? (char *)r->body.data : "");
	ck_assert_str_eq(header(r, "Content-Type"), "text/x.tlog.size");
	ck_assert_uint_eq(r->body.len, strlen(expected));
	ck_assert(memcmp(r->body.data, expected, r->body.len) == 0);
}

/* ---- the parser ---- */

START_TEST(test_request_round_trip)
{
	struct tree t;
	struct buffer body;
	tree_make(&t, "a");
	peer_make();
	request_body(&t, &t, 3, 11, peer.log, &body);
	struct translog_add_checkpoint r;
	ck_assert_int_eq(translog_add_checkpoint_parse(body.data, body.len, &r), 0);
	ck_assert_uint_eq(r.old_size, 3);
	ck_assert_uint_eq(r.checkpoint.tree_size, 11);
	ck_assert_str_eq(r.checkpoint.origin, ORIGIN);
	merkle_hash root3, root11;
	tree_root(&t, 3, root3);
	tree_root(&t, 11, root11);
	ck_assert_int_eq(merkle_consistency_verify(3, 11, root3, root11, r.proof, r.proof_count), 0);
	ck_assert(memcmp(body.data, "old 3\n", 6) == 0);
	struct buffer again;
	buffer_init(&again);
	ck_assert_int_eq(translog_add_checkpoint_encode(r.old_size, r.proof, r.proof_count, r.note_bytes,
	                                                r.note_len, &again),
	                 0);
	ck_assert_uint_eq(again.len, body.len);
	ck_assert(memcmp(again.data, body.data, body.len) == 0);
	buffer_free(&again);
	translog_add_checkpoint_free(&r);

	/* The spec's example shape: old 0, no proof line, the empty line, the note. */
	buffer_free(&body);
	request_body(&t, &t, 0, 5, peer.log, &body);
	ck_assert(memcmp(body.data, "old 0\n\n" ORIGIN "\n5\n", 7 + strlen(ORIGIN) + 3) == 0);
	ck_assert_int_eq(translog_add_checkpoint_parse(body.data, body.len, &r), 0);
	ck_assert_uint_eq(r.proof_count, 0);
	translog_add_checkpoint_free(&r);
	buffer_free(&body);
	peer_free();

	/* The spec's example request (c2sp.org/tlog-witness, add-checkpoint) parses. */
	size_t len = 0;
	uint8_t *example =
	    test_read_file(DIRAUTH_SOURCE_DIR "/tests/fuzz/corpus/add_checkpoint/spec-example.txt", &len);
	ck_assert_int_eq(translog_add_checkpoint_parse(example, len, &r), 0);
	ck_assert_uint_eq(r.old_size, 20852014);
	ck_assert_uint_eq(r.proof_count, 4);
	ck_assert_str_eq(r.checkpoint.origin, "example.com/behind-the-sofa");
	ck_assert_uint_eq(r.checkpoint.tree_size, 20852163);
	ck_assert_uint_eq(r.note->signature_count, 2);
	translog_add_checkpoint_free(&r);
	free(example);
}
END_TEST

/* body with from replaced by to must be refused with rc. */
static void expect_refused(const struct buffer *body, const char *from, const char *to, int rc)
{
	struct buffer changed;
	struct translog_add_checkpoint r;
	buffer_init(&changed);
	test_text_replace(body->data, body->len, from, to, &changed);
	ck_assert_msg(changed.len != body->len || memcmp(changed.data, body->data, body->len) != 0,
	              "'%s' is not in the body", from);
	ck_assert_int_eq(translog_add_checkpoint_parse(changed.data, changed.len, &r), rc);
	ck_assert_ptr_null(r.note);
	buffer_free(&changed);
}

START_TEST(test_request_refusals)
{
	struct tree t;
	struct buffer body, first;
	struct translog_add_checkpoint r;
	tree_make(&t, "a");
	peer_make();
	request_body(&t, &t, 3, 11, peer.log, &body);
	buffer_init(&first);
	ck_assert_int_eq(buffer_append(&first, body.data, 6), 0); /* "old 3\n" */

	expect_refused(&body, "old 3\n", "old 03\n", DIRAUTH_ERR_SYNTAX);
	expect_refused(&body, "old 3\n", "old  3\n", DIRAUTH_ERR_SYNTAX);
	expect_refused(&body, "old 3\n", "old -3\n", DIRAUTH_ERR_SYNTAX);
	expect_refused(&body, "old 3\n", "Old 3\n", DIRAUTH_ERR_SYNTAX);
	expect_refused(&body, "old 3\n", "old 3\r\n", DIRAUTH_ERR_SYNTAX);
	expect_refused(&body, "old 3\n", "old 18446744073709551616\n", DIRAUTH_ERR_SYNTAX);
	expect_refused(&body, "=\n\n", "=\n", DIRAUTH_ERR_SYNTAX);                    /* no empty line */
	expect_refused(&body, "=\n\n", "=\n\n\n", DIRAUTH_ERR_SYNTAX);                /* one more */
	expect_refused(&body, ORIGIN "\n11\n", ORIGIN "\n011\n", DIRAUTH_ERR_SYNTAX); /* not a checkpoint */
	/* A proof line that is not 44 characters of canonical base64. */
	expect_refused(&body, "=\n", "\n", DIRAUTH_ERR_SYNTAX);
	expect_refused(&body, "=\n", "==\n", DIRAUTH_ERR_SYNTAX);
	/* The note in another spelling: a trailing byte, a missing signature. */
	struct buffer changed;
	buffer_init(&changed);
	ck_assert_int_eq(buffer_append(&changed, body.data, body.len), 0);
	ck_assert_int_eq(buffer_append(&changed, "\n", 1), 0);
	ck_assert_int_eq(translog_add_checkpoint_parse(changed.data, changed.len, &r), DIRAUTH_ERR_SYNTAX);
	buffer_reset(&changed);
	ck_assert_int_eq(translog_add_checkpoint_parse(body.data, 6, &r), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(translog_add_checkpoint_parse((const uint8_t *)"", 0, &r), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(translog_add_checkpoint_parse((const uint8_t *)"old 3", 5, &r), DIRAUTH_ERR_SYNTAX);

	/* 63 proof lines parse (the spec's most), 64 are too many. */
	struct buffer note;
	checkpoint_note(&t, 11, peer.log, 0, &note);
	for (unsigned lines = 63; lines <= 64; lines++) {
		buffer_reset(&changed);
		ck_assert_int_eq(buffer_appendf(&changed, "old 3\n"), 0);
		for (unsigned i = 0; i < lines; i++)
			ck_assert_int_eq(
			    buffer_appendf(&changed, "PlRNCrwHpqhGrupue0L7gxbjbMiKA9temvuZZDDpkaw=\n"), 0);
		ck_assert_int_eq(buffer_append(&changed, "\n", 1), 0);
		ck_assert_int_eq(buffer_append(&changed, note.data, note.len), 0);
		int rc = translog_add_checkpoint_parse(changed.data, changed.len, &r);
		ck_assert_int_eq(rc, lines == 63 ? 0 : DIRAUTH_ERR_BOUNDS);
		if (rc == 0)
			ck_assert_uint_eq(r.proof_count, 63);
		translog_add_checkpoint_free(&r);
	}
	merkle_hash many[64];
	memset(many, 0, sizeof many);
	buffer_reset(&changed);
	ck_assert_int_eq(translog_add_checkpoint_encode(3, many, 64, note.data, note.len, &changed),
	                 DIRAUTH_ERR_BOUNDS);
	ck_assert_uint_eq(changed.len, 0);
	/* Past the bound, refused before anything is read. */
	uint8_t *big = calloc(1, TRANSLOG_ADD_CHECKPOINT_MAX + 1);
	memcpy(big, body.data, body.len);
	ck_assert_int_eq(translog_add_checkpoint_parse(big, TRANSLOG_ADD_CHECKPOINT_MAX + 1, &r),
	                 DIRAUTH_ERR_BOUNDS);
	free(big);
	buffer_free(&note);
	buffer_free(&changed);
	buffer_free(&first);
	buffer_free(&body);
	peer_free();
}
END_TEST

/* ---- the witness over HTTP ---- */

START_TEST(test_witness_statuses)
{
	struct fixture f;
	struct tree a, b;
	struct buffer body;
	struct response r;
	merkle_hash root3, root5;
	open_witness(&f);
	tree_make(&a, "a");
	tree_make(&b, "b");
	tree_root(&a, 3, root3);
	tree_root(&a, 5, root5);

	/* First contact: old 0, a checkpoint of 3. 200, recorded at the store and the signer. */
	request_body(&a, &a, 0, 3, peer.log, &body);
	add(&f, ADD_PATH, &body, &r);
	expect_cosigned(&f, &body, &r);
	response_free(&r);
	expect_head(&f, 3, root3);

	/* The same again: the old size no longer matches; 409 names 3. */
	add(&f, ADD_PATH, &body, &r);
	expect_conflict(&r, 3);
	response_free(&r);
	buffer_free(&body);
	expect_head(&f, 3, root3);

	/* From 3 to 5 with its proof: 200. */
	request_body(&a, &a, 3, 5, peer.log, &body);
	add(&f, ADD_PATH, &body, &r);
	expect_cosigned(&f, &body, &r);
	response_free(&r);
	buffer_free(&body);
	expect_head(&f, 5, root5);

	/* The same tree head again from its own size, with no proof: a repeat, 200. */
	request_body(&a, &a, 5, 5, peer.log, &body);
	add(&f, ADD_PATH, &body, &r);
	expect_cosigned(&f, &body, &r);
	response_free(&r);
	buffer_free(&body);

	/* Another tree of the same size: a fork, 409 naming 5, logged. */
	request_body(&b, &b, 5, 5, peer.log, &body);
	add(&f, ADD_PATH, &body, &r);
	expect_conflict(&r, 5);
	response_free(&r);
	buffer_free(&body);
	expect_head(&f, 5, root5);
	char *log = read_log(&f);
	ck_assert_msg(strstr(log, "add-checkpoint refused (409)") != NULL, "%s", log);
	free(log);

	/* A checkpoint inconsistent with the head cosigned last: tree b's 8, with b's own proof from
	 * its 5. 422, logged, nothing changed. */
	request_body(&b, &b, 5, 8, peer.log, &body);
	add(&f, ADD_PATH, &body, &r);
	expect_error(&r, 422, "inconsistent_checkpoint");
	response_free(&r);
	buffer_free(&body);
	expect_head(&f, 5, root5);
	log = read_log(&f);
	ck_assert_msg(strstr(log, "add-checkpoint refused (422)") != NULL, "%s", log);
	free(log);

	/* A proof with a hash changed: 422. */
	request_body(&a, &a, 5, 8, peer.log, &body);
	struct translog_add_checkpoint parsed;
	ck_assert_int_eq(translog_add_checkpoint_parse(body.data, body.len, &parsed), 0);
	parsed.proof[0][0] ^= 1;
	struct buffer tampered;
	buffer_init(&tampered);
	ck_assert_int_eq(translog_add_checkpoint_encode(5, parsed.proof, parsed.proof_count,
	                                                parsed.note_bytes, parsed.note_len, &tampered),
	                 0);
	add(&f, ADD_PATH, &tampered, &r);
	expect_error(&r, 422, "inconsistent_checkpoint");
	response_free(&r);
	buffer_free(&tampered);
	translog_add_checkpoint_free(&parsed);
	expect_head(&f, 5, root5);

	/* An old size above the checkpoint's: 400. */
	buffer_free(&body);
	request_body(&a, &a, 9, 8, peer.log, &body);
	add(&f, ADD_PATH, &body, &r);
	expect_error(&r, 400, "malformed");
	response_free(&r);
	buffer_free(&body);

	/* Signed by a key nobody pinned, though named by the origin: 403. A failing line under the
	 * pinned key: 403. */
	request_body(&a, &a, 5, 8, peer.stranger_log, &body);
	add(&f, ADD_PATH, &body, &r);
	expect_error(&r, 403, "bad_signature");
	response_free(&r);
	buffer_free(&body);
	struct buffer note;
	merkle_hash proof[MERKLE_MAX_PROOF];
	size_t proof_len = 0;
	ck_assert_int_eq(merkle_consistency_proof(a.leaves, 8, 5, proof, &proof_len), 0);
	checkpoint_note(&a, 8, peer.log, 1, &note);
	buffer_init(&body);
	ck_assert_int_eq(translog_add_checkpoint_encode(5, proof, proof_len, note.data, note.len, &body), 0);
	add(&f, ADD_PATH, &body, &r);
	expect_error(&r, 403, "bad_signature");
	response_free(&r);
	buffer_free(&body);
	buffer_free(&note);

	/* Posted to the namespace of another origin (mail): 404 unknown_log. */
	request_body(&a, &a, 5, 8, peer.log, &body);
	add(&f, "/v1/mail/log/add-checkpoint", &body, &r);
	expect_error(&r, 404, "unknown_log");
	response_free(&r);
	/* Garbage: 400. Too large: 413, before it is read. */
	struct buffer garbage;
	buffer_init(&garbage);
	ck_assert_int_eq(buffer_appendf(&garbage, "old 5\nnot base64\n\n"), 0);
	add(&f, ADD_PATH, &garbage, &r);
	expect_error(&r, 400, "malformed");
	response_free(&r);
	buffer_reset(&garbage);
	for (size_t i = 0; i <= TRANSLOG_ADD_CHECKPOINT_MAX / 8; i++)
		ck_assert_int_eq(buffer_append(&garbage, "old 555\n", 8), 0);
	add(&f, ADD_PATH, &garbage, &r);
	expect_error(&r, 413, "body_too_large");
	response_free(&r);
	buffer_free(&garbage);
	/* Only POST. */
	request(&f, "GET", ADD_PATH, NULL, 0, 0, NULL, &r);
	ck_assert_int_eq(r.status, 405);
	ck_assert_str_eq(header(&r, "Allow"), "POST");
	response_free(&r);
	expect_head(&f, 5, root5);

	/* The right one now: 200, and the head moves on. */
	add(&f, ADD_PATH, &body, &r);
	expect_cosigned(&f, &body, &r);
	response_free(&r);
	buffer_free(&body);
	merkle_hash root8;
	tree_root(&a, 8, root8);
	expect_head(&f, 8, root8);

	/* The signer stopped: 503, nothing changed; a bad signature is still 403 without it. */
	signer_fixture_stop(&f.signer_process);
	request_body(&a, &a, 8, 9, peer.log, &body);
	add(&f, ADD_PATH, &body, &r);
	expect_error(&r, 503, "unavailable");
	response_free(&r);
	buffer_free(&body);
	request_body(&a, &a, 8, 9, peer.stranger_log, &body);
	add(&f, ADD_PATH, &body, &r);
	expect_error(&r, 403, "bad_signature");
	response_free(&r);
	buffer_free(&body);
	signer_fixture_start(&f.signer_process);
	expect_head(&f, 8, root8);
	close_witness(&f);
}
END_TEST

/* The signer's tree head ahead of the store's record (this authority's own log signed a larger
 * tree, or a crash between cosigning and recording): the witness takes the signer's. */
/* A witness that cosigned the empty tree goes on from it: old size 0, no proof, as from no head. */
START_TEST(test_witness_grows_from_the_empty_tree)
{
	struct fixture f;
	struct tree a;
	struct buffer body;
	struct response r;
	merkle_hash empty, root3;
	open_witness(&f);
	tree_make(&a, "a");
	tree_root(&a, 0, empty);
	tree_root(&a, 3, root3);
	request_body(&a, &a, 0, 0, peer.log, &body);
	add(&f, ADD_PATH, &body, &r);
	expect_cosigned(&f, &body, &r);
	response_free(&r);
	buffer_free(&body);
	expect_head(&f, 0, empty);
	request_body(&a, &a, 0, 3, peer.log, &body);
	add(&f, ADD_PATH, &body, &r);
	expect_cosigned(&f, &body, &r);
	response_free(&r);
	buffer_free(&body);
	expect_head(&f, 3, root3);
	close_witness(&f);
}
END_TEST

START_TEST(test_witness_follows_its_signer)
{
	struct fixture f;
	struct tree a;
	struct buffer body, note;
	struct response r;
	struct note_signature signature;
	char why[SIGNER_DETAIL_MAX + 1];
	merkle_hash root4;
	open_witness(&f);
	tree_make(&a, "a");
	tree_root(&a, 4, root4);
	/* The signer cosigns a's 4 directly, as this authority's own log would. */
	checkpoint_note(&a, 4, peer.log, 0, &note);
	struct note *parsed = NULL;
	ck_assert_int_eq(note_parse(note.data, note.len, &parsed), 0);
	ck_assert_int_eq(signer_client_sign(f.signer, SIGNER_OP_COSIGN_CHECKPOINT, parsed->text,
	                                    parsed->text_len, 0, NULL, 0, &signature, why, sizeof why),
	                 0);
	note_free(parsed);
	buffer_free(&note);
	struct head h;
	head_read(&f, &h);
	ck_assert(!h.stored.has);
	ck_assert_uint_eq(h.signer_size, 4);
	/* A client that believes the witness knows nothing is told 4, and the store follows. */
	request_body(&a, &a, 0, 6, peer.log, &body);
	add(&f, ADD_PATH, &body, &r);
	expect_conflict(&r, 4);
	response_free(&r);
	buffer_free(&body);
	expect_head(&f, 4, root4);
	request_body(&a, &a, 4, 6, peer.log, &body);
	add(&f, ADD_PATH, &body, &r);
	expect_cosigned(&f, &body, &r);
	response_free(&r);
	buffer_free(&body);
	close_witness(&f);
}
END_TEST

/* ---- collecting cosignatures, and the checkpoint served ---- */

/* Publishes mix's snapshot of epoch and appends it to the log, checkpointed with this
 * authority's own cosignature. */
static void publish_and_log(struct fixture *f, uint64_t epoch, uint64_t size)
{
	fixture_publish_epoch(f, epoch);
	fixture_catch_up(f, size);
}

/* The cosignature line of key (verifier cosigner) over the checkpoint text of note. */
static void cosignature_line(const struct signer_key *key, const struct note_verifier *cosigner,
                             const struct buffer *note, struct buffer *line)
{
	struct note *parsed = NULL;
	struct buffer message;
	struct note_signature signature;
	uint64_t timestamp = GENESIS + 1000;
	ck_assert_int_eq(note_parse(note->data, note->len, &parsed), 0);
	buffer_init(&message);
	ck_assert_int_eq(cosignature_message(timestamp, parsed->text, parsed->text_len, &message), 0);
	uint8_t raw[64];
	ck_assert_int_eq(signer_key_sign_raw(key, message.data, message.len, raw), 0);
	cosignature_signature(cosigner, timestamp, raw, &signature);
	buffer_init(line);
	ck_assert_int_eq(translog_signature_line(&signature, line), 0);
	buffer_free(&message);
	note_free(parsed);
}

/* The stored checkpoint with authority2's cosignature added, as its answer would add it. */
static void peer_cosigns(struct fixture *f)
{
	struct buffer note, line;
	buffer_init(&note);
	ck_assert_int_eq(store_log_checkpoint(f->store, "mix", &note, NULL), 0);
	cosignature_line(peer.cosigner, &peer.cosigner_key, &note, &line);
	ck_assert_int_eq(buffer_append(&note, line.data, line.len), 0);
	ck_assert_int_eq(store_log_checkpoint_put(f->store, "mix", note.data, note.len), 0);
	buffer_free(&note);
	buffer_free(&line);
}

/* GET /v1/mix/log/checkpoint: the size served, 0 for a 404 no_checkpoint. */
static uint64_t served_size(struct fixture *f, struct buffer *note)
{
	struct response r;
	request(f, "GET", "/v1/mix/log/checkpoint", NULL, 0, 0, NULL, &r);
	uint64_t size = 0;
	if (r.status == 404) {
		expect_error(&r, 404, "no_checkpoint");
	} else {
		ck_assert_int_eq(r.status, 200);
		struct note *parsed = NULL;
		struct checkpoint c;
		ck_assert_int_eq(note_parse(r.body.data, r.body.len, &parsed), 0);
		ck_assert_int_eq(checkpoint_parse(parsed->text, parsed->text_len, &c), 0);
		size = c.tree_size;
		note_free(parsed);
		if (note) {
			buffer_reset(note);
			ck_assert_int_eq(buffer_append(note, r.body.data, r.body.len), 0);
		}
	}
	response_free(&r);
	return size;
}

START_TEST(test_served_once_cosigned_by_k)
{
	struct fixture f;
	struct canned_server w1, w2;
	struct signer_key *k1 = NULL, *k2 = NULL;
	struct note_verifier v1, v2;
	char extra[2048], t1[NOTE_VERIFIER_KEY_MAX + 1], t2[NOTE_VERIFIER_KEY_MAX + 1];
	canned_server_start(&w1);
	canned_server_start(&w2);
	ck_assert_int_eq(signer_key_generate("w1.example", &k1), 0);
	ck_assert_int_eq(signer_key_generate("w2.example", &k2), 0);
	ck_assert_int_eq(
	    cosignature_verifier_from_ed25519("w1.example", signer_key_verifier(k1)->public_key, &v1), 0);
	ck_assert_int_eq(
	    cosignature_verifier_from_ed25519("w2.example", signer_key_verifier(k2)->public_key, &v2), 0);
	note_verifier_format(&v1, t1);
	note_verifier_format(&v2, t2);
	snprintf(extra, sizeof extra,
	         "  witnesses:\n"
	         "    - { name: w1.example, key: \"%s\", url: \"http://127.0.0.1:%u/log\" }\n"
	         "    - { name: w2.example, key: \"%s\", url: \"http://127.0.0.1:%u/log\" }\n",
	         t1, w1.port, t2, w2.port);
	open_witness_with(&f, extra);
	ck_assert_uint_eq(translog_quorum(f.config), 2);
	struct translog_cosigning *cosigning = NULL;
	struct translog_cosigning_options options = {
	    .config = f.config, .store = f.store, .signer = f.signer, .peers = NULL, .log = f.log};
	ck_assert_int_eq(translog_cosigning_new(&options, &cosigning), 0);

	/* A checkpoint with this authority's cosignature alone is not served. */
	publish_and_log(&f, 11, 1);
	ck_assert_uint_eq(served_size(&f, NULL), 0);
	struct buffer stored, line1;
	buffer_init(&stored);
	ck_assert_int_eq(store_log_checkpoint(f.store, "mix", &stored, NULL), 0);
	cosignature_line(k1, &v1, &stored, &line1);
	static const char seven[] = "7\n";
	struct canned_route r1 = {
	    "/log/add-checkpoint", 200, "text/plain; charset=utf-8", NULL, line1.data, line1.len, 0};
	struct canned_route r2 = {
	    "/log/add-checkpoint", 409, "text/x.tlog.size", NULL, (const uint8_t *)seven, 2, 0};
	canned_server_route(&w1, &r1);
	canned_server_route(&w2, &r2);

	/* The outside witnesses are asked from old size 0; w1's cosignature is kept, w2's 409 naming
	 * a larger tree is logged. Witnesses do not count towards k. */
	struct translog_cosigning_outcome outcome;
	ck_assert_int_eq(translog_cosigning_round(cosigning, 0, &outcome), 0);
	ck_assert_uint_eq(outcome.size, 1);
	ck_assert_uint_eq(outcome.cosigned, 1);
	ck_assert_uint_eq(outcome.quorum, 2);
	ck_assert_uint_eq(outcome.added, 1);
	ck_assert_uint_eq(outcome.asked, 2);
	ck_assert(!outcome.published);
	ck_assert(outcome.missing);
	pthread_mutex_lock(&w1.lock);
	const char *sent = strstr(w1.last_request, "\r\n\r\n");
	ck_assert_ptr_nonnull(sent);
	ck_assert(strncmp(sent + 4, "old 0\n\n", 7) == 0);
	ck_assert(memcmp(sent + 4 + 7, stored.data, stored.len) == 0);
	pthread_mutex_unlock(&w1.lock);
	ck_assert_uint_eq(served_size(&f, NULL), 0);
	/* The figures of GET /v1/metrics: the witnesses' rows follow the members', by the order of
	 * the configuration; one cosigner of two needed, one cosignature added. */
	struct translog_cosigning_statistics *figures = malloc(sizeof *figures);
	ck_assert_ptr_nonnull(figures);
	translog_cosigning_statistics(cosigning, figures);
	size_t w1_row = f.config->member_count, w2_row = f.config->member_count + 1;
	ck_assert_uint_eq(figures->answers[w1_row][TRANSLOG_ANSWER_COSIGNED], 1);
	ck_assert_uint_eq(figures->answers[w2_row][TRANSLOG_ANSWER_CONFLICT], 1);
	ck_assert_uint_eq(figures->answers[w2_row][TRANSLOG_ANSWER_COSIGNED], 0);
	ck_assert_uint_eq(figures->cosigners[0], 1);
	ck_assert_uint_eq(figures->added[0], 1);
	ck_assert_uint_eq(figures->quorum, 2);
	char *log = read_log(&f);
	ck_assert_msg(strstr(log, "add-checkpoint to w2.example: it has cosigned a tree of 7 entries") !=
	                  NULL,
	              "%s", log);
	free(log);

	/* authority2 cosigns: two authorities, published and served with every cosignature. */
	peer_cosigns(&f);
	ck_assert_int_eq(translog_cosigning_round(cosigning, 0, &outcome), 0);
	ck_assert_uint_eq(outcome.cosigned, 2);
	ck_assert(outcome.published);
	struct buffer served;
	buffer_init(&served);
	ck_assert_uint_eq(served_size(&f, &served), 1);
	struct note *parsed = NULL;
	ck_assert_int_eq(note_parse(served.data, served.len, &parsed), 0);
	struct note_verifier cosigners[3], own;
	witness_cosigner(&f, &own);
	cosigners[0] = own;
	cosigners[1] = peer.cosigner_key;
	cosigners[2] = v1;
	struct signer_key *log_key = NULL;
	ck_assert_int_eq(signer_key_load(f.signer_process.log_key_path, &log_key), 0);
	struct tlog_policy policy = {.origin = ORIGIN,
	                             .log_key = signer_key_verifier(log_key),
	                             .cosigners = cosigners,
	                             .cosigner_count = 3,
	                             .quorum = 3};
	struct checkpoint verified;
	size_t count = 0;
	ck_assert_int_eq(tlog_checkpoint_verify(parsed, &policy, &verified, NULL, &count), 0);
	ck_assert_uint_eq(count, 3);
	note_free(parsed);

	/* The next checkpoint: until authority2 cosigns it, the previous one is served. */
	publish_and_log(&f, 12, 2);
	ck_assert_uint_eq(served_size(&f, NULL), 1);
	ck_assert_int_eq(translog_cosigning_round(cosigning, 0, &outcome), 0);
	ck_assert_uint_eq(outcome.size, 2);
	ck_assert(!outcome.published);
	ck_assert_uint_eq(outcome.added, 0); /* w1's canned line is over the old checkpoint */
	pthread_mutex_lock(&w1.lock);
	sent = strstr(w1.last_request, "\r\n\r\n");
	ck_assert(strncmp(sent + 4, "old 1\n", 6) == 0); /* what it cosigned last, and a proof */
	pthread_mutex_unlock(&w1.lock);
	ck_assert_uint_eq(served_size(&f, NULL), 1);
	peer_cosigns(&f);
	ck_assert_int_eq(translog_cosigning_round(cosigning, 0, &outcome), 0);
	ck_assert(outcome.published);
	ck_assert_uint_eq(served_size(&f, NULL), 2);
	translog_cosigning_statistics(cosigning, figures);
	ck_assert_uint_eq(figures->cosigners[0], 2);
	/* w1 was not asked again for the checkpoint it cosigned; its canned line over the first
	 * does not cosign the second. */
	ck_assert_uint_eq(figures->answers[w1_row][TRANSLOG_ANSWER_COSIGNED], 1);
	ck_assert_uint_ge(figures->answers[w1_row][TRANSLOG_ANSWER_INVALID], 1);
	ck_assert_str_eq(translog_witness_answer_name(TRANSLOG_ANSWER_NO_ANSWER), "no_answer");
	free(figures);

	translog_cosigning_free(cosigning);
	signer_key_free(log_key);
	signer_key_free(k1);
	signer_key_free(k2);
	buffer_free(&served);
	buffer_free(&stored);
	close_witness(&f);
	canned_server_stop(&w1);
	canned_server_stop(&w2);
	buffer_free(&line1); /* w1's answer: freed once its thread is gone */
}
END_TEST

/* ---- the configuration ---- */

static int parse_authorities(const char *members, const char *extra, struct settings_error *error)
{
	char text[8192];
	struct config *config = NULL;
	snprintf(text, sizeof text,
	         "authority: { name: a1.example, signer_socket: s.sock }\n"
	         "listen: { address: 127.0.0.1, port: 1 }\n"
	         "data_dir: data\n"
	         "epoch: { length_seconds: 60, genesis: 0, validity_epochs: 3 }\n"
	         "namespaces:\n"
	         "  - { name: mix, origin: dirauth.example/mix }\n"
	         "providers: []\n"
	         "authorities:\n"
	         "  threshold: 2\n"
	         "  members:\n%s%s",
	         members, extra);
	int rc = config_parse((const uint8_t *)text, strlen(text), "/tmp", &config, error);
	if (rc == 0) {
		ck_assert_uint_eq(translog_quorum(config), strstr(members, "cosignature_key") ? 2 : 1);
		config_free(config);
	}
	return rc;
}

START_TEST(test_configuration)
{
	struct signer_key *k[8];
	const char *names[8] = {"a1.example", "a2.example", "a3.example", ORIGIN,
	                        ORIGIN,       "c2.example", "c3.example", "w.example"};
	char v[8][NOTE_VERIFIER_KEY_MAX + 1], cosign[8][NOTE_VERIFIER_KEY_MAX + 1];
	for (int i = 0; i < 8; i++) {
		ck_assert_int_eq(signer_key_generate(names[i], &k[i]), 0);
		note_verifier_format(signer_key_verifier(k[i]), v[i]);
		struct note_verifier c;
		ck_assert_int_eq(
		    cosignature_verifier_from_ed25519(names[i], signer_key_verifier(k[i])->public_key, &c),
		    0);
		note_verifier_format(&c, cosign[i]);
	}
	char members[4096], extra[2048];
	struct settings_error error;
	/* No log keys: as before, the quorum is 1. */
	snprintf(members, sizeof members,
	         "    - { name: a1.example, identity: \"%s\", url: \"http://h1\" }\n"
	         "    - { name: a2.example, identity: \"%s\", url: \"http://h2\" }\n"
	         "    - { name: a3.example, identity: \"%s\", url: \"http://h3\" }\n",
	         v[0], v[1], v[2]);
	ck_assert_int_eq(parse_authorities(members, "", &error), 0);
	/* Log and cosignature keys for the others, and a witness: the quorum is k. */
	snprintf(members, sizeof members,
	         "    - { name: a1.example, identity: \"%s\", url: \"http://h1\" }\n"
	         "    - { name: a2.example, identity: \"%s\", url: \"http://h2\", log_key: \"%s\", "
	         "cosignature_key: \"%s\" }\n"
	         "    - { name: a3.example, identity: \"%s\", url: \"http://h3\", log_key: \"%s\", "
	         "cosignature_key: \"%s\" }\n",
	         v[0], v[1], v[3], cosign[5], v[2], v[4], cosign[6]);
	snprintf(extra, sizeof extra,
	         "  witnesses:\n    - { name: w.example, key: \"%s\", url: \"https://w.example/w\" }\n",
	         cosign[7]);
	ck_assert_msg(parse_authorities(members, extra, &error) == 0, "%zu: %s", error.line, error.message);
	/* Refusals: a witness key of type 0x01; a witness named otherwise than its key; a witness URL
	 * ending in '/'; a log key named by no namespace's origin; a cosignature key given as a log
	 * key; one cosignature key for two members. */
	snprintf(extra, sizeof extra,
	         "  witnesses:\n    - { name: w.example, key: \"%s\", url: \"https://w\" }\n", v[7]);
	ck_assert_int_eq(parse_authorities(members, extra, &error), DIRAUTH_ERR_CONFIG);
	ck_assert_msg(strstr(error.message, "cosignature/v1") != NULL, "%s", error.message);
	snprintf(extra, sizeof extra,
	         "  witnesses:\n    - { name: x.example, key: \"%s\", url: \"https://w\" }\n", cosign[7]);
	ck_assert_int_eq(parse_authorities(members, extra, &error), DIRAUTH_ERR_CONFIG);
	snprintf(extra, sizeof extra,
	         "  witnesses:\n    - { name: w.example, key: \"%s\", url: \"https://w/\" }\n", cosign[7]);
	ck_assert_int_eq(parse_authorities(members, extra, &error), DIRAUTH_ERR_CONFIG);
	snprintf(members, sizeof members,
	         "    - { name: a1.example, identity: \"%s\", url: \"http://h1\" }\n"
	         "    - { name: a2.example, identity: \"%s\", url: \"http://h2\", log_key: \"%s\" }\n"
	         "    - { name: a3.example, identity: \"%s\", url: \"http://h3\" }\n",
	         v[0], v[1], v[5], v[2]);
	ck_assert_int_eq(parse_authorities(members, "", &error), DIRAUTH_ERR_CONFIG);
	ck_assert_msg(strstr(error.message, "origin of no configured namespace") != NULL, "%s",
	              error.message);
	snprintf(members, sizeof members,
	         "    - { name: a1.example, identity: \"%s\", url: \"http://h1\" }\n"
	         "    - { name: a2.example, identity: \"%s\", url: \"http://h2\", log_key: \"%s\" }\n"
	         "    - { name: a3.example, identity: \"%s\", url: \"http://h3\" }\n",
	         v[0], v[1], cosign[3], v[2]);
	ck_assert_int_eq(parse_authorities(members, "", &error), DIRAUTH_ERR_CONFIG);
	snprintf(
	    members, sizeof members,
	    "    - { name: a1.example, identity: \"%s\", url: \"http://h1\" }\n"
	    "    - { name: a2.example, identity: \"%s\", url: \"http://h2\", cosignature_key: \"%s\" }\n"
	    "    - { name: a3.example, identity: \"%s\", url: \"http://h3\", cosignature_key: \"%s\" }\n",
	    v[0], v[1], cosign[5], v[2], cosign[5]);
	ck_assert_int_eq(parse_authorities(members, "", &error), DIRAUTH_ERR_CONFIG);
	ck_assert_msg(strstr(error.message, "the same log or cosignature key") != NULL, "%s", error.message);
	for (int i = 0; i < 8; i++)
		signer_key_free(k[i]);
}
END_TEST

static Suite *witness_suite(void)
{
	Suite *s = suite_create("witness");
	TCase *parser = tcase_create("request");
	tcase_add_test(parser, test_request_round_trip);
	tcase_add_test(parser, test_request_refusals);
	suite_add_tcase(s, parser);
	TCase *http = tcase_create("http");
	tcase_set_timeout(http, 60);
	tcase_add_test(http, test_witness_statuses);
	tcase_add_test(http, test_witness_grows_from_the_empty_tree);
	tcase_add_test(http, test_witness_follows_its_signer);
	tcase_add_test(http, test_served_once_cosigned_by_k);
	suite_add_tcase(s, http);
	TCase *config = tcase_create("configuration");
	tcase_add_test(config, test_configuration);
	suite_add_tcase(s, config);
	return s;
}

int main(void)
{
	SRunner *runner = srunner_create(witness_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failed = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
