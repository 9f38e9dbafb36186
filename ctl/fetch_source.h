/*
 * fetch_source.h: where the answers to a fetch's requests come from (fetch.h).
 *
 * libdirauth names each path a fetch needs; a source answers it. ctl_fetch_request_of reads which
 * document a path is (for the labels of messages and for the answer that fits); a source gives
 * the answer (an HTTP status, its Content-Encoding and its bytes) or fails in words, as the
 * command reports it. Two sources:
 *
 *   network  ctl_fetch_run's: each path asked of the server through net/, with the run's
 *            kept-alive connections (net/pool.h), bounded by what the library reads at that step;
 *            the namespace's paths carry the capability's Authorization header, /v1/certificates
 *            never; the body and the diff ask for "zstd, gzip". A 404 is an answer for a link (no
 *            snapshot that epoch), a diff (none offered) and the log's proof (epoch_not_in_log or
 *            epoch_not_in_tree: the log has not caught up, 75 "try again later"; any other 404 is
 *            76); a diff that fails in any other way is no answer (status 0), so that the library
 *            asks for the whole body;
 *   memory   ctl_fetch_verify_and_store's: each path answered from a struct ctl_fetch_input (the
 *            links by epoch, 404 for the others; no diff; a consistency proof missing is refused,
 *            65), and an answer larger than the step reads is refused as a download would be
 *            (65, "response larger than N bytes").
 */
#ifndef DIRAUTH_CTL_FETCH_SOURCE_H
#define DIRAUTH_CTL_FETCH_SOURCE_H

#include "ctl/fetch.h"
#include "ctl/report.h"
#include "base/buffer.h"
#include "net/client.h"
#include "net/pool.h"

#include <stddef.h>
#include <stdint.h>

enum ctl_fetch_request_kind {
	CTL_FETCH_REQUEST_CERTIFICATES,
	CTL_FETCH_REQUEST_LATEST,
	CTL_FETCH_REQUEST_LINK,
	CTL_FETCH_REQUEST_LOG_PROOF,
	CTL_FETCH_REQUEST_CONSISTENCY,
	CTL_FETCH_REQUEST_DIFF,
	CTL_FETCH_REQUEST_BODY,
	CTL_FETCH_REQUEST_OTHER
};

/* A path the library asked for, read. */
struct ctl_fetch_request {
	const char *path; /* as the library named it, from "/v1/" */
	enum ctl_fetch_request_kind kind;
	uint64_t epoch;          /* link, log proof, diff, body */
	uint64_t old_size, size; /* consistency */
	char label[64];          /* what it is, in messages: "latest header", "history: epoch 8", ... */
};

/* Reads path (the library's, for namespace_name) into *r; a path of no known shape is
 * CTL_FETCH_REQUEST_OTHER, labelled by itself. */
void ctl_fetch_request_of(const char *path, const char *namespace_name, struct ctl_fetch_request *r);

/* An answer to feed the library; the bytes are the source's until its next answer. */
struct ctl_fetch_answer {
	long status; /* 0: none came */
	const char *encoding;
	const uint8_t *body;
	size_t len;
};

/* Answers r within max_bytes into *out and returns 0, or fails with the refusal in report. */
struct ctl_fetch_source {
	int (*answer)(struct ctl_fetch_source *source, const char *namespace_name,
	              const struct ctl_fetch_request *r, size_t max_bytes, struct ctl_fetch_answer *out,
	              struct ctl_report *report);
};

struct ctl_fetch_network_source {
	struct ctl_fetch_source source;
	const struct ctl_fetch_options *options; /* the server, and the capability */
	size_t base_len;
	struct net_pool *pool;
	struct net_response response;
	struct buffer url;
};

/* The network source of options (borrowed); release it with ctl_fetch_network_source_release. */
void ctl_fetch_network_source_init(struct ctl_fetch_network_source *n,
                                   const struct ctl_fetch_options *options);
void ctl_fetch_network_source_release(struct ctl_fetch_network_source *n);

struct ctl_fetch_memory_source {
	struct ctl_fetch_source source;
	const struct ctl_fetch_input *input;
};

/* The memory source of input (borrowed); it holds nothing to release. */
void ctl_fetch_memory_source_init(struct ctl_fetch_memory_source *m, const struct ctl_fetch_input *input);

#endif
