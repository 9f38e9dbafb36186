/*
 * metrics_format.c: the lines of the Prometheus text format, so that metrics_routes.c says which
 * figures it serves and never how a line is spelt.
 */
#include "server/http/metrics_format.h"

#include "base/error.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

int metrics_family(struct buffer *out, const char *name, const char *type, const char *help)
{
	return buffer_appendf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

void metrics_labels_init(struct metrics_labels *labels)
{
	labels->text[0] = 0;
	labels->len = 0;
	labels->truncated = 0;
}

static void labels_put(struct metrics_labels *labels, char c)
{
	if (labels->len + 1 < sizeof labels->text) {
		labels->text[labels->len++] = c;
		labels->text[labels->len] = 0;
	} else {
		labels->truncated = 1;
	}
}

void metrics_labels_add(struct metrics_labels *labels, const char *name, const char *value)
{
	if (labels->len)
		labels_put(labels, ',');
	for (const char *p = name; *p; p++)
		labels_put(labels, *p);
	labels_put(labels, '=');
	labels_put(labels, '"');
	for (const char *p = value; *p; p++) {
		if (*p == '\\' || *p == '"') {
			labels_put(labels, '\\');
			labels_put(labels, *p);
		} else if (*p == '\n') {
			labels_put(labels, '\\');
			labels_put(labels, 'n');
		} else {
			labels_put(labels, *p);
		}
	}
	labels_put(labels, '"');
}

/* "name{labels} " or "name ". */
static int sample_head(struct buffer *out, const char *name, const char *suffix,
                       const struct metrics_labels *labels, const char *extra)
{
	if (labels && labels->truncated)
		return DIRAUTH_ERR_BOUNDS;
	int has = labels && labels->len;
	if (!has && !extra)
		return buffer_appendf(out, "%s%s ", name, suffix);
	return buffer_appendf(out, "%s%s{%s%s%s} ", name, suffix, has ? labels->text : "",
	                      has && extra ? "," : "", extra ? extra : "");
}

int metrics_sample_u64(struct buffer *out, const char *name, const struct metrics_labels *labels,
                       uint64_t value)
{
	int rc = sample_head(out, name, "", labels, NULL);
	return rc ? rc : buffer_appendf(out, "%" PRIu64 "\n", value);
}

int metrics_sample_i64(struct buffer *out, const char *name, const struct metrics_labels *labels,
                       int64_t value)
{
	int rc = sample_head(out, name, "", labels, NULL);
	return rc ? rc : buffer_appendf(out, "%" PRId64 "\n", value);
}

int metrics_sample_double(struct buffer *out, const char *name, const struct metrics_labels *labels,
                          double value)
{
	int rc = sample_head(out, name, "", labels, NULL);
	return rc ? rc : buffer_appendf(out, "%.6f\n", value);
}

int metrics_histogram(struct buffer *out, const char *name, const struct metrics_labels *labels,
                      const double *bounds, size_t count, const uint64_t *per_bucket, double sum)
{
	uint64_t cumulative = 0;
	char le[48];
	int rc = 0;
	for (size_t b = 0; rc == 0 && b <= count; b++) {
		cumulative += per_bucket[b];
		if (b < count)
			snprintf(le, sizeof le, "le=\"%g\"", bounds[b]);
		else
			snprintf(le, sizeof le, "le=\"+Inf\"");
		rc = sample_head(out, name, "_bucket", labels, le);
		if (rc == 0)
			rc = buffer_appendf(out, "%" PRIu64 "\n", cumulative);
	}
	if (rc == 0)
		rc = sample_head(out, name, "_sum", labels, NULL);
	if (rc == 0)
		rc = buffer_appendf(out, "%.6f\n", sum);
	if (rc == 0)
		rc = sample_head(out, name, "_count", labels, NULL);
	if (rc == 0)
		rc = buffer_appendf(out, "%" PRIu64 "\n", cumulative);
	return rc;
}
