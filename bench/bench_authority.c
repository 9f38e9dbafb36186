/*
 * bench_authority.c: how fast one dirauthd takes durable registrations and serves snapshot bodies,
 * each figure printed next to an anchor measured on the same machine in the same run.
 *
 * Absolute rates mean little across machines, so every figure comes with something to divide it
 * by. A registration costs the authority at least one Ed25519 verification (the provider's
 * signature), one signature (the receipt) and a share of an fsync'd LMDB commit, so the anchor of
 * the write path is this machine's single-thread Ed25519 verify rate, measured first with
 * crypto_ed25519_verify() on a fixed signed message. The read path serves bytes that were
 * compressed once per epoch, so its anchor is nginx serving the very same bytes as a static file
 * on loopback, when nginx is installed.
 *
 * The run, every step bounded in count and time:
 *   1. the verify-rate anchor (about two seconds, the fastest of eight windows);
 *   2. the real dirauth-signer binary (the example signing key through scripts/example-keys.sh, a
 *      certificate for it issued here by the example identity key, a fresh ledger), then the real
 *      dirauthd binary, on a free 127.0.0.1 port with a fresh data directory and a file clock
 *      shared with the signer; every receipt and header is signed over the signer's socket, so
 *      the write rate includes that round trip and the signer's audit line;
 *   3. N signed registrations of distinct services, built before the clock starts so that
 *      signing is not measured, POSTed by M threads over keep-alive connections (one reused curl
 *      handle per thread); only a 202 counts, anything else stops the run with an error, and
 *      every receipt is checked (authority signature, digest of the registration) afterwards;
 *   4. the clock file moves to the promised epoch; the snapshot that appears must hold every
 *      accepted registration, and its zstd body is fetched once, decompressed and verified;
 *   5. M threads GET that body (Accept-Encoding: zstd, keep-alive) from dirauthd, then the same
 *      bytes from a temporary nginx (a non-daemon child with its own config in a temp dir).
 * It prints a table of figure, value, anchor and ratio, stops its children and removes its
 * temporary directories, also when interrupted. It is built with the project and never run by
 * ctest: scripts/bench.sh runs it.
 */
#include "schema/buffer.h"
#include "schema/certificate.h"
#include "schema/compress.h"
#include "schema/crypto.h"
#include "schema/error.h"
#include "signer/key.h"
#include "schema/note.h"
#include "schema/receipt.h"
#include "schema/registration.h"
#include "schema/snapshot.h"

#include <curl/curl.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <netinet/in.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BENCH_EPOCH_LENGTH     60
#define BENCH_START_TIME       1800000000ULL /* a multiple of the epoch length */
#define BENCH_NAMESPACE        "mix"
#define BENCH_ENDPOINTS        2 /* endpoints per registered service */
#define BENCH_MAX_THREADS      256
#define BENCH_MAX_COUNT        1000000
#define BENCH_TMPFS_MAGIC      0x01021994L
#define BENCH_DEFAULT_PER_IP   64 /* dirauthd's default http.max_connections_per_ip */
#define BENCH_STARTUP_SECONDS  15.0
#define BENCH_SNAPSHOT_SECONDS 300.0
#define BENCH_REQUEST_SECONDS  60L
#define BENCH_VERIFY_WINDOWS   8
#define BENCH_DIR_MAX          1024 /* temporary directories; files in them fit PATH_MAX */

struct bench_options {
	char dirauthd[PATH_MAX];
	char signer[PATH_MAX];
	char nginx[PATH_MAX]; /* empty: look for it */
	int nginx_disabled;
	const char *temp_parent;
	size_t registrations;
	unsigned threads;
	size_t gets;
	double verify_seconds;
	double post_seconds;
	double get_seconds;
};

/* A child process and the file its output goes to. */
struct bench_child {
	pid_t pid;
	char log_path[PATH_MAX];
};

/* Everything main builds and the phases share. */
struct bench {
	struct bench_options options;
	sigset_t signals;              /* blocked in every thread; the watcher takes them */
	atomic_int interrupted;        /* SIGINT, SIGTERM or SIGHUP arrived */
	char dir[BENCH_DIR_MAX];       /* temporary directory: keys, config, clock, data, log */
	char nginx_dir[BENCH_DIR_MAX]; /* temporary directory of the nginx anchor (empty if none) */
	char config_path[PATH_MAX];
	char signer_config_path[PATH_MAX];
	char socket_path[PATH_MAX];
	char clock_path[PATH_MAX];
	char url[64];
	struct bench_child signer;
	struct bench_child dirauthd;
	struct bench_child nginx;
	struct signer_key *provider;
	struct note_verifier authority;
};

/* One measured GET loop or POST loop. */
struct bench_load {
	struct bench *bench;
	const char *url;
	/* POST: the bodies, one request each; GET: NULL, count requests of url. */
	const struct buffer *bodies;
	struct buffer *answers; /* POST: the receipt of request i */
	uint8_t *done;          /* request i got its expected answer */
	uint32_t *latency_us;   /* of request i */
	size_t count;
	long expected_status;
	size_t expected_len; /* GET: body length every answer must have */
	double deadline;     /* monotonic seconds */
	atomic_size_t next;
	atomic_size_t completed;
	atomic_uint_fast64_t bytes;
	atomic_int failed;
	pthread_mutex_t failure_lock;
	char failure[512];
	double elapsed;
	atomic_int timed_out;
};

struct bench_figures {
	double verify_rate;
	size_t accepted;
	double registration_rate;
	double registration_p50_ms, registration_p99_ms;
	double publish_seconds;
	size_t body_zstd_len, body_len;
	double get_rate, get_bytes_rate, get_p50_ms, get_p99_ms;
	size_t get_completed;
	int nginx_measured;
	double nginx_rate, nginx_bytes_rate, nginx_p50_ms, nginx_p99_ms;
	size_t nginx_completed;
	const char *nginx_skipped; /* why, when not measured */
};

static double now_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static void fail(const char *format, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *format, ...)
{
	va_list args;
	va_start(args, format);
	fputs("bench: ", stderr);
	vfprintf(stderr, format, args);
	fputc('\n', stderr);
	va_end(args);
}

static int bench_stopped(struct bench *bench)
{
	return atomic_load(&bench->interrupted);
}

/* The watcher owns the termination signals, so that an interrupted run still stops its children
 * and removes its directories: it only raises a flag that every loop polls. SIGUSR1 from main
 * ends it. */
static void *bench_signal_watch(void *context)
{
	struct bench *bench = context;
	for (;;) {
		int signal_number = 0;
		if (sigwait(&bench->signals, &signal_number) != 0)
			continue;
		if (signal_number == SIGUSR1)
			return NULL;
		atomic_store(&bench->interrupted, 1);
	}
}

static int write_file(const char *path, const void *data, size_t len, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
	if (fd < 0) {
		fail("%s: %s", path, strerror(errno));
		return -1;
	}
	const uint8_t *bytes = data;
	size_t written = 0;
	while (written < len) {
		ssize_t n = write(fd, bytes + written, len - written);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			fail("%s: %s", path, strerror(errno));
			close(fd);
			return -1;
		}
		written += (size_t)n;
	}
	if (close(fd) != 0) {
		fail("%s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* Removes a tree without following symbolic links. Best effort: it runs during cleanup. */
static void remove_tree(const char *path)
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
					remove_tree(child);
			}
			closedir(dir);
		}
		rmdir(path);
	} else {
		unlink(path);
	}
}

static int make_temp_dir(const char *parent, const char *label, char out[BENCH_DIR_MAX])
{
	int n = snprintf(out, BENCH_DIR_MAX, "%s/dirauth-bench-%s.XXXXXX", parent, label);
	if (n < 0 || n >= BENCH_DIR_MAX || mkdtemp(out) == NULL) {
		fail("cannot create a temporary directory in %s: %s", parent, strerror(errno));
		out[0] = 0;
		return -1;
	}
	return 0;
}

static unsigned free_port(void)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return 0;
	struct sockaddr_in addr;
	memset(&addr, 0, sizeof(addr));
	addr.sin_family = AF_INET;
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t len = sizeof(addr);
	unsigned port = 0;
	if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) == 0 &&
	    getsockname(fd, (struct sockaddr *)&addr, &len) == 0)
		port = ntohs(addr.sin_port);
	close(fd);
	return port;
}

/* Starts argv[0] with its output appended to child->log_path. The child gets a clean signal
 * mask and dies with SIGTERM if the benchmark dies first, so nothing outlives a crash. */
static int child_spawn(struct bench_child *child, char *const argv[])
{
	pid_t parent = getpid();
	int log_fd = open(child->log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (log_fd < 0) {
		fail("%s: %s", child->log_path, strerror(errno));
		return -1;
	}
	pid_t pid = fork();
	if (pid < 0) {
		fail("fork: %s", strerror(errno));
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

/* 1 while the child runs, 0 once it has exited (and is reaped). */
static int child_running(struct bench_child *child)
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

/* SIGTERM, up to ten seconds to exit, then SIGKILL. */
static void child_stop(struct bench_child *child)
{
	if (child->pid <= 0)
		return;
	kill(child->pid, SIGTERM);
	for (int waited = 0; waited < 1000; waited++) {
		if (!child_running(child))
			return;
		sleep_ms(10);
	}
	kill(child->pid, SIGKILL);
	while (waitpid(child->pid, NULL, 0) < 0 && errno == EINTR)
		;
	child->pid = 0;
}

/* Prints the end of a child's log, for a failure message. */
static void child_log_tail(const struct bench_child *child)
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

/* --- HTTP ------------------------------------------------------------------------------- */

static size_t http_collect(char *data, size_t size, size_t count, void *context)
{
	if (buffer_append(context, data, size * count) != 0)
		return 0;
	return size * count;
}

static size_t http_discard(char *data, size_t size, size_t count, void *context)
{
	(void)data;
	*(size_t *)context += size * count;
	return size * count;
}

/* Notes whether the answer says Content-Encoding: zstd. */
static size_t http_header_zstd(char *data, size_t size, size_t count, void *context)
{
	static const char name[] = "content-encoding:";
	size_t len = size * count;
	if (len >= sizeof(name) - 1 && strncasecmp(data, name, sizeof(name) - 1) == 0) {
		size_t i = sizeof(name) - 1;
		while (i < len && data[i] == ' ')
			i++;
		if (len - i >= 4 && strncasecmp(data + i, "zstd", 4) == 0)
			*(int *)context = 1;
	}
	return len;
}

/* One request on a fresh handle, for setup and checks (not measured). */
static int http_simple(const char *url, const char *header, long *status, struct buffer *body, int *zstd)
{
	CURL *curl = curl_easy_init();
	if (!curl)
		return -1;
	struct curl_slist *headers = NULL;
	if (header)
		headers = curl_slist_append(headers, header);
	buffer_reset(body);
	*status = 0;
	curl_easy_setopt(curl, CURLOPT_URL, url);
	curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, http_collect);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, body);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT, BENCH_REQUEST_SECONDS);
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(curl, CURLOPT_NOPROXY, "*");
	if (zstd) {
		*zstd = 0;
		curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, http_header_zstd);
		curl_easy_setopt(curl, CURLOPT_HEADERDATA, zstd);
	}
	CURLcode rc = curl_easy_perform(curl);
	curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, status);
	curl_slist_free_all(headers);
	curl_easy_cleanup(curl);
	return rc == CURLE_OK ? 0 : -1;
}

/* Polls url until it answers 200 or the child dies or the time is up. */
static int wait_for_http(struct bench *bench, struct bench_child *child, const char *url, const char *what)
{
	struct buffer body;
	buffer_init(&body);
	double deadline = now_seconds() + BENCH_STARTUP_SECONDS;
	int rc = -1;
	while (now_seconds() < deadline && !bench_stopped(bench)) {
		long status = 0;
		if (http_simple(url, NULL, &status, &body, NULL) == 0 && status == 200) {
			rc = 0;
			break;
		}
		if (!child_running(child)) {
			fail("%s exited during startup", what);
			break;
		}
		sleep_ms(20);
	}
	buffer_free(&body);
	if (rc != 0) {
		if (!bench_stopped(bench))
			fail("%s did not answer on %s", what, url);
		child_log_tail(child);
	}
	return rc;
}

/* --- the load loops ------------------------------------------------------------------------ */

static void load_fail(struct bench_load *load, const char *format, ...) __attribute__((format(printf, 2, 3)));
static void load_fail(struct bench_load *load, const char *format, ...)
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

/* A printable excerpt of an answer body for an error message. */
static void excerpt(const struct buffer *body, char *out, size_t cap)
{
	size_t n = 0;
	for (size_t i = 0; i < body->len && n + 1 < cap && n < 200; i++)
		out[n++] = body->data[i] >= 0x20 && body->data[i] < 0x7f ? (char)body->data[i] : ' ';
	out[n] = 0;
}

/* One client thread: one curl handle, reused, so the connection is kept alive. Takes the next
 * request index until the count, the deadline, a failure or an interrupt stops it. */
static void *load_worker(void *context)
{
	struct bench_load *load = context;
	CURL *curl = curl_easy_init();
	struct curl_slist *headers = NULL;
	if (!curl) {
		load_fail(load, "curl_easy_init failed");
		return NULL;
	}
	headers = curl_slist_append(headers, "Expect:");
	if (!load->bodies)
		headers = curl_slist_append(headers, "Accept-Encoding: zstd");
	curl_easy_setopt(curl, CURLOPT_URL, load->url);
	curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT, BENCH_REQUEST_SECONDS);
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(curl, CURLOPT_NOPROXY, "*");
	curl_easy_setopt(curl, CURLOPT_TCP_NODELAY, 1L);
	size_t received = 0;
	int zstd = 0;
	if (!load->bodies) {
		curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, http_discard);
		curl_easy_setopt(curl, CURLOPT_WRITEDATA, &received);
		curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, http_header_zstd);
		curl_easy_setopt(curl, CURLOPT_HEADERDATA, &zstd);
	} else {
		curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, http_collect);
	}

	for (;;) {
		if (atomic_load(&load->failed) || bench_stopped(load->bench))
			break;
		if (now_seconds() >= load->deadline) {
			atomic_store(&load->timed_out, 1);
			break;
		}
		size_t i = atomic_fetch_add(&load->next, 1);
		if (i >= load->count)
			break;
		if (load->bodies) {
			buffer_reset(&load->answers[i]);
			curl_easy_setopt(curl, CURLOPT_WRITEDATA, &load->answers[i]);
			curl_easy_setopt(curl, CURLOPT_POSTFIELDS, (const char *)load->bodies[i].data);
			curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)load->bodies[i].len);
		}
		received = 0;
		zstd = 0;
		double start = now_seconds();
		CURLcode rc = curl_easy_perform(curl);
		double end = now_seconds();
		long status = 0;
		curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
		if (rc != CURLE_OK) {
			load_fail(load, "request %zu to %s: %s", i, load->url, curl_easy_strerror(rc));
			break;
		}
		if (status != load->expected_status) {
			char text[256] = "";
			if (load->bodies)
				excerpt(&load->answers[i], text, sizeof(text));
			load_fail(load, "request %zu to %s answered %ld, not %ld: %s", i, load->url, status,
			          load->expected_status, text);
			break;
		}
		if (!load->bodies && (received != load->expected_len || !zstd)) {
			load_fail(load, "GET %s: %zu bytes%s, expected %zu bytes of zstd", load->url,
			          received, zstd ? "" : " without Content-Encoding: zstd",
			          load->expected_len);
			break;
		}
		double micros = (end - start) * 1e6;
		load->latency_us[i] = micros > 4e9 ? UINT32_MAX : (uint32_t)micros;
		load->done[i] = 1;
		atomic_fetch_add(&load->bytes, load->bodies ? load->bodies[i].len : received);
		atomic_fetch_add(&load->completed, 1);
	}
	curl_slist_free_all(headers);
	curl_easy_cleanup(curl);
	return NULL;
}

/* Runs threads workers over the load and measures the wall time from the first request to the
 * last answer. Returns 0 when every started request got its expected answer. */
static int load_run(struct bench_load *load, unsigned threads, double seconds)
{
	pthread_t workers[BENCH_MAX_THREADS];
	unsigned started = 0;
	atomic_store(&load->next, 0);
	atomic_store(&load->completed, 0);
	atomic_store(&load->bytes, 0);
	atomic_store(&load->failed, 0);
	load->failure[0] = 0;
	atomic_store(&load->timed_out, 0);
	double start = now_seconds();
	load->deadline = start + seconds;
	for (; started < threads; started++)
		if (pthread_create(&workers[started], NULL, load_worker, load) != 0) {
			load_fail(load, "pthread_create failed");
			break;
		}
	for (unsigned i = 0; i < started; i++)
		pthread_join(workers[i], NULL);
	load->elapsed = now_seconds() - start;
	if (atomic_load(&load->failed)) {
		fail("%s", load->failure);
		return -1;
	}
	if (bench_stopped(load->bench)) {
		fail("interrupted");
		return -1;
	}
	if (atomic_load(&load->completed) == 0) {
		fail("no request to %s completed within %.0f s", load->url, seconds);
		return -1;
	}
	return 0;
}

static int compare_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

/* Median and 99th percentile, in milliseconds, of the latencies of completed requests. */
static void load_percentiles(const struct bench_load *load, double *p50_ms, double *p99_ms)
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

static int load_init(struct bench_load *load, struct bench *bench, const char *url, size_t count)
{
	memset(load, 0, sizeof(*load));
	load->bench = bench;
	load->url = url;
	load->count = count;
	load->done = calloc(count, 1);
	load->latency_us = calloc(count, sizeof(*load->latency_us));
	pthread_mutex_init(&load->failure_lock, NULL);
	if (!load->done || !load->latency_us) {
		fail("out of memory");
		return -1;
	}
	return 0;
}

static void load_clear(struct bench_load *load)
{
	free(load->done);
	free(load->latency_us);
	pthread_mutex_destroy(&load->failure_lock);
	load->done = NULL;
	load->latency_us = NULL;
}

/* --- the anchor --------------------------------------------------------------------------- */

/* Verifications per second on one thread, of one fixed signature over message: the fastest of
 * BENCH_VERIFY_WINDOWS equal windows within seconds. Other work on the machine can only slow a
 * window down, so the fastest one is the best estimate of what one core does. */
static int measure_verify_rate(const uint8_t *message, size_t len, double seconds, double *rate)
{
	struct signer_key *key = NULL;
	struct note_signature signature;
	int rc = signer_key_generate("bench-anchor.example", &key);
	if (rc == 0)
		rc = signer_key_sign(key, message, len, &signature);
	if (rc != 0) {
		fail("anchor key: %s", dirauth_strerror(rc));
		signer_key_free(key);
		return -1;
	}
	const uint8_t *public_key = signer_key_verifier(key)->public_key;
	*rate = 0;
	for (int window = 0; window < BENCH_VERIFY_WINDOWS; window++) {
		uint64_t count = 0;
		double start = now_seconds(), elapsed = 0;
		do {
			for (int i = 0; i < 16; i++) {
				rc = crypto_ed25519_verify(public_key, message, len, signature.signature);
				if (rc != 0) {
					fail("crypto_ed25519_verify: %s", dirauth_strerror(rc));
					signer_key_free(key);
					return -1;
				}
			}
			count += 16;
			elapsed = now_seconds() - start;
		} while (elapsed < seconds / BENCH_VERIFY_WINDOWS);
		if ((double)count / elapsed > *rate)
			*rate = (double)count / elapsed;
	}
	signer_key_free(key);
	return 0;
}

/* --- the authority ------------------------------------------------------------------------ */

static int set_clock(struct bench *bench, uint64_t now)
{
	char text[32], temp[PATH_MAX + 8];
	int n = snprintf(text, sizeof(text), "%llu\n", (unsigned long long)now);
	snprintf(temp, sizeof(temp), "%s.tmp", bench->clock_path);
	if (write_file(temp, text, (size_t)n, 0644) != 0)
		return -1;
	if (rename(temp, bench->clock_path) != 0) {
		fail("rename %s: %s", temp, strerror(errno));
		return -1;
	}
	return 0;
}

static int load_key(const char *dir, const char *file, struct signer_key **out)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/keys/%s", dir, file);
	int rc = signer_key_load(path, out);
	if (rc != 0) {
		fail("%s: %s", path, dirauth_strerror(rc));
		return -1;
	}
	return 0;
}

/* Keys, configuration and clock in bench->dir; the daemon is not started. */
static int authority_prepare(struct bench *bench)
{
	char command[PATH_MAX * 2 + 64];
	snprintf(command, sizeof(command), "sh '%s/scripts/example-keys.sh' '%s/keys' >/dev/null",
	         DIRAUTH_SOURCE_DIR, bench->dir);
	if (system(command) != 0) {
		fail("scripts/example-keys.sh failed");
		return -1;
	}
	struct signer_key *authority = NULL, *identity = NULL;
	if (load_key(bench->dir, "authority1.key", &authority) != 0 ||
	    load_key(bench->dir, "authority1-identity.key", &identity) != 0 ||
	    load_key(bench->dir, "provider-a.key", &bench->provider) != 0) {
		signer_key_free(authority);
		signer_key_free(identity);
		return -1;
	}
	bench->authority = *signer_key_verifier(authority);
	/* The identity key certifies the signing key around the bench's clock. */
	struct certificate certificate;
	struct buffer text, note;
	struct note_signature signature;
	memset(&certificate, 0, sizeof(certificate));
	snprintf(certificate.authority, sizeof(certificate.authority), "%s", bench->authority.name);
	certificate.identity = *signer_key_verifier(identity);
	certificate.signing_key = bench->authority;
	certificate.valid_after = BENCH_START_TIME - 86400;
	certificate.valid_until = BENCH_START_TIME + 30 * 86400;
	buffer_init(&text);
	buffer_init(&note);
	char certificate_path[PATH_MAX];
	snprintf(certificate_path, sizeof(certificate_path), "%s/keys/authority1.cert", bench->dir);
	int issued = certificate_encode(&certificate, &text) == 0 &&
	             signer_key_sign(identity, text.data, text.len, &signature) == 0 &&
	             note_format(text.data, text.len, &signature, 1, &note) == 0 &&
	             write_file(certificate_path, note.data, note.len, 0644) == 0;
	buffer_free(&text);
	buffer_free(&note);
	signer_key_free(authority);
	signer_key_free(identity);
	if (!issued) {
		fail("cannot issue the signing key's certificate");
		return -1;
	}
	char provider[NOTE_VERIFIER_KEY_MAX + 1];
	note_verifier_format(signer_key_verifier(bench->provider), provider);

	unsigned port = free_port();
	if (port == 0) {
		fail("no free port on 127.0.0.1");
		return -1;
	}
	snprintf(bench->url, sizeof(bench->url), "http://127.0.0.1:%u", port);
	snprintf(bench->clock_path, sizeof(bench->clock_path), "%s/clock", bench->dir);
	snprintf(bench->config_path, sizeof(bench->config_path), "%s/dirauthd.yaml", bench->dir);
	snprintf(bench->dirauthd.log_path, sizeof(bench->dirauthd.log_path), "%s/dirauthd.log", bench->dir);
	snprintf(bench->signer_config_path, sizeof(bench->signer_config_path), "%s/dirauth-signer.yaml",
	         bench->dir);
	snprintf(bench->signer.log_path, sizeof(bench->signer.log_path), "%s/dirauth-signer.log", bench->dir);
	snprintf(bench->socket_path, sizeof(bench->socket_path), "%s/signer.sock", bench->dir);
	if (strlen(bench->socket_path) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
		fail("%s is too long for a UNIX socket path: use a shorter --temp-dir", bench->socket_path);
		return -1;
	}
	if (set_clock(bench, BENCH_START_TIME) != 0)
		return -1;

	struct buffer signer_config;
	buffer_init(&signer_config);
	int written =
	    buffer_appendf(&signer_config,
	                   "# dirauth benchmark: the authority's signer, on the same file clock.\n"
	                   "authority: %s\n"
	                   "socket: signer.sock\n"
	                   "allowed_uid: %u\n"
	                   "state_dir: signer-state\n"
	                   "signing_key: keys/authority1.key\n"
	                   "certificates: [keys/authority1.cert]\n"
	                   "audit_log: signer-audit.log\n"
	                   "clock: { source: file, path: clock }\n"
	                   "namespaces:\n"
	                   "  - { name: " BENCH_NAMESPACE ", origin: dirauth.example/" BENCH_NAMESPACE
	                   ", genesis: 0, length_seconds: %d, validity_epochs: 3 }\n",
	                   bench->authority.name, (unsigned)getuid(), BENCH_EPOCH_LENGTH) == 0 &&
	    write_file(bench->signer_config_path, signer_config.data, signer_config.len, 0644) == 0;
	buffer_free(&signer_config);
	if (!written) {
		fail("cannot write %s", bench->signer_config_path);
		return -1;
	}

	/* Every client thread holds one connection; keep dirauthd's per-address limit above that. */
	unsigned per_ip = BENCH_DEFAULT_PER_IP;
	if (bench->options.threads + 8 > per_ip)
		per_ip = bench->options.threads + 8;
	struct buffer config;
	buffer_init(&config);
	int rc = buffer_appendf(
	    &config,
	    "# dirauth benchmark: one authority on loopback with a file clock.\n"
	    "authority:\n"
	    "  name: %s\n"
	    "  signer_socket: signer.sock\n"
	    "listen: { address: 127.0.0.1, port: %u }\n"
	    "data_dir: data\n"
	    "epoch: { length_seconds: %d, genesis: 0, validity_epochs: 3 }\n"
	    "clock: { source: file, path: clock }\n"
	    "namespaces:\n"
	    "  - { name: " BENCH_NAMESPACE ", origin: dirauth.example/" BENCH_NAMESPACE " }\n"
	    "providers:\n"
	    "  - key: \"%s\"\n"
	    "    namespaces: [" BENCH_NAMESPACE "]\n"
	    "    classes: [mix-gateway]\n"
	    "http: { max_connections: %u, max_connections_per_ip: %u }\n",
	    bench->authority.name, port, BENCH_EPOCH_LENGTH, provider, per_ip > 1024 ? per_ip : 1024, per_ip);
	if (rc == 0 && write_file(bench->config_path, config.data, config.len, 0644) != 0)
		rc = -1;
	buffer_free(&config);
	return rc == 0 ? 0 : -1;
}

/* True when something accepts connections on the signer's socket. */
static int signer_listening(const struct bench *bench)
{
	struct sockaddr_un address;
	memset(&address, 0, sizeof(address));
	address.sun_family = AF_UNIX;
	memcpy(address.sun_path, bench->socket_path, strlen(bench->socket_path) + 1);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return 0;
	int connected = connect(fd, (struct sockaddr *)&address, sizeof(address)) == 0;
	close(fd);
	return connected;
}

static int signer_start(struct bench *bench)
{
	char *argv[] = {bench->options.signer, "--config", bench->signer_config_path, NULL};
	if (child_spawn(&bench->signer, argv) != 0)
		return -1;
	double deadline = now_seconds() + BENCH_STARTUP_SECONDS;
	while (now_seconds() < deadline && !bench_stopped(bench)) {
		if (signer_listening(bench))
			return 0;
		if (!child_running(&bench->signer)) {
			fail("dirauth-signer exited during startup");
			break;
		}
		sleep_ms(20);
	}
	if (!bench_stopped(bench) && child_running(&bench->signer))
		fail("dirauth-signer did not listen on %s", bench->socket_path);
	child_log_tail(&bench->signer);
	return -1;
}

/* The signer, then dirauthd; ready means dirauthd reached the signer and its key is the
 * authority's. */
static int authority_start(struct bench *bench)
{
	if (signer_start(bench) != 0)
		return -1;
	char *argv[] = {bench->options.dirauthd, "--config", bench->config_path, NULL};
	if (child_spawn(&bench->dirauthd, argv) != 0)
		return -1;
	char url[128];
	snprintf(url, sizeof(url), "%s/v1/ready", bench->url);
	return wait_for_http(bench, &bench->dirauthd, url, "dirauthd");
}

static int make_id(const char *label, uint64_t a, uint64_t b, uint8_t out[32])
{
	char text[128];
	int n = snprintf(text, sizeof(text), "dirauth-bench-%s-%llu-%llu", label, (unsigned long long)a,
	                 (unsigned long long)b);
	return crypto_sha256((const uint8_t *)text, (size_t)n, out);
}

/* The signed registration of service number: BENCH_ENDPOINTS endpoints, sequence 1. */
static int build_registration(const struct signer_key *provider, uint64_t number, struct buffer *out)
{
	struct registration r;
	struct endpoint_descriptor endpoints[BENCH_ENDPOINTS];
	struct buffer text;
	struct note_signature signature;
	int rc;
	memset(&r, 0, sizeof(r));
	memset(endpoints, 0, sizeof(endpoints));
	buffer_init(&text);
	snprintf(r.namespace_name, sizeof(r.namespace_name), "%s", BENCH_NAMESPACE);
	if ((rc = make_id("service", number, 0, r.service_id)) != 0)
		goto cleanup;
	r.service_class = SERVICE_CLASS_MIX_GATEWAY;
	r.provider = *signer_key_verifier(provider);
	r.sequence = 1;
	r.issued_at = BENCH_START_TIME;
	r.expires = BENCH_START_TIME + 86400;
	for (size_t i = 0; i < BENCH_ENDPOINTS; i++) {
		if ((rc = make_id("endpoint", number, i, endpoints[i].endpoint_id)) != 0)
			goto cleanup;
		endpoints[i].transport = TRANSPORT_QUIC;
		snprintf(endpoints[i].address, sizeof(endpoints[i].address), "198.51.%u.%u:%zu",
		         (unsigned)(number / 250 % 250), (unsigned)(number % 250 + 1), 443 + i);
		snprintf(endpoints[i].region, sizeof(endpoints[i].region), "%s",
		         i % 2 ? "eu-west" : "us-east");
		endpoints[i].capacity = CAPACITY_MEDIUM;
		endpoints[i].profile = PROFILE_MODERN;
	}
	r.endpoint_count = BENCH_ENDPOINTS;
	r.endpoints = endpoints;
	registration_sort_endpoints(&r);
	if ((rc = registration_encode(&r, &text)) != 0 ||
	    (rc = signer_key_sign(provider, text.data, text.len, &signature)) != 0)
		goto cleanup;
	buffer_init(out);
	rc = note_format(text.data, text.len, &signature, 1, out);
cleanup:
	if (rc != 0)
		fail("building registration %llu: %s", (unsigned long long)number, dirauth_strerror(rc));
	buffer_free(&text);
	return rc;
}

/* Every receipt must be signed by the authority and name the registration it answers; the
 * latest promised epoch is returned in *publish_epoch. */
static int check_receipts(const struct bench *bench, const struct bench_load *load, uint64_t *publish_epoch)
{
	*publish_epoch = 0;
	for (size_t i = 0; i < load->count; i++) {
		if (!load->done[i])
			continue;
		struct note *note = NULL;
		struct receipt receipt;
		uint8_t digest[32];
		memset(&receipt, 0, sizeof(receipt));
		int rc = note_parse(load->answers[i].data, load->answers[i].len, &note);
		if (rc == 0)
			rc = note_verify_threshold(note, &bench->authority, 1, 1);
		if (rc == 0)
			rc = receipt_parse(note->text, note->text_len, &receipt);
		if (rc == 0)
			rc = crypto_sha256(load->bodies[i].data, load->bodies[i].len, digest);
		if (rc == 0 &&
		    (memcmp(digest, receipt.registration_digest, 32) != 0 || receipt.sequence != 1 ||
		     strcmp(receipt.namespace_name, BENCH_NAMESPACE) != 0))
			rc = DIRAUTH_ERR_MISMATCH;
		note_free(note);
		if (rc != 0) {
			fail("receipt of registration %zu: %s", i, dirauth_strerror(rc));
			return -1;
		}
		if (receipt.publish_by_epoch > *publish_epoch)
			*publish_epoch = receipt.publish_by_epoch;
	}
	return 0;
}

/* Moves the clock to epoch and waits for its snapshot; it must hold exactly records records. */
static int wait_for_snapshot(struct bench *bench, uint64_t epoch, size_t records,
                             struct snapshot_header *header)
{
	char url[128];
	snprintf(url, sizeof(url), "%s/v1/%s/snapshots/latest", bench->url, BENCH_NAMESPACE);
	if (set_clock(bench, epoch * BENCH_EPOCH_LENGTH) != 0)
		return -1;
	struct buffer body;
	buffer_init(&body);
	double deadline = now_seconds() + BENCH_SNAPSHOT_SECONDS;
	int rc = -1;
	while (now_seconds() < deadline && !bench_stopped(bench) && child_running(&bench->dirauthd)) {
		long status = 0;
		if (http_simple(url, NULL, &status, &body, NULL) == 0 && status == 200) {
			struct note *note = NULL;
			int parsed = note_parse(body.data, body.len, &note);
			if (parsed == 0)
				parsed = note_verify_threshold(note, &bench->authority, 1, 1);
			if (parsed == 0)
				parsed = snapshot_header_parse(note->text, note->text_len, header);
			note_free(note);
			if (parsed != 0) {
				fail("latest snapshot header: %s", dirauth_strerror(parsed));
				break;
			}
			if (header->epoch >= epoch) {
				if (header->record_count != records) {
					fail("snapshot %llu holds %llu records, %zu were accepted",
					     (unsigned long long)header->epoch,
					     (unsigned long long)header->record_count, records);
					break;
				}
				rc = 0;
				break;
			}
		}
		sleep_ms(20);
	}
	buffer_free(&body);
	if (rc != 0 && !bench_stopped(bench)) {
		fail("no verified snapshot of epoch %llu", (unsigned long long)epoch);
		child_log_tail(&bench->dirauthd);
	}
	return rc;
}

/* Fetches the zstd body once, decompresses it under the header's bound and verifies it
 * completely, so that the loop measures the serving of a correct snapshot. */
static int fetch_body(const struct snapshot_header *header, const char *url, struct buffer *zstd_body)
{
	long status = 0;
	int zstd = 0;
	struct buffer plain;
	buffer_init(&plain);
	if (http_simple(url, "Accept-Encoding: zstd", &status, zstd_body, &zstd) != 0 || status != 200 ||
	    !zstd) {
		fail("GET %s: status %ld%s", url, status, zstd ? "" : ", not zstd");
		return -1;
	}
	int rc = compress_decode(ENCODING_ZSTD, zstd_body->data, zstd_body->len, (size_t)header->body_size,
	                         &plain);
	if (rc == 0)
		rc = snapshot_body_verify(header, plain.data, plain.len, (size_t)header->record_count);
	buffer_free(&plain);
	if (rc != 0) {
		fail("snapshot body of epoch %llu: %s", (unsigned long long)header->epoch,
		     dirauth_strerror(rc));
		return -1;
	}
	return 0;
}

/* --- the nginx anchor --------------------------------------------------------------------- */

static int find_nginx(struct bench *bench)
{
	if (bench->options.nginx[0])
		return access(bench->options.nginx, X_OK) == 0 ? 0 : -1;
	const char *path = getenv("PATH");
	char candidates[PATH_MAX * 4];
	snprintf(candidates, sizeof(candidates), "%s:/usr/sbin:/usr/local/sbin:/sbin",
	         path ? path : "/usr/bin");
	for (char *save = NULL, *dir = strtok_r(candidates, ":", &save); dir;
	     dir = strtok_r(NULL, ":", &save)) {
		char file[PATH_MAX];
		int n = snprintf(file, sizeof(file), "%s/nginx", dir);
		if (n > 0 && (size_t)n < sizeof(file) && access(file, X_OK) == 0) {
			snprintf(bench->options.nginx, sizeof(bench->options.nginx), "%s", file);
			return 0;
		}
	}
	return -1;
}

/* The temp-path directives this nginx was built with: some builds leave out uwsgi or scgi, and
 * naming a missing module's directive is a configuration error. */
static int nginx_temp_paths(struct bench *bench, struct buffer *out)
{
	struct bench_child probe = {0};
	snprintf(probe.log_path, sizeof(probe.log_path), "%s/nginx-V.txt", bench->nginx_dir);
	char *argv[] = {bench->options.nginx, "-V", NULL};
	if (child_spawn(&probe, argv) != 0)
		return -1;
	while (waitpid(probe.pid, NULL, 0) < 0 && errno == EINTR)
		;
	char build[16384] = "";
	FILE *file = fopen(probe.log_path, "r");
	if (file) {
		size_t n = fread(build, 1, sizeof(build) - 1, file);
		build[n] = 0;
		fclose(file);
	}
	static const char *const modules[][2] = {{"client_body", NULL},
	                                         {"proxy", "--without-http_proxy_module"},
	                                         {"fastcgi", "--without-http_fastcgi_module"},
	                                         {"uwsgi", "--without-http_uwsgi_module"},
	                                         {"scgi", "--without-http_scgi_module"}};
	for (size_t i = 0; i < sizeof(modules) / sizeof(modules[0]); i++)
		if (!modules[i][1] || !strstr(build, modules[i][1]))
			if (buffer_appendf(out, "\t%s_temp_path %s/temp-%s;\n", modules[i][0],
			                   bench->nginx_dir, modules[i][0]) != 0)
				return -1;
	return 0;
}

/* Writes the body where a static nginx serves it with the same Content-Encoding, and starts
 * nginx in the foreground as a child. Run as root, nginx hands requests to unprivileged worker
 * processes, which must be able to read the files. */
static int nginx_start(struct bench *bench, const struct buffer *zstd_body, uint64_t epoch, char *url,
                       size_t cap)
{
	char path[PATH_MAX + 64];
	struct buffer config;
	buffer_init(&config);
	int rc = -1;
	unsigned port = free_port();
	if (port == 0 || make_temp_dir(bench->options.temp_parent, "nginx", bench->nginx_dir) != 0)
		goto cleanup;
	snprintf(path, sizeof(path), "%s/www", bench->nginx_dir);
	if (chmod(bench->nginx_dir, 0755) != 0 || mkdir(path, 0755) != 0) {
		fail("%s: %s", path, strerror(errno));
		goto cleanup;
	}
	snprintf(path, sizeof(path), "%s/www/%llu.body", bench->nginx_dir, (unsigned long long)epoch);
	if (write_file(path, zstd_body->data, zstd_body->len, 0644) != 0)
		goto cleanup;

	char user[256] = "";
	if (geteuid() == 0) {
		struct passwd *pw = getpwnam("nobody");
		struct group *gr = pw ? getgrgid(pw->pw_gid) : NULL;
		if (pw && gr)
			snprintf(user, sizeof(user), "user %s %s;\n", pw->pw_name, gr->gr_name);
	}
	if (buffer_appendf(&config,
	                   "# dirauth benchmark: the static-file anchor, on loopback only.\n"
	                   "daemon off;\n"
	                   "master_process on;\n"
	                   "worker_processes auto;\n"
	                   "%s"
	                   "pid %s/nginx.pid;\n"
	                   "error_log %s/error.log warn;\n"
	                   "events { worker_connections 1024; }\n"
	                   "http {\n"
	                   "\taccess_log off;\n"
	                   "\tdefault_type application/octet-stream;\n"
	                   "\tsendfile on;\n"
	                   "\ttcp_nopush on;\n"
	                   "\tkeepalive_timeout 60s;\n"
	                   "\tkeepalive_requests 1000000;\n",
	                   user, bench->nginx_dir, bench->nginx_dir) != 0 ||
	    nginx_temp_paths(bench, &config) != 0 ||
	    buffer_appendf(&config,
	                   "\tserver {\n"
	                   "\t\tlisten 127.0.0.1:%u;\n"
	                   "\t\troot %s/www;\n"
	                   "\t\tlocation / {\n"
	                   "\t\t\tadd_header Content-Encoding zstd;\n"
	                   "\t\t\tadd_header Cache-Control \"public, max-age=31536000, immutable\";\n"
	                   "\t\t}\n"
	                   "\t}\n"
	                   "}\n",
	                   port, bench->nginx_dir) != 0)
		goto cleanup;
	snprintf(path, sizeof(path), "%s/nginx.conf", bench->nginx_dir);
	if (write_file(path, config.data, config.len, 0644) != 0)
		goto cleanup;
	snprintf(bench->nginx.log_path, sizeof(bench->nginx.log_path), "%s/nginx.log", bench->nginx_dir);
	char error_log[PATH_MAX], prefix[PATH_MAX];
	snprintf(error_log, sizeof(error_log), "%s/error.log", bench->nginx_dir);
	snprintf(prefix, sizeof(prefix), "%s/", bench->nginx_dir);
	char *argv[] = {bench->options.nginx, "-p", prefix, "-e", error_log, "-c", path, NULL};
	if (child_spawn(&bench->nginx, argv) != 0)
		goto cleanup;
	snprintf(url, cap, "http://127.0.0.1:%u/%llu.body", port, (unsigned long long)epoch);
	if (wait_for_http(bench, &bench->nginx, url, "nginx") != 0) {
		struct bench_child errors = {0};
		snprintf(errors.log_path, sizeof(errors.log_path), "%s", error_log);
		child_log_tail(&errors);
		goto cleanup;
	}
	rc = 0;
cleanup:
	buffer_free(&config);
	return rc;
}

/* --- the run ------------------------------------------------------------------------------ */

static int run_registrations(struct bench *bench, struct bench_figures *figures, uint64_t *publish_epoch)
{
	size_t count = bench->options.registrations;
	struct buffer *notes = calloc(count, sizeof(*notes));
	struct buffer *receipts = calloc(count, sizeof(*receipts));
	struct bench_load load;
	char url[128];
	int rc = -1;
	snprintf(url, sizeof(url), "%s/v1/registrations", bench->url);
	if (load_init(&load, bench, url, count) != 0 || !notes || !receipts)
		goto cleanup;
	printf("building %zu signed registrations...\n", count);
	fflush(stdout);
	for (size_t i = 0; i < count; i++)
		if (build_registration(bench->provider, i, &notes[i]) != 0)
			goto cleanup;

	printf("measuring the Ed25519 verify rate for %.1f s...\n", bench->options.verify_seconds);
	fflush(stdout);
	if (measure_verify_rate(notes[0].data, notes[0].len, bench->options.verify_seconds,
	                        &figures->verify_rate) != 0)
		goto cleanup;

	printf("posting %zu registrations from %u threads...\n", count, bench->options.threads);
	fflush(stdout);
	load.bodies = notes;
	load.answers = receipts;
	load.expected_status = 202;
	if (load_run(&load, bench->options.threads, bench->options.post_seconds) != 0) {
		child_log_tail(&bench->dirauthd);
		goto cleanup;
	}
	figures->accepted = atomic_load(&load.completed);
	figures->registration_rate = (double)figures->accepted / load.elapsed;
	load_percentiles(&load, &figures->registration_p50_ms, &figures->registration_p99_ms);
	if (atomic_load(&load.timed_out))
		printf("time bound of %.0f s reached: %zu of %zu registrations posted\n",
		       bench->options.post_seconds, figures->accepted, count);
	if (check_receipts(bench, &load, publish_epoch) != 0)
		goto cleanup;
	rc = 0;
cleanup:
	for (size_t i = 0; notes && i < count; i++)
		buffer_free(&notes[i]);
	for (size_t i = 0; receipts && i < count; i++)
		buffer_free(&receipts[i]);
	free(notes);
	free(receipts);
	load_clear(&load);
	return rc;
}

/* The GET loop against url; fills rate, bytes per second and latencies. */
static int run_gets(struct bench *bench, const char *url, size_t expected_len, double *rate,
                    double *bytes_rate, double *p50_ms, double *p99_ms, size_t *completed)
{
	struct bench_load load;
	int rc = -1;
	if (load_init(&load, bench, url, bench->options.gets) != 0)
		goto cleanup;
	load.expected_status = 200;
	load.expected_len = expected_len;
	if (load_run(&load, bench->options.threads, bench->options.get_seconds) != 0)
		goto cleanup;
	*completed = atomic_load(&load.completed);
	*rate = (double)*completed / load.elapsed;
	*bytes_rate = (double)atomic_load(&load.bytes) / load.elapsed;
	load_percentiles(&load, p50_ms, p99_ms);
	rc = 0;
cleanup:
	load_clear(&load);
	return rc;
}

static int run_snapshot(struct bench *bench, struct bench_figures *figures, uint64_t publish_epoch)
{
	struct snapshot_header header;
	struct buffer zstd_body;
	char url[192], nginx_url[192];
	int rc = -1;
	buffer_init(&zstd_body);
	printf("moving the clock to epoch %llu and waiting for its snapshot...\n",
	       (unsigned long long)publish_epoch);
	fflush(stdout);
	double start = now_seconds();
	if (wait_for_snapshot(bench, publish_epoch, figures->accepted, &header) != 0)
		goto cleanup;
	figures->publish_seconds = now_seconds() - start;
	snprintf(url, sizeof(url), "%s/v1/%s/snapshots/%llu/body", bench->url, BENCH_NAMESPACE,
	         (unsigned long long)header.epoch);
	if (fetch_body(&header, url, &zstd_body) != 0)
		goto cleanup;
	figures->body_zstd_len = zstd_body.len;
	figures->body_len = (size_t)header.body_size;

	printf("GET of the %zu-byte zstd body from dirauthd, %u threads...\n", zstd_body.len,
	       bench->options.threads);
	fflush(stdout);
	if (run_gets(bench, url, zstd_body.len, &figures->get_rate, &figures->get_bytes_rate,
	             &figures->get_p50_ms, &figures->get_p99_ms, &figures->get_completed) != 0) {
		child_log_tail(&bench->dirauthd);
		goto cleanup;
	}

	if (bench->options.nginx_disabled) {
		figures->nginx_skipped = "disabled with --no-nginx";
	} else if (find_nginx(bench) != 0) {
		figures->nginx_skipped = "nginx is not installed";
	} else {
		printf("GET of the same bytes from %s, %u threads...\n", bench->options.nginx,
		       bench->options.threads);
		fflush(stdout);
		if (nginx_start(bench, &zstd_body, header.epoch, nginx_url, sizeof(nginx_url)) != 0 ||
		    run_gets(bench, nginx_url, zstd_body.len, &figures->nginx_rate,
		             &figures->nginx_bytes_rate, &figures->nginx_p50_ms, &figures->nginx_p99_ms,
		             &figures->nginx_completed) != 0)
			goto cleanup;
		figures->nginx_measured = 1;
	}
	rc = 0;
cleanup:
	buffer_free(&zstd_body);
	return rc;
}

/* One table row; the ratio column stays empty when ratio is not positive. */
static void print_row(const char *figure, const char *value, const char *anchor, double ratio)
{
	char line[256], ratio_text[32] = "";
	if (ratio > 0)
		snprintf(ratio_text, sizeof(ratio_text), "%.3f", ratio);
	snprintf(line, sizeof(line), "%-40s %-22s %-28s %s", figure, value, anchor, ratio_text);
	size_t len = strlen(line);
	while (len > 0 && line[len - 1] == ' ')
		line[--len] = 0;
	puts(line);
}

static void print_figures(const struct bench *bench, const struct bench_figures *f, const char *fs_note)
{
	char figure[96], value[64], anchor[64];
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	printf(
	    "\ndirauth benchmark: %ld online cores, %u client threads on the same machine, data dir on %s\n",
	    cores, bench->options.threads, fs_note);
	printf("%-40s %-22s %-28s %s\n", "figure", "value", "anchor", "ratio");
	printf("%-40s %-22s %-28s %s\n", "------", "-----", "------", "-----");
	snprintf(value, sizeof(value), "%.0f /s", f->verify_rate);
	print_row("ed25519 verify, one thread", value, "", 0);

	snprintf(figure, sizeof(figure), "durable registrations (%zu x 202)", f->accepted);
	snprintf(value, sizeof(value), "%.0f /s", f->registration_rate);
	snprintf(anchor, sizeof(anchor), "ed25519 verify %.0f /s", f->verify_rate);
	print_row(figure, value, anchor, f->registration_rate / f->verify_rate);
	snprintf(value, sizeof(value), "%.2f / %.2f ms", f->registration_p50_ms, f->registration_p99_ms);
	print_row("registration latency p50 / p99", value, "", 0);

	snprintf(figure, sizeof(figure), "snapshot published (%zu records)", f->accepted);
	snprintf(value, sizeof(value), "%.2f s", f->publish_seconds);
	print_row(figure, value, "", 0);
	snprintf(value, sizeof(value), "%zu / %zu B", f->body_zstd_len, f->body_len);
	print_row("snapshot body zstd / uncompressed", value, "", 0);

	snprintf(figure, sizeof(figure), "snapshot body GET, zstd (%zu GETs)", f->get_completed);
	snprintf(value, sizeof(value), "%.1f /s", f->get_rate);
	if (f->nginx_measured)
		snprintf(anchor, sizeof(anchor), "nginx %.1f /s", f->nginx_rate);
	else
		snprintf(anchor, sizeof(anchor), "nginx skipped");
	print_row(figure, value, anchor, f->nginx_measured ? f->get_rate / f->nginx_rate : 0);
	snprintf(value, sizeof(value), "%.1f MB/s", f->get_bytes_rate / 1e6);
	if (f->nginx_measured)
		snprintf(anchor, sizeof(anchor), "nginx %.1f MB/s", f->nginx_bytes_rate / 1e6);
	print_row("snapshot body bytes", value, anchor,
	          f->nginx_measured ? f->get_bytes_rate / f->nginx_bytes_rate : 0);
	snprintf(value, sizeof(value), "%.2f / %.2f ms", f->get_p50_ms, f->get_p99_ms);
	if (f->nginx_measured)
		snprintf(anchor, sizeof(anchor), "nginx %.2f / %.2f ms", f->nginx_p50_ms, f->nginx_p99_ms);
	print_row("body GET latency p50 / p99", value, anchor, 0);
	if (!f->nginx_measured)
		printf("\nthe nginx anchor was skipped: %s\n",
		       f->nginx_skipped ? f->nginx_skipped : "unknown");
}

static void usage(FILE *out)
{
	fprintf(out,
	        "usage: bench_authority [options]\n"
	        "  --dirauthd PATH        the dirauthd binary (default: ../server/dirauthd next to this "
	        "program)\n"
	        "  --signer PATH          the dirauth-signer binary (default: ../signer/dirauth-signer next "
	        "to this program)\n"
	        "  --registrations N      signed registrations of distinct services to POST (default 20000)\n"
	        "  --threads M            client threads, one keep-alive connection each (default 16)\n"
	        "  --gets N               snapshot body GETs per server (default 2000)\n"
	        "  --verify-seconds S     length of the Ed25519 anchor measurement (default 2)\n"
	        "  --post-seconds S       time bound of the registration phase (default 120)\n"
	        "  --get-seconds S        time bound of each GET phase (default 30)\n"
	        "  --nginx PATH           the nginx binary of the read anchor (default: looked up in PATH)\n"
	        "  --no-nginx             skip the nginx anchor\n"
	        "  --temp-dir DIR         where the temporary directories go (default $TMPDIR or /tmp)\n");
}

static int parse_count(const char *text, size_t low, size_t high, size_t *out)
{
	char *end = NULL;
	errno = 0;
	unsigned long long value = strtoull(text, &end, 10);
	if (errno || end == text || *end || text[0] == '-' || value < low || value > high)
		return -1;
	*out = (size_t)value;
	return 0;
}

static int parse_seconds(const char *text, double *out)
{
	char *end = NULL;
	errno = 0;
	double value = strtod(text, &end);
	if (errno || end == text || *end || !(value > 0 && value <= 3600))
		return -1;
	*out = value;
	return 0;
}

/* A program of the build tree by its path in it (e.g. "server/dirauthd"): this program lives in
 * <build>/bench/. */
static void default_program(const char *relative, char out[PATH_MAX])
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

static int parse_options(int argc, char **argv, struct bench_options *o)
{
	memset(o, 0, sizeof(*o));
	default_program("server/dirauthd", o->dirauthd);
	default_program("signer/dirauth-signer", o->signer);
	o->registrations = 20000;
	o->threads = 16;
	o->gets = 2000;
	o->verify_seconds = 2;
	o->post_seconds = 120;
	o->get_seconds = 30;
	o->temp_parent = getenv("TMPDIR") && getenv("TMPDIR")[0] ? getenv("TMPDIR") : "/tmp";
	for (int i = 1; i < argc; i++) {
		const char *name = argv[i];
		const char *value = i + 1 < argc ? argv[i + 1] : NULL;
		size_t number = 0;
		int ok = 1;
		if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
			usage(stdout);
			exit(0);
		} else if (strcmp(name, "--no-nginx") == 0) {
			o->nginx_disabled = 1;
			continue;
		} else if (!value) {
			ok = 0;
		} else if (strcmp(name, "--dirauthd") == 0) {
			ok = strlen(value) < PATH_MAX;
			snprintf(o->dirauthd, sizeof(o->dirauthd), "%s", value);
		} else if (strcmp(name, "--signer") == 0) {
			ok = strlen(value) < PATH_MAX;
			snprintf(o->signer, sizeof(o->signer), "%s", value);
		} else if (strcmp(name, "--nginx") == 0) {
			ok = strlen(value) < PATH_MAX;
			snprintf(o->nginx, sizeof(o->nginx), "%s", value);
		} else if (strcmp(name, "--temp-dir") == 0) {
			o->temp_parent = value;
		} else if (strcmp(name, "--registrations") == 0) {
			ok = parse_count(value, 1, BENCH_MAX_COUNT, &o->registrations) == 0;
		} else if (strcmp(name, "--threads") == 0) {
			ok = parse_count(value, 1, BENCH_MAX_THREADS, &number) == 0;
			o->threads = (unsigned)number;
		} else if (strcmp(name, "--gets") == 0) {
			ok = parse_count(value, 1, BENCH_MAX_COUNT, &o->gets) == 0;
		} else if (strcmp(name, "--verify-seconds") == 0) {
			ok = parse_seconds(value, &o->verify_seconds) == 0;
		} else if (strcmp(name, "--post-seconds") == 0) {
			ok = parse_seconds(value, &o->post_seconds) == 0;
		} else if (strcmp(name, "--get-seconds") == 0) {
			ok = parse_seconds(value, &o->get_seconds) == 0;
		} else {
			ok = 0;
		}
		if (!ok) {
			fprintf(stderr, "bench_authority: bad option %s%s%s\n", name, value ? " " : "",
			        value ? value : "");
			usage(stderr);
			return -1;
		}
		i++;
	}
	if (access(o->dirauthd, X_OK) != 0) {
		fprintf(stderr, "bench_authority: no dirauthd at %s (build it, or pass --dirauthd)\n",
		        o->dirauthd);
		return -1;
	}
	if (access(o->signer, X_OK) != 0) {
		fprintf(stderr, "bench_authority: no dirauth-signer at %s (build it, or pass --signer)\n",
		        o->signer);
		return -1;
	}
	return 0;
}

static const char *filesystem_note(const char *path)
{
	struct statfs fs;
	if (statfs(path, &fs) != 0)
		return "an unknown file system";
	if ((long)fs.f_type == BENCH_TMPFS_MAGIC)
		return "tmpfs (fsync costs nothing: the durable rate is an upper bound)";
	return "a disk file system";
}

int main(int argc, char **argv)
{
	struct bench bench;
	struct bench_figures figures;
	pthread_t watcher;
	uint64_t publish_epoch = 0;
	int rc = 1;
	memset(&bench, 0, sizeof(bench));
	memset(&figures, 0, sizeof(figures));
	if (parse_options(argc, argv, &bench.options) != 0)
		return 2;

	sigemptyset(&bench.signals);
	sigaddset(&bench.signals, SIGINT);
	sigaddset(&bench.signals, SIGTERM);
	sigaddset(&bench.signals, SIGHUP);
	sigaddset(&bench.signals, SIGUSR1);
	if (pthread_sigmask(SIG_BLOCK, &bench.signals, NULL) != 0 ||
	    pthread_create(&watcher, NULL, bench_signal_watch, &bench) != 0) {
		fail("cannot set up signal handling");
		return 1;
	}
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		fail("curl_global_init failed");
		goto stop_watcher;
	}

	if (make_temp_dir(bench.options.temp_parent, "authority", bench.dir) != 0 ||
	    authority_prepare(&bench) != 0)
		goto cleanup;
	if (authority_start(&bench) != 0)
		goto cleanup;
	if (run_registrations(&bench, &figures, &publish_epoch) != 0)
		goto cleanup;
	if (run_snapshot(&bench, &figures, publish_epoch) != 0)
		goto cleanup;
	print_figures(&bench, &figures, filesystem_note(bench.dir));
	rc = 0;
cleanup:
	child_stop(&bench.nginx);
	child_stop(&bench.dirauthd);
	child_stop(&bench.signer);
	if (bench.nginx_dir[0])
		remove_tree(bench.nginx_dir);
	if (bench.dir[0])
		remove_tree(bench.dir);
	signer_key_free(bench.provider);
	curl_global_cleanup();
stop_watcher:
	pthread_kill(watcher, SIGUSR1);
	pthread_join(watcher, NULL);
	if (rc != 0)
		fprintf(stderr, "bench: FAILED\n");
	return rc;
}
