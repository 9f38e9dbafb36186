/*
 * launcher.c: one authority's dirauthd and dirauth-signer for a test (launcher.h).
 *
 * A start waits by polling, every 20 ms for at most 20 s, what a user of the process would use:
 * the signer's socket, dirauthd's health route. Each poll first checks that the process still
 * runs, so a daemon that refuses its configuration fails the test at once with its log's path.
 */
#include "tests/harness/launcher.h"

#include "base/buffer.h"
#include "tests/support/test_support.h"

#include <check.h>
#include <curl/curl.h>

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>

#define POLL_ATTEMPTS 1000
#define POLL_MS       20

void launcher_lay_out(struct launcher *l, const char *dir)
{
	memset(l, 0, sizeof *l);
	ck_assert_msg(strlen(dir) < sizeof l->dir, "%s is too long for a run directory", dir);
	snprintf(l->dir, sizeof l->dir, "%s", dir);
	snprintf(l->config_path, sizeof l->config_path, "%s/dirauthd.yaml", dir);
	snprintf(l->signer_config_path, sizeof l->signer_config_path, "%s/dirauth-signer.yaml", dir);
	snprintf(l->clock_path, sizeof l->clock_path, "%s/clock", dir);
	snprintf(l->log_path, sizeof l->log_path, "%s/dirauthd.log", dir);
	snprintf(l->signer_log_path, sizeof l->signer_log_path, "%s/dirauth-signer.log", dir);
	snprintf(l->socket_path, sizeof l->socket_path, "%s/signer.sock", dir);
	ck_assert_msg(strlen(l->socket_path) < sizeof(((struct sockaddr_un *)0)->sun_path),
	              "%s is too long for a UNIX socket path", l->socket_path);
	l->port = test_free_port();
	snprintf(l->url, sizeof l->url, "http://127.0.0.1:%u", l->port);
}

void launcher_set_clock(const struct launcher *l, uint64_t now)
{
	ck_assert_msg(run_directory_write_clock(l->clock_path, now) == 0, "cannot write %s: %s",
	              l->clock_path, strerror(errno));
}

void launcher_write_signer_config(const struct launcher *l, const struct run_directory_signer *signer,
                                  const char *namespaces)
{
	struct buffer config;
	buffer_init(&config);
	ck_assert(run_directory_signer_config(signer, &config) == 0);
	ck_assert(buffer_append_string(&config, namespaces) == 0);
	test_write_file(l->signer_config_path, config.data, config.len, 0644);
	buffer_free(&config);
}

void launcher_write_configs(const struct launcher *l, const struct run_directory_signer *signer,
                            int epoch_length, int validity_epochs,
                            const struct launcher_namespace *namespaces, size_t namespace_count,
                            const char *tail)
{
	struct buffer signed_namespaces, config;
	buffer_init(&signed_namespaces);
	buffer_init(&config);
	ck_assert(buffer_appendf(&config,
	                         "authority: { name: %s, signer_socket: signer.sock }\n"
	                         "listen: { address: 127.0.0.1, port: %u }\n"
	                         "data_dir: data\n"
	                         "epoch: { length_seconds: %d, genesis: 0, validity_epochs: %d }\n"
	                         "clock: { source: file, path: clock }\n"
	                         "namespaces:\n",
	                         signer->authority, l->port, epoch_length, validity_epochs) == 0);
	for (size_t i = 0; i < namespace_count; i++) {
		const struct launcher_namespace *ns = &namespaces[i];
		ck_assert(buffer_appendf(&signed_namespaces,
		                         "  - { name: %s, origin: dirauth.example/%s, genesis: 0, "
		                         "length_seconds: %d, validity_epochs: %d }\n",
		                         ns->name, ns->name, epoch_length, validity_epochs) == 0);
		ck_assert(buffer_appendf(&config, "  - { name: %s, origin: dirauth.example/%s%s }\n",
		                         ns->name, ns->name, ns->options ? ns->options : "") == 0);
	}
	ck_assert(buffer_append_string(&config, tail) == 0);
	ck_assert(buffer_append(&signed_namespaces, "", 1) == 0);
	launcher_write_signer_config(l, signer, (const char *)signed_namespaces.data);
	test_write_file(l->config_path, config.data, config.len, 0644);
	buffer_free(&signed_namespaces);
	buffer_free(&config);
}

/* Starts the program at relative (in the build tree) with --config config, output to log_path. */
static pid_t spawn_daemon(const char *relative, const char *config, const char *log_path)
{
	char binary[PATH_MAX];
	snprintf(binary, sizeof binary, "%s", test_binary_path(relative));
	char *argv[] = {binary, "--config", (char *)config, NULL};
	return test_spawn(argv, log_path);
}

void launcher_start_signer(struct launcher *l)
{
	l->signer_pid = spawn_daemon("signer/dirauth-signer", l->signer_config_path, l->signer_log_path);
	for (int attempt = 0; attempt < POLL_ATTEMPTS; attempt++) {
		if (run_directory_signer_listening(l->socket_path))
			return;
		ck_assert_msg(waitpid(l->signer_pid, NULL, WNOHANG) == 0, "dirauth-signer exited; see %s",
		              l->signer_log_path);
		test_sleep_ms(POLL_MS);
	}
	ck_abort_msg("dirauth-signer did not listen on %s; see %s", l->socket_path, l->signer_log_path);
}

void launcher_spawn_dirauthd(struct launcher *l)
{
	l->pid = spawn_daemon("server/dirauthd", l->config_path, l->log_path);
}

static size_t discard(char *data, size_t size, size_t count, void *context)
{
	(void)data;
	(void)context;
	return size * count;
}

/* The status of a GET of url, or -1 when nothing answered. */
static long get_status(const char *url)
{
	CURL *curl = curl_easy_init();
	ck_assert(curl != NULL);
	long status = -1;
	curl_easy_setopt(curl, CURLOPT_URL, url);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, discard);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT, 30L);
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	if (curl_easy_perform(curl) == CURLE_OK)
		curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_cleanup(curl);
	return status;
}

void launcher_wait_dirauthd(const struct launcher *l)
{
	char url[128];
	snprintf(url, sizeof url, "%s/v1/health", l->url);
	for (int attempt = 0; attempt < POLL_ATTEMPTS; attempt++) {
		if (get_status(url) == 200)
			return;
		ck_assert_msg(waitpid(l->pid, NULL, WNOHANG) == 0, "dirauthd exited; see %s", l->log_path);
		test_sleep_ms(POLL_MS);
	}
	ck_abort_msg("dirauthd did not answer on %s; see %s", url, l->log_path);
}

void launcher_start(struct launcher *l)
{
	if (l->signer_pid == 0)
		launcher_start_signer(l);
	launcher_spawn_dirauthd(l);
	launcher_wait_dirauthd(l);
}

/* Sends signal to *pid and reaps it. */
static int stop_process(pid_t *pid, int signal)
{
	if (*pid <= 0)
		return 0;
	int status = test_kill(*pid, signal);
	*pid = 0;
	return status;
}

int launcher_stop_dirauthd(struct launcher *l, int signal)
{
	return stop_process(&l->pid, signal);
}

int launcher_stop_signer(struct launcher *l, int signal)
{
	return stop_process(&l->signer_pid, signal);
}

void launcher_stop(struct launcher *l)
{
	launcher_stop_dirauthd(l, SIGTERM);
	launcher_stop_signer(l, SIGTERM);
}
