/*
 * buffer.h: a growable byte buffer, the output type of every encoder.
 *
 * A buffer owns its bytes. It always keeps one spare byte so that data[len] can be set to 0 and
 * the contents used as a C string when they are text. A buffer has a hard capacity limit
 * (BUFFER_MAX) so that no encoder can be driven to exhaust memory; past it appends fail with
 * DIRAUTH_ERR_BOUNDS.
 */
#ifndef DIRAUTH_BASE_BUFFER_H
#define DIRAUTH_BASE_BUFFER_H

#include <stddef.h>
#include <stdint.h>

#define BUFFER_MAX ((size_t)1 << 31) /* 2 GiB: above every configured bound */

struct buffer {
	uint8_t *data; /* NULL until the first append; NUL-terminated after any append */
	size_t len;
	size_t cap;
};

/* An empty buffer; equivalent to zero-initialising the struct. Never fails. */
void buffer_init(struct buffer *b);

/* Ensures room for extra more bytes (plus the NUL). Returns 0, DIRAUTH_ERR_NOMEM or
 * DIRAUTH_ERR_BOUNDS. */
int buffer_reserve(struct buffer *b, size_t extra);

/* Appends len bytes. Returns 0, DIRAUTH_ERR_NOMEM or DIRAUTH_ERR_BOUNDS. */
int buffer_append(struct buffer *b, const void *data, size_t len);

/* Appends a NUL-terminated string (without its NUL). */
int buffer_append_string(struct buffer *b, const char *s);

/* Appends printf-formatted text. */
int buffer_appendf(struct buffer *b, const char *format, ...) __attribute__((format(printf, 2, 3)));

/* Shortens the contents to len bytes (len ≤ b->len), e.g. to undo a failed append sequence. */
void buffer_truncate(struct buffer *b, size_t len);

/* Forgets the contents but keeps the allocation. */
void buffer_reset(struct buffer *b);

/* Frees the bytes and leaves an empty buffer. Accepts NULL. */
void buffer_free(struct buffer *b);

/* Hands the bytes to the caller (who frees them with free()) and leaves an empty buffer. The
 * result is NUL-terminated; on an empty buffer returns a freshly allocated "" or NULL on
 * allocation failure. *len_out (may be NULL) receives the length. */
uint8_t *buffer_steal(struct buffer *b, size_t *len_out);

#endif
