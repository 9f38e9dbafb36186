/*
 * bench_authority.c: how fast one dirauthd takes durable, receipted registrations, against the
 * machine's single-thread Ed25519 verify rate measured in the same run, and where the CPU goes.
 *
 * A registration costs the authority at least one Ed25519 verification (the provider's
 * signature), so the anchor of the write path is what one core verifies per second: `openssl
 * speed -seconds S ed25519` (one thread, OpenSSL's own loop) and crypto_ed25519_verify() (the
 * EVP path dirauthd uses, on a registration-sized message). The ratio of registrations per
 * second to verifications per second says how close the whole path comes to its cryptographic
 * floor: a registration also costs a receipt signature (dirauth-signer), an fsync'd group
 * commit, HTTP on both sides and the client itself, all on the same machine.
 *
 * The run, every step bounded in count and time:
 *   1. the anchors (openssl speed on one thread and on every core, then the EVP loop);
 *   2. dirauth-signer and dirauthd (the real binaries) on loopback with a fresh data directory
 *      and a file clock (harness.h);
 *   3. N signed registrations of distinct services, built before the clock starts so that
 *      signing is not measured, POSTed over M keep-alive connections; only a 202 counts,
 *      anything else stops the run. The CPU time of dirauthd, of the signer, of this program
 *      and of the machine as a whole is read before and after (/proc), which gives the CPU each
 *      registration cost in each process and what other work took. With --replace the store
 *      first takes every service at sequence 1 (not timed), and the timed registrations replace
 *      them at sequence 2 with the same endpoints, as a provider's refresh does;
 *   4. every receipt is checked (the authority's signature, the registration's digest), the
 *      clock moves to the promised epoch, and the snapshot must hold every accepted registration.
 * --perf FILE records a system-wide `perf record -g` of the POST phase alone into FILE.
 *
 * The client shares the machine with what it measures, so by default it is lean (one thread,
 * epoll, M keep-alive connections: lean_post); --client curl posts from M threads with a curl
 * handle each (harness_post), as bench_several does, and costs the cores several times more.
 */
#define _GNU_SOURCE /* memmem */
#include "bench/harness.h"

#include "compress/compress.h"
#include "base/error.h"
#include "schema/snapshot.h"
#include "server/store/store.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define BENCH_MAX_COUNT        10000000
#define BENCH_SNAPSHOT_SECONDS 600.0
#define BENCH_TARGET           0.7 /* of the single-thread verify rate (issue 8) */

struct options {
	char dirauthd[PATH_MAX];
	char signer[PATH_MAX];
	const char *perf_output;
	const char *http; /* extra keys of dirauthd's http mapping, e.g. "threads: 2" */
	size_t registrations;
	unsigned threads;
	unsigned openssl_seconds; /* 0: skip openssl speed */
	double verify_seconds;
	double disk_seconds; /* 0: skip the disk anchor */
	double post_seconds;
	int skip_snapshot;
	int system_clock;
	int curl_client; /* harness_post's threads instead of lean_post */
	int replace;     /* time registrations that replace stored ones */
};

/* CPU seconds per process, read before and after the POST phase. */
struct cpu_sample {
	double dirauthd, signer, self, busy, idle;
};

static double self_cpu(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
	       (double)ru.ru_stime.tv_usec / 1e6;
}

static void cpu_sample(const struct harness_authority *authority, struct cpu_sample *out)
{
	out->dirauthd = harness_process_cpu(authority->dirauthd.pid);
	out->signer = harness_process_cpu(authority->signer.pid);
	out->self = self_cpu();
	harness_machine_cpu(&out->busy, &out->idle);
}

/* The committer, dirauthd's one serial stage of ingest: its thread's time on a core and waiting
 * for one (/proc/PID/task/TID/schedstat, nanoseconds), the bytes it passed to write calls (io:
 * wchar, LMDB's pages and meta pages), and the time it waited for work (dirauthd's metric). For
 * the rest of a phase it was blocked: in its writes and syncs, or waiting for the store's lock. */
struct committer_sample {
	double cpu, runqueue, idle, written;
};

static pid_t committer_thread(pid_t pid)
{
	char path[96], name[32];
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	DIR *tasks = opendir(path);
	pid_t found = 0;
	for (struct dirent *e; tasks && !found && (e = readdir(tasks));) {
		snprintf(path, sizeof(path), "/proc/%d/task/%.16s/comm", (int)pid, e->d_name);
		FILE *f = fopen(path, "r");
		if (f && fgets(name, sizeof(name), f) && strcmp(name, STORE_COMMITTER_THREAD_NAME "\n") == 0)
			found = (pid_t)atoi(e->d_name);
		if (f)
			fclose(f);
	}
	if (tasks)
		closedir(tasks);
	return found;
}

static void committer_sample(struct harness_authority *authority, pid_t tid, struct committer_sample *out)
{
	char path[96], line[128];
	unsigned long long cpu = 0, runqueue = 0, wchar = 0;
	memset(out, 0, sizeof(*out));
	snprintf(path, sizeof(path), "/proc/%d/task/%d/schedstat", (int)authority->dirauthd.pid, (int)tid);
	FILE *f = fopen(path, "r");
	if (f && fscanf(f, "%llu %llu", &cpu, &runqueue) == 2) {
		out->cpu = (double)cpu / 1e9;
		out->runqueue = (double)runqueue / 1e9;
	}
	if (f)
		fclose(f);
	snprintf(path, sizeof(path), "/proc/%d/task/%d/io", (int)authority->dirauthd.pid, (int)tid);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "wchar: %llu", &wchar) == 1)
			out->written = (double)wchar;
	if (f)
		fclose(f);
	harness_metric(authority, "dirauth_store_committer_idle_seconds_total", &out->idle);
}

/* The disk's anchor: rounds of `pages` random 4 KiB page writes into a file of 8,192 pages in
 * directory (so on the data directory's file system), each round ended by one fdatasync, as a
 * group commit writes and syncs LMDB's pages, for about `seconds`. Pages per second, or 0. */
#define BENCH_DISK_FILE_PAGES  8192
#define BENCH_DISK_ROUND_PAGES 512 /* about a group commit's pages at 512 connections */
static double disk_page_rate(const char *directory, unsigned pages, double seconds)
{
	char path[PATH_MAX];
	static uint8_t page[4096];
	snprintf(path, sizeof(path), "%s/disk-anchor", directory);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return 0;
	unlink(path);
	memset(page, 0x5a, sizeof(page));
	bool ok = true;
	for (unsigned i = 0; ok && i < BENCH_DISK_FILE_PAGES; i++)
		ok = pwrite(fd, page, sizeof(page), (off_t)i * (off_t)sizeof(page)) == (ssize_t)sizeof(page);
	ok = ok && fsync(fd) == 0;
	/* Not in the page cache, as LMDB's reused pages mostly are not dirty when a commit starts. */
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	unsigned long long written = 0, state = 88172645463325252ull;
	double start = harness_now(), elapsed = 0;
	while (ok && elapsed < seconds) {
		for (unsigned i = 0; ok && i < pages; i++) {
			state ^= state << 13;
			state ^= state >> 7;
			state ^= state << 17;
			off_t at = (off_t)(state % BENCH_DISK_FILE_PAGES) * (off_t)sizeof(page);
			ok = pwrite(fd, page, sizeof(page), at) == (ssize_t)sizeof(page);
		}
		ok = ok && fdatasync(fd) == 0;
		written += pages;
		elapsed = harness_now() - start;
	}
	close(fd);
	return ok && elapsed > 0 ? (double)written / elapsed : 0;
}

/* Where the committer's time went over the phase, and the two ceilings it sets: the disk's (its
 * page writes at the anchor's rate) and the serial stage's (its time on a core plus on the disk,
 * per registration, were it never to wait for a core). */
static void print_committer(const struct committer_sample *before, const struct committer_sample *after,
                            double wall, double registrations, double commits, double disk_rate,
                            double verify_rate)
{
	double cpu = after->cpu - before->cpu, runqueue = after->runqueue - before->runqueue;
	double idle = after->idle - before->idle, written = after->written - before->written;
	double blocked = wall - cpu - runqueue - idle;
	if (blocked < 0)
		blocked = 0;
	printf("\nthe store's committer (one thread: the serial stage), over the POST phase:\n");
	printf("  on a core %4.1f%%, waiting for a core %4.1f%%, blocked (writes, syncs, locks) %4.1f%%, "
	       "waiting for work %4.1f%%\n",
	       100 * cpu / wall, 100 * runqueue / wall, 100 * blocked / wall, 100 * idle / wall);
	double pages = written / 4096 / registrations;
	printf("  per registration: %.1f us on a core, %.1f us waiting for one, %.1f us blocked; "
	       "%.1f KiB written (%.2f pages of 4 KiB; %.0f pages a commit)\n",
	       cpu / registrations * 1e6, runqueue / registrations * 1e6, blocked / registrations * 1e6,
	       written / 1024 / registrations, pages, commits > 0 ? written / 4096 / commits : 0);
	double serial = (cpu + blocked) / registrations;
	if (serial > 0)
		printf(
		    "  its ceiling, one registration per %.1f us on a core and blocked: %.0f /s (%.3fx the "
		    "verify rate)\n",
		    serial * 1e6, 1 / serial, 1 / serial / verify_rate);
	if (disk_rate > 0 && pages > 0)
		printf("  disk anchor: %.0f random page writes /s (%d a round, one fdatasync each); at %.2f "
		       "pages per registration the disk alone allows %.0f /s (%.3fx the verify rate)\n",
		       disk_rate, BENCH_DISK_ROUND_PAGES, pages, disk_rate / pages,
		       disk_rate / pages / verify_rate);
}

/* `openssl speed -seconds S ed25519` on one thread, then with -multi on every online core,
 * announced: verifications and signatures per second, one thread's and all the cores' together. */
static int openssl_anchor(struct harness *harness, unsigned seconds, const char *when, double *verify,
                          double *sign, double *verify_all)
{
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	double sign_all;
	printf("openssl speed -seconds %u ed25519%s, one thread, then -multi %ld...\n", seconds, when, cores);
	fflush(stdout);
	*verify_all = 0;
	if (harness_openssl_ed25519(harness, seconds, 1, verify, sign) != 0)
		return -1;
	return cores > 1 ? harness_openssl_ed25519(harness, seconds, (unsigned)cores, verify_all, &sign_all)
	                 : 0;
}

static int perf_start(struct harness *harness, const char *output, struct harness_child *perf)
{
	char program[PATH_MAX], path[PATH_MAX];
	if (harness_find_program("perf", program) != 0) {
		harness_fail("--perf: perf is not installed (Debian: linux-perf)");
		return -1;
	}
	snprintf(path, sizeof(path), "%s", output);
	snprintf(perf->log_path, sizeof(perf->log_path), "%s.log", output);
	char *argv[] = {program, "record", "-a", "-g", "-F", "999", "-o", path, NULL};
	if (harness_child_spawn(perf, argv) != 0)
		return -1;
	(void)harness;
	harness_sleep_ms(500); /* perf needs a moment before it samples */
	return 0;
}

static void perf_stop(struct harness_child *perf)
{
	if (perf->pid <= 0)
		return;
	kill(perf->pid, SIGINT);
	for (int waited = 0; waited < 3000 && harness_child_running(perf); waited++)
		harness_sleep_ms(10);
	harness_child_stop(perf);
}

/* The lean client (--client epoll): one thread drives M non-blocking keep-alive connections
 * with epoll, each sending one request (the same POST, headers and body curl sends) and
 * reading its whole answer before the next. It asks the kernel for no more than a send and a
 * receive or two per registration, so that the client's share of the two cores goes to the
 * server under test; the answers are judged as harness_post judges them: a 202 with a
 * Content-Length body, kept as the receipt. */
struct lean_connection {
	int fd;
	size_t note; /* in flight, or SIZE_MAX */
	double started;
	struct buffer request;
	size_t sent;
	struct buffer in;
	int watching_output; /* EPOLLOUT too, while a request is not all sent */
};

struct lean_load {
	struct harness_authority *authority;
	const struct buffer *notes;
	struct buffer *receipts;
	size_t count, next, completed;
	uint32_t *latency_us;
	uint16_t port;
};

static int lean_connect(uint16_t port)
{
	struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons(port)};
	address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int one = 1;
	if (fd < 0)
		return -1;
	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0 ||
	    connect(fd, (struct sockaddr *)&address, sizeof address) != 0 ||
	    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Queues the next registration on c, or leaves it idle when none is left. */
static int lean_start(struct lean_load *load, struct lean_connection *c)
{
	c->note = SIZE_MAX;
	if (load->next >= load->count)
		return 0;
	size_t i = load->next++;
	const struct buffer *note = &load->notes[i];
	buffer_reset(&c->request);
	buffer_reset(&c->in);
	if (buffer_appendf(&c->request,
	                   "POST /v1/registrations HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nAccept: */*\r\n"
	                   "Content-Length: %zu\r\n"
	                   "Content-Type: application/x-www-form-urlencoded\r\n\r\n",
	                   (unsigned)load->port, note->len) != 0 ||
	    buffer_append(&c->request, note->data, note->len) != 0) {
		harness_fail("out of memory");
		return -1;
	}
	c->note = i;
	c->sent = 0;
	c->started = harness_now();
	return 0;
}

/* Writes what is left of c's request. */
static int lean_send(struct lean_connection *c)
{
	while (c->sent < c->request.len) {
		ssize_t n = send(c->fd, c->request.data + c->sent, c->request.len - c->sent, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (n <= 0) {
			harness_fail("registration %zu: sending: %s", c->note, strerror(errno));
			return -1;
		}
		c->sent += (size_t)n;
	}
	return 0;
}

/* Watches c for output too while its request is not all sent (a request fits in a socket buffer,
 * so this is rare), and for input alone otherwise. */
static int lean_watch(int epoll_fd, struct lean_connection *c, unsigned index)
{
	int want = c->note != SIZE_MAX && c->sent < c->request.len;
	if (want == c->watching_output)
		return 0;
	struct epoll_event event = {.events = EPOLLIN | EPOLLET | (want ? EPOLLOUT : 0), .data.u32 = index};
	if (epoll_ctl(epoll_fd, EPOLL_CTL_MOD, c->fd, &event) != 0) {
		harness_fail("epoll_ctl: %s", strerror(errno));
		return -1;
	}
	c->watching_output = want;
	return 0;
}

/* Reads what has arrived of c's answer: 1 once it is whole (and judged), 0 while it is not. */
static int lean_receive(struct lean_load *load, struct lean_connection *c)
{
	for (;;) {
		if (buffer_reserve(&c->in, 4096) != 0) {
			harness_fail("out of memory");
			return -1;
		}
		ssize_t n = recv(c->fd, c->in.data + c->in.len, 4096, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (n <= 0) {
			harness_fail("registration %zu: the connection ended before the answer did%s%s",
			             c->note, n < 0 ? ": " : "", n < 0 ? strerror(errno) : "");
			return -1;
		}
		c->in.len += (size_t)n;
		const char *text = (const char *)c->in.data;
		const char *end = memmem(text, c->in.len, "\r\n\r\n", 4);
		if (!end)
			continue;
		size_t header_len = (size_t)(end - text) + 4, body_len = 0;
		int status = 0;
		char header[1024];
		snprintf(header, sizeof header, "%.*s",
		         (int)(header_len < sizeof header ? header_len : sizeof header - 1), text);
		for (char *p = header; *p; p++)
			*p = (char)tolower((unsigned char)*p);
		const char *length = strstr(header, "\r\ncontent-length:");
		if (sscanf(header, "http/1.1 %d", &status) != 1 || !length ||
		    sscanf(length + 17, " %zu", &body_len) != 1) {
			harness_fail("registration %zu: an answer without status or Content-Length", c->note);
			return -1;
		}
		if (c->in.len < header_len + body_len)
			continue;
		if (c->in.len > header_len + body_len) {
			harness_fail("registration %zu: bytes after the answer", c->note);
			return -1;
		}
		if (status != 202) {
			harness_fail("registration %zu answered %d, not 202: %.*s", c->note, status,
			             (int)(body_len < 200 ? body_len : 200), text + header_len);
			return -1;
		}
		double micros = (harness_now() - c->started) * 1e6;
		load->latency_us[c->note] = micros > 4e9 ? UINT32_MAX : (uint32_t)micros;
		if (load->receipts) {
			buffer_reset(&load->receipts[c->note]);
			if (buffer_append(&load->receipts[c->note], c->in.data + header_len, body_len) != 0)
				return -1;
		}
		load->completed++;
		if (strstr(header, "\r\nconnection: close")) {
			close(c->fd);
			if ((c->fd = lean_connect(load->port)) < 0) {
				harness_fail("cannot reconnect to dirauthd");
				return -1;
			}
		}
		return 1;
	}
}

static int compare_latency(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

/* harness_post's contract, on one thread and M connections. */
static int lean_post(struct harness_authority *authority, const struct buffer *notes, size_t count,
                     unsigned connections, double seconds, struct buffer *receipts,
                     struct harness_posted *out)
{
	struct lean_load load = {
	    .authority = authority, .notes = notes, .receipts = receipts, .count = count};
	struct lean_connection *c = calloc(connections, sizeof *c);
	unsigned port = 0;
	int epoll_fd = epoll_create1(EPOLL_CLOEXEC), rc = -1;
	unsigned opened = 0;
	memset(out, 0, sizeof *out);
	load.latency_us = calloc(count ? count : 1, sizeof *load.latency_us);
	if (!c || !load.latency_us || epoll_fd < 0 ||
	    sscanf(authority->url, "http://127.0.0.1:%u", &port) != 1) {
		harness_fail("cannot set up the lean client");
		goto cleanup;
	}
	load.port = (uint16_t)port;
	for (; opened < connections; opened++) {
		buffer_init(&c[opened].request);
		buffer_init(&c[opened].in);
		struct epoll_event event = {.events = EPOLLIN | EPOLLET, .data.u32 = opened};
		if ((c[opened].fd = lean_connect(load.port)) < 0 ||
		    epoll_ctl(epoll_fd, EPOLL_CTL_ADD, c[opened].fd, &event) != 0) {
			harness_fail("cannot connect to dirauthd: %s", strerror(errno));
			opened++;
			goto cleanup;
		}
	}
	double start = harness_now(), deadline = start + seconds;
	size_t busy = 0;
	for (unsigned k = 0; k < connections; k++) {
		if (lean_start(&load, &c[k]) != 0 || lean_send(&c[k]) != 0 ||
		    lean_watch(epoll_fd, &c[k], k) != 0)
			goto cleanup;
		busy += c[k].note != SIZE_MAX;
	}
	while (busy > 0) {
		struct epoll_event events[64];
		if (harness_stopped(authority->harness)) {
			harness_fail("interrupted");
			goto cleanup;
		}
		if (harness_now() >= deadline) {
			out->timed_out = 1;
			break;
		}
		int n = epoll_wait(epoll_fd, events, 64, 1000);
		if (n < 0 && errno != EINTR) {
			harness_fail("epoll_wait: %s", strerror(errno));
			goto cleanup;
		}
		for (int e = 0; e < n; e++) {
			struct lean_connection *conn = &c[events[e].data.u32];
			if (conn->note == SIZE_MAX)
				continue;
			int before = conn->fd;
			if (lean_send(conn) != 0 || lean_watch(epoll_fd, conn, events[e].data.u32) != 0)
				goto cleanup;
			int answered = lean_receive(&load, conn);
			if (answered < 0)
				goto cleanup;
			if (answered == 0)
				continue;
			if (conn->fd != before) {
				struct epoll_event event = {.events = EPOLLIN | EPOLLET,
				                            .data.u32 = events[e].data.u32};
				c[events[e].data.u32].watching_output = 0;
				if (epoll_ctl(epoll_fd, EPOLL_CTL_ADD, conn->fd, &event) != 0) {
					harness_fail("epoll_ctl: %s", strerror(errno));
					goto cleanup;
				}
			}
			if (lean_start(&load, conn) != 0 || lean_send(conn) != 0 ||
			    lean_watch(epoll_fd, conn, events[e].data.u32) != 0)
				goto cleanup;
			busy -= conn->note == SIZE_MAX;
		}
	}
	out->elapsed = harness_now() - start;
	out->accepted = load.completed;
	if (load.completed > 0) {
		uint32_t *sorted = malloc(load.completed * sizeof *sorted);
		size_t m = 0;
		if (sorted) {
			for (size_t i = 0; i < count; i++)
				if (receipts[i].len > 0)
					sorted[m++] = load.latency_us[i];
			qsort(sorted, m, sizeof *sorted, compare_latency);
			if (m > 0) {
				out->p50_ms = sorted[m / 2] / 1000.0;
				out->p99_ms = sorted[(m * 99) / 100 < m ? (m * 99) / 100 : m - 1] / 1000.0;
			}
			free(sorted);
		}
		rc = 0;
	} else {
		harness_fail("no registration was accepted within %.0f s", seconds);
	}
cleanup:
	if (rc != 0)
		harness_child_log_tail(&authority->dirauthd);
	for (unsigned k = 0; k < opened; k++) {
		if (c[k].fd >= 0)
			close(c[k].fd);
		buffer_free(&c[k].request);
		buffer_free(&c[k].in);
	}
	if (epoll_fd >= 0)
		close(epoll_fd);
	free(c);
	free(load.latency_us);
	return rc;
}

static void usage(FILE *out)
{
	fprintf(out,
	        "usage: bench_authority [options]\n"
	        "  --dirauthd PATH        the dirauthd binary (default: ../server/dirauthd next to this "
	        "program)\n"
	        "  --signer PATH          the dirauth-signer binary (default: ../signer/dirauth-signer)\n"
	        "  --registrations N      signed registrations of distinct services to POST (default 20000)\n"
	        "  --threads M            client connections, keep-alive (default 64, at most 1024)\n"
	        "  --client epoll|curl    one epoll thread driving the M connections (default), or M\n"
	        "                         threads with a curl handle each\n"
	        "  --openssl-seconds S    length of `openssl speed ed25519`, 0 to skip it (default 3)\n"
	        "  --verify-seconds S     length of the in-process EVP verify anchor (default 2)\n"
	        "  --disk-seconds S       length of the disk anchor (random page writes), 0 to skip it\n"
	        "                         (default 1)\n"
	        "  --post-seconds S       time bound of the registration phase (default 300)\n"
	        "  --perf FILE            system-wide perf record -g of the POST phase into FILE\n"
	        "  --http KEYS            extra keys of dirauthd's http mapping, e.g. \"threads: 2\"\n"
	        "  --no-snapshot          do not publish and check the snapshot afterwards\n"
	        "  --replace              post every service once before the clock starts, then time\n"
	        "                         the registrations that replace them (sequence 2, the same\n"
	        "                         endpoints): a provider's refresh rather than a new service\n"
	        "  --system-clock         the system clock, as in production, instead of a file clock that\n"
	        "                         dirauthd and the signer read from disk at every registration;\n"
	        "                         implies --no-snapshot (epochs of a day)\n"
	        "  --temp-dir DIR         where the temporary directories go (default $TMPDIR or /tmp)\n");
}

/* --client: "epoll" or "curl". */
static int take_client(void *curl_client, const char *value)
{
	if (strcmp(value, "curl") != 0 && strcmp(value, "epoll") != 0)
		return -1;
	*(int *)curl_client = strcmp(value, "curl") == 0;
	return 0;
}

/* --disk-seconds: 0 skips the disk anchor. */
static int take_disk_seconds(void *disk_seconds, const char *value)
{
	*(double *)disk_seconds = 0;
	return strcmp(value, "0") == 0 || harness_parse_seconds(value, disk_seconds) == 0 ? 0 : -1;
}

static int parse_options(int argc, char **argv, struct options *o, struct harness *harness)
{
	const struct harness_program_options programs = {
	    .dirauthd = o->dirauthd, .signer = o->signer, .temp_parent = &harness->temp_parent};
	const struct harness_option options[] = {
	    HARNESS_OPTION_FLAG("--no-snapshot", &o->skip_snapshot),
	    HARNESS_OPTION_FLAG("--system-clock", &o->system_clock),
	    HARNESS_OPTION_FLAG("--replace", &o->replace),
	    HARNESS_OPTION_TEXT("--perf", &o->perf_output),
	    HARNESS_OPTION_TEXT("--http", &o->http),
	    HARNESS_OPTION_CALL("--client", take_client, &o->curl_client),
	    HARNESS_OPTION_COUNT("--registrations", &o->registrations, 1, BENCH_MAX_COUNT),
	    HARNESS_OPTION_UNSIGNED("--threads", &o->threads, 1, HARNESS_MAX_THREADS),
	    HARNESS_OPTION_UNSIGNED("--openssl-seconds", &o->openssl_seconds, 0, 60),
	    HARNESS_OPTION_SECONDS("--verify-seconds", &o->verify_seconds),
	    HARNESS_OPTION_CALL("--disk-seconds", take_disk_seconds, &o->disk_seconds),
	    HARNESS_OPTION_SECONDS("--post-seconds", &o->post_seconds),
	};
	memset(o, 0, sizeof(*o));
	harness_program_defaults(&programs);
	o->registrations = 20000;
	o->threads = 64; /* enough for group commits of about twenty */
	o->openssl_seconds = 3;
	o->verify_seconds = 2;
	o->disk_seconds = 1;
	o->post_seconds = 300;
	if (harness_parse_options("bench_authority", argc, argv, options,
	                          sizeof(options) / sizeof(options[0]), &programs, usage) != 0)
		return -1;
	if (o->system_clock)
		o->skip_snapshot = 1; /* epochs of a day */
	if (harness_programs_check("bench_authority", o->dirauthd, o->signer) != 0)
		return -1;
	return 0;
}

static void print_row(const char *figure, const char *value, const char *anchor, double ratio)
{
	char line[256], ratio_text[32] = "";
	if (ratio > 0)
		snprintf(ratio_text, sizeof(ratio_text), "%.3f", ratio);
	snprintf(line, sizeof(line), "%-44s %-22s %-30s %s", figure, value, anchor, ratio_text);
	size_t len = strlen(line);
	while (len > 0 && line[len - 1] == ' ')
		line[--len] = 0;
	puts(line);
}

int main(int argc, char **argv)
{
	struct harness harness;
	struct options o;
	struct harness_authority authority;
	struct harness_child perf = {0};
	struct buffer *notes = NULL, *receipts = NULL;
	int rc = 1;
	memset(&harness, 0, sizeof(harness));
	memset(&authority, 0, sizeof(authority));
	if (parse_options(argc, argv, &o, &harness) != 0)
		return 2;
	if (harness_start(&harness) != 0)
		goto done;

	double openssl_verify = 0, openssl_sign = 0, evp_verify = 0;
	double openssl_verify_before = 0, openssl_sign_before = 0, openssl_verify_after = 0,
	       openssl_sign_after = 0;
	double all_cores_before = 0, all_cores_after = 0, all_cores = 0; /* -multi: 0 on one core */
	char load_before[64], load_after[64];
	notes = calloc(o.registrations, sizeof(*notes));
	receipts = calloc(o.registrations, sizeof(*receipts));
	if (!notes || !receipts) {
		harness_fail("out of memory");
		goto cleanup;
	}
	printf("building %zu signed registrations...\n", o.registrations);
	fflush(stdout);
	struct harness_authority_options authority_options = {.dirauthd = o.dirauthd,
	                                                      .signer = o.signer,
	                                                      .connections = o.threads,
	                                                      .http = o.http,
	                                                      .system_clock = o.system_clock};
	if (harness_authority_prepare(&harness, &authority_options, &authority) != 0 ||
	    harness_registrations(authority.provider, 0, o.registrations, 1, authority.now, 2, notes) != 0)
		goto cleanup;

	if (o.openssl_seconds) {
		if (openssl_anchor(&harness, o.openssl_seconds, "", &openssl_verify_before,
		                   &openssl_sign_before, &all_cores_before) != 0)
			goto cleanup;
	}
	printf("in-process EVP verify rate for %.1f s...\n", o.verify_seconds);
	fflush(stdout);
	if (harness_evp_verify_rate(notes[0].data, notes[0].len, o.verify_seconds, &evp_verify) != 0)
		goto cleanup;

	double disk_rate = 0;
	if (o.disk_seconds > 0) {
		printf("random 4 KiB page writes in the data directory's file system for %.1f s...\n",
		       o.disk_seconds);
		fflush(stdout);
		disk_rate = disk_page_rate(authority.dir, BENCH_DISK_ROUND_PAGES, o.disk_seconds);
	}

	if (harness_authority_start(&authority) != 0)
		goto cleanup;
	pid_t committer = committer_thread(authority.dirauthd.pid);
	if (o.replace) {
		/* The store holds every service first; what is timed replaces them. */
		struct harness_posted loaded;
		printf("storing the %zu services at sequence 1 (not timed)...\n", o.registrations);
		fflush(stdout);
		int loaded_rc = lean_post(&authority, notes, o.registrations, o.threads, o.post_seconds,
		                          receipts, &loaded);
		harness_buffers_free(notes, o.registrations);
		harness_buffers_free(receipts, o.registrations);
		if (loaded_rc != 0 || loaded.accepted != o.registrations ||
		    harness_registrations(authority.provider, 0, o.registrations, 2, authority.now, 2,
		                          notes) != 0) {
			harness_fail("could not store the services to replace");
			goto cleanup;
		}
	}
	if (o.perf_output && perf_start(&harness, o.perf_output, &perf) != 0)
		goto cleanup;
	printf("posting %zu registrations%s over %u connections (%s)...\n", o.registrations,
	       o.replace ? " that replace stored ones" : "", o.threads,
	       o.curl_client ? "a curl thread each" : "one epoll thread");
	fflush(stdout);
	struct cpu_sample before, after;
	struct committer_sample committer_before, committer_after;
	struct harness_posted posted;
	double commits_before = 0, commits_after = 0;
	harness_metric(&authority, "dirauth_store_commits_total", &commits_before);
	harness_load_average(load_before);
	committer_sample(&authority, committer, &committer_before);
	cpu_sample(&authority, &before);
	int posted_rc = o.curl_client ? harness_post(&authority, notes, o.registrations, o.threads,
	                                             o.post_seconds, receipts, &posted)
	                              : lean_post(&authority, notes, o.registrations, o.threads,
	                                          o.post_seconds, receipts, &posted);
	cpu_sample(&authority, &after);
	committer_sample(&authority, committer, &committer_after);
	harness_load_average(load_after);
	perf_stop(&perf);
	if (posted_rc != 0)
		goto cleanup;
	/* The machine's single-thread speed moves by tens of percent over minutes on a shared host:
	 * the anchor is measured on both sides of the POST phase, and the figure is against their
	 * mean. */
	if (o.openssl_seconds) {
		if (openssl_anchor(&harness, o.openssl_seconds, " again", &openssl_verify_after,
		                   &openssl_sign_after, &all_cores_after) != 0)
			goto cleanup;
		openssl_verify = (openssl_verify_before + openssl_verify_after) / 2;
		openssl_sign = (openssl_sign_before + openssl_sign_after) / 2;
		all_cores = (all_cores_before + all_cores_after) / 2;
	}
	harness_metric(&authority, "dirauth_store_commits_total", &commits_after);
	if (posted.timed_out)
		printf("time bound of %.0f s reached: %zu of %zu registrations posted\n", o.post_seconds,
		       posted.accepted, o.registrations);

	uint64_t publish_epoch = 0;
	if (harness_check_receipts(&authority, notes, receipts, o.registrations, &publish_epoch) != 0)
		goto cleanup;
	double publish_seconds = 0;
	struct snapshot_header header;
	if (!o.skip_snapshot) {
		printf("every receipt checked; moving the clock to epoch %llu...\n",
		       (unsigned long long)publish_epoch);
		fflush(stdout);
		double start = harness_now();
		if (harness_set_clock(&authority, publish_epoch * authority.epoch_length) != 0 ||
		    harness_wait_snapshot(&authority, publish_epoch, posted.accepted, BENCH_SNAPSHOT_SECONDS,
		                          &header) != 0)
			goto cleanup;
		publish_seconds = harness_now() - start;
	}

	double rate = (double)posted.accepted / posted.elapsed;
	double n = posted.accepted ? (double)posted.accepted : 1;
	double dirauthd_us = (after.dirauthd - before.dirauthd) / n * 1e6;
	double signer_us = (after.signer - before.signer) / n * 1e6;
	double client_us = (after.self - before.self) / n * 1e6;
	double busy = after.busy - before.busy, idle = after.idle - before.idle;
	double others = busy - (after.dirauthd - before.dirauthd) - (after.signer - before.signer) -
	                (after.self - before.self);
	if (others < 0)
		others = 0;
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	char value[64], anchor[64], figure[96];
	printf("\ndirauth ingest%s: %ld online cores, %u client connections (%s) on the same machine, data "
	       "dir on %s, %s%s%s\n",
	       o.replace ? " (registrations replacing stored ones)" : "", cores, o.threads,
	       o.curl_client ? "curl, a thread each" : "one epoll thread",
	       harness_filesystem_note(authority.dir),
	       o.system_clock ? "system clock" : "file clock (read from disk at each registration)",
	       o.http ? ", http: " : "", o.http ? o.http : "");
	printf("load average before / after the POST phase: %s / %s\n", load_before, load_after);
	printf("processes: dirauthd pid %d, dirauth-signer pid %d, this client pid %d\n",
	       (int)authority.dirauthd.pid, (int)authority.signer.pid, (int)getpid());
	printf("%-44s %-22s %-30s %s\n", "figure", "value", "anchor", "ratio");
	printf("%-44s %-22s %-30s %s\n", "------", "-----", "------", "-----");
	if (o.openssl_seconds) {
		snprintf(value, sizeof(value), "%.0f /s", openssl_verify);
		snprintf(anchor, sizeof(anchor), "before %.0f, after %.0f", openssl_verify_before,
		         openssl_verify_after);
		print_row("openssl speed ed25519 verify, one thread", value, anchor, 0);
		snprintf(value, sizeof(value), "%.0f /s", openssl_sign);
		snprintf(anchor, sizeof(anchor), "before %.0f, after %.0f", openssl_sign_before,
		         openssl_sign_after);
		print_row("openssl speed ed25519 sign, one thread", value, anchor, 0);
		if (all_cores > 0) {
			/* What the cores verify together: below cores x one thread's rate when they share
			 * the host's resources, the machine's own ceiling for the parallel work. */
			snprintf(figure, sizeof(figure), "openssl speed ed25519 verify, -multi %ld", cores);
			snprintf(value, sizeof(value), "%.0f /s", all_cores);
			snprintf(anchor, sizeof(anchor), "before %.0f, after %.0f", all_cores_before,
			         all_cores_after);
			print_row(figure, value, anchor, all_cores / openssl_verify);
		}
	}
	snprintf(value, sizeof(value), "%.0f /s", evp_verify);
	print_row("EVP verify (crypto_ed25519_verify), one thread", value, "", 0);
	snprintf(figure, sizeof(figure), "durable %s (%zu x 202)",
	         o.replace ? "replacing registrations" : "registrations", posted.accepted);
	snprintf(value, sizeof(value), "%.0f /s", rate);
	if (o.openssl_seconds) {
		snprintf(anchor, sizeof(anchor), "openssl verify %.0f /s", openssl_verify);
		print_row(figure, value, anchor, rate / openssl_verify);
		figure[0] = 0;
		if (all_cores > 0) {
			snprintf(anchor, sizeof(anchor), "-multi %ld verify %.0f /s", cores, all_cores);
			print_row(figure, value, anchor, rate / all_cores);
		}
	}
	snprintf(anchor, sizeof(anchor), "EVP verify %.0f /s", evp_verify);
	print_row(figure, value, anchor, rate / evp_verify);
	snprintf(value, sizeof(value), "%.2f / %.2f ms", posted.p50_ms, posted.p99_ms);
	print_row("registration latency p50 / p99", value, "", 0);
	double commits = commits_after - commits_before;
	snprintf(value, sizeof(value), "%.1f", commits > 0 ? n / commits : 0);
	print_row("registrations per group commit", value, "", 0);
	if (!o.skip_snapshot) {
		snprintf(figure, sizeof(figure), "snapshot published (%zu records)", posted.accepted);
		snprintf(value, sizeof(value), "%.2f s", publish_seconds);
		print_row(figure, value, "", 0);
	}
	printf("\nCPU during the POST phase (%.2f s wall, %.2f core-seconds available):\n", posted.elapsed,
	       busy + idle);
	printf("  dirauthd        %7.1f us per registration (%4.1f%% of the machine)\n", dirauthd_us,
	       100 * (after.dirauthd - before.dirauthd) / (busy + idle));
	printf("  dirauth-signer  %7.1f us per registration (%4.1f%%)\n", signer_us,
	       100 * (after.signer - before.signer) / (busy + idle));
	printf("  client          %7.1f us per registration (%4.1f%%)\n", client_us,
	       100 * (after.self - before.self) / (busy + idle));
	printf("  other processes %7.1f core-seconds (%4.1f%%), idle %.1f core-seconds (%4.1f%%)\n", others,
	       100 * others / (busy + idle), idle, 100 * idle / (busy + idle));
	double per_registration = (dirauthd_us + signer_us + client_us) / 1e6;
	double floor_us = 1e6 / (o.openssl_seconds ? openssl_verify : evp_verify);
	printf("  one verification costs %.1f us on one core; one registration costs %.1f us of CPU in all\n",
	       floor_us, per_registration * 1e6);
	if (per_registration > 0) {
		double anchor_rate = o.openssl_seconds ? openssl_verify : evp_verify;
		printf("  at that cost, %.1fx the verify rate (%.0f /s) needs %.2f cores; %ld cores give at "
		       "most %.0f "
		       "/s (%.3fx)\n",
		       BENCH_TARGET, BENCH_TARGET * anchor_rate,
		       BENCH_TARGET * anchor_rate * per_registration, cores, (double)cores / per_registration,
		       (double)cores / per_registration / anchor_rate);
		if (all_cores > 0)
			printf("  with every core verifying, one verification costs %.1f us of a core: one "
			       "registration costs %.2f verifications\n",
			       1e6 * (double)cores / all_cores, per_registration * all_cores / (double)cores);
	}
	if (committer)
		print_committer(&committer_before, &committer_after, posted.elapsed, n, commits, disk_rate,
		                o.openssl_seconds ? openssl_verify : evp_verify);
	if (o.perf_output)
		printf("\nperf profile of the POST phase: %s (perf report -i %s --sort comm,dso)\n",
		       o.perf_output, o.perf_output);
	rc = 0;
cleanup:
	perf_stop(&perf);
	harness_authority_stop(&authority);
	harness_buffers_free(notes, notes ? o.registrations : 0);
	harness_buffers_free(receipts, receipts ? o.registrations : 0);
	free(notes);
	free(receipts);
done:
	harness_finish(&harness);
	if (rc != 0)
		fprintf(stderr, "bench: FAILED\n");
	return rc;
}
