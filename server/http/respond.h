/*
 * respond.h: building and queuing the answers of the HTTP API (internal to server/http).
 *
 * Every error answer is the JSON object of api_error.h, served with Cache-Control: no-store (a
 * 404 for an epoch not yet published would otherwise be kept by heuristic freshness and served
 * after publication), with Allow on a 405 and Vary: Accept-Encoding on every answer of a path
 * whose answers depend on that header.
 *
 * Bytes made for one request (a vote, the signatures held, a registration note, the evidence, a
 * statement) go compressed to a client that takes zstd: the authorities of a set pull them from
 * each other across continents. The encoding is chosen by compress_negotiate, the choice the
 * snapshot bodies' read path makes, with its 406 when nothing is acceptable; such bytes are
 * compressed per answer, so only zstd is made for them, and a client whose best choice is gzip
 * gets them as they are.
 */
#ifndef DIRAUTH_SERVER_HTTP_RESPOND_H
#define DIRAUTH_SERVER_HTTP_RESPOND_H

#include "base/buffer.h"
#include "compress/compress.h"
#include "server/api/api_error.h"

#include <microhttpd.h>

#include <stddef.h>

/* A body shorter than this goes as it is: its compressed form would save less than it costs. */
#define RESPOND_COMPRESS_MIN 1024

/* What a route adds to its error answers: the methods it allows (for a 405, NULL: none) and
 * whether its answers vary with Accept-Encoding. */
struct respond_route {
	const char *allow;
	int vary;
};

/* The encoding the request's Accept-Encoding chooses (compress_negotiate): its fields joined into
 * one list in the order they came (RFC 9110 5.3: a recipient may join field lines of one name with
 * commas without changing their meaning), so that a second field is heard like the rest of the
 * first. ENCODING_COUNT: none is acceptable (406). */
enum content_encoding respond_negotiate(struct MHD_Connection *connection);

/* Queues response with status and drops the caller's reference. A NULL response is MHD_NO. */
enum MHD_Result respond_queue_and_destroy(struct MHD_Connection *connection, unsigned status,
                                          struct MHD_Response *response);

/* A response whose body is body's bytes, taken rather than copied (the response frees them),
 * with Content-Type content_type and Cache-Control cache_control (NULL: none); NULL when memory
 * runs out. body is left empty either way. */
struct MHD_Response *respond_response_taking(struct buffer *body, const char *content_type,
                                             const char *cache_control);

/* Queues a copy of data (len bytes) with status and Content-Type content_type. */
enum MHD_Result respond_bytes(struct MHD_Connection *connection, unsigned status, const char *content_type,
                              const void *data, size_t len);

/* Queues a copy of data (len bytes) with status, Content-Type content_type, Cache-Control
 * cache_control (NULL: none) and Vary: Accept-Encoding, encoded as the request's Accept-Encoding
 * allows (respond_negotiate): as zstd when that is the choice and len is at least
 * RESPOND_COMPRESS_MIN (Content-Encoding: zstd), else as it is; or, when the request accepts none
 * of zstd, gzip and identity, the 406 not_acceptable error answer with what route adds. */
enum MHD_Result respond_bytes_negotiated(struct MHD_Connection *connection, const struct respond_route *route,
                                         unsigned status, const char *content_type, const char *cache_control,
                                         const void *data, size_t len);

/* Queues the JSON error answer of error with detail (NULL: its default sentence) and what
 * route adds (NULL: nothing). */
enum MHD_Result respond_error(struct MHD_Connection *connection, const struct respond_route *route,
                              enum api_error error, const char *detail);

/* respond_error with Connection: close: for a request whose framing was refused, after which
 * nothing more on the connection can be trusted to start where dirauthd thinks it does. */
enum MHD_Result respond_error_closing(struct MHD_Connection *connection, enum api_error error,
                                      const char *detail);

/* 1 when etag matches the If-None-Match value (NULL: no header) by weak comparison (RFC 9110
 * 13.1.2): "*" or a list of entity tags, each maybe W/-prefixed. Else 0. */
int respond_etag_matches(const char *if_none_match, const char *etag);

#endif
