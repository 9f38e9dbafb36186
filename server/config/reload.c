/*
 * reload.c: the table of configuration keys, live or restart-only, and the merge (reload.h).
 *
 * One row per key the file has, in the order of the file's sections. A scalar key is a field of
 * struct config, compared, kept and printed by its kind; a key that is more than a field (the
 * namespaces, the authority set's members, the clock) has its own three functions. The merge
 * walks the table once: a live row that differs is listed as applied, a restart-only row that
 * differs gets the running value back and a sentence. A row's comparison runs after the rows
 * above it have kept what they keep, so the members' urls, live, are compared only when the
 * members themselves (restart-only) were not kept whole.
 */
#include "server/config/reload.h"

#include "base/error.h"
#include "crypto/crypto.h"
#include "server/config/config_internal.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum reload_kind {
	RELOAD_STRING,
	RELOAD_U16,
	RELOAD_UNSIGNED,
	RELOAD_SIZE,
	RELOAD_U64,
	RELOAD_ENUM,
	RELOAD_OTHER
};

struct reload_key {
	const char *name;
	int live;
	enum reload_kind kind;
	size_t offset, size; /* of the field, for every kind but RELOAD_OTHER */
	/* RELOAD_OTHER only. */
	int (*differs)(const struct config *running, const struct config *loaded);
	int (*keep)(const struct config *running, struct config *loaded); /* 0 or DIRAUTH_ERR_NOMEM */
	void (*describe)(const struct config *running, char *out, size_t cap);
};

#define FIELD(kind, field) kind, offsetof(struct config, field), sizeof(((struct config *)0)->field)
#define OTHER(prefix)      RELOAD_OTHER, 0, 0, prefix##_differs, prefix##_keep, prefix##_describe
#define LIVE(prefix)       RELOAD_OTHER, 0, 0, prefix##_differs, NULL, NULL

static int epoch_differs(const struct config *a, const struct config *b)
{
	return memcmp(&a->epoch, &b->epoch, sizeof a->epoch) != 0 ||
	       a->epoch_phases_set != b->epoch_phases_set;
}

static int epoch_keep(const struct config *running, struct config *loaded)
{
	loaded->epoch = running->epoch;
	loaded->epoch_phases_set = running->epoch_phases_set;
	return 0;
}

static void epoch_describe(const struct config *c, char *out, size_t cap)
{
	snprintf(out, cap, "length_seconds %llu, genesis %llu, validity_epochs %llu",
	         (unsigned long long)c->epoch.length, (unsigned long long)c->epoch.genesis,
	         (unsigned long long)c->epoch.validity_epochs);
}

static int clock_differs(const struct config *a, const struct config *b)
{
	return a->clock_source != b->clock_source || strcmp(a->clock_path, b->clock_path) != 0;
}

static int clock_keep(const struct config *running, struct config *loaded)
{
	loaded->clock_source = running->clock_source;
	memcpy(loaded->clock_path, running->clock_path, sizeof loaded->clock_path);
	return 0;
}

static void clock_describe(const struct config *c, char *out, size_t cap)
{
	snprintf(out, cap, "%s", c->clock_source == CONFIG_CLOCK_FILE ? c->clock_path : "system");
}

static int capability_differs(const struct config_capability *a, const struct config_capability *b)
{
	return a->is_private != b->is_private || strcmp(a->file, b->file) != 0 ||
	       memcmp(a->sha256, b->sha256, sizeof a->sha256) != 0 || a->secret_len != b->secret_len ||
	       !crypto_equal(a->secret, b->secret, a->secret_len);
}

static int namespaces_differs(const struct config *a, const struct config *b)
{
	if (a->namespace_count != b->namespace_count)
		return 1;
	for (size_t i = 0; i < a->namespace_count; i++) {
		const struct config_namespace *x = &a->namespaces[i], *y = &b->namespaces[i];
		if (strcmp(x->name, y->name) != 0 || strcmp(x->origin, y->origin) != 0 ||
		    x->lifecycle != y->lifecycle ||
		    x->health_freshness_epochs != y->health_freshness_epochs ||
		    x->revocation_epochs != y->revocation_epochs ||
		    x->max_revocations != y->max_revocations ||
		    capability_differs(&a->capabilities[i], &b->capabilities[i]))
			return 1;
	}
	return 0;
}

static int namespaces_keep(const struct config *running, struct config *loaded)
{
	for (size_t i = 0; i < CONFIG_MAX_NAMESPACES; i++)
		config_capability_wipe(&loaded->capabilities[i]);
	loaded->namespace_count = running->namespace_count;
	memcpy(loaded->namespaces, running->namespaces, sizeof loaded->namespaces);
	memcpy(loaded->capabilities, running->capabilities, sizeof loaded->capabilities);
	return 0;
}

static void namespaces_describe(const struct config *c, char *out, size_t cap)
{
	size_t at = 0;
	out[0] = 0;
	for (size_t i = 0; i < c->namespace_count && at < cap; i++) {
		int n = snprintf(out + at, cap - at, "%s%s", i ? ", " : "", c->namespaces[i].name);
		at += n > 0 ? (size_t)n : 0;
	}
}

/* Field by field, never memcmp: the bytes past a name's NUL and the padding are nobody's. */
static int verifier_differs(const struct note_verifier *a, const struct note_verifier *b)
{
	return !note_verifier_equal(a, b);
}

/* The members but their urls (live), and what follows from them. */
static int members_differs(const struct config *a, const struct config *b)
{
	if (a->member_count != b->member_count || a->self_index != b->self_index ||
	    a->threshold != b->threshold)
		return 1;
	for (size_t i = 0; i < a->member_count; i++) {
		const struct config_member *x = &a->members[i], *y = &b->members[i];
		if (strcmp(x->name, y->name) != 0 || verifier_differs(&x->identity, &y->identity) ||
		    x->has_log_key != y->has_log_key || verifier_differs(&x->log_key, &y->log_key) ||
		    x->has_cosigner != y->has_cosigner || verifier_differs(&x->cosigner, &y->cosigner))
			return 1;
	}
	return 0;
}

static int members_keep(const struct config *running, struct config *loaded)
{
	struct config_member *copy = calloc(running->member_count, sizeof *copy);
	if (!copy)
		return DIRAUTH_ERR_NOMEM;
	memcpy(copy, running->members, running->member_count * sizeof *copy);
	free(loaded->members);
	loaded->members = copy;
	loaded->member_count = running->member_count;
	loaded->self_index = running->self_index;
	loaded->threshold = running->threshold;
	return 0;
}

static void members_describe(const struct config *c, char *out, size_t cap)
{
	size_t at = 0;
	int n = snprintf(out, cap, "%zu of %zu:", c->threshold, c->member_count);
	at = n > 0 ? (size_t)n : 0;
	for (size_t i = 0; i < c->member_count && at < cap; i++) {
		n = snprintf(out + at, cap - at, " %s", c->members[i].name);
		at += n > 0 ? (size_t)n : 0;
	}
}

static int member_urls_differs(const struct config *a, const struct config *b)
{
	for (size_t i = 0; i < a->member_count && i < b->member_count; i++)
		if (strcmp(a->members[i].url, b->members[i].url) != 0)
			return 1;
	return 0;
}

static int witnesses_differs(const struct config *a, const struct config *b)
{
	if (a->peers.witness_count != b->peers.witness_count)
		return 1;
	for (size_t i = 0; i < a->peers.witness_count; i++) {
		const struct config_witness *x = &a->peers.witnesses[i], *y = &b->peers.witnesses[i];
		if (strcmp(x->name, y->name) != 0 || strcmp(x->url, y->url) != 0 ||
		    verifier_differs(&x->key, &y->key))
			return 1;
	}
	return 0;
}

static int witnesses_keep(const struct config *running, struct config *loaded)
{
	loaded->peers.witness_count = running->peers.witness_count;
	memcpy(loaded->peers.witnesses, running->peers.witnesses, sizeof loaded->peers.witnesses);
	return 0;
}

static void witnesses_describe(const struct config *c, char *out, size_t cap)
{
	snprintf(out, cap, "%zu witnesses", c->peers.witness_count);
}

static int ca_file_differs(const struct config *a, const struct config *b)
{
	return strcmp(a->peers.ca_file, b->peers.ca_file) != 0;
}

static int ca_file_keep(const struct config *running, struct config *loaded)
{
	memcpy(loaded->peers.ca_file, running->peers.ca_file, sizeof loaded->peers.ca_file);
	loaded->peers.ca_file_line = running->peers.ca_file_line;
	return 0;
}

static void ca_file_describe(const struct config *c, char *out, size_t cap)
{
	snprintf(out, cap, "%s", c->peers.ca_file[0] ? c->peers.ca_file : "the system's store");
}

static int providers_differs(const struct config *a, const struct config *b)
{
	if (a->provider_count != b->provider_count)
		return 1;
	for (size_t i = 0; i < a->provider_count; i++) {
		const struct config_provider *x = &a->providers[i], *y = &b->providers[i];
		if (verifier_differs(&x->key, &y->key) || x->namespace_mask != y->namespace_mask ||
		    x->class_mask != y->class_mask)
			return 1;
	}
	return 0;
}

static int operators_differs(const struct config *a, const struct config *b)
{
	if (a->operator_count != b->operator_count)
		return 1;
	for (size_t i = 0; i < a->operator_count; i++)
		if (verifier_differs(&a->operators[i], &b->operators[i]))
			return 1;
	return 0;
}

/* Every key of the file, live or not (reload.h). */
static const struct reload_key reload_keys[] = {
    {"authority.name", 0, FIELD(RELOAD_STRING, authority_name), NULL, NULL, NULL},
    {"authority.signer_socket", 0, FIELD(RELOAD_STRING, signer_socket), NULL, NULL, NULL},
    {"listen.address", 0, FIELD(RELOAD_STRING, listen_address), NULL, NULL, NULL},
    {"listen.port", 0, FIELD(RELOAD_U16, listen_port), NULL, NULL, NULL},
    {"data_dir", 0, FIELD(RELOAD_STRING, data_dir), NULL, NULL, NULL},
    {"epoch", 0, OTHER(epoch)},
    {"clock", 0, OTHER(clock)},
    {"namespaces", 0, OTHER(namespaces)},
    {"providers", 1, LIVE(providers)},
    {"operators", 1, LIVE(operators)},
    {"bounds.registration_body", 0, FIELD(RELOAD_SIZE, bounds.registration_body), NULL, NULL, NULL},
    {"bounds.endpoints_per_service", 0, FIELD(RELOAD_SIZE, bounds.endpoints_per_service), NULL, NULL, NULL},
    {"bounds.records_per_snapshot", 0, FIELD(RELOAD_SIZE, bounds.records_per_snapshot), NULL, NULL, NULL},
    {"bounds.snapshot_body_compressed", 0, FIELD(RELOAD_SIZE, bounds.snapshot_body_compressed), NULL, NULL,
     NULL},
    {"bounds.snapshot_body_uncompressed", 0, FIELD(RELOAD_SIZE, bounds.snapshot_body_uncompressed), NULL,
     NULL, NULL},
    {"bounds.clock_skew_seconds", 0, FIELD(RELOAD_U64, bounds.clock_skew_seconds), NULL, NULL, NULL},
    {"bounds.max_validity_seconds", 1, FIELD(RELOAD_U64, bounds.max_validity_seconds), NULL, NULL, NULL},
    {"http.threads", 0, FIELD(RELOAD_UNSIGNED, http.threads), NULL, NULL, NULL},
    {"http.connection_timeout_seconds", 0, FIELD(RELOAD_UNSIGNED, http.connection_timeout_seconds), NULL,
     NULL, NULL},
    {"http.header_timeout_seconds", 1, FIELD(RELOAD_UNSIGNED, http.header_timeout_seconds), NULL, NULL, NULL},
    {"http.body_timeout_seconds", 1, FIELD(RELOAD_UNSIGNED, http.body_timeout_seconds), NULL, NULL, NULL},
    {"http.max_connections", 0, FIELD(RELOAD_UNSIGNED, http.max_connections), NULL, NULL, NULL},
    {"http.max_connections_per_ip", 1, FIELD(RELOAD_UNSIGNED, http.max_connections_per_ip), NULL, NULL, NULL},
    {"http.max_pending_connections", 1, FIELD(RELOAD_UNSIGNED, http.max_pending_connections), NULL, NULL,
     NULL},
    {"http.log_interval_seconds", 1, FIELD(RELOAD_UNSIGNED, http.log_interval_seconds), NULL, NULL, NULL},
    {"http.connection_memory_limit", 0, FIELD(RELOAD_SIZE, http.connection_memory_limit), NULL, NULL, NULL},
    {"http.old_epochs_cache_bytes", 0, FIELD(RELOAD_SIZE, http.old_epochs_cache_bytes), NULL, NULL, NULL},
    {"http.log_cache_bytes", 0, FIELD(RELOAD_SIZE, http.log_cache_bytes), NULL, NULL, NULL},
    {"store.map_size_bytes", 0, FIELD(RELOAD_SIZE, store.map_size_bytes), NULL, NULL, NULL},
    {"store.refuse_percent", 0, FIELD(RELOAD_UNSIGNED, store.refuse_percent), NULL, NULL, NULL},
    {"store.body_retention_epochs", 0, FIELD(RELOAD_U64, store.body_retention_epochs), NULL, NULL, NULL},
    {"diffs.bases", 0, FIELD(RELOAD_U64, diffs.bases), NULL, NULL, NULL},
    {"authorities.members", 0, OTHER(members)},
    {"authorities.members.url", 1, LIVE(member_urls)},
    {"authorities.timeout_seconds", 1, FIELD(RELOAD_UNSIGNED, peers.timeout_seconds), NULL, NULL, NULL},
    {"authorities.connect_timeout_seconds", 1, FIELD(RELOAD_UNSIGNED, peers.connect_timeout_seconds), NULL,
     NULL, NULL},
    {"authorities.retries", 1, FIELD(RELOAD_UNSIGNED, peers.retries), NULL, NULL, NULL},
    {"authorities.connections_per_peer", 0, FIELD(RELOAD_UNSIGNED, peers.connections_per_peer), NULL, NULL,
     NULL},
    {"authorities.ca_file", 0, OTHER(ca_file)},
    {"authorities.witnesses", 0, OTHER(witnesses)},
};

static int key_differs(const struct reload_key *k, const struct config *a, const struct config *b)
{
	if (k->kind == RELOAD_OTHER)
		return k->differs(a, b);
	const char *x = (const char *)a + k->offset, *y = (const char *)b + k->offset;
	if (k->kind == RELOAD_STRING)
		return strncmp(x, y, k->size) != 0;
	return memcmp(x, y, k->size) != 0;
}

static int key_keep(const struct reload_key *k, const struct config *running, struct config *loaded)
{
	if (k->kind == RELOAD_OTHER)
		return k->keep(running, loaded);
	memcpy((char *)loaded + k->offset, (const char *)running + k->offset, k->size);
	return 0;
}

static void key_describe(const struct reload_key *k, const struct config *c, char *out, size_t cap)
{
	const void *field = (const char *)c + k->offset;
	unsigned long long value = 0;
	switch (k->kind) {
	case RELOAD_OTHER:
		k->describe(c, out, cap);
		return;
	case RELOAD_STRING:
		snprintf(out, cap, "%s", *(const char *)field ? (const char *)field : "(none)");
		return;
	case RELOAD_U16:
		value = *(const uint16_t *)field;
		break;
	case RELOAD_UNSIGNED:
	case RELOAD_ENUM:
		value = *(const unsigned *)field;
		break;
	case RELOAD_SIZE:
		value = *(const size_t *)field;
		break;
	case RELOAD_U64:
		value = *(const uint64_t *)field;
		break;
	}
	snprintf(out, cap, "%llu", value);
}

/* Each provider's namespace bits, re-read by name against running's namespaces. */
static void providers_follow_namespaces(const struct config *running, struct config *loaded)
{
	for (size_t p = 0; p < loaded->provider_count; p++) {
		uint64_t mask = loaded->providers[p].namespace_mask, kept = 0;
		for (size_t i = 0; i < loaded->namespace_count; i++) {
			if (!(mask & ((uint64_t)1 << i)))
				continue;
			const char *name = loaded->namespaces[i].name;
			int at = config_namespace_index(running, name, strlen(name));
			if (at >= 0)
				kept |= (uint64_t)1 << at;
		}
		loaded->providers[p].namespace_mask = kept;
	}
}

int config_reload_key_is_live(const char *key)
{
	for (size_t i = 0; i < sizeof reload_keys / sizeof reload_keys[0]; i++)
		if (strcmp(reload_keys[i].name, key) == 0)
			return reload_keys[i].live;
	return 0;
}

int config_reload_merge(const struct config *running, struct config *loaded,
                        struct config_reload_report *report)
{
	memset(report, 0, sizeof *report);
	if (namespaces_differs(running, loaded))
		providers_follow_namespaces(running, loaded);
	for (size_t i = 0; i < sizeof reload_keys / sizeof reload_keys[0]; i++) {
		const struct reload_key *k = &reload_keys[i];
		if (!key_differs(k, running, loaded))
			continue;
		if (k->live) {
			report->applied[report->applied_count++] = k->name;
			continue;
		}
		char value[CONFIG_RELOAD_LINE_MAX / 2];
		key_describe(k, running, value, sizeof value);
		snprintf(report->restart[report->restart_count++], CONFIG_RELOAD_LINE_MAX,
		         "%s changed; needs a restart; kept %s", k->name, value);
		if (key_keep(k, running, loaded) != 0) {
			snprintf(report->refusal, sizeof report->refusal, "out of memory");
			return DIRAUTH_ERR_NOMEM;
		}
	}
	/* Derived from restart-only keys only, so the running value. */
	loaded->bounds.namespace_bytes = running->bounds.namespace_bytes;
	/* What couples a live key to a kept one: the peers' timeouts and the running windows. */
	struct settings_error error = {0};
	struct settings_reader state = {.error = &error, .base_dir = "."};
	if (config_check_windows(&state, loaded) != 0) {
		snprintf(report->refusal, sizeof report->refusal, "%s", error.message);
		return DIRAUTH_ERR_CONFIG;
	}
	return 0;
}
