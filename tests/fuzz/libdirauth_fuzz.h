/*
 * libdirauth_fuzz.h: what the fuzz targets of libdirauth's public entry points share: the clock
 * they run at (inside the example chain's validity, tests/vectors/chain/), a state that holds
 * nothing and takes any write, and the chain's files read whole.
 *
 * A header of static inline functions, so that each target is still one file that the fuzz build
 * finds by its name (tests/CMakeLists.txt); a target that needs none of them includes it all the
 * same at no cost.
 */
#ifndef DIRAUTH_TESTS_FUZZ_LIBDIRAUTH_FUZZ_H
#define DIRAUTH_TESTS_FUZZ_LIBDIRAUTH_FUZZ_H

#include "schema/checkpoint.h"
#include "schema/note.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* A time within the validity of the example chain's epoch 2. */
#define FUZZ_CHAIN_NOW 1767225750

static inline uint64_t fuzz_chain_now(void *user)
{
	(void)user;
	return FUZZ_CHAIN_NOW;
}

/* The state callbacks of a context that never held a snapshot: nothing to read, every write taken. */
static inline int fuzz_no_state_read(void *user, const char *namespace_name, uint8_t *out, size_t cap,
                                     size_t *len)
{
	(void)user, (void)namespace_name, (void)out, (void)cap;
	*len = 0;
	return 0;
}

static inline int fuzz_no_state_write(void *user, const char *namespace_name, const uint8_t *bytes,
                                      size_t len)
{
	(void)user, (void)namespace_name, (void)bytes, (void)len;
	return 0;
}

/* A verifier key of name whose private half nobody holds: a log key (cosignature 0, type 0x01) or
 * a witness's cosignature key (type 0x04), its public key filled from seed. Aborts on failure. */
static inline void fuzz_unheld_key(const char *name, int cosignature, uint8_t seed,
                                   char out[NOTE_VERIFIER_KEY_MAX + 1])
{
	struct note_verifier verifier;
	uint8_t public_key[32];
	for (size_t i = 0; i < sizeof(public_key); i++)
		public_key[i] = (uint8_t)(i * seed + 1);
	if ((cosignature ? cosignature_verifier_from_ed25519(name, public_key, &verifier)
	                 : note_verifier_from_ed25519(name, public_key, &verifier)) != 0)
		abort();
	note_verifier_format(&verifier, out);
}

/* The file name of tests/vectors/chain/, read whole (at most 1 MiB); aborts when it cannot be. */
static inline uint8_t *fuzz_chain_load(const char *name, size_t *len)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/tests/vectors/chain/%s", DIRAUTH_SOURCE_DIR, name);
	FILE *file = fopen(path, "rb");
	uint8_t *bytes = malloc(1 << 20);
	if (file == NULL || bytes == NULL)
		abort();
	*len = fread(bytes, 1, 1 << 20, file);
	fclose(file);
	return bytes;
}

#endif
