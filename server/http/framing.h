/*
 * framing.h: the rules of HTTP/1.1 message framing that dirauthd enforces itself (RFC 9112),
 * deny-closed: a request whose framing is ambiguous is refused and its connection closed, so
 * that dirauthd and whatever stands in front of it can never disagree about where a request
 * ends (request smuggling) or which host it is for.
 *
 * Two entry points share one judgement:
 *   - http_head_parse reads a raw request head (request line and header fields, up to the blank
 *     line) as bytes, with its own bounds. The connection guard runs it on the first request of
 *     every connection before libmicrohttpd sees a byte, because libmicrohttpd 0.9.75 answers a
 *     malformed Content-Length itself, with a doubled header block.
 *   - http_framing_check judges a request's version and header fields, wherever they were
 *     parsed: the guard calls it through http_head_parse, and the access handler calls it on
 *     libmicrohttpd's parsed fields for every request (later requests of a kept-alive
 *     connection included). libmicrohttpd takes a bare LF for a line end and joins a folded
 *     line; on a later request the access handler finds both from where its parse left the
 *     fields in its read buffer (http.c, head_has_crlf_lines_only).
 *
 * Refused: a header field name that is not a token (a space before the colon above all), a
 * line folded onto the previous one (obs-fold), a bare CR or LF, a request line that is not
 * "METHOD SP target SP HTTP/1.x" with a target in origin form or absolute form
 * (http_target_path); Content-Length together with Transfer-Encoding, Content-Length
 * twice, a Content-Length that is not 1*DIGIT (400); a Transfer-Encoding other than exactly one
 * "chunked", or any in HTTP/1.0 (501); an HTTP/1.1 request without exactly one Host (400); a POST
 * with neither length nor chunked coding (411); a head over HTTP_HEAD_MAX bytes or
 * HTTP_HEAD_MAX_FIELDS fields (431); a Content-Length past HTTP_LENGTH_MAX, however many digits
 * (413), judged after every other rule.
 *
 * A length past HTTP_LENGTH_MAX is more than any route takes, so the access handler would answer
 * it 413 too; it is refused here because libmicrohttpd 0.9.75 cannot be handed it: it reads
 * 2^64 - 1 as "length unknown" and answers a longer one itself (its own 413 page). A length up
 * to HTTP_LENGTH_MAX is judged against its route's bound by the access handler (http.c), also
 * 413.
 */
#ifndef DIRAUTH_SERVER_HTTP_FRAMING_H
#define DIRAUTH_SERVER_HTTP_FRAMING_H

#include "server/api/api_error.h"

#include <stddef.h>
#include <stdint.h>

#define HTTP_HEAD_MAX           16384 /* bytes of a request head, its blank line included */
#define HTTP_HEAD_MAX_FIELDS    100
#define HTTP_LENGTH_MAX         INT64_MAX /* past every route's bound: 413 whatever the route */
#define HTTP_FRAMING_DETAIL_MAX 160

/* A span of the input (not NUL-terminated). */
struct http_span {
	const char *data;
	size_t len;
};

struct http_field {
	struct http_span name;
	struct http_span value; /* without leading and trailing spaces or tabs */
};

/* What a request's framing says, once judged acceptable. */
struct http_framing {
	int http_1_1;    /* 1 for HTTP/1.1, 0 for HTTP/1.0 */
	int has_length;  /* a Content-Length was given */
	uint64_t length; /* its value, at most HTTP_LENGTH_MAX */
	int chunked;     /* Transfer-Encoding: chunked */
};

/* A refusal: the API error (which fixes the status) and a sentence naming the rule. */
struct http_framing_verdict {
	enum api_error error; /* API_ERROR_NONE when acceptable */
	char detail[HTTP_FRAMING_DETAIL_MAX];
};

/* Judges the version ("HTTP/1.1" or "HTTP/1.0"), method and header fields of a request.
 * Returns 0 with *framing filled, or -1 with the refusal in *verdict. */
int http_framing_check(struct http_span version, struct http_span method, const struct http_field *fields,
                       size_t field_count, struct http_framing *framing,
                       struct http_framing_verdict *verdict);

/* The sentence of a refused request target. */
#define HTTP_TARGET_REFUSED "The request target is neither a path nor an absolute http or https URI."

/* The path a request target names (RFC 9112 3.2): the origin form "/path[?query]" names its path;
 * the absolute form "http://authority/path[?query]" (or https, the scheme in any case), which a
 * server must accept (3.2.2), names the path after its authority, whatever the authority and the
 * Host field say, as dirauthd serves every host alike. An authority must name a host and hold no
 * userinfo ("@"); an absolute target without a path names "/", given as an empty *path. The query
 * is not part of the path. Returns 0 with *path inside target (its bytes not checked: percent
 * escapes and the rest are the router's to refuse), or -1 for any other target (the asterisk
 * form, the authority form, another scheme). */
int http_target_path(struct http_span target, struct http_span *path);

/* A parsed request head; spans point into the parsed bytes. */
struct http_head {
	struct http_span method;
	struct http_span target;
	struct http_span path; /* what the target names (http_target_path), inside target */
	struct http_span version;
	struct http_field fields[HTTP_HEAD_MAX_FIELDS];
	size_t field_count;
	size_t head_len; /* bytes of the head, its final blank line included */
	struct http_framing framing;
};

/* Parses the request head at the start of buf (len bytes, which may hold more than the head).
 * Returns 1 when the head is not complete yet (no blank line in the first len bytes, len below
 * HTTP_HEAD_MAX); 0 with *head filled when it is complete and acceptable (http_framing_check
 * included); -1 with the refusal in *verdict. */
int http_head_parse(const uint8_t *buf, size_t len, struct http_head *head,
                    struct http_framing_verdict *verdict);

#endif
