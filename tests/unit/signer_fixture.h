/*
 * signer_fixture.h: a real dirauth-signer inside a test process, for the tests of dirauthd's
 * signing paths (check_signer_client, check_http, check_publish).
 *
 * dirauthd holds no key; what it signs, it signs through the signer socket. Its tests therefore
 * run the real signer (signer_service_open + signer_listener_start) on a real UNIX socket in the
 * test's temporary directory: the example signing key copied by scripts/example-keys.sh, an
 * identity key made for the test, a certificate binding the two (test_signed_notes.h), the
 * signer's own ledger. The signer can be stopped and started again mid-test (its ledger and
 * socket path stay), which is how the tests show dirauthd failing closed and recovering.
 *
 * The signer holds the example log key (named dirauth.example/mix: it signs the checkpoints of
 * mix's log) and the example cosignature key besides the signing key.
 *
 * The signer signs for the namespaces mix (dirauth.example/mix), mail (dirauth.example/mail) and
 * vpn (dirauth.example/vpn, a second private namespace of check_private.c) on the schedule of the
 * tests of dirauthd (SIGNER_FIXTURE_GENESIS, 60-second epochs, snapshots valid for 3), with a
 * clock skew of an hour, so that a test can publish a run of epochs, or move dirauthd's clock,
 * without moving the signer's.
 *
 * The unit-test build links only test_support.c and test_keys.c, so, like canned_http.h, this
 * is a header of static functions for the files that include it. Everything aborts the test on
 * failure.
 */
#ifndef DIRAUTH_TEST_SIGNER_FIXTURE_H
#define DIRAUTH_TEST_SIGNER_FIXTURE_H

#include "base/buffer.h"
#include "schema/certificate.h"
#include "clock/clock.h"
#include "base/error.h"
#include "signer/key.h"
#include "signer/listener.h"
#include "schema/note.h"
#include "signer/service.h"
#include "test_signed_notes.h"
#include "test_support.h"

#include <check.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SIGNER_FIXTURE_AUTHORITY "authority1.dirauth.example"
#define SIGNER_FIXTURE_GENESIS   1767225000ULL
#define SIGNER_FIXTURE_LENGTH    60ULL
#define SIGNER_FIXTURE_VALIDITY  3ULL
#define SIGNER_FIXTURE_SKEW      3600ULL

struct signer_fixture {
	char dir[640]; /* the signer's directory: keys/, ledger/, signer.sock, audit.log */
	char socket_path[720];
	char key_path[720];             /* the signing key (example key, 0600 in a 0700 directory) */
	char log_key_path[720];         /* the example log key, named dirauth.example/mix */
	char cosignature_key_path[720]; /* the example cosignature key */
	char certificate_path[720];
	char ledger_path[720];
	char audit_path[720];
	_Atomic uint64_t now;          /* the signer's clock, unless clock is set */
	const struct clock *clock;     /* when set, the signer reads this clock (the test's own) */
	struct note_verifier identity; /* pinned by verifiers */
	struct note_verifier signing;  /* certified by identity */
	struct signer_service *service;
	struct signer_listener *listener;
	FILE *audit;
};

static int signer_fixture_clock(void *context, uint64_t *now)
{
	struct signer_fixture *s = context;
	if (s->clock)
		return clock_now(s->clock, now); /* an unreadable clock: the signer refuses to sign */
	*now = s->now;
	return 0;
}

/* Lays out keys, certificate (valid over [valid_after, valid_until)) and ledger directory under
 * dir/signer; the signer's clock reads now. Does not start it. */
__attribute__((unused)) static void signer_fixture_prepare(struct signer_fixture *s, const char *dir,
                                                           uint64_t now, uint64_t valid_after,
                                                           uint64_t valid_until)
{
	memset(s, 0, sizeof *s);
	s->now = now;
	snprintf(s->dir, sizeof s->dir, "%s/signer", dir);
	ck_assert_int_eq(mkdir(s->dir, 0700), 0);
	snprintf(s->socket_path, sizeof s->socket_path, "%s/signer.sock", s->dir);
	snprintf(s->ledger_path, sizeof s->ledger_path, "%s/ledger", s->dir);
	snprintf(s->audit_path, sizeof s->audit_path, "%s/audit.log", s->dir);
	snprintf(s->key_path, sizeof s->key_path, "%s/keys/authority1.key", s->dir);
	snprintf(s->log_key_path, sizeof s->log_key_path, "%s/keys/log.key", s->dir);
	snprintf(s->cosignature_key_path, sizeof s->cosignature_key_path, "%s/keys/cosignature.key", s->dir);
	snprintf(s->certificate_path, sizeof s->certificate_path, "%s/keys/authority1.cert", s->dir);
	char command[1400];
	snprintf(command, sizeof command, "sh '%s' '%s/keys' >/dev/null",
	         test_source_path("scripts/example-keys.sh"), s->dir);
	ck_assert_msg(system(command) == 0, "example-keys.sh failed");

	struct signer_key *signing = NULL, *identity = NULL;
	int rc = signer_key_load(s->key_path, &signing);
	ck_assert_msg(rc == 0, "%s: %s", s->key_path, dirauth_strerror(rc));
	ck_assert_int_eq(signer_key_generate(SIGNER_FIXTURE_AUTHORITY, &identity), 0);
	s->signing = *signer_key_verifier(signing);
	s->identity = *signer_key_verifier(identity);

	ck_assert_int_eq(test_certificate_write(identity, SIGNER_FIXTURE_AUTHORITY, &s->signing, valid_after,
	                                        valid_until, s->certificate_path),
	                 0);
	signer_key_free(signing);
	signer_key_free(identity);
}

/* Opens the service and serves the socket in a thread. */
__attribute__((unused)) static void signer_fixture_start(struct signer_fixture *s)
{
	ck_assert_ptr_null(s->service);
	s->audit = fopen(s->audit_path, "a");
	ck_assert_ptr_nonnull(s->audit);
	const char *certificates[] = {s->certificate_path};
	const char *const names[] = {"mix", "mail", "vpn"};
	struct signer_namespace namespaces[sizeof names / sizeof names[0]];
	memset(namespaces, 0, sizeof namespaces);
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		snprintf(namespaces[i].name, sizeof namespaces[i].name, "%s", names[i]);
		snprintf(namespaces[i].origin, sizeof namespaces[i].origin, "dirauth.example/%s", names[i]);
		namespaces[i].schedule.genesis = SIGNER_FIXTURE_GENESIS;
		namespaces[i].schedule.length = SIGNER_FIXTURE_LENGTH;
		namespaces[i].schedule.validity_epochs = SIGNER_FIXTURE_VALIDITY;
	}
	struct signer_service_options options = {
	    .authority = SIGNER_FIXTURE_AUTHORITY,
	    .signing_key_path = s->key_path,
	    .certificate_paths = certificates,
	    .certificate_count = 1,
	    .log_key_path = s->log_key_path,
	    .cosignature_key_path = s->cosignature_key_path,
	    .ledger_directory = s->ledger_path,
	    .namespaces = namespaces,
	    .namespace_count = sizeof namespaces / sizeof namespaces[0],
	    .audit = s->audit,
	    .now = signer_fixture_clock,
	    .now_context = s,
	    .clock_skew_seconds = SIGNER_FIXTURE_SKEW,
	};
	char detail[512] = "";
	int rc = signer_service_open(&options, &s->service, detail, sizeof detail);
	ck_assert_msg(rc == 0, "signer_service_open: %s: %s", dirauth_strerror(rc), detail);
	rc = signer_listener_start(s->service, s->socket_path, getuid(), NULL, &s->listener);
	ck_assert_msg(rc == 0, "signer_listener_start: %s", dirauth_strerror(rc));
}

/* Stops serving (the socket file goes) and closes the service. Accepts a stopped signer. */
__attribute__((unused)) static void signer_fixture_stop(struct signer_fixture *s)
{
	signer_listener_stop(s->listener);
	s->listener = NULL;
	signer_service_close(s->service);
	s->service = NULL;
	if (s->audit)
		fclose(s->audit);
	s->audit = NULL;
}

/* How many audit lines contain word (e.g. " sign snapshot-header"). */
__attribute__((unused)) static int signer_fixture_audit_count(const struct signer_fixture *s,
                                                              const char *word)
{
	if (s->audit)
		fflush(s->audit);
	FILE *in = fopen(s->audit_path, "r");
	if (!in)
		return 0;
	char line[1024];
	int count = 0;
	while (fgets(line, sizeof line, in))
		if (strstr(line, word))
			count++;
	fclose(in);
	return count;
}

#endif
