/*
 * files.h: the few file operations dirauthctl needs, done carefully.
 *
 * Input files (service descriptions, trust bundles, held headers) are read whole, but never
 * more than a bound the caller names, so a wrong path to a huge file cannot exhaust memory. A
 * command reads its inputs through ctl_file_read_reported, so that every file it cannot read is
 * refused in the same words and with the same exit status: missing is 66, too long is the
 * status of bad content in that file, anything else is the status of the error.
 * Output that a later run trusts (a mirror's verified headers and bodies) is written
 * atomically: a temporary file in the same directory, fsync, rename over the target, fsync of
 * the directory. A crash then leaves either the old file or the new one, never half of one,
 * which matters because latest.header is what the next fetch's anti-rollback check believes.
 */
#ifndef DIRAUTH_CTL_FILES_H
#define DIRAUTH_CTL_FILES_H

#include "ctl/report.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Reads the regular file at path, refusing one longer than max_bytes. On success *out gets a
 * malloc'd NUL-terminated copy (the caller frees it) and *len its length (without the NUL).
 * Returns 0; DIRAUTH_ERR_NOT_FOUND (no such file); DIRAUTH_ERR_PERMISSION (access denied);
 * DIRAUTH_ERR_BOUNDS (longer than max_bytes); DIRAUTH_ERR_IO (not a regular file, read error);
 * DIRAUTH_ERR_NOMEM. */
int ctl_file_read(const char *path, size_t max_bytes, uint8_t **out, size_t *len);

/* What an input file may hold, for ctl_file_read_reported. */
struct ctl_file_limit {
	size_t max_bytes;        /* a longer file is refused */
	const char *larger_than; /* what a longer file is said to be larger than ("a certificate");
	                            NULL: the bound alone */
	int exit_code;           /* a longer file's status: that of bad content in this file
	                            (CTL_EXIT_DATA for data, CTL_EXIT_CONFIG for a configuration) */
};

/*
 * Reads the input file at path as ctl_file_read does under limit->max_bytes, and records a
 * failure in report as "<name>: <why>", name formatted from name_format (it usually holds the
 * path: "trust bundle %s"): "no such file" with 66; "larger than <limit->larger_than> (<max>
 * bytes)" or "larger than <max> bytes" with limit->exit_code; else the error's words with
 * ctl_exit_code_for_error (74 I/O or not a regular file, 77 permission, 70 out of memory).
 * On success *out (the caller frees it) and *len are those of ctl_file_read. Returns 0 or the
 * error of ctl_file_read.
 */
int ctl_file_read_reported(const char *path, const struct ctl_file_limit *limit, uint8_t **out, size_t *len,
                           struct ctl_report *report, const char *name_format, ...)
    __attribute__((format(printf, 6, 7)));

/* True when path names an existing file or directory (or anything lstat finds). */
int ctl_file_exists(const char *path);

/* Creates directory path and any missing parents with mode 0755; an existing directory is
 * fine. Returns 0, DIRAUTH_ERR_BOUNDS (path too long), DIRAUTH_ERR_EXISTS (a component exists
 * and is not a directory), DIRAUTH_ERR_PERMISSION or DIRAUTH_ERR_IO. */
int ctl_directory_create(const char *path);

/* Replaces directory/name with data atomically and durably (temporary file, fsync, rename,
 * fsync of the directory), mode 0644. Returns 0, DIRAUTH_ERR_BOUNDS (path too long),
 * DIRAUTH_ERR_PERMISSION or DIRAUTH_ERR_IO. On failure the target is unchanged and no
 * temporary file is left behind. */
int ctl_file_write_atomic(const char *directory, const char *name, const uint8_t *data, size_t len);

/* Removes directory/name (absent already is done) and makes the removal durable (fsync of the
 * directory). Returns 0, DIRAUTH_ERR_BOUNDS (path too long) or DIRAUTH_ERR_IO. */
int ctl_file_remove(const char *directory, const char *name);

/* Creates the new file path holding data, with mode, durably (write, fsync, fsync of the
 * directory). O_CREAT|O_EXCL|O_NOFOLLOW: an existing file or symlink is never replaced, because
 * the files made this way (key certificates) are issued once and a silent overwrite would lose
 * one. Returns 0; DIRAUTH_ERR_EXISTS (the path exists); DIRAUTH_ERR_NOT_FOUND (no such
 * directory); DIRAUTH_ERR_PERMISSION; DIRAUTH_ERR_BOUNDS (path too long); DIRAUTH_ERR_IO. On
 * failure after the file was created, the partial file is removed. */
int ctl_file_create(const char *path, const uint8_t *data, size_t len, mode_t mode);

/* Renames from over to (both on one file system; an existing to is replaced atomically) and makes
 * it durable (fsync of to's directory). Returns 0, DIRAUTH_ERR_BOUNDS (path too long),
 * DIRAUTH_ERR_NOT_FOUND, DIRAUTH_ERR_PERMISSION or DIRAUTH_ERR_IO. */
int ctl_file_move(const char *from, const char *to);

/* Makes to a new hard link of the file from (to must not exist). Not made durable: the links
 * made this way are a scratch copy that a crash may lose. Returns 0, DIRAUTH_ERR_BOUNDS,
 * DIRAUTH_ERR_NOT_FOUND (no from), DIRAUTH_ERR_EXISTS, DIRAUTH_ERR_PERMISSION or DIRAUTH_ERR_IO. */
int ctl_file_link(const char *from, const char *to);

/* Removes path and everything under it (absent already is done; symbolic links are removed, not
 * followed; at most 32 levels deep), then makes the removal durable (fsync of the parent).
 * Returns 0, DIRAUTH_ERR_BOUNDS, DIRAUTH_ERR_PERMISSION or DIRAUTH_ERR_IO. */
int ctl_directory_remove_tree(const char *path);

#endif
