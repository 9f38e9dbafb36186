/*
 * settings.h: a strict, bounded reader of YAML configuration files, shared by every program
 * that reads one (dirauthd, dirauth-signer).
 *
 * settings_read turns YAML text into a tree, refusing anchors, aliases, explicit tags, more
 * than one document, nesting past SETTINGS_MAX_DEPTH (libyaml itself has no depth limit),
 * more than SETTINGS_MAX_NODES nodes and files over SETTINGS_MAX_BYTES; a caller whose files are
 * smaller sets lower byte and depth bounds in its reader. Callers then walk the tree with the
 * accessors below, which check kinds, refuse unknown and duplicate keys, and parse scalars
 * strictly. Every refusal returns DIRAUTH_ERR_CONFIG and fills the reader's settings_error with
 * the 1-based line at fault (0: the file as a whole), a sentence, and which rule refused, so
 * that a program can print "FILE:LINE: problem" and exit 78, and a caller with its own error
 * classes can tell a bound from the grammar.
 */
#ifndef DIRAUTH_SETTINGS_SETTINGS_H
#define DIRAUTH_SETTINGS_SETTINGS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define SETTINGS_MAX_BYTES   (1024 * 1024)
#define SETTINGS_MAX_DEPTH   8
#define SETTINGS_MAX_NODES   200000
#define SETTINGS_PATH_MAX    4096
#define SETTINGS_MESSAGE_MAX 256

enum settings_kind { SETTINGS_SCALAR, SETTINGS_MAPPING, SETTINGS_SEQUENCE };

struct settings_node {
	enum settings_kind kind;
	size_t line;
	int plain;  /* a scalar written without quotes or block style */
	char *text; /* scalars: NUL-terminated */
	size_t text_len;
	struct settings_node **children; /* mappings: key, value, key, value, ... */
	size_t count;
	size_t cap;
};

/* Which rule refused a file. The last three are bounds (settings_refusal_is_bound); the others
 * say the text is not what the reader or the caller's schema accepts. */
enum settings_refusal {
	SETTINGS_REFUSED_VALUE,     /* the caller's schema: the accessors below, settings_fail */
	SETTINGS_REFUSED_FILE,      /* settings_load: cannot open or read, not a regular file */
	SETTINGS_REFUSED_SYNTAX,    /* not well-formed YAML; the message is libyaml's */
	SETTINGS_REFUSED_ANCHOR,    /* an anchor (&name) */
	SETTINGS_REFUSED_ALIAS,     /* an alias (*name) */
	SETTINGS_REFUSED_TAG,       /* an explicit tag (!tag, !!str) */
	SETTINGS_REFUSED_DOCUMENTS, /* a second document */
	SETTINGS_REFUSED_EMPTY,     /* no document at all */
	SETTINGS_REFUSED_SIZE,      /* more bytes than the bound */
	SETTINGS_REFUSED_DEPTH,     /* more collections open at once than the bound */
	SETTINGS_REFUSED_NODES,     /* more than SETTINGS_MAX_NODES nodes */
};

/* Where and why a file was refused. */
struct settings_error {
	size_t line;
	enum settings_refusal refusal;
	char message[SETTINGS_MESSAGE_MAX];
};

/* The state of one read: where refusals go, what relative paths resolve against, the bounds. */
struct settings_reader {
	struct settings_error *error; /* may be NULL */
	const char *base_dir;         /* for settings_path; "." when NULL */
	size_t max_bytes;             /* a lower bound than SETTINGS_MAX_BYTES, or 0 */
	size_t max_depth;             /* a lower bound than SETTINGS_MAX_DEPTH, or 0 */
	int utf8_only;                /* 1: UTF-8 only; 0: a UTF-16 byte-order mark switches to UTF-16 */
	size_t node_count;
};

/* Whether refusal is a bound (size, depth, node count) rather than the grammar or a value. */
int settings_refusal_is_bound(enum settings_refusal refusal);

/* Records a refusal by the caller's schema (SETTINGS_REFUSED_VALUE) at line and returns
 * DIRAUTH_ERR_CONFIG. */
int settings_fail(struct settings_reader *state, size_t line, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

/* Reads YAML text into a tree; *root gets the document's root node, freed with
 * settings_free. The text may be at most state->max_bytes long and nest at most
 * state->max_depth collections (each capped by and defaulting to SETTINGS_MAX_*); with
 * state->utf8_only, text that is not UTF-8 is a syntax error (SETTINGS_REFUSED_SYNTAX).
 * Returns 0, DIRAUTH_ERR_CONFIG (error->refusal says which rule), DIRAUTH_ERR_NOMEM. */
int settings_read(struct settings_reader *state, const uint8_t *buf, size_t len, struct settings_node **root);

/* Frees a tree. Accepts NULL. */
void settings_free(struct settings_node *node);

/* Reads a regular file of at most SETTINGS_MAX_BYTES. On success *buf (its bytes) and
 * *base_dir (the file's directory) are malloc'd for the caller to free. Returns 0,
 * DIRAUTH_ERR_CONFIG (cannot open or read, not a regular file: SETTINGS_REFUSED_FILE; too
 * large: SETTINGS_REFUSED_SIZE), DIRAUTH_ERR_NOMEM. */
int settings_load(const char *path, uint8_t **buf, size_t *len, char **base_dir,
                  struct settings_error *error);

#define SETTINGS_REPORT_MAX (SETTINGS_PATH_MAX + SETTINGS_MESSAGE_MAX + 32)

/* Describes the outcome rc of loading the configuration file path in out (size bytes; at least
 * SETTINGS_REPORT_MAX holds any) for the program's log, and returns the exit status a program
 * should end with: 0 for rc 0 (out ""); 78 for DIRAUTH_ERR_CONFIG, "PATH:LINE: problem" (or
 * "PATH: problem" for the file as a whole) from error; 70 for any other failure,
 * "PATH: <sentence>". */
int settings_describe_load(const char *path, int rc, const struct settings_error *error, char *out,
                           size_t size);

/* "a scalar", "a mapping" or "a sequence". */
const char *settings_kind_name(enum settings_kind kind);

/* Refuses node unless it is of kind; what names it in the message. */
int settings_expect_kind(struct settings_reader *state, const struct settings_node *node,
                         enum settings_kind kind, const char *what);

/* Refuses a mapping key that is not a scalar in allowed (NULL-terminated) or that appears twice. */
int settings_check_keys(struct settings_reader *state, const struct settings_node *mapping,
                        const char *const *allowed, const char *what);

/* The value of key name in mapping, or NULL. */
const struct settings_node *settings_lookup(const struct settings_node *mapping, const char *name);

/* settings_lookup that refuses a missing key. */
int settings_require(struct settings_reader *state, const struct settings_node *mapping, const char *name,
                     const char *what, const struct settings_node **out);

/* A non-empty scalar without NUL, copied into out (capacity cap). */
int settings_string(struct settings_reader *state, const struct settings_node *node, const char *what,
                    char *out, size_t cap);

/* An unquoted canonical decimal in [min, max]. */
int settings_u64(struct settings_reader *state, const struct settings_node *node, const char *what,
                 uint64_t min, uint64_t max, uint64_t *out);
int settings_size(struct settings_reader *state, const struct settings_node *node, const char *what,
                  uint64_t min, uint64_t max, size_t *out);
int settings_unsigned(struct settings_reader *state, const struct settings_node *node, const char *what,
                      uint64_t min, uint64_t max, unsigned *out);

/* A path, resolved against the reader's base_dir when relative; out has SETTINGS_PATH_MAX bytes. */
int settings_path(struct settings_reader *state, const struct settings_node *node, const char *what,
                  char *out);

/* The clock section every program shares: {source: system} or {source: file, path: P} (a file
 * of unix seconds, for tests and demos: clock/clock.h). *is_file gets whether it is a file
 * clock; path (SETTINGS_PATH_MAX bytes) gets the resolved path, or "" for the system clock. */
int settings_clock(struct settings_reader *state, const struct settings_node *node, int *is_file, char *path);

#endif
