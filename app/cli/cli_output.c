/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cli_output.c: JSON output, times and durations, and JSON accessors shared
 * by every command.
 */
#include "cli.h"

#include <stdio.h>
#include <string.h>

#include "util/error.h"
#include "util/json.h"
#include "util/rfc3339.h"

static int json_out_cb(const char *data, size_t size, void *ctx)
{
	return fwrite(data, 1, size, ctx) == size ? 0 : -1;
}

int cli_json_line(FILE *f, const json_t *value)
{
	if (json_dump_callback(value, json_out_cb, f, JSON_COMPACT | JSON_ENCODE_ANY) < 0)
		return -1;
	return fputc('\n', f) == EOF ? -1 : 0;
}

int cli_json_pretty(FILE *f, const json_t *value)
{
	if (json_dump_callback(value, json_out_cb, f, JSON_INDENT(2) | JSON_ENCODE_ANY) < 0)
		return -1;
	return fputc('\n', f) == EOF ? -1 : 0;
}

int cli_print_json(json_t *value)
{
	int ok = value && cli_json_pretty(stdout, value) == 0;

	json_decref(value);
	return ok ? CLI_EXIT_OK : cli_fail(DOCKET_ENOMEM, "cannot write output");
}

int cli_put_json_line(json_t *value)
{
	int error;

	if (!value)
		return docket_error_set_oom();
	error = cli_json_line(stdout, value);
	json_decref(value);
	return error < 0 ? docket_error_set(DOCKET_ESTORAGE, "cannot write output") : 0;
}

json_t *cli_json_nonempty(const char *s)
{
	return (s && *s) ? json_string(s) : json_null();
}

const char *cli_or_dash(const char *s)
{
	return (s && *s) ? s : "-";
}

/* ---- time -------------------------------------------------------------- */

int cli_time_parse(const char *s, int64_t *out_ms)
{
	return docket_time_parse_ms(s, 0, out_ms);
}

void cli_duration(char *out, size_t n, int64_t ms)
{
	if (ms < 0)
		snprintf(out, n, "-");
	else if (ms < 1000)
		snprintf(out, n, "%lldms", (long long)ms);
	else if (ms < 10000)
		snprintf(out, n, "%lld.%02llds", (long long)(ms / 1000),
			 (long long)((ms % 1000) / 10));
	else if (ms < 60000)
		snprintf(out, n, "%lld.%llds", (long long)(ms / 1000),
			 (long long)((ms % 1000) / 100));
	else if (ms < 3600000)
		snprintf(out, n, "%lldm%02llds", (long long)(ms / 60000),
			 (long long)((ms % 60000) / 1000));
	else
		snprintf(out, n, "%lldh%02lldm", (long long)(ms / 3600000),
			 (long long)((ms % 3600000) / 60000));
}

/* ---- JSON accessors ---------------------------------------------------- */

int cli_jint(const json_t *obj, const char *key, int64_t *out)
{
	const json_t *v = obj ? json_object_get(obj, key) : NULL;

	if (!json_is_integer(v))
		return -1;
	*out = (int64_t)json_integer_value(v);
	return 0;
}
