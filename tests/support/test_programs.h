/*
 * test_programs.h: the programs from the system that tests and benchmarks start besides the
 * project's own (nginx, wrk): where one is installed, and what an nginx of a test's own needs in
 * its configuration to run from a directory of that test, as root or not.
 *
 * Needs nothing from Check, so that bench/harness.c uses it too.
 */
#ifndef DIRAUTH_TEST_PROGRAMS_H
#define DIRAUTH_TEST_PROGRAMS_H

#include "base/buffer.h"

#include <limits.h>

/* The path of program (a file name) in $PATH, then /usr/sbin, /usr/local/sbin and /sbin, where
 * a package puts a daemon that a user's PATH may lack. 0 with out set, or DIRAUTH_ERR_NOT_FOUND. */
int test_program_find(const char *program, char out[PATH_MAX]);

/* Appends the main-context "user" line of an nginx run by root, whose workers then run as
 * nobody: "user nobody <its group>;\n". Run by another user, nginx runs its workers as that user
 * and takes no user line: nothing is appended. 0, or DIRAUTH_ERR_NOMEM. Whatever the workers
 * read or write below dir must then be reachable by nobody. */
int test_nginx_user(struct buffer *out);

/* Appends, for the http context, one "<module>_temp_path dir/temp-<module>;" line per temporary
 * path that the nginx at path was built with (some builds leave out uwsgi or scgi, and naming a
 * missing module's directive is a configuration error), so that it never writes where its
 * package put them. nginx makes the directories at start (and, run by root, gives them to the
 * workers' user). 0; DIRAUTH_ERR_IO when nginx -V cannot be run; DIRAUTH_ERR_NOMEM. */
int test_nginx_temp_paths(const char *nginx, const char *dir, struct buffer *out);

#endif
