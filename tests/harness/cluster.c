/*
 * cluster.c: n authorities on loopback (cluster.h).
 *
 * The layout is written once at start: fresh keys per authority (signing, log, cosignature; the
 * identity key stays in memory and issues the signing key's certificate), one configuration per
 * authority that differs from the others only in the URLs (each peer reached through the proxy
 * of that directed link), the signer's configuration with the same schedule, a clock file per
 * authority, the providers' keys and the mirrors' trust bundle.
 *
 * Processes are forked and exec'd here rather than with test_spawn so that each child gets
 * PR_SET_PDEATHSIG: a test that fails ends its process at once (Check's _exit) and takes its
 * daemons with it. The janitor is a forked process in its own session that reads pids from a
 * pipe (one record per start and per reap) until the pipe closes; a closing without the "done"
 * record means the test died, and the janitor kills what is left and removes the directory.
 * nginx is the exception to SIGKILL: its workers outlive a master killed so, so its master gets
 * SIGTERM (as its death signal, and first from the janitor), on which it stops its workers.
 *
 * With tls, each authority's nginx is started after the signers and before the dirauthds, so
 * that the peers' first requests find it; a dirauthd not yet listening behind it is a 502, which
 * the peer client retries like any unavailable peer.
 */
#include "tests/harness/cluster.h"

#include "schema/certificate.h"
#include "schema/checkpoint.h"
#include "crypto/crypto.h"
#include "schema/encoding.h"
#include "base/error.h"
#include "schema/registration.h"
#include "tests/harness/nginx_front.h"
#include "tests/harness/run_directory.h"
#include "tests/harness/test_ca.h"
#include "tests/support/test_programs.h"

#include <check.h>
#include <curl/curl.h>

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PATH_CAP         768
#define START_TIMEOUT_MS 30000 /* a sanitized dirauthd opening its store can take seconds */
#define STOP_TIMEOUT_MS  5000
#define RESPONSE_CAP     (1100u * 1024 * 1024) /* a zstd body of the default bounds (1 GiB + 8 MiB) */
#define JANITOR_PIDS_MAX 256
#define CERTIFICATE_DAYS 30
#define TERM_GRACE_MS    3000               /* how long the janitor lets an nginx stop before SIGKILL */
#define LINK_WINDOW      (4u * 1024 * 1024) /* what a delayed link holds without a bandwidth */

struct member {
	char name[64];
	char dir[300];
	char config_path[PATH_CAP];
	char signer_config_path[PATH_CAP];
	char clock_path[PATH_CAP];
	char log_path[PATH_CAP];
	char signer_log_path[PATH_CAP];
	char socket_path[PATH_CAP];
	char url[64];
	unsigned port;
	pid_t pid;
	off_t log_start; /* the size of log_path when this run of dirauthd was started */
	pid_t signer_pid;
	int64_t skew;
	int impersonated;
	struct signer_key *identity;
	struct signer_key *signing;
	struct signer_key *log;            /* its log key, named by the origin */
	struct signer_key *cosigner;       /* its cosignature key */
	struct note_verifier cosigner_key; /* as a cosignature/v1 verifier (type 0x04) */
	struct buffer certificate;
	struct buffer certificate_bundle;
	unsigned link_port; /* where the links to it go: its dirauthd, or with tls its nginx */
	/* With tls: its nginx. */
	char front_dir[PATH_CAP];
	char front_url[64];
	unsigned front_port, front_http_port;
	pid_t front_pid;
	struct nginx_front_command front_command;
};

struct cluster {
	struct cluster_options options; /* with the defaults filled in */
	struct epoch_schedule schedule;
	size_t n;
	char dir[256];
	char trust_path[PATH_CAP];
	char ca_path[PATH_CAP]; /* with tls */
	char nginx[PATH_MAX];   /* with tls: the binary */
	struct member members[CLUSTER_MAX_AUTHORITIES];
	struct faultproxy *links[CLUSTER_MAX_AUTHORITIES][CLUSTER_MAX_AUTHORITIES];
	struct signer_key *providers[CLUSTER_PROVIDERS];
	struct signer_key *stranger;
	uint64_t base;
	char refusal[512]; /* cluster_last_refusal */
	int keep;
	int janitor_fd;
	pid_t janitor_pid;
	unsigned fetches;
};

/* --- the janitor ---------------------------------------------------------------------------- */

struct janitor_record {
	int32_t op; /* 'p' started, 't' started and ended with SIGTERM first, 'x' reaped, 'd' torn
	               down cleanly */
	int32_t pid;
};

/* 1 when pid is still one of this cluster's daemons: its command line names a configuration in
 * the cluster's directory (a pid the system gave to another process since is left alone). */
static int is_ours(pid_t pid, const char *dir)
{
	char path[64], cmdline[8192];
	snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, cmdline, sizeof cmdline - 1);
	close(fd);
	if (n <= 0)
		return 0;
	for (ssize_t i = 0; i < n; i++)
		if (cmdline[i] == 0)
			cmdline[i] = ' ';
	cmdline[n] = 0;
	return strstr(cmdline, dir) != NULL;
}

static int is_gone(pid_t pid)
{
	char path[64], stat_text[512];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return 1;
	ssize_t n = read(fd, stat_text, sizeof stat_text - 1);
	close(fd);
	if (n <= 0)
		return 1;
	stat_text[n] = 0;
	const char *paren = strrchr(stat_text, ')');
	return paren && paren[1] == ' ' && (paren[2] == 'Z' || paren[2] == 'X');
}

static void janitor_run(int fd, const char *dir, int keep)
{
	setsid(); /* out of the test's process group, which Check kills when the test ends */
	int null = open("/dev/null", O_RDWR);
	if (null >= 0) {
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
	}
	for (int other = 3; other < 1024; other++)
		if (other != fd)
			close(other);
	pid_t pids[JANITOR_PIDS_MAX];
	int gentle[JANITOR_PIDS_MAX]; /* SIGTERM first */
	size_t count = 0;
	struct janitor_record record;
	for (;;) {
		ssize_t n = read(fd, &record, sizeof record);
		if (n < 0 && errno == EINTR)
			continue;
		if (n != (ssize_t)sizeof record)
			break;
		if (record.op == 'd')
			_exit(0);
		if ((record.op == 'p' || record.op == 't') && count < JANITOR_PIDS_MAX) {
			gentle[count] = record.op == 't';
			pids[count++] = record.pid;
		}
		if (record.op == 'x')
			for (size_t i = 0; i < count; i++)
				if (pids[i] == record.pid) {
					count--;
					pids[i] = pids[count];
					gentle[i] = gentle[count];
					i--;
				}
	}
	size_t terminated = 0;
	for (size_t i = 0; i < count; i++)
		if (gentle[i] && is_ours(pids[i], dir) && kill(pids[i], SIGTERM) == 0)
			terminated++;
	for (int waited = 0; terminated > 0 && waited < TERM_GRACE_MS; waited += 20) {
		size_t left = 0;
		for (size_t i = 0; i < count; i++)
			left += gentle[i] && !is_gone(pids[i]);
		if (left == 0)
			break;
		struct timespec ts = {0, 20 * 1000000L};
		nanosleep(&ts, NULL);
	}
	for (size_t i = 0; i < count; i++)
		if (!is_gone(pids[i]) && is_ours(pids[i], dir))
			kill(pids[i], SIGKILL);
	for (int waited = 0; waited < 5000; waited += 20) {
		size_t left = 0;
		for (size_t i = 0; i < count; i++)
			left += !is_gone(pids[i]);
		if (left == 0)
			break;
		struct timespec ts = {0, 20 * 1000000L};
		nanosleep(&ts, NULL);
	}
	if (!keep)
		test_remove_tree(dir);
	_exit(0);
}

static void janitor_start(struct cluster *c)
{
	int fds[2];
	ck_assert_msg(pipe(fds) == 0, "pipe: %s", strerror(errno));
	pid_t pid = fork();
	ck_assert_msg(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		close(fds[1]);
		janitor_run(fds[0], c->dir, c->keep);
	}
	close(fds[0]);
	ck_assert(fcntl(fds[1], F_SETFD, FD_CLOEXEC) == 0); /* daemons must not hold it open */
	c->janitor_fd = fds[1];
	c->janitor_pid = pid;
}

static void janitor_tell(struct cluster *c, char op, pid_t pid)
{
	if (c->janitor_fd < 0)
		return;
	struct janitor_record record = {op, (int32_t)pid};
	ssize_t n = write(c->janitor_fd, &record, sizeof record);
	(void)n; /* a janitor that is gone cannot be told; teardown still runs here */
}

/* --- processes ------------------------------------------------------------------------------ */

/* Starts argv[0] with argv, its output appended to log_path; it gets death_signal when the test's
 * process dies, and the janitor ends it with SIGTERM first when death_signal is SIGTERM. */
static pid_t spawn_argv(struct cluster *c, char *const argv[], const char *log_path, int death_signal)
{
	pid_t parent = getpid();
	pid_t pid = fork();
	ck_assert_msg(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, death_signal);
		if (getppid() != parent)
			_exit(127);
		int fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND, 0644);
		if (fd < 0)
			_exit(127);
		dup2(fd, 1);
		dup2(fd, 2);
		close(fd);
		execv(argv[0], argv);
		_exit(127);
	}
	janitor_tell(c, death_signal == SIGTERM ? 't' : 'p', pid);
	return pid;
}

/* Starts one of the project's daemons: binary --config config. */
static pid_t spawn(struct cluster *c, const char *binary, const char *config, const char *log_path)
{
	char path[4096];
	snprintf(path, sizeof path, "%s", binary);
	char *argv[] = {path, "--config", (char *)config, NULL};
	return spawn_argv(c, argv, log_path, SIGKILL);
}

/* Waits for pid for at most timeout_ms; 1 when it was reaped. */
static int reap(pid_t pid, int timeout_ms)
{
	for (int waited = 0;; waited += 10) {
		int status = 0;
		pid_t got = waitpid(pid, &status, WNOHANG);
		if (got == pid || (got < 0 && errno == ECHILD))
			return 1;
		if (waited >= timeout_ms)
			return 0;
		test_sleep_ms(10);
	}
}

/* Ends *pid: signal, then SIGKILL if it is still there after STOP_TIMEOUT_MS. */
static void end_process(struct cluster *c, pid_t *pid, int signal)
{
	if (*pid <= 0)
		return;
	kill(*pid, signal);
	if (!reap(*pid, signal == SIGKILL ? 60000 : STOP_TIMEOUT_MS)) {
		kill(*pid, SIGKILL);
		reap(*pid, 60000);
	}
	janitor_tell(c, 'x', *pid);
	*pid = 0;
}

/* 1 when *pid exited (it is then reaped, told to the janitor and forgotten). */
static int exited(struct cluster *c, pid_t *pid)
{
	if (*pid <= 0 || waitpid(*pid, NULL, WNOHANG) != *pid)
		return 0;
	janitor_tell(c, 'x', *pid);
	*pid = 0;
	return 1;
}

static void wait_signer(struct cluster *c, struct member *m)
{
	for (int waited = 0; waited < START_TIMEOUT_MS; waited += 20) {
		if (run_directory_signer_listening(m->socket_path))
			return;
		ck_assert_msg(!exited(c, &m->signer_pid), "%s: dirauth-signer exited; see %s", m->name,
		              m->signer_log_path);
		test_sleep_ms(20);
	}
	ck_abort_msg("%s: dirauth-signer did not listen on %s; see %s", m->name, m->socket_path,
	             m->signer_log_path);
}

/* Starts member m's dirauthd, its output appended to its log. */
static void spawn_dirauthd(struct cluster *c, struct member *m)
{
	struct stat st;
	m->log_start = stat(m->log_path, &st) == 0 ? st.st_size : 0;
	m->pid = spawn(c, test_binary_path("server/dirauthd"), m->config_path, m->log_path);
}

/* Whether this run of m's dirauthd said it listens on its port: what answers there is then it,
 * not another process that took the port. */
static int says_listening(const struct member *m)
{
	char line[96];
	snprintf(line, sizeof line, "dirauthd: listening on 127.0.0.1:%u\n", m->port);
	if (access(m->log_path, F_OK) != 0)
		return 0;
	size_t len = 0;
	char *text = (char *)test_read_file(m->log_path, &len);
	int found = (size_t)m->log_start <= len && strstr(text + m->log_start, line) != NULL;
	free(text);
	return found;
}

/* Until dirauthd is ready: it said it listens on its port, it answers, and its signer answered
 * it (so a registration posted now gets its receipt rather than 503). */
static void wait_ready(struct cluster *c, struct member *m)
{
	char url[128];
	snprintf(url, sizeof url, "%s/v1/ready", m->url);
	for (int waited = 0; waited < START_TIMEOUT_MS; waited += 20) {
		if (says_listening(m)) {
			struct cluster_response response;
			long status = cluster_http(url, NULL, 0, NULL, 1000, &response);
			cluster_response_free(&response);
			if (status == 200)
				return;
		}
		ck_assert_msg(!exited(c, &m->pid), "%s: dirauthd exited; see %s", m->name, m->log_path);
		test_sleep_ms(20);
	}
	ck_abort_msg("%s: dirauthd did not answer %s; see %s", m->name, url, m->log_path);
}

static long http_request(const char *url, const uint8_t *body, size_t body_len, const char *header,
                         long timeout_ms, const char *ca_file, struct cluster_response *response);

/* Starts member m's nginx and waits until it answers over TLS, its certificate verified by the
 * cluster's CA (anything: its dirauthd is not started yet). */
static void start_front(struct cluster *c, struct member *m)
{
	char log_path[PATH_CAP + 16];
	snprintf(log_path, sizeof log_path, "%s/nginx.log", m->front_dir);
	m->front_pid = spawn_argv(c, m->front_command.argv, log_path, SIGTERM);
	for (int waited = 0; waited < START_TIMEOUT_MS; waited += 20) {
		struct cluster_response response;
		long status = http_request(m->front_url, NULL, 0, NULL, 1000, c->ca_path, &response);
		cluster_response_free(&response);
		if (status > 0)
			return;
		ck_assert_msg(!exited(c, &m->front_pid), "%s: nginx exited; see %s and %s", m->name, log_path,
		              m->front_command.error_log);
		test_sleep_ms(20);
	}
	ck_abort_msg("%s: nginx did not answer %s; see %s", m->name, m->front_url,
	             m->front_command.error_log);
}

static void start_member(struct cluster *c, struct member *m)
{
	if (m->signer_pid == 0) {
		m->signer_pid = spawn(c, test_binary_path("signer/dirauth-signer"), m->signer_config_path,
		                      m->signer_log_path);
		wait_signer(c, m);
	}
	if (m->pid == 0) {
		spawn_dirauthd(c, m);
		wait_ready(c, m);
	}
}

/* --- layout --------------------------------------------------------------------------------- */

static void make_dir(const char *path, mode_t mode)
{
	ck_assert_msg(mkdir(path, mode) == 0, "mkdir %s: %s", path, strerror(errno));
}

static struct signer_key *new_key(const char *name, const char *path)
{
	struct signer_key *key = NULL;
	int rc = signer_key_generate(name, &key);
	ck_assert_msg(rc == 0, "generate %s: %s", name, dirauth_strerror(rc));
	if (path) {
		rc = signer_key_save(key, path);
		ck_assert_msg(rc == 0, "save %s: %s", path, dirauth_strerror(rc));
	}
	return key;
}

static void verifier_text(const struct note_verifier *verifier, char out[NOTE_VERIFIER_KEY_MAX + 1])
{
	note_verifier_format(verifier, out);
}

/* The identity key certifies the signing key for a month around the start. */
static void issue_certificate(struct cluster *c, struct member *m, const char *path)
{
	struct certificate certificate;
	memset(&certificate, 0, sizeof certificate);
	snprintf(certificate.authority, sizeof certificate.authority, "%s", m->name);
	certificate.identity = *signer_key_verifier(m->identity);
	certificate.signing_key = *signer_key_verifier(m->signing);
	certificate.valid_after = CLUSTER_START_TIME - 86400;
	certificate.valid_until = CLUSTER_START_TIME + CERTIFICATE_DAYS * 86400ULL;
	struct buffer text;
	struct note_signature signature;
	buffer_init(&text);
	buffer_init(&m->certificate);
	buffer_init(&m->certificate_bundle);
	ck_assert(certificate_encode(&certificate, &text) == 0);
	ck_assert(signer_key_sign(m->identity, text.data, text.len, &signature) == 0);
	ck_assert(note_format(text.data, text.len, &signature, 1, &m->certificate) == 0);
	buffer_free(&text);
	const uint8_t *notes[1] = {m->certificate.data};
	size_t lengths[1] = {m->certificate.len};
	ck_assert(certificate_bundle_encode(notes, lengths, 1, &m->certificate_bundle) == 0);
	test_write_file(path, m->certificate.data, m->certificate.len, 0644);
	(void)c;
}

static void write_clock(const struct member *m, uint64_t now)
{
	ck_assert_msg(run_directory_write_clock(m->clock_path, now) == 0, "cannot write %s: %s",
	              m->clock_path, strerror(errno));
}

static void write_signer_config(const struct cluster *c, const struct member *m)
{
	struct buffer config;
	buffer_init(&config);
	ck_assert(buffer_appendf(
	              &config,
	              "# dirauth-signer of %s in a test cluster\n"
	              "authority: %s\n"
	              "socket: signer.sock\n"
	              "allowed_uid: %u\n"
	              "state_dir: signer-state\n"
	              "signing_key: keys/signing.key\n"
	              "certificates: [keys/signing.cert]\n"
	              "log_key: keys/log.key\n"
	              "cosignature_key: keys/cosignature.key\n"
	              "audit_log: signer-audit.log\n"
	              "clock_skew_seconds: %llu\n"
	              "clock: { source: file, path: clock }\n"
	              "namespaces:\n"
	              "  - { name: %s, origin: %s, genesis: %llu, length_seconds: %llu, "
	              "validity_epochs: %llu, prepare_seconds: %llu }\n",
	              m->name, m->name, (unsigned)getuid(), (unsigned long long)c->options.clock_skew_seconds,
	              CLUSTER_NAMESPACE, CLUSTER_ORIGIN, (unsigned long long)c->schedule.genesis,
	              (unsigned long long)c->schedule.length, (unsigned long long)c->schedule.validity_epochs,
	              (unsigned long long)c->schedule.prepare) == 0);
	test_write_file(m->signer_config_path, config.data, config.len, 0644);
	buffer_free(&config);
}

static void write_config(const struct cluster *c, size_t self)
{
	const struct member *m = &c->members[self];
	char provider[CLUSTER_PROVIDERS][NOTE_VERIFIER_KEY_MAX + 1];
	for (size_t p = 0; p < CLUSTER_PROVIDERS; p++)
		verifier_text(signer_key_verifier(c->providers[p]), provider[p]);
	struct buffer config;
	buffer_init(&config);
	ck_assert(
	    buffer_appendf(&config,
	                   "# dirauthd of %s in a test cluster; peers are reached through fault proxies\n"
	                   "authority:\n"
	                   "  name: %s\n"
	                   "  signer_socket: signer.sock\n"
	                   "listen: { address: 127.0.0.1, port: %u }\n"
	                   "data_dir: data\n"
	                   "epoch: { length_seconds: %llu, genesis: %llu, validity_epochs: %llu, "
	                   "prepare_seconds: %llu, vote_seconds: %llu, signature_seconds: %llu }\n"
	                   "clock: { source: file, path: clock }\n"
	                   "namespaces:\n"
	                   "  - { name: %s, origin: %s%s }\n"
	                   "providers:\n"
	                   "  - key: \"%s\"\n"
	                   "    namespaces: [%s]\n"
	                   "    classes: [mix-gateway, bridge]\n"
	                   "  - key: \"%s\"\n"
	                   "    namespaces: [%s]\n"
	                   "    classes: [mix-gateway, mailbox-provider]\n"
	                   "bounds: { clock_skew_seconds: %llu }\n"
	                   "authorities:\n"
	                   "  threshold: %zu\n"
	                   "  timeout_seconds: %u\n"
	                   "  connect_timeout_seconds: %u\n"
	                   "  retries: 1\n",
	                   m->name, m->name, m->port, (unsigned long long)c->schedule.length,
	                   (unsigned long long)c->schedule.genesis,
	                   (unsigned long long)c->schedule.validity_epochs,
	                   (unsigned long long)c->schedule.prepare, (unsigned long long)c->schedule.vote,
	                   (unsigned long long)c->schedule.signature, CLUSTER_NAMESPACE, CLUSTER_ORIGIN,
	                   c->options.namespace_extra ? c->options.namespace_extra : "", provider[0],
	                   CLUSTER_NAMESPACE, provider[1], CLUSTER_NAMESPACE,
	                   (unsigned long long)c->options.clock_skew_seconds, c->options.threshold,
	                   c->options.peer_timeout_seconds, c->options.peer_connect_timeout_seconds) == 0);
	if (c->options.tls)
		ck_assert(buffer_appendf(&config, "  ca_file: \"%s\"\n", c->ca_path) == 0);
	ck_assert(buffer_appendf(&config, "  members:\n") == 0);
	for (size_t j = 0; j < c->n; j++) {
		char identity[NOTE_VERIFIER_KEY_MAX + 1], url[64], log_key[NOTE_VERIFIER_KEY_MAX + 1],
		    cosigner[NOTE_VERIFIER_KEY_MAX + 1];
		verifier_text(signer_key_verifier(c->members[j].identity), identity);
		verifier_text(signer_key_verifier(c->members[j].log), log_key);
		verifier_text(&c->members[j].cosigner_key, cosigner);
		if (j == self)
			snprintf(url, sizeof url, "%s", m->url);
		else
			snprintf(url, sizeof url, "%s://127.0.0.1:%u", c->options.tls ? "https" : "http",
			         faultproxy_port(c->links[self][j]));
		ck_assert(buffer_appendf(&config,
		                         "    - { name: %s, identity: \"%s\", url: \"%s\",\n"
		                         "        log_key: \"%s\", cosignature_key: \"%s\" }\n",
		                         c->members[j].name, identity, url, log_key, cosigner) == 0);
	}
	test_write_file(m->config_path, config.data, config.len, 0644);
	buffer_free(&config);
}

static void write_trust_bundle(struct cluster *c)
{
	struct buffer bundle;
	buffer_init(&bundle);
	ck_assert(buffer_appendf(&bundle,
	                         "dirauth trust v1\n"
	                         "# the test cluster's %zu authorities; a snapshot needs %zu of them\n"
	                         "namespace %s %s\n",
	                         c->n, c->options.threshold, CLUSTER_NAMESPACE, CLUSTER_ORIGIN) == 0);
	for (size_t i = 0; i < c->n; i++) {
		char identity[NOTE_VERIFIER_KEY_MAX + 1];
		verifier_text(signer_key_verifier(c->members[i].identity), identity);
		ck_assert(buffer_appendf(&bundle, "authority %s\n", identity) == 0);
	}
	ck_assert(buffer_appendf(&bundle, "threshold %zu\n", c->options.threshold) == 0);
	snprintf(c->trust_path, sizeof c->trust_path, "%s/trust-bundle.txt", c->dir);
	test_write_file(c->trust_path, bundle.data, bundle.len, 0644);
	buffer_free(&bundle);
}

static void fill_defaults(struct cluster_options *o)
{
	ck_assert_msg(o->authorities >= 1 && o->authorities <= CLUSTER_MAX_AUTHORITIES,
	              "cluster: %zu authorities", o->authorities);
	ck_assert_msg(o->threshold >= 1 && o->threshold <= o->authorities, "cluster: threshold %zu of %zu",
	              o->threshold, o->authorities);
	if (!o->epoch_length)
		o->epoch_length = 6;
	if (!o->prepare_seconds && !o->vote_seconds && !o->signature_seconds) {
		o->prepare_seconds = o->epoch_length * 2 / 3;
		o->vote_seconds = o->epoch_length / 3;
		o->signature_seconds = o->epoch_length / 3;
	}
	if (!o->validity_epochs)
		o->validity_epochs = 3;
	if (!o->clock_skew_seconds)
		o->clock_skew_seconds = 2;
	if (!o->peer_timeout_seconds)
		o->peer_timeout_seconds = 2;
	if (!o->peer_connect_timeout_seconds)
		o->peer_connect_timeout_seconds = 1;
	const char *pace = getenv(CLUSTER_PACE_ENV);
	if (pace && *pace)
		o->ms_per_second = (unsigned)strtoul(pace, NULL, 10);
	if (!o->ms_per_second)
		o->ms_per_second = 250;
}

int cluster_nginx_installed(void)
{
	char path[PATH_MAX];
	return test_program_find("nginx", path) == 0;
}

/* What each link's proxy holds per direction of a connection: enough that the delay does not cap
 * the throughput below the bandwidth (twice bandwidth × hold), a TCP window's worth without a
 * bandwidth; the proxy's default without a delay. */
static size_t link_buffer_bytes(const struct cluster_link_shaping *links)
{
	uint64_t hold_ms = (uint64_t)links->delay_ms + links->jitter_ms;
	if (hold_ms == 0)
		return 0;
	if (links->bandwidth_mbit == 0)
		return LINK_WINDOW;
	uint64_t bytes = 2 * (uint64_t)links->bandwidth_mbit * 1000000 / 8 * hold_ms / 1000;
	if (bytes < FAULTPROXY_DEFAULT_BUFFER_BYTES)
		return FAULTPROXY_DEFAULT_BUFFER_BYTES;
	return bytes > FAULTPROXY_MAX_BUFFER_BYTES ? FAULTPROXY_MAX_BUFFER_BYTES : (size_t)bytes;
}

/* Authority i's nginx: its directory, a certificate of the cluster's CA, and its configuration
 * derived from the shipped one. */
static void lay_out_front(struct cluster *c, const struct test_ca *ca, size_t i)
{
	struct member *m = &c->members[i];
	char chain[PATH_CAP + 16], key[PATH_CAP + 16];
	snprintf(m->front_dir, sizeof m->front_dir, "%s/n%zu", c->dir, i);
	snprintf(chain, sizeof chain, "%s/tls.pem", m->front_dir);
	snprintf(key, sizeof key, "%s/tls.key", m->front_dir);
	make_dir(m->front_dir, 0755);
	int rc = test_ca_issue(ca, m->name, chain, key);
	ck_assert_msg(rc == 0, "%s: a TLS certificate: %s", m->name, dirauth_strerror(rc));
	m->front_port = test_free_port();
	m->front_http_port = test_free_port();
	snprintf(m->front_url, sizeof m->front_url, "https://127.0.0.1:%u", m->front_port);
	struct nginx_front_options front = {.nginx = c->nginx,
	                                    .shipped = test_source_path(NGINX_FRONT_SHIPPED),
	                                    .dir = m->front_dir,
	                                    .server_name = m->name,
	                                    .certificate = chain,
	                                    .certificate_key = key,
	                                    .upstream_port = m->port,
	                                    .tls_port = m->front_port,
	                                    .http_port = m->front_http_port};
	rc = nginx_front_write(&front, &m->front_command);
	ck_assert_msg(rc == 0, "%s: the nginx configuration from %s: %s", m->name, NGINX_FRONT_SHIPPED,
	              dirauth_strerror(rc));
}

struct cluster *cluster_start(const struct cluster_options *options)
{
	struct cluster *c = calloc(1, sizeof *c);
	ck_assert(c != NULL);
	c->options = *options;
	fill_defaults(&c->options);
	c->n = c->options.authorities;
	c->janitor_fd = -1;
	c->schedule.length = c->options.epoch_length;
	c->schedule.genesis = CLUSTER_START_TIME - CLUSTER_FIRST_EPOCH * c->options.epoch_length;
	c->schedule.validity_epochs = c->options.validity_epochs;
	c->schedule.prepare = c->options.prepare_seconds;
	c->schedule.vote = c->options.vote_seconds;
	c->schedule.signature = c->options.signature_seconds;
	ck_assert_msg(schedule_check(&c->schedule) == 0, "cluster: epoch phases out of range");
	c->base = CLUSTER_START_TIME;
	const char *keep = getenv(CLUSTER_KEEP_ENV);
	c->keep = keep && strcmp(keep, "1") == 0;

	/* Peers talk to each other on loopback: no proxy from the environment in between. */
	setenv("no_proxy", "127.0.0.1,localhost", 1);
	setenv("NO_PROXY", "127.0.0.1,localhost", 1);

	test_make_tempdir(c->dir, sizeof c->dir);
	if (c->keep)
		fprintf(stderr, "cluster: %s is kept (%s=1)\n", c->dir, CLUSTER_KEEP_ENV);
	janitor_start(c);
	struct test_ca *ca = NULL;
	if (c->options.tls) {
		ck_assert_msg(test_program_find("nginx", c->nginx) == 0,
		              "cluster: tls needs nginx (scripts/install-test-tools.sh)");
		/* nginx's workers run as nobody when the test runs as root: they must reach n<i>/. */
		ck_assert_msg(chmod(c->dir, 0755) == 0, "chmod %s: %s", c->dir, strerror(errno));
		int rc = test_ca_new("dirauth test CA", &ca);
		ck_assert_msg(rc == 0, "cluster: a test CA: %s", dirauth_strerror(rc));
		snprintf(c->ca_path, sizeof c->ca_path, "%s/ca.pem", c->dir);
		rc = test_ca_write(ca, c->ca_path);
		ck_assert_msg(rc == 0, "cluster: %s: %s", c->ca_path, dirauth_strerror(rc));
	}

	char path[PATH_CAP + 64];
	snprintf(path, sizeof path, "%s/providers", c->dir);
	make_dir(path, 0700);
	for (size_t p = 0; p < CLUSTER_PROVIDERS; p++) {
		char name[64], file[PATH_CAP + 96];
		snprintf(name, sizeof name, "provider%zu.example", p);
		snprintf(file, sizeof file, "%s/provider%zu.key", path, p);
		c->providers[p] = new_key(name, file);
	}
	c->stranger = new_key("stranger.example", NULL);

	for (size_t i = 0; i < c->n; i++) {
		struct member *m = &c->members[i];
		snprintf(m->name, sizeof m->name, "authority%zu.dirauth.example", i);
		snprintf(m->dir, sizeof m->dir, "%s/a%zu", c->dir, i);
		make_dir(m->dir, 0700);
		snprintf(path, sizeof path, "%s/keys", m->dir);
		make_dir(path, 0700);
		char file[PATH_CAP + 96], log_name[160];
		m->identity = new_key(m->name, NULL);
		snprintf(file, sizeof file, "%s/keys/signing.key", m->dir);
		m->signing = new_key(m->name, file);
		snprintf(file, sizeof file, "%s/keys/log.key", m->dir);
		m->log = new_key(CLUSTER_ORIGIN, file);
		snprintf(file, sizeof file, "%s/keys/cosignature.key", m->dir);
		snprintf(log_name, sizeof log_name, "%s/cosigner", m->name);
		m->cosigner = new_key(log_name, file);
		ck_assert(cosignature_verifier_from_ed25519(
		              log_name, signer_key_verifier(m->cosigner)->public_key, &m->cosigner_key) == 0);
		snprintf(file, sizeof file, "%s/keys/signing.cert", m->dir);
		issue_certificate(c, m, file);
		m->port = test_free_port();
		m->link_port = m->port;
		snprintf(m->url, sizeof m->url, "http://127.0.0.1:%u", m->port);
		if (c->options.tls) {
			lay_out_front(c, ca, i);
			m->link_port = m->front_port;
		}
		/* Paths are built from a copy of the run directory: the compiler cannot tell the
		 * members of one struct apart as snprintf's source and destination. */
		char run[320];
		snprintf(run, sizeof run, "%s", m->dir);
		snprintf(m->config_path, sizeof m->config_path, "%s/dirauthd.yaml", run);
		snprintf(m->signer_config_path, sizeof m->signer_config_path, "%s/dirauth-signer.yaml", run);
		snprintf(m->clock_path, sizeof m->clock_path, "%s/clock", run);
		snprintf(m->log_path, sizeof m->log_path, "%s/dirauthd.log", run);
		snprintf(m->signer_log_path, sizeof m->signer_log_path, "%s/dirauth-signer.log", run);
		snprintf(m->socket_path, sizeof m->socket_path, "%s/signer.sock", run);
		ck_assert_msg(strlen(m->socket_path) < sizeof(((struct sockaddr_un *)0)->sun_path),
		              "%s is too long for a UNIX socket path", m->socket_path);
		write_clock(m, c->base);
	}
	test_ca_free(ca);
	const struct cluster_link_shaping *links = &c->options.links;
	for (size_t from = 0; from < c->n; from++)
		for (size_t to = 0; to < c->n; to++) {
			if (from == to)
				continue;
			struct faultproxy_options proxy = {
			    .target_host = "127.0.0.1",
			    .target_port = c->members[to].link_port,
			    .buffer_bytes = link_buffer_bytes(links),
			    .shaping = {.delay_ms = links->delay_ms,
			                .jitter_ms = links->jitter_ms,
			                .bandwidth_bits_per_second =
			                    (uint64_t)links->bandwidth_mbit * 1000000},
			    .seed = links->seed ? links->seed + c->n * from + to : 0};
			int rc = faultproxy_start(&proxy, &c->links[from][to]);
			ck_assert_msg(rc == 0, "proxy %zu->%zu: %s", from, to, dirauth_strerror(rc));
		}
	for (size_t i = 0; i < c->n; i++) {
		write_signer_config(c, &c->members[i]);
		write_config(c, i);
	}
	write_trust_bundle(c);
	/* Signers first, all of them, so that the daemons' start overlaps nothing slow. */
	for (size_t i = 0; i < c->n; i++) {
		struct member *m = &c->members[i];
		m->signer_pid = spawn(c, test_binary_path("signer/dirauth-signer"), m->signer_config_path,
		                      m->signer_log_path);
	}
	for (size_t i = 0; i < c->n; i++)
		wait_signer(c, &c->members[i]);
	for (size_t i = 0; c->options.tls && i < c->n; i++)
		start_front(c, &c->members[i]);
	for (size_t i = 0; i < c->n; i++)
		spawn_dirauthd(c, &c->members[i]);
	for (size_t i = 0; i < c->n; i++)
		wait_ready(c, &c->members[i]);
	return c;
}

void cluster_free(struct cluster *c)
{
	if (!c)
		return;
	/* Everything is asked to stop at once, then waited for. */
	for (size_t i = 0; i < c->n; i++)
		if (c->members[i].pid > 0)
			kill(c->members[i].pid, SIGTERM);
	for (size_t i = 0; i < c->n; i++)
		end_process(c, &c->members[i].pid, SIGTERM);
	for (size_t i = 0; i < c->n; i++)
		if (c->members[i].signer_pid > 0)
			kill(c->members[i].signer_pid, SIGTERM);
	for (size_t i = 0; i < c->n; i++)
		end_process(c, &c->members[i].signer_pid, SIGTERM);
	for (size_t i = 0; i < c->n; i++)
		if (c->members[i].front_pid > 0)
			kill(c->members[i].front_pid, SIGTERM);
	for (size_t i = 0; i < c->n; i++)
		end_process(c, &c->members[i].front_pid, SIGTERM);
	for (size_t from = 0; from < c->n; from++)
		for (size_t to = 0; to < c->n; to++)
			faultproxy_stop(c->links[from][to]);
	for (size_t i = 0; i < c->n; i++) {
		signer_key_free(c->members[i].identity);
		signer_key_free(c->members[i].signing);
		signer_key_free(c->members[i].log);
		signer_key_free(c->members[i].cosigner);
		buffer_free(&c->members[i].certificate);
		buffer_free(&c->members[i].certificate_bundle);
	}
	for (size_t p = 0; p < CLUSTER_PROVIDERS; p++)
		signer_key_free(c->providers[p]);
	signer_key_free(c->stranger);
	if (c->keep)
		fprintf(stderr, "cluster: kept %s\n", c->dir);
	else
		test_remove_tree(c->dir);
	janitor_tell(c, 'd', 0);
	close(c->janitor_fd);
	reap(c->janitor_pid, 5000);
	free(c);
}

static struct member *member(struct cluster *c, size_t i)
{
	ck_assert_msg(i < c->n, "no authority %zu in a cluster of %zu", i, c->n);
	return &c->members[i];
}

static const struct member *member_const(const struct cluster *c, size_t i)
{
	ck_assert_msg(i < c->n, "no authority %zu in a cluster of %zu", i, c->n);
	return &c->members[i];
}

void cluster_kill(struct cluster *c, size_t i)
{
	struct member *m = member(c, i);
	end_process(c, &m->pid, SIGKILL);
	end_process(c, &m->signer_pid, SIGKILL);
}

void cluster_kill_signer(struct cluster *c, size_t i)
{
	end_process(c, &member(c, i)->signer_pid, SIGKILL);
}

void cluster_stop_authority(struct cluster *c, size_t i)
{
	struct member *m = member(c, i);
	end_process(c, &m->pid, SIGTERM);
	end_process(c, &m->signer_pid, SIGTERM);
}

void cluster_restart(struct cluster *c, size_t i)
{
	struct member *m = member(c, i);
	start_member(c, m);
	if (m->impersonated) {
		for (size_t from = 0; from < c->n; from++)
			if (from != i)
				ck_assert(
				    faultproxy_set_target(c->links[from][i], "127.0.0.1", m->link_port) == 0);
		m->impersonated = 0;
	}
}

int cluster_running(const struct cluster *c, size_t i)
{
	return member_const(c, i)->pid > 0;
}

void cluster_check_alive(struct cluster *c)
{
	for (size_t i = 0; i < c->n; i++) {
		struct member *m = &c->members[i];
		int status = 0;
		if (m->pid > 0 && waitpid(m->pid, &status, WNOHANG) == m->pid) {
			janitor_tell(c, 'x', m->pid);
			m->pid = 0;
			ck_abort_msg("%s: dirauthd exited (status %d); see %s", m->name, status, m->log_path);
		}
		if (m->signer_pid > 0 && waitpid(m->signer_pid, &status, WNOHANG) == m->signer_pid) {
			janitor_tell(c, 'x', m->signer_pid);
			m->signer_pid = 0;
			ck_abort_msg("%s: dirauth-signer exited (status %d); see %s", m->name, status,
			             m->signer_log_path);
		}
		if (m->front_pid > 0 && waitpid(m->front_pid, &status, WNOHANG) == m->front_pid) {
			janitor_tell(c, 'x', m->front_pid);
			m->front_pid = 0;
			ck_abort_msg("%s: nginx exited (status %d); see %s", m->name, status,
			             m->front_command.error_log);
		}
	}
}

void cluster_impersonate(struct cluster *c, size_t i, unsigned port)
{
	struct member *m = member(c, i);
	ck_assert_msg(!c->options.tls, "cluster_impersonate: a stand-in speaks plain HTTP, not with tls");
	cluster_kill(c, i);
	for (size_t from = 0; from < c->n; from++)
		if (from != i)
			ck_assert(faultproxy_set_target(c->links[from][i], "127.0.0.1", port) == 0);
	m->impersonated = 1;
}

/* --- accessors ------------------------------------------------------------------------------ */

size_t cluster_size(const struct cluster *c)
{
	return c->n;
}

size_t cluster_threshold(const struct cluster *c)
{
	return c->options.threshold;
}

const char *cluster_dir(const struct cluster *c)
{
	return c->dir;
}

const char *cluster_name(const struct cluster *c, size_t i)
{
	return member_const(c, i)->name;
}

const char *cluster_url(const struct cluster *c, size_t i)
{
	return member_const(c, i)->url;
}

const char *cluster_front_url(const struct cluster *c, size_t i)
{
	ck_assert_msg(c->options.tls, "cluster_front_url: a cluster without tls has no nginx");
	return member_const(c, i)->front_url;
}

const char *cluster_ca_path(const struct cluster *c)
{
	ck_assert_msg(c->options.tls, "cluster_ca_path: a cluster without tls has no CA");
	return c->ca_path;
}

const char *cluster_log_path(const struct cluster *c, size_t i)
{
	return member_const(c, i)->log_path;
}

const char *cluster_signer_log_path(const struct cluster *c, size_t i)
{
	return member_const(c, i)->signer_log_path;
}

const char *cluster_config_path(const struct cluster *c, size_t i)
{
	return member_const(c, i)->config_path;
}

const char *cluster_trust_bundle_path(const struct cluster *c)
{
	return c->trust_path;
}

const struct note_verifier *cluster_identity(const struct cluster *c, size_t i)
{
	return signer_key_verifier(member_const(c, i)->identity);
}

const struct note_verifier *cluster_signing_verifier(const struct cluster *c, size_t i)
{
	return signer_key_verifier(member_const(c, i)->signing);
}

const struct signer_key *cluster_identity_key(const struct cluster *c, size_t i)
{
	return member_const(c, i)->identity;
}

const struct signer_key *cluster_log_key(const struct cluster *c, size_t i)
{
	return member_const(c, i)->log;
}

const struct note_verifier *cluster_cosigner(const struct cluster *c, size_t i)
{
	return &member_const(c, i)->cosigner_key;
}

const struct signer_key *cluster_signing_key(const struct cluster *c, size_t i)
{
	return member_const(c, i)->signing;
}

const struct signer_key *cluster_provider_key(const struct cluster *c, size_t p)
{
	ck_assert(p < CLUSTER_PROVIDERS);
	return c->providers[p];
}

const struct signer_key *cluster_stranger_key(const struct cluster *c)
{
	return c->stranger;
}

const struct buffer *cluster_certificate(const struct cluster *c, size_t i)
{
	return &member_const(c, i)->certificate;
}

const struct buffer *cluster_certificate_bundle(const struct cluster *c, size_t i)
{
	return &member_const(c, i)->certificate_bundle;
}

const struct epoch_schedule *cluster_schedule(const struct cluster *c)
{
	return &c->schedule;
}

void cluster_epoch_phases(const struct cluster *c, uint64_t epoch, struct epoch_phases *out)
{
	ck_assert(schedule_epoch_phases(&c->schedule, epoch, out) == 0);
}

void cluster_epoch_times(const struct cluster *c, uint64_t epoch, struct epoch_times *out)
{
	ck_assert(schedule_epoch_times(&c->schedule, epoch, out) == 0);
}

/* --- clocks --------------------------------------------------------------------------------- */

uint64_t cluster_now(const struct cluster *c)
{
	return c->base;
}

uint64_t cluster_clock_of(const struct cluster *c, size_t i)
{
	return (uint64_t)((int64_t)c->base + member_const(c, i)->skew);
}

void cluster_clock_set(struct cluster *c, uint64_t t)
{
	c->base = t;
	for (size_t i = 0; i < c->n; i++)
		write_clock(&c->members[i], cluster_clock_of(c, i));
}

void cluster_clock_skew(struct cluster *c, size_t i, int64_t skew)
{
	struct member *m = member(c, i);
	m->skew = skew;
	write_clock(m, cluster_clock_of(c, i));
}

void cluster_run_to(struct cluster *c, uint64_t t)
{
	while (c->base < t) {
		cluster_clock_set(c, c->base + 1);
		test_sleep_ms((int)c->options.ms_per_second);
	}
}

void cluster_run_epoch(struct cluster *c, uint64_t epoch)
{
	struct epoch_phases phases;
	cluster_epoch_phases(c, epoch, &phases);
	cluster_run_to(c, phases.start);
}

uint64_t cluster_next_epoch(const struct cluster *c)
{
	return schedule_destination_epoch(&c->schedule, c->base);
}

/* --- links ---------------------------------------------------------------------------------- */

struct faultproxy *cluster_link(struct cluster *c, size_t from, size_t to)
{
	ck_assert_msg(from < c->n && to < c->n && from != to, "no link %zu->%zu", from, to);
	return c->links[from][to];
}

void cluster_link_set(struct cluster *c, size_t from, size_t to, enum faultproxy_mode mode,
                      uint64_t parameter)
{
	int rc = faultproxy_set_mode(cluster_link(c, from, to), mode, parameter);
	ck_assert_msg(rc == 0, "link %zu->%zu %s: %s", from, to, faultproxy_mode_name(mode),
	              dirauth_strerror(rc));
}

void cluster_links_to(struct cluster *c, size_t to, enum faultproxy_mode mode, uint64_t parameter)
{
	for (size_t from = 0; from < c->n; from++)
		if (from != to)
			cluster_link_set(c, from, to, mode, parameter);
}

void cluster_links_from(struct cluster *c, size_t from, enum faultproxy_mode mode, uint64_t parameter)
{
	for (size_t to = 0; to < c->n; to++)
		if (from != to)
			cluster_link_set(c, from, to, mode, parameter);
}

void cluster_partition(struct cluster *c, unsigned group, ...)
{
	int group_of[CLUSTER_MAX_AUTHORITIES];
	for (size_t i = 0; i < c->n; i++)
		group_of[i] = -1;
	va_list args;
	va_start(args, group);
	for (int index = 0; group != 0; index++, group = va_arg(args, unsigned)) {
		for (size_t i = 0; i < c->n; i++) {
			if (!(group & CLUSTER_BIT(i)))
				continue;
			ck_assert_msg(group_of[i] < 0, "authority %zu is in two groups", i);
			group_of[i] = index;
		}
		ck_assert_msg((group >> c->n) == 0, "a group names an authority past %zu", c->n);
	}
	va_end(args);
	for (size_t from = 0; from < c->n; from++)
		for (size_t to = 0; to < c->n; to++)
			if (from != to)
				cluster_link_set(c, from, to,
				                 group_of[from] >= 0 && group_of[from] == group_of[to]
				                     ? FAULTPROXY_PASS
				                     : FAULTPROXY_CUT,
				                 0);
}

void cluster_heal(struct cluster *c)
{
	for (size_t from = 0; from < c->n; from++)
		for (size_t to = 0; to < c->n; to++)
			if (from != to)
				cluster_link_set(c, from, to, FAULTPROXY_PASS, 0);
}

void cluster_link_bytes(struct cluster *c, size_t i, struct cluster_link_bytes *out)
{
	ck_assert_msg(i < c->n, "no authority %zu", i);
	memset(out, 0, sizeof *out);
	for (size_t peer = 0; peer < c->n; peer++) {
		if (peer == i)
			continue;
		struct faultproxy_counters from, to;
		faultproxy_counters(c->links[i][peer], &from);
		faultproxy_counters(c->links[peer][i], &to);
		out->requests_sent += from.bytes_to_target;
		out->answers_received += from.bytes_to_client;
		out->requests_received += to.bytes_to_target;
		out->answers_sent += to.bytes_to_client;
	}
}

/* --- HTTP ----------------------------------------------------------------------------------- */

static size_t collect(char *data, size_t size, size_t count, void *context)
{
	struct buffer *body = context;
	if (body->len + size * count > RESPONSE_CAP || buffer_append(body, data, size * count) != 0)
		return 0;
	return size * count;
}

/* One request (cluster_http); https servers verified against ca_file when it is not NULL. */
static long http_request(const char *url, const uint8_t *body, size_t body_len, const char *header,
                         long timeout_ms, const char *ca_file, struct cluster_response *response)
{
	buffer_init(&response->body);
	response->status = -1;
	CURL *curl = curl_easy_init();
	ck_assert(curl != NULL);
	struct curl_slist *headers = curl_slist_append(NULL, "Expect:");
	if (header)
		headers = curl_slist_append(headers, header);
	curl_easy_setopt(curl, CURLOPT_URL, url);
	curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, collect);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, &response->body);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, timeout_ms > 0 ? timeout_ms : 10000L);
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(curl, CURLOPT_NOPROXY, "*");
	if (ca_file)
		curl_easy_setopt(curl, CURLOPT_CAINFO, ca_file);
	if (body) {
		curl_easy_setopt(curl, CURLOPT_POSTFIELDS, (const char *)body);
		curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, (long)body_len);
	}
	if (curl_easy_perform(curl) == CURLE_OK)
		curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &response->status);
	curl_slist_free_all(headers);
	curl_easy_cleanup(curl);
	return response->status;
}

long cluster_http(const char *url, const uint8_t *body, size_t body_len, const char *header, long timeout_ms,
                  struct cluster_response *response)
{
	return http_request(url, body, body_len, header, timeout_ms, NULL, response);
}

long cluster_https(const struct cluster *c, const char *url, const uint8_t *body, size_t body_len,
                   const char *header, long timeout_ms, struct cluster_response *response)
{
	return http_request(url, body, body_len, header, timeout_ms, cluster_ca_path(c), response);
}

long cluster_get(struct cluster *c, size_t i, const char *path, struct cluster_response *response)
{
	char url[1024];
	snprintf(url, sizeof url, "%s%s", member(c, i)->url, path);
	return cluster_http(url, NULL, 0, NULL, 0, response);
}

long cluster_post(struct cluster *c, size_t i, const char *path, const uint8_t *body, size_t len,
                  struct cluster_response *response)
{
	char url[1024];
	snprintf(url, sizeof url, "%s%s", member(c, i)->url, path);
	return cluster_http(url, body ? body : (const uint8_t *)"", len, NULL, 0, response);
}

void cluster_response_free(struct cluster_response *response)
{
	buffer_free(&response->body);
}

static void parse_header_note(const struct member *m, const struct buffer *note,
                              struct snapshot_header *header)
{
	struct note *parsed = NULL;
	int rc = note_parse(note->data, note->len, &parsed);
	ck_assert_msg(rc == 0, "%s served a header note that does not parse: %s", m->name,
	              dirauth_strerror(rc));
	rc = snapshot_header_parse(parsed->text, parsed->text_len, header);
	ck_assert_msg(rc == 0, "%s served a header that does not parse: %s", m->name, dirauth_strerror(rc));
	note_free(parsed);
}

int cluster_latest(struct cluster *c, size_t i, struct snapshot_header *header, struct buffer *note)
{
	struct cluster_response response;
	char url[256];
	snprintf(url, sizeof url, "%s/v1/%s/snapshots/latest", member(c, i)->url, CLUSTER_NAMESPACE);
	if (cluster_http(url, NULL, 0, NULL, 2000, &response) != 200) {
		cluster_response_free(&response);
		return DIRAUTH_ERR_NOT_FOUND;
	}
	parse_header_note(&c->members[i], &response.body, header);
	if (note)
		*note = response.body;
	else
		cluster_response_free(&response);
	return 0;
}

int cluster_wait_epoch(struct cluster *c, size_t i, uint64_t epoch, int timeout_ms,
                       struct snapshot_header *header, struct buffer *note)
{
	for (int waited = 0;; waited += 20) {
		struct buffer latest;
		if (cluster_latest(c, i, header, &latest) == 0) {
			if (header->epoch >= epoch) {
				if (note)
					*note = latest;
				else
					buffer_free(&latest);
				return 0;
			}
			buffer_free(&latest);
		}
		if (waited >= timeout_ms)
			return DIRAUTH_ERR_STALE;
		test_sleep_ms(20);
	}
}

int cluster_snapshot(struct cluster *c, size_t i, uint64_t epoch, struct buffer *header_note,
                     struct buffer *body)
{
	char url[256];
	struct cluster_response response;
	snprintf(url, sizeof url, "%s/v1/%s/snapshots/%llu", member(c, i)->url, CLUSTER_NAMESPACE,
	         (unsigned long long)epoch);
	if (cluster_http(url, NULL, 0, NULL, 0, &response) != 200) {
		cluster_response_free(&response);
		return DIRAUTH_ERR_NOT_FOUND;
	}
	struct buffer header_bytes = response.body;
	snprintf(url, sizeof url, "%s/v1/%s/snapshots/%llu/body", c->members[i].url, CLUSTER_NAMESPACE,
	         (unsigned long long)epoch);
	if (body) {
		if (cluster_http(url, NULL, 0, "Accept-Encoding: identity", 0, &response) != 200) {
			cluster_response_free(&response);
			buffer_free(&header_bytes);
			return DIRAUTH_ERR_NOT_FOUND;
		}
		*body = response.body;
	}
	if (header_note)
		*header_note = header_bytes;
	else
		buffer_free(&header_bytes);
	return 0;
}

void cluster_expect_headers(struct cluster *c, size_t i, uint64_t from, uint64_t to)
{
	for (uint64_t epoch = from; epoch < to; epoch++) {
		struct buffer note;
		ck_assert_msg(cluster_snapshot(c, i, epoch, &note, NULL) == 0, "%s does not serve epoch %llu",
		              cluster_name(c, i), (unsigned long long)epoch);
		buffer_free(&note);
	}
}

int cluster_signers(const struct cluster *c, const uint8_t *note, size_t len, unsigned *members)
{
	struct note_verifier keys[CLUSTER_MAX_AUTHORITIES];
	uint8_t verified[CLUSTER_MAX_AUTHORITIES];
	for (size_t i = 0; i < c->n; i++)
		keys[i] = *signer_key_verifier(c->members[i].signing);
	if (members)
		*members = 0;
	struct note *parsed = NULL;
	if (note_parse(note, len, &parsed) != 0)
		return 0;
	size_t count = 0;
	int rc = note_verify(parsed, keys, c->n, verified, &count);
	note_free(parsed);
	if (rc != 0)
		return -1;
	for (size_t i = 0; members && i < c->n; i++)
		if (verified[i])
			*members |= CLUSTER_BIT(i);
	return (int)count;
}

uint8_t *cluster_log(const struct cluster *c, size_t i, size_t *len)
{
	return test_read_file(member_const(c, i)->log_path, len);
}

static int file_contains(const char *path, const char *text)
{
	if (access(path, R_OK) != 0)
		return 0;
	uint8_t *data = test_read_file(path, NULL);
	int found = strstr((const char *)data, text) != NULL;
	free(data);
	return found;
}

int cluster_log_contains(const struct cluster *c, size_t i, const char *text)
{
	return file_contains(member_const(c, i)->log_path, text);
}

int cluster_signer_log_contains(const struct cluster *c, size_t i, const char *text)
{
	return file_contains(member_const(c, i)->signer_log_path, text);
}

/* --- providers and mirrors ------------------------------------------------------------------ */

void cluster_service_id(const char *label, uint64_t number, uint8_t out[32])
{
	char text[160];
	int n = snprintf(text, sizeof text, "%s-%llu", label, (unsigned long long)number);
	ck_assert(crypto_sha256((const uint8_t *)text, (size_t)n, out) == 0);
}

void cluster_registration(const struct cluster *c, const struct signer_key *provider, const char *label,
                          uint64_t number, uint64_t sequence, struct buffer *out)
{
	int64_t earliest = 0;
	for (size_t i = 0; i < c->n; i++)
		if (c->members[i].skew < earliest)
			earliest = c->members[i].skew;
	struct registration r;
	struct endpoint_descriptor endpoints[2];
	memset(&r, 0, sizeof r);
	snprintf(r.namespace_name, sizeof r.namespace_name, "%s", CLUSTER_NAMESPACE);
	cluster_service_id(label, number, r.service_id);
	r.service_class = SERVICE_CLASS_MIX_GATEWAY;
	r.provider = *signer_key_verifier(provider);
	r.sequence = sequence;
	r.issued_at = (uint64_t)((int64_t)c->base + earliest);
	r.expires = r.issued_at + 86400;
	for (size_t i = 0; i < 2; i++) {
		memset(&endpoints[i], 0, sizeof endpoints[i]);
		char endpoint_label[160];
		snprintf(endpoint_label, sizeof endpoint_label, "%s-endpoint", label);
		cluster_service_id(endpoint_label, number * 16 + i, endpoints[i].endpoint_id);
		endpoints[i].transport = TRANSPORT_QUIC;
		snprintf(endpoints[i].address, sizeof endpoints[i].address, "192.0.2.%zu:443", 10 + i);
		snprintf(endpoints[i].region, sizeof endpoints[i].region, "eu-west");
		endpoints[i].capacity = CAPACITY_MEDIUM;
		endpoints[i].profile = PROFILE_MODERN;
	}
	r.endpoint_count = 2;
	r.endpoints = endpoints;
	registration_sort_endpoints(&r);
	struct buffer text;
	struct note_signature signature;
	buffer_init(&text);
	int rc = registration_encode(&r, &text);
	ck_assert_msg(rc == 0, "registration_encode: %s", dirauth_strerror(rc));
	ck_assert(signer_key_sign(provider, text.data, text.len, &signature) == 0);
	buffer_init(out);
	ck_assert(note_format(text.data, text.len, &signature, 1, out) == 0);
	buffer_free(&text);
}

size_t cluster_register(struct cluster *c, unsigned members, const struct buffer *note, long *statuses)
{
	size_t accepted = 0;
	c->refusal[0] = '\0';
	for (size_t i = 0; i < c->n; i++) {
		if (statuses)
			statuses[i] = 0;
		if (!(members & CLUSTER_BIT(i)))
			continue;
		struct cluster_response response;
		long status = cluster_post(c, i, "/v1/registrations", note->data, note->len, &response);
		if (status != 202 && !c->refusal[0])
			snprintf(c->refusal, sizeof c->refusal, "%s answered %ld: %.*s", cluster_name(c, i),
			         status, (int)(response.body.len < 400 ? response.body.len : 400),
			         response.body.data ? (const char *)response.body.data : "");
		cluster_response_free(&response);
		if (statuses)
			statuses[i] = status;
		accepted += status == 202;
	}
	return accepted;
}

const char *cluster_last_refusal(const struct cluster *c)
{
	return c->refusal;
}

int cluster_fetch(struct cluster *c, size_t i, const char *out_dir, uint64_t now,
                  struct test_outcome *outcome)
{
	char work[PATH_CAP], now_text[32];
	snprintf(work, sizeof work, "%s/fetch-%u", c->dir, c->fetches++);
	make_dir(work, 0700);
	snprintf(now_text, sizeof now_text, "%llu", (unsigned long long)now);
	const char *args[] = {"fetch",           "--trust",     c->trust_path,     "--server",
	                      member(c, i)->url, "--namespace", CLUSTER_NAMESPACE, "--out",
	                      out_dir,           "--now",       now_text,          NULL};
	char binary[4096];
	snprintf(binary, sizeof binary, "%s", test_binary_path("ctl/dirauthctl"));
	test_run_program(binary, args, work, outcome);
	return outcome->status;
}

/* --- many registrations -------------------------------------------------------------------- */

struct build_job {
	const struct cluster *c;
	const char *label;
	uint64_t first, sequence;
	struct buffer *notes;
	size_t count;
	atomic_size_t next;
};

static void *build_worker(void *context)
{
	struct build_job *job = context;
	for (;;) {
		size_t r = atomic_fetch_add(&job->next, 1);
		if (r >= job->count)
			return NULL;
		/* A service's provider follows its number, so a later sequence is its own. */
		const struct signer_key *provider =
		    cluster_provider_key(job->c, (job->first + r) % CLUSTER_PROVIDERS);
		cluster_registration(job->c, provider, job->label, job->first + r, job->sequence,
		                     &job->notes[r]);
	}
}

struct buffer *cluster_registrations(const struct cluster *c, const char *label, uint64_t first, size_t count,
                                     uint64_t sequence)
{
	struct build_job job = {
	    c, label, first, sequence, calloc(count ? count : 1, sizeof(struct buffer)), count, 0};
	ck_assert(job.notes != NULL);
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	size_t threads = cores > 0 && cores < CLUSTER_REGISTER_THREADS_MAX ? (size_t)cores : 1;
	pthread_t workers[CLUSTER_REGISTER_THREADS_MAX];
	for (size_t t = 0; t < threads; t++)
		ck_assert(pthread_create(&workers[t], NULL, build_worker, &job) == 0);
	for (size_t t = 0; t < threads; t++)
		pthread_join(workers[t], NULL);
	return job.notes;
}

void cluster_registrations_free(struct buffer *notes, size_t count)
{
	for (size_t r = 0; notes && r < count; r++)
		buffer_free(&notes[r]);
	free(notes);
}

struct ingest {
	const struct cluster *c;
	const struct buffer *notes;
	const unsigned *holders;
	size_t count;
	atomic_size_t next;
	atomic_size_t posted;
	atomic_int failed;
	pthread_mutex_t lock;
	char failure[512];
};

static void ingest_fail(struct ingest *in, const char *format, ...) __attribute__((format(printf, 2, 3)));
static void ingest_fail(struct ingest *in, const char *format, ...)
{
	pthread_mutex_lock(&in->lock);
	if (!atomic_load(&in->failed)) {
		va_list args;
		va_start(args, format);
		vsnprintf(in->failure, sizeof in->failure, format, args);
		va_end(args);
		atomic_store(&in->failed, 1);
	}
	pthread_mutex_unlock(&in->lock);
}

static size_t ingest_collect(char *data, size_t size, size_t count, void *context)
{
	return buffer_append(context, data, size * count) == 0 ? size * count : 0;
}

/* One client thread: one keep-alive connection to each authority; takes the next registration
 * and POSTs it to each of its holders. Only a 202 counts. */
static void *ingest_worker(void *context)
{
	struct ingest *in = context;
	size_t n = cluster_size(in->c);
	CURL *handles[CLUSTER_MAX_AUTHORITIES] = {0};
	char urls[CLUSTER_MAX_AUTHORITIES][128];
	struct curl_slist *headers = curl_slist_append(NULL, "Expect:");
	struct buffer answer;
	buffer_init(&answer);
	for (size_t a = 0; a < n; a++) {
		snprintf(urls[a], sizeof urls[a], "%s/v1/registrations", cluster_url(in->c, a));
		handles[a] = curl_easy_init();
		if (!handles[a]) {
			ingest_fail(in, "curl_easy_init failed");
			goto done;
		}
		curl_easy_setopt(handles[a], CURLOPT_URL, urls[a]);
		curl_easy_setopt(handles[a], CURLOPT_HTTPHEADER, headers);
		curl_easy_setopt(handles[a], CURLOPT_TIMEOUT, 120L);
		curl_easy_setopt(handles[a], CURLOPT_NOSIGNAL, 1L);
		curl_easy_setopt(handles[a], CURLOPT_NOPROXY, "*");
		curl_easy_setopt(handles[a], CURLOPT_TCP_NODELAY, 1L);
		curl_easy_setopt(handles[a], CURLOPT_WRITEFUNCTION, ingest_collect);
		curl_easy_setopt(handles[a], CURLOPT_WRITEDATA, &answer);
	}
	while (!atomic_load(&in->failed)) {
		size_t r = atomic_fetch_add(&in->next, 1);
		if (r >= in->count)
			break;
		for (size_t a = 0; a < n && !atomic_load(&in->failed); a++) {
			if (in->holders && !(in->holders[r] & CLUSTER_BIT(a)))
				continue;
			buffer_reset(&answer);
			curl_easy_setopt(handles[a], CURLOPT_POSTFIELDS, (const char *)in->notes[r].data);
			curl_easy_setopt(handles[a], CURLOPT_POSTFIELDSIZE_LARGE,
			                 (curl_off_t)in->notes[r].len);
			CURLcode rc = curl_easy_perform(handles[a]);
			long status = 0;
			curl_easy_getinfo(handles[a], CURLINFO_RESPONSE_CODE, &status);
			if (rc != CURLE_OK)
				ingest_fail(in, "registration %zu to %s: %s", r, cluster_name(in->c, a),
				            curl_easy_strerror(rc));
			else if (status != 202)
				ingest_fail(in, "registration %zu to %s answered %ld: %.200s", r,
				            cluster_name(in->c, a), status,
				            answer.len ? (const char *)answer.data : "");
			else
				atomic_fetch_add(&in->posted, 1);
		}
	}
done:
	for (size_t a = 0; a < n; a++)
		if (handles[a])
			curl_easy_cleanup(handles[a]);
	curl_slist_free_all(headers);
	buffer_free(&answer);
	return NULL;
}

size_t cluster_register_all(const struct cluster *c, const struct buffer *notes, const unsigned *holders,
                            size_t count, unsigned threads, double *seconds)
{
	struct ingest in = {.c = c, .notes = notes, .holders = holders, .count = count};
	struct timespec started, ended;
	ck_assert(threads >= 1 && threads <= CLUSTER_REGISTER_THREADS_MAX);
	pthread_mutex_init(&in.lock, NULL);
	pthread_t workers[CLUSTER_REGISTER_THREADS_MAX];
	clock_gettime(CLOCK_MONOTONIC, &started);
	for (unsigned t = 0; t < threads; t++)
		ck_assert(pthread_create(&workers[t], NULL, ingest_worker, &in) == 0);
	for (unsigned t = 0; t < threads; t++)
		pthread_join(workers[t], NULL);
	clock_gettime(CLOCK_MONOTONIC, &ended);
	if (seconds)
		*seconds =
		    (double)(ended.tv_sec - started.tv_sec) + (double)(ended.tv_nsec - started.tv_nsec) / 1e9;
	pthread_mutex_destroy(&in.lock);
	ck_assert_msg(!atomic_load(&in.failed), "registering: %s", in.failure);
	return atomic_load(&in.posted);
}

/* --- programs built on a cluster ---------------------------------------------------------- */

static void (*alone_body)(void);

START_TEST(run_alone)
{
	alone_body();
	fflush(stdout);
	fflush(stderr);
	_exit(0); /* passed: before Check packs the duration */
}
END_TEST

int cluster_run_alone(const char *program, void (*body)(void), double timeout_seconds)
{
	alone_body = body;
	Suite *suite = suite_create(program);
	TCase *tcase = tcase_create(program);
	tcase_set_timeout(tcase, timeout_seconds);
	tcase_add_test(tcase, run_alone);
	suite_add_tcase(suite, tcase);
	SRunner *runner = srunner_create(suite);
	srunner_run_all(runner, CK_SILENT);
	int failed = srunner_ntests_failed(runner);
	if (failed) {
		TestResult **results = srunner_failures(runner);
		for (int i = 0; i < failed; i++)
			fprintf(stderr, "%s: FAILED (%s:%d): %s\n", program, tr_lfile(results[i]),
			        tr_lno(results[i]), tr_msg(results[i]));
		free(results);
	}
	srunner_free(runner);
	return failed;
}
