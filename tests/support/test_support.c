/*
 * test_support.c: the shared test helpers.
 */
#define _XOPEN_SOURCE 700
#include "test_support.h"
#include "test_ports.h"

#include <check.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

void test_make_tempdir(char *out, size_t cap)
{
	const char *base = getenv("TMPDIR");
	if (!base || !*base)
		base = "/tmp";
	int n = snprintf(out, cap, "%s/dirauth-test-XXXXXX", base);
	ck_assert_msg(n > 0 && (size_t)n < cap, "temp path too long");
	ck_assert_msg(mkdtemp(out) != NULL, "mkdtemp: %s", strerror(errno));
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

void test_remove_tree(const char *path)
{
	nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

uint8_t *test_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	ck_assert_msg(f != NULL, "open %s: %s", path, strerror(errno));
	size_t cap = 4096, used = 0;
	uint8_t *data = malloc(cap);
	ck_assert(data != NULL);
	for (;;) {
		if (used + 1 >= cap) {
			cap *= 2;
			data = realloc(data, cap);
			ck_assert(data != NULL);
		}
		size_t got = fread(data + used, 1, cap - used - 1, f);
		used += got;
		if (got == 0)
			break;
	}
	fclose(f);
	data[used] = 0;
	if (len)
		*len = used;
	return data;
}

void test_write_file(const char *path, const void *data, size_t len, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
	ck_assert_msg(fd >= 0, "create %s: %s", path, strerror(errno));
	ck_assert(fchmod(fd, mode) == 0);
	const uint8_t *p = data;
	while (len) {
		ssize_t n = write(fd, p, len);
		ck_assert_msg(n > 0, "write %s: %s", path, strerror(errno));
		p += n;
		len -= (size_t)n;
	}
	ck_assert(close(fd) == 0);
}

const char *test_source_path(const char *relative)
{
	static char path[4096];
	snprintf(path, sizeof(path), "%s/%s", DIRAUTH_SOURCE_DIR, relative);
	return path;
}

const char *test_binary_path(const char *relative)
{
	static char path[4096];
	snprintf(path, sizeof(path), "%s/%s", DIRAUTH_BINARY_DIR, relative);
	return path;
}

unsigned test_free_port(void)
{
	unsigned port = test_ports_reserve();
	ck_assert_msg(port != 0, "no loopback port could be reserved below the ephemeral range");
	return port;
}

pid_t test_spawn(char *const argv[], const char *log_path)
{
	pid_t pid = fork();
	ck_assert_msg(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		if (log_path) {
			int fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND, 0644);
			if (fd < 0)
				_exit(127);
			dup2(fd, 1);
			dup2(fd, 2);
			close(fd);
		}
		execv(argv[0], argv);
		_exit(127);
	}
	return pid;
}

int test_kill(pid_t pid, int signal)
{
	int status = 0;
	kill(pid, signal);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return status;
}

int test_wait_exit(pid_t pid, int timeout_ms)
{
	for (int waited = 0; waited <= timeout_ms; waited += 10) {
		int status = 0;
		pid_t got = waitpid(pid, &status, WNOHANG);
		if (got == pid)
			return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
		test_sleep_ms(10);
	}
	return -1;
}

void test_sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

void test_run_program(const char *path, const char *const *args, const char *work_dir,
                      struct test_outcome *outcome)
{
	char *argv[32];
	char out_path[4200];
	char err_path[4200];
	size_t count = 0;
	int status = 0;

	argv[count++] = (char *)path;
	for (size_t i = 0; args[i] != NULL; i++) {
		ck_assert_uint_lt(count, 31);
		argv[count++] = (char *)args[i];
	}
	argv[count] = NULL;
	snprintf(out_path, sizeof(out_path), "%s/stdout", work_dir);
	snprintf(err_path, sizeof(err_path), "%s/stderr", work_dir);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int err = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (out < 0 || err < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
			_exit(127);
		execv(argv[0], argv);
		_exit(127);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	outcome->status = WEXITSTATUS(status);
	ck_assert_msg(outcome->status != 127, "cannot run %s (is it built?)", argv[0]);
	outcome->out = (char *)test_read_file(out_path, &outcome->out_len);
	outcome->err = (char *)test_read_file(err_path, &outcome->err_len);
}

void test_outcome_free(struct test_outcome *outcome)
{
	free(outcome->out);
	free(outcome->err);
}
