/*
 * buffer.c: growable byte buffer with a hard ceiling.
 *
 * Growth doubles, so appending n bytes one at a time costs O(n). The ceiling turns a runaway
 * encoder into an error instead of an out-of-memory kill.
 */
#include "base/buffer.h"

#include "base/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void buffer_init(struct buffer *b)
{
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
}

int buffer_reserve(struct buffer *b, size_t extra)
{
	if (extra > BUFFER_MAX - b->len - 1)
		return DIRAUTH_ERR_BOUNDS;
	size_t need = b->len + extra + 1;
	if (need <= b->cap)
		return 0;
	size_t cap = b->cap ? b->cap : 64;
	while (cap < need)
		cap = cap > BUFFER_MAX / 2 ? BUFFER_MAX : cap * 2;
	uint8_t *data = realloc(b->data, cap);
	if (!data)
		return DIRAUTH_ERR_NOMEM;
	b->data = data;
	b->cap = cap;
	return 0;
}

int buffer_append(struct buffer *b, const void *data, size_t len)
{
	int rc = buffer_reserve(b, len);
	if (rc)
		return rc;
	if (len)
		memcpy(b->data + b->len, data, len);
	b->len += len;
	b->data[b->len] = 0;
	return 0;
}

int buffer_append_string(struct buffer *b, const char *s)
{
	return buffer_append(b, s, strlen(s));
}

int buffer_appendf(struct buffer *b, const char *format, ...)
{
	/* Formatted straight into the room the buffer has; only text that does not fit is
	 * formatted twice (once to learn its length, once into the grown buffer). */
	size_t room = b->data ? b->cap - b->len : 0;
	va_list args;
	va_start(args, format);
	int needed = vsnprintf(room ? (char *)b->data + b->len : NULL, room, format, args);
	va_end(args);
	if (needed < 0) {
		if (room)
			b->data[b->len] = 0;
		return DIRAUTH_ERR_INTERNAL;
	}
	if ((size_t)needed >= room) {
		if (room)
			b->data[b->len] = 0; /* the cut-off text is not the buffer's */
		int rc = buffer_reserve(b, (size_t)needed);
		if (rc)
			return rc;
		va_start(args, format);
		vsnprintf((char *)b->data + b->len, (size_t)needed + 1, format, args);
		va_end(args);
	}
	b->len += (size_t)needed;
	return 0;
}

void buffer_truncate(struct buffer *b, size_t len)
{
	if (len > b->len)
		return;
	b->len = len;
	if (b->data)
		b->data[len] = 0;
}

void buffer_reset(struct buffer *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = 0;
}

void buffer_free(struct buffer *b)
{
	if (!b)
		return;
	free(b->data);
	buffer_init(b);
}

uint8_t *buffer_steal(struct buffer *b, size_t *len_out)
{
	uint8_t *data = b->data;
	size_t len = b->len;
	if (!data)
		data = calloc(1, 1);
	buffer_init(b);
	if (len_out)
		*len_out = data ? len : 0;
	return data;
}
