/*
 * error.c: names and sentences for the project's error codes.
 *
 * One table, so that a new code cannot be added without both its name and its sentence.
 */
#include "base/error.h"

#include <stddef.h>

struct error_text {
	const char *name;
	const char *sentence;
};

static const struct error_text error_texts[] = {
    [0] = {"ok", "success"},
    [1] = {"nomem", "out of memory"},
    [2] = {"syntax", "input does not follow its grammar or is not canonical"},
    [3] = {"bounds", "input exceeds a size or count bound"},
    [4] = {"signature", "a signature by a known key failed to verify"},
    [5] = {"unknown_key", "no signature by a known key"},
    [6] = {"threshold", "too few distinct known keys verified"},
    [7] = {"crypto", "the crypto library failed"},
    [8] = {"io", "input/output failed"},
    [9] = {"permission", "unsafe file mode, owner or type"},
    [10] = {"not_found", "not found"},
    [11] = {"exists", "already exists"},
    [12] = {"rollback", "would go backwards (sequence, epoch or size)"},
    [13] = {"collision", "identifier belongs to someone else"},
    [14] = {"mismatch", "a digest, root, count or size disagrees with its commitment"},
    [15] = {"stale", "too old, expired or too far in the future"},
    [16] = {"store", "the database failed"},
    [17] = {"full", "the database or a queue is full"},
    [18] = {"proof", "a Merkle proof does not verify"},
    [19] = {"config", "invalid configuration"},
    [20] = {"unavailable", "a needed component is unavailable"},
    [21] = {"refused", "refused by policy"},
    [22] = {"internal", "internal error"},
};

static const struct error_text *error_lookup(int rc)
{
	size_t index = rc <= 0 ? (size_t)(-(long)rc) : (size_t)-1;
	if (index >= sizeof(error_texts) / sizeof(error_texts[0]))
		return NULL;
	return &error_texts[index];
}

const char *dirauth_strerror(int rc)
{
	const struct error_text *text = error_lookup(rc);
	return text ? text->sentence : "unknown error";
}

const char *dirauth_error_name(int rc)
{
	const struct error_text *text = error_lookup(rc);
	return text ? text->name : "unknown";
}
