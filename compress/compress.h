/*
 * compress.h: the content encodings of snapshot bodies (zstd, gzip, identity), and bounded
 * decompression.
 *
 * Bodies are compressed once per epoch and served many times. Decompression takes input from
 * the network, so it is bounded while it runs: it stops at max_output bytes, and past the first
 * COMPRESS_RATIO_GRACE bytes of output it refuses when output exceeds COMPRESS_MAX_RATIO times
 * the input consumed (a decompression bomb).
 */
#ifndef DIRAUTH_COMPRESS_COMPRESS_H
#define DIRAUTH_COMPRESS_COMPRESS_H

#include "base/buffer.h"

#include <stddef.h>
#include <stdint.h>

#define COMPRESS_RATIO_GRACE (64 * 1024)
#define COMPRESS_MAX_RATIO   64

enum content_encoding { ENCODING_IDENTITY, ENCODING_GZIP, ENCODING_ZSTD, ENCODING_COUNT };

/* "identity", "gzip", "zstd". */
const char *content_encoding_name(enum content_encoding encoding);

/* Appends data compressed with encoding (identity copies). The same bytes as a stream fed the
 * same data (below). Returns 0, DIRAUTH_ERR_NOMEM, DIRAUTH_ERR_INTERNAL. */
int compress_encode(enum content_encoding encoding, const uint8_t *data, size_t len, struct buffer *out);

/* compress_encode for bytes made for one answer or one request and compressed each time they are
 * sent (the traffic between authorities): zstd at level 3, a few
 * times quicker than the level snapshot bodies, compressed once per epoch, are made at. Same
 * returns; any decoder reads both. */
int compress_encode_fast(enum content_encoding encoding, const uint8_t *data, size_t len, struct buffer *out);

/* Compression of input that arrives in pieces (gzip or zstd), whose output goes to a sink as it
 * is made, so neither the input nor the output is ever held whole. A sink returns 0 or an error,
 * which stops the stream and is returned. */
typedef int (*compress_sink)(void *context, const uint8_t *data, size_t len);
struct compress_stream;

/* A stream for encoding (ENCODING_GZIP or ENCODING_ZSTD). Returns 0, DIRAUTH_ERR_NOMEM,
 * DIRAUTH_ERR_INTERNAL (another encoding). */
int compress_stream_new(enum content_encoding encoding, struct compress_stream **out);

/* Compresses len bytes, handing what is ready to sink. Returns 0, the sink's error,
 * DIRAUTH_ERR_NOMEM, DIRAUTH_ERR_INTERNAL. */
int compress_stream_write(struct compress_stream *stream, const uint8_t *data, size_t len, compress_sink sink,
                          void *context);

/* Ends the stream, handing the rest to sink, and frees it. Returns as compress_stream_write. */
int compress_stream_finish(struct compress_stream *stream, compress_sink sink, void *context);

/* Frees an unfinished stream. Accepts NULL. */
void compress_stream_free(struct compress_stream *stream);

/* The most bytes encoding can turn len input bytes into (zstd's and zlib's bounds, and the gzip
 * wrapper). Saturates at SIZE_MAX. */
size_t compress_bound(enum content_encoding encoding, size_t len);

/* Decompresses into out, refusing output beyond max_output (DIRAUTH_ERR_BOUNDS), a ratio beyond
 * the guard (DIRAUTH_ERR_BOUNDS), corrupt or truncated input or trailing bytes
 * (DIRAUTH_ERR_SYNTAX). */
int compress_decode(enum content_encoding encoding, const uint8_t *data, size_t len, size_t max_output,
                    struct buffer *out);

/* The longest Accept-Encoding value compress_negotiate reads: as long as a whole request head may
 * be (server/http/framing.h, HTTP_HEAD_MAX). */
#define COMPRESS_ACCEPT_MAX 16384

/* Picks the best encoding the client accepts from an Accept-Encoding header value (may be
 * NULL): zstd, then gzip, then identity; honours q=0, a coding listed twice taking its last
 * weight. The whole value is read, in one pass, so what follows a refusal can change the answer
 * only by naming a coding again. Returns ENCODING_COUNT when the client refuses all three
 * (identity;q=0 and no other), and for a value longer than COMPRESS_ACCEPT_MAX bytes, which is
 * not read: nothing is agreed with it. */
enum content_encoding compress_negotiate(const char *accept_encoding);

#endif
