/*
 * launcher.h: one authority on loopback, its own dirauthd and dirauth-signer, for the integration
 * tests that need one authority alone (alone, dirauthd publishes each epoch by itself: no
 * authority set, no round).
 *
 * A launcher is the authority's run directory (run_directory.h) and its two processes. The test
 * makes the directory and lays it out (launcher_lay_out: the paths, a free port), writes the keys
 * and both configurations it needs (launcher_write_signer_config for the signer's common part;
 * dirauthd's configuration is the test's own, at config_path, listening on port), and sets the
 * clock. Then launcher_start runs the signer and dirauthd and waits until they answer; the pieces
 * of it are there for a test that starts one without the other (dirauthd without its signer, a
 * dirauthd held at a pause point that never answers). Teardown is the test's (launcher_stop, then
 * removing the directory); the processes are the test's children, started with test_spawn.
 *
 * Every function aborts the test (ck_abort) when it cannot do what it says, like test_support.h.
 * For several authorities in a round, see cluster.h.
 */
#ifndef DIRAUTH_TESTS_HARNESS_LAUNCHER_H
#define DIRAUTH_TESTS_HARNESS_LAUNCHER_H

#include "tests/harness/run_directory.h"

#include <stdint.h>
#include <sys/types.h>

#define LAUNCHER_DIR_MAX  330 /* the run directory's path, NUL included */
#define LAUNCHER_PATH_MAX 512 /* a file's path in it */

struct launcher {
	char dir[LAUNCHER_DIR_MAX];                 /* the run directory */
	char config_path[LAUNCHER_PATH_MAX];        /* dirauthd.yaml */
	char signer_config_path[LAUNCHER_PATH_MAX]; /* dirauth-signer.yaml */
	char clock_path[LAUNCHER_PATH_MAX];         /* clock */
	char log_path[LAUNCHER_PATH_MAX];           /* dirauthd.log; a test may name another before a start */
	char signer_log_path[LAUNCHER_PATH_MAX];    /* dirauth-signer.log */
	char socket_path[LAUNCHER_PATH_MAX];        /* signer.sock */
	char url[64];                               /* "http://127.0.0.1:<port>" */
	unsigned port;                              /* dirauthd's, on 127.0.0.1 (test_free_port) */
	pid_t pid;                                  /* dirauthd's; 0 when not started or stopped */
	pid_t signer_pid;                           /* the signer's; 0 likewise */
};

/* Zeroes l and sets its paths in dir (an existing directory, a path shorter than
 * LAUNCHER_DIR_MAX) and a free port; writes nothing. */
void launcher_lay_out(struct launcher *l, const char *dir);

/* Writes now into the clock file (run_directory_write_clock). */
void launcher_set_clock(const struct launcher *l, uint64_t now);

/* Writes signer_config_path: run_directory_signer_config's part, then namespaces (the entries of
 * the list, each "  - { ... }\n"). */
void launcher_write_signer_config(const struct launcher *l, const struct run_directory_signer *signer,
                                  const char *namespaces);

/* The providers section enrolling the example provider of scripts/example-keys.sh (provider-a)
 * for mix gateways in namespace mix. */
#define LAUNCHER_EXAMPLE_PROVIDERS                                                                           \
	"providers:\n"                                                                                       \
	"  - { key: \"provider-a.example+fa6ff7cc+AZCCDZKKDwoh4asmg/XPjHQ3bGSCZXnr01BWPcEqXjZr\", "          \
	"namespaces: [mix], classes: [mix-gateway] }\n"

/* A namespace of one authority's configuration (launcher_write_configs): of origin
 * dirauth.example/<name>; options, when not NULL, is the rest of dirauthd's entry for it, inside
 * its braces (", lifecycle: true"). */
struct launcher_namespace {
	const char *name;
	const char *options;
};

/* Writes the configuration of one authority alone, signer->authority, for the signer
 * (launcher_write_signer_config) and for dirauthd (the signer's socket, the launcher's port,
 * data, the file clock): its namespaces, of epochs of epoch_length seconds from genesis 0, valid
 * for validity_epochs; tail is appended to dirauthd's as it is (the providers, and any other
 * section). */
void launcher_write_configs(const struct launcher *l, const struct run_directory_signer *signer,
                            int epoch_length, int validity_epochs,
                            const struct launcher_namespace *namespaces, size_t namespace_count,
                            const char *tail);

/* Starts dirauth-signer and waits until its socket accepts a connection. */
void launcher_start_signer(struct launcher *l);

/* Starts dirauthd, its output appended to log_path, and does not wait. */
void launcher_spawn_dirauthd(struct launcher *l);

/* Waits until dirauthd answers GET /v1/health with 200 (aborts if it exits first). */
void launcher_wait_dirauthd(const struct launcher *l);

/* The signer unless it runs (signer_pid != 0), then dirauthd; waits for both as above. */
void launcher_start(struct launcher *l);

/* Sends signal to dirauthd (to the signer) and reaps it; returns its wait status, 0 when it was
 * not running. */
int launcher_stop_dirauthd(struct launcher *l, int signal);
int launcher_stop_signer(struct launcher *l, int signal);

/* SIGTERM to dirauthd, then to the signer, each that runs. */
void launcher_stop(struct launcher *l);

#endif
