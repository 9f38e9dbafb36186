/*
 * api_error.h: the stable machine-readable reasons of the HTTP API and their statuses.
 *
 * Hard rule 5 asks for a precise 4xx with a machine-readable reason for every refusal. The
 * codes below are that reason; they are part of the API (docs/api.md lists them) and never
 * change meaning. Every error body is the JSON object
 *   {"error":"<code>","detail":"<human sentence>"}
 * served as application/json.
 */
#ifndef DIRAUTH_SERVER_API_API_ERROR_H
#define DIRAUTH_SERVER_API_API_ERROR_H

#include "base/buffer.h"

enum api_error {
	API_ERROR_NONE = 0,
	API_ERROR_BODY_TOO_LARGE,        /* 413 */
	API_ERROR_MALFORMED,             /* 400 */
	API_ERROR_UNKNOWN_NAMESPACE,     /* 404 */
	API_ERROR_UNKNOWN_PROVIDER,      /* 403 */
	API_ERROR_BAD_SIGNATURE,         /* 403 */
	API_ERROR_NAMESPACE_NOT_ALLOWED, /* 403 */
	API_ERROR_CLASS_NOT_ALLOWED,     /* 403 */
	API_ERROR_TOO_MANY_ENDPOINTS,    /* 413 */
	API_ERROR_VALIDITY_TOO_LONG,     /* 422 */
	API_ERROR_EXPIRED,               /* 422 */
	API_ERROR_ISSUED_IN_FUTURE,      /* 422 */
	API_ERROR_ROLLBACK,              /* 409 */
	API_ERROR_SERVICE_COLLISION,     /* 409 */
	API_ERROR_ENDPOINT_COLLISION,    /* 409 */
	API_ERROR_NOT_FOUND,             /* 404 */
	API_ERROR_METHOD_NOT_ALLOWED,    /* 405 */
	API_ERROR_NOT_ACCEPTABLE,        /* 406 */
	API_ERROR_STORE_FULL,            /* 507 */
	API_ERROR_NAMESPACE_FULL,        /* 507: the namespace's snapshot would pass a bound */
	API_ERROR_UNAVAILABLE,           /* 503 */
	API_ERROR_INTERNAL,              /* 500 */
	/* 503: the registration was committed, but no receipt could be made for it (the signer
	 * failed or refused between the commit and the receipt). Unlike every other error, the
	 * request did change something: a retry with the same sequence is a rollback. */
	API_ERROR_STORED_WITHOUT_RECEIPT,
	/* The request itself breaks HTTP/1.1 (RFC 9112): ambiguous or malformed framing, a header
	 * field that is not a token, a missing or repeated Host. The connection is closed. */
	API_ERROR_BAD_REQUEST,       /* 400 */
	API_ERROR_LENGTH_REQUIRED,   /* 411 */
	API_ERROR_HEADERS_TOO_LARGE, /* 431 */
	API_ERROR_NOT_IMPLEMENTED,   /* 501: a transfer coding other than chunked */
	/* The transparency log's read side (c2sp.org/tlog-tiles). */
	API_ERROR_LOG_PATH_MALFORMED,   /* 400: not a tile's one spelling */
	API_ERROR_LOG_NO_CHECKPOINT,    /* 404: the log has no checkpoint yet */
	API_ERROR_LOG_BEYOND_TREE,      /* 404: not inside the latest checkpoint's tree */
	API_ERROR_LOG_NOT_CHECKPOINTED, /* 404: a partial tile of no checkpointed size */
	/* The log's proofs (server/http/proof_routes.c). */
	API_ERROR_LOG_PROOF_MALFORMED,       /* 400: an epoch or size not canonical, sizes out of order */
	API_ERROR_LOG_EPOCH_NOT_IN_LOG,      /* 404: no leaf of the log holds the epoch's header */
	API_ERROR_LOG_EPOCH_NOT_IN_TREE,     /* 404: the leaf is past the checkpoint's tree */
	API_ERROR_LOG_SIZE_NOT_CHECKPOINTED, /* 404: no checkpoint of that tree size */
	/* Between authorities (docs/protocol.md). */
	API_ERROR_UNKNOWN_AUTHORITY,  /* 403: the statement names no member of the authority set */
	API_ERROR_WRONG_EPOCH,        /* 409: not an epoch being voted or signed now */
	API_ERROR_TOO_LATE,           /* 409: after the phase's deadline plus the clock skew */
	API_ERROR_CONFLICTING_VOTE,   /* 409: another vote of that member for that epoch is held */
	API_ERROR_CONFLICTING_HEADER, /* 409: a valid signature over another header text */
	/* The endpoint lifecycle: health statements, revocations, deregistrations (docs/api.md). */
	API_ERROR_LIFECYCLE_DISABLED, /* 404: the namespace is not configured for the lifecycle */
	API_ERROR_UNKNOWN_SERVICE,    /* 404: no current registration of the service here */
	API_ERROR_UNKNOWN_ENDPOINT,   /* 404: the service's current registration lists no such endpoint */
	API_ERROR_WRONG_SIGNER,       /* 403: signed by a key that may not make this statement */
	API_ERROR_OUTSIDE_CLOCK_SKEW, /* 422: issued-at further from now than the clock skew */
	API_ERROR_REPLAYED,           /* 409: the sequence is not above the last one accepted */
	API_ERROR_REVOKED,            /* 409: the service or an endpoint is revoked, for ever */
	API_ERROR_DEREGISTERED,       /* 409: a deregistration withdrew this sequence of the service */
	/* c2sp.org/tlog-witness add-checkpoint (server/tlog/witness.h). */
	API_ERROR_LOG_UNKNOWN,      /* 404: no log of that origin is known here */
	API_ERROR_LOG_INCONSISTENT, /* 422: not proven consistent with the tree head cosigned last */
	/* Snapshots: a header kept whose body retention removed (store.body_retention_epochs). */
	API_ERROR_BODY_NOT_KEPT, /* 404 */
	/* A vote sent as a delta against a snapshot this authority does not hold as its latest. */
	API_ERROR_UNKNOWN_BASE, /* 409 */
	/* Request bodies (server/http). */
	API_ERROR_UNSUPPORTED_ENCODING, /* 415: a Content-Encoding the route does not take */
	/* Snapshot diffs: none from that base to that epoch is offered here (not built, not worth it,
	 * or its base or target past the retention window). */
	API_ERROR_NO_DIFF, /* 404 */
	/* Record shards (schema/record-shard.md): a shard name that is not 1 to 6 lower-case hex
	 * digits; no shards of that epoch kept here (not built yet, or past the retention window), or
	 * no shard of that name at the epoch's shard bits. */
	API_ERROR_RECORD_SHARD_MALFORMED, /* 400 */
	API_ERROR_NO_RECORD_SHARD,        /* 404 */
	API_ERROR_COUNT
};

/* The stable code, e.g. "body_too_large". Never NULL; "internal" for an out-of-range value. */
const char *api_error_code(enum api_error error);

/* The HTTP status of error (500 for an out-of-range value). */
unsigned api_error_status(enum api_error error);

/* A default human sentence for error. Never NULL; static storage. */
const char *api_error_detail(enum api_error error);

/* Appends the JSON error object for error with detail (NULL: the default sentence). detail is
 * escaped as a JSON string. Returns 0 or DIRAUTH_ERR_NOMEM. */
int api_error_json(enum api_error error, const char *detail, struct buffer *out);

#endif
