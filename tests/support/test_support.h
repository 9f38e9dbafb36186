/*
 * test_support.h: small helpers shared by the Check tests: temporary directories, files,
 * paths into the source tree, free loopback ports, child processes.
 *
 * Everything here aborts the test (ck_abort) on failure, because a helper that cannot set up
 * the test must not let it pass.
 */
#ifndef DIRAUTH_TEST_SUPPORT_H
#define DIRAUTH_TEST_SUPPORT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Creates a fresh directory under $TMPDIR (or /tmp) and writes its path into out. */
void test_make_tempdir(char *out, size_t cap);

/* Removes a directory tree (best effort). */
void test_remove_tree(const char *path);

/* Reads a whole file; returns a malloc'd NUL-terminated buffer, *len gets its length. */
uint8_t *test_read_file(const char *path, size_t *len);

/* Writes a whole file with the given mode (created or truncated). */
void test_write_file(const char *path, const void *data, size_t len, mode_t mode);

/* Path of a file in the source tree: DIRAUTH_SOURCE_DIR "/" relative. Static storage, reused. */
const char *test_source_path(const char *relative);

/* Path of a file in the build tree: DIRAUTH_BINARY_DIR "/" relative. Static storage, reused. */
const char *test_binary_path(const char *relative);

/* A TCP port on 127.0.0.1 that nothing listens on and no other test process takes while this one
 * lives (test_ports.h). */
unsigned test_free_port(void);

/* Starts argv[0] (a path) with argv, stdout and stderr appended to log_path (may be NULL to
 * inherit). Returns the child's pid. */
pid_t test_spawn(char *const argv[], const char *log_path);

/* Sends signal to pid and reaps it. Returns the wait status. */
int test_kill(pid_t pid, int signal);

/* Waits for pid to exit (at most timeout_ms) and returns its exit code, or -1 on timeout or
 * death by signal. */
int test_wait_exit(pid_t pid, int timeout_ms);

/* What a program run by test_run_program printed and how it ended. */
struct test_outcome {
	int status; /* exit status */
	char *out;  /* stdout, NUL-terminated, malloc'd */
	size_t out_len;
	char *err; /* stderr, NUL-terminated, malloc'd */
	size_t err_len;
};

/* Runs the program at path with args (NULL-terminated, without argv[0], at most 30), capturing
 * stdout and stderr through files in work_dir; waits for it; aborts the test if it cannot run
 * or dies by a signal. */
void test_run_program(const char *path, const char *const *args, const char *work_dir,
                      struct test_outcome *outcome);

/* Frees what test_run_program captured. */
void test_outcome_free(struct test_outcome *outcome);

/* Sleeps for ms milliseconds (polling loops only; never to wait out a timer under test). */
void test_sleep_ms(int ms);

#endif
