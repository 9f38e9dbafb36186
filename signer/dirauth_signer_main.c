/*
 * dirauth_signer_main.c: the dirauth-signer program, the process that holds the keys.
 *
 * It reads its configuration, makes itself undumpable (no core file, no ptrace by the same
 * uid, no /proc/PID/mem: the keys live in this process's memory) before it reads any key,
 * loads and checks the keys and certificates and opens its ledger (service.h), then serves
 * dirauthd's requests on a UNIX socket (listener.h), several connections at once, until SIGTERM
 * or SIGINT. Those signals are blocked in every thread and taken with sigwait(), so the stop is
 * orderly: the requests being served complete, then the socket file is removed and the keys are
 * wiped. SIGHUP is taken the same way and changes nothing: everything the signer holds (keys,
 * certificates, namespaces, ledger) is read at start, and a signer that changed its keys under a
 * running dirauthd would sign what dirauthd did not expect; it says so in one line, and a restart
 * applies a new configuration.
 *
 * Exit codes follow sysexits.h, one stderr line each: 0; 64 usage; 77 a key file or directory
 * other users could reach, or a socket that cannot be given to allowed_uid (no CAP_CHOWN: a
 * restart will not help either); 78 the configuration, a key file that is missing or not a key, a
 * certificate that is malformed, for another key, or not valid now, a clock that cannot be read
 * at start, a namespace the service refuses; 74 the ledger or the audit
 * log; 69 the socket otherwise (another signer running on it, a file in its place); 70
 * anything else.
 */
#define _GNU_SOURCE /* prctl */
#include "notify/notify.h"
#include "clock/clock.h"
#include "logline/logline.h"
#include "base/error.h"
#include "signer/listener.h"
#include "signer/service.h"
#include "signer/signer_config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#define EXIT_USAGE       64
#define EXIT_UNAVAILABLE 69
#define EXIT_SOFTWARE    70
#define EXIT_IO          74
#define EXIT_NOPERM      77
#define EXIT_CONFIG      78

/* One line of the signer's log (logline.h). These concern no request, hence no epoch: the signer
 * has a schedule per namespace, none of its own. */
static void say(const char *format, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *format, ...)
{
	va_list args;
	va_start(args, format);
	logline_vwrite(stderr, "dirauth-signer", LOGLINE_EPOCH_NONE, NULL, format, args);
	va_end(args);
}

/* Tells the service manager (notify.h); a manager that cannot be told is a line in the log. */
static void tell_manager(const char *state)
{
	int rc = notify_send(state);
	if (rc)
		say("cannot notify the service manager: %s", dirauth_strerror(rc));
}

static void usage(FILE *out)
{
	fputs("usage: dirauth-signer --config FILE [--check-config]\n"
	      "\n"
	      "  --config FILE    the YAML configuration (see keys-example/dirauth-signer.yaml)\n"
	      "  --check-config   load and check the configuration, keys and certificates, then exit\n"
	      "  --help           this text\n",
	      out);
}

/* No core dumps and no same-uid ptrace: a crash or a debugger must not carry the keys away. */
static int harden(void)
{
	struct rlimit none = {.rlim_cur = 0, .rlim_max = 0};
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) {
		say("prctl(PR_SET_DUMPABLE, 0): %s", strerror(errno));
		return EXIT_SOFTWARE;
	}
	if (setrlimit(RLIMIT_CORE, &none) != 0) {
		say("setrlimit(RLIMIT_CORE, 0): %s", strerror(errno));
		return EXIT_SOFTWARE;
	}
	return 0;
}

/* The service's clock: the clock's own error when it cannot be read; the service then refuses
 * to sign. */
static int clock_callback(void *context, uint64_t *now)
{
	return clock_now(context, now);
}

static int load_config(const char *path, struct signer_config **config)
{
	struct settings_error error;
	char problem[SETTINGS_REPORT_MAX];
	int status = settings_describe_load(path, signer_config_load(path, config, &error), &error, problem,
	                                    sizeof problem);
	if (status)
		say("%s", problem);
	return status;
}

/* Opens the audit log for appending (0600), or uses standard error. */
static int open_audit(const struct signer_config *config, FILE **out)
{
	int fd;
	*out = stderr;
	if (!config->audit_log_path[0])
		return 0;
	fd = open(config->audit_log_path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 || !(*out = fdopen(fd, "a"))) {
		say("audit log %s: %s", config->audit_log_path, strerror(errno));
		if (fd >= 0)
			close(fd);
		*out = NULL;
		return EXIT_IO;
	}
	return 0;
}

static int service_exit_status(int rc)
{
	switch (rc) {
	case DIRAUTH_ERR_PERMISSION:
		return EXIT_NOPERM;
	case DIRAUTH_ERR_CONFIG:
	case DIRAUTH_ERR_STALE:
	case DIRAUTH_ERR_MISMATCH:
	case DIRAUTH_ERR_NOT_FOUND:
	case DIRAUTH_ERR_SYNTAX:
	case DIRAUTH_ERR_BOUNDS:
		return EXIT_CONFIG;
	case DIRAUTH_ERR_IO:
	case DIRAUTH_ERR_STORE:
	case DIRAUTH_ERR_FULL:
		return EXIT_IO;
	default:
		return EXIT_SOFTWARE;
	}
}

int main(int argc, char **argv)
{
	const char *config_path = NULL;
	int check_only = 0;
	struct signer_config *config = NULL;
	struct clock *clock = NULL;
	FILE *audit = NULL;
	struct signer_service *service = NULL;
	struct signer_listener *listener = NULL;
	const char *certificate_paths[SIGNER_CONFIG_MAX_CERTIFICATES];
	char detail[512];
	sigset_t signals;
	int status, rc, received = 0;

	if ((status = harden()) != 0)
		return status;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--config") == 0 && i + 1 < argc && !config_path) {
			config_path = argv[++i];
		} else if (strcmp(argv[i], "--check-config") == 0) {
			check_only = 1;
		} else if (strcmp(argv[i], "--help") == 0) {
			usage(stdout);
			return 0;
		} else {
			fprintf(stderr, "dirauth-signer: unexpected argument '%s'\n", argv[i]);
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (!config_path) {
		fprintf(stderr, "dirauth-signer: --config FILE is required\n");
		usage(stderr);
		return EXIT_USAGE;
	}

	if ((status = load_config(config_path, &config)) != 0)
		return status;
	rc = config->clock_source == SIGNER_CONFIG_CLOCK_FILE ? clock_open_file(config->clock_path, &clock)
	                                                      : clock_open_system(&clock);
	if (rc) {
		say("clock: %s", dirauth_strerror(rc));
		status = EXIT_CONFIG;
		goto cleanup;
	}
	if ((status = open_audit(config, &audit)) != 0)
		goto cleanup;

	for (size_t i = 0; i < config->certificate_count; i++)
		certificate_paths[i] = config->certificate_paths[i];
	struct signer_service_options options = {
	    .authority = config->authority,
	    .signing_key_path = config->signing_key_path,
	    .certificate_paths = certificate_paths,
	    .certificate_count = config->certificate_count,
	    .log_key_path = config->log_key_path[0] ? config->log_key_path : NULL,
	    .cosignature_key_path = config->cosignature_key_path[0] ? config->cosignature_key_path : NULL,
	    .ledger_directory = config->state_dir,
	    .namespaces = config->namespaces,
	    .namespace_count = config->namespace_count,
	    .audit = audit,
	    .now = clock_callback,
	    .now_context = clock,
	    .clock_skew_seconds = config->clock_skew_seconds,
	};
	rc = signer_service_open(&options, &service, detail, sizeof(detail));
	if (rc) {
		say("%s", detail[0] ? detail : dirauth_strerror(rc));
		status = service_exit_status(rc);
		goto cleanup;
	}
	if (check_only) {
		printf("%s: ok\n", config_path);
		goto cleanup;
	}

	/* Blocked before the listener's thread starts, so only sigwait() below receives them. */
	sigemptyset(&signals);
	sigaddset(&signals, SIGINT);
	sigaddset(&signals, SIGTERM);
	sigaddset(&signals, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &signals, NULL);
	signal(SIGPIPE, SIG_IGN);

	struct signer_listener_options listener_options = {.max_connections = config->max_connections};
	rc = signer_listener_start(service, config->socket_path, config->allowed_uid, &listener_options,
	                           &listener);
	if (rc) {
		say("cannot listen on %s: %s", config->socket_path, dirauth_strerror(rc));
		status = rc == DIRAUTH_ERR_PERMISSION ? EXIT_NOPERM : EXIT_UNAVAILABLE;
		goto cleanup;
	}
	say("listening on %s", config->socket_path);
	tell_manager("READY=1\nSTATUS=signing for dirauthd on its socket");
	for (;;) {
		if (sigwait(&signals, &received) != 0)
			continue;
		if (received != SIGHUP)
			break;
		say("SIGHUP: nothing reloaded; the keys, certificates and namespaces are read at start, "
		    "restart dirauth-signer to apply a new configuration");
	}
	say("stopping (signal %d)", received);
	tell_manager("STOPPING=1\nSTATUS=stopping");
cleanup:
	signer_listener_stop(listener);
	signer_service_close(service);
	if (audit && audit != stderr)
		fclose(audit);
	clock_close(clock);
	signer_config_free(config);
	return status;
}
