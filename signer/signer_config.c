/*
 * signer_config.c: reads dirauth-signer's YAML configuration (signer_config.h).
 *
 * The signer guards the keys, so its configuration is read as strictly as dirauthd's: one
 * mapping of known keys, each of the type and range it expects, with the line of the first
 * problem reported. Paths are checked here only for form (the socket path must fit a UNIX
 * socket address); whether the files are safe to use is the service's decision at open. The
 * namespaces are read with dirauthd's rules for names and origins and its ranges for the epoch
 * schedule, so that a signer configuration copied from dirauthd's is never refused here.
 */
#include "signer/signer_config.h"

#include "base/error.h"
#include "schema/lines.h"
#include "schema/names.h"
#include "schedule/schedule.h"

#include <stdlib.h>
#include <string.h>

static int parse_clock(struct settings_reader *state, const struct settings_node *node,
                       struct signer_config *config)
{
	int is_file = 0;
	int rc = settings_clock(state, node, &is_file, config->clock_path);
	if (rc == 0)
		config->clock_source = is_file ? SIGNER_CONFIG_CLOCK_FILE : SIGNER_CONFIG_CLOCK_SYSTEM;
	return rc;
}

static int parse_certificates(struct settings_reader *state, const struct settings_node *node,
                              struct signer_config *config)
{
	int rc = settings_expect_kind(state, node, SETTINGS_SEQUENCE, "certificates");
	if (rc)
		return rc;
	if (node->count == 0)
		return settings_fail(
		    state, node->line,
		    "certificates: at least one (the signing key's certificate) is required");
	if (node->count > SIGNER_CONFIG_MAX_CERTIFICATES)
		return settings_fail(state, node->children[SIGNER_CONFIG_MAX_CERTIFICATES]->line,
		                     "certificates: at most %d", SIGNER_CONFIG_MAX_CERTIFICATES);
	for (size_t i = 0; i < node->count; i++) {
		if ((rc = settings_expect_kind(state, node->children[i], SETTINGS_SCALAR,
		                               "a certificate path")) ||
		    (rc = settings_path(state, node->children[i], "certificate",
		                        config->certificate_paths[i])))
			return rc;
		config->certificate_count = i + 1;
	}
	return 0;
}

/* One namespace: its name and origin as in dirauthd's namespaces, its schedule as in dirauthd's
 * epoch section. */
static int parse_namespace(struct settings_reader *state, const struct settings_node *item,
                           struct signer_config *config, size_t index)
{
	static const char *const keys[] = {
	    "name", "origin", "genesis", "length_seconds", "validity_epochs", "prepare_seconds", NULL};
	const struct settings_node *name, *origin, *genesis, *length, *validity, *prepare;
	struct signer_namespace *ns = &config->namespaces[index];
	int rc;
	if ((rc = settings_expect_kind(state, item, SETTINGS_MAPPING, "a namespace")) ||
	    (rc = settings_check_keys(state, item, keys, "namespace")) ||
	    (rc = settings_require(state, item, "name", "namespace", &name)) ||
	    (rc = settings_require(state, item, "origin", "namespace", &origin)) ||
	    (rc = settings_require(state, item, "genesis", "namespace", &genesis)) ||
	    (rc = settings_require(state, item, "length_seconds", "namespace", &length)) ||
	    (rc = settings_require(state, item, "validity_epochs", "namespace", &validity)) ||
	    (rc = settings_string(state, name, "namespace name", ns->name, sizeof(ns->name))) ||
	    (rc = settings_string(state, origin, "namespace origin", ns->origin, sizeof(ns->origin))))
		return rc;
	struct text_span span = {ns->name, strlen(ns->name)};
	if (!text_is_name(span, NAMESPACE_NAME_MAX))
		return settings_fail(state, name->line, "namespace name '%.64s' is not [a-z0-9-] (inner '-')",
		                     ns->name);
	if (!names_origin_is_valid(ns->origin, strlen(ns->origin)))
		return settings_fail(state, origin->line,
		                     "namespace origin must be printable ASCII without spaces or '+'");
	if ((rc = settings_u64(state, genesis, "namespace genesis", 0, SCHEDULE_GENESIS_MAX,
	                       &ns->schedule.genesis)) ||
	    (rc = settings_u64(state, length, "namespace length_seconds", 1, SCHEDULE_LENGTH_MAX,
	                       &ns->schedule.length)) ||
	    (rc = settings_u64(state, validity, "namespace validity_epochs", 1, SCHEDULE_VALIDITY_MAX,
	                       &ns->schedule.validity_epochs)))
		return rc;
	/* Several authorities prepare an epoch's snapshot before it begins (dirauthd's
	 * epoch.prepare_seconds): the signer then signs its vote and header that much early. */
	if ((prepare = settings_lookup(item, "prepare_seconds")) != NULL &&
	    (rc = settings_u64(state, prepare, "namespace prepare_seconds", 0, ns->schedule.length - 1,
	                       &ns->schedule.prepare)))
		return rc;
	for (size_t j = 0; j < index; j++) {
		if (strcmp(config->namespaces[j].name, ns->name) == 0)
			return settings_fail(state, name->line, "duplicate namespace '%s'", ns->name);
		if (strcmp(config->namespaces[j].origin, ns->origin) == 0)
			return settings_fail(state, origin->line, "duplicate namespace origin '%.64s'",
			                     ns->origin);
	}
	return 0;
}

static int parse_namespaces(struct settings_reader *state, const struct settings_node *node,
                            struct signer_config *config)
{
	int rc = settings_expect_kind(state, node, SETTINGS_SEQUENCE, "namespaces");
	if (rc)
		return rc;
	if (node->count == 0)
		return settings_fail(state, node->line, "namespaces: at least one namespace is required");
	if (node->count > SIGNER_CONFIG_MAX_NAMESPACES)
		return settings_fail(state, node->children[SIGNER_CONFIG_MAX_NAMESPACES]->line,
		                     "namespaces: at most %d", SIGNER_CONFIG_MAX_NAMESPACES);
	for (size_t i = 0; i < node->count; i++) {
		if ((rc = parse_namespace(state, node->children[i], config, i)))
			return rc;
		config->namespace_count = i + 1;
	}
	return 0;
}

static int parse_root(struct settings_reader *state, const struct settings_node *root,
                      struct signer_config *config)
{
	static const char *const keys[] = {
	    "authority",          "socket",          "allowed_uid",     "state_dir", "signing_key",
	    "certificates",       "log_key",         "cosignature_key", "audit_log", "clock",
	    "clock_skew_seconds", "max_connections", "namespaces",      NULL};
	const struct settings_node *v;
	uint64_t uid;
	int rc;

	if ((rc = settings_expect_kind(state, root, SETTINGS_MAPPING, "the configuration")) ||
	    (rc = settings_check_keys(state, root, keys, "configuration")))
		return rc;
	if ((rc = settings_require(state, root, "authority", "configuration", &v)) ||
	    (rc = settings_string(state, v, "authority", config->authority, sizeof(config->authority))))
		return rc;
	if (!note_name_is_valid(config->authority, strlen(config->authority)))
		return settings_fail(state, v->line, "authority is not a valid key name");
	if ((rc = settings_require(state, root, "socket", "configuration", &v)) ||
	    (rc = settings_path(state, v, "socket", config->socket_path)))
		return rc;
	if (strlen(config->socket_path) > SIGNER_CONFIG_SOCKET_MAX)
		return settings_fail(state, v->line, "socket path is longer than %d bytes once resolved",
		                     SIGNER_CONFIG_SOCKET_MAX);
	if ((rc = settings_require(state, root, "allowed_uid", "configuration", &v)) ||
	    (rc = settings_u64(state, v, "allowed_uid", 0, UINT32_MAX - 1, &uid)))
		return rc;
	config->allowed_uid = (uid_t)uid;
	if ((rc = settings_require(state, root, "state_dir", "configuration", &v)) ||
	    (rc = settings_path(state, v, "state_dir", config->state_dir)))
		return rc;
	if ((rc = settings_require(state, root, "signing_key", "configuration", &v)) ||
	    (rc = settings_path(state, v, "signing_key", config->signing_key_path)))
		return rc;
	if ((rc = settings_require(state, root, "certificates", "configuration", &v)) ||
	    (rc = parse_certificates(state, v, config)))
		return rc;
	if ((v = settings_lookup(root, "log_key")) &&
	    (rc = settings_path(state, v, "log_key", config->log_key_path)))
		return rc;
	if ((v = settings_lookup(root, "cosignature_key")) &&
	    (rc = settings_path(state, v, "cosignature_key", config->cosignature_key_path)))
		return rc;
	if ((v = settings_lookup(root, "audit_log")) &&
	    (rc = settings_path(state, v, "audit_log", config->audit_log_path)))
		return rc;
	if ((v = settings_lookup(root, "clock")) && (rc = parse_clock(state, v, config)))
		return rc;
	config->clock_skew_seconds = 300;
	if ((v = settings_lookup(root, "clock_skew_seconds")) &&
	    (rc = settings_u64(state, v, "clock_skew_seconds", 1, 86400, &config->clock_skew_seconds)))
		return rc;
	config->max_connections = SIGNER_LISTENER_DEFAULT_CONNECTIONS;
	if ((v = settings_lookup(root, "max_connections")) &&
	    (rc = settings_size(state, v, "max_connections", 1, SIGNER_LISTENER_MAX_CONNECTIONS,
	                        &config->max_connections)))
		return rc;
	if ((rc = settings_require(state, root, "namespaces", "configuration", &v)) ||
	    (rc = parse_namespaces(state, v, config)))
		return rc;
	return 0;
}

int signer_config_parse(const uint8_t *buf, size_t len, const char *base_dir, struct signer_config **out,
                        struct settings_error *error)
{
	struct settings_reader state = {.error = error, .base_dir = base_dir ? base_dir : "."};
	struct settings_node *root = NULL;
	struct signer_config *config = NULL;
	int rc;

	*out = NULL;
	if (error) {
		error->line = 0;
		error->message[0] = '\0';
	}
	if ((rc = settings_read(&state, buf, len, &root)))
		goto cleanup;
	config = calloc(1, sizeof(*config));
	if (!config) {
		rc = DIRAUTH_ERR_NOMEM;
		goto cleanup;
	}
	config->clock_source = SIGNER_CONFIG_CLOCK_SYSTEM;
	if ((rc = parse_root(&state, root, config)))
		goto cleanup;
	*out = config;
	config = NULL;
cleanup:
	signer_config_free(config);
	settings_free(root);
	return rc;
}

int signer_config_load(const char *path, struct signer_config **out, struct settings_error *error)
{
	uint8_t *buf = NULL;
	char *base_dir = NULL;
	size_t len = 0;
	int rc;

	*out = NULL;
	if (error) {
		error->line = 0;
		error->message[0] = '\0';
	}
	rc = settings_load(path, &buf, &len, &base_dir, error);
	if (rc == 0)
		rc = signer_config_parse(buf, len, base_dir, out, error);
	free(buf);
	free(base_dir);
	return rc;
}

void signer_config_free(struct signer_config *config)
{
	free(config);
}
