/*
 * error.h: the project's error codes, shared by every module.
 *
 * Every function that can fail returns int: 0 on success, one of the negative codes below on
 * failure. Codes are stable so that callers (the HTTP layer, the CLI) can map them to statuses
 * and exit codes in one place each. dirauth_strerror() gives a short human sentence.
 */
#ifndef DIRAUTH_BASE_ERROR_H
#define DIRAUTH_BASE_ERROR_H

enum dirauth_error {
	DIRAUTH_OK = 0,
	DIRAUTH_ERR_NOMEM = -1,        /* an allocation failed */
	DIRAUTH_ERR_SYNTAX = -2,       /* input does not follow its grammar, or is not canonical */
	DIRAUTH_ERR_BOUNDS = -3,       /* input exceeds a size or count bound */
	DIRAUTH_ERR_SIGNATURE = -4,    /* a signature by a known key failed to verify */
	DIRAUTH_ERR_UNKNOWN_KEY = -5,  /* no signature by a known key */
	DIRAUTH_ERR_THRESHOLD = -6,    /* fewer distinct known keys verified than required */
	DIRAUTH_ERR_CRYPTO = -7,       /* the crypto library failed (not a bad signature) */
	DIRAUTH_ERR_IO = -8,           /* a read, write or network operation failed */
	DIRAUTH_ERR_PERMISSION = -9,   /* a file's mode, owner or type is not safe */
	DIRAUTH_ERR_NOT_FOUND = -10,   /* the named thing does not exist */
	DIRAUTH_ERR_EXISTS = -11,      /* the thing to create already exists */
	DIRAUTH_ERR_ROLLBACK = -12,    /* a sequence, epoch or size would go backwards */
	DIRAUTH_ERR_COLLISION = -13,   /* an identifier belongs to someone else */
	DIRAUTH_ERR_MISMATCH = -14,    /* a digest, root, count or size disagrees with its commitment */
	DIRAUTH_ERR_STALE = -15,       /* too old, expired, or too far in the future */
	DIRAUTH_ERR_STORE = -16,       /* the database failed */
	DIRAUTH_ERR_FULL = -17,        /* the database or a queue is full */
	DIRAUTH_ERR_PROOF = -18,       /* a Merkle proof does not verify */
	DIRAUTH_ERR_CONFIG = -19,      /* the configuration is invalid */
	DIRAUTH_ERR_UNAVAILABLE = -20, /* a needed component is down; try later */
	DIRAUTH_ERR_REFUSED = -21,     /* refused by policy (not enrolled, not allowed) */
	DIRAUTH_ERR_INTERNAL = -22,    /* a bug: an invariant did not hold */
};

/* A short English sentence for rc (0 or a dirauth_error). Never NULL; static storage. */
const char *dirauth_strerror(int rc);

/* A stable lower-case machine-readable name for rc, e.g. "syntax". Never NULL; static. */
const char *dirauth_error_name(int rc);

#endif
