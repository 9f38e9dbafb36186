/*
 * test_programs.c: programs from the system for tests and benchmarks (test_programs.h).
 */
#define _GNU_SOURCE /* pipe2: close-on-exec at once, as another thread may be starting a daemon */
#include "test_programs.h"

#include "base/error.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define NGINX_BUILD_MAX 16384 /* what nginx -V prints: its version and configure arguments */

int test_program_find(const char *program, char out[PATH_MAX])
{
	const char *path = getenv("PATH");
	char candidates[PATH_MAX * 4];
	snprintf(candidates, sizeof candidates, "%s:/usr/sbin:/usr/local/sbin:/sbin",
	         path ? path : "/usr/bin");
	for (char *save = NULL, *dir = strtok_r(candidates, ":", &save); dir;
	     dir = strtok_r(NULL, ":", &save)) {
		char file[PATH_MAX];
		int n = snprintf(file, sizeof file, "%s/%s", dir, program);
		if (n > 0 && (size_t)n < sizeof file && access(file, X_OK) == 0) {
			snprintf(out, PATH_MAX, "%s", file);
			return 0;
		}
	}
	return DIRAUTH_ERR_NOT_FOUND;
}

int test_nginx_user(struct buffer *out)
{
	if (geteuid() != 0)
		return 0;
	struct passwd *pw = getpwnam("nobody");
	struct group *gr = pw ? getgrgid(pw->pw_gid) : NULL;
	if (!pw || !gr)
		return 0; /* nginx then falls back to its built-in user, nobody too */
	return buffer_appendf(out, "user %s %s;\n", pw->pw_name, gr->gr_name) == 0 ? 0 : DIRAUTH_ERR_NOMEM;
}

/* What nginx -V prints (on its standard error), NUL-terminated, at most cap - 1 bytes. */
static int nginx_build(const char *nginx, char *out, size_t cap)
{
	int fds[2];
	if (pipe2(fds, O_CLOEXEC) != 0)
		return DIRAUTH_ERR_IO;
	pid_t pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return DIRAUTH_ERR_IO;
	}
	if (pid == 0) {
		int null_fd = open("/dev/null", O_RDWR);
		if (null_fd < 0 || dup2(null_fd, 0) < 0 || dup2(fds[1], 1) < 0 || dup2(fds[1], 2) < 0)
			_exit(127);
		char program[PATH_MAX];
		snprintf(program, sizeof program, "%s", nginx);
		char *argv[] = {program, "-V", NULL};
		execv(program, argv);
		_exit(127);
	}
	close(fds[1]);
	size_t len = 0;
	for (;;) {
		ssize_t n = read(fds[0], out + len, cap - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
		if (len == cap - 1) {
			char scratch[512];
			while (read(fds[0], scratch, sizeof scratch) > 0)
				; /* the rest is not needed; the child must not block on a full pipe */
			break;
		}
	}
	out[len] = 0;
	close(fds[0]);
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : DIRAUTH_ERR_IO;
}

int test_nginx_temp_paths(const char *nginx, const char *dir, struct buffer *out)
{
	char *build = malloc(NGINX_BUILD_MAX);
	if (!build)
		return DIRAUTH_ERR_NOMEM;
	int rc = nginx_build(nginx, build, NGINX_BUILD_MAX);
	static const char *const modules[][2] = {{"client_body", NULL},
	                                         {"proxy", "--without-http_proxy_module"},
	                                         {"fastcgi", "--without-http_fastcgi_module"},
	                                         {"uwsgi", "--without-http_uwsgi_module"},
	                                         {"scgi", "--without-http_scgi_module"}};
	for (size_t i = 0; rc == 0 && i < sizeof modules / sizeof modules[0]; i++)
		if (!modules[i][1] || !strstr(build, modules[i][1]))
			if (buffer_appendf(out, "\t%s_temp_path %s/temp-%s;\n", modules[i][0], dir,
			                   modules[i][0]) != 0)
				rc = DIRAUTH_ERR_NOMEM;
	free(build);
	return rc;
}
