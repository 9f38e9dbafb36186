/*
 * bench_flood.c: what a flood of slow and idle connections costs a legitimate client of dirauthd,
 * each figure printed next to the same figure measured without the flood in the same run.
 *
 * dirauthd's connection guard (server/http/guard.h) holds a connection that has not sent a
 * complete request head in its own pending queue, gives every head and body a deadline however it
 * trickles, and evicts the connections that wait longest when crowded, so that a flood from any
 * number of addresses only displaces itself. The target (issue 7): under 1,000+ such connections
 * a legitimate client on another address gets the latest snapshot header with a p99 latency at
 * most twice its unloaded p99, and registrations still commit. This benchmark measures exactly
 * that, on loopback, against the real binaries:
 *   1. dirauth-signer and dirauthd as bench/harness.h starts them (example keys, a file clock),
 *      with dirauthd's own http limits unless --http adds keys; a few seed registrations and
 *      their snapshot, so that /v1/<ns>/snapshots/latest answers;
 *   2. unloaded: a GET client (one keep-alive connection from --client-address) asks for the
 *      latest header N times, one every --get-interval-ms, while a registration client (one
 *      keep-alive connection from --register-address) POSTs pre-signed registrations back to
 *      back; p50/p99 of the first, 202s per second of the second;
 *   3. the flood (bench/flood.h), from --sources addresses starting at --source-first:
 *      connections that trickle a request head one byte per --interval-ms, idle ones that send
 *      nothing, and ones that send a POST head at once and trickle its body; every one that
 *      dirauthd closes is opened again at once, so the flood keeps its size;
 *   4. after --warmup-seconds (by default longer than dirauthd's head deadline, so that the
 *      measure sees hostile connections being closed and coming back), the same two clients
 *      again, on the same addresses, with new registrations; then the flood stops;
 *   5. steps 2 to 4 again, --rounds times in all, and a last unloaded phase, so that the
 *      unloaded and the flooded phases alternate over the same minutes of a machine whose other
 *      work comes and goes; each condition's figures pool its phases;
 *   6. the clock moves to the epoch the receipts promised and that snapshot must hold every
 *      registration that got a 202.
 * During the flooded phases GET /v1/metrics is sampled every 250 ms for the connections dirauthd
 * holds, and its counters of refusals and evictions are read before the first flood and after the
 * last; the lines dirauthd wrote to its log meanwhile are counted and checked: aggregate lines
 * only, never a client address.
 *
 * Exit status 0 when the run completed (the verdict is a line of the output, not the status: this
 * is a measure, not a test), 1 when a step failed, 2 for a bad option. With --check the status
 * also says whether the behaviours of the verdict held (every GET answered with the latest
 * header, every registration committed and published, at least one aggregate log line and no
 * other, no address), never whether the speed did: ctest runs it so on a small flood
 * (bench_smoke_flood). scripts/bench.sh --flood runs the full one.
 */
#include "bench/flood.h"
#include "bench/harness.h"

#include "base/buffer.h"
#include "server/http/guard.h"

#include <curl/curl.h>

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FLOOD_SEED_RECORDS     8
#define FLOOD_MAX_COUNT        1000000
#define FLOOD_MAX_CONNECTIONS  60000
#define FLOOD_SNAPSHOT_SECONDS 120.0
#define FLOOD_REQUEST_SECONDS  30L
#define FLOOD_SAMPLE_MS        250
#define FLOOD_SETTLE_SECONDS   1.0 /* after a flood stops, before the next phase */
#define FLOOD_MAX_ROUNDS       20
#define FLOOD_FD_SPARE         512 /* descriptors beyond the hostile ones: clients, children, files */
#define FLOOD_AGGREGATE_PREFIX "dirauthd: http: in the last"

/* The refusal and eviction reasons of dirauth_http_refused_total are the guard's own table
 * (server/http/guard.h): their labels, and which close a connection that was let in (evicted)
 * rather than turn one away. */

struct bench_options {
	char dirauthd[PATH_MAX];
	char signer[PATH_MAX];
	const char *temp_parent;
	size_t trickle; /* connections trickling a request head */
	size_t idle;    /* connections sending nothing */
	size_t body;    /* connections sending a head, then trickling its body */
	size_t sources; /* source addresses of the flood */
	struct in_addr source_first;
	struct in_addr client_address;   /* the GET client's */
	struct in_addr register_address; /* the registration client's */
	size_t gets;
	size_t get_interval_ms; /* the GET client's pace */
	size_t registrations;   /* at most, per phase */
	size_t interval_ms;     /* one byte per connection per interval */
	double warmup_seconds;
	double measure_seconds; /* bound of each measured phase */
	double log_seconds;     /* how long after the flood its log lines are still counted */
	size_t flood_nice;      /* the flood thread's nice value */
	const char *http;       /* extra keys of dirauthd's http mapping, or NULL */
	size_t rounds;          /* of an unloaded phase and a flooded one; one more unloaded at the end */
	int check;              /* the exit status says whether the behaviours held */
};

struct bench {
	struct bench_options options;
	struct harness harness;
	struct harness_authority authority;
	unsigned port;
	struct buffer latest; /* the latest header note, as served before the measures */
};

static int bench_stopped(struct bench *bench)
{
	return harness_stopped(&bench->harness);
}

static void address_text(struct in_addr address, char out[INET_ADDRSTRLEN])
{
	if (!inet_ntop(AF_INET, &address, out, INET_ADDRSTRLEN))
		snprintf(out, INET_ADDRSTRLEN, "?");
}

static struct in_addr address_plus(struct in_addr first, size_t offset)
{
	struct in_addr out = {.s_addr = htonl(ntohl(first.s_addr) + (uint32_t)offset)};
	return out;
}

static size_t http_collect(char *data, size_t size, size_t count, void *context)
{
	if (buffer_append(context, data, size * count) != 0)
		return 0;
	return size * count;
}

/* Moves the clock to epoch's start and waits until the latest header is of that epoch (or later),
 * verifies and holds records records; the note goes to bench->latest. */
static int wait_for_snapshot(struct bench *bench, uint64_t epoch, size_t records)
{
	struct snapshot_header header;
	char url[128];
	long status = 0;
	if (harness_set_clock(&bench->authority, epoch * bench->authority.epoch_length) != 0 ||
	    harness_wait_snapshot(&bench->authority, epoch, records, FLOOD_SNAPSHOT_SECONDS, &header) != 0)
		return -1;
	snprintf(url, sizeof(url), "%s/v1/%s/snapshots/latest", bench->authority.url, HARNESS_NAMESPACE);
	if (harness_http(url, NULL, NULL, &status, &bench->latest, NULL, 0) != 0 || status != 200) {
		harness_fail("GET %s answered %ld", url, status);
		return -1;
	}
	return 0;
}

/* --- the legitimate clients ----------------------------------------------------------------- */

/* One client: one curl handle bound to its source address, reused, so one keep-alive connection
 * (libcurl opens another only if dirauthd closed it). */
struct client {
	struct bench *bench;
	struct in_addr source;
	const struct buffer *notes; /* registration client: the notes to POST; NULL for the GET client */
	struct buffer *receipts;
	size_t count;
	double seconds;
	uint32_t *latency_us; /* of each answered request */
	size_t answered;      /* 200 (GET) or 202 (POST) */
	size_t failed;        /* any other answer, or a transport error */
	size_t wrong;         /* a 200 whose body was not the latest header */
	double elapsed;       /* first request to last answer */
	char first_failure[256];
	atomic_int done;         /* the thread has finished */
	double interval;         /* seconds from one request's start to the next one's; 0: back to back */
	const atomic_int *until; /* stop once this is set (the GET client's done), or NULL */
};

static void client_failure(struct client *client, const char *format, ...)
    __attribute__((format(printf, 2, 3)));
static void client_failure(struct client *client, const char *format, ...)
{
	client->failed++;
	if (client->first_failure[0])
		return;
	va_list args;
	va_start(args, format);
	vsnprintf(client->first_failure, sizeof(client->first_failure), format, args);
	va_end(args);
}

static void *client_main(void *context)
{
	struct client *client = context;
	struct bench *bench = client->bench;
	char url[128], interface[32] = "host!";
	address_text(client->source, interface + 5);
	if (client->notes)
		snprintf(url, sizeof(url), "%s/v1/registrations", bench->authority.url);
	else
		snprintf(url, sizeof(url), "%s/v1/%s/snapshots/latest", bench->authority.url,
		         HARNESS_NAMESPACE);
	CURL *curl = curl_easy_init();
	if (!curl) {
		client_failure(client, "curl_easy_init failed");
		atomic_store(&client->done, 1);
		return NULL;
	}
	struct curl_slist *headers = curl_slist_append(NULL, "Expect:");
	struct buffer body;
	buffer_init(&body);
	curl_easy_setopt(curl, CURLOPT_URL, url);
	curl_easy_setopt(curl, CURLOPT_INTERFACE, interface);
	curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT, FLOOD_REQUEST_SECONDS);
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(curl, CURLOPT_NOPROXY, "*");
	curl_easy_setopt(curl, CURLOPT_TCP_NODELAY, 1L);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, http_collect);
	double start = harness_now(), deadline = start + client->seconds, end = start;
	for (size_t i = 0; i < client->count && !bench_stopped(bench) && harness_now() < deadline; i++) {
		if (client->until && atomic_load(client->until))
			break;
		/* A paced client starts request i at start + i * interval, whatever the previous ones
		 * took, so that a phase samples seconds of the machine rather than an instant. */
		double due = start + (double)i * client->interval, wait = due - harness_now();
		if (wait > 0)
			harness_sleep_ms((long)(wait * 1000.0));
		struct buffer *answer = client->notes ? &client->receipts[i] : &body;
		buffer_reset(answer);
		curl_easy_setopt(curl, CURLOPT_WRITEDATA, answer);
		if (client->notes) {
			curl_easy_setopt(curl, CURLOPT_POSTFIELDS, (const char *)client->notes[i].data);
			curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)client->notes[i].len);
		}
		double before = harness_now();
		CURLcode rc = curl_easy_perform(curl);
		end = harness_now();
		long status = 0;
		curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
		long expected = client->notes ? 202 : 200;
		if (rc != CURLE_OK) {
			client_failure(client, "request %zu: %s", i, curl_easy_strerror(rc));
			buffer_reset(answer);
			continue;
		}
		if (status != expected) {
			client_failure(client, "request %zu answered %ld", i, status);
			buffer_reset(answer);
			continue;
		}
		if (!client->notes &&
		    (body.len != bench->latest.len || memcmp(body.data, bench->latest.data, body.len) != 0))
			client->wrong++;
		double micros = (end - before) * 1e6;
		client->latency_us[client->answered++] = micros > 4e9 ? UINT32_MAX : (uint32_t)micros;
	}
	client->elapsed = end - start;
	buffer_free(&body);
	curl_slist_free_all(headers);
	curl_easy_cleanup(curl);
	atomic_store(&client->done, 1);
	return NULL;
}

static int compare_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

/* What one phase (unloaded or under the flood) measured. */
struct phase {
	const char *name;
	struct client get, post;
	size_t receipts_checked;
	double seconds, dirauthd_cpu; /* wall time of the phase, and dirauthd's CPU time in it */
	char load[64];                /* at the end of the phase */
};

/* --- the metrics ---------------------------------------------------------------------------- */

struct metrics {
	uint64_t reasons[GUARD_REASON_COUNT];
	uint64_t pending, served;
};

/* Reads dirauthd's /v1/metrics over handle (keep-alive, from 127.0.0.1). */
static int metrics_read(CURL *handle, struct buffer *body, struct metrics *out)
{
	memset(out, 0, sizeof(*out));
	buffer_reset(body);
	curl_easy_setopt(handle, CURLOPT_WRITEDATA, body);
	long status = 0;
	if (curl_easy_perform(handle) != CURLE_OK)
		return -1;
	curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &status);
	if (status != 200 || buffer_append(body, "", 1) != 0)
		return -1;
	const char *text = (const char *)body->data;
	for (int r = 0; r < GUARD_REASON_COUNT; r++) {
		char name[96];
		snprintf(name, sizeof(name), "\ndirauth_http_refused_total{reason=\"%s\"} ",
		         http_guard_reason_name((enum http_guard_reason)r));
		const char *at = strstr(text, name);
		if (at)
			out->reasons[r] = strtoull(at + strlen(name), NULL, 10);
	}
	const char *pending = strstr(text, "\ndirauth_http_connections{state=\"pending\"} ");
	const char *served = strstr(text, "\ndirauth_http_connections{state=\"served\"} ");
	if (!pending || !served)
		return -1;
	out->pending = strtoull(pending + strlen("\ndirauth_http_connections{state=\"pending\"} "), NULL, 10);
	out->served = strtoull(served + strlen("\ndirauth_http_connections{state=\"served\"} "), NULL, 10);
	return 0;
}

static CURL *metrics_handle(const struct bench *bench)
{
	char url[128];
	snprintf(url, sizeof(url), "%s/v1/metrics", bench->authority.url);
	CURL *curl = curl_easy_init();
	if (!curl)
		return NULL;
	curl_easy_setopt(curl, CURLOPT_URL, url);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT, FLOOD_REQUEST_SECONDS);
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(curl, CURLOPT_NOPROXY, "*");
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, http_collect);
	return curl;
}

/* --- a measured phase ---------------------------------------------------------------------- */

/* The flood's figures over the measured phase. */
struct flood_figures {
	uint64_t peak_held, peak_pending, peak_served; /* the sample of most connections held */
	size_t samples;
	struct metrics before, after;
};

/* Runs the GET client and the registration client together; while they run, samples the
 * metrics into figures (when not NULL). */
static int phase_run(struct bench *bench, struct phase *phase, const struct buffer *notes,
                     struct flood_figures *figures)
{
	const struct bench_options *o = &bench->options;
	struct client *get = &phase->get, *post = &phase->post;
	get->bench = post->bench = bench;
	get->source = o->client_address;
	post->source = o->register_address;
	get->count = o->gets;
	get->interval = (double)o->get_interval_ms / 1000.0;
	post->until = &get->done;
	post->count = o->registrations;
	get->seconds = post->seconds = o->measure_seconds;
	post->notes = notes;
	get->latency_us = calloc(o->gets, sizeof(uint32_t));
	post->latency_us = calloc(o->registrations, sizeof(uint32_t));
	post->receipts = calloc(o->registrations, sizeof(struct buffer));
	if (!get->latency_us || !post->latency_us || !post->receipts) {
		harness_fail("out of memory");
		return -1;
	}
	for (size_t i = 0; i < o->registrations; i++)
		buffer_init(&post->receipts[i]);
	pthread_t get_thread, post_thread;
	double cpu_before = harness_process_cpu(bench->authority.dirauthd.pid), start = harness_now();
	if (pthread_create(&get_thread, NULL, client_main, get) != 0)
		return -1;
	if (pthread_create(&post_thread, NULL, client_main, post) != 0) {
		pthread_join(get_thread, NULL);
		return -1;
	}
	CURL *handle = figures ? metrics_handle(bench) : NULL;
	struct buffer body;
	buffer_init(&body);
	while (!atomic_load(&get->done) || !atomic_load(&post->done)) {
		if (handle) {
			struct metrics sample;
			if (metrics_read(handle, &body, &sample) == 0) {
				figures->samples++;
				if (sample.pending + sample.served > figures->peak_held) {
					figures->peak_held = sample.pending + sample.served;
					figures->peak_pending = sample.pending;
					figures->peak_served = sample.served;
				}
			}
		}
		harness_sleep_ms(figures ? FLOOD_SAMPLE_MS : 20);
	}
	pthread_join(get_thread, NULL);
	pthread_join(post_thread, NULL);
	phase->seconds = harness_now() - start;
	phase->dirauthd_cpu = harness_process_cpu(bench->authority.dirauthd.pid) - cpu_before;
	buffer_free(&body);
	if (handle)
		curl_easy_cleanup(handle);
	harness_load_average(phase->load);
	return bench_stopped(bench) ? -1 : 0;
}

/* Checks every receipt of the phase (harness_check_receipts); *publish_epoch gets the latest
 * promised epoch when it is later than what it holds. */
static int phase_check_receipts(const struct bench *bench, struct phase *phase, const struct buffer *notes,
                                uint64_t *publish_epoch)
{
	uint64_t epoch = 0;
	if (harness_check_receipts(&bench->authority, notes, phase->post.receipts, phase->post.count,
	                           &epoch) != 0) {
		harness_fail("%s: a receipt does not answer its registration", phase->name);
		return -1;
	}
	for (size_t i = 0; i < phase->post.count; i++)
		phase->receipts_checked += phase->post.receipts[i].len > 0;
	if (epoch > *publish_epoch)
		*publish_epoch = epoch;
	return 0;
}

static void phase_clear(struct phase *phase)
{
	free(phase->get.latency_us);
	free(phase->post.latency_us);
	if (phase->post.receipts)
		for (size_t i = 0; i < phase->post.count; i++)
			buffer_free(&phase->post.receipts[i]);
	free(phase->post.receipts);
}

/* --- dirauthd's log ------------------------------------------------------------------------- */

struct log_figures {
	size_t lines, aggregate, with_address;
	char first_other[160]; /* the first line that is not an aggregate line */
};

static off_t file_size(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 ? st.st_size : 0;
}

/* Names the line a client? Every address of the run is in 127.0.0.0/8; a line that holds "127."
 * followed by a digit counts, whatever it says around it. */
static int names_address(const char *line)
{
	for (const char *at = strstr(line, "127."); at; at = strstr(at + 1, "127."))
		if (at[4] >= '0' && at[4] <= '9')
			return 1;
	return 0;
}

/* The lines dirauthd wrote between offsets from and to of its log. */
static void log_count(const char *path, off_t from, off_t to, struct log_figures *out)
{
	memset(out, 0, sizeof(*out));
	FILE *file = fopen(path, "r");
	if (!file || fseeko(file, from, SEEK_SET) != 0) {
		if (file)
			fclose(file);
		return;
	}
	char line[4096];
	while (ftello(file) < to && fgets(line, sizeof(line), file)) {
		out->lines++;
		if (strstr(line, FLOOD_AGGREGATE_PREFIX)) /* after the line's time and epoch */
			out->aggregate++;
		else if (!out->first_other[0])
			snprintf(out->first_other, sizeof(out->first_other), "%.*s", (int)strcspn(line, "\n"),
			         line);
		if (names_address(line))
			out->with_address++;
	}
	fclose(file);
}

/* --- the report ----------------------------------------------------------------------------- */

static double ratio(double value, double anchor)
{
	return anchor > 0 ? value / anchor : 0;
}

/* Several phases of one condition (unloaded, or under the flood) taken together. */
struct pooled {
	double get_p50, get_p99, get_max; /* over every answered GET of the phases */
	double post_rate, post_p99;       /* 202s over the phases' POST time; p99 over all */
	size_t gets, gets_right, posts, receipts;
	size_t get_failed, post_failed;
	const char *first_failure;
	double seconds, dirauthd_cpu;
};

/* Median, 99th percentile and maximum of the latencies of one client of every phase. */
static void pool_percentiles(const struct phase *phases, size_t count, int posts, double *p50, double *p99,
                             double *max)
{
	size_t n = 0;
	*p50 = *p99 = *max = 0;
	for (size_t i = 0; i < count; i++)
		n += posts ? phases[i].post.answered : phases[i].get.answered;
	uint32_t *all = calloc(n ? n : 1, sizeof(uint32_t));
	if (!all || n == 0) {
		free(all);
		return;
	}
	size_t at = 0;
	for (size_t i = 0; i < count; i++) {
		const struct client *c = posts ? &phases[i].post : &phases[i].get;
		memcpy(all + at, c->latency_us, c->answered * sizeof(uint32_t));
		at += c->answered;
	}
	qsort(all, n, sizeof(uint32_t), compare_u32);
	*p50 = all[(n - 1) / 2] / 1000.0;
	*p99 = all[(n - 1) * 99 / 100] / 1000.0;
	*max = all[n - 1] / 1000.0;
	free(all);
}

static void pool(const struct phase *phases, size_t count, struct pooled *out)
{
	double post_elapsed = 0, post_p50 = 0, post_max = 0;
	memset(out, 0, sizeof(*out));
	pool_percentiles(phases, count, 0, &out->get_p50, &out->get_p99, &out->get_max);
	pool_percentiles(phases, count, 1, &post_p50, &out->post_p99, &post_max);
	for (size_t i = 0; i < count; i++) {
		const struct phase *p = &phases[i];
		out->gets += p->get.count;
		out->gets_right += p->get.answered - p->get.wrong;
		out->posts += p->post.answered + p->post.failed;
		out->receipts += p->receipts_checked;
		out->get_failed += p->get.failed;
		out->post_failed += p->post.failed;
		if (!out->first_failure && (p->get.first_failure[0] || p->post.first_failure[0]))
			out->first_failure =
			    p->get.first_failure[0] ? p->get.first_failure : p->post.first_failure;
		post_elapsed += p->post.elapsed;
		out->seconds += p->seconds;
		out->dirauthd_cpu += p->dirauthd_cpu;
		out->post_rate += (double)p->post.answered;
	}
	out->post_rate = post_elapsed > 0 ? out->post_rate / post_elapsed : 0;
}

/* What the flood did over every round, as its side saw it. */
struct flood_totals {
	size_t size, peak_open;
	uint64_t opened, closed, refused, answered, bytes;
	double seconds;      /* from each round's first connect to the end of its measure */
	double dirauthd_cpu; /* dirauthd's CPU time over those seconds */
	double thread_cpu;   /* the flood thread's */
};

static void flood_totals_add(struct flood_totals *totals, const struct flood *flood)
{
	const struct flood_counters *c = flood_counters(flood);
	totals->size = flood_size(flood);
	if (atomic_load(&c->peak_open) > totals->peak_open)
		totals->peak_open = atomic_load(&c->peak_open);
	totals->opened += atomic_load(&c->opened);
	totals->closed += atomic_load(&c->closed);
	totals->refused += atomic_load(&c->refused);
	totals->answered += atomic_load(&c->answered);
	totals->bytes += atomic_load(&c->bytes);
	totals->thread_cpu += flood_cpu_seconds(flood);
}

/* What the run measured besides the phases. */
struct flood_run {
	const struct phase *unloaded, *flooded; /* rounds + 1 and rounds phases */
	size_t rounds;
	const struct flood_totals *flood;
	const struct flood_figures *figures;
	const struct log_figures *log;
	double log_seconds; /* the span of the log lines counted */
	char load_before[64];
	size_t total_records;
	uint64_t epoch;
};

static void print_row_ms(const char *figure, double flooded, double unloaded, const char *note)
{
	printf("%-34s %11.3f ms %11.3f ms %7.2fx%s\n", figure, flooded, unloaded, ratio(flooded, unloaded),
	       note);
}

static void print_row_count(const char *figure, size_t flooded, size_t flooded_of, size_t unloaded,
                            size_t unloaded_of)
{
	char a[40], b[40];
	snprintf(a, sizeof(a), "%zu/%zu", flooded, flooded_of);
	snprintf(b, sizeof(b), "%zu/%zu", unloaded, unloaded_of);
	printf("%-34s %14s %14s\n", figure, a, b);
}

/* Prints the figures and the verdict; returns 1 when the behaviours held (every GET of every
 * phase answered with the latest header, every registration committed, the flood's log lines
 * aggregate ones only, at least one when something was refused or evicted, and no address),
 * whatever the speed. */
static int print_report(const struct bench *bench, const struct flood_run *run)
{
	const struct bench_options *o = &bench->options;
	const struct flood_totals *flood = run->flood;
	const struct flood_figures *figures = run->figures;
	struct pooled unloaded, flooded;
	pool(run->unloaded, run->rounds + 1, &unloaded);
	pool(run->flooded, run->rounds, &flooded);
	char first[INET_ADDRSTRLEN], last[INET_ADDRSTRLEN], client[INET_ADDRSTRLEN],
	    registrar[INET_ADDRSTRLEN];
	address_text(o->source_first, first);
	address_text(address_plus(o->source_first, o->sources - 1), last);
	address_text(o->client_address, client);
	address_text(o->register_address, registrar);
	printf("\ndirauth flood benchmark: dirauthd on 127.0.0.1:%u, http %s\n", bench->port,
	       o->http ? o->http : "defaults");
	printf("flood: %zu trickling heads + %zu idle + %zu trickling bodies = %zu connections from %zu "
	       "addresses (%s-%s), one byte per %zu ms each, reopened when closed; warm-up %.0f s; the "
	       "thread driving it at nice %zu\n",
	       o->trickle, o->idle, o->body, flood->size, o->sources, first, last, o->interval_ms,
	       o->warmup_seconds, o->flood_nice);
	printf("clients: GET /v1/%s/snapshots/latest x %zu per phase, one every %zu ms, from %s; meanwhile "
	       "POST /v1/registrations back to back (at most %zu) from %s; one keep-alive connection each\n",
	       HARNESS_NAMESPACE, o->gets, o->get_interval_ms, client, o->registrations, registrar);
	printf("phases: %zu unloaded and %zu under the flood, alternating (unloaded first and last); "
	       "each column pools its phases\n\n",
	       run->rounds + 1, run->rounds);
	printf("%-34s %14s %14s %8s\n", "figure", "under flood", "unloaded", "ratio");
	print_row_ms("latest header GET p50", flooded.get_p50, unloaded.get_p50, "");
	print_row_ms("latest header GET p99", flooded.get_p99, unloaded.get_p99, "  (target: ratio <= 2)");
	print_row_ms("latest header GET max", flooded.get_max, unloaded.get_max, "");
	print_row_count("GETs answered 200 (right bytes)", flooded.gets_right, flooded.gets,
	                unloaded.gets_right, unloaded.gets);
	printf("%-34s %12.1f/s %12.1f/s %7.2fx\n", "registrations (202, durable)", flooded.post_rate,
	       unloaded.post_rate, ratio(flooded.post_rate, unloaded.post_rate));
	print_row_ms("registration p99", flooded.post_p99, unloaded.post_p99, "");
	print_row_count("registrations committed (receipt)", flooded.receipts, flooded.posts,
	                unloaded.receipts, unloaded.posts);
	double flooded_cpu = ratio(flooded.dirauthd_cpu, flooded.seconds);
	double unloaded_cpu = ratio(unloaded.dirauthd_cpu, unloaded.seconds);
	printf("%-34s %11.1f %% %12.1f %% %7.2fx\n", "dirauthd CPU (of one core)", 100 * flooded_cpu,
	       100 * unloaded_cpu, ratio(flooded_cpu, unloaded_cpu));
	printf("%-34s", "GET p99 ratio by round");
	for (size_t r = 0; r < run->rounds; r++) {
		double p50, p99, max, flooded_p99;
		pool_percentiles(&run->unloaded[r], 2, 0, &p50, &p99, &max);
		pool_percentiles(&run->flooded[r], 1, 0, &p50, &flooded_p99, &max);
		printf(" %.2fx", ratio(flooded_p99, p99));
	}
	printf("  (each against the unloaded phases around it)\n");
	if (flooded.get_failed + flooded.post_failed + unloaded.get_failed + unloaded.post_failed)
		printf(
		    "%-34s GET %zu and POST %zu under the flood, GET %zu and POST %zu unloaded (first: %s)\n",
		    "failed requests", flooded.get_failed, flooded.post_failed, unloaded.get_failed,
		    unloaded.post_failed,
		    flooded.first_failure ? flooded.first_failure
		                          : (unloaded.first_failure ? unloaded.first_failure : "?"));
	printf("%-34s epoch %llu holds all %zu accepted registrations\n", "snapshot after the run",
	       (unsigned long long)run->epoch, run->total_records);

	uint64_t evicted = 0, refused = 0;
	char evicted_parts[512] = "", refused_parts[512] = "";
	for (int r = 0; r < GUARD_REASON_COUNT; r++) {
		uint64_t delta = figures->after.reasons[r] - figures->before.reasons[r];
		if (!delta)
			continue;
		bool evicts = http_guard_reason_row((enum http_guard_reason)r)->evicts;
		char *parts = evicts ? evicted_parts : refused_parts;
		uint64_t *total = evicts ? &evicted : &refused;
		size_t used = strlen(parts);
		snprintf(parts + used, sizeof(evicted_parts) - used, "%s%s %llu", *total ? ", " : "",
		         http_guard_reason_name((enum http_guard_reason)r), (unsigned long long)delta);
		*total += delta;
	}
	printf("\nthe flood, %.1f s in %zu rounds (dirauthd's /v1/metrics, sampled every %d ms during the "
	       "measures, %zu samples; counters from the first hostile connect to the end of the last "
	       "measure):\n",
	       flood->seconds, run->rounds, FLOOD_SAMPLE_MS, figures->samples);
	printf("  held      at most %llu connections at once (%llu waiting for a first head, %llu served)\n",
	       (unsigned long long)figures->peak_held, (unsigned long long)figures->peak_pending,
	       (unsigned long long)figures->peak_served);
	printf("  evicted   %llu%s%s%s\n", (unsigned long long)evicted, evicted ? " (" : "", evicted_parts,
	       evicted ? ")" : "");
	printf("  refused   %llu%s%s%s\n", (unsigned long long)refused, refused ? " (" : "", refused_parts,
	       refused ? ")" : "");
	printf("  the flood's side: %llu connects, %llu closed by dirauthd, %llu refused or not accepted "
	       "within %d s, %llu reads got bytes back, at most %zu open at once, %llu bytes sent (%.0f/s)\n",
	       (unsigned long long)flood->opened, (unsigned long long)flood->closed,
	       (unsigned long long)flood->refused, FLOOD_CONNECT_MS / 1000,
	       (unsigned long long)flood->answered, flood->peak_open, (unsigned long long)flood->bytes,
	       ratio((double)flood->bytes, flood->seconds));
	printf("  CPU       dirauthd %.2f s (%.1f %% of one core), the flood's own thread %.2f s\n",
	       flood->dirauthd_cpu, 100 * ratio(flood->dirauthd_cpu, flood->seconds), flood->thread_cpu);
	printf("  dirauthd's log over %.1f s from the first hostile connect: %zu lines, %zu of them "
	       "aggregate lines, %zu naming an address%s%s\n",
	       run->log_seconds, run->log->lines, run->log->aggregate, run->log->with_address,
	       run->log->first_other[0] ? "; first other line: " : "", run->log->first_other);
	printf("\nload average (1 5 15 min, %ld cores): before %s", sysconf(_SC_NPROCESSORS_ONLN),
	       run->load_before);
	for (size_t r = 0; r < run->rounds; r++)
		printf("; round %zu: %s, %s", r + 1, run->unloaded[r].load, run->flooded[r].load);
	printf("; last: %s\n", run->unloaded[run->rounds].load);
	int p99_met = flooded.get_p99 <= 2 * unloaded.get_p99;
	int all_answered = flooded.gets_right == flooded.gets && unloaded.gets_right == unloaded.gets;
	int committed = 1;
	for (size_t r = 0; r < 2 * run->rounds + 1; r++) {
		const struct phase *phase = r % 2 ? &run->flooded[r / 2] : &run->unloaded[r / 2];
		committed &= phase->post.failed == 0 && phase->receipts_checked > 0 &&
		             phase->receipts_checked == phase->post.answered;
	}
	int log_clean = run->log->with_address == 0 && run->log->lines == run->log->aggregate &&
	                (run->log->aggregate > 0 || evicted + refused == 0);
	printf("verdict: p99 under the flood %.2fx the unloaded p99 (%s), %s, %s, %s\n",
	       ratio(flooded.get_p99, unloaded.get_p99), p99_met ? "target met" : "TARGET MISSED",
	       all_answered ? "every GET answered" : "GETS FAILED",
	       committed ? "every registration committed and published" : "REGISTRATIONS FAILED",
	       log_clean ? "aggregate log lines only" : "LOG NOT AGGREGATE OR NAMING AN ADDRESS");
	return all_answered && committed && log_clean;
}

/* --- options -------------------------------------------------------------------------------- */

static void usage(FILE *out)
{
	fprintf(
	    out,
	    "usage: bench_flood [options]\n"
	    "  --dirauthd PATH         the dirauthd binary (default: ../server/dirauthd next to this "
	    "program)\n"
	    "  --signer PATH           the dirauth-signer binary (default: ../signer/dirauth-signer)\n"
	    "  --trickle N             connections trickling a request head (default 800)\n"
	    "  --idle N                connections that send nothing (default 200)\n"
	    "  --body N                connections sending a head, then trickling the body (default 200)\n"
	    "  --sources N             source addresses of the flood (default 20)\n"
	    "  --source-first ADDR     the first of them (default 127.0.0.2)\n"
	    "  --client-address ADDR   the GET client's address (default 127.0.0.250)\n"
	    "  --register-address ADDR the registration client's address (default 127.0.0.251)\n"
	    "  --interval-ms MS        one byte per connection per MS (default 100)\n"
	    "  --gets N                latest-header GETs per phase (default 2000)\n"
	    "  --get-interval-ms MS    one GET started every MS (default 5; 0: back to back)\n"
	    "  --registrations N       registrations per phase at most, back to back while the GETs run\n"
	    "                          (default 3000)\n"
	    "  --rounds N              rounds of an unloaded phase and a flooded one, then one more\n"
	    "                          unloaded phase (default 3)\n"
	    "  --warmup-seconds S      flood time before each flooded measure (default 12)\n"
	    "  --measure-seconds S     bound of each measured phase (default 120)\n"
	    "  --log-seconds S         after the flood, how long its log lines still count (default 11,\n"
	    "                          more than dirauthd's log interval; every S > 0)\n"
	    "  --flood-nice N          nice value of the thread driving the flood (default 10)\n"
	    "  --http 'K: V, ...'      keys added to dirauthd's http settings (default none)\n"
	    "  --temp-dir DIR          where the temporary directory goes (default $TMPDIR or /tmp)\n"
	    "  --check                 exit 1 when a behaviour of the verdict failed (not the speed)\n");
}

/* An IPv4 address in 127.0.0.0/8: every address of the run must be on loopback. */
static int parse_loopback(const char *text, struct in_addr *out)
{
	return inet_pton(AF_INET, text, out) == 1 && (ntohl(out->s_addr) >> 24) == 127 ? 0 : -1;
}

/* --source-first, --client-address, --register-address: an address of 127.0.0.0/8. */
static int take_loopback(void *address, const char *value)
{
	return parse_loopback(value, address);
}

/* --http: keys of a flow mapping, on one line. */
static int take_http(void *http, const char *value)
{
	*(const char **)http = value;
	return strlen(value) < 1024 && !strpbrk(value, "\n{}") ? 0 : -1;
}

static int parse_options(int argc, char **argv, struct bench_options *o)
{
	const struct harness_program_options programs = {
	    .dirauthd = o->dirauthd, .signer = o->signer, .temp_parent = &o->temp_parent};
	const struct harness_option options[] = {
	    HARNESS_OPTION_FLAG("--check", &o->check),
	    HARNESS_OPTION_COUNT("--trickle", &o->trickle, 0, FLOOD_MAX_CONNECTIONS),
	    HARNESS_OPTION_COUNT("--idle", &o->idle, 0, FLOOD_MAX_CONNECTIONS),
	    HARNESS_OPTION_COUNT("--body", &o->body, 0, FLOOD_MAX_CONNECTIONS),
	    HARNESS_OPTION_COUNT("--sources", &o->sources, 1, 250),
	    HARNESS_OPTION_CALL("--source-first", take_loopback, &o->source_first),
	    HARNESS_OPTION_CALL("--client-address", take_loopback, &o->client_address),
	    HARNESS_OPTION_CALL("--register-address", take_loopback, &o->register_address),
	    HARNESS_OPTION_COUNT("--interval-ms", &o->interval_ms, 1, 60000),
	    HARNESS_OPTION_COUNT("--gets", &o->gets, 1, FLOOD_MAX_COUNT),
	    HARNESS_OPTION_COUNT("--get-interval-ms", &o->get_interval_ms, 0, 60000),
	    HARNESS_OPTION_COUNT("--registrations", &o->registrations, 1, FLOOD_MAX_COUNT),
	    HARNESS_OPTION_COUNT("--rounds", &o->rounds, 1, FLOOD_MAX_ROUNDS),
	    HARNESS_OPTION_SECONDS("--warmup-seconds", &o->warmup_seconds),
	    HARNESS_OPTION_SECONDS("--measure-seconds", &o->measure_seconds),
	    HARNESS_OPTION_SECONDS("--log-seconds", &o->log_seconds),
	    HARNESS_OPTION_COUNT("--flood-nice", &o->flood_nice, 0, 19),
	    HARNESS_OPTION_CALL("--http", take_http, &o->http),
	};
	memset(o, 0, sizeof(*o));
	harness_program_defaults(&programs);
	o->trickle = 800;
	o->idle = 200;
	o->body = 200;
	o->sources = 20;
	inet_pton(AF_INET, "127.0.0.2", &o->source_first);
	inet_pton(AF_INET, "127.0.0.250", &o->client_address);
	inet_pton(AF_INET, "127.0.0.251", &o->register_address);
	o->interval_ms = 100;
	o->gets = 2000;
	o->get_interval_ms = 5;
	o->registrations = 3000;
	o->warmup_seconds = 12;
	o->rounds = 3;
	o->measure_seconds = 120;
	o->log_seconds = 11;
	o->flood_nice = 10;
	o->temp_parent = getenv("TMPDIR") && getenv("TMPDIR")[0] ? getenv("TMPDIR") : "/tmp";
	if (harness_parse_options("bench_flood", argc, argv, options, sizeof(options) / sizeof(options[0]),
	                          &programs, usage) != 0)
		return -1;
	if (o->trickle + o->idle + o->body > FLOOD_MAX_CONNECTIONS) {
		fprintf(stderr, "bench_flood: at most %d hostile connections\n", FLOOD_MAX_CONNECTIONS);
		return -1;
	}
	uint32_t first = ntohl(o->source_first.s_addr), last = first + (uint32_t)o->sources - 1;
	uint32_t client = ntohl(o->client_address.s_addr), registrar = ntohl(o->register_address.s_addr);
	if ((last >> 24) != 127 || (client >= first && client <= last) ||
	    (registrar >= first && registrar <= last)) {
		fprintf(stderr, "bench_flood: the flood's addresses must stay in 127.0.0.0/8 and not include "
		                "the clients' addresses\n");
		return -1;
	}
	if (harness_programs_check("bench_flood", o->dirauthd, o->signer) != 0)
		return -1;
	return 0;
}

/* --- the run -------------------------------------------------------------------------------- */

/* A few registrations and their snapshot, so that the latest header exists; *epoch gets it. */
static int seed(struct bench *bench, uint64_t *epoch)
{
	struct buffer notes[FLOOD_SEED_RECORDS], receipts[FLOOD_SEED_RECORDS];
	struct harness_posted posted;
	for (size_t i = 0; i < FLOOD_SEED_RECORDS; i++)
		buffer_init(&receipts[i]);
	int rc = harness_registrations(bench->authority.provider, 0, FLOOD_SEED_RECORDS, 1,
	                               bench->authority.now, 1, notes);
	if (rc == 0)
		rc = harness_post(&bench->authority, notes, FLOOD_SEED_RECORDS, 1, FLOOD_SNAPSHOT_SECONDS,
		                  receipts, &posted);
	if (rc == 0 && posted.accepted != FLOOD_SEED_RECORDS) {
		harness_fail("%zu of %d seed registrations were accepted", posted.accepted,
		             FLOOD_SEED_RECORDS);
		rc = -1;
	}
	if (rc == 0)
		rc = harness_check_receipts(&bench->authority, notes, receipts, FLOOD_SEED_RECORDS, epoch);
	if (rc == 0)
		rc = wait_for_snapshot(bench, *epoch, FLOOD_SEED_RECORDS);
	harness_buffers_free(notes, FLOOD_SEED_RECORDS);
	harness_buffers_free(receipts, FLOOD_SEED_RECORDS);
	return rc;
}

/* notes[0..count) of services first.., signed at the authority's clock, on two threads. */
static int build_notes(struct bench *bench, uint64_t first, size_t count, struct buffer **out)
{
	*out = calloc(count, sizeof(struct buffer));
	if (!*out) {
		harness_fail("out of memory");
		return -1;
	}
	return harness_registrations(bench->authority.provider, first, count, 1, bench->authority.now, 2,
	                             *out);
}

static void notes_free(struct buffer *notes, size_t count)
{
	harness_buffers_free(notes, count);
	free(notes);
}

/* Waits seconds, or until the run is interrupted. */
static void pause_for(struct bench *bench, double seconds)
{
	for (double end = harness_now() + seconds; harness_now() < end && !bench_stopped(bench);)
		harness_sleep_ms(50);
}

static void step(const char *format, ...) __attribute__((format(printf, 1, 2)));
static void step(const char *format, ...)
{
	va_list args;
	va_start(args, format);
	fputs("bench_flood: ", stdout);
	vprintf(format, args);
	fputc('\n', stdout);
	fflush(stdout);
	va_end(args);
}

int main(int argc, char **argv)
{
	struct bench bench;
	struct phase *unloaded = NULL, *flooded = NULL;
	struct buffer **notes = NULL;
	struct flood *flood = NULL;
	struct flood_totals totals;
	struct flood_figures figures;
	struct log_figures log;
	struct flood_run run;
	struct buffer body;
	CURL *handle = NULL;
	int rc = 1;
	memset(&bench, 0, sizeof(bench));
	memset(&totals, 0, sizeof(totals));
	memset(&figures, 0, sizeof(figures));
	memset(&log, 0, sizeof(log));
	memset(&run, 0, sizeof(run));
	buffer_init(&bench.latest);
	buffer_init(&body);
	if (parse_options(argc, argv, &bench.options) != 0)
		return 2;
	const struct bench_options *o = &bench.options;
	size_t rounds = o->rounds, phases = 2 * rounds + 1;
	size_t hostile = o->trickle + o->idle + o->body;
	/* A descriptor per hostile connection here and as many in dirauthd, which inherits the
	 * limit. */
	if (harness_raise_descriptor_limit(hostile + FLOOD_FD_SPARE) != 0)
		return 1;
	bench.harness.temp_parent = o->temp_parent;
	unloaded = calloc(rounds + 1, sizeof(*unloaded));
	flooded = calloc(rounds, sizeof(*flooded));
	notes = calloc(phases, sizeof(*notes));
	if (!unloaded || !flooded || !notes) {
		harness_fail("out of memory");
		goto cleanup;
	}
	for (size_t r = 0; r <= rounds; r++) {
		unloaded[r].name = "unloaded";
		if (r < rounds)
			flooded[r].name = "under the flood";
	}
	if (harness_start(&bench.harness) != 0)
		goto cleanup;

	struct harness_authority_options authority_options = {
	    .dirauthd = o->dirauthd, .signer = o->signer, .http = o->http, .shipped_http_limits = 1};
	uint64_t epoch = 0, publish_epoch = 0;
	step("starting dirauth-signer and dirauthd, signing %zu registrations", phases * o->registrations);
	if (harness_authority_prepare(&bench.harness, &authority_options, &bench.authority) != 0 ||
	    harness_authority_start(&bench.authority) != 0 || seed(&bench, &epoch) != 0)
		goto cleanup;
	bench.port = (unsigned)strtoul(strrchr(bench.authority.url, ':') + 1, NULL, 10);
	for (size_t p = 0; p < phases; p++)
		if (build_notes(&bench, 1000 + p * o->registrations, o->registrations, &notes[p]) != 0)
			goto cleanup;
	harness_load_average(run.load_before);
	handle = metrics_handle(&bench);
	if (!handle) {
		harness_fail("out of memory");
		goto cleanup;
	}
	char path[64];
	snprintf(path, sizeof(path), "/v1/%s/snapshots/latest", HARNESS_NAMESPACE);
	struct flood_options flood_options = {
	    .port = bench.port,
	    .path = path,
	    .trickle = o->trickle,
	    .idle = o->idle,
	    .body = o->body,
	    .sources = o->sources,
	    .source_first = o->source_first,
	    .interval_ms = o->interval_ms,
	    .nice = (int)o->flood_nice,
	};
	const char *dirauthd_log = bench.authority.dirauthd.log_path;
	off_t log_from = 0;
	double first_flood = 0;

	/* Unloaded and flooded phases alternate, so that both sample the same minutes of a machine
	 * whose other work comes and goes. */
	for (size_t r = 0; r < rounds; r++) {
		step("round %zu of %zu: unloaded", r + 1, rounds);
		if (phase_run(&bench, &unloaded[r], notes[2 * r], NULL) != 0 ||
		    phase_check_receipts(&bench, &unloaded[r], notes[2 * r], &publish_epoch) != 0)
			goto cleanup;
		if (r == 0) {
			if (metrics_read(handle, &body, &figures.before) != 0) {
				harness_fail("cannot read %s/v1/metrics", bench.authority.url);
				goto cleanup;
			}
			log_from = file_size(dirauthd_log);
			first_flood = harness_now();
		}
		step("round %zu of %zu: flood of %zu connections, warm-up %.0f s", r + 1, rounds, hostile,
		     o->warmup_seconds);
		double start = harness_now(), cpu_before = harness_process_cpu(bench.authority.dirauthd.pid);
		if (flood_start(&bench.harness, &flood_options, &flood) != 0)
			goto cleanup;
		pause_for(&bench, o->warmup_seconds);
		step("round %zu of %zu: measuring under the flood (%zu connections open)", r + 1, rounds,
		     atomic_load(&flood_counters(flood)->open));
		if (phase_run(&bench, &flooded[r], notes[2 * r + 1], &figures) != 0)
			goto cleanup;
		if (r + 1 == rounds && metrics_read(handle, &body, &figures.after) != 0) {
			harness_fail("cannot read %s/v1/metrics under the flood", bench.authority.url);
			goto cleanup;
		}
		totals.seconds += harness_now() - start;
		totals.dirauthd_cpu += harness_process_cpu(bench.authority.dirauthd.pid) - cpu_before;
		flood_stop(flood);
		flood_totals_add(&totals, flood);
		flood_free(flood);
		flood = NULL;
		if (phase_check_receipts(&bench, &flooded[r], notes[2 * r + 1], &publish_epoch) != 0)
			goto cleanup;
		/* dirauthd sees the flood's connections close; the next phase starts after that. */
		pause_for(&bench, FLOOD_SETTLE_SECONDS);
	}

	/* The aggregate line of the flood's last interval comes up to one interval later. */
	step("flood stopped; %.0f s for dirauthd's last aggregate line", o->log_seconds);
	pause_for(&bench, o->log_seconds);
	run.log_seconds = harness_now() - first_flood;
	log_count(dirauthd_log, log_from, file_size(dirauthd_log), &log);

	step("unloaded, last");
	if (phase_run(&bench, &unloaded[rounds], notes[2 * rounds], NULL) != 0 ||
	    phase_check_receipts(&bench, &unloaded[rounds], notes[2 * rounds], &publish_epoch) != 0)
		goto cleanup;
	run.total_records = FLOOD_SEED_RECORDS;
	for (size_t r = 0; r <= rounds; r++)
		run.total_records += unloaded[r].post.answered + (r < rounds ? flooded[r].post.answered : 0);
	if (publish_epoch > epoch && wait_for_snapshot(&bench, publish_epoch, run.total_records) != 0)
		goto cleanup;
	run.unloaded = unloaded;
	run.flooded = flooded;
	run.rounds = rounds;
	run.flood = &totals;
	run.figures = &figures;
	run.log = &log;
	run.epoch = publish_epoch > epoch ? publish_epoch : epoch;
	int held = print_report(&bench, &run);
	rc = o->check && !held ? 1 : 0;
cleanup:
	flood_free(flood);
	if (handle)
		curl_easy_cleanup(handle);
	buffer_free(&body);
	harness_authority_stop(&bench.authority);
	for (size_t r = 0; unloaded && r <= rounds; r++)
		phase_clear(&unloaded[r]);
	for (size_t r = 0; flooded && r < rounds; r++)
		phase_clear(&flooded[r]);
	for (size_t p = 0; notes && p < phases; p++)
		notes_free(notes[p], o->registrations);
	free(unloaded);
	free(flooded);
	free(notes);
	buffer_free(&bench.latest);
	harness_finish(&bench.harness);
	if (rc != 0)
		fprintf(stderr, "bench: FAILED\n");
	return rc;
}
