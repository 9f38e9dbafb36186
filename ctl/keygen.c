/*
 * keygen.c: generate and save a signing key (see keygen.h).
 */
#include "keygen.h"

#include "error.h"
#include "key.h"

#include <string.h>

int ctl_keygen_run(const char *name, const char *out_path, char verifier[NOTE_VERIFIER_KEY_MAX + 1],
                   struct ctl_report *report)
{
	struct signer_key *key = NULL;
	int rc;

	verifier[0] = '\0';
	if (!note_name_is_valid(name, strlen(name))) {
		ctl_report_fail(
		    report, CTL_EXIT_USAGE,
		    "keygen: invalid key name '%.64s' (printable, no space or '+', at most %d bytes)", name,
		    NOTE_NAME_MAX);
		return DIRAUTH_ERR_SYNTAX;
	}
	rc = signer_key_generate(name, &key);
	if (rc != 0) {
		ctl_report_fail(report, rc == DIRAUTH_ERR_SYNTAX ? CTL_EXIT_USAGE : CTL_EXIT_SOFTWARE,
		                "keygen: cannot generate a key: %s", dirauth_strerror(rc));
		goto done;
	}
	rc = signer_key_save(key, out_path);
	if (rc == DIRAUTH_ERR_EXISTS) {
		ctl_report_fail(report, CTL_EXIT_CANNOT_CREATE, "keygen: %s: already exists, not overwritten",
		                out_path);
		goto done;
	}
	if (rc != 0) {
		ctl_report_fail(report, CTL_EXIT_CANNOT_CREATE, "keygen: %s: cannot create: %s", out_path,
		                dirauth_strerror(rc));
		goto done;
	}
	note_verifier_format(signer_key_verifier(key), verifier);
done:
	signer_key_free(key);
	return rc;
}
