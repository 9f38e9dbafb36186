/*
 * health_gather.c: what the consensus-health page shows, asked of every authority at once
 * (health_page.h, part 1).
 *
 * Three passes, each a thread per server or per member (ctl_exchange_each), over pools of their
 * own: first what identifies a server and says how it is (its certificates, its clock and name,
 * its latest header, its log checkpoint); then, once the latest epoch is known, each server's
 * headers and signatures of the epochs shown; then each member's votes, asked of its own server
 * first and of the others only when it does not hold them, so that a vote (megabytes in a large
 * namespace) is downloaded about once.
 *
 * Nothing a server sends is believed unverified but its name: a server is the member its
 * GET /v1/status names only when that member is pinned and the server serves a certificate that
 * member's pinned identity signed (a server lying about its name shows as that member, with its
 * own clock and log). A header counts only when the bundle's threshold of certified keys signed
 * it, a signature or a vote only when the member's own certified key made it. A vote or
 * signature any server holds counts for the member, so that a stopped authority's vote and
 * signature of an epoch before it stopped are still seen through its peers.
 */
#include "ctl/exchange.h"
#include "ctl/health_page.h"

#include "base/error.h"
#include "crypto/crypto.h"
#include "net/pool.h"
#include "schema/certificate.h"
#include "schema/checkpoint.h"
#include "schema/vote.h"
#include "schema/vote_body.h"
#include "schema/vote_envelope.h"
#include "tlog/policy.h"
#include "verify/keyring.h"
#include "verify/snapshot.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define HEADER_ANSWER_MAX ((size_t)64 << 10)

/* What one server answered. */
struct server_answer {
	const char *url;
	int reached; /* it answered anything over HTTP */
	char why[CTL_HEALTH_TEXT_MAX];
	struct buffer certificates;
	int clock_known;
	char name[NOTE_NAME_MAX + 1]; /* the name it says it has */
	uint64_t clock, local_time;
	struct buffer latest;
	struct buffer checkpoint;
	int member; /* its member's index, -1 none */
	/* the second pass, by epoch offset from the newest shown */
	struct buffer headers[CTL_HEALTH_EPOCHS_MAX];
	struct buffer signatures[CTL_HEALTH_EPOCHS_MAX];
};

struct gathering {
	const struct ctl_health_request *request;
	struct server_answer *answers;
	uint64_t newest;      /* the second pass's newest epoch */
	size_t epoch_count;   /* and how many below it, itself included */
	size_t vote_body_max; /* the bound of a vote envelope's body */
	struct certificate_keyring *member_rings[CTL_HEALTH_MEMBERS_MAX]; /* each member's alone */
	/* The records of a whole vote whose records differ from the published header's, kept by the
	 * vote pass (each thread its member's column) for the comparison with the published body. */
	struct kept_records {
		size_t count;
		struct vote_body_record *records; /* malloc'd, sorted by service id */
	} kept[CTL_HEALTH_EPOCHS_MAX][CTL_HEALTH_MEMBERS_MAX];
	struct ctl_health_observation *observation;
};

/* GETs base + path: 1 for 200 (body appended to out), 0 for 404, -1 otherwise. *reached is set
 * when an HTTP answer came; why (capacity why_cap) gets the first failure when still empty. */
static int fetch(struct net_pool *pool, const char *base, const char *path, size_t max_bytes,
                 struct buffer *out, int *reached, char *why, size_t why_cap)
{
	char url[CTL_HEALTH_URL_MAX + 256];
	struct net_response response;
	struct ctl_report report;
	int length = (int)ctl_exchange_url_length(base);
	snprintf(url, sizeof url, "%.*s%s", length, base, path);
	ctl_report_init(&report);
	net_response_init(&response);
	int rc =
	    ctl_exchange_get_pooled(pool, "health-page", path, url, NULL, max_bytes, 1, &response, &report);
	if (response.status > 0)
		*reached = 1;
	int result = -1;
	if (rc == 0 && response.status == 200) {
		if (buffer_append(out, response.body.data ? response.body.data : (const uint8_t *)"",
		                  response.body.len) == 0)
			result = 1;
	} else if (rc == 0 && response.status == 404) {
		result = 0;
	} else if (!why[0]) {
		snprintf(why, why_cap, "%.300s", report.message[0] ? report.message : "no answer");
	}
	net_response_free(&response);
	return result;
}

/* fetch from one server, keeping what it says of the server in answer. */
static int get(struct net_pool *pool, struct server_answer *answer, const char *path, size_t max_bytes,
               struct buffer *out)
{
	return fetch(pool, answer->url, path, max_bytes, out, &answer->reached, answer->why,
	             sizeof answer->why);
}

int ctl_health_status_parse(const uint8_t *buf, size_t len, char name[NOTE_NAME_MAX + 1], uint64_t *time_out)
{
	static const char head[] = "{\"authority\":\"", middle[] = "\",\"time\":";
	size_t at = sizeof head - 1, used = 0;
	uint64_t value = 0;
	if (len > CTL_HEALTH_STATUS_MAX)
		return DIRAUTH_ERR_BOUNDS;
	if (len < at || memcmp(buf, head, at) != 0)
		return DIRAUTH_ERR_SYNTAX;
	for (;; at++) {
		if (at >= len)
			return DIRAUTH_ERR_SYNTAX;
		if (buf[at] == '"')
			break;
		if (buf[at] == '\\') {
			if (++at >= len || (buf[at] != '"' && buf[at] != '\\'))
				return DIRAUTH_ERR_SYNTAX;
		}
		if (used == NOTE_NAME_MAX)
			return DIRAUTH_ERR_SYNTAX;
		name[used++] = (char)buf[at];
	}
	name[used] = '\0';
	if (!note_name_is_valid(name, used) || len - at < sizeof middle - 1 + 2 ||
	    memcmp(buf + at, middle, sizeof middle - 1) != 0 || buf[len - 1] != '}')
		return DIRAUTH_ERR_SYNTAX;
	at += sizeof middle - 1;
	if (buf[at] == '0' && at + 1 != len - 1)
		return DIRAUTH_ERR_SYNTAX; /* no leading zero */
	for (; at < len - 1; at++) {
		if (buf[at] < '0' || buf[at] > '9')
			return DIRAUTH_ERR_SYNTAX;
		uint64_t digit = (uint64_t)(buf[at] - '0');
		if (value > (UINT64_MAX - digit) / 10)
			return DIRAUTH_ERR_SYNTAX;
		value = value * 10 + digit;
	}
	*time_out = value;
	return 0;
}

static void first_pass(void *context, size_t index)
{
	struct gathering *g = context;
	struct server_answer *answer = &g->answers[index];
	const char *ns = g->request->namespace_name;
	struct net_pool *pool = NULL;
	char path[256];
	struct buffer status;
	buffer_init(&status);
	if (net_pool_new(NULL, &pool) != 0)
		pool = NULL;
	if (get(pool, answer, "/v1/certificates", CERTIFICATE_BUNDLE_MAX_BYTES, &answer->certificates) == 1 &&
	    get(pool, answer, "/v1/status", CTL_HEALTH_STATUS_MAX, &status) == 1 &&
	    ctl_health_status_parse(status.data, status.len, answer->name, &answer->clock) == 0) {
		answer->clock_known = 1;
		answer->local_time = g->request->now_given ? g->request->now : (uint64_t)time(NULL);
	}
	snprintf(path, sizeof path, "/v1/%s/snapshots/latest", ns);
	get(pool, answer, path, HEADER_ANSWER_MAX, &answer->latest);
	snprintf(path, sizeof path, "/v1/%s/log/checkpoint", ns);
	get(pool, answer, path, CHECKPOINT_MAX_BYTES + 64 * 1024, &answer->checkpoint);
	buffer_free(&status);
	net_pool_free(pool);
}

static void second_pass(void *context, size_t index)
{
	struct gathering *g = context;
	struct server_answer *answer = &g->answers[index];
	const char *ns = g->request->namespace_name;
	struct net_pool *pool = NULL;
	char path[512];
	if (!answer->reached)
		return;
	if (net_pool_new(NULL, &pool) != 0)
		pool = NULL;
	for (size_t e = 0; e < g->epoch_count; e++) {
		uint64_t epoch = g->newest - e;
		snprintf(path, sizeof path, "/v1/%s/snapshots/%" PRIu64, ns, epoch);
		get(pool, answer, path, HEADER_ANSWER_MAX, &answer->headers[e]);
		snprintf(path, sizeof path, "/v1/%s/signatures/%" PRIu64, ns, epoch);
		get(pool, answer, path, HEADER_ANSWER_MAX, &answer->signatures[e]);
	}
	net_pool_free(pool);
}

/* 1 when member's own certified key signed note at time at. */
static int signed_by(const struct certificate_keyring *member_ring, const struct note *note, uint64_t at);

/* The body limits of the bundle, as a vote body's. */
static void vote_limits(const struct trust_bundle *bundle, struct vote_body_limits *out)
{
	struct snapshot_body_limits limits;
	verify_snapshot_body_limits(bundle, &limits);
	out->max_records = limits.max_records;
	out->max_health = limits.max_health;
	out->max_revocations = limits.max_revocations;
}

/* Keeps the records of a whole vote body (one the vote's body-sha256 commits to) in *kept. */
static void vote_keep_records(const struct gathering *g, const struct vote *vote,
                              const struct vote_envelope *envelope, struct kept_records *kept)
{
	uint8_t digest[CRYPTO_SHA256_SIZE];
	struct vote_body_limits limits;
	struct vote_body *body = NULL;
	vote_limits(g->request->bundle, &limits);
	if (envelope->delta || crypto_sha256(envelope->body, envelope->body_len, digest) != 0 ||
	    memcmp(digest, vote->body_sha256, 32) != 0 ||
	    vote_body_parse_sections(envelope->body, envelope->body_len, &limits, &body) != 0)
		return;
	kept->records = malloc((body->record_count ? body->record_count : 1) * sizeof *kept->records);
	if (kept->records) {
		if (body->record_count)
			memcpy(kept->records, body->records, body->record_count * sizeof *kept->records);
		kept->count = body->record_count;
	}
	vote_body_free(body);
}

/* Reads the vote envelope in bytes as member m's vote of epoch: 1 and *out filled when it
 * verifies, else 0. A whole vote whose records differ from the published header's has its records
 * kept in *kept. */
static int vote_read(const struct gathering *g, size_t m, const struct ctl_health_epoch *epoch, uint64_t at,
                     const struct buffer *bytes, struct ctl_health_vote *out, struct kept_records *kept)
{
	const struct ctl_health_request *request = g->request;
	struct vote_envelope envelope;
	struct note *note = NULL;
	struct vote vote;
	int ok = vote_envelope_parse(bytes->data, bytes->len, g->vote_body_max, &envelope) == 0 &&
	         note_parse(envelope.note, envelope.note_len, &note) == 0 &&
	         vote_parse(note->text, note->text_len, &vote) == 0 && vote.epoch == epoch->epoch &&
	         strcmp(vote.authority, request->bundle->authorities[m].name) == 0 &&
	         strcmp(vote.namespace_name, request->namespace_name) == 0 &&
	         signed_by(g->member_rings[m], note, at);
	note_free(note);
	if (!ok)
		return 0;
	out->presence = CTL_HEALTH_PRESENT;
	out->record_count = vote.record_count;
	memcpy(out->records_root, vote.records_root, 32);
	memcpy(out->previous, vote.previous, 32);
	if (epoch->published && (vote.record_count != epoch->header.record_count ||
	                         memcmp(vote.records_root, epoch->header.records_root, 32) != 0))
		vote_keep_records(g, &vote, &envelope, kept);
	return 1;
}

/* Member m's vote of every epoch shown, from the first server that holds one that verifies: its
 * own server first, then the others that answered, so that a vote (which may be megabytes) is
 * downloaded about once. Writes only the votes[m] of each epoch. */
static void vote_pass(void *context, size_t m)
{
	struct gathering *g = context;
	const struct ctl_health_request *request = g->request;
	struct ctl_health_observation *o = g->observation;
	struct net_pool *pool = NULL;
	struct buffer envelope;
	char path[512], why[CTL_HEALTH_TEXT_MAX];
	size_t order[CTL_HEALTH_SERVERS_MAX], count = 0;
	for (size_t i = 0; i < request->server_count; i++)
		if (g->answers[i].member == (int)m)
			order[count++] = i;
	for (size_t i = 0; i < request->server_count; i++)
		if (g->answers[i].reached && g->answers[i].member != (int)m)
			order[count++] = i;
	buffer_init(&envelope);
	if (net_pool_new(NULL, &pool) != 0)
		pool = NULL;
	for (size_t e = 0; e < o->epoch_count; e++) {
		struct ctl_health_epoch *epoch = &o->epochs[e];
		uint64_t at = epoch->published ? epoch->header.valid_after : request->now;
		int asked = 0;
		snprintf(path, sizeof path, "/v1/%s/votes/%" PRIu64 "/%s", request->namespace_name,
		         epoch->epoch, request->bundle->authorities[m].name);
		for (size_t k = 0; k < count && epoch->votes[m].presence != CTL_HEALTH_PRESENT; k++) {
			int reached = 0;
			why[0] = '\0';
			buffer_reset(&envelope);
			int got = fetch(pool, g->answers[order[k]].url, path,
			                g->vote_body_max + VOTE_ENVELOPE_NOTE_MAX + 64, &envelope, &reached,
			                why, sizeof why);
			asked |= reached;
			if (got == 1)
				vote_read(g, m, epoch, at, &envelope, &epoch->votes[m], &g->kept[e][m]);
		}
		if (asked && epoch->votes[m].presence != CTL_HEALTH_PRESENT)
			epoch->votes[m].presence = CTL_HEALTH_ABSENT;
	}
	buffer_free(&envelope);
	net_pool_free(pool);
}

/* A header note verified by the bundle's threshold at its own valid-after, for the namespace:
 * 0 and *header filled, or -1. */
static int header_verify(const struct ctl_health_request *request, const struct certificate_keyring *ring,
                         const struct buffer *note_bytes, struct snapshot_header *header,
                         struct note **note_out)
{
	const struct trust_namespace *ns = trust_bundle_namespace(request->bundle, request->namespace_name);
	struct note *note = NULL;
	struct verify_pins pins = {ring, request->bundle->threshold, VERIFY_TRUST_BUNDLE_PINNED_BY};
	char detail[256];
	if (!note_bytes->len || note_parse(note_bytes->data, note_bytes->len, &note) != 0)
		return -1;
	if (snapshot_header_parse(note->text, note->text_len, header) != 0 || !ns ||
	    strcmp(header->namespace_name, ns->name) != 0 || strcmp(header->origin, ns->origin) != 0 ||
	    verify_note(&pins, note, header->valid_after, header->valid_after, NULL, detail, sizeof detail) !=
	        0) {
		note_free(note);
		return -1;
	}
	if (note_out)
		*note_out = note;
	else
		note_free(note);
	return 0;
}

static int signed_by(const struct certificate_keyring *member_ring, const struct note *note, uint64_t at)
{
	struct verify_pins pins = {member_ring, 1, VERIFY_TRUST_BUNDLE_PINNED_BY};
	char detail[256];
	return member_ring && verify_note(&pins, note, at, at, NULL, detail, sizeof detail) == 0;
}

/* 1 when the certificate bundle answer serves holds a certificate identity signed. */
static int serves_certificate_of(const struct server_answer *answer, const struct note_verifier *identity)
{
	struct certificate_bundle_entry entries[CERTIFICATE_BUNDLE_MAX];
	size_t count = 0;
	if (certificate_bundle_parse(answer->certificates.data, answer->certificates.len, entries, &count) !=
	    0)
		return 0;
	for (size_t i = 0; i < count; i++) {
		struct certificate certificate;
		if (certificate_parse_signed(entries[i].note, entries[i].note_len, &certificate) == 0 &&
		    note_verifier_equal(&certificate.identity, identity))
			return 1;
	}
	return 0;
}

/* Matches each answering server to the member it says it is (GET /v1/status), which must be one
 * the bundle pins and whose pinned identity certified a certificate the server serves. */
static void match_servers(const struct ctl_health_request *request, struct server_answer *answers,
                          struct ctl_health_observation *o)
{
	for (size_t i = 0; i < request->server_count; i++) {
		struct server_answer *answer = &answers[i];
		const char *why = NULL;
		answer->member = -1;
		if (!answer->reached || !answer->certificates.len) {
			struct ctl_health_server_failure *f = &o->failures[o->failure_count++];
			snprintf(f->server, sizeof f->server, "%s", answer->url);
			snprintf(f->why, sizeof f->why, "%s",
			         answer->why[0] ? answer->why : "no certificates");
			f->answered = answer->reached;
			continue;
		}
		if (!answer->clock_known) {
			why = answer->why[0] ? answer->why
			                     : "its GET /v1/status does not say its name and time";
		} else {
			for (size_t m = 0; m < request->bundle->authority_count && answer->member < 0; m++)
				if (strcmp(request->bundle->authorities[m].name, answer->name) == 0)
					answer->member = (int)m;
			if (answer->member < 0)
				why = "it says it is an authority the trust bundle does not pin";
			else if (!serves_certificate_of(answer,
			                                &request->bundle->authorities[answer->member]))
				why = "it serves no certificate of the authority it says it is";
			else if (o->members[answer->member].server[0])
				why = "it answers as an authority another server answered as already";
			if (why)
				answer->member = -1;
		}
		if (answer->member < 0) {
			struct ctl_health_server_failure *f = &o->failures[o->failure_count++];
			snprintf(f->server, sizeof f->server, "%s", answer->url);
			snprintf(f->why, sizeof f->why, "%s", why);
			f->answered = 1;
			continue;
		}
		struct ctl_health_member *member = &o->members[answer->member];
		snprintf(member->server, sizeof member->server, "%s", answer->url);
		if (answer->clock_known) {
			member->clock_known = 1;
			member->clock_skew = (int64_t)answer->clock - (int64_t)answer->local_time;
		}
	}
}

/* The cosigners of a member's checkpoint by the log's pins: signed by one of the log keys, and the
 * distinct pinned witnesses whose cosignature verifies; else member->checkpoint_refused, why. */
static void verify_cosigners(const struct ctl_log_pins *pins, const char *origin, const struct note *note,
                             struct ctl_health_member *member)
{
	struct checkpoint checkpoint;
	size_t cosigned = 0;
	int rc = DIRAUTH_ERR_UNKNOWN_KEY;
	for (size_t k = 0; k < pins->log_key_count && rc == DIRAUTH_ERR_UNKNOWN_KEY; k++) {
		/* quorum 0: count them; the page judges the count against the threshold */
		struct tlog_policy policy = {origin, &pins->log_keys[k], pins->witnesses, pins->witness_count,
		                             0};
		cosigned = 0;
		rc = tlog_checkpoint_verify(note, &policy, &checkpoint, NULL, &cosigned);
	}
	member->cosigners = rc == 0 ? cosigned : 0;
	if (rc != 0) {
		member->checkpoint_refused = 1;
		snprintf(member->checkpoint_why, sizeof member->checkpoint_why, "%s",
		         rc == DIRAUTH_ERR_UNKNOWN_KEY ? "signed by none of the pinned log keys"
		         : rc == DIRAUTH_ERR_SIGNATURE
		             ? "a signature by the log key or a pinned witness does not verify"
		             : dirauth_strerror(rc));
	}
}

/* Each member's log checkpoint as its own server serves it. */
static void read_checkpoints(const struct ctl_health_request *request, struct server_answer *answers,
                             struct ctl_health_observation *o)
{
	const struct trust_namespace *ns = trust_bundle_namespace(request->bundle, request->namespace_name);
	for (size_t i = 0; i < request->server_count; i++) {
		struct server_answer *answer = &answers[i];
		struct note *note = NULL;
		struct checkpoint checkpoint;
		if (answer->member < 0 || !answer->checkpoint.len ||
		    note_parse(answer->checkpoint.data, answer->checkpoint.len, &note) != 0)
			continue;
		if (checkpoint_parse(note->text, note->text_len, &checkpoint) == 0 && ns &&
		    strcmp(checkpoint.origin, ns->origin) == 0) {
			struct ctl_health_member *member = &o->members[answer->member];
			member->checkpoint_known = 1;
			member->log_size = checkpoint.tree_size;
			memcpy(member->log_root, checkpoint.root, 32);
			if (request->log != NULL && request->log->enabled) {
				verify_cosigners(request->log, ns->origin, note, member);
				note_free(note);
				continue;
			}
			/* cosignature/v1 lines carry 8 bytes of timestamp before the signature */
			for (size_t s = 0; s < note->signature_count; s++) {
				int seen = 0;
				if (note->signatures[s].signature_len != 72)
					continue;
				for (size_t t = 0; t < s; t++)
					if (note->signatures[t].signature_len == 72 &&
					    strcmp(note->signatures[t].name, note->signatures[s].name) == 0)
						seen = 1;
				member->cosigners += !seen;
			}
		}
		note_free(note);
	}
}

/* The epochs from g->newest down to the first snapshot: the published header (the first that
 * verifies, whoever serves it) and whose signatures on it any answering server holds. */
static void read_epochs(struct gathering *g, const struct certificate_keyring *ring,
                        struct ctl_health_observation *o)
{
	const struct ctl_health_request *request = g->request;
	for (size_t e = 0; e < g->epoch_count; e++) {
		struct ctl_health_epoch *epoch = &o->epochs[o->epoch_count++];
		struct note *published = NULL;
		epoch->epoch = g->newest - e;
		for (size_t i = 0; i < request->server_count && !published; i++) {
			struct note *note = NULL;
			if (header_verify(request, ring, &g->answers[i].headers[e], &epoch->header, &note) !=
			    0)
				continue;
			if (epoch->header.epoch == epoch->epoch) {
				published = note;
				epoch->published = 1;
			} else {
				note_free(note);
			}
		}
		for (size_t m = 0; published && m < request->bundle->authority_count; m++) {
			/* A signature counts on the published header's text: as served, or as computed by a
			 * server with the signatures it holds (GET .../signatures/<epoch>). */
			uint64_t at = epoch->header.valid_after;
			epoch->signatures[m] = signed_by(g->member_rings[m], published, at)
			                           ? CTL_HEALTH_PRESENT
			                           : CTL_HEALTH_ABSENT;
			for (size_t i = 0;
			     i < request->server_count && epoch->signatures[m] != CTL_HEALTH_PRESENT; i++) {
				const struct buffer *held[2] = {&g->answers[i].signatures[e],
				                                &g->answers[i].headers[e]};
				for (size_t h = 0; h < 2 && epoch->signatures[m] != CTL_HEALTH_PRESENT; h++) {
					struct note *note = NULL;
					if (held[h]->len &&
					    note_parse(held[h]->data, held[h]->len, &note) == 0 &&
					    note->text_len == published->text_len &&
					    memcmp(note->text, published->text, note->text_len) == 0 &&
					    signed_by(g->member_rings[m], note, at))
						epoch->signatures[m] = CTL_HEALTH_PRESENT;
					note_free(note);
				}
			}
		}
		int genesis = 1;
		for (size_t b = 0; b < 32 && epoch->published; b++)
			genesis &= epoch->header.previous[b] == 0;
		note_free(published);
		if (epoch->published && genesis)
			break; /* the first snapshot: nothing was published before it */
	}
}

/* Notes one differing service in vote's bounded list. */
static void name_record(struct ctl_health_vote *vote, char sign, const uint8_t service_id[32])
{
	if (vote->named_count == CTL_HEALTH_RECORDS_NAMED)
		return;
	vote->named_sign[vote->named_count] = sign;
	memcpy(vote->named[vote->named_count++], service_id, 32);
}

/* Compares a kept vote's records with the published body's (service ids and registration
 * digests, both sorted by service id) in one merge. */
static void compare_records(const struct kept_records *kept, const struct snapshot_body *body,
                            const uint8_t (*digests)[32], struct ctl_health_vote *vote)
{
	size_t v = 0, p = 0;
	vote->records_compared = 1;
	while (v < kept->count || p < body->record_count) {
		int order = v == kept->count          ? 1
		            : p == body->record_count ? -1
		                                      : memcmp(kept->records[v].service_id,
		                                               body->records[p].service_id, SERVICE_ID_SIZE);
		if (order < 0) {
			vote->voted_only++;
			name_record(vote, '+', kept->records[v++].service_id);
		} else if (order > 0) {
			vote->published_only++;
			name_record(vote, '-', body->records[p++].service_id);
		} else {
			if (memcmp(kept->records[v].registration_sha256, digests[p], 32) != 0) {
				vote->other_version++;
				name_record(vote, '~', kept->records[v].service_id);
			}
			v++;
			p++;
		}
	}
}

/* For each epoch with a kept vote: the published body, from the first server whose body verifies
 * against the published header, compared with each kept vote's records. */
static void read_records(struct gathering *g, struct ctl_health_observation *o)
{
	const struct ctl_health_request *request = g->request;
	struct snapshot_body_limits limits;
	verify_snapshot_body_limits(request->bundle, &limits);
	for (size_t e = 0; e < o->epoch_count; e++) {
		struct ctl_health_epoch *epoch = &o->epochs[e];
		size_t kept = 0;
		for (size_t m = 0; m < request->bundle->authority_count; m++)
			kept += g->kept[e][m].records != NULL;
		if (!kept || !epoch->published)
			continue;
		char path[256], detail[256];
		snprintf(path, sizeof path, "/v1/%s/snapshots/%" PRIu64 "/body", request->namespace_name,
		         epoch->epoch);
		for (size_t i = 0; i < request->server_count; i++) {
			struct buffer served, body;
			struct snapshot_body *parsed = NULL;
			uint8_t(*digests)[32] = NULL;
			int reached = 0, done = 0;
			char why[CTL_HEALTH_TEXT_MAX] = "";
			if (!g->answers[i].reached)
				continue;
			buffer_init(&served);
			buffer_init(&body);
			if (fetch(NULL, g->answers[i].url, path, (size_t)request->bundle->max_body_compressed,
			          &served, &reached, why, sizeof why) == 1 &&
			    verify_snapshot_body(request->bundle, &epoch->header, NULL, served.data,
			                         served.len, &body, detail, sizeof detail) == 0 &&
			    snapshot_body_parse_sections(body.data, body.len, &limits, &parsed) == 0 &&
			    (digests = malloc((parsed->record_count ? parsed->record_count : 1) *
			                      sizeof *digests))) {
				done = 1;
				for (size_t r = 0; r < parsed->record_count && done; r++)
					done = crypto_sha256(parsed->records[r].note,
					                     parsed->records[r].note_len, digests[r]) == 0;
				for (size_t m = 0; done && m < request->bundle->authority_count; m++)
					if (g->kept[e][m].records)
						compare_records(&g->kept[e][m], parsed,
						                (const uint8_t(*)[32])digests,
						                &epoch->votes[m]);
			}
			free(digests);
			snapshot_body_free(parsed);
			buffer_free(&body);
			buffer_free(&served);
			if (done)
				break;
		}
	}
}

static void answers_free(struct server_answer *answers, size_t count)
{
	for (size_t i = 0; answers && i < count; i++) {
		buffer_free(&answers[i].certificates);
		buffer_free(&answers[i].latest);
		buffer_free(&answers[i].checkpoint);
		for (size_t e = 0; e < CTL_HEALTH_EPOCHS_MAX; e++) {
			buffer_free(&answers[i].headers[e]);
			buffer_free(&answers[i].signatures[e]);
		}
	}
	free(answers);
}

int ctl_health_gather(const struct ctl_health_request *request, struct ctl_health_observation *o,
                      struct ctl_report *report)
{
	const struct trust_bundle *bundle = request->bundle;
	struct gathering g = {.request = request, .observation = o};
	struct certificate_keyring *ring = NULL;
	struct certificate_keyring **member_rings = g.member_rings;
	char detail[256];
	int rc = CTL_EXIT_SOFTWARE;

	memset(o, 0, sizeof *o);
	snprintf(o->namespace_name, sizeof o->namespace_name, "%s", request->namespace_name);
	o->now = request->now;
	o->clock_skew_limit = request->clock_skew_limit;
	o->threshold = bundle->threshold;
	o->cosignatures_verified = request->log != NULL && request->log->enabled;
	o->member_count = bundle->authority_count;
	for (size_t m = 0; m < bundle->authority_count; m++)
		snprintf(o->members[m].name, sizeof o->members[m].name, "%s", bundle->authorities[m].name);

	g.answers = calloc(request->server_count, sizeof *g.answers);
	if (!g.answers) {
		ctl_report_fail(report, CTL_EXIT_SOFTWARE, "health-page: out of memory");
		return CTL_EXIT_SOFTWARE;
	}
	for (size_t i = 0; i < request->server_count; i++)
		g.answers[i].url = request->servers[i];
	g.vote_body_max =
	    (size_t)(bundle->max_body_uncompressed < SIZE_MAX / 2 ? bundle->max_body_uncompressed
	                                                          : SIZE_MAX / 2);
	if (ctl_exchange_each(request->server_count, first_pass, &g) != 0) {
		ctl_report_fail(report, CTL_EXIT_SOFTWARE, "health-page: out of memory");
		goto done;
	}
	size_t reached = 0;
	for (size_t i = 0; i < request->server_count; i++)
		reached += g.answers[i].reached;
	if (reached == 0) {
		ctl_report_fail(report, CTL_EXIT_UNAVAILABLE, "health-page: no server answered (%s: %s)",
		                g.answers[0].url, g.answers[0].why);
		rc = CTL_EXIT_UNAVAILABLE;
		goto done;
	}
	match_servers(request, g.answers, o);

	/* One keyring of every certificate a pinned identity signed, whoever served it. */
	if (verify_keyring_new(bundle->authorities, bundle->authority_count, &ring, detail, sizeof detail) !=
	    0) {
		ctl_report_fail(report, CTL_EXIT_CONFIG, "health-page: %s", detail);
		rc = CTL_EXIT_CONFIG;
		goto done;
	}
	for (size_t i = 0; i < request->server_count; i++)
		if (g.answers[i].certificates.len)
			verify_keyring_add_certificates(ring, g.answers[i].certificates.data,
			                                g.answers[i].certificates.len, NULL, detail,
			                                sizeof detail);
	for (size_t m = 0; m < bundle->authority_count; m++) {
		struct ctl_health_member *member = &o->members[m];
		if (verify_keyring_for_identity(ring, member->name, &member_rings[m]) != 0)
			member_rings[m] = NULL;
		for (size_t c = 0; c < ring->certificate_count; c++)
			if (strcmp(ring->certificates[c].authority, member->name) == 0) {
				if (!member->certificate_known ||
				    ring->certificates[c].valid_until > member->not_after)
					member->not_after = ring->certificates[c].valid_until;
				member->certificate_known = 1;
			}
	}
	read_checkpoints(request, g.answers, o);

	for (size_t i = 0; i < request->server_count; i++) {
		struct snapshot_header header;
		if (header_verify(request, ring, &g.answers[i].latest, &header, NULL) == 0 &&
		    (!o->latest_known || header.epoch > o->latest.epoch)) {
			o->latest = header;
			o->latest_known = 1;
		}
	}
	if (!o->latest_known) {
		ctl_report_fail(
		    report, CTL_EXIT_DATA,
		    "health-page: no server serves a latest snapshot of %s that the trust bundle's "
		    "threshold signed",
		    request->namespace_name);
		rc = CTL_EXIT_DATA;
		goto done;
	}
	g.newest = o->latest.epoch;
	g.epoch_count = request->epochs < g.newest + 1 ? request->epochs : (size_t)g.newest + 1;
	if (ctl_exchange_each(request->server_count, second_pass, &g) != 0) {
		ctl_report_fail(report, CTL_EXIT_SOFTWARE, "health-page: out of memory");
		goto done;
	}
	read_epochs(&g, ring, o);
	if (ctl_exchange_each(bundle->authority_count, vote_pass, &g) != 0) {
		ctl_report_fail(report, CTL_EXIT_SOFTWARE, "health-page: out of memory");
		goto done;
	}
	read_records(&g, o);
	rc = 0;
done:
	for (size_t m = 0; m < CTL_HEALTH_MEMBERS_MAX; m++) {
		verify_keyring_free(member_rings[m]);
		for (size_t e = 0; e < CTL_HEALTH_EPOCHS_MAX; e++)
			free(g.kept[e][m].records);
	}
	verify_keyring_free(ring);
	answers_free(g.answers, request->server_count);
	return rc;
}
