/*
 * health_page.c: the consensus-health page's checks and its HTML (health_page.h).
 *
 * Both read only a struct ctl_health_observation, so that each threshold and the escaping are
 * tested without an authority. The checks are DocTor's, as an authority set of this project has
 * them: who did not answer, who did not vote or sign, who voted for another result than the one
 * published, whose clock is off, whose certificate runs out, whether the latest snapshot is
 * stale, and whether the members' logs agree and are cosigned. The page is static HTML with a
 * little inline CSS: it reads the same in a browser, in a text browser and to a scraper, and
 * every string that came from an authority goes through ctl_health_html_escape.
 */
#include "ctl/health_page.h"

#include "base/error.h"
#include "schema/encoding.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define DAY_SECONDS ((uint64_t)86400)

const char *ctl_health_severity_name(enum ctl_health_severity severity)
{
	switch (severity) {
	case CTL_HEALTH_CRITICAL:
		return "critical";
	case CTL_HEALTH_WARNING:
		return "warning";
	default:
		return "notice";
	}
}

static void warn(struct ctl_health_warnings *out, const char *check, enum ctl_health_severity severity,
                 const char *member, uint64_t epoch, const char *format, ...)
    __attribute__((format(printf, 6, 7)));

static void warn(struct ctl_health_warnings *out, const char *check, enum ctl_health_severity severity,
                 const char *member, uint64_t epoch, const char *format, ...)
{
	if (out->count == CTL_HEALTH_WARNINGS_MAX) {
		out->dropped++;
		return;
	}
	struct ctl_health_warning *w = &out->items[out->count++];
	w->check = check;
	w->severity = severity;
	snprintf(w->member, sizeof w->member, "%s", member ? member : "");
	w->epoch = epoch;
	va_list args;
	va_start(args, format);
	vsnprintf(w->text, sizeof w->text, format, args);
	va_end(args);
}

/* What in vote differs from the published header, as "; "-separated phrases into out; returns
 * how many differ (at most CTL_HEALTH_DIFFERENCES_MAX are named). */
static size_t vote_differences(const struct ctl_health_vote *vote, const struct snapshot_header *header,
                               char *out, size_t cap)
{
	size_t count = 0, used = 0;
	out[0] = '\0';
#define DIFFERENCE(...)                                                                                      \
	do {                                                                                                 \
		if (count < CTL_HEALTH_DIFFERENCES_MAX && used < cap) {                                      \
			int n = snprintf(out + used, cap - used, "%s", count ? "; " : "");                   \
			used += n > 0 ? (size_t)n : 0;                                                       \
			if (used < cap) {                                                                    \
				n = snprintf(out + used, cap - used, __VA_ARGS__);                           \
				used += n > 0 ? (size_t)n : 0;                                               \
			}                                                                                    \
		}                                                                                            \
		count++;                                                                                     \
	} while (0)
	if (vote->record_count != header->record_count)
		DIFFERENCE("%" PRIu64 " records voted, %" PRIu64 " published", vote->record_count,
		           header->record_count);
	if (memcmp(vote->records_root, header->records_root, 32) != 0)
		DIFFERENCE("another records root");
	if (memcmp(vote->previous, header->previous, 32) != 0)
		DIFFERENCE("another previous snapshot");
	if (vote->records_compared) {
		char names[CTL_HEALTH_RECORDS_NAMED * 20 + 1] = "";
		size_t at = 0;
		for (size_t i = 0; i < vote->named_count && i < CTL_HEALTH_RECORDS_NAMED; i++) {
			char hex[65];
			hex_encode(vote->named[i], 32, hex);
			int n = snprintf(names + at, sizeof names - at, " %c%.16s", vote->named_sign[i], hex);
			at += n > 0 ? (size_t)n : 0;
		}
		size_t total = vote->voted_only + vote->published_only + vote->other_version;
		DIFFERENCE(
		    "records: %zu voted only, %zu published only, %zu in another version (services:%s%s)",
		    vote->voted_only, vote->published_only, vote->other_version, names,
		    total > vote->named_count ? " ..." : "");
	}
#undef DIFFERENCE
	if (used >= cap && cap > 0)
		out[cap - 1] = '\0';
	return count;
}

static uint64_t absolute(int64_t value)
{
	return value < 0 ? (uint64_t)(-(value + 1)) + 1 : (uint64_t)value;
}

static void check_servers(const struct ctl_health_observation *o, struct ctl_health_warnings *out)
{
	char silent[CTL_HEALTH_TEXT_MAX] = "";
	size_t used = 0;
	for (size_t i = 0; i < o->failure_count; i++)
		if (!o->failures[i].answered && used < sizeof silent) {
			int n = snprintf(silent + used, sizeof silent - used, "%s%s", used ? ", " : "",
			                 o->failures[i].server);
			used += n > 0 ? (size_t)n : 0;
		}
	for (size_t m = 0; m < o->member_count; m++)
		if (!o->members[m].server[0])
			warn(out, "unreachable", CTL_HEALTH_WARNING, o->members[m].name, 0,
			     "%s: no server answered as this authority%s%s", o->members[m].name,
			     silent[0] ? "; not answering: " : "", silent);
	for (size_t i = 0; i < o->failure_count; i++)
		if (o->failures[i].answered)
			warn(out, "unknown-server", CTL_HEALTH_WARNING, "", 0, "%s: %s",
			     o->failures[i].server, o->failures[i].why);
}

static void check_stale(const struct ctl_health_observation *o, struct ctl_health_warnings *out)
{
	if (!o->latest_known)
		return;
	const struct snapshot_header *h = &o->latest;
	uint64_t length = h->fresh_until > h->valid_after ? h->fresh_until - h->valid_after : 0;
	if (o->now >= h->valid_until)
		warn(out, "stale", CTL_HEALTH_CRITICAL, "", h->epoch,
		     "the latest snapshot (epoch %" PRIu64 ") is past its valid-until by %" PRIu64
		     " s: mirrors "
		     "serve nothing valid",
		     h->epoch, o->now - h->valid_until);
	else if (o->now >= h->fresh_until + length)
		warn(out, "stale", CTL_HEALTH_WARNING, "", h->epoch,
		     "the latest snapshot (epoch %" PRIu64 ") is %" PRIu64
		     " s past its fresh-until: the epochs "
		     "since published nothing",
		     h->epoch, o->now - h->fresh_until);
}

static void check_epochs(const struct ctl_health_observation *o, struct ctl_health_warnings *out)
{
	for (size_t e = 0; e < o->epoch_count; e++) {
		const struct ctl_health_epoch *epoch = &o->epochs[e];
		if (!epoch->published) {
			warn(out, "epoch-failed", CTL_HEALTH_WARNING, "", epoch->epoch,
			     "epoch %" PRIu64
			     ": no server serves a snapshot the trust bundle's threshold signed",
			     epoch->epoch);
			continue;
		}
		for (size_t m = 0; m < o->member_count; m++) {
			const char *name = o->members[m].name;
			const struct ctl_health_vote *vote = &epoch->votes[m];
			char differences[CTL_HEALTH_TEXT_MAX - 64];
			if (vote->presence == CTL_HEALTH_ABSENT)
				warn(out, "missing-vote", CTL_HEALTH_WARNING, name, epoch->epoch,
				     "epoch %" PRIu64 ": no server holds a vote of %s", epoch->epoch, name);
			else if (vote->presence == CTL_HEALTH_PRESENT &&
			         vote_differences(vote, &epoch->header, differences, sizeof differences) > 0)
				warn(out, "vote-differs", CTL_HEALTH_WARNING, name, epoch->epoch,
				     "epoch %" PRIu64 ": %s voted otherwise than published: %s", epoch->epoch,
				     name, differences);
			if (epoch->signatures[m] == CTL_HEALTH_ABSENT)
				warn(out, "missing-signature", CTL_HEALTH_WARNING, name, epoch->epoch,
				     "epoch %" PRIu64
				     ": no server holds a signature of %s on the published header",
				     epoch->epoch, name);
		}
	}
}

static void check_clocks(const struct ctl_health_observation *o, struct ctl_health_warnings *out)
{
	for (size_t m = 0; m < o->member_count; m++) {
		const struct ctl_health_member *member = &o->members[m];
		if (member->clock_known && absolute(member->clock_skew) > o->clock_skew_limit)
			warn(out, "clock-skew", CTL_HEALTH_WARNING, member->name, 0,
			     "%s: its clock is %" PRIu64 " s %s, more than the %" PRIu64 " s allowed",
			     member->name, absolute(member->clock_skew),
			     member->clock_skew > 0 ? "ahead" : "behind", o->clock_skew_limit);
	}
}

static void check_certificates(const struct ctl_health_observation *o, struct ctl_health_warnings *out)
{
	for (size_t m = 0; m < o->member_count; m++) {
		const struct ctl_health_member *member = &o->members[m];
		if (!member->certificate_known)
			continue;
		if (member->not_after <= o->now) {
			warn(out, "certificate-expiry", CTL_HEALTH_CRITICAL, member->name, 0,
			     "%s: its signing key's last certificate expired %" PRIu64 " s ago", member->name,
			     o->now - member->not_after);
			continue;
		}
		uint64_t left = member->not_after - o->now;
		enum ctl_health_severity severity;
		if (left <= CTL_HEALTH_EXPIRY_CRIT_DAYS * DAY_SECONDS)
			severity = CTL_HEALTH_CRITICAL;
		else if (left <= CTL_HEALTH_EXPIRY_WARN_DAYS * DAY_SECONDS)
			severity = CTL_HEALTH_WARNING;
		else if (left <= CTL_HEALTH_EXPIRY_NOTICE_DAYS * DAY_SECONDS)
			severity = CTL_HEALTH_NOTICE;
		else
			continue;
		warn(out, "certificate-expiry", severity, member->name, 0,
		     "%s: its signing key's last certificate expires in %" PRIu64 " days %" PRIu64 " h",
		     member->name, left / DAY_SECONDS, left % DAY_SECONDS / 3600);
	}
}

static void check_logs(const struct ctl_health_observation *o, struct ctl_health_warnings *out)
{
	for (size_t m = 0; m < o->member_count; m++) {
		const struct ctl_health_member *a = &o->members[m];
		if (!a->checkpoint_known)
			continue;
		for (size_t n = 0; n < m; n++) {
			const struct ctl_health_member *b = &o->members[n];
			if (b->checkpoint_known && b->log_size == a->log_size &&
			    memcmp(b->log_root, a->log_root, 32) != 0) {
				/* one warning per member whose root differs from an earlier one's */
				warn(out, "log-disagreement", CTL_HEALTH_CRITICAL, a->name, 0,
				     "%s and %s checkpoint the log at size %" PRIu64 " with different roots",
				     b->name, a->name, a->log_size);
				break;
			}
		}
		if (a->checkpoint_refused) {
			warn(out, "log-checkpoint", CTL_HEALTH_CRITICAL, a->name, 0,
			     "%s: its log checkpoint (size %" PRIu64 ") is refused by the log's pins: %s",
			     a->name, a->log_size, a->checkpoint_why);
			continue;
		}
		if (a->cosigners < o->threshold)
			warn(out, "log-cosignatures", CTL_HEALTH_WARNING, a->name, 0,
			     "%s: its log checkpoint (size %" PRIu64 ") carries %zu %s, fewer than the "
			     "threshold %zu",
			     a->name, a->log_size, a->cosigners,
			     o->cosignatures_verified ? "verified cosignatures of pinned witnesses"
			                              : "cosignatures",
			     o->threshold);
	}
}

void ctl_health_check(const struct ctl_health_observation *observation, struct ctl_health_warnings *out)
{
	memset(out, 0, sizeof *out);
	check_servers(observation, out);
	check_stale(observation, out);
	check_epochs(observation, out);
	check_clocks(observation, out);
	check_certificates(observation, out);
	check_logs(observation, out);
}

int ctl_health_exit_status(const struct ctl_health_warnings *warnings)
{
	return warnings->count > 0 || warnings->dropped > 0 ? CTL_HEALTH_EXIT_WARNINGS : CTL_EXIT_OK;
}

/* ---- the page ---- */

int ctl_health_html_escape(struct buffer *out, const char *text)
{
	for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
		const char *entity = NULL;
		switch (*p) {
		case '&':
			entity = "&amp;";
			break;
		case '<':
			entity = "&lt;";
			break;
		case '>':
			entity = "&gt;";
			break;
		case '"':
			entity = "&quot;";
			break;
		case '\'':
			entity = "&#39;";
			break;
		default:
			if ((*p < 0x20 && *p != '\t' && *p != '\n') || *p == 0x7f)
				entity = "&#xFFFD;";
		}
		int rc = entity ? buffer_append(out, entity, strlen(entity)) : buffer_append(out, p, 1);
		if (rc)
			return rc;
	}
	return 0;
}

/* The page's writer: the first failure sticks, so that the writing reads as a sequence. */
struct page {
	struct buffer *out;
	int rc;
};

static void put(struct page *page, const char *format, ...) __attribute__((format(printf, 2, 3)));

static void put(struct page *page, const char *format, ...)
{
	char line[1024];
	va_list args;
	if (page->rc)
		return;
	va_start(args, format);
	int n = vsnprintf(line, sizeof line, format, args);
	va_end(args);
	if (n < 0 || (size_t)n >= sizeof line) {
		page->rc = DIRAUTH_ERR_INTERNAL;
		return;
	}
	page->rc = buffer_append(page->out, line, (size_t)n);
}

static void put_escaped(struct page *page, const char *text)
{
	if (!page->rc)
		page->rc = ctl_health_html_escape(page->out, text);
}

static void format_time(uint64_t t, char out[32])
{
	time_t seconds = (time_t)t;
	struct tm tm;
	if ((uint64_t)seconds != t || !gmtime_r(&seconds, &tm) ||
	    strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		snprintf(out, 32, "%" PRIu64, t);
}

static const char style[] = "body{font-family:sans-serif;margin:1.5em;color:#222}"
                            "table{border-collapse:collapse;margin-bottom:1.5em}"
                            "th,td{border:1px solid #bbb;padding:.25em .6em;text-align:left}"
                            "th{background:#eee}.bad{background:#fdd}.good{background:#dfd}"
                            "li.warning[data-severity=critical]{color:#a00;font-weight:bold}"
                            "li.warning[data-severity=notice]{color:#666}";

static void put_member_cells(struct page *page, const struct ctl_health_observation *o,
                             const struct ctl_health_member *member)
{
	char when[32];
	if (member->clock_known) {
		int skewed = absolute(member->clock_skew) > o->clock_skew_limit;
		put(page, "<td class=\"skew%s\">%+" PRId64 " s</td>", skewed ? " bad" : "",
		    member->clock_skew);
	} else {
		put(page, "<td class=\"skew\">unknown</td>");
	}
	if (member->certificate_known) {
		format_time(member->not_after, when);
		int soon = member->not_after <= o->now + CTL_HEALTH_EXPIRY_NOTICE_DAYS * DAY_SECONDS;
		put(page, "<td class=\"not-after%s\">%s</td>", soon ? " bad" : "", when);
	} else {
		put(page, "<td class=\"not-after\">unknown</td>");
	}
	if (member->checkpoint_known && member->checkpoint_refused)
		put(page,
		    "<td class=\"log-size bad\">%" PRIu64 "</td><td class=\"cosigners bad\">refused</td>",
		    member->log_size);
	else if (member->checkpoint_known)
		put(page, "<td class=\"log-size\">%" PRIu64 "</td><td class=\"cosigners%s\">%zu</td>",
		    member->log_size, member->cosigners < o->threshold ? " bad" : "", member->cosigners);
	else
		put(page, "<td class=\"log-size\">unknown</td><td class=\"cosigners\">unknown</td>");
}

static const char *presence_word(enum ctl_health_presence presence)
{
	return presence == CTL_HEALTH_PRESENT ? "yes" : presence == CTL_HEALTH_ABSENT ? "no" : "unknown";
}

static void put_epoch(struct page *page, const struct ctl_health_observation *o,
                      const struct ctl_health_epoch *epoch)
{
	char after[32], until[32];
	put(page, "<h2>Epoch %" PRIu64 "</h2>\n", epoch->epoch);
	if (epoch->published) {
		format_time(epoch->header.valid_after, after);
		format_time(epoch->header.valid_until, until);
		put(page, "<p>Published: %" PRIu64 " records, valid from %s until %s.</p>\n",
		    epoch->header.record_count, after, until);
	} else {
		put(page, "<p class=\"bad\">Nothing published for this epoch.</p>\n");
	}
	put(page,
	    "<table class=\"epoch\" id=\"epoch-%" PRIu64 "\">\n<thead><tr><th>Authority</th><th>Voted</th>"
	    "<th>Signed</th><th>Differs</th><th>Clock skew</th><th>Certificate not-after</th>"
	    "<th>Log size</th><th>Cosigners</th></tr></thead>\n<tbody>\n",
	    epoch->epoch);
	for (size_t m = 0; m < o->member_count; m++) {
		const struct ctl_health_member *member = &o->members[m];
		const struct ctl_health_vote *vote = &epoch->votes[m];
		char differences[CTL_HEALTH_TEXT_MAX];
		size_t differ = 0;
		if (epoch->published && vote->presence == CTL_HEALTH_PRESENT)
			differ = vote_differences(vote, &epoch->header, differences, sizeof differences);
		put(page, "<tr data-member=\"");
		put_escaped(page, member->name);
		put(page, "\"><th>");
		put_escaped(page, member->name);
		put(page, "</th><td class=\"voted %s\">%s</td>",
		    vote->presence == CTL_HEALTH_PRESENT ? "good" : "bad", presence_word(vote->presence));
		put(page, "<td class=\"signed %s\">%s</td>",
		    epoch->signatures[m] == CTL_HEALTH_PRESENT ? "good" : "bad",
		    presence_word(epoch->signatures[m]));
		if (differ) {
			put(page, "<td class=\"differs bad\">");
			put_escaped(page, differences);
			put(page, "</td>");
		} else {
			put(page, "<td class=\"differs\">%s</td>",
			    epoch->published && vote->presence == CTL_HEALTH_PRESENT ? "no" : "");
		}
		put_member_cells(page, o, member);
		put(page, "</tr>\n");
	}
	put(page, "</tbody>\n</table>\n");
}

int ctl_health_page_write(const struct ctl_health_observation *o, const struct ctl_health_warnings *warnings,
                          struct buffer *out)
{
	struct page page = {out, 0};
	char now[32], after[32], until[32];
	format_time(o->now, now);
	put(&page, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>Consensus "
	           "health: ");
	put_escaped(&page, o->namespace_name);
	put(&page,
	    "</title>\n<style>%s</style>\n</head>\n<body>\n<h1>Consensus health of <span id=\"namespace\">",
	    style);
	put_escaped(&page, o->namespace_name);
	put(&page,
	    "</span></h1>\n<p id=\"summary\">Written at <time id=\"generated\" datetime=\"%s\">%s</time> "
	    "by the reference clock; %zu authorities, threshold %zu, clock skew allowed %" PRIu64 " s.",
	    now, now, o->member_count, o->threshold, o->clock_skew_limit);
	if (o->latest_known) {
		format_time(o->latest.valid_after, after);
		format_time(o->latest.valid_until, until);
		put(&page,
		    " Latest snapshot: epoch <span id=\"latest-epoch\">%" PRIu64
		    "</span>, valid from %s until %s.",
		    o->latest.epoch, after, until);
	}
	put(&page, "</p>\n<h2>Warnings</h2>\n");
	if (warnings->count == 0 && warnings->dropped == 0) {
		put(&page, "<p id=\"no-warnings\">No warning.</p>\n");
	} else {
		put(&page, "<ul id=\"warnings\">\n");
		for (size_t i = 0; i < warnings->count; i++) {
			const struct ctl_health_warning *w = &warnings->items[i];
			put(&page,
			    "<li class=\"warning\" data-check=\"%s\" data-severity=\"%s\" data-member=\"",
			    w->check, ctl_health_severity_name(w->severity));
			put_escaped(&page, w->member);
			put(&page, "\" data-epoch=\"%" PRIu64 "\"><strong>%s %s</strong>: ", w->epoch,
			    ctl_health_severity_name(w->severity), w->check);
			put_escaped(&page, w->text);
			put(&page, "</li>\n");
		}
		if (warnings->dropped)
			put(&page,
			    "<li class=\"warning\" data-check=\"more\" data-severity=\"warning\">%zu more "
			    "warnings not listed</li>\n",
			    warnings->dropped);
		put(&page, "</ul>\n");
	}
	put(&page, "<h2>Authorities</h2>\n<table id=\"authorities\">\n<thead><tr><th>Authority</th><th>Server"
	           "</th><th>Clock skew</th><th>Certificate not-after</th><th>Log size</th><th>Cosigners</th>"
	           "</tr></thead>\n<tbody>\n");
	for (size_t m = 0; m < o->member_count; m++) {
		const struct ctl_health_member *member = &o->members[m];
		put(&page, "<tr data-member=\"");
		put_escaped(&page, member->name);
		put(&page, "\"><th>");
		put_escaped(&page, member->name);
		put(&page, "</th><td class=\"server%s\">", member->server[0] ? "" : " bad");
		put_escaped(&page, member->server[0] ? member->server : "no answer");
		put(&page, "</td>");
		put_member_cells(&page, o, member);
		put(&page, "</tr>\n");
	}
	put(&page, "</tbody>\n</table>\n<p id=\"cosigners\">Cosigners: %s.</p>\n",
	    o->cosignatures_verified
	        ? "the pinned witnesses whose cosignature verifies, on a checkpoint a pinned "
	          "log key signed"
	        : "cosignature lines counted by name, not verified (give --log-key and "
	          "--witness-key to verify them)");
	if (o->failure_count) {
		put(&page, "<h2>Servers that did not answer as an authority</h2>\n<ul id=\"servers\">\n");
		for (size_t i = 0; i < o->failure_count; i++) {
			put(&page, "<li>");
			put_escaped(&page, o->failures[i].server);
			put(&page, ": ");
			put_escaped(&page, o->failures[i].why);
			put(&page, "</li>\n");
		}
		put(&page, "</ul>\n");
	}
	for (size_t e = 0; e < o->epoch_count; e++)
		put_epoch(&page, o, &o->epochs[e]);
	put(&page, "</body>\n</html>\n");
	return page.rc;
}
