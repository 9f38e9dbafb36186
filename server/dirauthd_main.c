/*
 * dirauthd_main.c: the dirauthd program: configuration, store, signer client, scheduler, HTTP.
 *
 * main() builds every long-lived object and passes it down; nothing else in the server holds
 * global state. Signals are blocked in every thread and taken synchronously by main with
 * sigwait(), so a SIGINT or SIGTERM stops the server in order: HTTP first (no new requests),
 * then the scheduler (a publication in progress completes), then the store (queued
 * submissions are committed and answered), then the signer connection.
 *
 * dirauthd holds no private key (it does not even link the key-loading code): every signature
 * comes from dirauth-signer over authority.signer_socket. At start it asks the signer for its
 * keys and refuses to run (78) if the signing key is not named authority.name; a signer that
 * does not answer at start is not fatal: dirauthd serves reads, answers /v1/ready 503, refuses
 * registrations, and starts signing as soon as the signer answers.
 *
 * Every dirauthd runs the round (server/round), which the scheduler drives; without an
 * authorities section it is the round of a set of one (n = k = 1). With one, dirauthd is a member
 * of a set: it also builds the peer client and the authority set's keyrings (its own
 * certificates from its signer, the others' fetched from their GET /v1/certificates), through
 * which the round reaches its peers and which the HTTP routes between authorities feed.
 *
 * SIGHUP reloads the configuration (server/config/reload.h) on main's thread, between two
 * sigwait() calls, so no signal handler runs any of it: the file is loaded and checked as at
 * start, merged with the running configuration (the keys that need a restart keep their running
 * value, each said in one line), installed in the holder every request reads its live keys from
 * (server/config/live.h), and the HTTP guard and the peer client are told their new limits. A
 * file refused keeps the running configuration, with one line saying why (FILE:LINE). The service
 * manager hears RELOADING=1 before and READY=1 after, refused or not.
 *
 * Exit codes follow sysexits.h: 0, 64 usage, 78 configuration (including a signer whose key is
 * another authority's), 74 the store, 69 the HTTP listener, 70 anything else.
 */
#include "notify/notify.h"
#include "clock/clock.h"
#include "logline/logline.h"
#include "net/client.h"
#include "server/config/config.h"
#include "server/config/live.h"
#include "server/config/reload.h"
#include "server/peers/authority_set.h"
#include "server/peers/peer_client.h"
#include "server/publish/diffs.h"
#include "server/round/round.h"
#include "server/tlog/cosigning.h"
#include "server/tlog/translog.h"
#include "server/scheduler/scheduler.h"
#include "base/error.h"
#include "server/http/http.h"
#include "server/readpath/prepared.h"
#include "server/signing/signer_client.h"
#include "server/signing/signer_health.h"
#include "server/store/store.h"

#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define EXIT_USAGE       64
#define EXIT_UNAVAILABLE 69
#define EXIT_SOFTWARE    70
#define EXIT_IO          74
#define EXIT_CONFIG      78

/* How long one signer call may take: a header or receipt signature is a few milliseconds plus
 * one durable ledger commit. */
#define SIGNER_TIMEOUT_MS 5000

/* One line of dirauthd's log (logline.h) that concerns no particular epoch: it carries the current
 * one by the configured schedule and clock, "-" while either is missing. */
static void say(const struct config *config, const struct clock *clock, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
static void say(const struct config *config, const struct clock *clock, const char *format, ...)
{
	va_list args;
	va_start(args, format);
	logline_vwrite(stderr, "dirauthd", logline_epoch_now(clock, config ? &config->epoch : NULL), NULL,
	               format, args);
	va_end(args);
}

/* Tells the service manager (notify.h); a manager that cannot be told is a line in the log. */
static void tell_manager(const struct config *config, const struct clock *clock, const char *state)
{
	int rc = notify_send(state);
	if (rc)
		say(config, clock, "cannot notify the service manager: %s", dirauth_strerror(rc));
}

static void usage(FILE *out)
{
	fputs("usage: dirauthd --config FILE [--check-config]\n"
	      "\n"
	      "  --config FILE    the YAML configuration (see keys-example/dirauthd.yaml)\n"
	      "  --check-config   validate the configuration (and the signer's key name, if it answers)\n"
	      "  --help           this text\n",
	      out);
}

/* Loads the configuration; logs "FILE:LINE: problem" on refusal. */
static int load_config(const char *path, struct config **config)
{
	struct settings_error error;
	char problem[SETTINGS_REPORT_MAX];
	int status =
	    settings_describe_load(path, config_load(path, config, &error), &error, problem, sizeof problem);
	if (status)
		say(NULL, NULL, "%s", problem);
	return status;
}

/* Opens the signer connection and asks the signer for its keys. A signing key named for
 * another authority is a configuration error; a signer that does not answer is reported and
 * tolerated. */
static int open_signer(const char *config_path, const struct config *config, const struct clock *clock,
                       struct signer_client **client, struct signer_health **health)
{
	char why[SIGNER_HEALTH_DETAIL_MAX];
	int rc;
	if ((rc = signer_client_open(config->signer_socket, SIGNER_TIMEOUT_MS, client)) ||
	    (rc = signer_health_create(*client, config->authority_name, clock, health))) {
		say(config, clock, "%s", dirauth_strerror(rc));
		return EXIT_SOFTWARE;
	}
	rc = signer_health_check(*health, why, sizeof why);
	if (rc == DIRAUTH_ERR_MISMATCH) {
		say(config, clock, "%s: authority.signer_socket %s: %s", config_path, config->signer_socket,
		    why);
		return EXIT_CONFIG;
	}
	if (rc)
		say(config, clock,
		    "%s (%s); serving reads, not ready, refusing registrations until the signer can sign",
		    why, config->signer_socket);
	return 0;
}

/* Creates the missing parent directories of path (mode 0700), so that a fresh run directory
 * works with data_dir: data/authority1. The store creates the last component itself. */
static void make_parents(const char *path)
{
	char copy[CONFIG_PATH_MAX];
	snprintf(copy, sizeof copy, "%s", path);
	for (char *p = copy + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		mkdir(copy, 0700);
		*p = '/';
	}
}

/* What the transparency log needs after each publication, and at start. */
struct log_context {
	struct store *store;
	const struct config *config;
	struct signer_client *signer;
	struct translog_cosigning *cosigning; /* a member of several authorities: the others cosign */
};

/* Appends what was published to the namespace's log (translog.h); a namespace whose origin
 * names no log key of the signer keeps no log. A failure is logged; the next publication (or
 * start) appends what is missing, since the log is a function of the published headers. */
static void log_published(void *context, size_t namespace_index, uint64_t epoch)
{
	struct log_context *c = context;
	struct translog_outcome outcome;
	int rc = translog_catch_up(c->store, c->config, c->signer, namespace_index, &outcome);
	if (rc == 0 && outcome.has_checkpoint)
		translog_cosigning_kick(c->cosigning, namespace_index);
	if (rc && rc != DIRAUTH_ERR_CONFIG)
		logline_write(stderr, "dirauthd", epoch, c->config->namespaces[namespace_index].name,
		              "the log is behind: %s%s%s", dirauth_strerror(rc),
		              outcome.detail[0] ? ": " : "", outcome.detail);
}

/* The own certificate bundle, asked of the signer afresh (the authority set's own source). */
static int own_certificates(void *context, struct buffer *out)
{
	char why[SIGNER_DETAIL_MAX + 1];
	return signer_client_query(context, SIGNER_OP_GET_CERTIFICATES, NULL, 0, out, why, sizeof why);
}

/* The peer client and the authority set, through which the round asks the other members and
 * verifies what they send. A set of one has no peer to ask and no pinned identity to verify or
 * serve: it opens neither, and its round runs without them (round.h). */
static int open_peers(const struct config *config, struct signer_client *signer, struct peer_client **peers,
                      struct authority_set **set, char *why, size_t why_cap)
{
	if (config->member_count == 1)
		return 0;
	struct buffer own;
	buffer_init(&own);
	struct peer_client_options peer_options = {.ca_file = config->peers.ca_file[0] ? config->peers.ca_file
	                                                                               : NULL};
	int rc = net_global_init();
	if (rc == 0)
		rc = peer_client_new(config, &peer_options, peers);
	if (rc == 0 && own_certificates(signer, &own) != 0)
		buffer_reset(&own); /* the signer is away: the set asks again at its first refresh */
	struct authority_set_options set_options = {
	    .own_certificates = own_certificates, .own_context = signer, .cache_dir = config->data_dir};
	if (rc == 0)
		rc = authority_set_new(config, *peers, own.len ? own.data : NULL, own.len, &set_options, set,
		                       why, why_cap);
	buffer_free(&own);
	return rc;
}

/* The round that prepares and publishes each epoch (round.h), with its peers if it has any. */
static int open_round(const struct config *config, struct config_live *live, struct store *store,
                      struct signer_client *signer, struct signer_health *signer_health,
                      const struct clock *clock, struct prepared_set *prepared, struct log_context *log,
                      struct publish_diffs *diffs, struct peer_client **peers, struct authority_set **set,
                      struct round **round)
{
	char why[512] = "";
	int rc = open_peers(config, signer, peers, set, why, sizeof why);
	struct round_options round_options = {.config = config,
	                                      .store = store,
	                                      .signer = signer,
	                                      .signer_health = signer_health,
	                                      .clock = clock,
	                                      .authorities = *set,
	                                      .peers = *peers,
	                                      .prepared = prepared,
	                                      .on_published = log_published,
	                                      .on_published_context = log,
	                                      .diffs = diffs,
	                                      .live = live};
	if (rc == 0)
		rc = round_create(&round_options, round);
	if (rc)
		say(config, clock, "the authority set: %s%s%s", dirauth_strerror(rc), why[0] ? ": " : "",
		    why);
	return rc;
}

/* What a reload changes: the holder every request reads the live keys from, and the objects that
 * took a copy of them at start. */
struct reload_targets {
	const char *config_path;
	struct config_live *live;
	struct http_server *http;
	struct peer_client *peers; /* NULL for an authority alone */
	const struct clock *clock;
};

/* Reads the configuration again and applies what may change live (reload.h); a file refused
 * changes nothing. Tells the service manager RELOADING=1 before, READY=1 after. */
static void reload(const struct reload_targets *t)
{
	const struct config *running = config_live_acquire(t->live);
	int rc = notify_reloading("reloading the configuration");
	if (rc)
		say(running, t->clock, "cannot notify the service manager: %s", dirauth_strerror(rc));
	struct config *loaded = NULL;
	struct settings_error error;
	char problem[SETTINGS_REPORT_MAX];
	struct config_reload_report *report = calloc(1, sizeof *report);
	if (!report) {
		say(running, t->clock, "reload: refused, kept the running configuration: out of memory");
	} else if (settings_describe_load(t->config_path, config_load(t->config_path, &loaded, &error),
	                                  &error, problem, sizeof problem) != 0) {
		say(running, t->clock, "reload: refused, kept the running configuration: %s", problem);
	} else if (config_reload_merge(running, loaded, report) != 0) {
		say(running, t->clock, "reload: refused, kept the running configuration: %s: %s",
		    t->config_path, report->refusal);
		config_free(loaded);
	} else {
		for (size_t i = 0; i < report->restart_count; i++)
			say(running, t->clock, "reload: %s", report->restart[i]);
		size_t providers = loaded->provider_count;
		if (config_live_replace(t->live, loaded) != 0) {
			say(running, t->clock,
			    "reload: refused, kept the running configuration: out of memory");
			config_free(loaded);
		} else {
			/* loaded is the holder's now; only this thread replaces it, so it stays. */
			http_server_reconfigure(t->http, loaded);
			if (t->peers)
				peer_client_reconfigure(t->peers, loaded);
			char applied[CONFIG_RELOAD_LINE_MAX] = "";
			size_t at = 0;
			for (size_t i = 0; i < report->applied_count && at < sizeof applied; i++) {
				int n = snprintf(applied + at, sizeof applied - at, "%s%s", i ? ", " : "",
				                 report->applied[i]);
				at += n > 0 ? (size_t)n : 0;
			}
			say(running, t->clock,
			    "reload: applied %s (%zu providers enrolled); %zu changed keys need a restart",
			    report->applied_count ? applied : "no change", providers, report->restart_count);
		}
	}
	free(report);
	config_live_release(t->live, running);
	tell_manager(NULL, t->clock, "READY=1\nSTATUS=serving");
}

static int open_clock(const struct config *config, struct clock **clock)
{
	int rc = config->clock_source == CONFIG_CLOCK_FILE ? clock_open_file(config->clock_path, clock)
	                                                   : clock_open_system(clock);
	if (rc) {
		say(config, NULL, "clock: %s", dirauth_strerror(rc));
		return EXIT_SOFTWARE;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *config_path = NULL;
	int check_only = 0;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--config") == 0 && i + 1 < argc) {
			config_path = argv[++i];
		} else if (strcmp(argv[i], "--check-config") == 0) {
			check_only = 1;
		} else if (strcmp(argv[i], "--help") == 0) {
			usage(stdout);
			return 0;
		} else {
			fprintf(stderr, "dirauthd: unexpected argument '%s'\n", argv[i]);
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (!config_path) {
		usage(stderr);
		return EXIT_USAGE;
	}

	struct config *config = NULL;
	struct signer_client *signer = NULL;
	struct signer_health *signer_health = NULL;
	struct clock *clock = NULL;
	struct store *store = NULL;
	struct prepared_set *prepared = NULL;
	struct epoch_scheduler *scheduler = NULL;
	struct http_server *http = NULL;
	struct peer_client *peers = NULL;
	struct authority_set *authorities = NULL;
	struct round *round = NULL;
	struct translog_cosigning *cosigning = NULL;
	struct publish_diffs *diffs = NULL;
	struct config_live *live = NULL;
	int status, rc;

	if ((status = load_config(config_path, &config)) != 0)
		return status;
	/* The holder owns the configuration from now on; main keeps its reference to the one it
	 * started with until it stops, and every module given that pointer reads its restart-only
	 * keys there (reload.h). */
	if (config_live_new(config, &live) != 0) {
		say(config, NULL, "out of memory");
		config_free(config);
		return EXIT_SOFTWARE;
	}
	config = (struct config *)config_live_acquire(live);
	if ((status = open_clock(config, &clock)) != 0 ||
	    (status = open_signer(config_path, config, clock, &signer, &signer_health)) != 0)
		goto cleanup;
	if (check_only) {
		printf("%s: ok\n", config_path);
		goto cleanup;
	}

	/* Block the stop signals before any thread starts, so every thread inherits the mask and
	 * only sigwait() below receives them. */
	sigset_t signals;
	sigemptyset(&signals);
	sigaddset(&signals, SIGINT);
	sigaddset(&signals, SIGTERM);
	sigaddset(&signals, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &signals, NULL);
	signal(SIGPIPE, SIG_IGN);

	make_parents(config->data_dir);
	struct store_options store_options = {.path = config->data_dir,
	                                      .map_size = config->store.map_size_bytes,
	                                      .refuse_percent = config->store.refuse_percent};
	if ((rc = store_open(&store_options, &store)) != 0) {
		uint64_t format = 0;
		if (rc == DIRAUTH_ERR_STORE && store_format_read(config->data_dir, &format) == 0 &&
		    (format < STORE_FORMAT_OLDEST || format > STORE_FORMAT))
			say(config, clock,
			    "store %s is of format %llu; this dirauthd reads formats %d to %d "
			    "(docs/operating.md, \"Upgrading dirauthd\")",
			    config->data_dir, (unsigned long long)format, STORE_FORMAT_OLDEST, STORE_FORMAT);
		else
			say(config, clock, "store %s: %s", config->data_dir, dirauth_strerror(rc));
		status = EXIT_IO;
		goto cleanup;
	}
	if ((rc = prepared_set_create(config, store, &prepared)) != 0) {
		say(config, clock, "%s", dirauth_strerror(rc));
		status = EXIT_SOFTWARE;
		goto cleanup;
	}
	/* The log follows each publication, and catches up with what was published before a crash
	 * at the scheduler's first tick (after that tick's publication, which comes first). */
	struct log_context log = {store, config, signer, NULL};
	/* The diffs to each published body, built on their own thread (diffs.bases 0: none). */
	struct publish_diffs_options diffs_options = {.config = config, .store = store, .log = stderr};
	if ((rc = publish_diffs_start(&diffs_options, &diffs)) != 0) {
		say(config, clock, "cannot start building diffs: %s", dirauth_strerror(rc));
		status = EXIT_SOFTWARE;
		goto cleanup;
	}
	if (open_round(config, live, store, signer, signer_health, clock, prepared, &log, diffs, &peers,
	               &authorities, &round) != 0) {
		status = EXIT_CONFIG;
		goto cleanup;
	}
	/* The other authorities, when there are any, cosign each checkpoint (add-checkpoint); what
	 * was stored before a restart is sent again at once. */
	struct translog_cosigning_options cosigning_options = {.config = config,
	                                                       .store = store,
	                                                       .signer = signer,
	                                                       .peers = peers,
	                                                       .log = stderr,
	                                                       .clock = clock};
	if (peers) {
		if ((rc = translog_cosigning_new(&cosigning_options, &cosigning)) != 0) {
			say(config, clock, "cannot start collecting cosignatures: %s", dirauth_strerror(rc));
			status = EXIT_SOFTWARE;
			goto cleanup;
		}
		log.cosigning = cosigning;
		for (size_t i = 0; i < config->namespace_count; i++)
			translog_cosigning_kick(cosigning, i);
	}
	struct epoch_scheduler_options scheduler_options = {.config = config,
	                                                    .store = store,
	                                                    .clock = clock,
	                                                    .prepared = prepared,
	                                                    .round = round,
	                                                    .on_published = log_published,
	                                                    .on_published_context = &log};
	if ((rc = epoch_scheduler_create(&scheduler_options, &scheduler)) != 0) {
		say(config, clock, "loading the stored snapshots: %s", dirauth_strerror(rc));
		status = rc == DIRAUTH_ERR_STORE || rc == DIRAUTH_ERR_IO ? EXIT_IO : EXIT_SOFTWARE;
		goto cleanup;
	}
	struct http_options http_options = {.config = config,
	                                    .store = store,
	                                    .signer = signer,
	                                    .signer_health = signer_health,
	                                    .clock = clock,
	                                    .prepared = prepared,
	                                    /* The routes between authorities: with peers only. */
	                                    .round = authorities ? round : NULL,
	                                    .authorities = authorities,
	                                    .live = live,
	                                    .measured_round = round,
	                                    .peers = peers,
	                                    .cosigning = cosigning};
	if ((rc = http_server_start(&http_options, &http)) != 0) {
		say(config, clock, "cannot listen on %s:%u: %s", config->listen_address,
		    (unsigned)config->listen_port, dirauth_strerror(rc));
		status = EXIT_UNAVAILABLE;
		goto cleanup;
	}
	if ((rc = epoch_scheduler_start(scheduler)) != 0) {
		say(config, clock, "cannot start the scheduler: %s", dirauth_strerror(rc));
		status = EXIT_SOFTWARE;
		goto cleanup;
	}
	say(config, clock, "listening on %s:%u", config->listen_address, (unsigned)config->listen_port);
	tell_manager(config, clock, "READY=1\nSTATUS=serving");

	struct reload_targets reload_targets = {config_path, live, http, peers, clock};
	int received = 0;
	for (;;) {
		if (sigwait(&signals, &received) != 0)
			continue;
		if (received != SIGHUP)
			break;
		reload(&reload_targets);
	}
	say(config, clock, "stopping (signal %d)", received);
	tell_manager(config, clock, "STOPPING=1\nSTATUS=stopping");
cleanup:
	http_server_stop(http);
	epoch_scheduler_free(scheduler);
	translog_cosigning_free(cosigning);
	round_free(round);
	publish_diffs_stop(diffs);
	authority_set_free(authorities);
	peer_client_free(peers);
	prepared_set_free(prepared);
	store_close(store);
	clock_close(clock);
	signer_health_free(signer_health);
	signer_client_close(signer);
	config_live_release(live, config);
	config_live_free(live);
	return status;
}
