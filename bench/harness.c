/*
 * harness.c: the pieces every benchmark program uses (harness.h).
 *
 * Nothing here measures dirauth by itself: it starts the real binaries, feeds them real signed
 * registrations over HTTP, and reads what the kernel accounts for each process. The anchors are
 * public tools run as whole processes (their wall and CPU time from wait4), so a figure and its
 * anchor are measured the same way, on the same machine, minutes apart at most.
 */
#define _DEFAULT_SOURCE /* wait4 */
#include "bench/harness.h"

#include "schema/certificate.h"
#include "schema/encoding.h"
#include "crypto/crypto.h"
#include "base/error.h"
#include "schema/receipt.h"
#include "schema/registration.h"
#include "schema/snapshot.h"
#include "tests/harness/run_directory.h"
#include "tests/support/test_ports.h"
#include "tests/support/test_programs.h"

#include <curl/curl.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define HARNESS_TMPFS_MAGIC     0x01021994L
#define HARNESS_DEFAULT_PER_IP  64 /* dirauthd's default http.max_connections_per_ip */
#define HARNESS_STARTUP_SECONDS 15.0
#define HARNESS_REQUEST_SECONDS 120L
#define HARNESS_VERIFY_WINDOWS  8

/* --- the run ------------------------------------------------------------------------------ */

/* The watcher owns the termination signals, so that an interrupted run still stops its children
 * and removes its directories: it only raises a flag that every loop polls. SIGUSR1 ends it. */
static void *signal_watch(void *context)
{
	struct harness *harness = context;
	for (;;) {
		int signal_number = 0;
		if (sigwait(&harness->signals, &signal_number) != 0)
			continue;
		if (signal_number == SIGUSR1)
			return NULL;
		atomic_store(&harness->interrupted, 1);
	}
}

int harness_start(struct harness *harness)
{
	sigemptyset(&harness->signals);
	sigaddset(&harness->signals, SIGINT);
	sigaddset(&harness->signals, SIGTERM);
	sigaddset(&harness->signals, SIGHUP);
	sigaddset(&harness->signals, SIGUSR1);
	atomic_store(&harness->interrupted, 0);
	if (!harness->temp_parent)
		harness->temp_parent = getenv("TMPDIR") && getenv("TMPDIR")[0] ? getenv("TMPDIR") : "/tmp";
	if (pthread_sigmask(SIG_BLOCK, &harness->signals, NULL) != 0 ||
	    pthread_create(&harness->watcher, NULL, signal_watch, harness) != 0) {
		harness_fail("cannot set up signal handling");
		return -1;
	}
	harness->watching = 1;
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		harness_fail("curl_global_init failed");
		return -1;
	}
	return 0;
}

void harness_finish(struct harness *harness)
{
	curl_global_cleanup();
	if (harness->watching) {
		pthread_kill(harness->watcher, SIGUSR1);
		pthread_join(harness->watcher, NULL);
		harness->watching = 0;
	}
}

int harness_stopped(struct harness *harness)
{
	return atomic_load(&harness->interrupted);
}

double harness_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void harness_sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

void harness_fail(const char *format, ...)
{
	va_list args;
	va_start(args, format);
	fputs("bench: ", stderr);
	vfprintf(stderr, format, args);
	fputc('\n', stderr);
	va_end(args);
}

/* --- files -------------------------------------------------------------------------------- */

int harness_write_file(const char *path, const void *data, size_t len, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
	if (fd < 0) {
		harness_fail("%s: %s", path, strerror(errno));
		return -1;
	}
	const uint8_t *bytes = data;
	size_t written = 0;
	while (written < len) {
		ssize_t n = write(fd, bytes + written, len - written);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			harness_fail("%s: %s", path, strerror(errno));
			close(fd);
			return -1;
		}
		written += (size_t)n;
	}
	if (close(fd) != 0) {
		harness_fail("%s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

void harness_remove_tree(const char *path)
{
	struct stat st;
	if (lstat(path, &st) != 0)
		return;
	if (S_ISDIR(st.st_mode)) {
		DIR *dir = opendir(path);
		if (dir) {
			struct dirent *entry;
			while ((entry = readdir(dir)) != NULL) {
				if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0)
					continue;
				char child[PATH_MAX];
				int n = snprintf(child, sizeof(child), "%s/%s", path, entry->d_name);
				if (n > 0 && (size_t)n < sizeof(child))
					harness_remove_tree(child);
			}
			closedir(dir);
		}
		rmdir(path);
	} else {
		unlink(path);
	}
}

uint64_t harness_tree_bytes(const char *path)
{
	struct stat st;
	if (lstat(path, &st) != 0)
		return 0;
	if (S_ISREG(st.st_mode))
		return (uint64_t)st.st_size;
	if (!S_ISDIR(st.st_mode))
		return 0;
	uint64_t total = 0;
	DIR *dir = opendir(path);
	if (!dir)
		return 0;
	struct dirent *entry;
	while ((entry = readdir(dir)) != NULL) {
		if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0)
			continue;
		char child[PATH_MAX];
		int n = snprintf(child, sizeof(child), "%s/%s", path, entry->d_name);
		if (n > 0 && (size_t)n < sizeof(child))
			total += harness_tree_bytes(child);
	}
	closedir(dir);
	return total;
}

uint64_t harness_file_size(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

int harness_make_temp_dir(const char *parent, const char *label, char out[HARNESS_DIR_MAX])
{
	int n = snprintf(out, HARNESS_DIR_MAX, "%s/dirauth-bench-%s.XXXXXX", parent, label);
	if (n < 0 || n >= HARNESS_DIR_MAX || mkdtemp(out) == NULL) {
		harness_fail("cannot create a temporary directory in %s: %s", parent, strerror(errno));
		out[0] = 0;
		return -1;
	}
	return 0;
}

/* --- the machine's accounting ------------------------------------------------------------- */

void harness_load_average(char out[64])
{
	snprintf(out, 64, "unknown");
	FILE *file = fopen("/proc/loadavg", "r");
	if (!file)
		return;
	double a = 0, b = 0, c = 0;
	if (fscanf(file, "%lf %lf %lf", &a, &b, &c) == 3)
		snprintf(out, 64, "%.2f %.2f %.2f", a, b, c);
	fclose(file);
}

void harness_format_bytes(double bytes, char *out, size_t cap)
{
	if (bytes >= 1e9)
		snprintf(out, cap, "%.2f GB", bytes / 1e9);
	else if (bytes >= 1e6)
		snprintf(out, cap, "%.1f MB", bytes / 1e6);
	else if (bytes >= 1e3)
		snprintf(out, cap, "%.1f kB", bytes / 1e3);
	else
		snprintf(out, cap, "%.0f B", bytes);
}

int harness_tail_read(struct harness_tail *tail, const char *path,
                      void (*on_line)(void *context, const char *line), void *context)
{
	FILE *file = fopen(path, "r");
	if (!file)
		return -1;
	if (fseek(file, tail->offset, SEEK_SET) != 0) {
		fclose(file);
		return -1;
	}
	char chunk[65536];
	size_t got;
	while ((got = fread(chunk, 1, sizeof chunk, file)) > 0) {
		tail->offset += (long)got;
		for (size_t k = 0; k < got; k++) {
			if (chunk[k] != '\n') {
				if (tail->partial_len + 1 < sizeof tail->partial)
					tail->partial[tail->partial_len++] = chunk[k];
				else
					tail->overlong = 1;
				continue;
			}
			/* A copy: on_line may write into the struct that holds the tail. */
			char line[HARNESS_TAIL_LINE_MAX];
			memcpy(line, tail->partial, tail->partial_len);
			line[tail->partial_len] = 0;
			if (!tail->overlong)
				on_line(context, line);
			tail->partial_len = 0;
			tail->overlong = 0;
		}
	}
	fclose(file);
	return 0;
}

static uint64_t status_kib(pid_t pid, const char *field)
{
	char path[64], line[256];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	FILE *file = fopen(path, "r");
	if (!file)
		return 0;
	uint64_t value = 0;
	size_t field_len = strlen(field);
	while (fgets(line, sizeof(line), file))
		if (strncmp(line, field, field_len) == 0 && line[field_len] == ':') {
			value = strtoull(line + field_len + 1, NULL, 10);
			break;
		}
	fclose(file);
	return value;
}

uint64_t harness_peak_rss_kib(pid_t pid)
{
	return status_kib(pid, "VmHWM");
}

uint64_t harness_rss_kib(pid_t pid)
{
	return status_kib(pid, "VmRSS");
}

double harness_process_cpu(pid_t pid)
{
	char path[64], text[2048];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	FILE *file = fopen(path, "r");
	if (!file)
		return 0;
	size_t n = fread(text, 1, sizeof(text) - 1, file);
	fclose(file);
	text[n] = 0;
	/* The command name is in parentheses and may hold spaces: count fields after the last ')'. */
	char *p = strrchr(text, ')');
	if (!p)
		return 0;
	unsigned long long utime = 0, stime = 0;
	if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &utime, &stime) != 2)
		return 0;
	return (double)(utime + stime) / (double)sysconf(_SC_CLK_TCK);
}

void harness_machine_cpu(double *busy, double *idle)
{
	*busy = *idle = 0;
	FILE *file = fopen("/proc/stat", "r");
	if (!file)
		return;
	unsigned long long v[8] = {0};
	if (fscanf(file, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4],
	           &v[5], &v[6], &v[7]) == 8) {
		double tick = (double)sysconf(_SC_CLK_TCK);
		*idle = (double)(v[3] + v[4]) / tick;
		*busy = (double)(v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / tick;
	}
	fclose(file);
}

/* --- children ----------------------------------------------------------------------------- */

int harness_child_spawn(struct harness_child *child, char *const argv[])
{
	pid_t parent = getpid();
	int log_fd = open(child->log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (log_fd < 0) {
		harness_fail("%s: %s", child->log_path, strerror(errno));
		return -1;
	}
	pid_t pid = fork();
	if (pid < 0) {
		harness_fail("fork: %s", strerror(errno));
		close(log_fd);
		return -1;
	}
	if (pid == 0) {
		sigset_t none;
		sigemptyset(&none);
		pthread_sigmask(SIG_SETMASK, &none, NULL);
		if (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0 || getppid() != parent)
			_exit(127);
		int null_fd = open("/dev/null", O_RDONLY);
		if (null_fd < 0 || dup2(null_fd, 0) < 0 || dup2(log_fd, 1) < 0 || dup2(log_fd, 2) < 0)
			_exit(127);
		execv(argv[0], argv);
		_exit(127);
	}
	close(log_fd);
	child->pid = pid;
	return 0;
}

int harness_child_running(struct harness_child *child)
{
	if (child->pid <= 0)
		return 0;
	int status = 0;
	pid_t got = waitpid(child->pid, &status, WNOHANG);
	if (got == child->pid) {
		child->pid = 0;
		return 0;
	}
	return 1;
}

void harness_child_stop(struct harness_child *child)
{
	if (child->pid <= 0)
		return;
	kill(child->pid, SIGTERM);
	for (int waited = 0; waited < 1000; waited++) {
		if (!harness_child_running(child))
			return;
		harness_sleep_ms(10);
	}
	kill(child->pid, SIGKILL);
	while (waitpid(child->pid, NULL, 0) < 0 && errno == EINTR)
		;
	child->pid = 0;
}

void harness_child_log_tail(const struct harness_child *child)
{
	FILE *file = fopen(child->log_path, "r");
	if (!file)
		return;
	char lines[20][512];
	size_t count = 0;
	while (fgets(lines[count % 20], sizeof(lines[0]), file))
		count++;
	fclose(file);
	fprintf(stderr, "bench: last lines of %s:\n", child->log_path);
	for (size_t i = count > 20 ? count - 20 : 0; i < count; i++)
		fprintf(stderr, "  %s", lines[i % 20]);
}

int harness_find_program(const char *program, char out[PATH_MAX])
{
	return test_program_find(program, out) == 0 ? 0 : -1;
}

int harness_run(struct harness *harness, char *const argv[], const char *input_path, const char *output_path,
                double seconds, struct harness_usage *usage)
{
	char program[PATH_MAX];
	memset(usage, 0, sizeof(*usage));
	if (argv[0][0] == '/')
		snprintf(program, sizeof(program), "%s", argv[0]);
	else if (harness_find_program(argv[0], program) != 0) {
		harness_fail("%s is not installed", argv[0]);
		return -1;
	}
	pid_t parent = getpid();
	double start = harness_now();
	pid_t pid = fork();
	if (pid < 0) {
		harness_fail("fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		sigset_t none;
		sigemptyset(&none);
		pthread_sigmask(SIG_SETMASK, &none, NULL);
		if (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0 || getppid() != parent)
			_exit(127);
		int in = open(input_path ? input_path : "/dev/null", O_RDONLY);
		int out = output_path ? open(output_path, O_WRONLY | O_CREAT | O_TRUNC, 0600)
		                      : open("/dev/null", O_WRONLY);
		int err = open("/dev/null", O_WRONLY);
		if (in < 0 || out < 0 || err < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
			_exit(127);
		execv(program, argv);
		_exit(127);
	}
	int status = 0;
	struct rusage ru;
	for (;;) {
		pid_t got = wait4(pid, &status, WNOHANG, &ru);
		if (got == pid)
			break;
		if (got < 0 && errno != EINTR) {
			harness_fail("wait4: %s", strerror(errno));
			return -1;
		}
		if (harness_now() - start > seconds || harness_stopped(harness)) {
			kill(pid, SIGKILL);
			while (wait4(pid, &status, 0, &ru) < 0 && errno == EINTR)
				;
			harness_fail("%s did not finish within %.0f s", argv[0], seconds);
			return -1;
		}
		harness_sleep_ms(1);
	}
	usage->wall = harness_now() - start;
	usage->user = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6;
	usage->system = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	usage->peak_rss_kib = ru.ru_maxrss;
	usage->exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	if (usage->exit_status != 0) {
		harness_fail("%s exited with status %d", argv[0], usage->exit_status);
		return -1;
	}
	return 0;
}

int harness_openssl_ed25519(struct harness *harness, unsigned seconds, unsigned processes, double *verify,
                            double *sign)
{
	char dir[HARNESS_DIR_MAX], output[PATH_MAX], text[16], multi[16];
	*verify = *sign = 0;
	if (harness_make_temp_dir(harness->temp_parent, "openssl", dir) != 0)
		return -1;
	snprintf(output, sizeof(output), "%s/speed.txt", dir);
	snprintf(text, sizeof(text), "%u", seconds);
	snprintf(multi, sizeof(multi), "%u", processes);
	char *one[] = {"openssl", "speed", "-seconds", text, "ed25519", NULL};
	char *several[] = {"openssl", "speed", "-multi", multi, "-seconds", text, "ed25519", NULL};
	char **argv = processes > 1 ? several : one;
	struct harness_usage usage;
	int rc = harness_run(harness, argv, NULL, output, seconds * 4.0 + 30, &usage);
	FILE *file = rc == 0 ? fopen(output, "r") : NULL;
	rc = -1;
	if (file) {
		char line[512];
		while (fgets(line, sizeof(line), file)) {
			char *p = strstr(line, "(Ed25519)");
			if (p && sscanf(p + strlen("(Ed25519)"), "%*s %*s %lf %lf", sign, verify) == 2 &&
			    *verify > 0)
				rc = 0;
		}
		fclose(file);
	}
	harness_remove_tree(dir);
	if (rc != 0)
		harness_fail("cannot read the Ed25519 rates of openssl speed");
	return rc;
}

/* CPU seconds of the calling thread: like openssl speed, the anchor counts per CPU-second, so
 * other work on the machine does not lower it. */
static double thread_cpu_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int harness_evp_verify_rate(const uint8_t *message, size_t len, double seconds, double *rate)
{
	struct signer_key *key = NULL;
	struct note_signature signature;
	int rc = signer_key_generate("bench-anchor.example", &key);
	if (rc == 0)
		rc = signer_key_sign(key, message, len, &signature);
	if (rc != 0) {
		harness_fail("anchor key: %s", dirauth_strerror(rc));
		signer_key_free(key);
		return -1;
	}
	const uint8_t *public_key = signer_key_verifier(key)->public_key;
	*rate = 0;
	for (int window = 0; window < HARNESS_VERIFY_WINDOWS; window++) {
		uint64_t count = 0;
		double start = thread_cpu_seconds(), elapsed = 0;
		do {
			for (int i = 0; i < 16; i++) {
				rc = crypto_ed25519_verify(public_key, message, len, signature.signature);
				if (rc != 0) {
					harness_fail("crypto_ed25519_verify: %s", dirauth_strerror(rc));
					signer_key_free(key);
					return -1;
				}
			}
			count += 16;
			elapsed = thread_cpu_seconds() - start;
		} while (elapsed < seconds / HARNESS_VERIFY_WINDOWS);
		if ((double)count / elapsed > *rate)
			*rate = (double)count / elapsed;
	}
	signer_key_free(key);
	return 0;
}

/* --- HTTP --------------------------------------------------------------------------------- */

static size_t http_collect(char *data, size_t size, size_t count, void *context)
{
	if (buffer_append(context, data, size * count) != 0)
		return 0;
	return size * count;
}

struct header_capture {
	char *encoding;
	size_t cap;
};

static size_t http_header(char *data, size_t size, size_t count, void *context)
{
	static const char name[] = "content-encoding:";
	struct header_capture *capture = context;
	size_t len = size * count;
	if (capture->cap && len >= sizeof(name) - 1 && strncasecmp(data, name, sizeof(name) - 1) == 0) {
		size_t i = sizeof(name) - 1, n = 0;
		while (i < len && data[i] == ' ')
			i++;
		while (i < len && data[i] != '\r' && data[i] != '\n' && n + 1 < capture->cap)
			capture->encoding[n++] = data[i++];
		capture->encoding[n] = 0;
	}
	return len;
}

int harness_http(const char *url, const char *header, const struct buffer *post, long *status,
                 struct buffer *body, char *content_encoding, size_t encoding_cap)
{
	CURL *curl = curl_easy_init();
	if (!curl)
		return -1;
	struct curl_slist *headers = curl_slist_append(NULL, "Expect:");
	if (header)
		headers = curl_slist_append(headers, header);
	struct header_capture capture = {content_encoding, content_encoding ? encoding_cap : 0};
	if (capture.cap)
		content_encoding[0] = 0;
	buffer_reset(body);
	*status = 0;
	curl_easy_setopt(curl, CURLOPT_URL, url);
	curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, http_collect);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, body);
	curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, http_header);
	curl_easy_setopt(curl, CURLOPT_HEADERDATA, &capture);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT, HARNESS_REQUEST_SECONDS);
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(curl, CURLOPT_NOPROXY, "*");
	if (post) {
		curl_easy_setopt(curl, CURLOPT_POSTFIELDS, (const char *)post->data);
		curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)post->len);
	}
	CURLcode rc = curl_easy_perform(curl);
	curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, status);
	curl_slist_free_all(headers);
	curl_easy_cleanup(curl);
	return rc == CURLE_OK ? 0 : -1;
}

int harness_metric(struct harness_authority *authority, const char *name, double *value)
{
	char url[128];
	struct buffer body;
	long status = 0;
	int rc = -1;
	buffer_init(&body);
	snprintf(url, sizeof(url), "%s/v1/metrics", authority->url);
	if (harness_http(url, NULL, NULL, &status, &body, NULL, 0) == 0 && status == 200 &&
	    buffer_append(&body, "", 1) == 0) {
		size_t len = strlen(name);
		for (const char *line = (const char *)body.data; line && *line;) {
			if (strncmp(line, name, len) == 0 && line[len] == ' ') {
				*value = strtod(line + len + 1, NULL);
				rc = 0;
				break;
			}
			line = strchr(line, '\n');
			if (line)
				line++;
		}
	}
	buffer_free(&body);
	if (rc != 0)
		harness_fail("metric %s not found at %s", name, url);
	return rc;
}

/* Polls url until it answers 200 or the child dies or the time is up. */
static int wait_for_http(struct harness *harness, struct harness_child *child, const char *url,
                         const char *what)
{
	struct buffer body;
	buffer_init(&body);
	double deadline = harness_now() + HARNESS_STARTUP_SECONDS;
	int rc = -1;
	while (harness_now() < deadline && !harness_stopped(harness)) {
		long status = 0;
		if (harness_http(url, NULL, NULL, &status, &body, NULL, 0) == 0 && status == 200) {
			rc = 0;
			break;
		}
		if (!harness_child_running(child)) {
			harness_fail("%s exited during startup", what);
			break;
		}
		harness_sleep_ms(20);
	}
	buffer_free(&body);
	if (rc != 0) {
		if (!harness_stopped(harness))
			harness_fail("%s did not answer on %s", what, url);
		harness_child_log_tail(child);
	}
	return rc;
}

/* --- the authority ------------------------------------------------------------------------ */

int harness_set_clock(struct harness_authority *authority, uint64_t now)
{
	if (authority->system_clock) {
		harness_fail("the authority runs on the system clock: its time cannot be set");
		return -1;
	}
	if (run_directory_write_clock(authority->clock_path, now) != 0) {
		harness_fail("cannot write %s: %s", authority->clock_path, strerror(errno));
		return -1;
	}
	authority->now = now;
	return 0;
}

static int load_key(const char *dir, const char *file, struct signer_key **out)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/keys/%s", dir, file);
	int rc = signer_key_load(path, out);
	if (rc != 0) {
		harness_fail("%s: %s", path, dirauth_strerror(rc));
		return -1;
	}
	return 0;
}

/* The identity key certifies the signing key around the bench's clock. */
static int issue_certificate(struct harness_authority *authority, const struct signer_key *identity)
{
	struct certificate certificate;
	struct buffer text, note;
	struct note_signature signature;
	memset(&certificate, 0, sizeof(certificate));
	snprintf(certificate.authority, sizeof(certificate.authority), "%s", authority->verifier.name);
	certificate.identity = *signer_key_verifier(identity);
	certificate.signing_key = authority->verifier;
	certificate.valid_after = authority->now - 86400;
	certificate.valid_until = authority->now + 30 * 86400;
	buffer_init(&text);
	buffer_init(&note);
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/keys/authority1.cert", authority->dir);
	int issued = certificate_encode(&certificate, &text) == 0 &&
	             signer_key_sign(identity, text.data, text.len, &signature) == 0 &&
	             note_format(text.data, text.len, &signature, 1, &note) == 0 &&
	             harness_write_file(path, note.data, note.len, 0644) == 0;
	buffer_free(&text);
	buffer_free(&note);
	if (!issued) {
		harness_fail("cannot issue the signing key's certificate");
		return -1;
	}
	return 0;
}

static int write_configs(struct harness_authority *authority, const struct harness_authority_options *options,
                         unsigned port)
{
	char provider[NOTE_VERIFIER_KEY_MAX + 1];
	note_verifier_format(signer_key_verifier(authority->provider), provider);
	const char *clock_line = authority->system_clock ? "" : "clock: { source: file, path: clock }\n";
	struct run_directory_signer signer = {authority->verifier.name, "authority1.key", "authority1.cert",
	                                      0, authority->system_clock};
	struct buffer text;
	buffer_init(&text);
	int rc = buffer_append_string(
	    &text, "# dirauth benchmark: the authority's signer, on the same file clock.\n");
	if (rc == 0)
		rc = run_directory_signer_config(&signer, &text);
	if (rc == 0)
		rc = buffer_appendf(
		    &text,
		    "  - { name: " HARNESS_NAMESPACE ", origin: dirauth.example/" HARNESS_NAMESPACE
		    ", genesis: %llu, length_seconds: %llu, validity_epochs: 3 }\n",
		    (unsigned long long)authority->genesis, (unsigned long long)authority->epoch_length);
	if (rc == 0)
		rc = harness_write_file(authority->signer_config_path, text.data, text.len, 0644);
	buffer_reset(&text);
	/* Every client connection must be admitted: keep dirauthd's limits above the run's. */
	unsigned per_ip = HARNESS_DEFAULT_PER_IP;
	if (options->connections + 8 > per_ip)
		per_ip = options->connections + 8;
	if (rc == 0)
		rc = buffer_appendf(
		    &text,
		    "# dirauth benchmark: one authority on loopback with a file clock.\n"
		    "authority:\n"
		    "  name: %s\n"
		    "  signer_socket: signer.sock\n"
		    "listen: { address: 127.0.0.1, port: %u }\n"
		    "data_dir: data\n"
		    "epoch: { length_seconds: %llu, genesis: %llu, validity_epochs: 3 }\n"
		    "%s"
		    "namespaces:\n"
		    "  - { name: " HARNESS_NAMESPACE ", origin: dirauth.example/" HARNESS_NAMESPACE " }\n"
		    "providers:\n"
		    "  - key: \"%s\"\n"
		    "    namespaces: [" HARNESS_NAMESPACE "]\n"
		    "    classes: [mix-gateway]\n",
		    authority->verifier.name, port, (unsigned long long)authority->epoch_length,
		    (unsigned long long)authority->genesis, clock_line, provider);
	if (rc == 0 && options->shipped_http_limits)
		rc = buffer_appendf(&text, "http: { %s }\n", options->http ? options->http : "");
	else if (rc == 0)
		rc = buffer_appendf(&text, "http: { max_connections: %u, max_connections_per_ip: %u%s%s }\n",
		                    per_ip > 1024 ? per_ip : 1024, per_ip, options->http ? ", " : "",
		                    options->http ? options->http : "");
	if (rc == 0 && options->store)
		rc = buffer_appendf(&text, "store: %s\n", options->store);
	if (rc == 0 && options->bounds)
		rc = buffer_appendf(&text, "bounds: %s\n", options->bounds);
	if (rc == 0)
		rc = harness_write_file(authority->config_path, text.data, text.len, 0644);
	buffer_free(&text);
	if (rc != 0)
		harness_fail("cannot write the configurations");
	return rc == 0 ? 0 : -1;
}

int harness_authority_prepare(struct harness *harness, const struct harness_authority_options *options,
                              struct harness_authority *authority)
{
	memset(authority, 0, sizeof(*authority));
	authority->harness = harness;
	authority->system_clock = options->system_clock;
	authority->epoch_length = options->system_clock ? 86400 : HARNESS_EPOCH_LENGTH;
	authority->now = options->system_clock ? (uint64_t)time(NULL) : HARNESS_START_TIME;
	if (options->system_clock && options->first_epoch_in_seconds)
		authority->genesis =
		    (authority->now + options->first_epoch_in_seconds) % authority->epoch_length;
	snprintf(authority->dirauthd_program, sizeof(authority->dirauthd_program), "%s", options->dirauthd);
	snprintf(authority->signer_program, sizeof(authority->signer_program), "%s", options->signer);
	if (harness_make_temp_dir(harness->temp_parent, "authority", authority->dir) != 0)
		return -1;
	char command[PATH_MAX * 2 + 64];
	snprintf(command, sizeof(command), "sh '%s/scripts/example-keys.sh' '%s/keys' >/dev/null",
	         DIRAUTH_SOURCE_DIR, authority->dir);
	if (system(command) != 0) {
		harness_fail("scripts/example-keys.sh failed");
		return -1;
	}
	struct signer_key *key = NULL, *identity = NULL;
	if (load_key(authority->dir, "authority1.key", &key) != 0 ||
	    load_key(authority->dir, "authority1-identity.key", &identity) != 0 ||
	    load_key(authority->dir, "provider-a.key", &authority->provider) != 0) {
		signer_key_free(key);
		signer_key_free(identity);
		return -1;
	}
	authority->verifier = *signer_key_verifier(key);
	signer_key_free(key);
	int rc = issue_certificate(authority, identity);
	signer_key_free(identity);
	if (rc != 0)
		return -1;

	unsigned port = test_ports_reserve();
	if (port == 0) {
		harness_fail("no free port on 127.0.0.1");
		return -1;
	}
	const char *dir = authority->dir;
	snprintf(authority->url, sizeof(authority->url), "http://127.0.0.1:%u", port);
	snprintf(authority->clock_path, sizeof(authority->clock_path), "%s/clock", dir);
	snprintf(authority->data_dir, sizeof(authority->data_dir), "%s/data", dir);
	snprintf(authority->config_path, sizeof(authority->config_path), "%s/dirauthd.yaml", dir);
	snprintf(authority->dirauthd.log_path, sizeof(authority->dirauthd.log_path), "%s/dirauthd.log", dir);
	snprintf(authority->signer_config_path, sizeof(authority->signer_config_path),
	         "%s/dirauth-signer.yaml", dir);
	snprintf(authority->signer.log_path, sizeof(authority->signer.log_path), "%s/dirauth-signer.log",
	         dir);
	snprintf(authority->socket_path, sizeof(authority->socket_path), "%s/signer.sock", dir);
	if (strlen(authority->socket_path) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
		harness_fail("%s is too long for a UNIX socket path: use a shorter --temp-dir",
		             authority->socket_path);
		return -1;
	}
	if (!authority->system_clock && harness_set_clock(authority, HARNESS_START_TIME) != 0)
		return -1;
	return write_configs(authority, options, port);
}

static int signer_start(struct harness_authority *authority)
{
	struct harness *harness = authority->harness;
	char *argv[] = {authority->signer_program, "--config", authority->signer_config_path, NULL};
	if (harness_child_spawn(&authority->signer, argv) != 0)
		return -1;
	double deadline = harness_now() + HARNESS_STARTUP_SECONDS;
	while (harness_now() < deadline && !harness_stopped(harness)) {
		if (run_directory_signer_listening(authority->socket_path))
			return 0;
		if (!harness_child_running(&authority->signer)) {
			harness_fail("dirauth-signer exited during startup");
			break;
		}
		harness_sleep_ms(20);
	}
	if (!harness_stopped(harness) && harness_child_running(&authority->signer))
		harness_fail("dirauth-signer did not listen on %s", authority->socket_path);
	harness_child_log_tail(&authority->signer);
	return -1;
}

int harness_authority_start(struct harness_authority *authority)
{
	if (signer_start(authority) != 0)
		return -1;
	char *argv[] = {authority->dirauthd_program, "--config", authority->config_path, NULL};
	if (harness_child_spawn(&authority->dirauthd, argv) != 0)
		return -1;
	char url[128];
	snprintf(url, sizeof(url), "%s/v1/ready", authority->url);
	return wait_for_http(authority->harness, &authority->dirauthd, url, "dirauthd");
}

void harness_authority_stop(struct harness_authority *authority)
{
	harness_child_stop(&authority->dirauthd);
	harness_child_stop(&authority->signer);
	if (authority->dir[0])
		harness_remove_tree(authority->dir);
	authority->dir[0] = 0;
	signer_key_free(authority->provider);
	authority->provider = NULL;
}

static int make_id(const char *label, uint64_t a, uint64_t b, uint8_t out[32])
{
	char text[128];
	int n = snprintf(text, sizeof(text), "dirauth-bench-%s-%llu-%llu", label, (unsigned long long)a,
	                 (unsigned long long)b);
	return crypto_sha256((const uint8_t *)text, (size_t)n, out);
}

int harness_registration(const struct signer_key *provider, uint64_t number, uint64_t sequence,
                         uint64_t issued_at, struct buffer *out)
{
	struct registration r;
	struct endpoint_descriptor endpoints[HARNESS_ENDPOINTS];
	struct buffer text;
	struct note_signature signature;
	int rc;
	memset(&r, 0, sizeof(r));
	memset(endpoints, 0, sizeof(endpoints));
	buffer_init(&text);
	buffer_reset(out);
	snprintf(r.namespace_name, sizeof(r.namespace_name), "%s", HARNESS_NAMESPACE);
	if ((rc = make_id("service", number, 0, r.service_id)) != 0)
		goto cleanup;
	r.service_class = SERVICE_CLASS_MIX_GATEWAY;
	r.provider = *signer_key_verifier(provider);
	r.sequence = sequence;
	r.issued_at = issued_at;
	r.expires = issued_at + 86400;
	for (size_t i = 0; i < HARNESS_ENDPOINTS; i++) {
		if ((rc = make_id("endpoint", number, i, endpoints[i].endpoint_id)) != 0)
			goto cleanup;
		endpoints[i].transport = TRANSPORT_QUIC;
		/* The address changes with the sequence, so a re-registration is a new record. */
		snprintf(endpoints[i].address, sizeof(endpoints[i].address), "198.51.%u.%u:%llu",
		         (unsigned)(number / 250 % 250), (unsigned)(number % 250 + 1),
		         (unsigned long long)(443 + i + 2 * (sequence % 1000)));
		snprintf(endpoints[i].region, sizeof(endpoints[i].region), "%s",
		         i % 2 ? "eu-west" : "us-east");
		endpoints[i].capacity = CAPACITY_MEDIUM;
		endpoints[i].profile = PROFILE_MODERN;
	}
	r.endpoint_count = HARNESS_ENDPOINTS;
	r.endpoints = endpoints;
	registration_sort_endpoints(&r);
	if ((rc = registration_encode(&r, &text)) != 0 ||
	    (rc = signer_key_sign(provider, text.data, text.len, &signature)) != 0)
		goto cleanup;
	rc = note_format(text.data, text.len, &signature, 1, out);
cleanup:
	if (rc != 0)
		harness_fail("building registration %llu: %s", (unsigned long long)number,
		             dirauth_strerror(rc));
	buffer_free(&text);
	return rc;
}

struct build_job {
	const struct signer_key *provider;
	uint64_t first, sequence, issued_at;
	struct buffer *notes;
	size_t from, to;
	int failed;
};

static void *build_worker(void *context)
{
	struct build_job *job = context;
	for (size_t i = job->from; i < job->to && !job->failed; i++)
		if (harness_registration(job->provider, job->first + i, job->sequence, job->issued_at,
		                         &job->notes[i]) != 0)
			job->failed = 1;
	return NULL;
}

int harness_registrations(const struct signer_key *provider, uint64_t first, size_t count, uint64_t sequence,
                          uint64_t issued_at, unsigned threads, struct buffer *notes)
{
	struct build_job jobs[HARNESS_MAX_THREADS];
	pthread_t workers[HARNESS_MAX_THREADS];
	if (threads == 0 || threads > HARNESS_MAX_THREADS)
		threads = 1;
	for (size_t i = 0; i < count; i++)
		buffer_init(&notes[i]);
	uint8_t started[HARNESS_MAX_THREADS] = {0};
	int failed = 0;
	for (unsigned t = 0; t < threads; t++) {
		jobs[t] = (struct build_job){provider,
		                             first,
		                             sequence,
		                             issued_at,
		                             notes,
		                             count * t / threads,
		                             count * (t + 1) / threads,
		                             0};
		if (pthread_create(&workers[t], NULL, build_worker, &jobs[t]) == 0)
			started[t] = 1;
		else
			build_worker(&jobs[t]);
	}
	for (unsigned t = 0; t < threads; t++) {
		if (started[t])
			pthread_join(workers[t], NULL);
		failed |= jobs[t].failed;
	}
	return failed ? -1 : 0;
}

void harness_buffers_free(struct buffer *buffers, size_t count)
{
	for (size_t i = 0; buffers && i < count; i++)
		buffer_free(&buffers[i]);
}

/* --- the POST loop ------------------------------------------------------------------------ */

struct post_load {
	struct harness *harness;
	char url[128];
	const struct buffer *notes;
	struct buffer *receipts;
	uint32_t *latency_us;
	uint8_t *done;
	size_t count;
	double deadline;
	atomic_size_t next;
	atomic_size_t completed;
	atomic_int failed;
	atomic_int timed_out;
	pthread_mutex_t failure_lock;
	char failure[512];
};

static void post_fail(struct post_load *load, const char *format, ...) __attribute__((format(printf, 2, 3)));
static void post_fail(struct post_load *load, const char *format, ...)
{
	pthread_mutex_lock(&load->failure_lock);
	if (!atomic_load(&load->failed)) {
		va_list args;
		va_start(args, format);
		vsnprintf(load->failure, sizeof(load->failure), format, args);
		va_end(args);
		atomic_store(&load->failed, 1);
	}
	pthread_mutex_unlock(&load->failure_lock);
}

static void excerpt(const struct buffer *body, char *out, size_t cap)
{
	size_t n = 0;
	for (size_t i = 0; i < body->len && n + 1 < cap && n < 200; i++)
		out[n++] = body->data[i] >= 0x20 && body->data[i] < 0x7f ? (char)body->data[i] : ' ';
	out[n] = 0;
}

/* One client thread: one curl handle, reused, so the connection is kept alive. */
static void *post_worker(void *context)
{
	struct post_load *load = context;
	CURL *curl = curl_easy_init();
	struct buffer answer;
	buffer_init(&answer);
	if (!curl) {
		post_fail(load, "curl_easy_init failed");
		return NULL;
	}
	struct curl_slist *headers = curl_slist_append(NULL, "Expect:");
	curl_easy_setopt(curl, CURLOPT_URL, load->url);
	curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT, HARNESS_REQUEST_SECONDS);
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(curl, CURLOPT_NOPROXY, "*");
	curl_easy_setopt(curl, CURLOPT_TCP_NODELAY, 1L);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, http_collect);
	for (;;) {
		if (atomic_load(&load->failed) || harness_stopped(load->harness))
			break;
		if (harness_now() >= load->deadline) {
			atomic_store(&load->timed_out, 1);
			break;
		}
		size_t i = atomic_fetch_add(&load->next, 1);
		if (i >= load->count)
			break;
		struct buffer *out = load->receipts ? &load->receipts[i] : &answer;
		buffer_reset(out);
		curl_easy_setopt(curl, CURLOPT_WRITEDATA, out);
		curl_easy_setopt(curl, CURLOPT_POSTFIELDS, (const char *)load->notes[i].data);
		curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)load->notes[i].len);
		double start = harness_now();
		CURLcode rc = curl_easy_perform(curl);
		double end = harness_now();
		long status = 0;
		curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
		if (rc != CURLE_OK) {
			post_fail(load, "registration %zu: %s", i, curl_easy_strerror(rc));
			break;
		}
		if (status != 202) {
			char text[256];
			excerpt(out, text, sizeof(text));
			post_fail(load, "registration %zu answered %ld, not 202: %s", i, status, text);
			break;
		}
		double micros = (end - start) * 1e6;
		load->latency_us[i] = micros > 4e9 ? UINT32_MAX : (uint32_t)micros;
		load->done[i] = 1;
		atomic_fetch_add(&load->completed, 1);
	}
	buffer_free(&answer);
	curl_slist_free_all(headers);
	curl_easy_cleanup(curl);
	return NULL;
}

static int compare_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

static void percentiles(const struct post_load *load, double *p50_ms, double *p99_ms)
{
	*p50_ms = *p99_ms = 0;
	uint32_t *values = malloc((load->count ? load->count : 1) * sizeof(*values));
	if (!values)
		return;
	size_t n = 0;
	for (size_t i = 0; i < load->count; i++)
		if (load->done[i])
			values[n++] = load->latency_us[i];
	if (n > 0) {
		qsort(values, n, sizeof(*values), compare_u32);
		*p50_ms = values[(n - 1) / 2] / 1000.0;
		*p99_ms = values[(n - 1) * 99 / 100] / 1000.0;
	}
	free(values);
}

int harness_post(struct harness_authority *authority, const struct buffer *notes, size_t count,
                 unsigned threads, double seconds, struct buffer *receipts, struct harness_posted *out)
{
	struct post_load *load = calloc(1, sizeof(*load));
	pthread_t workers[HARNESS_MAX_THREADS];
	int rc = -1;
	memset(out, 0, sizeof(*out));
	if (!load)
		return -1;
	load->harness = authority->harness;
	snprintf(load->url, sizeof(load->url), "%s/v1/registrations", authority->url);
	load->notes = notes;
	load->receipts = receipts;
	load->count = count;
	load->latency_us = calloc(count ? count : 1, sizeof(*load->latency_us));
	load->done = calloc(count ? count : 1, 1);
	pthread_mutex_init(&load->failure_lock, NULL);
	if (!load->latency_us || !load->done) {
		harness_fail("out of memory");
		goto cleanup;
	}
	if (threads > HARNESS_MAX_THREADS)
		threads = HARNESS_MAX_THREADS;
	double start = harness_now();
	load->deadline = start + seconds;
	unsigned started = 0;
	for (; started < threads; started++)
		if (pthread_create(&workers[started], NULL, post_worker, load) != 0) {
			post_fail(load, "pthread_create failed");
			break;
		}
	for (unsigned i = 0; i < started; i++)
		pthread_join(workers[i], NULL);
	out->elapsed = harness_now() - start;
	out->accepted = atomic_load(&load->completed);
	out->timed_out = atomic_load(&load->timed_out);
	percentiles(load, &out->p50_ms, &out->p99_ms);
	if (atomic_load(&load->failed)) {
		harness_fail("%s", load->failure);
		harness_child_log_tail(&authority->dirauthd);
	} else if (harness_stopped(authority->harness)) {
		harness_fail("interrupted");
	} else if (count > 0 && out->accepted == 0) {
		harness_fail("no registration was accepted within %.0f s", seconds);
	} else {
		rc = 0;
	}
cleanup:
	pthread_mutex_destroy(&load->failure_lock);
	free(load->latency_us);
	free(load->done);
	free(load);
	return rc;
}

int harness_check_receipts(const struct harness_authority *authority, const struct buffer *notes,
                           const struct buffer *receipts, size_t count, uint64_t *publish_epoch)
{
	*publish_epoch = 0;
	for (size_t i = 0; i < count; i++) {
		if (receipts[i].len == 0)
			continue;
		struct note *note = NULL;
		struct receipt receipt;
		struct registration r;
		struct note *registration_note = NULL;
		uint8_t digest[32];
		memset(&receipt, 0, sizeof(receipt));
		int rc = note_parse(receipts[i].data, receipts[i].len, &note);
		if (rc == 0)
			rc = note_verify_threshold(note, &authority->verifier, 1, 1);
		if (rc == 0)
			rc = receipt_parse(note->text, note->text_len, &receipt);
		if (rc == 0)
			rc = crypto_sha256(notes[i].data, notes[i].len, digest);
		if (rc == 0)
			rc = registration_parse_note(notes[i].data, notes[i].len, &r, &registration_note);
		if (rc == 0) {
			if (memcmp(digest, receipt.registration_digest, 32) != 0 ||
			    receipt.sequence != r.sequence ||
			    memcmp(receipt.service_id, r.service_id, 32) != 0 ||
			    strcmp(receipt.namespace_name, HARNESS_NAMESPACE) != 0)
				rc = DIRAUTH_ERR_MISMATCH;
			registration_clear(&r);
			note_free(registration_note);
		}
		note_free(note);
		if (rc != 0) {
			harness_fail("receipt of registration %zu: %s", i, dirauth_strerror(rc));
			return -1;
		}
		if (receipt.publish_by_epoch > *publish_epoch)
			*publish_epoch = receipt.publish_by_epoch;
	}
	return 0;
}

#define HARNESS_CHUNK            100000
#define HARNESS_CHECKED_RECEIPTS 1000

int harness_register(struct harness_authority *authority, uint64_t first, size_t count, uint64_t sequence,
                     unsigned threads, uint64_t *publish_epoch)
{
	size_t cap = count < HARNESS_CHUNK ? count : HARNESS_CHUNK;
	struct buffer *notes = calloc(cap ? cap : 1, sizeof(*notes));
	struct buffer *receipts = calloc(cap ? cap : 1, sizeof(*receipts));
	int rc = notes && receipts ? 0 : -1;
	*publish_epoch = 0;
	for (size_t done = 0; rc == 0 && done < count;) {
		size_t n = count - done < cap ? count - done : cap;
		struct harness_posted posted;
		uint64_t epoch = 0;
		rc = harness_registrations(authority->provider, first + done, n, sequence, authority->now, 2,
		                           notes);
		if (rc == 0)
			rc = harness_post(authority, notes, n, threads, 3600, receipts, &posted);
		if (rc == 0 && posted.accepted != n) {
			harness_fail("%zu of %zu registrations were accepted", posted.accepted, n);
			rc = -1;
		}
		if (rc == 0)
			rc = harness_check_receipts(
			    authority, notes, receipts,
			    n < HARNESS_CHECKED_RECEIPTS ? n : HARNESS_CHECKED_RECEIPTS, &epoch);
		if (epoch > *publish_epoch)
			*publish_epoch = epoch;
		harness_buffers_free(notes, n);
		harness_buffers_free(receipts, n);
		done += n;
	}
	free(notes);
	free(receipts);
	return rc;
}

int harness_reset_peak_rss(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/clear_refs", (int)pid);
	FILE *file = fopen(path, "w");
	int written = file && fputs("5", file) != EOF;
	if (file && fclose(file) != 0)
		written = 0;
	if (!written) {
		harness_fail("cannot reset the peak RSS of process %d", (int)pid);
		return -1;
	}
	return 0;
}

int harness_wait_snapshot(struct harness_authority *authority, uint64_t epoch, size_t records, double seconds,
                          struct snapshot_header *header)
{
	char url[128];
	snprintf(url, sizeof(url), "%s/v1/%s/snapshots/latest", authority->url, HARNESS_NAMESPACE);
	CURL *curl = curl_easy_init();
	if (!curl)
		return -1;
	struct buffer body;
	buffer_init(&body);
	curl_easy_setopt(curl, CURLOPT_URL, url);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, http_collect);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, &body);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT, 10L);
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(curl, CURLOPT_NOPROXY, "*");
	double deadline = harness_now() + seconds;
	int rc = -1;
	while (harness_now() < deadline && !harness_stopped(authority->harness) &&
	       harness_child_running(&authority->dirauthd)) {
		long status = 0;
		buffer_reset(&body);
		if (curl_easy_perform(curl) == CURLE_OK &&
		    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status) == CURLE_OK && status == 200) {
			struct note *note = NULL;
			int parsed = note_parse(body.data, body.len, &note);
			if (parsed == 0)
				parsed = note_verify_threshold(note, &authority->verifier, 1, 1);
			if (parsed == 0)
				parsed = snapshot_header_parse(note->text, note->text_len, header);
			note_free(note);
			if (parsed != 0) {
				harness_fail("latest snapshot header: %s", dirauth_strerror(parsed));
				break;
			}
			if (header->epoch >= epoch) {
				if (records != SIZE_MAX && header->record_count != records) {
					harness_fail("snapshot %llu holds %llu records, %zu were expected",
					             (unsigned long long)header->epoch,
					             (unsigned long long)header->record_count, records);
					break;
				}
				rc = 0;
				break;
			}
		}
		harness_sleep_ms(5);
	}
	buffer_free(&body);
	curl_easy_cleanup(curl);
	if (rc != 0 && !harness_stopped(authority->harness)) {
		harness_fail("no verified snapshot of epoch %llu", (unsigned long long)epoch);
		harness_child_log_tail(&authority->dirauthd);
	}
	return rc;
}

int harness_body_file(const struct harness_authority *authority, uint64_t epoch, const char *encoding,
                      char out[PATH_MAX])
{
	int n = snprintf(out, PATH_MAX, "%s/bodies/%s/%llu.%s", authority->data_dir, HARNESS_NAMESPACE,
	                 (unsigned long long)epoch, encoding);
	if (n < 0 || n >= PATH_MAX || access(out, R_OK) != 0) {
		harness_fail("no body file %s", out);
		return -1;
	}
	return 0;
}

/* --- nginx and wrk ------------------------------------------------------------------------ */

void harness_nginx_root(const struct harness_nginx *nginx, char out[PATH_MAX])
{
	snprintf(out, PATH_MAX, "%s/www", nginx->dir);
}

int harness_nginx_start(struct harness *harness, const char *nginx, struct harness_nginx *out,
                        const char *locations)
{
	char path[PATH_MAX + 64];
	struct buffer config;
	buffer_init(&config);
	int rc = -1;
	memset(out, 0, sizeof(*out));
	out->port = test_ports_reserve();
	if (out->port == 0 || harness_make_temp_dir(harness->temp_parent, "nginx", out->dir) != 0)
		goto cleanup;
	snprintf(path, sizeof(path), "%s/www", out->dir);
	if (chmod(out->dir, 0755) != 0 || mkdir(path, 0755) != 0) {
		harness_fail("%s: %s", path, strerror(errno));
		goto cleanup;
	}
	if (buffer_appendf(&config, "# dirauth benchmark: the static-file anchor, on loopback only.\n"
	                            "daemon off;\n"
	                            "master_process on;\n"
	                            "worker_processes auto;\n") != 0 ||
	    test_nginx_user(&config) != 0 ||
	    buffer_appendf(&config,
	                   "pid %s/nginx.pid;\n"
	                   "error_log %s/error.log warn;\n"
	                   "events { worker_connections 1024; }\n"
	                   "http {\n"
	                   "\taccess_log off;\n"
	                   "\tdefault_type application/octet-stream;\n"
	                   "\tsendfile on;\n"
	                   "\ttcp_nopush on;\n"
	                   "\tkeepalive_timeout 60s;\n"
	                   "\tkeepalive_requests 100000000;\n",
	                   out->dir, out->dir) != 0 ||
	    test_nginx_temp_paths(nginx, out->dir, &config) != 0 ||
	    buffer_appendf(&config,
	                   "\tserver {\n"
	                   "\t\tlisten 127.0.0.1:%u;\n"
	                   "\t\troot %s/www;\n"
	                   "%s"
	                   "\t}\n"
	                   "}\n",
	                   out->port, out->dir, locations ? locations : "") != 0)
		goto cleanup;
	snprintf(path, sizeof(path), "%s/nginx.conf", out->dir);
	if (harness_write_file(path, config.data, config.len, 0644) != 0)
		goto cleanup;
	snprintf(out->child.log_path, sizeof(out->child.log_path), "%s/nginx.log", out->dir);
	char error_log[PATH_MAX], prefix[PATH_MAX], program[PATH_MAX];
	snprintf(error_log, sizeof(error_log), "%s/error.log", out->dir);
	snprintf(prefix, sizeof(prefix), "%s/", out->dir);
	snprintf(program, sizeof(program), "%s", nginx);
	char *argv[] = {program, "-p", prefix, "-e", error_log, "-c", path, NULL};
	if (harness_child_spawn(&out->child, argv) != 0)
		goto cleanup;
	/* The server answers 404 for / (no index): wait for any answer. */
	double deadline = harness_now() + HARNESS_STARTUP_SECONDS;
	char url[64];
	snprintf(url, sizeof(url), "http://127.0.0.1:%u/", out->port);
	struct buffer body;
	buffer_init(&body);
	while (harness_now() < deadline && !harness_stopped(harness) && harness_child_running(&out->child)) {
		long status = 0;
		if (harness_http(url, NULL, NULL, &status, &body, NULL, 0) == 0 && status > 0) {
			rc = 0;
			break;
		}
		harness_sleep_ms(20);
	}
	buffer_free(&body);
	if (rc != 0) {
		harness_fail("nginx did not answer on %s", url);
		struct harness_child errors = {0};
		snprintf(errors.log_path, sizeof(errors.log_path), "%s", error_log);
		harness_child_log_tail(&errors);
	}
cleanup:
	buffer_free(&config);
	return rc;
}

void harness_nginx_stop(struct harness_nginx *nginx)
{
	harness_child_stop(&nginx->child);
	if (nginx->dir[0])
		harness_remove_tree(nginx->dir);
	nginx->dir[0] = 0;
}

/* "12.34MB" as wrk prints sizes (1024-based units). */
static double wrk_size(const char *text)
{
	char *end = NULL;
	double value = strtod(text, &end);
	if (!end)
		return 0;
	switch (*end) {
	case 'K':
		return value * 1024;
	case 'M':
		return value * 1024 * 1024;
	case 'G':
		return value * 1024 * 1024 * 1024;
	case 'T':
		return value * 1024.0 * 1024 * 1024 * 1024;
	default:
		return value;
	}
}

int harness_require_wrk(const char *bench, char wrk[PATH_MAX])
{
	if (wrk[0] || harness_find_program("wrk", wrk) == 0)
		return 0;
	printf("%s: wrk is not installed (Debian: wrk): skipped\n", bench);
	return 77;
}

void harness_print_anchor_head(int name_width)
{
	printf("%-*s %10s %14s %14s %8s %12s %12s  %s\n", name_width, "target", "bytes", "dirauthd /s",
	       "nginx /s", "ratio", "dirauthd MB/s", "nginx MB/s", "load average");
}

void harness_print_anchor_row(int name_width, const char *name, size_t bytes,
                              const struct harness_wrk_result *dirauthd,
                              const struct harness_wrk_result *nginx, const char *load)
{
	char nginx_rate[32] = "skipped", ratio[32] = "", nginx_bytes[32] = "";
	if (nginx) {
		snprintf(nginx_rate, sizeof(nginx_rate), "%.1f", nginx->requests_per_second);
		snprintf(ratio, sizeof(ratio), "%.3f",
		         dirauthd->requests_per_second / nginx->requests_per_second);
		snprintf(nginx_bytes, sizeof(nginx_bytes), "%.1f", nginx->bytes_per_second / 1e6);
	}
	printf("%-*s %10zu %14.1f %14s %8s %12.1f %12s  %s\n", name_width, name, bytes,
	       dirauthd->requests_per_second, nginx_rate, ratio, dirauthd->bytes_per_second / 1e6,
	       nginx_bytes, load);
}

int harness_wrk_read(const char *output, struct harness_wrk_result *out)
{
	FILE *file = fopen(output, "r");
	int have_rate = 0;
	if (!file)
		return 0;
	char line[512];
	while (fgets(line, sizeof(line), file)) {
		unsigned long long n = 0, connect = 0, read = 0, write = 0, timeout = 0;
		char size[64];
		double elapsed = 0;
		if (sscanf(line, " %llu requests in %lfs, %63s read", &n, &elapsed, size) == 3)
			out->requests = n;
		else if (sscanf(line, "Requests/sec: %lf", &out->requests_per_second) == 1)
			have_rate = 1;
		else if (sscanf(line, "Transfer/sec: %63s", size) == 1)
			out->bytes_per_second = wrk_size(size);
		else if (sscanf(line, " Socket errors: connect %llu, read %llu, write %llu, timeout %llu",
		                &connect, &read, &write, &timeout) == 4)
			out->errors += connect + read + write + timeout;
		else if (sscanf(line, " Non-2xx or 3xx responses: %llu", &n) == 1)
			out->errors += n;
	}
	fclose(file);
	return have_rate;
}

int harness_wrk(struct harness *harness, const char *wrk, const char *url, const char *header,
                unsigned threads, unsigned connections, unsigned seconds, struct harness_wrk_result *out)
{
	char dir[HARNESS_DIR_MAX], output[PATH_MAX], threads_text[16], connections_text[16], duration[16];
	char program[PATH_MAX], header_text[256];
	memset(out, 0, sizeof(*out));
	if (harness_make_temp_dir(harness->temp_parent, "wrk", dir) != 0)
		return -1;
	snprintf(output, sizeof(output), "%s/wrk.txt", dir);
	snprintf(program, sizeof(program), "%s", wrk);
	snprintf(threads_text, sizeof(threads_text), "%u", threads);
	snprintf(connections_text, sizeof(connections_text), "%u", connections);
	snprintf(duration, sizeof(duration), "%us", seconds);
	snprintf(header_text, sizeof(header_text), "%s", header ? header : "");
	char url_text[512];
	snprintf(url_text, sizeof(url_text), "%s", url);
	char *argv[] = {program,
	                "-t",
	                threads_text,
	                "-c",
	                connections_text,
	                "-d",
	                duration,
	                "--timeout",
	                "10s",
	                header ? "-H" : url_text,
	                header ? header_text : NULL,
	                header ? url_text : NULL,
	                NULL};
	struct harness_usage usage;
	int rc = harness_run(harness, argv, NULL, output, seconds + 30.0, &usage);
	int have_rate = rc == 0 && harness_wrk_read(output, out);
	if (rc == 0)
		out->client_cpu = usage.user + usage.system;
	harness_remove_tree(dir);
	if (rc == 0 && !have_rate) {
		harness_fail("wrk printed no rate for %s", url);
		rc = -1;
	}
	if (rc == 0 && out->errors) {
		harness_fail("wrk on %s: %llu errors or non-2xx answers", url,
		             (unsigned long long)out->errors);
		rc = -1;
	}
	return rc;
}

/* --- options ------------------------------------------------------------------------------ */

int harness_parse_count(const char *text, size_t low, size_t high, size_t *out)
{
	char *end = NULL;
	errno = 0;
	unsigned long long value = strtoull(text, &end, 10);
	if (errno || end == text || *end || text[0] == '-' || value < low || value > high)
		return -1;
	*out = (size_t)value;
	return 0;
}

int harness_parse_seconds(const char *text, double *out)
{
	char *end = NULL;
	errno = 0;
	double value = strtod(text, &end);
	if (errno || end == text || *end || !(value > 0 && value <= 36000))
		return -1;
	*out = value;
	return 0;
}

int harness_raise_descriptor_limit(size_t needed)
{
	struct rlimit limit;
	if (getrlimit(RLIMIT_NOFILE, &limit) != 0) {
		harness_fail("getrlimit(RLIMIT_NOFILE): %s", strerror(errno));
		return -1;
	}
	if (limit.rlim_cur == RLIM_INFINITY || limit.rlim_cur >= (rlim_t)needed)
		return 0;
	if (limit.rlim_max != RLIM_INFINITY && limit.rlim_max < (rlim_t)needed) {
		harness_fail(
		    "the run needs %zu file descriptors and the hard limit is %llu: raise it (as root: "
		    "ulimit -Hn %zu, LimitNOFILE= in a unit, or nofile in /etc/security/limits.conf) "
		    "or run with fewer connections",
		    needed, (unsigned long long)limit.rlim_max, needed);
		return -1;
	}
	limit.rlim_cur = (rlim_t)needed;
	if (setrlimit(RLIMIT_NOFILE, &limit) != 0) {
		harness_fail("setrlimit(RLIMIT_NOFILE, %zu): %s", needed, strerror(errno));
		return -1;
	}
	return 0;
}

void harness_default_program(const char *relative, char out[PATH_MAX])
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	snprintf(out, PATH_MAX, "%s", relative);
	if (n <= 0)
		return;
	self[n] = 0;
	for (int up = 0; up < 2; up++) {
		char *slash = strrchr(self, '/');
		if (!slash)
			return;
		*slash = 0;
	}
	size_t len = strlen(self), relative_len = strlen(relative);
	if (len + 1 + relative_len < PATH_MAX) {
		memcpy(out, self, len);
		out[len] = '/';
		memcpy(out + len + 1, relative, relative_len + 1);
	}
}

const char *harness_filesystem_note(const char *path)
{
	struct statfs fs;
	if (statfs(path, &fs) != 0)
		return "an unknown file system";
	if ((long)fs.f_type == HARNESS_TMPFS_MAGIC)
		return "tmpfs (fsync costs nothing: the durable rate is an upper bound)";
	return "a disk file system";
}

int harness_program_option(const struct harness_program_options *options, const char *name, const char *value,
                           int *ok)
{
	const struct {
		const char *name;
		char *out;
	} paths[] = {{"--dirauthd", options->dirauthd},
	             {"--signer", options->signer},
	             {"--nginx", options->nginx},
	             {"--wrk", options->wrk}};
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		if (!paths[i].out || strcmp(name, paths[i].name) != 0)
			continue;
		*ok = strlen(value) < PATH_MAX;
		snprintf(paths[i].out, PATH_MAX, "%s", value);
		return 1;
	}
	if (options->temp_parent && strcmp(name, "--temp-dir") == 0) {
		*options->temp_parent = value;
		*ok = 1;
		return 1;
	}
	return 0;
}

void harness_program_defaults(const struct harness_program_options *options)
{
	if (options->dirauthd)
		harness_default_program("server/dirauthd", options->dirauthd);
	if (options->signer)
		harness_default_program("signer/dirauth-signer", options->signer);
}

static const struct harness_option *option_find(const struct harness_option *options, size_t count,
                                                const char *name)
{
	for (size_t i = 0; i < count; i++)
		if (strcmp(options[i].name, name) == 0)
			return &options[i];
	return NULL;
}

/* Stores value by option's kind (one that takes a value); 1 when it is good, 0 when it is bad. */
static int option_take(const struct harness_option *option, const char *value)
{
	size_t number = 0;
	switch (option->kind) {
	case HARNESS_KIND_COUNT:
		return harness_parse_count(value, option->low, option->high, option->out.count) == 0;
	case HARNESS_KIND_UNSIGNED:
		if (harness_parse_count(value, option->low, option->high, &number) != 0 || number > UINT_MAX)
			return 0;
		*option->out.number = (unsigned)number;
		return 1;
	case HARNESS_KIND_SECONDS:
		return harness_parse_seconds(value, option->out.seconds) == 0;
	case HARNESS_KIND_TEXT:
		*option->out.text = value;
		return 1;
	case HARNESS_KIND_CALL:
		return option->call(option->out.context, value) == 0;
	case HARNESS_KIND_FLAG:
	case HARNESS_KIND_ACTION:
		break;
	}
	return 0;
}

int harness_parse_options(const char *bench, int argc, char **argv, const struct harness_option *options,
                          size_t count, const struct harness_program_options *programs,
                          void (*usage)(FILE *out))
{
	for (int i = 1; i < argc; i++) {
		const char *name = argv[i];
		const char *value = i + 1 < argc ? argv[i + 1] : NULL;
		const struct harness_option *option = option_find(options, count, name);
		int ok = 0;
		if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
			usage(stdout);
			exit(0);
		} else if (option && option->kind == HARNESS_KIND_FLAG) {
			*option->out.flag = 1;
			continue;
		} else if (option && option->kind == HARNESS_KIND_ACTION) {
			option->call(option->out.context, NULL);
			continue;
		} else if (!value) {
			ok = 0;
		} else if (programs && harness_program_option(programs, name, value, &ok)) {
			/* a program, or the temporary directories */
		} else if (option) {
			ok = option_take(option, value);
		}
		if (!ok) {
			fprintf(stderr, "%s: bad option %s%s%s\n", bench, name, value ? " " : "",
			        value ? value : "");
			usage(stderr);
			return -1;
		}
		i++;
	}
	return 0;
}

int harness_programs_check(const char *bench, const char *dirauthd, const char *signer)
{
	if (access(dirauthd, X_OK) == 0 && access(signer, X_OK) == 0)
		return 0;
	fprintf(stderr,
	        "%s: no dirauthd at %s or no dirauth-signer at %s (build them, or pass --dirauthd and "
	        "--signer)\n",
	        bench, dirauthd, signer);
	return -1;
}

int harness_record_order(const void *a, const void *b)
{
	return memcmp(((const struct snapshot_record *)a)->service_id,
	              ((const struct snapshot_record *)b)->service_id, SERVICE_ID_SIZE);
}

int harness_service_id_of(const struct buffer *note, uint8_t out[SERVICE_ID_SIZE])
{
	const char *line = strstr((const char *)note->data, "\nservice ");
	if (!line || (size_t)(line - (const char *)note->data) + 9 + 2 * SERVICE_ID_SIZE > note->len)
		return DIRAUTH_ERR_SYNTAX;
	return hex_decode(line + 9, 2 * SERVICE_ID_SIZE, out, SERVICE_ID_SIZE);
}
