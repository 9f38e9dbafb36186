/*
 * test_http_server.h: the pieces every libmicrohttpd server in the unit tests repeats, for
 * check_net (an origin that fails, redirects and stalls on purpose) and check_peers (a fake
 * authority): an answer with at most one header, a request body collected over the calls that
 * deliver it, the callback that frees it, and a listener that accepts and never answers.
 *
 * Everything aborts the test (ck_abort) when it cannot set up, like test_support.h.
 */
#ifndef DIRAUTH_TEST_HTTP_SERVER_H
#define DIRAUTH_TEST_HTTP_SERVER_H

#include "base/buffer.h"

#include <microhttpd.h>
#include <stddef.h>

/* Queues status with a copy of body (len bytes) and, when header is neither NULL nor empty, the
 * header field header: value. Returns libmicrohttpd's result. */
enum MHD_Result test_http_server_answer(struct MHD_Connection *connection, unsigned status, const void *body,
                                        size_t len, const char *header, const char *value);

/* The start of an access handler, whose arguments it takes: the request body arrives over several
 * calls. Returns 1 with *body set once it is all there (the handler answers then); 0 when the
 * handler must return *result at once: MHD_YES on the first call (never answered there, after
 * which libmicrohttpd 0.9.75 would close the connection) and while data comes, MHD_NO when memory
 * runs out. The body is owned by *request_context, freed by test_http_server_request_done. */
int test_http_server_body(void **request_context, const char *upload_data, size_t *upload_data_size,
                          struct buffer **body, enum MHD_Result *result);

/* The MHD_OPTION_NOTIFY_COMPLETED callback that frees the body of test_http_server_body. */
void test_http_server_request_done(void *context, struct MHD_Connection *connection, void **request_context,
                                   enum MHD_RequestTerminationCode code);

/* A TCP socket on 127.0.0.1 that listens (the kernel accepts connections into its backlog of
 * backlog) and never answers: its descriptor, which the caller closes; *port gets its port. */
int test_http_server_silent(int backlog, unsigned *port);

#endif
