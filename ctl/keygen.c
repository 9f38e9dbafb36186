/*
 * keygen.c: generate and save a key (see keygen.h). Signing, provider and identity keys are the
 * same kind of key file; only what the command says about them differs.
 */
#include "ctl/keygen.h"

#include "base/error.h"
#include "signer/key.h"

#include <string.h>

/* The shared work; command names the command in every failure message. */
static int generate_and_save(const char *command, const char *name, const char *out_path,
                             char verifier[NOTE_VERIFIER_KEY_MAX + 1], struct ctl_report *report)
{
	struct signer_key *key = NULL;
	int rc;

	verifier[0] = '\0';
	if (!note_name_is_valid(name, strlen(name))) {
		ctl_report_fail(report, CTL_EXIT_USAGE,
		                "%s: invalid key name '%.64s' (printable, no space or '+', at most %d bytes)",
		                command, name, NOTE_NAME_MAX);
		return DIRAUTH_ERR_SYNTAX;
	}
	rc = signer_key_generate(name, &key);
	if (rc != 0) {
		ctl_report_fail(report, rc == DIRAUTH_ERR_SYNTAX ? CTL_EXIT_USAGE : CTL_EXIT_SOFTWARE,
		                "%s: cannot generate a key: %s", command, dirauth_strerror(rc));
		goto done;
	}
	rc = signer_key_save(key, out_path);
	if (rc == DIRAUTH_ERR_EXISTS) {
		ctl_report_fail(report, CTL_EXIT_CANNOT_CREATE, "%s: %s: already exists, not overwritten",
		                command, out_path);
		goto done;
	}
	if (rc != 0) {
		ctl_report_fail(report, CTL_EXIT_CANNOT_CREATE, "%s: %s: cannot create: %s", command,
		                out_path, dirauth_strerror(rc));
		goto done;
	}
	note_verifier_format(signer_key_verifier(key), verifier);
done:
	signer_key_free(key);
	return rc;
}

int ctl_keygen_run(const char *name, const char *out_path, char verifier[NOTE_VERIFIER_KEY_MAX + 1],
                   struct ctl_report *report)
{
	return generate_and_save("keygen", name, out_path, verifier, report);
}

int ctl_identity_keygen_run(const char *name, const char *out_path, char verifier[NOTE_VERIFIER_KEY_MAX + 1],
                            struct ctl_report *report)
{
	return generate_and_save("identity-keygen", name, out_path, verifier, report);
}
