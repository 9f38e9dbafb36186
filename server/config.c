/*
 * config.c: the YAML configuration reader.
 *
 * Two passes. The first turns libyaml's event stream into a small tree of scalars, mappings
 * and sequences, refusing what a configuration never needs and what makes YAML dangerous to
 * read: anchors and aliases (exponential expansion), explicit tags, more than one document,
 * nesting past CONFIG_MAX_DEPTH, more than CONFIG_MAX_NODES nodes. The event API is used
 * rather than libyaml's document loader so that the depth bound is enforced while reading,
 * before memory is spent on a hostile file. The second pass walks the tree against the schema,
 * one function per section, and fills struct config; every refusal carries the line of the
 * node at fault.
 */
#include "config.h"

#include "encoding.h"
#include "error.h"
#include "lines.h"

#include <yaml.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum tree_kind { TREE_SCALAR, TREE_MAPPING, TREE_SEQUENCE };

struct tree_node {
	enum tree_kind kind;
	size_t line;
	int plain;  /* a scalar written without quotes or block style */
	char *text; /* scalars: NUL-terminated */
	size_t text_len;
	struct tree_node **children; /* mappings: key, value, key, value, ... */
	size_t count;
	size_t cap;
};

struct parse_state {
	struct config_error *error;
	const char *base_dir;
	size_t node_count;
};

static int fail(struct parse_state *state, size_t line, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(struct parse_state *state, size_t line, const char *format, ...)
{
	if (state->error) {
		va_list args;
		va_start(args, format);
		state->error->line = line;
		vsnprintf(state->error->message, sizeof state->error->message, format, args);
		va_end(args);
	}
	return DIRAUTH_ERR_CONFIG;
}

static void tree_free(struct tree_node *node)
{
	if (!node)
		return;
	for (size_t i = 0; i < node->count; i++)
		tree_free(node->children[i]);
	free(node->children);
	free(node->text);
	free(node);
}

static int tree_add_child(struct tree_node *parent, struct tree_node *child)
{
	if (parent->count == parent->cap) {
		size_t cap = parent->cap ? parent->cap * 2 : 8;
		struct tree_node **children = realloc(parent->children, cap * sizeof *children);
		if (!children)
			return DIRAUTH_ERR_NOMEM;
		parent->children = children;
		parent->cap = cap;
	}
	parent->children[parent->count++] = child;
	return 0;
}

static struct tree_node *tree_new(struct parse_state *state, enum tree_kind kind, const yaml_mark_t *mark)
{
	struct tree_node *node = calloc(1, sizeof *node);
	if (!node)
		return NULL;
	node->kind = kind;
	node->line = mark->line + 1;
	state->node_count++;
	return node;
}

static const char *yaml_problem(const yaml_parser_t *parser)
{
	return parser->problem ? parser->problem : "YAML syntax error";
}

/* Reads the event stream into a tree. *root gets the document's root node. */
static int tree_read(struct parse_state *state, const uint8_t *buf, size_t len, struct tree_node **root)
{
	yaml_parser_t parser;
	yaml_event_t event;
	struct tree_node *stack[CONFIG_MAX_DEPTH + 1];
	size_t depth = 0;
	struct tree_node *top = NULL;
	int documents = 0, done = 0, rc = 0;

	*root = NULL;
	if (!yaml_parser_initialize(&parser))
		return DIRAUTH_ERR_NOMEM;
	yaml_parser_set_input_string(&parser, buf, len);
	while (!done) {
		if (!yaml_parser_parse(&parser, &event)) {
			size_t line = parser.problem_mark.line + 1;
			if (parser.error == YAML_MEMORY_ERROR)
				rc = DIRAUTH_ERR_NOMEM;
			else
				rc = fail(state, line, "%s", yaml_problem(&parser));
			break;
		}
		size_t line = event.start_mark.line + 1;
		struct tree_node *node = NULL;
		const char *anchor = NULL, *tag = NULL;
		switch (event.type) {
		case YAML_STREAM_END_EVENT:
			done = 1;
			break;
		case YAML_DOCUMENT_START_EVENT:
			if (++documents > 1)
				rc = fail(state, line, "only one YAML document is allowed");
			break;
		case YAML_ALIAS_EVENT:
			rc = fail(state, line, "YAML aliases are not allowed");
			break;
		case YAML_SCALAR_EVENT:
		case YAML_MAPPING_START_EVENT:
		case YAML_SEQUENCE_START_EVENT:
			if (event.type == YAML_SCALAR_EVENT) {
				anchor = (const char *)event.data.scalar.anchor;
				tag = (const char *)event.data.scalar.tag;
			} else if (event.type == YAML_MAPPING_START_EVENT) {
				anchor = (const char *)event.data.mapping_start.anchor;
				tag = (const char *)event.data.mapping_start.tag;
			} else {
				anchor = (const char *)event.data.sequence_start.anchor;
				tag = (const char *)event.data.sequence_start.tag;
			}
			if (anchor) {
				rc = fail(state, line, "YAML anchors are not allowed");
				break;
			}
			if (tag) {
				rc = fail(state, line, "explicit YAML tags are not allowed");
				break;
			}
			if (state->node_count >= CONFIG_MAX_NODES) {
				rc = fail(state, line, "too many YAML nodes (at most %d)", CONFIG_MAX_NODES);
				break;
			}
			if (event.type == YAML_SCALAR_EVENT) {
				node = tree_new(state, TREE_SCALAR, &event.start_mark);
				if (!node) {
					rc = DIRAUTH_ERR_NOMEM;
					break;
				}
				node->text = malloc(event.data.scalar.length + 1);
				if (!node->text) {
					free(node);
					rc = DIRAUTH_ERR_NOMEM;
					break;
				}
				memcpy(node->text, event.data.scalar.value, event.data.scalar.length);
				node->text[event.data.scalar.length] = 0;
				node->text_len = event.data.scalar.length;
				node->plain = event.data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
			} else {
				if (depth >= CONFIG_MAX_DEPTH) {
					rc = fail(state, line, "nesting deeper than %d levels",
					          CONFIG_MAX_DEPTH);
					break;
				}
				node = tree_new(state,
				                event.type == YAML_MAPPING_START_EVENT ? TREE_MAPPING
				                                                       : TREE_SEQUENCE,
				                &event.start_mark);
				if (!node) {
					rc = DIRAUTH_ERR_NOMEM;
					break;
				}
			}
			if (depth == 0) {
				if (top) {
					tree_free(node);
					rc = fail(state, line, "only one YAML document is allowed");
					break;
				}
				top = node;
			} else if ((rc = tree_add_child(stack[depth - 1], node)) != 0) {
				tree_free(node);
				break;
			}
			if (node->kind != TREE_SCALAR)
				stack[depth++] = node;
			break;
		case YAML_MAPPING_END_EVENT:
		case YAML_SEQUENCE_END_EVENT:
			if (depth == 0)
				rc = fail(state, line, "unbalanced YAML structure");
			else
				depth--;
			break;
		default:
			break;
		}
		yaml_event_delete(&event);
		if (rc)
			break;
	}
	yaml_parser_delete(&parser);
	if (rc) {
		tree_free(top);
		return rc;
	}
	if (!top)
		return fail(state, 1, "the configuration is empty");
	*root = top;
	return 0;
}

/* ---- schema helpers ---- */

static const char *kind_name(enum tree_kind kind)
{
	switch (kind) {
	case TREE_SCALAR:
		return "a scalar";
	case TREE_MAPPING:
		return "a mapping";
	default:
		return "a sequence";
	}
}

static int expect_kind(struct parse_state *state, const struct tree_node *node, enum tree_kind kind,
                       const char *what)
{
	if (node->kind != kind)
		return fail(state, node->line, "%s must be %s, not %s", what, kind_name(kind),
		            kind_name(node->kind));
	return 0;
}

/* Checks that every key of mapping is a scalar in allowed (NULL-terminated) and appears once. */
static int check_keys(struct parse_state *state, const struct tree_node *mapping, const char *const *allowed,
                      const char *what)
{
	for (size_t i = 0; i + 1 < mapping->count; i += 2) {
		const struct tree_node *key = mapping->children[i];
		if (key->kind != TREE_SCALAR)
			return fail(state, key->line, "%s: keys must be scalars", what);
		int known = 0;
		for (size_t k = 0; allowed[k]; k++)
			if (strcmp(allowed[k], key->text) == 0 && strlen(allowed[k]) == key->text_len)
				known = 1;
		if (!known)
			return fail(state, key->line, "%s: unknown key '%.64s'", what, key->text);
		for (size_t j = 0; j < i; j += 2)
			if (strcmp(mapping->children[j]->text, key->text) == 0)
				return fail(state, key->line, "%s: duplicate key '%.64s'", what, key->text);
	}
	return 0;
}

static const struct tree_node *lookup(const struct tree_node *mapping, const char *name)
{
	for (size_t i = 0; i + 1 < mapping->count; i += 2)
		if (strcmp(mapping->children[i]->text, name) == 0)
			return mapping->children[i + 1];
	return NULL;
}

static int require(struct parse_state *state, const struct tree_node *mapping, const char *name,
                   const char *what, const struct tree_node **out)
{
	*out = lookup(mapping, name);
	if (!*out)
		return fail(state, mapping->line, "%s: missing required key '%s'", what, name);
	return 0;
}

static int scalar_string(struct parse_state *state, const struct tree_node *node, const char *what, char *out,
                         size_t cap)
{
	int rc = expect_kind(state, node, TREE_SCALAR, what);
	if (rc)
		return rc;
	if (node->text_len == 0)
		return fail(state, node->line, "%s must not be empty", what);
	if (strlen(node->text) != node->text_len)
		return fail(state, node->line, "%s must not contain NUL", what);
	if (node->text_len >= cap)
		return fail(state, node->line, "%s is too long (at most %zu bytes)", what, cap - 1);
	memcpy(out, node->text, node->text_len + 1);
	return 0;
}

static int scalar_u64(struct parse_state *state, const struct tree_node *node, const char *what, uint64_t min,
                      uint64_t max, uint64_t *out)
{
	int rc = expect_kind(state, node, TREE_SCALAR, what);
	if (rc)
		return rc;
	uint64_t value;
	if (!node->plain || decimal_parse(node->text, node->text_len, &value) != 0)
		return fail(state, node->line, "%s must be an unsigned decimal integer", what);
	if (value < min || value > max)
		return fail(state, node->line, "%s must be between %llu and %llu", what,
		            (unsigned long long)min, (unsigned long long)max);
	*out = value;
	return 0;
}

static int scalar_size(struct parse_state *state, const struct tree_node *node, const char *what,
                       uint64_t min, uint64_t max, size_t *out)
{
	uint64_t value;
	int rc = scalar_u64(state, node, what, min, max, &value);
	if (rc == 0)
		*out = (size_t)value;
	return rc;
}

static int scalar_unsigned(struct parse_state *state, const struct tree_node *node, const char *what,
                           uint64_t min, uint64_t max, unsigned *out)
{
	uint64_t value;
	int rc = scalar_u64(state, node, what, min, max, &value);
	if (rc == 0)
		*out = (unsigned)value;
	return rc;
}

/* Resolves a path from the configuration against the configuration's directory. */
static int scalar_path(struct parse_state *state, const struct tree_node *node, const char *what, char *out)
{
	char path[CONFIG_PATH_MAX];
	int rc = scalar_string(state, node, what, path, sizeof path);
	if (rc)
		return rc;
	int n;
	if (path[0] == '/')
		n = snprintf(out, CONFIG_PATH_MAX, "%s", path);
	else
		n = snprintf(out, CONFIG_PATH_MAX, "%s/%s", state->base_dir, path);
	if (n < 0 || n >= CONFIG_PATH_MAX)
		return fail(state, node->line, "%s is too long once resolved", what);
	return 0;
}

/* ---- sections ---- */

static int parse_authority(struct parse_state *state, const struct tree_node *node, struct config *config)
{
	static const char *const keys[] = {"name", "signing_key", NULL};
	const struct tree_node *name, *key;
	int rc;
	if ((rc = expect_kind(state, node, TREE_MAPPING, "authority")) ||
	    (rc = check_keys(state, node, keys, "authority")) ||
	    (rc = require(state, node, "name", "authority", &name)) ||
	    (rc = require(state, node, "signing_key", "authority", &key)) ||
	    (rc = scalar_string(state, name, "authority.name", config->authority_name,
	                        sizeof config->authority_name)))
		return rc;
	if (!note_name_is_valid(config->authority_name, strlen(config->authority_name)))
		return fail(state, name->line, "authority.name is not a valid key name");
	return scalar_path(state, key, "authority.signing_key", config->signing_key_path);
}

static int parse_listen(struct parse_state *state, const struct tree_node *node, struct config *config)
{
	static const char *const keys[] = {"address", "port", NULL};
	const struct tree_node *address, *port;
	uint64_t port_value;
	int rc;
	if ((rc = expect_kind(state, node, TREE_MAPPING, "listen")) ||
	    (rc = check_keys(state, node, keys, "listen")) ||
	    (rc = require(state, node, "address", "listen", &address)) ||
	    (rc = require(state, node, "port", "listen", &port)) ||
	    (rc = scalar_string(state, address, "listen.address", config->listen_address,
	                        sizeof config->listen_address)) ||
	    (rc = scalar_u64(state, port, "listen.port", 1, 65535, &port_value)))
		return rc;
	uint8_t scratch[16];
	if (inet_pton(AF_INET, config->listen_address, scratch) != 1 &&
	    inet_pton(AF_INET6, config->listen_address, scratch) != 1)
		return fail(state, address->line, "listen.address must be an IPv4 or IPv6 address literal");
	config->listen_port = (uint16_t)port_value;
	return 0;
}

static int parse_epoch(struct parse_state *state, const struct tree_node *node, struct config *config)
{
	static const char *const keys[] = {"length_seconds", "genesis", "validity_epochs", NULL};
	const struct tree_node *length, *genesis, *validity;
	int rc;
	if ((rc = expect_kind(state, node, TREE_MAPPING, "epoch")) ||
	    (rc = check_keys(state, node, keys, "epoch")) ||
	    (rc = require(state, node, "length_seconds", "epoch", &length)) ||
	    (rc = require(state, node, "genesis", "epoch", &genesis)) ||
	    (rc = require(state, node, "validity_epochs", "epoch", &validity)) ||
	    (rc = scalar_u64(state, length, "epoch.length_seconds", 1, 7 * 86400,
	                     &config->epoch_length_seconds)) ||
	    (rc =
	         scalar_u64(state, genesis, "epoch.genesis", 0, (uint64_t)1 << 40, &config->epoch_genesis)) ||
	    (rc = scalar_u64(state, validity, "epoch.validity_epochs", 1, 1000,
	                     &config->epoch_validity_epochs)))
		return rc;
	return 0;
}

static int parse_clock(struct parse_state *state, const struct tree_node *node, struct config *config)
{
	static const char *const keys[] = {"source", "path", NULL};
	const struct tree_node *source, *path;
	char source_text[16];
	int rc;
	if ((rc = expect_kind(state, node, TREE_MAPPING, "clock")) ||
	    (rc = check_keys(state, node, keys, "clock")) ||
	    (rc = require(state, node, "source", "clock", &source)) ||
	    (rc = expect_kind(state, source, TREE_SCALAR, "clock.source")))
		return rc;
	if (source->text_len >= sizeof source_text)
		return fail(state, source->line, "clock.source must be 'system' or 'file'");
	memcpy(source_text, source->text, source->text_len + 1);
	path = lookup(node, "path");
	if (strcmp(source_text, "system") == 0) {
		if (path)
			return fail(state, path->line, "clock.path is only for source: file");
		config->clock_source = CONFIG_CLOCK_SYSTEM;
		config->clock_path[0] = 0;
		return 0;
	}
	if (strcmp(source_text, "file") != 0)
		return fail(state, source->line, "clock.source must be 'system' or 'file'");
	if (!path)
		return fail(state, node->line, "clock: missing required key 'path' for source: file");
	config->clock_source = CONFIG_CLOCK_FILE;
	return scalar_path(state, path, "clock.path", config->clock_path);
}

static int parse_namespaces(struct parse_state *state, const struct tree_node *node, struct config *config)
{
	static const char *const keys[] = {"name", "origin", NULL};
	int rc = expect_kind(state, node, TREE_SEQUENCE, "namespaces");
	if (rc)
		return rc;
	if (node->count == 0)
		return fail(state, node->line, "namespaces: at least one namespace is required");
	if (node->count > CONFIG_MAX_NAMESPACES)
		return fail(state, node->children[CONFIG_MAX_NAMESPACES]->line, "namespaces: at most %d",
		            CONFIG_MAX_NAMESPACES);
	for (size_t i = 0; i < node->count; i++) {
		const struct tree_node *item = node->children[i], *name, *origin;
		struct config_namespace *ns = &config->namespaces[i];
		if ((rc = expect_kind(state, item, TREE_MAPPING, "a namespace")) ||
		    (rc = check_keys(state, item, keys, "namespace")) ||
		    (rc = require(state, item, "name", "namespace", &name)) ||
		    (rc = require(state, item, "origin", "namespace", &origin)) ||
		    (rc = scalar_string(state, name, "namespace name", ns->name, sizeof ns->name)) ||
		    (rc = scalar_string(state, origin, "namespace origin", ns->origin, sizeof ns->origin)))
			return rc;
		struct text_span span = {ns->name, strlen(ns->name)};
		if (!text_is_name(span, NAMESPACE_NAME_MAX))
			return fail(state, name->line, "namespace name '%.64s' is not [a-z0-9-] (inner '-')",
			            ns->name);
		for (const char *p = ns->origin; *p; p++)
			if (*p <= 0x20 || *p > 0x7e || *p == '+')
				return fail(state, origin->line,
				            "namespace origin must be printable ASCII without spaces or '+'");
		for (size_t j = 0; j < i; j++) {
			if (strcmp(config->namespaces[j].name, ns->name) == 0)
				return fail(state, name->line, "duplicate namespace '%s'", ns->name);
			if (strcmp(config->namespaces[j].origin, ns->origin) == 0)
				return fail(state, origin->line, "duplicate namespace origin '%.64s'",
				            ns->origin);
		}
		config->namespace_count = i + 1;
	}
	return 0;
}

static int parse_provider(struct parse_state *state, const struct tree_node *item, struct config *config,
                          struct config_provider *provider)
{
	static const char *const keys[] = {"key", "namespaces", "classes", NULL};
	const struct tree_node *key, *namespaces, *classes;
	char key_text[NOTE_VERIFIER_KEY_MAX + 1];
	int rc;
	if ((rc = expect_kind(state, item, TREE_MAPPING, "a provider")) ||
	    (rc = check_keys(state, item, keys, "provider")) ||
	    (rc = require(state, item, "key", "provider", &key)) ||
	    (rc = require(state, item, "namespaces", "provider", &namespaces)) ||
	    (rc = require(state, item, "classes", "provider", &classes)) ||
	    (rc = scalar_string(state, key, "provider key", key_text, sizeof key_text)))
		return rc;
	if (note_verifier_parse(key_text, strlen(key_text), &provider->key) != 0)
		return fail(state, key->line, "provider key is not a valid Ed25519 verifier key");
	if ((rc = expect_kind(state, namespaces, TREE_SEQUENCE, "provider namespaces")) ||
	    (rc = expect_kind(state, classes, TREE_SEQUENCE, "provider classes")))
		return rc;
	if (namespaces->count == 0)
		return fail(state, namespaces->line, "provider namespaces: at least one is required");
	if (classes->count == 0)
		return fail(state, classes->line, "provider classes: at least one is required");
	for (size_t i = 0; i < namespaces->count; i++) {
		const struct tree_node *name = namespaces->children[i];
		if ((rc = expect_kind(state, name, TREE_SCALAR, "a provider namespace")))
			return rc;
		int index = config_namespace_index(config, name->text, name->text_len);
		if (index < 0)
			return fail(state, name->line, "provider namespace '%.64s' is not configured",
			            name->text);
		uint64_t bit = (uint64_t)1 << index;
		if (provider->namespace_mask & bit)
			return fail(state, name->line, "provider namespace '%.64s' listed twice", name->text);
		provider->namespace_mask |= bit;
	}
	for (size_t i = 0; i < classes->count; i++) {
		const struct tree_node *name = classes->children[i];
		enum service_class value;
		if ((rc = expect_kind(state, name, TREE_SCALAR, "a provider class")))
			return rc;
		if (service_class_parse(name->text, name->text_len, &value) != 0)
			return fail(state, name->line, "unknown service class '%.64s'", name->text);
		uint32_t bit = (uint32_t)1 << value;
		if (provider->class_mask & bit)
			return fail(state, name->line, "service class '%.64s' listed twice", name->text);
		provider->class_mask |= bit;
	}
	return 0;
}

static int parse_providers(struct parse_state *state, const struct tree_node *node, struct config *config)
{
	int rc = expect_kind(state, node, TREE_SEQUENCE, "providers");
	if (rc)
		return rc;
	if (node->count > CONFIG_MAX_PROVIDERS)
		return fail(state, node->children[CONFIG_MAX_PROVIDERS]->line, "providers: at most %d",
		            CONFIG_MAX_PROVIDERS);
	if (node->count) {
		config->providers = calloc(node->count, sizeof *config->providers);
		if (!config->providers)
			return DIRAUTH_ERR_NOMEM;
	}
	for (size_t i = 0; i < node->count; i++) {
		struct config_provider *provider = &config->providers[i];
		if ((rc = parse_provider(state, node->children[i], config, provider)))
			return rc;
		/* The store records a service's owner by key name: two enrolled keys with one name
		 * would be one owner. */
		for (size_t j = 0; j < i; j++)
			if (strcmp(config->providers[j].key.name, provider->key.name) == 0)
				return fail(state, node->children[i]->line,
				            "duplicate provider key name '%s'", provider->key.name);
		config->provider_count = i + 1;
	}
	return 0;
}

static int parse_bounds(struct parse_state *state, const struct tree_node *node, struct config *config)
{
	static const char *const keys[] = {"registration_body",          "endpoints_per_service",
	                                   "records_per_snapshot",       "snapshot_body_compressed",
	                                   "snapshot_body_uncompressed", "clock_skew_seconds",
	                                   "max_validity_seconds",       NULL};
	struct config_bounds *b = &config->bounds;
	const struct tree_node *v;
	int rc;
	if ((rc = expect_kind(state, node, TREE_MAPPING, "bounds")) ||
	    (rc = check_keys(state, node, keys, "bounds")))
		return rc;
	if ((v = lookup(node, "registration_body")) &&
	    (rc = scalar_size(state, v, "bounds.registration_body", 256, REGISTRATION_MAX_BYTES,
	                      &b->registration_body)))
		return rc;
	if ((v = lookup(node, "endpoints_per_service")) &&
	    (rc = scalar_size(state, v, "bounds.endpoints_per_service", 1, REGISTRATION_MAX_ENDPOINTS,
	                      &b->endpoints_per_service)))
		return rc;
	if ((v = lookup(node, "records_per_snapshot")) &&
	    (rc = scalar_size(state, v, "bounds.records_per_snapshot", 1, 100000000,
	                      &b->records_per_snapshot)))
		return rc;
	if ((v = lookup(node, "snapshot_body_compressed")) &&
	    (rc = scalar_size(state, v, "bounds.snapshot_body_compressed", 1024, BUFFER_MAX - 1,
	                      &b->snapshot_body_compressed)))
		return rc;
	if ((v = lookup(node, "snapshot_body_uncompressed")) &&
	    (rc = scalar_size(state, v, "bounds.snapshot_body_uncompressed", 1024, BUFFER_MAX - 1,
	                      &b->snapshot_body_uncompressed)))
		return rc;
	if ((v = lookup(node, "clock_skew_seconds")) &&
	    (rc = scalar_u64(state, v, "bounds.clock_skew_seconds", 0, 86400, &b->clock_skew_seconds)))
		return rc;
	if ((v = lookup(node, "max_validity_seconds")) &&
	    (rc = scalar_u64(state, v, "bounds.max_validity_seconds", 1, 366 * 86400,
	                     &b->max_validity_seconds)))
		return rc;
	return 0;
}

static int parse_http(struct parse_state *state, const struct tree_node *node, struct config *config)
{
	static const char *const keys[] = {"threads",
	                                   "connection_timeout_seconds",
	                                   "max_connections",
	                                   "max_connections_per_ip",
	                                   "connection_memory_limit",
	                                   NULL};
	struct config_http *h = &config->http;
	const struct tree_node *v;
	int rc;
	if ((rc = expect_kind(state, node, TREE_MAPPING, "http")) ||
	    (rc = check_keys(state, node, keys, "http")))
		return rc;
	if ((v = lookup(node, "threads")) &&
	    (rc = scalar_unsigned(state, v, "http.threads", 1, 256, &h->threads)))
		return rc;
	if ((v = lookup(node, "connection_timeout_seconds")) &&
	    (rc = scalar_unsigned(state, v, "http.connection_timeout_seconds", 1, 3600,
	                          &h->connection_timeout_seconds)))
		return rc;
	if ((v = lookup(node, "max_connections")) &&
	    (rc = scalar_unsigned(state, v, "http.max_connections", 1, 65536, &h->max_connections)))
		return rc;
	if ((v = lookup(node, "max_connections_per_ip")) &&
	    (rc = scalar_unsigned(state, v, "http.max_connections_per_ip", 1, 65536,
	                          &h->max_connections_per_ip)))
		return rc;
	if ((v = lookup(node, "connection_memory_limit")) &&
	    (rc = scalar_size(state, v, "http.connection_memory_limit", 16384, 16 * 1024 * 1024,
	                      &h->connection_memory_limit)))
		return rc;
	if (h->max_connections_per_ip > h->max_connections)
		return fail(state, node->line, "http.max_connections_per_ip exceeds http.max_connections");
	return 0;
}

static void set_defaults(struct config *config)
{
	config->bounds.registration_body = 64 * 1024;
	config->bounds.endpoints_per_service = 32;
	config->bounds.records_per_snapshot = 1000000;
	config->bounds.snapshot_body_compressed = (size_t)64 * 1024 * 1024;
	config->bounds.snapshot_body_uncompressed = (size_t)512 * 1024 * 1024;
	config->bounds.clock_skew_seconds = 300;
	config->bounds.max_validity_seconds = 7 * 86400;
	config->http.threads = 8;
	config->http.connection_timeout_seconds = 10;
	config->http.max_connections = 1024;
	config->http.max_connections_per_ip = 64;
	config->http.connection_memory_limit = 128 * 1024;
	config->clock_source = CONFIG_CLOCK_SYSTEM;
}

static int parse_root(struct parse_state *state, const struct tree_node *root, struct config *config)
{
	static const char *const keys[] = {"authority",  "listen",    "data_dir", "epoch", "clock",
	                                   "namespaces", "providers", "bounds",   "http",  NULL};
	const struct tree_node *v;
	int rc;
	if ((rc = expect_kind(state, root, TREE_MAPPING, "the configuration")) ||
	    (rc = check_keys(state, root, keys, "configuration")))
		return rc;
	/* Sections in dependency order: providers name namespaces. */
	if ((rc = require(state, root, "authority", "configuration", &v)) ||
	    (rc = parse_authority(state, v, config)))
		return rc;
	if ((rc = require(state, root, "listen", "configuration", &v)) ||
	    (rc = parse_listen(state, v, config)))
		return rc;
	if ((rc = require(state, root, "data_dir", "configuration", &v)) ||
	    (rc = scalar_path(state, v, "data_dir", config->data_dir)))
		return rc;
	if ((rc = require(state, root, "epoch", "configuration", &v)) || (rc = parse_epoch(state, v, config)))
		return rc;
	if ((v = lookup(root, "clock")) && (rc = parse_clock(state, v, config)))
		return rc;
	if ((rc = require(state, root, "namespaces", "configuration", &v)) ||
	    (rc = parse_namespaces(state, v, config)))
		return rc;
	if ((rc = require(state, root, "providers", "configuration", &v)) ||
	    (rc = parse_providers(state, v, config)))
		return rc;
	if ((v = lookup(root, "bounds")) && (rc = parse_bounds(state, v, config)))
		return rc;
	if ((v = lookup(root, "http")) && (rc = parse_http(state, v, config)))
		return rc;
	return 0;
}

int config_parse(const uint8_t *buf, size_t len, const char *base_dir, struct config **out,
                 struct config_error *error)
{
	struct parse_state state = {.error = error, .base_dir = base_dir ? base_dir : "."};
	struct tree_node *root = NULL;
	struct config *config = NULL;
	int rc;

	*out = NULL;
	if (error) {
		error->line = 0;
		error->message[0] = 0;
	}
	if (len > CONFIG_MAX_BYTES)
		return fail(&state, 0, "the file is larger than %d bytes", CONFIG_MAX_BYTES);
	if ((rc = tree_read(&state, buf, len, &root)))
		goto cleanup;
	config = calloc(1, sizeof *config);
	if (!config) {
		rc = DIRAUTH_ERR_NOMEM;
		goto cleanup;
	}
	set_defaults(config);
	if ((rc = parse_root(&state, root, config)))
		goto cleanup;
	*out = config;
	config = NULL;
cleanup:
	config_free(config);
	tree_free(root);
	return rc;
}

int config_load(const char *path, struct config **out, struct config_error *error)
{
	struct parse_state state = {.error = error};
	uint8_t *buf = NULL;
	char *dir_copy = NULL;
	size_t len = 0;
	int rc, fd = -1;

	*out = NULL;
	if (error) {
		error->line = 0;
		error->message[0] = 0;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fail(&state, 0, "cannot open: %s", strerror(errno));
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		rc = fail(&state, 0, "not a regular file");
		goto cleanup;
	}
	if (st.st_size > CONFIG_MAX_BYTES) {
		rc = fail(&state, 0, "the file is larger than %d bytes", CONFIG_MAX_BYTES);
		goto cleanup;
	}
	/* Read at most one byte past the bound so that a file that grew since fstat is refused. */
	buf = malloc(CONFIG_MAX_BYTES + 1);
	if (!buf) {
		rc = DIRAUTH_ERR_NOMEM;
		goto cleanup;
	}
	for (;;) {
		ssize_t n = read(fd, buf + len, CONFIG_MAX_BYTES + 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = fail(&state, 0, "cannot read: %s", strerror(errno));
			goto cleanup;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (len > CONFIG_MAX_BYTES) {
			rc = fail(&state, 0, "the file is larger than %d bytes", CONFIG_MAX_BYTES);
			goto cleanup;
		}
	}
	dir_copy = strdup(path);
	if (!dir_copy) {
		rc = DIRAUTH_ERR_NOMEM;
		goto cleanup;
	}
	char *slash = strrchr(dir_copy, '/');
	const char *base_dir = ".";
	if (slash == dir_copy)
		base_dir = "/";
	else if (slash) {
		*slash = 0;
		base_dir = dir_copy;
	}
	rc = config_parse(buf, len, base_dir, out, error);
cleanup:
	if (fd >= 0)
		close(fd);
	free(buf);
	free(dir_copy);
	return rc;
}

void config_free(struct config *config)
{
	if (!config)
		return;
	free(config->providers);
	free(config);
}

int config_namespace_index(const struct config *config, const char *name, size_t len)
{
	for (size_t i = 0; i < config->namespace_count; i++)
		if (strlen(config->namespaces[i].name) == len &&
		    memcmp(config->namespaces[i].name, name, len) == 0)
			return (int)i;
	return -1;
}

const struct config_provider *config_provider_find(const struct config *config,
                                                   const struct note_verifier *key)
{
	for (size_t i = 0; i < config->provider_count; i++) {
		const struct note_verifier *candidate = &config->providers[i].key;
		if (strcmp(candidate->name, key->name) == 0 && candidate->key_id == key->key_id &&
		    candidate->type == key->type &&
		    memcmp(candidate->public_key, key->public_key, sizeof candidate->public_key) == 0)
			return &config->providers[i];
	}
	return NULL;
}
