/*
 * test_libdirauth_client.h: the caller's side of libdirauth for its tests: a clock the test
 * sets, the state kept in memory (every write counted and kept, so that a test can read what the
 * library stored), and a random source that is either the system's or bytes the test gives.
 * The fetch callback is each test's own (a real HTTP client in the integration tests, none in the
 * unit tests, which feed the library's requests by hand).
 */
#ifndef DIRAUTH_TEST_LIBDIRAUTH_CLIENT_H
#define DIRAUTH_TEST_LIBDIRAUTH_CLIENT_H

#include <dirauth/dirauth.h>

#include "base/buffer.h"

#include <stddef.h>
#include <stdint.h>

struct test_client {
	uint64_t now;
	struct buffer state; /* what state_write last wrote (one namespace is enough here) */
	char state_namespace[64];
	unsigned state_reads;
	unsigned state_writes;
	int fail_read;         /* state_read fails */
	int fail_write;        /* state_write fails */
	const uint8_t *random; /* NULL: getrandom(); else these bytes, over and over */
	size_t random_len;
	size_t random_at;
	int fail_random;
	struct buffer kept_body; /* what body_read hands over (none while empty) */
	unsigned body_reads;
	/* An update whose dirauth_update_verified state_write asks, and what it answered there. */
	const struct dirauth_update *watched;
	enum dirauth_status watched_status;
	size_t watched_body_len;
	struct dirauth_callbacks callbacks; /* user is the client; fetch NULL */
};

/* Zeroes c, sets its clock and callbacks. */
void test_client_init(struct test_client *c, uint64_t now);

/* Frees the state. */
void test_client_free(struct test_client *c);

/* A context over c's callbacks (with fetch when not NULL) for the trust bundle file at path (from
 * the source tree when relative), with options; aborts the test when it cannot be made. */
struct dirauth_context *test_client_context(struct test_client *c, const char *bundle_path,
                                            const struct dirauth_options *options);

#endif
