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

/* A TCP port on 127.0.0.1 that was free a moment ago. */
unsigned test_free_port(void);

#endif
