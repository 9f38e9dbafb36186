/*
 * test_http_server.c: the shared pieces of the unit tests' libmicrohttpd servers
 * (test_http_server.h).
 */
#include "test_http_server.h"

#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

enum MHD_Result test_http_server_answer(struct MHD_Connection *connection, unsigned status, const void *body,
                                        size_t len, const char *header, const char *value)
{
	struct MHD_Response *response =
	    MHD_create_response_from_buffer(len, (void *)(uintptr_t)body, MHD_RESPMEM_MUST_COPY);
	enum MHD_Result result;

	if (response == NULL)
		return MHD_NO;
	if (header != NULL && header[0] != '\0')
		MHD_add_response_header(response, header, value);
	result = MHD_queue_response(connection, status, response);
	MHD_destroy_response(response);
	return result;
}

int test_http_server_body(void **request_context, const char *upload_data, size_t *upload_data_size,
                          struct buffer **body, enum MHD_Result *result)
{
	struct buffer *posted = *request_context;

	*result = MHD_YES;
	if (posted == NULL) {
		posted = malloc(sizeof(*posted));
		if (posted == NULL) {
			*result = MHD_NO;
			return 0;
		}
		buffer_init(posted);
		*request_context = posted;
		return 0;
	}
	if (*upload_data_size > 0) {
		if (buffer_append(posted, upload_data, *upload_data_size) != 0)
			*result = MHD_NO;
		else
			*upload_data_size = 0;
		return 0;
	}
	*body = posted;
	return 1;
}

void test_http_server_request_done(void *context, struct MHD_Connection *connection, void **request_context,
                                   enum MHD_RequestTerminationCode code)
{
	struct buffer *posted = *request_context;

	(void)context;
	(void)connection;
	(void)code;
	if (posted != NULL) {
		buffer_free(posted);
		free(posted);
		*request_context = NULL;
	}
}

int test_http_server_silent(int backlog, unsigned *port)
{
	struct sockaddr_in address;
	socklen_t address_len = sizeof(address);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	ck_assert_int_ge(fd, 0);
	memset(&address, 0, sizeof(address));
	address.sin_family = AF_INET;
	address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&address, sizeof(address)), 0);
	ck_assert_int_eq(listen(fd, backlog), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&address, &address_len), 0);
	*port = ntohs(address.sin_port);
	return fd;
}
