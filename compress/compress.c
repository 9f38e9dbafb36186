/*
 * compress.c: zstd and gzip encoding of snapshot bodies, bounded decoding, and the choice of an
 * encoding from a client's Accept-Encoding header.
 *
 * Encoding happens once per epoch on data we produced, so it favours ratio over speed and does
 * the whole input in one call. Decoding reads bytes from the network, so it streams: output is
 * produced in chunks of COMPRESS_CHUNK bytes, and after every chunk the output so far is checked
 * against max_output and against COMPRESS_MAX_RATIO times the input consumed so far. A bomb is
 * therefore refused after at most one chunk past a bound, never after it has been expanded.
 *
 * Exactly one zstd frame or one gzip member is accepted, with nothing after it: a second frame
 * or trailing bytes would be data that the signature over the body did not describe.
 */
#include "compress/compress.h"

#include "base/error.h"

#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

#define COMPRESS_CHUNK               (64 * 1024)
/* Bodies are compressed once per epoch, inside the epoch: the levels trade a little size for
 * building a snapshot of a million records in seconds rather than minutes. */
#define COMPRESS_ZSTD_LEVEL          9
#define COMPRESS_ZSTD_FAST_LEVEL     3 /* compress_encode_fast */
#define COMPRESS_GZIP_LEVEL          6
/* 8 MiB: the window the encoder is held to; larger windows would make the decoder allocate more. */
#define COMPRESS_ZSTD_WINDOW_LOG_MAX 23

const char *content_encoding_name(enum content_encoding encoding)
{
	switch (encoding) {
	case ENCODING_IDENTITY:
		return "identity";
	case ENCODING_GZIP:
		return "gzip";
	case ENCODING_ZSTD:
		return "zstd";
	case ENCODING_COUNT:
		break;
	}
	return "unknown";
}

struct compress_stream {
	enum content_encoding encoding;
	ZSTD_CCtx *zstd;
	z_stream gzip;
	bool gzip_ready;
	uint8_t out[COMPRESS_CHUNK];
};

static int stream_new(enum content_encoding encoding, int zstd_level, struct compress_stream **out)
{
	*out = NULL;
	if (encoding != ENCODING_GZIP && encoding != ENCODING_ZSTD)
		return DIRAUTH_ERR_INTERNAL;
	struct compress_stream *s = calloc(1, sizeof *s);
	if (!s)
		return DIRAUTH_ERR_NOMEM;
	s->encoding = encoding;
	if (encoding == ENCODING_ZSTD) {
		/* One frame with a checksum, so that a decoder can detect corruption. */
		s->zstd = ZSTD_createCCtx();
		if (!s->zstd) {
			free(s);
			return DIRAUTH_ERR_NOMEM;
		}
		if (ZSTD_isError(ZSTD_CCtx_setParameter(s->zstd, ZSTD_c_compressionLevel, zstd_level)) ||
		    ZSTD_isError(ZSTD_CCtx_setParameter(s->zstd, ZSTD_c_checksumFlag, 1)) ||
		    ZSTD_isError(
		        ZSTD_CCtx_setParameter(s->zstd, ZSTD_c_windowLog, COMPRESS_ZSTD_WINDOW_LOG_MAX))) {
			compress_stream_free(s);
			return DIRAUTH_ERR_INTERNAL;
		}
	} else {
		int zrc =
		    deflateInit2(&s->gzip, COMPRESS_GZIP_LEVEL, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
		if (zrc != Z_OK) {
			free(s);
			return zrc == Z_MEM_ERROR ? DIRAUTH_ERR_NOMEM : DIRAUTH_ERR_INTERNAL;
		}
		s->gzip_ready = true;
	}
	*out = s;
	return 0;
}

void compress_stream_free(struct compress_stream *s)
{
	if (!s)
		return;
	ZSTD_freeCCtx(s->zstd);
	if (s->gzip_ready)
		deflateEnd(&s->gzip);
	free(s);
}

/* Feeds data (all of it) with the given end directive, draining output to sink. */
static int stream_zstd(struct compress_stream *s, const uint8_t *data, size_t len, ZSTD_EndDirective end,
                       compress_sink sink, void *context)
{
	ZSTD_inBuffer in = {data, len, 0};
	for (;;) {
		ZSTD_outBuffer output = {s->out, sizeof s->out, 0};
		size_t left = ZSTD_compressStream2(s->zstd, &output, &in, end);
		if (ZSTD_isError(left))
			return ZSTD_getErrorCode(left) == ZSTD_error_memory_allocation ? DIRAUTH_ERR_NOMEM
			                                                               : DIRAUTH_ERR_INTERNAL;
		if (output.pos) {
			int rc = sink(context, s->out, output.pos);
			if (rc)
				return rc;
		}
		if (end == ZSTD_e_continue ? in.pos == in.size : left == 0)
			return 0;
	}
}

static int stream_gzip(struct compress_stream *s, const uint8_t *data, size_t len, int flush,
                       compress_sink sink, void *context)
{
	/* zlib counts in uInt, so the input is fed in pieces that fit. */
	do {
		size_t feed = len < UINT_MAX ? len : UINT_MAX;
		s->gzip.next_in = (Bytef *)(uintptr_t)data;
		s->gzip.avail_in = (uInt)feed;
		data += feed;
		len -= feed;
		int step = len == 0 ? flush : Z_NO_FLUSH;
		int zrc;
		do {
			s->gzip.next_out = s->out;
			s->gzip.avail_out = sizeof s->out;
			zrc = deflate(&s->gzip, step);
			if (zrc == Z_STREAM_ERROR)
				return DIRAUTH_ERR_INTERNAL;
			size_t made = sizeof s->out - s->gzip.avail_out;
			if (made) {
				int rc = sink(context, s->out, made);
				if (rc)
					return rc;
			}
		} while (step == Z_FINISH ? zrc != Z_STREAM_END
		                          : s->gzip.avail_out == 0 || s->gzip.avail_in > 0);
	} while (len > 0);
	return 0;
}

int compress_stream_write(struct compress_stream *s, const uint8_t *data, size_t len, compress_sink sink,
                          void *context)
{
	if (len == 0)
		return 0;
	if (s->encoding == ENCODING_ZSTD)
		return stream_zstd(s, data, len, ZSTD_e_continue, sink, context);
	return stream_gzip(s, data, len, Z_NO_FLUSH, sink, context);
}

int compress_stream_finish(struct compress_stream *s, compress_sink sink, void *context)
{
	int rc = s->encoding == ENCODING_ZSTD
	             ? stream_zstd(s, (const uint8_t *)"", 0, ZSTD_e_end, sink, context)
	             : stream_gzip(s, (const uint8_t *)"", 0, Z_FINISH, sink, context);
	compress_stream_free(s);
	return rc;
}

size_t compress_bound(enum content_encoding encoding, size_t len)
{
	switch (encoding) {
	case ENCODING_ZSTD: {
		size_t bound = ZSTD_compressBound(len);
		return ZSTD_isError(bound) ? SIZE_MAX : bound;
	}
	case ENCODING_GZIP:
		/* zlib's bound for the deflate stream, plus the gzip header and trailer (18 bytes). */
		if (len > (size_t)ULONG_MAX - 4096)
			return SIZE_MAX;
		return (size_t)compressBound((uLong)len) + 18;
	default:
		return len;
	}
}

static int append_to_buffer(void *context, const uint8_t *data, size_t len)
{
	return buffer_append(context, data, len);
}

int compress_stream_new(enum content_encoding encoding, struct compress_stream **out)
{
	return stream_new(encoding, COMPRESS_ZSTD_LEVEL, out);
}

static int encode_at(enum content_encoding encoding, int zstd_level, const uint8_t *data, size_t len,
                     struct buffer *out)
{
	if (encoding == ENCODING_IDENTITY)
		return buffer_append(out, data, len);
	struct compress_stream *stream = NULL;
	size_t start = out->len;
	int rc = stream_new(encoding, zstd_level, &stream);
	if (rc)
		return rc;
	if (encoding == ENCODING_ZSTD && ZSTD_isError(ZSTD_CCtx_setPledgedSrcSize(stream->zstd, len))) {
		compress_stream_free(stream);
		return DIRAUTH_ERR_INTERNAL;
	}
	rc = compress_stream_write(stream, data, len, append_to_buffer, out);
	if (rc == 0)
		rc = compress_stream_finish(stream, append_to_buffer, out);
	else
		compress_stream_free(stream);
	if (rc)
		out->len = start;
	if (out->data)
		out->data[out->len] = 0;
	return rc;
}

int compress_encode(enum content_encoding encoding, const uint8_t *data, size_t len, struct buffer *out)
{
	return encode_at(encoding, COMPRESS_ZSTD_LEVEL, data, len, out);
}

int compress_encode_fast(enum content_encoding encoding, const uint8_t *data, size_t len, struct buffer *out)
{
	return encode_at(encoding, COMPRESS_ZSTD_FAST_LEVEL, data, len, out);
}

/*
 * The guards, checked after every chunk of output: produced bytes so far against max_output,
 * and (past the grace) against the ratio to the input consumed so far.
 */
static int compress_check_bounds(size_t produced, size_t consumed, size_t max_output)
{
	if (produced > max_output)
		return DIRAUTH_ERR_BOUNDS;
	if (produced > COMPRESS_RATIO_GRACE && consumed <= SIZE_MAX / COMPRESS_MAX_RATIO &&
	    produced > consumed * COMPRESS_MAX_RATIO)
		return DIRAUTH_ERR_BOUNDS;
	return 0;
}

/* Room for the next chunk: at most one byte past max_output, so that an overflow shows. */
static size_t compress_chunk_size(size_t produced, size_t max_output)
{
	size_t left = max_output - produced; /* produced <= max_output here */
	return left < COMPRESS_CHUNK ? left + 1 : COMPRESS_CHUNK;
}

static int decompress_zstd(const uint8_t *data, size_t len, size_t max_output, struct buffer *out)
{
	ZSTD_DCtx *context;
	ZSTD_inBuffer input = {data, len, 0};
	size_t produced = 0, remaining;
	int rc;

	/* One real frame: not a skippable frame, which would decode to nothing. */
	if (len < 4 || ((uint32_t)data[0] | (uint32_t)data[1] << 8 | (uint32_t)data[2] << 16 |
	                (uint32_t)data[3] << 24) != ZSTD_MAGICNUMBER)
		return DIRAUTH_ERR_SYNTAX;
	context = ZSTD_createDCtx();
	if (!context)
		return DIRAUTH_ERR_NOMEM;
	if (ZSTD_isError(
	        ZSTD_DCtx_setParameter(context, ZSTD_d_windowLogMax, COMPRESS_ZSTD_WINDOW_LOG_MAX))) {
		rc = DIRAUTH_ERR_INTERNAL;
		goto cleanup;
	}
	for (;;) {
		size_t chunk = compress_chunk_size(produced, max_output);
		rc = buffer_reserve(out, chunk);
		if (rc)
			goto cleanup;
		ZSTD_outBuffer output = {out->data + out->len, chunk, 0};
		remaining = ZSTD_decompressStream(context, &output, &input);
		out->len += output.pos;
		produced += output.pos;
		if (ZSTD_isError(remaining)) {
			ZSTD_ErrorCode code = ZSTD_getErrorCode(remaining);
			if (code == ZSTD_error_memory_allocation)
				rc = DIRAUTH_ERR_NOMEM;
			else if (code == ZSTD_error_frameParameter_windowTooLarge)
				rc = DIRAUTH_ERR_BOUNDS;
			else
				rc = DIRAUTH_ERR_SYNTAX;
			goto cleanup;
		}
		rc = compress_check_bounds(produced, input.pos, max_output);
		if (rc)
			goto cleanup;
		if (remaining == 0)
			break; /* the frame is complete and fully flushed */
		if (input.pos == input.size && output.pos < output.size) {
			rc = DIRAUTH_ERR_SYNTAX; /* the decoder wants input that is not there */
			goto cleanup;
		}
	}
	rc = input.pos == input.size ? 0 : DIRAUTH_ERR_SYNTAX;
cleanup:
	ZSTD_freeDCtx(context);
	return rc;
}

static int decompress_gzip(const uint8_t *data, size_t len, size_t max_output, struct buffer *out)
{
	z_stream stream;
	size_t produced = 0, unfed = len;
	int rc, zrc;

	memset(&stream, 0, sizeof stream);
	zrc = inflateInit2(&stream, 15 + 16);
	if (zrc != Z_OK)
		return zrc == Z_MEM_ERROR ? DIRAUTH_ERR_NOMEM : DIRAUTH_ERR_INTERNAL;
	stream.next_in = (Bytef *)(uintptr_t)data;
	for (;;) {
		if (stream.avail_in == 0 && unfed > 0) {
			size_t feed = unfed < UINT_MAX ? unfed : UINT_MAX;
			stream.avail_in = (uInt)feed;
			unfed -= feed;
		}
		size_t chunk = compress_chunk_size(produced, max_output);
		rc = buffer_reserve(out, chunk);
		if (rc)
			goto cleanup;
		stream.next_out = out->data + out->len;
		stream.avail_out = (uInt)chunk;
		zrc = inflate(&stream, Z_NO_FLUSH);
		size_t written = chunk - stream.avail_out;
		out->len += written;
		produced += written;
		if (zrc == Z_MEM_ERROR) {
			rc = DIRAUTH_ERR_NOMEM;
			goto cleanup;
		}
		if (zrc == Z_NEED_DICT || zrc == Z_DATA_ERROR || zrc == Z_STREAM_ERROR) {
			rc = DIRAUTH_ERR_SYNTAX;
			goto cleanup;
		}
		rc = compress_check_bounds(produced, len - unfed - stream.avail_in, max_output);
		if (rc)
			goto cleanup;
		if (zrc == Z_STREAM_END)
			break;
		/* Room left to write but nothing left to read: the input ended inside the stream. */
		if (stream.avail_in == 0 && unfed == 0 && stream.avail_out > 0) {
			rc = DIRAUTH_ERR_SYNTAX;
			goto cleanup;
		}
	}
	rc = stream.avail_in == 0 && unfed == 0 ? 0 : DIRAUTH_ERR_SYNTAX;
cleanup:
	inflateEnd(&stream);
	return rc;
}

int compress_decode(enum content_encoding encoding, const uint8_t *data, size_t len, size_t max_output,
                    struct buffer *out)
{
	size_t start = out->len;
	int rc;

	switch (encoding) {
	case ENCODING_IDENTITY:
		rc = len > max_output ? DIRAUTH_ERR_BOUNDS : buffer_append(out, data, len);
		break;
	case ENCODING_GZIP:
		rc = decompress_gzip(data, len, max_output, out);
		break;
	case ENCODING_ZSTD:
		rc = decompress_zstd(data, len, max_output, out);
		break;
	default:
		rc = DIRAUTH_ERR_INTERNAL;
		break;
	}
	/* On failure the caller gets its buffer back as it was, not half a body. */
	if (rc)
		out->len = start;
	if (out->data)
		out->data[out->len] = 0;
	return rc;
}

/* Accept-Encoding parsing (RFC 9110 12.5.3). */

static int negotiate_is_space(char c)
{
	return c == ' ' || c == '\t';
}

static int negotiate_lower(char c)
{
	return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

static int negotiate_equals(const char *text, size_t len, const char *word)
{
	size_t n = strlen(word);
	if (len != n)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (negotiate_lower(text[i]) != word[i])
			return 0;
	return 1;
}

/* A qvalue: "0" ["." 0*3DIGIT] or "1" ["." 0*3("0")], as thousandths. -1 when malformed. */
static int negotiate_qvalue(const char *text, size_t len)
{
	int value;
	if (len == 0 || len > 5 || (text[0] != '0' && text[0] != '1'))
		return -1;
	value = (text[0] - '0') * 1000;
	if (len == 1)
		return value;
	if (text[1] != '.')
		return -1;
	int scale = 100;
	for (size_t i = 2; i < len; i++, scale /= 10) {
		if (text[i] < '0' || text[i] > '9')
			return -1;
		value += (text[i] - '0') * scale;
	}
	return value > 1000 ? -1 : value;
}

enum negotiate_entry { NEGOTIATE_IDENTITY, NEGOTIATE_GZIP, NEGOTIATE_ZSTD, NEGOTIATE_ANY, NEGOTIATE_OTHER };

static enum negotiate_entry negotiate_coding(const char *text, size_t len)
{
	if (negotiate_equals(text, len, "identity"))
		return NEGOTIATE_IDENTITY;
	if (negotiate_equals(text, len, "gzip") || negotiate_equals(text, len, "x-gzip"))
		return NEGOTIATE_GZIP;
	if (negotiate_equals(text, len, "zstd"))
		return NEGOTIATE_ZSTD;
	if (negotiate_equals(text, len, "*"))
		return NEGOTIATE_ANY;
	return NEGOTIATE_OTHER;
}

/*
 * Parses one list element "coding *( OWS ; OWS name = value )" of len bytes, sets *coding and
 * returns its weight in thousandths (1000 without q), or -1 when the element is malformed and so
 * ignored. Parameters other than q are skipped.
 */
static int negotiate_element(const char *text, size_t len, enum negotiate_entry *coding)
{
	size_t pos = 0, start;
	int weight = 1000;

	while (pos < len && negotiate_is_space(text[pos]))
		pos++;
	start = pos;
	while (pos < len && text[pos] != ';' && !negotiate_is_space(text[pos]))
		pos++;
	if (pos == start)
		return -1;
	*coding = negotiate_coding(text + start, pos - start);
	for (;;) {
		while (pos < len && negotiate_is_space(text[pos]))
			pos++;
		if (pos == len)
			return weight;
		if (text[pos] != ';')
			return -1;
		pos++;
		while (pos < len && negotiate_is_space(text[pos]))
			pos++;
		size_t name = pos;
		while (pos < len && text[pos] != '=' && text[pos] != ';' && !negotiate_is_space(text[pos]))
			pos++;
		size_t name_len = pos - name;
		if (pos == len || text[pos] != '=' || name_len == 0)
			return -1;
		pos++;
		size_t value = pos;
		while (pos < len && text[pos] != ';' && !negotiate_is_space(text[pos]))
			pos++;
		if (negotiate_equals(text + name, name_len, "q")) {
			weight = negotiate_qvalue(text + value, pos - value);
			if (weight < 0)
				return -1;
		}
	}
}

enum content_encoding compress_negotiate(const char *accept_encoding)
{
	/* Weight of each coding as last listed, -1 when not listed. */
	int weight[NEGOTIATE_OTHER] = {-1, -1, -1, -1};
	size_t len;

	if (!accept_encoding)
		return ENCODING_IDENTITY;
	/* Past the bound nothing is agreed: what was left unread could refuse identity too, and no
	 * part of a list decides alone what the whole says. */
	len = strnlen(accept_encoding, COMPRESS_ACCEPT_MAX + 1);
	if (len > COMPRESS_ACCEPT_MAX)
		return ENCODING_COUNT;
	/* One pass over the whole list: each byte is looked at a bounded number of times. */
	for (size_t pos = 0; pos <= len;) {
		size_t end = pos;
		while (end < len && accept_encoding[end] != ',')
			end++;
		enum negotiate_entry coding = NEGOTIATE_OTHER;
		int w = negotiate_element(accept_encoding + pos, end - pos, &coding);
		if (w >= 0 && coding != NEGOTIATE_OTHER)
			weight[coding] = w;
		pos = end + 1;
	}
	/* A coding not listed takes the weight of "*"; identity, unless excluded, is always fine. */
	int any = weight[NEGOTIATE_ANY];
	int zstd = weight[NEGOTIATE_ZSTD] >= 0 ? weight[NEGOTIATE_ZSTD] : any;
	int gzip = weight[NEGOTIATE_GZIP] >= 0 ? weight[NEGOTIATE_GZIP] : any;
	int identity = weight[NEGOTIATE_IDENTITY] >= 0 ? weight[NEGOTIATE_IDENTITY] : any != 0;
	if (zstd > 0)
		return ENCODING_ZSTD;
	if (gzip > 0)
		return ENCODING_GZIP;
	if (identity > 0)
		return ENCODING_IDENTITY;
	return ENCODING_COUNT;
}
