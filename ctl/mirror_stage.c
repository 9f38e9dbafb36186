/*
 * mirror_stage.c: the files of one mirror run (mirror_internal.h).
 *
 * Nothing a run writes goes straight into the served tree. Each file is written complete and
 * synced into the run's scratch directory (ctl_file_write_atomic), under a serial name, and listed
 * with the tree path it is to take; ctl_mirror_publish renames a list into the tree in its order,
 * creating directories as it goes, each rename atomic and durable. The run keeps two lists,
 * immutable files and pointers, and publishes the first before the second: that is the whole
 * crash discipline. Reading what is served and downloading from the server that passed fetch are
 * here too, so that every step names its files the same way (relative to DIR/v1/NS).
 */
#include "ctl/mirror_internal.h"

#include "base/error.h"
#include "ctl/exchange.h"
#include "ctl/files.h"
#include "net/pool.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ctl_mirror_moves_free(struct moves *list)
{
	for (size_t i = 0; i < list->count; i++) {
		free(list->items[i].from);
		free(list->items[i].to);
	}
	free(list->items);
	memset(list, 0, sizeof(*list));
}

static int moves_add(struct moves *list, const char *from, const char *to)
{
	if (list->count == list->capacity) {
		size_t capacity = list->capacity == 0 ? 64 : list->capacity * 2;
		struct move *items = realloc(list->items, capacity * sizeof(*items));
		if (items == NULL)
			return DIRAUTH_ERR_NOMEM;
		list->items = items;
		list->capacity = capacity;
	}
	list->items[list->count].from = strdup(from);
	list->items[list->count].to = strdup(to);
	if (list->items[list->count].from == NULL || list->items[list->count].to == NULL) {
		free(list->items[list->count].from);
		free(list->items[list->count].to);
		return DIRAUTH_ERR_NOMEM;
	}
	list->count++;
	return 0;
}

int ctl_mirror_path(char out[CTL_MIRROR_PATH_CAPACITY], const char *format, ...)
{
	va_list arguments;
	int n;

	va_start(arguments, format);
	n = vsnprintf(out, CTL_MIRROR_PATH_CAPACITY, format, arguments);
	va_end(arguments);
	return n < 0 || n >= CTL_MIRROR_PATH_CAPACITY ? DIRAUTH_ERR_BOUNDS : 0;
}

int ctl_mirror_file_failure(struct mirror *m, const char *what_file, int rc, struct ctl_report *report)
{
	ctl_report_fail(report,
	                rc == DIRAUTH_ERR_IO      ? CTL_EXIT_IO
	                : rc == DIRAUTH_ERR_NOMEM ? CTL_EXIT_SOFTWARE
	                                          : CTL_EXIT_CANNOT_CREATE,
	                "%s: cannot write %s: %s", m->what, what_file, dirauth_strerror(rc));
	return rc;
}

int ctl_mirror_out_of_memory(struct mirror *m, struct ctl_report *report)
{
	ctl_report_fail(report, CTL_EXIT_SOFTWARE, "%s: out of memory", m->what);
	return DIRAUTH_ERR_NOMEM;
}

/* Writes data into the scratch directory and lists it for the rename to DIR/v1/NS/<relative>
 * (relative "../certificates" for v1/certificates). */
int ctl_mirror_stage_bytes(struct mirror *m, struct moves *list, const char *relative, const uint8_t *data,
                           size_t len, struct ctl_report *report)
{
	char name[32], from[CTL_MIRROR_PATH_CAPACITY], to[CTL_MIRROR_PATH_CAPACITY];
	int rc;

	snprintf(name, sizeof(name), "f%u", m->serial++);
	rc = ctl_file_write_atomic(m->staged, name, data, len);
	if (rc == 0)
		rc = ctl_mirror_path(from, "%s/%s", m->staged, name);
	if (rc == 0)
		rc = ctl_mirror_path(to, "%s/%s", m->tree, relative);
	if (rc == 0)
		rc = moves_add(list, from, to);
	return rc != 0 ? ctl_mirror_file_failure(m, relative, rc, report) : 0;
}

/* Whether DIR/v1/NS/<relative> is there: an immutable file written once is not written again. */
int ctl_mirror_served_exists(const struct mirror *m, const char *relative)
{
	char path[CTL_MIRROR_PATH_CAPACITY];

	return ctl_mirror_path(path, "%s/%s", m->tree, relative) == 0 && ctl_file_exists(path);
}

int ctl_mirror_staged_or_served(const struct mirror *m, const char *relative,
                                char out[CTL_MIRROR_PATH_CAPACITY])
{
	char to[CTL_MIRROR_PATH_CAPACITY];

	if (ctl_mirror_path(to, "%s/%s", m->tree, relative) != 0)
		return 0;
	for (size_t i = m->immutable.count; i > 0; i--) {
		if (strcmp(m->immutable.items[i - 1].to, to) == 0)
			return ctl_mirror_path(out, "%s", m->immutable.items[i - 1].from) == 0;
	}
	if (!ctl_file_exists(to))
		return 0;
	memcpy(out, to, sizeof(to));
	return 1;
}

/* Lists a file already in the scratch directory (one fetch wrote) for the rename. */
int ctl_mirror_stage_file(struct mirror *m, struct moves *list, const char *from, const char *relative,
                          struct ctl_report *report)
{
	char to[CTL_MIRROR_PATH_CAPACITY];
	int rc = ctl_mirror_path(to, "%s/%s", m->tree, relative);

	if (rc == 0)
		rc = moves_add(list, from, to);
	return rc != 0 ? ctl_mirror_file_failure(m, relative, rc, report) : 0;
}

/* Renames the listed files into the tree, in order, each durably. */
int ctl_mirror_publish(struct mirror *m, const struct moves *list, struct ctl_report *report)
{
	for (size_t i = 0; i < list->count; i++) {
		char directory[CTL_MIRROR_PATH_CAPACITY];
		char *slash;
		int rc;

		snprintf(directory, sizeof(directory), "%s", list->items[i].to);
		slash = strrchr(directory, '/');
		if (slash != NULL)
			*slash = '\0';
		rc = ctl_directory_create(directory);
		if (rc == 0)
			rc = ctl_file_move(list->items[i].from, list->items[i].to);
		if (rc != 0)
			return ctl_mirror_file_failure(m, list->items[i].to, rc, report);
	}
	return 0;
}

/* Reads DIR/v1/NS/<relative> (absent: *present 0, out empty). */
int ctl_mirror_read_served(struct mirror *m, const char *relative, size_t max_bytes, struct buffer *out,
                           int *present, struct ctl_report *report)
{
	char path[CTL_MIRROR_PATH_CAPACITY];
	uint8_t *bytes = NULL;
	size_t len = 0;
	int rc;

	buffer_reset(out);
	*present = 0;
	rc = ctl_mirror_path(path, "%s/%s", m->tree, relative);
	if (rc == 0 && !ctl_file_exists(path))
		return 0;
	if (rc == 0)
		rc = ctl_file_read(path, max_bytes, &bytes, &len);
	if (rc == 0)
		rc = buffer_append(out, bytes, len);
	free(bytes);
	if (rc != 0) {
		ctl_report_fail(report, ctl_exit_code_for_error(rc), "%s: cannot read the served %s: %s",
		                m->what, relative, dirauth_strerror(rc));
		return rc;
	}
	*present = 1;
	return 0;
}

/* GETs /v1/NS/<relative> from the server that passed fetch. */
int ctl_mirror_download(struct mirror *m, const char *label, const char *relative,
                        const char *accept_encoding, size_t max_bytes, int allow_missing,
                        struct net_response *response, struct ctl_report *report)
{
	char accept[64];
	const char *headers[] = {m->fetch->authorization, NULL, NULL};
	struct buffer url;
	int rc;

	if (accept_encoding != NULL) {
		snprintf(accept, sizeof(accept), "Accept-Encoding: %s", accept_encoding);
		headers[m->fetch->authorization != NULL ? 1 : 0] = accept;
	}
	buffer_init(&url);
	net_response_free(response);
	net_response_init(response);
	rc = buffer_appendf(&url, "%.*s/v1/%s/%s", (int)m->base_len, m->server_url, m->namespace_name,
	                    relative);
	if (rc != 0)
		rc = ctl_mirror_out_of_memory(m, report);
	else
		rc = ctl_exchange_get_pooled(m->pool, m->what, label, (const char *)url.data, headers,
		                             max_bytes, allow_missing, response, report);
	buffer_free(&url);
	return rc;
}

/* Removes DIR/v1/NS/<relative>, a file or a directory with all it holds (absent: nothing). */
int ctl_mirror_remove_served(struct mirror *m, const char *relative, struct ctl_report *report)
{
	char path[CTL_MIRROR_PATH_CAPACITY];
	int rc = ctl_mirror_path(path, "%s/%s", m->tree, relative);

	if (rc == 0)
		rc = ctl_directory_remove_tree(path);
	if (rc != 0) {
		ctl_report_fail(report, CTL_EXIT_IO, "%s: cannot remove %s: %s", m->what, relative,
		                dirauth_strerror(rc));
		return rc;
	}
	return 0;
}
