/*
 * files.c: bounded reads, their refusals in a command's words, and atomic, durable writes (see
 * files.h).
 */
#include "ctl/files.h"

#include "base/error.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CTL_PATH_MAX 4096

static int error_from_errno(int error)
{
	switch (error) {
	case ENOENT:
	case ENOTDIR:
		return DIRAUTH_ERR_NOT_FOUND;
	case EACCES:
	case EPERM:
		return DIRAUTH_ERR_PERMISSION;
	case ENOMEM:
		return DIRAUTH_ERR_NOMEM;
	default:
		return DIRAUTH_ERR_IO;
	}
}

int ctl_file_read(const char *path, size_t max_bytes, uint8_t **out, size_t *len)
{
	uint8_t *data = NULL;
	size_t used = 0;
	struct stat info;
	int fd;
	int rc = 0;

	*out = NULL;
	*len = 0;
	/* O_NONBLOCK: a FIFO opens at once (and is refused below) instead of waiting for a writer. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return error_from_errno(errno);
	if (fstat(fd, &info) != 0) {
		rc = error_from_errno(errno);
		goto done;
	}
	if (!S_ISREG(info.st_mode)) {
		rc = DIRAUTH_ERR_IO;
		goto done;
	}
	if (info.st_size < 0 || (uint64_t)info.st_size > max_bytes) {
		rc = DIRAUTH_ERR_BOUNDS;
		goto done;
	}
	/* One byte more than the bound, so that a file that grew since fstat is still caught. */
	data = malloc(max_bytes + 2);
	if (data == NULL) {
		rc = DIRAUTH_ERR_NOMEM;
		goto done;
	}
	for (;;) {
		ssize_t got = read(fd, data + used, max_bytes + 1 - used);
		if (got < 0) {
			if (errno == EINTR)
				continue;
			rc = DIRAUTH_ERR_IO;
			goto done;
		}
		if (got == 0)
			break;
		used += (size_t)got;
		if (used > max_bytes) {
			rc = DIRAUTH_ERR_BOUNDS;
			goto done;
		}
	}
	data[used] = 0;
	*out = data;
	*len = used;
	data = NULL;
done:
	free(data);
	close(fd);
	return rc;
}

int ctl_file_read_reported(const char *path, const struct ctl_file_limit *limit, uint8_t **out, size_t *len,
                           struct ctl_report *report, const char *name_format, ...)
{
	char name[CTL_REPORT_MAX];
	va_list arguments;
	int rc = ctl_file_read(path, limit->max_bytes, out, len);

	if (rc == 0)
		return 0;
	va_start(arguments, name_format);
	vsnprintf(name, sizeof(name), name_format, arguments);
	va_end(arguments);
	if (rc == DIRAUTH_ERR_NOT_FOUND)
		ctl_report_fail(report, CTL_EXIT_NO_INPUT, "%s: no such file", name);
	else if (rc == DIRAUTH_ERR_BOUNDS && limit->larger_than != NULL)
		ctl_report_fail(report, limit->exit_code, "%s: larger than %s (%zu bytes)", name,
		                limit->larger_than, limit->max_bytes);
	else if (rc == DIRAUTH_ERR_BOUNDS)
		ctl_report_fail(report, limit->exit_code, "%s: larger than %zu bytes", name,
		                limit->max_bytes);
	else
		ctl_report_fail(report, ctl_exit_code_for_error(rc), "%s: %s", name, dirauth_strerror(rc));
	return rc;
}

int ctl_file_exists(const char *path)
{
	struct stat info;

	return lstat(path, &info) == 0;
}

int ctl_directory_create(const char *path)
{
	char copy[CTL_PATH_MAX];
	size_t length = strlen(path);

	if (length == 0 || length >= sizeof(copy))
		return DIRAUTH_ERR_BOUNDS;
	memcpy(copy, path, length + 1);
	/* Walk the components left to right, creating each; EEXIST is fine only for a directory. */
	for (size_t i = 1; i <= length; i++) {
		struct stat info;
		if (copy[i] != '/' && copy[i] != '\0')
			continue;
		copy[i] = '\0';
		if (mkdir(copy, 0755) != 0) {
			int saved = errno;
			if (saved != EEXIST)
				return error_from_errno(saved);
			if (stat(copy, &info) != 0 || !S_ISDIR(info.st_mode))
				return DIRAUTH_ERR_EXISTS;
		}
		if (i < length)
			copy[i] = '/';
	}
	return 0;
}

/* Makes the entries of directory durable (fsync of the directory itself). */
static int sync_directory(const char *directory)
{
	int directory_fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int rc;

	if (directory_fd < 0)
		return error_from_errno(errno);
	rc = fsync(directory_fd) == 0 ? 0 : DIRAUTH_ERR_IO;
	close(directory_fd);
	return rc;
}

static int write_all(int fd, const uint8_t *data, size_t len)
{
	while (len > 0) {
		ssize_t written = write(fd, data, len);
		if (written < 0) {
			if (errno == EINTR)
				continue;
			return error_from_errno(errno);
		}
		data += written;
		len -= (size_t)written;
	}
	return 0;
}

int ctl_file_write_atomic(const char *directory, const char *name, const uint8_t *data, size_t len)
{
	char target[CTL_PATH_MAX];
	char temporary[CTL_PATH_MAX];
	int fd = -1;
	int temporary_exists = 0;
	int rc = 0;
	int n;

	n = snprintf(target, sizeof(target), "%s/%s", directory, name);
	if (n < 0 || (size_t)n >= sizeof(target))
		return DIRAUTH_ERR_BOUNDS;
	n = snprintf(temporary, sizeof(temporary), "%s/.%s.XXXXXX", directory, name);
	if (n < 0 || (size_t)n >= sizeof(temporary))
		return DIRAUTH_ERR_BOUNDS;
	fd = mkstemp(temporary);
	if (fd < 0)
		return error_from_errno(errno);
	temporary_exists = 1;
	if (fchmod(fd, 0644) != 0) {
		rc = error_from_errno(errno);
		goto done;
	}
	rc = write_all(fd, data, len);
	if (rc != 0)
		goto done;
	if (fsync(fd) != 0) {
		rc = DIRAUTH_ERR_IO;
		goto done;
	}
	if (close(fd) != 0) {
		fd = -1;
		rc = DIRAUTH_ERR_IO;
		goto done;
	}
	fd = -1;
	if (rename(temporary, target) != 0) {
		rc = error_from_errno(errno);
		goto done;
	}
	temporary_exists = 0;
	/* The rename is durable only once the directory entry is on disk. */
	rc = sync_directory(directory);
done:
	if (fd >= 0)
		close(fd);
	if (temporary_exists)
		unlink(temporary);
	return rc;
}

int ctl_file_remove(const char *directory, const char *name)
{
	char path[CTL_PATH_MAX];
	int n = snprintf(path, sizeof(path), "%s/%s", directory, name);
	if (n < 0 || (size_t)n >= sizeof(path))
		return DIRAUTH_ERR_BOUNDS;
	if (unlink(path) != 0)
		return errno == ENOENT ? 0 : DIRAUTH_ERR_IO;
	return sync_directory(directory) == 0 ? 0 : DIRAUTH_ERR_IO;
}

/* The directory part of path ("." when there is none), for the fsync that makes a new entry durable. */
static int directory_of(const char *path, char *out, size_t cap)
{
	const char *slash = strrchr(path, '/');
	size_t length;

	if (slash == NULL) {
		if (cap < 2)
			return DIRAUTH_ERR_BOUNDS;
		memcpy(out, ".", 2);
		return 0;
	}
	length = slash == path ? 1 : (size_t)(slash - path);
	if (length >= cap)
		return DIRAUTH_ERR_BOUNDS;
	memcpy(out, path, length);
	out[length] = '\0';
	return 0;
}

int ctl_file_create(const char *path, const uint8_t *data, size_t len, mode_t mode)
{
	char directory[CTL_PATH_MAX];
	int fd;
	int rc;

	if (strlen(path) >= CTL_PATH_MAX)
		return DIRAUTH_ERR_BOUNDS;
	rc = directory_of(path, directory, sizeof(directory));
	if (rc != 0)
		return rc;
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd < 0)
		return errno == EEXIST || errno == ELOOP ? DIRAUTH_ERR_EXISTS : error_from_errno(errno);
	/* The umask may have narrowed the mode; the file is meant to have exactly this one. */
	if (fchmod(fd, mode) != 0)
		rc = error_from_errno(errno);
	if (rc == 0)
		rc = write_all(fd, data, len);
	if (rc == 0 && fsync(fd) != 0)
		rc = DIRAUTH_ERR_IO;
	if (close(fd) != 0 && rc == 0)
		rc = DIRAUTH_ERR_IO;
	if (rc == 0 && sync_directory(directory) != 0)
		rc = DIRAUTH_ERR_IO;
	if (rc != 0)
		unlink(path);
	return rc;
}

int ctl_file_move(const char *from, const char *to)
{
	char directory[CTL_PATH_MAX];
	int rc;

	if (strlen(from) >= CTL_PATH_MAX || strlen(to) >= CTL_PATH_MAX)
		return DIRAUTH_ERR_BOUNDS;
	rc = directory_of(to, directory, sizeof(directory));
	if (rc != 0)
		return rc;
	if (rename(from, to) != 0)
		return error_from_errno(errno);
	return sync_directory(directory);
}

int ctl_file_link(const char *from, const char *to)
{
	if (strlen(from) >= CTL_PATH_MAX || strlen(to) >= CTL_PATH_MAX)
		return DIRAUTH_ERR_BOUNDS;
	if (link(from, to) != 0)
		return errno == EEXIST ? DIRAUTH_ERR_EXISTS : error_from_errno(errno);
	return 0;
}

/* Removes path and, when it is a directory, everything under it (symbolic links are removed, never
 * followed). depth bounds the recursion; the trees removed here are a few levels deep. */
static int remove_recursively(const char *path, int depth)
{
	struct stat info;
	DIR *directory;
	struct dirent *entry;
	int rc = 0;

	if (lstat(path, &info) != 0)
		return errno == ENOENT ? 0 : error_from_errno(errno);
	if (!S_ISDIR(info.st_mode))
		return unlink(path) == 0 || errno == ENOENT ? 0 : error_from_errno(errno);
	if (depth == 0)
		return DIRAUTH_ERR_BOUNDS;
	directory = opendir(path);
	if (directory == NULL)
		return error_from_errno(errno);
	while (rc == 0 && (entry = readdir(directory)) != NULL) {
		char child[CTL_PATH_MAX];
		int n;
		if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0)
			continue;
		n = snprintf(child, sizeof(child), "%s/%s", path, entry->d_name);
		rc = n < 0 || (size_t)n >= sizeof(child) ? DIRAUTH_ERR_BOUNDS
		                                         : remove_recursively(child, depth - 1);
	}
	closedir(directory);
	if (rc == 0 && rmdir(path) != 0)
		rc = error_from_errno(errno);
	return rc;
}

int ctl_directory_remove_tree(const char *path)
{
	char parent[CTL_PATH_MAX];
	int rc;

	if (strlen(path) >= CTL_PATH_MAX)
		return DIRAUTH_ERR_BOUNDS;
	if (!ctl_file_exists(path))
		return 0;
	rc = remove_recursively(path, 32);
	if (rc == 0)
		rc = directory_of(path, parent, sizeof(parent));
	return rc == 0 ? sync_directory(parent) : rc;
}
