/*
 * config_authorities.c: the authority set in dirauthd's configuration: the authorities section
 * (its members with their identity keys, URLs and log keys, the threshold, the peer client's
 * timeouts and connections, the witnesses and cosigners, the CA file), the set of one that an
 * authority alone is without it, and whether each window of a round holds the peer requests that
 * run in it.
 *
 * The threshold must be a majority of the members, so that two disjoint groups can never both
 * publish for one epoch; no authority is listed twice, by name or by identity key; and this
 * authority must be one of the members. Every refusal carries the line of the node at fault
 * (settings.h), as everywhere in the configuration.
 */
#include "server/config/config_internal.h"

#include "schema/checkpoint.h"
#include "base/error.h"
#include "schema/names.h"
#include "settings/settings.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* An optional verifier key of a member or witness: *has set when key names one. type is
 * NOTE_KEY_TYPE_ED25519 or NOTE_KEY_TYPE_COSIGNATURE_V1. */
static int parse_log_key(struct settings_reader *state, const struct settings_node *item, const char *key,
                         const char *what, uint8_t type, struct note_verifier *out, int *has)
{
	const struct settings_node *v = settings_lookup(item, key);
	char text[NOTE_VERIFIER_KEY_MAX + 1];
	int rc;
	*has = 0;
	if (!v)
		return 0;
	if ((rc = settings_string(state, v, what, text, sizeof text)))
		return rc;
	if (note_verifier_parse_typed(text, strlen(text), type, out) != 0)
		return settings_fail(state, v->line, "%s is not a %s verifier key", what,
		                     type == NOTE_KEY_TYPE_ED25519 ? "log (Ed25519, type 0x01)"
		                                                   : "cosignature/v1 (type 0x04)");
	*has = 1;
	return 0;
}

/* A member's log key is named by the origin of a configured namespace (the log it signs). */
static int check_member_log_keys(struct settings_reader *state, const struct settings_node *item,
                                 const struct config *config, const struct config_member *member)
{
	if (!member->has_log_key)
		return 0;
	for (size_t i = 0; i < config->namespace_count; i++)
		if (strcmp(config->namespaces[i].origin, member->log_key.name) == 0)
			return 0;
	return settings_fail(state, settings_lookup(item, "log_key")->line,
	                     "authority log_key is named '%.64s', the origin of no configured namespace",
	                     member->log_key.name);
}

/* The witnesses outside the set: name, cosignature key and submission prefix URL each. */
static int parse_witnesses(struct settings_reader *state, const struct settings_node *node,
                           struct config *config)
{
	static const char *const keys[] = {"name", "key", "url", NULL};
	int rc = settings_expect_kind(state, node, SETTINGS_SEQUENCE, "authorities.witnesses");
	if (rc)
		return rc;
	if (node->count > CONFIG_MAX_WITNESSES)
		return settings_fail(state, node->line, "authorities.witnesses: at most %d witnesses",
		                     CONFIG_MAX_WITNESSES);
	for (size_t i = 0; i < node->count; i++) {
		const struct settings_node *item = node->children[i], *name, *key, *url;
		struct config_witness *w = &config->peers.witnesses[i];
		int has = 0;
		if ((rc = settings_expect_kind(state, item, SETTINGS_MAPPING, "a witness")) ||
		    (rc = settings_check_keys(state, item, keys, "witness")) ||
		    (rc = settings_require(state, item, "name", "witness", &name)) ||
		    (rc = settings_require(state, item, "key", "witness", &key)) ||
		    (rc = settings_require(state, item, "url", "witness", &url)) ||
		    (rc = settings_string(state, name, "witness name", w->name, sizeof w->name)) ||
		    (rc = settings_string(state, url, "witness url", w->url, sizeof w->url)) ||
		    (rc = parse_log_key(state, item, "key", "witness key", NOTE_KEY_TYPE_COSIGNATURE_V1,
		                        &w->key, &has)))
			return rc;
		if (strcmp(w->key.name, w->name) != 0)
			return settings_fail(state, key->line, "witness key is named '%.64s', not '%.64s'",
			                     w->key.name, w->name);
		if (strncmp(w->url, "http://", 7) != 0 && strncmp(w->url, "https://", 8) != 0)
			return settings_fail(state, url->line,
			                     "witness url must begin with http:// or https://");
		if (w->url[strlen(w->url) - 1] == '/')
			return settings_fail(state, url->line, "witness url must not end with '/'");
		for (size_t j = 0; j < i; j++)
			if (memcmp(config->peers.witnesses[j].key.public_key, w->key.public_key,
			           sizeof w->key.public_key) == 0 ||
			    strcmp(config->peers.witnesses[j].name, w->name) == 0)
				return settings_fail(state, item->line, "witness '%.64s' is listed twice",
				                     w->name);
		for (size_t j = 0; j < config->member_count; j++)
			if (config->members[j].has_cosigner &&
			    memcmp(config->members[j].cosigner.public_key, w->key.public_key,
			           sizeof w->key.public_key) == 0)
				return settings_fail(
				    state, item->line,
				    "witness '%.64s' has the cosignature key of authority '%.64s'", w->name,
				    config->members[j].name);
		config->peers.witness_count = i + 1;
	}
	return 0;
}

/* Cosignature keys are all or nothing: once any other member has one, a checkpoint is published
 * with k cosignatures by distinct authorities, so at least k - 1 others must have one (this
 * authority's own comes from its signer). */
static int check_cosigners(struct settings_reader *state, const struct settings_node *node,
                           const struct config *config)
{
	size_t others = 0;
	for (size_t i = 0; i < config->member_count; i++) {
		const struct config_member *m = &config->members[i];
		for (size_t j = 0; j < i; j++) {
			const struct config_member *o = &config->members[j];
			if ((m->has_cosigner && o->has_cosigner &&
			     memcmp(m->cosigner.public_key, o->cosigner.public_key,
			            sizeof m->cosigner.public_key) == 0) ||
			    (m->has_log_key && o->has_log_key &&
			     memcmp(m->log_key.public_key, o->log_key.public_key,
			            sizeof m->log_key.public_key) == 0))
				return settings_fail(
				    state, node->line,
				    "authorities '%.64s' and '%.64s' have the same log or cosignature key",
				    o->name, m->name);
		}
		if (m->has_cosigner && strcmp(m->name, config->authority_name) != 0)
			others++;
	}
	if (others > 0 && others + 1 < config->threshold)
		return settings_fail(
		    state, node->line,
		    "authorities: %zu other members have a cosignature_key; a checkpoint needs "
		    "%zu cosignatures, so at least %zu must",
		    others, config->threshold, config->threshold - 1);
	return 0;
}

/* The authority set: every member's name, pinned identity key and base URL, and k. */
static int parse_member(struct settings_reader *state, const struct settings_node *item,
                        struct config *config, struct config_member *member)
{
	static const char *const keys[] = {"name", "identity", "url", "log_key", "cosignature_key", NULL};
	const struct settings_node *name, *identity, *url;
	char identity_text[NOTE_VERIFIER_KEY_MAX + 1];
	int rc;
	if ((rc = settings_expect_kind(state, item, SETTINGS_MAPPING, "an authority")) ||
	    (rc = settings_check_keys(state, item, keys, "authority")) ||
	    (rc = settings_require(state, item, "name", "authority", &name)) ||
	    (rc = settings_require(state, item, "identity", "authority", &identity)) ||
	    (rc = settings_require(state, item, "url", "authority", &url)) ||
	    (rc = settings_string(state, name, "authority name", member->name, sizeof member->name)) ||
	    (rc = settings_string(state, identity, "authority identity", identity_text,
	                          sizeof identity_text)) ||
	    (rc = settings_string(state, url, "authority url", member->url, sizeof member->url)))
		return rc;
	if (!names_key_name_is_ascii(member->name, strlen(member->name)))
		return settings_fail(state, name->line, "authority name '%.64s' is not a valid key name",
		                     member->name);
	if (note_verifier_parse(identity_text, strlen(identity_text), &member->identity) != 0 ||
	    member->identity.type != NOTE_KEY_TYPE_ED25519)
		return settings_fail(state, identity->line,
		                     "authority identity is not an Ed25519 verifier key");
	if (strcmp(member->identity.name, member->name) != 0)
		return settings_fail(state, identity->line,
		                     "authority identity key is named '%.64s', not '%.64s'",
		                     member->identity.name, member->name);
	if (strncmp(member->url, "http://", 7) != 0 && strncmp(member->url, "https://", 8) != 0)
		return settings_fail(state, url->line, "authority url must begin with http:// or https://");
	size_t len = strlen(member->url);
	if (member->url[len - 1] == '/')
		return settings_fail(state, url->line, "authority url must not end with '/'");
	if ((rc = parse_log_key(state, item, "log_key", "authority log_key", NOTE_KEY_TYPE_ED25519,
	                        &member->log_key, &member->has_log_key)) ||
	    (rc = parse_log_key(state, item, "cosignature_key", "authority cosignature_key",
	                        NOTE_KEY_TYPE_COSIGNATURE_V1, &member->cosigner, &member->has_cosigner)) ||
	    (rc = check_member_log_keys(state, item, config, member)))
		return rc;
	return 0;
}

int config_parse_authorities(struct settings_reader *state, const struct settings_node *node,
                             struct config *config)
{
	static const char *const keys[] = {"threshold",
	                                   "members",
	                                   "timeout_seconds",
	                                   "connect_timeout_seconds",
	                                   "retries",
	                                   "connections_per_peer",
	                                   "witnesses",
	                                   "ca_file",
	                                   NULL};
	const struct settings_node *threshold, *members, *v;
	uint64_t k;
	int rc;
	if ((rc = settings_expect_kind(state, node, SETTINGS_MAPPING, "authorities")) ||
	    (rc = settings_check_keys(state, node, keys, "authorities")) ||
	    (rc = settings_require(state, node, "threshold", "authorities", &threshold)) ||
	    (rc = settings_require(state, node, "members", "authorities", &members)) ||
	    (rc = settings_expect_kind(state, members, SETTINGS_SEQUENCE, "authorities.members")))
		return rc;
	if (members->count == 0 || members->count > CONFIG_MAX_MEMBERS)
		return settings_fail(state, members->line, "authorities.members: 1 to %d members",
		                     CONFIG_MAX_MEMBERS);
	config->members = calloc(members->count, sizeof *config->members);
	if (!config->members)
		return DIRAUTH_ERR_NOMEM;
	for (size_t i = 0; i < members->count; i++) {
		struct config_member *member = &config->members[i];
		if ((rc = parse_member(state, members->children[i], config, member)))
			return rc;
		for (size_t j = 0; j < i; j++) {
			const struct config_member *other = &config->members[j];
			if (strcmp(other->name, member->name) == 0)
				return settings_fail(state, members->children[i]->line,
				                     "authority '%.64s' is listed twice", member->name);
			if (memcmp(other->identity.public_key, member->identity.public_key,
			           sizeof member->identity.public_key) == 0)
				return settings_fail(
				    state, members->children[i]->line,
				    "authorities '%.64s' and '%.64s' have the same identity key", other->name,
				    member->name);
		}
		config->member_count = i + 1;
	}
	if ((rc = settings_u64(state, threshold, "authorities.threshold", 1, members->count, &k)))
		return rc;
	/* A majority: two disjoint groups of authorities can never both publish for one epoch. */
	if (2 * k <= members->count)
		return settings_fail(state, threshold->line,
		                     "authorities.threshold %llu is not a majority of %zu authorities",
		                     (unsigned long long)k, members->count);
	config->threshold = (size_t)k;
	const struct {
		const char *key;
		uint64_t min, max;
		unsigned *out;
	} numbers[] = {{"timeout_seconds", 1, 600, &config->peers.timeout_seconds},
	               {"connect_timeout_seconds", 1, 600, &config->peers.connect_timeout_seconds},
	               {"retries", 0, 10, &config->peers.retries},
	               {"connections_per_peer", 1, 16, &config->peers.connections_per_peer}};
	for (size_t i = 0; i < sizeof numbers / sizeof numbers[0]; i++) {
		char what[64];
		snprintf(what, sizeof what, "authorities.%s", numbers[i].key);
		if ((v = settings_lookup(node, numbers[i].key)) &&
		    (rc = settings_unsigned(state, v, what, numbers[i].min, numbers[i].max, numbers[i].out)))
			return rc;
	}
	if ((rc = check_cosigners(state, members, config)))
		return rc;
	if ((v = settings_lookup(node, "witnesses")) && (rc = parse_witnesses(state, v, config)))
		return rc;
	if ((v = settings_lookup(node, "ca_file"))) {
		if ((rc = settings_path(state, v, "authorities.ca_file", config->peers.ca_file)))
			return rc;
		config->peers.ca_file_line = v->line;
	}
	return 0;
}

/* authorities.ca_file, if given, is a regular file this process can read: a CA file that
 * cannot be read would only show at the first request to a peer, as a TLS failure. */
int config_check_ca_file(struct settings_reader *state, const struct config *config)
{
	const char *path = config->peers.ca_file;
	if (!path[0])
		return 0;
	/* O_NONBLOCK: a FIFO opens at once (and is refused below) instead of waiting for a writer. */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return settings_fail(state, config->peers.ca_file_line, "authorities.ca_file %.200s: %s",
		                     path, strerror(errno));
	struct stat st;
	int regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
	uint8_t byte;
	ssize_t n = regular ? read(fd, &byte, 1) : -1;
	int saved = errno;
	close(fd);
	if (!regular)
		return settings_fail(state, config->peers.ca_file_line,
		                     "authorities.ca_file %.200s is not a regular file", path);
	if (n < 0)
		return settings_fail(state, config->peers.ca_file_line, "authorities.ca_file %.200s: %s",
		                     path, strerror(saved));
	return 0;
}

/* Without an authorities section, this authority alone is the set (n = k = 1); with one, it must
 * be a member. */
int config_set_authority_set(struct settings_reader *state, struct config *config)
{
	if (config->member_count == 0) {
		config->members = calloc(1, sizeof *config->members);
		if (!config->members)
			return DIRAUTH_ERR_NOMEM;
		snprintf(config->members[0].name, sizeof config->members[0].name, "%s",
		         config->authority_name);
		config->member_count = 1;
		config->threshold = 1;
		config->self_index = 0;
		return 0;
	}
	for (size_t i = 0; i < config->member_count; i++) {
		if (strcmp(config->members[i].name, config->authority_name) == 0) {
			config->self_index = i;
			return 0;
		}
	}
	return settings_fail(state, 0, "authority.name '%.64s' is not one of authorities.members",
	                     config->authority_name);
}

/* Whether each window of a round holds the peer operations that run in it, each at its full
 * timeout (docs/operating.md, "Sizing the windows"): the vote's push in the vote window; the
 * pull of missing votes, the fetch of missing notes and the signature's push in the signature
 * window; the pull of missing signatures between the signature deadline and the epoch's start. A
 * file clock's seconds (tests, demos) need not be real seconds, so its windows are not judged
 * against timeouts in real seconds. */
int config_check_windows(struct settings_reader *state, const struct config *config)
{
	const struct epoch_schedule *s = &config->epoch;
	uint64_t timeout = config->peers.timeout_seconds;
	if (config->member_count < 2 || config->clock_source == CONFIG_CLOCK_FILE)
		return 0;
	if (config->peers.connect_timeout_seconds > timeout)
		return settings_fail(
		    state, 0,
		    "authorities: connect_timeout_seconds (%u) is longer than timeout_seconds "
		    "(%u), which bounds the whole request",
		    config->peers.connect_timeout_seconds, config->peers.timeout_seconds);
	if (s->vote < timeout)
		return settings_fail(
		    state, 0,
		    "epoch: vote_seconds (%llu) cannot hold the push of a vote, which may take "
		    "authorities.timeout_seconds (%llu s) with its retries",
		    (unsigned long long)s->vote, (unsigned long long)timeout);
	if (s->signature < CONFIG_SIGNATURE_WINDOW_OPERATIONS * timeout)
		return settings_fail(state, 0,
		                     "epoch: signature_seconds (%llu) cannot hold the pull of missing votes, "
		                     "the fetch of missing notes and the push of the signature, which may "
		                     "take %d x authorities.timeout_seconds (%llu s)",
		                     (unsigned long long)s->signature, CONFIG_SIGNATURE_WINDOW_OPERATIONS,
		                     (unsigned long long)(CONFIG_SIGNATURE_WINDOW_OPERATIONS * timeout));
	if (s->prepare - s->vote - s->signature < timeout)
		return settings_fail(
		    state, 0,
		    "epoch: prepare_seconds - vote_seconds - signature_seconds (%llu) cannot "
		    "hold the pull of missing signatures before the epoch starts, which may "
		    "take authorities.timeout_seconds (%llu s)",
		    (unsigned long long)(s->prepare - s->vote - s->signature), (unsigned long long)timeout);
	return 0;
}
