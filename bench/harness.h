/*
 * harness.h: what the benchmark programs share: children, temporary directories, one authority
 * (dirauth-signer and dirauthd on loopback with a file clock), signed registrations, a loop of
 * keep-alive POSTs, the anchors measured by public tools (openssl speed, zstd, gzip, sha256sum,
 * nginx and wrk), and the machine's own accounting (/proc: load average, CPU time, peak RSS).
 *
 * Every wait is bounded, every child is stopped and every temporary directory removed at the end,
 * after a failure, and on SIGINT, SIGTERM or SIGHUP (a watcher thread owns those signals and
 * raises a flag that every loop polls); the children also get SIGTERM if the benchmark dies. A
 * function that fails has printed why on stderr ("bench: ...") and returns -1.
 */
#ifndef DIRAUTH_BENCH_HARNESS_H
#define DIRAUTH_BENCH_HARNESS_H

#include "base/buffer.h"
#include "schema/note.h"
#include "schema/snapshot.h"
#include "signer/key.h"

#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define HARNESS_EPOCH_LENGTH 60
#define HARNESS_START_TIME   1800000000ULL /* a multiple of the epoch length */
#define HARNESS_NAMESPACE    "mix"
#define HARNESS_ENDPOINTS    2 /* endpoints per registered service */
#define HARNESS_MAX_THREADS  1024
#define HARNESS_DIR_MAX      1024 /* temporary directories; files in them fit PATH_MAX */

/* The run: its signal watcher and where temporary directories go. */
struct harness {
	sigset_t signals;
	pthread_t watcher;
	int watching;
	atomic_int interrupted; /* SIGINT, SIGTERM or SIGHUP arrived */
	const char *temp_parent;
};

/* Blocks the termination signals in every thread and starts the watcher. Returns 0 or -1. */
int harness_start(struct harness *harness);
/* Stops the watcher. */
void harness_finish(struct harness *harness);
int harness_stopped(struct harness *harness);

double harness_now(void); /* monotonic seconds */
void harness_sleep_ms(long ms);
void harness_fail(const char *format, ...) __attribute__((format(printf, 1, 2)));

int harness_write_file(const char *path, const void *data, size_t len, mode_t mode);
/* Removes a tree without following symbolic links; best effort. */
void harness_remove_tree(const char *path);
int harness_make_temp_dir(const char *parent, const char *label, char out[HARNESS_DIR_MAX]);
/* Bytes of the regular files under path (their sizes), 0 when there is none. */
uint64_t harness_tree_bytes(const char *path);
/* The size of a file, 0 when it cannot be read. */
uint64_t harness_file_size(const char *path);

/* "1.23 1.45 1.67": the load averages over 1, 5 and 15 minutes. */
void harness_load_average(char out[64]);
/* bytes as "812 B", "1.4 kB", "15.8 MB" or "2.07 GB" (powers of 1,000). */
void harness_format_bytes(double bytes, char *out, size_t cap);

/* Reads a growing text file (a daemon's log) line by line: each harness_tail_read hands every
 * complete line added since the last call to on_line, without its newline. A line longer than
 * HARNESS_TAIL_LINE_MAX is skipped whole. Zero-initialise; it holds no resource. */
#define HARNESS_TAIL_LINE_MAX 4096
struct harness_tail {
	long offset; /* bytes of the file read so far */
	char partial[HARNESS_TAIL_LINE_MAX];
	size_t partial_len;
	int overlong;
};
/* Returns 0, or -1 when the file cannot be opened (nothing is read; try again later). on_line may
 * keep nothing of the line it is given past its return. */
int harness_tail_read(struct harness_tail *tail, const char *path,
                      void (*on_line)(void *context, const char *line), void *context);
/* A process's peak and current resident set (VmHWM, VmRSS) in KiB; 0 when unreadable. */
uint64_t harness_peak_rss_kib(pid_t pid);
uint64_t harness_rss_kib(pid_t pid);
/* CPU seconds (user + system) a process used so far; 0 when unreadable. */
double harness_process_cpu(pid_t pid);
/* CPU seconds of the whole machine so far: busy and idle, over all cores. */
void harness_machine_cpu(double *busy, double *idle);

/* A child process and the file its output goes to. */
struct harness_child {
	pid_t pid;
	char log_path[PATH_MAX];
};

/* Starts argv[0] with its output appended to child->log_path. */
int harness_child_spawn(struct harness_child *child, char *const argv[]);
/* 1 while the child runs, 0 once it has exited (and is reaped). */
int harness_child_running(struct harness_child *child);
/* SIGTERM, up to ten seconds to exit, then SIGKILL. */
void harness_child_stop(struct harness_child *child);
/* Prints the end of a child's log on stderr. */
void harness_child_log_tail(const struct harness_child *child);

/* A command run to its end: wall and CPU time, peak RSS, exit status. */
struct harness_usage {
	double wall, user, system;
	long peak_rss_kib;
	int exit_status; /* -1 when killed by a signal */
};

/* Runs argv (looked up in PATH) with stdin from input_path (NULL: /dev/null) and stdout to
 * output_path (NULL: /dev/null), stderr to /dev/null, bounded by seconds. */
int harness_run(struct harness *harness, char *const argv[], const char *input_path, const char *output_path,
                double seconds, struct harness_usage *usage);
/* The path of program in PATH, /usr/sbin or /sbin, into out; -1 when it is not installed. */
int harness_find_program(const char *program, char out[PATH_MAX]);

/* The order of a body's records, by service id (qsort's comparator over struct snapshot_record). */
int harness_record_order(const void *a, const void *b);

/* The service id of a registration note, from its "service" line. Returns 0 or DIRAUTH_ERR_SYNTAX. */
int harness_service_id_of(const struct buffer *note, uint8_t out[32]);

/* The anchor of the write path: `openssl speed -seconds S ed25519` (one thread), its verify and
 * sign rates (operations per CPU-second of that thread); with processes > 1, `openssl speed
 * -multi P`, the rates of the P processes together. */
int harness_openssl_ed25519(struct harness *harness, unsigned seconds, unsigned processes, double *verify,
                            double *sign);
/* Verifications per CPU-second of crypto_ed25519_verify() on one thread, over message, the
 * fastest of eight windows of seconds / 8 CPU-seconds each. openssl speed also divides by CPU
 * time (unless given -elapsed), so neither anchor drops when other work shares the machine. */
int harness_evp_verify_rate(const uint8_t *message, size_t len, double seconds, double *rate);

/* --- one authority ------------------------------------------------------------------------- */

struct harness_authority_options {
	const char *dirauthd; /* binaries */
	const char *signer;
	unsigned connections; /* the most client connections the run opens at once */
	const char *store;    /* YAML flow mapping of the store section, or NULL */
	const char *bounds;   /* likewise for bounds */
	const char *http;     /* extra keys of the http flow mapping ("k: v, ..."), or NULL */
	/* The system clock, as in production, instead of the file clock (every clock reading of a
	 * file clock opens and reads the file): epochs of a day, and harness_set_clock refuses. */
	int system_clock;
	/* With system_clock: the epochs of a day begin this many seconds after the start instead of
	 * at midnight UTC, so that registrations posted before then are published then. 0: epochs
	 * from genesis 0. */
	unsigned first_epoch_in_seconds;
	/* dirauthd's connection limits as it ships them: the http mapping holds only the keys of
	 * http, and connections is not used (a benchmark of the connection guard measures it so). */
	int shipped_http_limits;
};

struct harness_authority {
	struct harness *harness;
	char dirauthd_program[PATH_MAX];
	char signer_program[PATH_MAX];
	char dir[HARNESS_DIR_MAX];
	char data_dir[PATH_MAX];
	char config_path[PATH_MAX];
	char signer_config_path[PATH_MAX];
	char socket_path[PATH_MAX];
	char clock_path[PATH_MAX];
	char url[64];
	uint64_t now;          /* what the clock file says; the start time with the system clock */
	int system_clock;      /* no clock file */
	uint64_t epoch_length; /* seconds */
	uint64_t genesis;      /* of the epochs, in unix seconds */
	struct harness_child signer;
	struct harness_child dirauthd;
	struct signer_key *provider;
	struct note_verifier verifier; /* the authority's signing key */
};

/* Keys (scripts/example-keys.sh), the signing key's certificate, both configurations and the
 * clock in a fresh temporary directory; nothing is started. */
int harness_authority_prepare(struct harness *harness, const struct harness_authority_options *options,
                              struct harness_authority *authority);
/* The signer, then dirauthd; ready when /v1/ready answers 200. */
int harness_authority_start(struct harness_authority *authority);
/* Stops both, removes the directory and frees the keys. Safe on a zeroed authority. */
void harness_authority_stop(struct harness_authority *authority);
/* Writes the clock file (atomically). */
int harness_set_clock(struct harness_authority *authority, uint64_t now);

/* The signed registration of service number at sequence, issued at issued_at for a day. */
int harness_registration(const struct signer_key *provider, uint64_t number, uint64_t sequence,
                         uint64_t issued_at, struct buffer *out);
/* count registrations of services first.., on threads threads, into notes[0..count). */
int harness_registrations(const struct signer_key *provider, uint64_t first, size_t count, uint64_t sequence,
                          uint64_t issued_at, unsigned threads, struct buffer *notes);
void harness_buffers_free(struct buffer *buffers, size_t count);

/* One GET (or POST when post is not NULL) on a fresh handle, for setup and checks. */
int harness_http(const char *url, const char *header, const struct buffer *post, long *status,
                 struct buffer *body, char *content_encoding, size_t encoding_cap);
/* The value of an unlabelled metric of dirauthd's /v1/metrics. */
int harness_metric(struct harness_authority *authority, const char *name, double *value);

/* What a POST loop measured. */
struct harness_posted {
	size_t accepted; /* 202s */
	double elapsed;  /* wall seconds, first request to last answer */
	double p50_ms, p99_ms;
	int timed_out;
};

/* threads client threads, one keep-alive connection each, POST notes to /v1/registrations until
 * all are answered or seconds pass; anything but a 202 fails the run. receipts (NULL: not kept)
 * gets each answer. */
int harness_post(struct harness_authority *authority, const struct buffer *notes, size_t count,
                 unsigned threads, double seconds, struct buffer *receipts, struct harness_posted *out);
/* Every receipt (of the first count, those not empty) is signed by the authority and names its
 * registration's digest; *publish_epoch gets the latest promised epoch. */
int harness_check_receipts(const struct harness_authority *authority, const struct buffer *notes,
                           const struct buffer *receipts, size_t count, uint64_t *publish_epoch);

/* Registers count services first.. at sequence, issued at the authority's clock: built on two
 * threads and POSTed by threads clients in chunks of 100,000 (so a million need not be held at
 * once); the first 1,000 receipts of each chunk are checked. *publish_epoch gets the latest
 * epoch promised. */
int harness_register(struct harness_authority *authority, uint64_t first, size_t count, uint64_t sequence,
                     unsigned threads, uint64_t *publish_epoch);

/* Resets a process's peak RSS to its current RSS (/proc/<pid>/clear_refs, "5"). */
int harness_reset_peak_rss(pid_t pid);

/* Polls /v1/<ns>/snapshots/latest (every 5 ms, one keep-alive connection) until it serves a
 * header of epoch or later that verifies, or seconds pass. records: the count it must hold
 * (SIZE_MAX: any). */
int harness_wait_snapshot(struct harness_authority *authority, uint64_t epoch, size_t records, double seconds,
                          struct snapshot_header *header);

/* The path of a body file dirauthd stored for epoch ("identity", "gzip" or "zstd"): found in
 * the data directory by its name. */
int harness_body_file(const struct harness_authority *authority, uint64_t epoch, const char *encoding,
                      char out[PATH_MAX]);

/* --- nginx and wrk ------------------------------------------------------------------------ */

struct harness_nginx {
	char dir[HARNESS_DIR_MAX];
	struct harness_child child;
	unsigned port;
};

/* A static nginx (non-daemon child, loopback, sendfile, keep-alive, access log off, worker
 * processes auto) serving dir/www with the server-level directives of locations. */
int harness_nginx_start(struct harness *harness, const char *nginx, struct harness_nginx *out,
                        const char *locations);
/* The directory nginx serves, for the caller to fill before the first request. */
void harness_nginx_root(const struct harness_nginx *nginx, char out[PATH_MAX]);
void harness_nginx_stop(struct harness_nginx *nginx);

struct harness_wrk_result {
	double requests_per_second;
	double bytes_per_second;
	uint64_t requests;
	uint64_t errors;   /* socket errors and non-2xx answers */
	double client_cpu; /* wrk's own CPU seconds (user + system) over the run */
};

/* Reads what wrk printed (the file output) into *out, added to what it holds. Returns 1 when it
 * printed a rate, 0 otherwise (or when the file cannot be read). */
int harness_wrk_read(const char *output, struct harness_wrk_result *out);

/* wrk with threads threads and connections connections for seconds, keep-alive, one extra
 * header (NULL: none). */
int harness_wrk(struct harness *harness, const char *wrk, const char *url, const char *header,
                unsigned threads, unsigned connections, unsigned seconds, struct harness_wrk_result *out);

/* wrk, for the benchmarks that measure with it: 0 when wrk is set (given by an option, not empty)
 * or found (harness_find_program); otherwise says on stdout that bench (the program's name) is
 * skipped for want of wrk and returns 77, ctest's SKIP_RETURN_CODE. */
int harness_require_wrk(const char *bench, char wrk[PATH_MAX]);

/* The table that sets dirauthd's wrk figures beside nginx's on the same answers: its head, then a
 * row per answer (its name in name_width columns, its bytes, both rates, their ratio, both
 * bandwidths in MB/s, the load average). nginx is NULL when the anchor was skipped. */
void harness_print_anchor_head(int name_width);
void harness_print_anchor_row(int name_width, const char *name, size_t bytes,
                              const struct harness_wrk_result *dirauthd,
                              const struct harness_wrk_result *nginx, const char *load);

/* Parses a count or a bound of seconds; -1 when text is not one in [low, high]. */
int harness_parse_count(const char *text, size_t low, size_t high, size_t *out);
int harness_parse_seconds(const char *text, double *out);
/* Raises the soft limit of open descriptors (RLIMIT_NOFILE) to needed, within the hard limit,
 * for this process and the children it starts after; -1 with a message when the hard limit is
 * lower (it says how to raise it). */
int harness_raise_descriptor_limit(size_t needed);
/* A program of the build tree by its path in it (e.g. "server/dirauthd"): the benchmarks live in
 * <build>/bench/. */
void harness_default_program(const char *relative, char out[PATH_MAX]);

/* Where a benchmark's options about the programs it runs go: buffers of PATH_MAX (NULL for one it
 * does not take), and the parent of its temporary directories. */
struct harness_program_options {
	char *dirauthd, *signer, *nginx, *wrk;
	const char **temp_parent;
};
/* Takes "--dirauthd", "--signer", "--nginx", "--wrk" or "--temp-dir" with its value. Returns 1
 * when name is one of those the benchmark takes (*ok then 0 for a path of PATH_MAX or more), 0
 * when it is another option. */
int harness_program_option(const struct harness_program_options *options, const char *name, const char *value,
                           int *ok);
/* The defaults of the programs of options that the harness knows (dirauthd and signer in the build
 * tree, see harness_default_program); nginx and wrk stay as they are. */
void harness_program_defaults(const struct harness_program_options *options);

/* What an option of a benchmark's command line stores, and where. */
enum harness_option_kind {
	HARNESS_KIND_FLAG,     /* no value: *flag = 1 */
	HARNESS_KIND_ACTION,   /* no value: call(context, NULL), which cannot refuse */
	HARNESS_KIND_COUNT,    /* a whole number in [low, high] (harness_parse_count) into *count */
	HARNESS_KIND_UNSIGNED, /* likewise into *number; high is at most UINT_MAX */
	HARNESS_KIND_SECONDS,  /* harness_parse_seconds into *seconds */
	HARNESS_KIND_TEXT,     /* the value itself into *text: it lives as long as argv */
	HARNESS_KIND_CALL,     /* call(context, value): 0, or -1 when the value is bad */
};

struct harness_option {
	const char *name; /* "--records" */
	enum harness_option_kind kind;
	union {
		int *flag;
		size_t *count;
		unsigned *number;
		double *seconds;
		const char **text;
		void *context;
	} out;
	size_t low, high;
	int (*call)(void *context, const char *value);
};

/* The rows of a table of options, one a kind: the option's name, where its value goes, its range. */
#define HARNESS_OPTION_FLAG(name, target)                                                                    \
	((struct harness_option){(name), HARNESS_KIND_FLAG, {.flag = (target)}, 0, 0, NULL})
#define HARNESS_OPTION_ACTION(name, function, argument)                                                      \
	((struct harness_option){(name), HARNESS_KIND_ACTION, {.context = (argument)}, 0, 0, (function)})
#define HARNESS_OPTION_COUNT(name, target, low, high)                                                        \
	((struct harness_option){(name), HARNESS_KIND_COUNT, {.count = (target)}, (low), (high), NULL})
#define HARNESS_OPTION_UNSIGNED(name, target, low, high)                                                     \
	((struct harness_option){(name), HARNESS_KIND_UNSIGNED, {.number = (target)}, (low), (high), NULL})
#define HARNESS_OPTION_SECONDS(name, target)                                                                 \
	((struct harness_option){(name), HARNESS_KIND_SECONDS, {.seconds = (target)}, 0, 0, NULL})
#define HARNESS_OPTION_TEXT(name, target)                                                                    \
	((struct harness_option){(name), HARNESS_KIND_TEXT, {.text = (target)}, 0, 0, NULL})
#define HARNESS_OPTION_CALL(name, function, argument)                                                        \
	((struct harness_option){(name), HARNESS_KIND_CALL, {.context = (argument)}, 0, 0, (function)})

/* Reads the command line argv[1..argc) of the benchmark bench: the options of options[0..count)
 * and the program options of programs (NULL: none, see harness_program_option), in their order (a
 * later one wins). "--help" or "-h" prints usage on stdout and exits with status 0. An option that
 * is not one of those, one without its value and one whose value is bad print "<bench>: bad option
 * <name>[ <value>]" and the usage on stderr, and return -1 (what was read before stays). Returns 0. */
int harness_parse_options(const char *bench, int argc, char **argv, const struct harness_option *options,
                          size_t count, const struct harness_program_options *programs,
                          void (*usage)(FILE *out));
/* 0 when dirauthd and signer are executable; otherwise says so, prefixed by bench, and -1. */
int harness_programs_check(const char *bench, const char *dirauthd, const char *signer);
/* "tmpfs (...)" or "a disk file system". */
const char *harness_filesystem_note(const char *path);

#endif
