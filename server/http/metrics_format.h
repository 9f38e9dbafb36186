/*
 * metrics_format.h: the pieces of the Prometheus text format (version 0.0.4) that GET /v1/metrics
 * writes: a family's HELP and TYPE lines, a sample, a histogram's buckets, sum and count.
 *
 * Names and label values come from the code and the configuration (namespace and member names,
 * fixed reasons), never from a request; a label value is still escaped as the format says
 * (backslash, double quote, newline), so no configured name can break a line.
 */
#ifndef DIRAUTH_SERVER_HTTP_METRICS_FORMAT_H
#define DIRAUTH_SERVER_HTTP_METRICS_FORMAT_H

#include "base/buffer.h"

#include <stddef.h>
#include <stdint.h>

/* "# HELP name help\n# TYPE name type\n". Returns 0 or DIRAUTH_ERR_NOMEM. */
int metrics_family(struct buffer *out, const char *name, const char *type, const char *help);

/* The labels of one sample, built a pair at a time: `a="x",b="y"`. */
struct metrics_labels {
	char text[512];
	size_t len;
	int truncated;
};

/* Starts empty labels, or adds name="value" (value escaped). */
void metrics_labels_init(struct metrics_labels *labels);
void metrics_labels_add(struct metrics_labels *labels, const char *name, const char *value);

/* "name{labels} value\n" ("name value\n" without labels; labels may be NULL). Returns 0 or
 * DIRAUTH_ERR_NOMEM (DIRAUTH_ERR_BOUNDS for truncated labels). */
int metrics_sample_u64(struct buffer *out, const char *name, const struct metrics_labels *labels,
                       uint64_t value);
int metrics_sample_i64(struct buffer *out, const char *name, const struct metrics_labels *labels,
                       int64_t value);
int metrics_sample_double(struct buffer *out, const char *name, const struct metrics_labels *labels,
                          double value);

/* A histogram's samples: name_bucket{labels,le="b"} cumulative for each bound of bounds (count
 * of them, ascending) and +Inf, name_sum and name_count. per_bucket holds count + 1 counts, each
 * of its own bucket only (the last: above every bound). Returns 0, DIRAUTH_ERR_NOMEM,
 * DIRAUTH_ERR_BOUNDS. */
int metrics_histogram(struct buffer *out, const char *name, const struct metrics_labels *labels,
                      const double *bounds, size_t count, const uint64_t *per_bucket, double sum);

#endif
