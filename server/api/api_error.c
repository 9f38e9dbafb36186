/*
 * api_error.c: the table of API error codes, statuses and default sentences, and the JSON
 * error body. One table, so that a code and its status cannot drift apart.
 */
#include "server/api/api_error.h"

#include "base/error.h"

#include <stdio.h>

struct api_error_entry {
	const char *code;
	unsigned status;
	const char *detail;
};

static const struct api_error_entry api_error_table[API_ERROR_COUNT] = {
    [API_ERROR_NONE] = {"none", 200, "No error."},
    [API_ERROR_BODY_TOO_LARGE] = {"body_too_large", 413, "The request body is larger than allowed."},
    [API_ERROR_MALFORMED] = {"malformed", 400, "The request body does not follow its grammar."},
    [API_ERROR_UNKNOWN_NAMESPACE] = {"unknown_namespace", 404, "The namespace is not served here."},
    [API_ERROR_UNKNOWN_PROVIDER] = {"unknown_provider", 403, "The provider key is not enrolled."},
    [API_ERROR_BAD_SIGNATURE] = {"bad_signature", 403, "The provider's signature does not verify."},
    [API_ERROR_NAMESPACE_NOT_ALLOWED] = {"namespace_not_allowed", 403,
                                         "The provider is not enrolled for this namespace."},
    [API_ERROR_CLASS_NOT_ALLOWED] = {"class_not_allowed", 403,
                                     "The provider is not enrolled for this service class."},
    [API_ERROR_TOO_MANY_ENDPOINTS] = {"too_many_endpoints", 413,
                                      "The service has more endpoints than allowed."},
    [API_ERROR_VALIDITY_TOO_LONG] = {"validity_too_long", 422,
                                     "The registration's validity is longer than allowed."},
    [API_ERROR_EXPIRED] = {"expired", 422, "The registration has expired."},
    [API_ERROR_ISSUED_IN_FUTURE] =
        {"issued_in_future", 422,
         "The registration is issued further in the future than the clock skew allows."},
    [API_ERROR_ROLLBACK] = {"rollback", 409,
                            "The sequence is not greater than the highest accepted for this service."},
    [API_ERROR_SERVICE_COLLISION] = {"service_collision", 409,
                                     "The service id belongs to another provider or namespace."},
    [API_ERROR_ENDPOINT_COLLISION] = {"endpoint_collision", 409,
                                      "An endpoint id belongs to another service."},
    [API_ERROR_NOT_FOUND] = {"not_found", 404, "Nothing is published at this path."},
    [API_ERROR_METHOD_NOT_ALLOWED] = {"method_not_allowed", 405, "This method is not allowed on this path."},
    [API_ERROR_NOT_ACCEPTABLE] = {"not_acceptable", 406,
                                  "None of the accepted content encodings is available."},
    [API_ERROR_STORE_FULL] = {"store_full", 507, "The store is full."},
    [API_ERROR_NAMESPACE_FULL] = {"namespace_full", 507,
                                  "The namespace's snapshot would pass its record or size bound."},
    [API_ERROR_UNAVAILABLE] = {"unavailable", 503, "A needed component is unavailable; try later."},
    [API_ERROR_INTERNAL] = {"internal", 500, "An internal error occurred."},
    [API_ERROR_STORED_WITHOUT_RECEIPT] =
        {"stored_without_receipt", 503,
         "The registration was stored, but has no receipt; submit it again with a higher sequence "
         "to get one."},
    [API_ERROR_BAD_REQUEST] = {"bad_request", 400, "The request breaks HTTP/1.1 message framing."},
    [API_ERROR_LENGTH_REQUIRED] = {"length_required", 411, "The request needs a Content-Length."},
    [API_ERROR_HEADERS_TOO_LARGE] = {"headers_too_large", 431, "The request head is larger than allowed."},
    [API_ERROR_NOT_IMPLEMENTED] = {"not_implemented", 501,
                                   "The request uses a transfer coding that is not accepted."},
    [API_ERROR_LOG_PATH_MALFORMED] = {"malformed_log_path", 400,
                                      "The path is not the one spelling c2sp.org/tlog-tiles gives a tile."},
    [API_ERROR_LOG_NO_CHECKPOINT] = {"no_checkpoint", 404, "This namespace's log has no checkpoint yet."},
    [API_ERROR_LOG_BEYOND_TREE] = {"beyond_tree", 404,
                                   "The tile is not inside the tree of the log's latest checkpoint."},
    [API_ERROR_LOG_NOT_CHECKPOINTED] = {"partial_tile_not_checkpointed", 404,
                                        "No checkpoint was published for a tree with this partial tile."},
    [API_ERROR_LOG_PROOF_MALFORMED] = {"malformed_proof_path", 400,
                                       "An epoch or tree size in the path is not a canonical decimal, "
                                       "or the tree sizes are out of order."},
    [API_ERROR_LOG_EPOCH_NOT_IN_LOG] = {"epoch_not_in_log", 404,
                                        "No header of this epoch is in the namespace's log."},
    [API_ERROR_LOG_EPOCH_NOT_IN_TREE] = {"epoch_not_in_tree", 404,
                                         "The epoch's header is in the log, but not in the tree of "
                                         "this checkpoint."},
    [API_ERROR_LOG_SIZE_NOT_CHECKPOINTED] = {"size_not_checkpointed", 404,
                                             "No checkpoint was published for this tree size."},
    [API_ERROR_UNKNOWN_AUTHORITY] = {"unknown_authority", 403,
                                     "The statement names no member of this authority set."},
    [API_ERROR_WRONG_EPOCH] = {"wrong_epoch", 409, "The statement is not for an epoch being prepared now."},
    [API_ERROR_TOO_LATE] = {"too_late", 409, "The statement arrived after its deadline."},
    [API_ERROR_CONFLICTING_VOTE] = {"conflicting_vote", 409,
                                    "Another vote of that authority for that epoch is held; both are kept "
                                    "as evidence."},
    [API_ERROR_CONFLICTING_HEADER] = {"conflicting_header", 409,
                                      "The signature is over another header text than the one computed "
                                      "here; it is kept as evidence."},
    [API_ERROR_LIFECYCLE_DISABLED] = {"lifecycle_disabled", 404,
                                      "The namespace takes no health statements, revocations or "
                                      "deregistrations."},
    [API_ERROR_UNKNOWN_SERVICE] = {"unknown_service", 404, "The service has no current registration here."},
    [API_ERROR_UNKNOWN_ENDPOINT] = {"unknown_endpoint", 404,
                                    "The service's current registration lists no such endpoint."},
    [API_ERROR_WRONG_SIGNER] = {"wrong_signer", 403,
                                "The statement is signed by a key that may not make it."},
    [API_ERROR_OUTSIDE_CLOCK_SKEW] = {"outside_clock_skew", 422,
                                      "The statement's issued-at is further from now than the clock skew "
                                      "allows."},
    [API_ERROR_REPLAYED] = {"replayed", 409, "The sequence is not above the last one accepted."},
    [API_ERROR_REVOKED] = {"revoked", 409,
                           "The service or one of its endpoints is revoked; it never comes back."},
    [API_ERROR_DEREGISTERED] = {"deregistered", 409,
                                "A deregistration withdrew this sequence of the service; register with a "
                                "higher one."},
    [API_ERROR_LOG_UNKNOWN] = {"unknown_log", 404, "This witness knows no log of the checkpoint's origin."},
    [API_ERROR_LOG_INCONSISTENT] = {"inconsistent_checkpoint", 422,
                                    "The checkpoint is not proven consistent with the tree head this "
                                    "witness cosigned last."},
    [API_ERROR_BODY_NOT_KEPT] = {"body_not_kept", 404,
                                 "The snapshot's header is kept here, but its body is past the "
                                 "retention window."},
    [API_ERROR_UNKNOWN_BASE] = {"unknown_base", 409,
                                "The vote is a delta against a snapshot that is not this authority's "
                                "latest; send the whole vote."},
    [API_ERROR_UNSUPPORTED_ENCODING] = {"unsupported_encoding", 415,
                                        "This route takes its body as it is, or as zstd where it says "
                                        "so; not in this Content-Encoding."},
    [API_ERROR_NO_DIFF] = {"no_diff", 404,
                           "No diff from that base to this epoch's body is offered here; fetch the "
                           "body whole."},
    [API_ERROR_RECORD_SHARD_MALFORMED] = {"record_shard_malformed", 400,
                                          "A record shard is named by 1 to 6 lower-case hex digits."},
    [API_ERROR_NO_RECORD_SHARD] = {"no_record_shard", 404,
                                   "No record shard of that name is kept here for this epoch; fetch "
                                   "the body whole."},
};

static const struct api_error_entry *api_error_entry(enum api_error error)
{
	if ((unsigned)error >= API_ERROR_COUNT)
		return &api_error_table[API_ERROR_INTERNAL];
	return &api_error_table[error];
}

const char *api_error_code(enum api_error error)
{
	return api_error_entry(error)->code;
}

unsigned api_error_status(enum api_error error)
{
	return api_error_entry(error)->status;
}

const char *api_error_detail(enum api_error error)
{
	return api_error_entry(error)->detail;
}

int api_error_json(enum api_error error, const char *detail, struct buffer *out)
{
	if (!detail)
		detail = api_error_detail(error);
	int rc = buffer_appendf(out, "{\"error\":\"%s\",\"detail\":\"", api_error_code(error));
	for (const unsigned char *p = (const unsigned char *)detail; rc == 0 && *p; p++) {
		if (*p == '"' || *p == '\\')
			rc = buffer_appendf(out, "\\%c", *p);
		else if (*p < 0x20 || *p >= 0x7f)
			rc = buffer_appendf(out, "\\u%04x", *p);
		else
			rc = buffer_append(out, p, 1);
	}
	if (rc == 0)
		rc = buffer_append_string(out, "\"}");
	return rc ? DIRAUTH_ERR_NOMEM : 0;
}
