/*
 * test_published.h: the registration versions a snapshot body publishes, read back from its
 * bytes: what a test of the consensus rule compares with the versions it expects.
 *
 * The rule keeps no list of what it chose (consensus/consensus.h): the body it wrote is the
 * result. So each record of the body gives its service id, and its note gives the sequence (the
 * registration parsed) and the digest (its SHA-256), the version a vote lists.
 */
#ifndef DIRAUTH_TEST_PUBLISHED_H
#define DIRAUTH_TEST_PUBLISHED_H

#include "schema/vote_body.h"

#include <stddef.h>
#include <stdint.h>

/* Parses body (method 1, or method 2 with its sections) and returns a malloc'd array of its
 * records' versions in body order, *count their number (NULL and 0 for none). Aborts the test
 * when the body or a note does not parse. */
struct vote_body_record *test_published_versions(const uint8_t *body, size_t body_len, size_t *count);

#endif
