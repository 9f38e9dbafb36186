/*
 * trust_file.c: reading a trust bundle file (see trust_file.h).
 */
#include "ctl/trust_file.h"

#include "base/error.h"
#include "ctl/files.h"

#include <stdlib.h>
#include <string.h>

static const struct ctl_file_limit trust_bundle_limit = {TRUST_BUNDLE_MAX_BYTES, NULL, CTL_EXIT_CONFIG};

int ctl_trust_bundle_load(const char *path, struct trust_bundle *out, struct ctl_report *report)
{
	uint8_t *data = NULL;
	size_t len = 0;
	size_t error_line = 0;
	char why[TRUST_BUNDLE_WHY_MAX];
	int rc;

	memset(out, 0, sizeof(*out));
	rc = ctl_file_read_reported(path, &trust_bundle_limit, &data, &len, report, "trust bundle %s", path);
	if (rc != 0)
		goto done;
	rc = trust_bundle_parse_explained(data, len, out, &error_line, why, sizeof(why));
	if (rc != 0) {
		if (rc == DIRAUTH_ERR_NOMEM)
			ctl_report_fail(report, CTL_EXIT_SOFTWARE, "trust bundle %s: %s", path,
			                dirauth_strerror(rc));
		else
			ctl_report_fail(report, CTL_EXIT_CONFIG, "trust bundle %s:%zu: %s", path, error_line,
			                why);
	}
done:
	free(data);
	return rc;
}
