/*
 * settings.c: the strict YAML reader under every configuration file.
 *
 * Two passes. settings_read turns libyaml's event stream into a small tree of scalars,
 * mappings and sequences, refusing what a configuration never needs and what makes YAML
 * dangerous to read: anchors and aliases (exponential expansion), explicit tags, more than one
 * document, nesting past SETTINGS_MAX_DEPTH, more than SETTINGS_MAX_NODES nodes (a caller may
 * lower the byte and depth bounds). The event API is used rather than libyaml's document loader
 * so that the depth bound is enforced while reading, before memory is spent on a hostile file:
 * a tree_builder takes one event at a time, with one function per kind of event. The second
 * pass belongs to each caller, which walks the tree against its schema with the typed accessors
 * here; every refusal carries the line of the node at fault and which rule refused.
 */
#include "settings/settings.h"

#include "schema/encoding.h"
#include "base/error.h"

#include <yaml.h>

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int vrefuse(struct settings_reader *state, enum settings_refusal refusal, size_t line,
                   const char *format, va_list args) __attribute__((format(printf, 4, 0)));

static int vrefuse(struct settings_reader *state, enum settings_refusal refusal, size_t line,
                   const char *format, va_list args)
{
	if (state->error) {
		state->error->line = line;
		state->error->refusal = refusal;
		vsnprintf(state->error->message, sizeof state->error->message, format, args);
	}
	return DIRAUTH_ERR_CONFIG;
}

/* Records a refusal of the kind refusal at line and returns DIRAUTH_ERR_CONFIG. */
static int refuse(struct settings_reader *state, enum settings_refusal refusal, size_t line,
                  const char *format, ...) __attribute__((format(printf, 4, 5)));

static int refuse(struct settings_reader *state, enum settings_refusal refusal, size_t line,
                  const char *format, ...)
{
	va_list args;
	va_start(args, format);
	int rc = vrefuse(state, refusal, line, format, args);
	va_end(args);
	return rc;
}

int settings_fail(struct settings_reader *state, size_t line, const char *format, ...)
{
	va_list args;
	va_start(args, format);
	int rc = vrefuse(state, SETTINGS_REFUSED_VALUE, line, format, args);
	va_end(args);
	return rc;
}

int settings_refusal_is_bound(enum settings_refusal refusal)
{
	return refusal == SETTINGS_REFUSED_SIZE || refusal == SETTINGS_REFUSED_DEPTH ||
	       refusal == SETTINGS_REFUSED_NODES;
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

/* ---- the tree reader ---- */

/* One read in progress: its bounds, the collections open (outermost first), the tree so far. */
struct tree_builder {
	struct settings_reader *reader;
	size_t max_depth; /* at most SETTINGS_MAX_DEPTH */
	struct settings_node *open[SETTINGS_MAX_DEPTH];
	size_t depth;
	struct settings_node *root;
	int documents;
};

/* A caller's bound: its own when lower than the reader's ceiling, else the ceiling. */
static size_t bound_or_ceiling(size_t asked, size_t ceiling)
{
	return asked == 0 || asked > ceiling ? ceiling : asked;
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

/* The anchor and tag of a node event (a scalar, or the start of a mapping or a sequence). */
static void node_properties(const yaml_event_t *event, const char **anchor, const char **tag)
{
	if (event->type == YAML_SCALAR_EVENT) {
		*anchor = (const char *)event->data.scalar.anchor;
		*tag = (const char *)event->data.scalar.tag;
	} else if (event->type == YAML_MAPPING_START_EVENT) {
		*anchor = (const char *)event->data.mapping_start.anchor;
		*tag = (const char *)event->data.mapping_start.tag;
	} else {
		*anchor = (const char *)event->data.sequence_start.anchor;
		*tag = (const char *)event->data.sequence_start.tag;
	}
}

/* Refuses what no node of a configuration carries (anchors, tags) and one node too many. */
static int check_node_event(struct tree_builder *builder, const yaml_event_t *event, size_t line)
{
	const char *anchor, *tag;
	node_properties(event, &anchor, &tag);
	if (anchor)
		return refuse(builder->reader, SETTINGS_REFUSED_ANCHOR, line, "YAML anchors are not allowed");
	if (tag)
		return refuse(builder->reader, SETTINGS_REFUSED_TAG, line,
		              "explicit YAML tags are not allowed");
	if (builder->reader->node_count >= SETTINGS_MAX_NODES)
		return refuse(builder->reader, SETTINGS_REFUSED_NODES, line,
		              "too many YAML nodes (at most %d)", SETTINGS_MAX_NODES);
	return 0;
}

/* A scalar node holding a NUL-terminated copy of the event's text. */
static int scalar_node(struct tree_builder *builder, const yaml_event_t *event, struct settings_node **out)
{
	size_t length = event->data.scalar.length;
	struct settings_node *node = node_new(builder->reader, SETTINGS_SCALAR, &event->start_mark);
	if (!node)
		return DIRAUTH_ERR_NOMEM;
	node->text = malloc(length + 1);
	if (!node->text) {
		free(node);
		return DIRAUTH_ERR_NOMEM;
	}
	memcpy(node->text, event->data.scalar.value, length);
	node->text[length] = 0;
	node->text_len = length;
	node->plain = event->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
	*out = node;
	return 0;
}

/* An empty mapping or sequence, refused when it would open one collection past the bound. */
static int collection_node(struct tree_builder *builder, const yaml_event_t *event, size_t line,
                           struct settings_node **out)
{
	if (builder->depth >= builder->max_depth)
		return refuse(builder->reader, SETTINGS_REFUSED_DEPTH, line, "nesting deeper than %zu levels",
		              builder->max_depth);
	enum settings_kind kind =
	    event->type == YAML_MAPPING_START_EVENT ? SETTINGS_MAPPING : SETTINGS_SEQUENCE;
	*out = node_new(builder->reader, kind, &event->start_mark);
	return *out ? 0 : DIRAUTH_ERR_NOMEM;
}

/* Hangs node under the innermost open collection, or makes it the root, and opens it when it is
 * a collection. Takes node: on failure it is freed. */
static int attach_node(struct tree_builder *builder, struct settings_node *node, size_t line)
{
	int rc;
	if (builder->depth == 0) {
		if (builder->root) {
			settings_free(node);
			return refuse(builder->reader, SETTINGS_REFUSED_DOCUMENTS, line,
			              "only one YAML document is allowed");
		}
		builder->root = node;
	} else if ((rc = node_add_child(builder->open[builder->depth - 1], node)) != 0) {
		settings_free(node);
		return rc;
	}
	if (node->kind != SETTINGS_SCALAR)
		builder->open[builder->depth++] = node;
	return 0;
}

/* A scalar or the start of a collection. */
static int take_node_event(struct tree_builder *builder, const yaml_event_t *event, size_t line)
{
	struct settings_node *node = NULL;
	int rc = check_node_event(builder, event, line);
	if (rc)
		return rc;
	if (event->type == YAML_SCALAR_EVENT)
		rc = scalar_node(builder, event, &node);
	else
		rc = collection_node(builder, event, line, &node);
	if (rc)
		return rc;
	return attach_node(builder, node, line);
}

static int take_collection_end(struct tree_builder *builder, size_t line)
{
	if (builder->depth == 0)
		return refuse(builder->reader, SETTINGS_REFUSED_SYNTAX, line, "unbalanced YAML structure");
	builder->depth--;
	return 0;
}

/* Takes one event of libyaml's stream; *done is set at the stream's end. */
static int take_event(struct tree_builder *builder, const yaml_event_t *event, int *done)
{
	size_t line = event->start_mark.line + 1;
	switch (event->type) {
	case YAML_STREAM_END_EVENT:
		*done = 1;
		return 0;
	case YAML_DOCUMENT_START_EVENT:
		if (++builder->documents > 1)
			return refuse(builder->reader, SETTINGS_REFUSED_DOCUMENTS, line,
			              "only one YAML document is allowed");
		return 0;
	case YAML_ALIAS_EVENT:
		return refuse(builder->reader, SETTINGS_REFUSED_ALIAS, line, "YAML aliases are not allowed");
	case YAML_SCALAR_EVENT:
	case YAML_MAPPING_START_EVENT:
	case YAML_SEQUENCE_START_EVENT:
		return take_node_event(builder, event, line);
	case YAML_MAPPING_END_EVENT:
	case YAML_SEQUENCE_END_EVENT:
		return take_collection_end(builder, line);
	default:
		return 0;
	}
}

/* What a parser that could not produce its next event reports. */
static int parse_failure(struct settings_reader *state, const yaml_parser_t *parser)
{
	if (parser->error == YAML_MEMORY_ERROR)
		return DIRAUTH_ERR_NOMEM;
	return refuse(state, SETTINGS_REFUSED_SYNTAX, parser->problem_mark.line + 1, "%s",
	              parser->problem ? parser->problem : "YAML syntax error");
}

int settings_read(struct settings_reader *state, const uint8_t *buf, size_t len, struct settings_node **root)
{
	size_t max_bytes = bound_or_ceiling(state->max_bytes, SETTINGS_MAX_BYTES);
	struct tree_builder builder = {
	    .reader = state,
	    .max_depth = bound_or_ceiling(state->max_depth, SETTINGS_MAX_DEPTH),
	};
	yaml_parser_t parser;
	int done = 0, rc = 0;

	*root = NULL;
	if (len > max_bytes)
		return refuse(state, SETTINGS_REFUSED_SIZE, 0, "the file is larger than %zu bytes",
		              max_bytes);
	if (!yaml_parser_initialize(&parser))
		return DIRAUTH_ERR_NOMEM;
	yaml_parser_set_input_string(&parser, buf, len);
	if (state->utf8_only)
		yaml_parser_set_encoding(&parser, YAML_UTF8_ENCODING);
	while (!done && rc == 0) {
		yaml_event_t event;
		if (!yaml_parser_parse(&parser, &event)) {
			rc = parse_failure(state, &parser);
			break;
		}
		rc = take_event(&builder, &event, &done);
		yaml_event_delete(&event);
	}
	yaml_parser_delete(&parser);
	if (rc) {
		settings_free(builder.root);
		return rc;
	}
	if (!builder.root)
		return refuse(state, SETTINGS_REFUSED_EMPTY, 1, "the file is empty");
	*root = builder.root;
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
	uint64_t value = 0;
	int rc = settings_u64(state, node, what, min, max, &value);
	if (rc == 0)
		*out = (size_t)value;
	return rc;
}

int settings_unsigned(struct settings_reader *state, const struct settings_node *node, const char *what,
                      uint64_t min, uint64_t max, unsigned *out)
{
	uint64_t value = 0;
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

int settings_describe_load(const char *path, int rc, const struct settings_error *error, char *out,
                           size_t size)
{
	if (size)
		out[0] = 0;
	if (rc == 0)
		return 0;
	if (rc == DIRAUTH_ERR_CONFIG) {
		if (error->line)
			snprintf(out, size, "%s:%zu: %s", path, error->line, error->message);
		else
			snprintf(out, size, "%s: %s", path, error->message);
		return 78;
	}
	snprintf(out, size, "%s: %s", path, dirauth_strerror(rc));
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
	/* O_NONBLOCK: a FIFO opens at once (and is refused below) instead of waiting for a writer. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return refuse(&state, SETTINGS_REFUSED_FILE, 0, "cannot open: %s", strerror(errno));
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		rc = refuse(&state, SETTINGS_REFUSED_FILE, 0, "not a regular file");
		goto cleanup;
	}
	if (st.st_size > SETTINGS_MAX_BYTES) {
		rc = refuse(&state, SETTINGS_REFUSED_SIZE, 0, "the file is larger than %d bytes",
		            SETTINGS_MAX_BYTES);
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
			rc = refuse(&state, SETTINGS_REFUSED_FILE, 0, "cannot read: %s", strerror(errno));
			goto cleanup;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (len > SETTINGS_MAX_BYTES) {
			rc = refuse(&state, SETTINGS_REFUSED_SIZE, 0, "the file is larger than %d bytes",
			            SETTINGS_MAX_BYTES);
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
