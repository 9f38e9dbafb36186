/*
 * health_page.h: dirauthctl health-page, the consensus-health page of an authority set: what every
 * authority of a trust bundle serves about the last epochs, one static HTML page of it, and the
 * checks (after Tor's DocTor) whose warnings an operator's timer alerts on.
 *
 * The work is in three parts, so that the checks and the page are tested without a network:
 *
 *   1. ctl_health_gather (health_gather.c) asks every --server, at once, for GET /v1/certificates,
 *      /v1/status (the authority's name and own clock), /v1/<ns>/snapshots/latest and
 *      /v1/<ns>/log/checkpoint, then for each epoch shown /v1/<ns>/snapshots/<epoch> and
 *      /v1/<ns>/signatures/<epoch>, then each member's /v1/<ns>/votes/<epoch>/<member> (of its own
 *      server first). A server is matched to a member of the bundle by what it serves, never by
 *      the order of the URLs: the name its GET /v1/status says, which must be a member's whose
 *      pinned identity certified a certificate the server serves. Every signature counted and
 *      every vote shown is verified against the pinned identities and the certificates they
 *      signed (verify/keyring.h); what does not verify is not counted.
 *   2. ctl_health_check (health_page.c) turns what was gathered (struct ctl_health_observation)
 *      into warnings: an authority unreachable, a vote or a signature missing for an epoch, a vote
 *      that differs from the published header, a clock skewed past the bound, a certificate
 *      expiring within 21, 14 or 7 days (severity rising), the latest snapshot stale, the
 *      members' log checkpoints disagreeing or cosigned by fewer than the threshold, an epoch that
 *      published nothing, a server that is no member.
 *   3. ctl_health_page_write (health_page.c) writes the page: no script, no external resource,
 *      every string an authority sent escaped; the warnings each in an element
 *      <li class="warning" data-check="..." data-member="..." data-severity="..."> that a test or
 *      a scraper reads from the DOM, then a table per epoch (rows the members; columns voted,
 *      signed, differs, clock skew, certificate not-after, log size, cosigners).
 *
 * Exit status of the command: 0 page written and no warning; 1 page written with warnings; 64
 * usage; 65 the data could not be judged (no answering server served a header that verifies); 69
 * no server answered at all; 73 the page cannot be written; 78 the trust bundle. The page is
 * written atomically (temporary file, rename). Each warning is also one line on stderr.
 */
#ifndef DIRAUTH_CTL_HEALTH_PAGE_H
#define DIRAUTH_CTL_HEALTH_PAGE_H

#include "ctl/command.h"
#include "ctl/proof.h"
#include "ctl/report.h"
#include "base/buffer.h"
#include "schema/note.h"
#include "schema/snapshot.h"
#include "schema/trust_bundle.h"

#include <stddef.h>
#include <stdint.h>

#define CTL_HEALTH_MEMBERS_MAX        TRUST_BUNDLE_MAX_AUTHORITIES
#define CTL_HEALTH_SERVERS_MAX        TRUST_BUNDLE_MAX_AUTHORITIES
#define CTL_HEALTH_EPOCHS_DEFAULT     3
#define CTL_HEALTH_EPOCHS_MAX         16
#define CTL_HEALTH_WARNINGS_MAX       256
#define CTL_HEALTH_TEXT_MAX           512
#define CTL_HEALTH_URL_MAX            512
#define CTL_HEALTH_DIFFERENCES_MAX    4 /* differences named per vote */
#define CTL_HEALTH_EXIT_WARNINGS      1
#define CTL_HEALTH_EXPIRY_NOTICE_DAYS 21
#define CTL_HEALTH_EXPIRY_WARN_DAYS   14
#define CTL_HEALTH_EXPIRY_CRIT_DAYS   7

/* A vote or signature of one member for one epoch, as far as the answering servers show it. */
enum ctl_health_presence {
	CTL_HEALTH_UNASKED = 0, /* no server could be asked */
	CTL_HEALTH_ABSENT,      /* every answering server was asked; none holds a valid one */
	CTL_HEALTH_PRESENT,     /* one verified */
};

#define CTL_HEALTH_RECORDS_NAMED 4 /* records named per differing vote */

/* What one member's vote for an epoch says, compared with the published header, and, when its
 * records differ and the vote came whole (not as a delta), which records. */
struct ctl_health_vote {
	enum ctl_health_presence presence;
	uint64_t record_count;
	uint8_t records_root[32];
	uint8_t previous[32];
	int records_compared;  /* 1: its records were compared with the published body's */
	size_t voted_only;     /* services it holds that the body does not list */
	size_t published_only; /* services the body lists that it does not hold */
	size_t other_version;  /* services of both, in another registration */
	size_t named_count;    /* the first CTL_HEALTH_RECORDS_NAMED of them, by service id */
	char named_sign[CTL_HEALTH_RECORDS_NAMED];   /* '+' voted only, '-' published only, '~' */
	uint8_t named[CTL_HEALTH_RECORDS_NAMED][32]; /* their service ids */
};

struct ctl_health_epoch {
	uint64_t epoch;
	int published; /* a header of this epoch verified by the bundle's threshold */
	struct snapshot_header header;
	struct ctl_health_vote votes[CTL_HEALTH_MEMBERS_MAX];        /* by member index */
	enum ctl_health_presence signatures[CTL_HEALTH_MEMBERS_MAX]; /* on the published header */
};

struct ctl_health_member {
	char name[NOTE_NAME_MAX + 1];    /* the pinned identity's name */
	char server[CTL_HEALTH_URL_MAX]; /* the --server that answered as it; "" none */
	int clock_known;
	int64_t clock_skew;     /* its clock minus the page's reference time, seconds */
	int certificate_known;  /* a certificate its identity signed was served by anyone */
	uint64_t not_after;     /* the latest valid-until among them */
	int checkpoint_known;   /* it served a log checkpoint of the namespace */
	uint64_t log_size;      /* the checkpoint's tree size */
	uint8_t log_root[32];   /* and root */
	size_t cosigners;       /* with the log's pins: distinct pinned witnesses whose cosignature
	                         * verifies; without: distinct cosignature/v1 lines (names, not
	                         * verified) */
	int checkpoint_refused; /* with the log's pins: it served one that no pinned log key signed, or
	                         * a signature on it did not verify (checkpoint_why says which) */
	char checkpoint_why[CTL_HEALTH_TEXT_MAX];
};

/* A server that did not answer, or answered as no member. */
struct ctl_health_server_failure {
	char server[CTL_HEALTH_URL_MAX];
	char why[CTL_HEALTH_TEXT_MAX];
	int answered; /* 1: it answered, but as no member of the bundle (or as one twice) */
};

/* Everything the checks and the page read. Plain data: a test fills it by hand. */
struct ctl_health_observation {
	char namespace_name[NAMESPACE_NAME_MAX + 1];
	uint64_t now;              /* the reference time (the clock of the host, or --now) */
	uint64_t clock_skew_limit; /* seconds */
	size_t threshold;          /* the bundle's k */
	int cosignatures_verified; /* the log's pins were given: members' cosigners are verified */
	size_t member_count;
	struct ctl_health_member members[CTL_HEALTH_MEMBERS_MAX];
	size_t failure_count;
	struct ctl_health_server_failure failures[CTL_HEALTH_SERVERS_MAX];
	int latest_known; /* a latest header verified */
	struct snapshot_header latest;
	size_t epoch_count; /* newest first */
	struct ctl_health_epoch epochs[CTL_HEALTH_EPOCHS_MAX];
};

enum ctl_health_severity {
	CTL_HEALTH_NOTICE = 0,
	CTL_HEALTH_WARNING,
	CTL_HEALTH_CRITICAL,
};

struct ctl_health_warning {
	const char *check; /* a static word: "unreachable", "clock-skew", ... (docs/operating.md) */
	enum ctl_health_severity severity;
	char member[NOTE_NAME_MAX + 1]; /* "" when it concerns no one member */
	uint64_t epoch;                 /* 0 when it concerns no one epoch */
	char text[CTL_HEALTH_TEXT_MAX];
};

struct ctl_health_warnings {
	size_t count;
	size_t dropped; /* past CTL_HEALTH_WARNINGS_MAX: counted, not kept */
	struct ctl_health_warning items[CTL_HEALTH_WARNINGS_MAX];
};

/* The word of a severity: "notice", "warning", "critical". */
const char *ctl_health_severity_name(enum ctl_health_severity severity);

/* Judges an observation: fills *out (zeroed first) with its warnings, in the order of the checks
 * above, then by member and epoch. Never fails. */
void ctl_health_check(const struct ctl_health_observation *observation, struct ctl_health_warnings *out);

/* The exit status of a page with these warnings: 0 or CTL_HEALTH_EXIT_WARNINGS. */
int ctl_health_exit_status(const struct ctl_health_warnings *warnings);

/* Appends text to out with &, <, >, " and ' written as character references, so that what an
 * authority sent never becomes markup; bytes below 0x20 (but tab and newline) and 0x7f become
 * U+FFFD. Returns 0 or DIRAUTH_ERR_NOMEM. */
int ctl_health_html_escape(struct buffer *out, const char *text);

/* Appends the whole page to out (an initialised buffer). Returns 0 or DIRAUTH_ERR_NOMEM. */
int ctl_health_page_write(const struct ctl_health_observation *observation,
                          const struct ctl_health_warnings *warnings, struct buffer *out);

/* What ctl_health_gather is asked. */
struct ctl_health_request {
	const struct trust_bundle *bundle;
	const char *namespace_name;
	const char *const *servers; /* base URLs */
	size_t server_count;        /* 1..CTL_HEALTH_SERVERS_MAX */
	size_t epochs;              /* 1..CTL_HEALTH_EPOCHS_MAX */
	uint64_t now;               /* the reference time */
	int now_given;              /* 1: now is --now's, the reference for every clock; 0: each
	                               authority's clock is compared with the host's at its answer */
	uint64_t clock_skew_limit;
	/* The log's pins (ctl/proof.h; NULL or not enabled: cosignatures counted by name only): each
	 * member's checkpoint must be signed by one of the log keys, and only the pinned witnesses
	 * whose cosignature verifies count. */
	const struct ctl_log_pins *log;
};

/* Gathers *observation (zeroed first) as in 1. above. Returns 0, with what no server answered
 * recorded in the observation; or the refusal in report: 69 when no server answered at all, 65
 * when none served a latest header that verifies, 70 out of memory. */
int ctl_health_gather(const struct ctl_health_request *request, struct ctl_health_observation *observation,
                      struct ctl_report *report);

/* The longest GET /v1/status answer read. */
#define CTL_HEALTH_STATUS_MAX 512

/* Reads an authority's GET /v1/status answer, {"authority":"<name>","time":<unix seconds>}
 * exactly (the name a valid key name, '"' and '\\' escaped by a backslash and nothing else; the
 * time a canonical decimal; no space), into name and *time_out. Returns 0; DIRAUTH_ERR_BOUNDS
 * (longer than CTL_HEALTH_STATUS_MAX); DIRAUTH_ERR_SYNTAX. */
int ctl_health_status_parse(const uint8_t *buf, size_t len, char name[NOTE_NAME_MAX + 1], uint64_t *time_out);

/* The body of dirauthctl health-page (its table entry is in dirauthctl_main.c). */
int ctl_command_health_page(const struct ctl_arguments *arguments, struct ctl_report *report);

#endif
