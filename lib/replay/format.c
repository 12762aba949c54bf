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
#include "util/jv.h"

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

/* obj's member `key` (absent unless obj is an object) and a string's text. */
static docket_jv member(const docket_jv_ops *o, docket_jv obj, const char *key)
{
	docket_jv none = { NULL, 0 };

	return o->type(obj) == DOCKET_JV_OBJECT ? o->get(obj, key) : none;
}

static const char *str_of(const docket_jv_ops *o, docket_jv v)
{
	size_t len;

	return o->type(v) == DOCKET_JV_STRING ? o->string(v, &len) : NULL;
}

/* Item `n` of an array (absent past its end). */
static docket_jv item(const docket_jv_ops *o, docket_jv arr, size_t n)
{
	docket_jv_iter it;
	docket_jv v = { NULL, 0 };
	const char *key;

	for (o->iter(arr, &it); o->next(&it, &key, &v) && n; n--)
		;
	if (n) {
		v.p = NULL;
		v.i = 0;
	}
	return v;
}

static int put_words(docket_buf *out, const docket_jv_ops *o, docket_jv arr, const char *sep)
{
	docket_jv_iter it;
	docket_jv w;
	const char *key;
	int error = 0, first = 1;

	if (o->type(arr) != DOCKET_JV_ARRAY)
		return 0;
	for (o->iter(arr, &it); o->next(&it, &key, &w);) {
		const char *s = str_of(o, w) ? str_of(o, w) : str_of(o, member(o, w, "path"));

		if (!s)
			continue;
		if ((!first && (error = docket_buf_puts(out, sep)) < 0) || (error = docket_buf_puts(out, s)) < 0)
			break;
		first = 0;
	}
	return error;
}

static int is_shell_c(const docket_jv_ops *o, docket_jv argv)
{
	const char *sh = str_of(o, item(o, argv, 0)), *flag = str_of(o, item(o, argv, 1));
	const char *base;

	if (o->size(argv) != 3 || !sh || !flag || !str_of(o, item(o, argv, 2)))
		return 0;
	base = strrchr(sh, '/') ? strrchr(sh, '/') + 1 : sh;
	return (strcmp(base, "bash") == 0 || strcmp(base, "sh") == 0 || strcmp(base, "zsh") == 0) &&
	       (strcmp(flag, "-c") == 0 || strcmp(flag, "-lc") == 0);
}

static int target_of(docket_buf *out, const docket_jv_ops *o, docket_jv args)
{
	docket_jv cmd = member(o, args, "command"), v;
	const char *s, *t;

	if (o->type(cmd) == DOCKET_JV_ARRAY)
		return is_shell_c(o, cmd) ? docket_buf_puts(out, str_of(o, item(o, cmd, 2)))
					  : put_words(out, o, cmd, " ");
	if (o->type(v = member(o, args, "changes")) == DOCKET_JV_ARRAY)
		return put_words(out, o, v, ", ");
	if ((s = str_of(o, member(o, args, "path"))) || (s = str_of(o, member(o, args, "url"))) ||
	    (s = str_of(o, member(o, args, "host"))))
		return docket_buf_puts(out, s);
	if ((s = str_of(o, member(o, args, "server"))))
		return docket_buf_printf(out, "%s/%s", s, (t = str_of(o, member(o, args, "tool"))) ? t : "");
	if ((s = str_of(o, member(o, args, "ecosystem"))) && docket_buf_printf(out, "%s: ", s) == 0)
		return put_words(out, o, member(o, args, "packages"), " ");
	if ((s = str_of(o, member(o, args, "language"))))
		return docket_buf_puts(out, s);
	return o->dump(out, args);
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

int replay_target_jv(docket_buf *out, const docket_jv_ops *o, docket_jv args)
{
	int error;

	docket_buf_clear(out);
	if ((error = target_of(out, o, args)) == 0)
		one_line(out);
	return error;
}

int replay_target(docket_buf *out, const char *args_json)
{
	docket_jv_doc d;
	int error;

	docket_buf_clear(out);
	if (docket_jv_parse(&d, NULL, args_json, strlen(args_json)) < 0)
		error = docket_buf_puts(out, args_json);
	else
		error = target_of(out, d.ops, d.root);
	docket_jv_doc_dispose(&d);
	if (error == 0)
		one_line(out);
	return error;
}

/* ---- times ---- */

int replay_time_ms(const char *s, int64_t *out)
{
	return docket_time_parse_ms(s, DOCKET_TIME_UTC_ONLY, out);
}
