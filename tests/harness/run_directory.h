/*
 * run_directory.h: what every program that starts an authority on loopback (the integration
 * tests, the cluster, the benchmarks) writes into and probes in that authority's run directory,
 * the directory dirauthd and dirauth-signer both run from:
 *
 *   dirauthd.yaml, dirauth-signer.yaml   their configurations
 *   clock                                the file clock both read (unix seconds and a newline)
 *   dirauthd.log, dirauth-signer.log     their output
 *   signer.sock                          the signer's socket, which dirauthd connects to
 *   keys/, data/, signer-state/, signer-audit.log
 *
 * Needs nothing from Check, so that bench/harness.c uses it too: each function returns a status
 * and the caller decides how to fail.
 */
#ifndef DIRAUTH_TESTS_HARNESS_RUN_DIRECTORY_H
#define DIRAUTH_TESTS_HARNESS_RUN_DIRECTORY_H

#include "base/buffer.h"

#include <stdint.h>

/* Writes now as the clock file at clock_path, atomically (a temporary file renamed over it), so
 * that a process reading the clock never sees a partial time. 0, or DIRAUTH_ERR_IO (errno set). */
int run_directory_write_clock(const char *clock_path, uint64_t now);

/* 1 when something accepts a connection on the UNIX socket at socket_path (the signer listens),
 * else 0 (also for a path too long for a socket address). */
int run_directory_signer_listening(const char *socket_path);

/* The keys of a signer's configuration that do not depend on the schedule. */
struct run_directory_signer {
	const char *authority;   /* the authority's name */
	const char *signing_key; /* its signing key's file in keys/ */
	const char *certificate; /* the signing key's certificate's file in keys/ */
	int log_keys;            /* 1: keys/log.key and keys/cosignature.key as well */
	int system_clock;        /* 1: the system clock; 0: the file clock "clock" */
};

/* Appends to out the configuration of a dirauth-signer run from the directory: signer as it says,
 * its socket signer.sock (open to this process's user alone), its state in signer-state/, its
 * audit log signer-audit.log, and the line "namespaces:\n", after which the caller appends one
 * "  - { name: ..., origin: ..., genesis: ..., length_seconds: ..., validity_epochs: ... }\n"
 * entry per namespace. 0, or DIRAUTH_ERR_NOMEM. */
int run_directory_signer_config(const struct run_directory_signer *signer, struct buffer *out);

#endif
