/*
 * fuzz_tlog_proof.c: tlog_proof_parse() on arbitrary bytes. A proof it accepts must be written
 * back byte for byte by tlog_proof_encode(); its inclusion check must run on hostile indexes,
 * sizes and paths; and its checkpoint must never pass a policy of fixed keys nobody can sign for
 * (the log key, and the same key as a cosigner under the name of the note's first signature line,
 * so that the cosignature checks run on hostile lines).
 */
#include "base/error.h"
#include "tlog/policy.h"
#include "tlog/proof.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint8_t fixed_key[32] = {0x3b, 0x6a, 0x27, 0xbc, 0xce, 0xb6, 0xa4, 0x2d, 0x62, 0xa3, 0xa8,
                                      0xd0, 0x2a, 0x6f, 0x0d, 0x73, 0x65, 0x32, 0x15, 0x77, 0x1d, 0xe2,
                                      0x43, 0xa6, 0x3a, 0xc0, 0x48, 0xa1, 0x8b, 0x59, 0xda, 0x29};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tlog_proof *proof = NULL;
	if (tlog_proof_parse(data, size, &proof) != 0)
		return 0;
	struct buffer out;
	buffer_init(&out);
	if (tlog_proof_encode(proof->index, proof->path, proof->path_len, proof->extra, proof->extra_len,
	                      proof->checkpoint_note, proof->checkpoint_note_len, &out) != 0 ||
	    out.len != size || memcmp(out.data, data, size) != 0)
		abort();
	buffer_free(&out);

	merkle_hash leaf;
	memset(leaf, 0x5a, sizeof(leaf));
	int rc = tlog_proof_verify_leaf_hash(proof, leaf);
	if (rc != 0 && rc != DIRAUTH_ERR_PROOF)
		abort();

	/* The log key under the origin's name when it can be a key name (origins may be longer). */
	struct note_verifier log_key, cosigner;
	if (note_verifier_from_ed25519(proof->checkpoint.origin, fixed_key, &log_key) != 0 &&
	    note_verifier_from_ed25519("log.example", fixed_key, &log_key) != 0)
		abort();
	if (cosignature_verifier_from_ed25519("witness.example/w1", fixed_key, &cosigner) != 0)
		abort();
	if (proof->note->signature_count > 0) {
		memcpy(cosigner.name, proof->note->signatures[0].name, sizeof(cosigner.name));
		cosigner.key_id = proof->note->signatures[0].key_id;
	}
	struct tlog_policy policy = {proof->checkpoint.origin, &log_key, &cosigner, 1, 0};
	if (tlog_proof_verify(proof, &policy, leaf, NULL) == 0)
		abort();
	policy.quorum = 1;
	if (tlog_proof_verify(proof, &policy, leaf, NULL) == 0)
		abort();
	tlog_proof_free(proof);
	return 0;
}
