/*
 * settings.c: the strict YAML reader under every configuration file.
 *
 * Two passes. settings_read turns libyaml's event stream into a small tree of scalars,
 * mappings and sequences, refusing what a configuration never needs and what makes YAML
 * dangerous to read: anchors and aliases (exponential expansion), explicit tags, more than one
 * document, nesting past SETTINGS_MAX_DEPTH, more than SETTINGS_MAX_NODES nodes. The event API
 * is used rather than libyaml's document loader so that the depth bound is enforced while
 * reading, before memory is spent on a hostile file. The second pass belongs to each caller,
 * which walks the tree against its schema with the typed accessors here; every refusal
 * carries the line of the node at fault.
 */
#include "settings/settings.h"

#include "schema/encoding.h"
#include "schema/error.h"

#include <yaml.h>

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int settings_fail(struct settings_reader *state, size_t line, const char *format, ...)
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

void settings_free(struct settings_node *node)
{
	if (!node)
		return;
	for (size_t i = 0; i < node->count; i++)
		settings_free(node->children[i]);
	free(node->children);
	free(node->text);
	free(node);
}

static int node_add_child(struct settings_node *parent, struct settings_node *child)
{
	if (parent->count == parent->cap) {
		size_t cap = parent->cap ? parent->cap * 2 : 8;
		struct settings_node **children = realloc(parent->children, cap * sizeof *children);
		if (!children)
			return DIRAUTH_ERR_NOMEM;
		parent->children = children;
		parent->cap = cap;
	}
	parent->children[parent->count++] = child;
	return 0;
}

static struct settings_node *node_new(struct settings_reader *state, enum settings_kind kind,
                                      const yaml_mark_t *mark)
{
	struct settings_node *node = calloc(1, sizeof *node);
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
int settings_read(struct settings_reader *state, const uint8_t *buf, size_t len, struct settings_node **root)
{
	if (len > SETTINGS_MAX_BYTES)
		return settings_fail(state, 0, "the file is larger than %d bytes", SETTINGS_MAX_BYTES);
	yaml_parser_t parser;
	yaml_event_t event;
	struct settings_node *stack[SETTINGS_MAX_DEPTH + 1];
	size_t depth = 0;
	struct settings_node *top = NULL;
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
				rc = settings_fail(state, line, "%s", yaml_problem(&parser));
			break;
		}
		size_t line = event.start_mark.line + 1;
		struct settings_node *node = NULL;
		const char *anchor = NULL, *tag = NULL;
		switch (event.type) {
		case YAML_STREAM_END_EVENT:
			done = 1;
			break;
		case YAML_DOCUMENT_START_EVENT:
			if (++documents > 1)
				rc = settings_fail(state, line, "only one YAML document is allowed");
			break;
		case YAML_ALIAS_EVENT:
			rc = settings_fail(state, line, "YAML aliases are not allowed");
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
				rc = settings_fail(state, line, "YAML anchors are not allowed");
				break;
			}
			if (tag) {
				rc = settings_fail(state, line, "explicit YAML tags are not allowed");
				break;
			}
			if (state->node_count >= SETTINGS_MAX_NODES) {
				rc = settings_fail(state, line, "too many YAML nodes (at most %d)",
				                   SETTINGS_MAX_NODES);
				break;
			}
			if (event.type == YAML_SCALAR_EVENT) {
				node = node_new(state, SETTINGS_SCALAR, &event.start_mark);
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
				if (depth >= SETTINGS_MAX_DEPTH) {
					rc = settings_fail(state, line, "nesting deeper than %d levels",
					                   SETTINGS_MAX_DEPTH);
					break;
				}
				node = node_new(state,
				                event.type == YAML_MAPPING_START_EVENT ? SETTINGS_MAPPING
				                                                       : SETTINGS_SEQUENCE,
				                &event.start_mark);
				if (!node) {
					rc = DIRAUTH_ERR_NOMEM;
					break;
				}
			}
			if (depth == 0) {
				if (top) {
					settings_free(node);
					rc = settings_fail(state, line, "only one YAML document is allowed");
					break;
				}
				top = node;
			} else if ((rc = node_add_child(stack[depth - 1], node)) != 0) {
				settings_free(node);
				break;
			}
			if (node->kind != SETTINGS_SCALAR)
				stack[depth++] = node;
			break;
		case YAML_MAPPING_END_EVENT:
		case YAML_SEQUENCE_END_EVENT:
			if (depth == 0)
				rc = settings_fail(state, line, "unbalanced YAML structure");
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
		settings_free(top);
		return rc;
	}
	if (!top)
		return settings_fail(state, 1, "the file is empty");
	*root = top;
	return 0;
}

/* ---- schema helpers ---- */

const char *settings_kind_name(enum settings_kind kind)
{
	switch (kind) {
	case SETTINGS_SCALAR:
		return "a scalar";
	case SETTINGS_MAPPING:
		return "a mapping";
	default:
		return "a sequence";
	}
}

int settings_expect_kind(struct settings_reader *state, const struct settings_node *node,
                         enum settings_kind kind, const char *what)
{
	if (node->kind != kind)
		return settings_fail(state, node->line, "%s must be %s, not %s", what,
		                     settings_kind_name(kind), settings_kind_name(node->kind));
	return 0;
}

/* Checks that every key of mapping is a scalar in allowed (NULL-terminated) and appears once. */
int settings_check_keys(struct settings_reader *state, const struct settings_node *mapping,
                        const char *const *allowed, const char *what)
{
	for (size_t i = 0; i + 1 < mapping->count; i += 2) {
		const struct settings_node *key = mapping->children[i];
		if (key->kind != SETTINGS_SCALAR)
			return settings_fail(state, key->line, "%s: keys must be scalars", what);
		int known = 0;
		for (size_t k = 0; allowed[k]; k++)
			if (strcmp(allowed[k], key->text) == 0 && strlen(allowed[k]) == key->text_len)
				known = 1;
		if (!known)
			return settings_fail(state, key->line, "%s: unknown key '%.64s'", what, key->text);
		for (size_t j = 0; j < i; j += 2)
			if (strcmp(mapping->children[j]->text, key->text) == 0)
				return settings_fail(state, key->line, "%s: duplicate key '%.64s'", what,
				                     key->text);
	}
	return 0;
}

const struct settings_node *settings_lookup(const struct settings_node *mapping, const char *name)
{
	for (size_t i = 0; i + 1 < mapping->count; i += 2)
		if (strcmp(mapping->children[i]->text, name) == 0)
			return mapping->children[i + 1];
	return NULL;
}

int settings_require(struct settings_reader *state, const struct settings_node *mapping, const char *name,
                     const char *what, const struct settings_node **out)
{
	*out = settings_lookup(mapping, name);
	if (!*out)
		return settings_fail(state, mapping->line, "%s: missing required key '%s'", what, name);
	return 0;
}

int settings_string(struct settings_reader *state, const struct settings_node *node, const char *what,
                    char *out, size_t cap)
{
	int rc = settings_expect_kind(state, node, SETTINGS_SCALAR, what);
	if (rc)
		return rc;
	if (node->text_len == 0)
		return settings_fail(state, node->line, "%s must not be empty", what);
	if (strlen(node->text) != node->text_len)
		return settings_fail(state, node->line, "%s must not contain NUL", what);
	if (node->text_len >= cap)
		return settings_fail(state, node->line, "%s is too long (at most %zu bytes)", what, cap - 1);
	memcpy(out, node->text, node->text_len + 1);
	return 0;
}

int settings_u64(struct settings_reader *state, const struct settings_node *node, const char *what,
                 uint64_t min, uint64_t max, uint64_t *out)
{
	int rc = settings_expect_kind(state, node, SETTINGS_SCALAR, what);
	if (rc)
		return rc;
	uint64_t value;
	if (!node->plain || decimal_parse(node->text, node->text_len, &value) != 0)
		return settings_fail(state, node->line, "%s must be an unsigned decimal integer", what);
	if (value < min || value > max)
		return settings_fail(state, node->line, "%s must be between %llu and %llu", what,
		                     (unsigned long long)min, (unsigned long long)max);
	*out = value;
	return 0;
}

int settings_size(struct settings_reader *state, const struct settings_node *node, const char *what,
                  uint64_t min, uint64_t max, size_t *out)
{
	uint64_t value;
	int rc = settings_u64(state, node, what, min, max, &value);
	if (rc == 0)
		*out = (size_t)value;
	return rc;
}

int settings_unsigned(struct settings_reader *state, const struct settings_node *node, const char *what,
                      uint64_t min, uint64_t max, unsigned *out)
{
	uint64_t value;
	int rc = settings_u64(state, node, what, min, max, &value);
	if (rc == 0)
		*out = (unsigned)value;
	return rc;
}

/* Resolves a path from the configuration against the configuration's directory. */
int settings_path(struct settings_reader *state, const struct settings_node *node, const char *what,
                  char *out)
{
	char path[SETTINGS_PATH_MAX];
	int rc = settings_string(state, node, what, path, sizeof path);
	if (rc)
		return rc;
	int n;
	if (path[0] == '/')
		n = snprintf(out, SETTINGS_PATH_MAX, "%s", path);
	else
		n = snprintf(out, SETTINGS_PATH_MAX, "%s/%s", state->base_dir, path);
	if (n < 0 || n >= SETTINGS_PATH_MAX)
		return settings_fail(state, node->line, "%s is too long once resolved", what);
	return 0;
}

int settings_report_load(FILE *stream, const char *program, const char *path, int rc,
                         const struct settings_error *error)
{
	if (rc == 0)
		return 0;
	if (rc == DIRAUTH_ERR_CONFIG) {
		if (error->line)
			fprintf(stream, "%s:%zu: %s\n", path, error->line, error->message);
		else
			fprintf(stream, "%s: %s\n", path, error->message);
		return 78;
	}
	fprintf(stream, "%s: %s: %s\n", program, path, dirauth_strerror(rc));
	return 70;
}

int settings_load(const char *path, uint8_t **buf_out, size_t *len_out, char **base_dir_out,
                  struct settings_error *error)
{
	struct settings_reader state = {.error = error};
	uint8_t *buf = NULL;
	char *dir_copy = NULL;
	size_t len = 0;
	int rc, fd = -1;

	*buf_out = NULL;
	*base_dir_out = NULL;
	*len_out = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return settings_fail(&state, 0, "cannot open: %s", strerror(errno));
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		rc = settings_fail(&state, 0, "not a regular file");
		goto cleanup;
	}
	if (st.st_size > SETTINGS_MAX_BYTES) {
		rc = settings_fail(&state, 0, "the file is larger than %d bytes", SETTINGS_MAX_BYTES);
		goto cleanup;
	}
	/* Read at most one byte past the bound so that a file that grew since fstat is refused. */
	buf = malloc(SETTINGS_MAX_BYTES + 1);
	if (!buf) {
		rc = DIRAUTH_ERR_NOMEM;
		goto cleanup;
	}
	for (;;) {
		ssize_t n = read(fd, buf + len, SETTINGS_MAX_BYTES + 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = settings_fail(&state, 0, "cannot read: %s", strerror(errno));
			goto cleanup;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (len > SETTINGS_MAX_BYTES) {
			rc = settings_fail(&state, 0, "the file is larger than %d bytes", SETTINGS_MAX_BYTES);
			goto cleanup;
		}
	}
	char *slash = strrchr(path, '/');
	if (!slash)
		dir_copy = strdup(".");
	else if (slash == path)
		dir_copy = strdup("/");
	else
		dir_copy = strndup(path, (size_t)(slash - path));
	if (!dir_copy) {
		rc = DIRAUTH_ERR_NOMEM;
		goto cleanup;
	}
	*buf_out = buf;
	*len_out = len;
	*base_dir_out = dir_copy;
	buf = NULL;
	dir_copy = NULL;
	rc = 0;
cleanup:
	if (fd >= 0)
		close(fd);
	free(buf);
	free(dir_copy);
	return rc;
}

int settings_clock(struct settings_reader *state, const struct settings_node *node, int *is_file, char *path)
{
	static const char *const keys[] = {"source", "path", NULL};
	const struct settings_node *source, *path_node;
	int rc;

	if ((rc = settings_expect_kind(state, node, SETTINGS_MAPPING, "clock")) ||
	    (rc = settings_check_keys(state, node, keys, "clock")) ||
	    (rc = settings_require(state, node, "source", "clock", &source)) ||
	    (rc = settings_expect_kind(state, source, SETTINGS_SCALAR, "clock.source")))
		return rc;
	path_node = settings_lookup(node, "path");
	if (strlen(source->text) != source->text_len)
		return settings_fail(state, source->line, "clock.source must not contain NUL");
	if (strcmp(source->text, "system") == 0) {
		if (path_node)
			return settings_fail(state, path_node->line, "clock.path is only for source: file");
		*is_file = 0;
		path[0] = '\0';
		return 0;
	}
	if (strcmp(source->text, "file") != 0)
		return settings_fail(state, source->line, "clock.source must be 'system' or 'file'");
	if (!path_node)
		return settings_fail(state, node->line,
		                     "clock: missing required key 'path' for source: file");
	*is_file = 1;
	return settings_path(state, path_node, "clock.path", path);
}
