/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cli_summary.c: the summary of a tool call for tables, as a string: the
 * one call summary (util/summary.c).
 */
#include "cli.h"

#include "util/buf.h"
#include "util/summary.h"

int cli_call_summary(char **out, const char *tool, const json_t *args, size_t max)
{
	docket_buf b = DOCKET_BUF_INIT;
	int error;

	*out = NULL;
	if ((error = docket_call_summary(&b, tool, args, max)) < 0) {
		docket_buf_dispose(&b);
		return error;
	}
	*out = b.ptr;
	return 0;
}
