/* SPDX-License-Identifier: Apache-2.0 */
/*
 * report_json.c: one row of the JSON report (a changed or undecided call),
 * written straight into a buffer instead of built as a jansson tree and
 * dumped. The bytes are exactly what json_dumpf(JSON_COMPACT |
 * JSON_ENCODE_ANY) gave for the same row (test_replay_json compares the two
 * on the golden cases and on hostile strings):
 *   - strings escape '"', '\\' and every code point below 0x20 as jansson
 *     does (\b \f \n \r \t, else \u00XX with upper-case hex); everything else,
 *     DEL and U+2028 included, is copied as it is;
 *   - a string that is not valid UTF-8 is refused, as json_string() refuses
 *     it (jansson's own check: no overlong forms, no surrogates, nothing
 *     above U+10FFFF);
 *   - `args` is copied as stored: the ledger stored it as jansson's compact
 *     dump (ledger/event.c store_json_text), replay has parsed it to evaluate
 *     it, and dumping a parsed dump gives the same bytes again.
 */
#include <string.h>

#include "report_internal.h"
#include "util/error.h"

/* Bytes of the UTF-8 sequence at s (valid as jansson checks it), 0 if invalid. */
static size_t utf8_seq(const unsigned char *s)
{
	unsigned c = s[0], n, cp;

	if (c < 0xc2 || c > 0xf4)
		return 0;
	n = c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
	cp = c & (0x3f >> (n - 1));
	for (unsigned i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

static int escape(docket_buf *out, unsigned char c)
{
	static const char hex[] = "0123456789ABCDEF";
	char e[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15] };

	switch (c) {
	case '"':  return docket_buf_put(out, "\\\"", 2);
	case '\\': return docket_buf_put(out, "\\\\", 2);
	case '\b': return docket_buf_put(out, "\\b", 2);
	case '\f': return docket_buf_put(out, "\\f", 2);
	case '\n': return docket_buf_put(out, "\\n", 2);
	case '\r': return docket_buf_put(out, "\\r", 2);
	case '\t': return docket_buf_put(out, "\\t", 2);
	default:   return docket_buf_put(out, e, sizeof(e));
	}
}

int report_json_string(docket_buf *out, const char *str)
{
	const unsigned char *s = (const unsigned char *)str, *run;
	int error;

	if (!s)
		return docket_buf_put(out, "null", 4);
	if ((error = docket_buf_put(out, "\"", 1)) < 0)
		return error;
	for (run = s; *s;) {
		size_t n = 1;

		if (*s >= 0x20 && *s != '"' && *s != '\\' && *s < 0x80) {
			s++;
			continue;
		}
		if (*s >= 0x80) {
			if (!(n = utf8_seq(s)))
				return docket_error_set(DOCKET_ECORRUPT, "a recorded string is not valid UTF-8");
			s += n;
			continue;
		}
		if ((error = docket_buf_put(out, run, (size_t)(s - run))) < 0 || (error = escape(out, *s)) < 0)
			return error;
		run = ++s;
	}
	if ((error = docket_buf_put(out, run, (size_t)(s - run))) < 0)
		return error;
	return docket_buf_put(out, "\"", 1);
}

static int key(docket_buf *out, const char *k)
{
	int error;

	if ((error = docket_buf_put(out, ",\"", 2)) < 0 || (error = docket_buf_puts(out, k)) < 0)
		return error;
	return docket_buf_put(out, "\":", 2);
}

static int str_member(docket_buf *out, const char *k, const char *v)
{
	int error = key(out, k);

	return error < 0 ? error : report_json_string(out, v);
}

static int raw_member(docket_buf *out, const char *k, const char *v)
{
	int error = key(out, k);

	return error < 0 ? error : docket_buf_puts(out, v);
}

static const char *verdict(int v)
{
	return docket_policy_verdict_name((docket_verdict)v);
}

int report_json_row(docket_buf *out, const char *commit, const report_row *row)
{
	const char *reason = row->s[RS_REASON] && *row->s[RS_REASON] ? row->s[RS_REASON] : NULL;
	int undecided = row->fx.cls == DOCKET_REPLAY_UNDECIDED, error;

	if ((error = docket_buf_printf(out, "{\"seq\":%llu", (unsigned long long)row->fx.seq)) < 0 ||
	    (error = str_member(out, "session", row->s[RS_SESSION])) < 0 ||
	    (error = str_member(out, "invocation", row->s[RS_INVOCATION])) < 0 ||
	    (error = str_member(out, "time", row->s[RS_TIME])) < 0 ||
	    (error = str_member(out, "tool", row->s[RS_TOOL])) < 0 ||
	    (error = raw_member(out, "args", row->s[RS_ARGS])) < 0 ||
	    (error = str_member(out, "target", row->s[RS_TARGET])) < 0 ||
	    (error = str_member(out, "was", undecided ? NULL : verdict(row->fx.was))) < 0 ||
	    (error = str_member(out, "baseline",
				docket_replay_baseline_name((docket_replay_baseline)row->fx.baseline))) < 0 ||
	    (error = str_member(out, "now", verdict(row->fx.now))) < 0 ||
	    (error = str_member(out, "class", docket_replay_class_name((docket_replay_class)row->fx.cls))) < 0 ||
	    (error = raw_member(out, "human_denied", row->fx.human_denied ? "true" : "false")) < 0 ||
	    (error = str_member(out, "rule", row->s[RS_RULE])) < 0)
		return error;
	if (row->s[RS_RULE] && row->fx.rule_line)
		error = docket_buf_printf(out, ",\"rule_line\":%u", row->fx.rule_line);
	else
		error = raw_member(out, "rule_line", "null");
	if (error < 0 || (error = str_member(out, "reason", reason)) < 0 ||
	    (error = str_member(out, "commit", commit)) < 0)
		return error;
	/* a fleet replay's call: which machine's ledger it came from */
	if (row->s[RS_LEDGER] && ((error = str_member(out, "ledger", row->s[RS_LEDGER])) < 0 ||
				  (error = str_member(out, "host", row->s[RS_HOST] ? row->s[RS_HOST] : "")) < 0))
		return error;
	return docket_buf_put(out, "}", 1);
}
