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

static int digits(const char *s, int n, int *out)
{
	int v = 0;

	for (int i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return 0;
}

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant). */
static int64_t days_from_civil(int y, int m, int d)
{
	int64_t era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

int replay_time_ms(const char *s, int64_t *out)
{
	int y, mo, d, h, mi, sec, ms = 0, scale = 100;
	size_t i = 19;

	if (!s || strlen(s) < 20 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' ||
	    s[16] != ':' || digits(s, 4, &y) < 0 || digits(s + 5, 2, &mo) < 0 || digits(s + 8, 2, &d) < 0 ||
	    digits(s + 11, 2, &h) < 0 || digits(s + 14, 2, &mi) < 0 || digits(s + 17, 2, &sec) < 0)
		return -1;
	if (s[i] == '.')
		for (i++; s[i] >= '0' && s[i] <= '9'; i++, scale /= 10)
			ms += (s[i] - '0') * scale;
	if (s[i] != 'Z' || s[i + 1] != '\0')
		return -1;
	*out = ((days_from_civil(y, mo, d) * 24 + h) * 60 + mi) * 60000 + (int64_t)sec * 1000 + ms;
	return 0;
}
