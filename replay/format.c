/* SPDX-License-Identifier: Apache-2.0 */
/*
 * format.c: classification by strictness, the one-line target of a call,
 * and stored times.
 *
 * Strictness: allowed < approval_required < denied = unsupported. denied and
 * unsupported both refuse a call outright and no approval makes either run,
 * so replay ranks them equal: a change between them neither loosens nor
 * tightens what can run (docs/replay.md).
 */
#include <string.h>

#include "replay_internal.h"
#include "util/error.h"
#include "util/rfc3339.h"
#include "util/json.h"

#define TARGET_MAX 120

int replay_rank(docket_verdict v)
{
	switch (v) {
	case DOCKET_VERDICT_ALLOWED:
		return 0;
	case DOCKET_VERDICT_APPROVAL_REQUIRED:
		return 1;
	default:
		return 2;
	}
}

docket_replay_class replay_classify(docket_verdict was, docket_verdict now)
{
	int a = replay_rank(was), b = replay_rank(now);

	return a == b ? DOCKET_REPLAY_UNCHANGED : b > a ? DOCKET_REPLAY_TIGHTENED : DOCKET_REPLAY_LOOSENED;
}

/* ---- the target of a call ---- */

static int put_words(docket_buf *out, const json_t *arr, const char *sep)
{
	size_t i;
	json_t *w;
	int error = 0, first = 1;

	json_array_foreach(arr, i, w) {
		const char *s = json_is_string(w) ? json_string_value(w) : json_string_value(json_object_get(w, "path"));

		if (!s)
			continue;
		if ((!first && (error = docket_buf_puts(out, sep)) < 0) || (error = docket_buf_puts(out, s)) < 0)
			break;
		first = 0;
	}
	return error;
}

static int is_shell_c(const json_t *argv)
{
	const char *sh = json_string_value(json_array_get(argv, 0));
	const char *flag = json_string_value(json_array_get(argv, 1));
	const char *base;

	if (json_array_size(argv) != 3 || !sh || !flag || !json_is_string(json_array_get(argv, 2)))
		return 0;
	base = strrchr(sh, '/') ? strrchr(sh, '/') + 1 : sh;
	return (strcmp(base, "bash") == 0 || strcmp(base, "sh") == 0 || strcmp(base, "zsh") == 0) &&
	       (strcmp(flag, "-c") == 0 || strcmp(flag, "-lc") == 0);
}

static int target_of(docket_buf *out, const char *tool, const json_t *args)
{
	const json_t *cmd = json_object_get(args, "command"), *v;
	const char *s;

	if (json_is_array(cmd))
		return is_shell_c(cmd) ? docket_buf_puts(out, json_string_value(json_array_get(cmd, 2)))
				       : put_words(out, cmd, " ");
	if ((v = json_object_get(args, "changes")) && json_is_array(v))
		return put_words(out, v, ", ");
	if ((s = json_string_value(json_object_get(args, "path"))) || (s = json_string_value(json_object_get(args, "url"))))
		return docket_buf_puts(out, s);
	if ((s = json_string_value(json_object_get(args, "host"))))
		return docket_buf_puts(out, s);
	if ((s = json_string_value(json_object_get(args, "server"))))
		return docket_buf_printf(out, "%s/%s", s, json_string_value(json_object_get(args, "tool")) ?
					 json_string_value(json_object_get(args, "tool")) : "");
	if ((s = json_string_value(json_object_get(args, "ecosystem"))) && docket_buf_printf(out, "%s: ", s) == 0)
		return put_words(out, json_object_get(args, "packages"), " ");
	if ((s = json_string_value(json_object_get(args, "language"))))
		return docket_buf_puts(out, s);
	(void)tool;
	return docket_json_dump(out, args);
}

/* One line: control characters become spaces; at most TARGET_MAX bytes,
 * cut on a character boundary and marked with "...". */
static void one_line(docket_buf *b)
{
	size_t n = b->len;

	for (size_t i = 0; i < n; i++)
		if ((unsigned char)b->ptr[i] < 0x20 || b->ptr[i] == 0x7f)
			b->ptr[i] = ' ';
	if (n <= TARGET_MAX)
		return;
	n = TARGET_MAX - 3;
	while (n > 0 && ((unsigned char)b->ptr[n] & 0xc0) == 0x80)
		n--;
	memcpy(b->ptr + n, "...", 4);
	b->len = n + 3;
}

int replay_target_json(docket_buf *out, const char *tool, const json_t *args)
{
	int error;

	docket_buf_clear(out);
	if ((error = target_of(out, tool, args)) == 0)
		one_line(out);
	return error;
}

int replay_target(docket_buf *out, const char *tool, const char *args_json)
{
	json_t *args = NULL;
	int error;

	docket_buf_clear(out);
	if (docket_json_parse(&args, args_json, strlen(args_json)) < 0)
		error = docket_buf_puts(out, args_json);
	else
		error = target_of(out, tool, args);
	json_decref(args);
	if (error == 0)
		one_line(out);
	return error;
}

/* ---- times ---- */

int replay_time_ms(const char *s, int64_t *out)
{
	return docket_time_parse_ms(s, DOCKET_TIME_UTC_ONLY, out);
}
