/*
 * fuzz_libdirauth_proof_file.c: dirauth_verify_proof_file on arbitrary bytes as the proof file,
 * with the example chain's trust bundle and certificates, in a context that pins a log key of the
 * namespace's origin whose private half nobody holds (and a witness likewise). The first input
 * byte chooses whether the rest is the proof file (even) or the certificate bundle given with a
 * proof file that carries the chain's header note (odd), so that both parsers are reached; the
 * seed corpus (corpus/libdirauth_proof_file/) has one of each. No
 * input can be a checkpoint that key signed: every answer is a refusal with a terminated,
 * non-empty detail that names the part that refused, and the context's clock and state are
 * never used.
 */
#include <dirauth/dirauth.h>

#include "tests/fuzz/libdirauth_fuzz.h"

#include "schema/checkpoint.h"
#include "schema/note.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static uint8_t *bundle, *certificates, *proof_with_header;
static size_t bundle_len, certificates_len, proof_with_header_len;
static char log_key[NOTE_VERIFIER_KEY_MAX + 1], witness[NOTE_VERIFIER_KEY_MAX + 1];

static uint64_t clock_never(void *user)
{
	(void)user;
	abort();
}

static int state_read_never(void *user, const char *namespace_name, uint8_t *out, size_t cap, size_t *len)
{
	(void)user, (void)namespace_name, (void)out, (void)cap, (void)len;
	abort();
}

static int state_write_never(void *user, const char *namespace_name, const uint8_t *bytes, size_t len)
{
	(void)user, (void)namespace_name, (void)bytes, (void)len;
	abort();
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	fuzz_unheld_key("dirauth.example/mix", 0, 7, log_key);
	fuzz_unheld_key("witness.example", 1, 11, witness);
	bundle = fuzz_chain_load("trust-bundle.txt", &bundle_len);
	certificates = fuzz_chain_load("certificates.txt", &certificates_len);
	/* A proof file of the chain's header (its note as the extra) under a checkpoint signed by a
	 * key nobody pins: the seed corpus's proof-header-epoch-2 less its selector byte, given with
	 * the certificate inputs. */
	char path[4096];
	snprintf(path, sizeof(path), "%s/tests/fuzz/corpus/libdirauth_proof_file/proof-header-epoch-2",
	         DIRAUTH_SOURCE_DIR);
	FILE *file = fopen(path, "rb");
	proof_with_header = malloc(1 << 20);
	if (file == NULL || proof_with_header == NULL)
		abort();
	proof_with_header_len = fread(proof_with_header, 1, 1 << 20, file);
	fclose(file);
	if (proof_with_header_len < 2)
		abort();
	memmove(proof_with_header, proof_with_header + 1, --proof_with_header_len);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct dirauth_callbacks callbacks = {
	    .now = clock_never, .state_read = state_read_never, .state_write = state_write_never};
	const char *log_keys[] = {log_key};
	const char *witnesses[] = {witness};
	struct dirauth_options options = {0};
	struct dirauth_result result = {0};
	struct dirauth_context *context = NULL;
	struct dirauth_proof_info info;

	if (size == 0)
		return 0;
	options.log_keys = log_keys;
	options.log_key_count = 1;
	options.witness_keys = witnesses;
	options.witness_key_count = 1;
	options.witness_quorum = 1;
	if (dirauth_context_new(&callbacks, bundle, bundle_len, &options, &context, &result) !=
	    DIRAUTH_SUCCESS)
		abort();
	enum dirauth_status status;
	if (data[0] % 2 == 0)
		status = dirauth_verify_proof_file(context, certificates, certificates_len, data + 1,
		                                   size - 1, &info, &result);
	else
		status = dirauth_verify_proof_file(context, data + 1, size - 1, proof_with_header,
		                                   proof_with_header_len, &info, &result);
	static const char *const parts[] = {
	    "proof: ", "header: ", "certificates: ", "checkpoint: ", "inclusion: "};
	int named = 0;
	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
		named |= strncmp(result.detail, parts[i], strlen(parts[i])) == 0;
	if (status == DIRAUTH_SUCCESS || result.status != status || !named ||
	    strnlen(result.detail, sizeof(result.detail)) == sizeof(result.detail) ||
	    strnlen(info.signer_names, sizeof(info.signer_names)) == sizeof(info.signer_names) ||
	    info.tree_size != 0)
		abort();
	dirauth_context_free(context);
	dirauth_result_clear(&result);
	return 0;
}
