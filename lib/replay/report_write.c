/* SPDX-License-Identifier: Apache-2.0 */
/*
 * report_write.c: the four report formats (docs/replay.md):
 *   table     for people: counts per class and per transition, then one
 *             row per changed call, then the undecided calls
 *   json      docket.replay/v1: one document, calls in seq order
 *   junit     one testcase per changed call; a failure for the --fail-on
 *             classes (the JUnit XML that CI systems read)
 *   markdown  for pull-request comments: at most MD_MAX_ROWS rows and
 *             MD_MAX_BYTES bytes in all, the rest counted
 * Every format names each session's assumptions (report_sessions.c).
 */
#include <stdlib.h>
#include <string.h>

#include "report_internal.h"
#include "docket/policy.h"
#include "util/alloc.h"
#include "util/error.h"
#include "util/json.h"

#define MD_MAX_ROWS 200
/* A pull-request comment holds 65,536 characters (bytes are at least as
 * many): the rows get what the head and the "… and N more" line (at most
 * MD_TAIL bytes) leave. The head is bounded: sources and session ids cut
 * to MD_MAX_SOURCE bytes (at most 6 bytes each once escaped), at most
 * MD_MAX_SESSIONS sessions named. */
#define MD_MAX_BYTES 65536
#define MD_TAIL 128
#define MD_MAX_SOURCE 512
#define MD_MAX_SESSIONS 10
#define MD_MAX_SESSION_ID 64
#define TABLE_MIN_CELL 4
#define SHORT_ID 12

static const char *verdict(int v)
{
	return docket_policy_verdict_name((docket_verdict)v);
}

static const char *commit_of(const docket_replay_report *r, const report_row *row)
{
	if (!r->history || row->fx.changed_at == SIZE_MAX)
		return NULL;
	return docket_replay_history_commit(r->history, row->fx.changed_at);
}

/* ---- cells, shared by the table and markdown ---- */

typedef struct cells {
	const char *c[TC_COUNT];
	char was[32], now[64], cls[40], commit[SHORT_ID + 1];
} cells;

static int rule_text(docket_buf *out, const report_row *row)
{
	int error;

	docket_buf_clear(out);
	if (row->s[RS_RULE])
		error = row->fx.rule_line ? docket_buf_printf(out, "%s (line %u)", row->s[RS_RULE], row->fx.rule_line)
					  : docket_buf_puts(out, row->s[RS_RULE]);
	else
		error = docket_buf_printf(out, "no rule (%s)", row->s[RS_REASON] && *row->s[RS_REASON] ?
					  row->s[RS_REASON] : "default");
	/* the enforced verdict's reason, when it is stricter than the engine's */
	if (error == 0 && row->s[RS_EWHY])
		error = docket_buf_printf(out, "; enforced: %s", row->s[RS_EWHY]);
	return error;
}

static int cells_of(cells *c, docket_replay_report *r, const report_row *row)
{
	const char *commit = commit_of(r, row);
	int error;

	if ((error = rule_text(&r->cell, row)) < 0)
		return error;
	snprintf(c->was, sizeof(c->was), "%s", row->fx.cls == DOCKET_REPLAY_UNDECIDED ? "-" : verdict(row->fx.was));
	snprintf(c->cls, sizeof(c->cls), "%s%s", docket_replay_class_name((docket_replay_class)row->fx.cls),
		 row->fx.human_denied ? ", human denied" : "");
	snprintf(c->commit, sizeof(c->commit), "%s", commit ? commit : "-");
	c->c[TC_SESSION] = row->s[RS_SESSION];
	if (row->s[RS_HOST]) {  /* a fleet replay: host/session, as report --from names sessions */
		docket_buf_clear(&r->session_cell);
		if ((error = docket_buf_printf(&r->session_cell, "%s/%s", row->s[RS_HOST], row->s[RS_SESSION])) < 0)
			return error;
		c->c[TC_SESSION] = r->session_cell.ptr;
	}
	c->c[TC_INVOCATION] = row->s[RS_INVOCATION];
	c->c[TC_TOOL] = row->s[RS_TOOL];
	c->c[TC_TARGET] = row->s[RS_TARGET];
	c->c[TC_WAS] = c->was;
	c->c[TC_NOW] = verdict(row->fx.now);
	if (row->s[RS_EWHY]) {
		/* both verdicts: the engine's, and what docket's hooks enforce */
		snprintf(c->now, sizeof(c->now), "%s; enforced: %s", verdict(row->fx.now), verdict(row->fx.enforced));
		c->c[TC_NOW] = c->now;
	}
	c->c[TC_CLASS] = c->cls;
	c->c[TC_RULE] = r->cell.ptr;
	c->c[TC_COMMIT] = c->commit;
	return 0;
}

static const char *const headers[TC_COUNT] = {
	"SESSION", "INVOCATION", "TOOL", "COMMAND OR TARGET", "WAS", "NOW", "CLASS", "RULE", "COMMIT"
};

static int measure(docket_replay_report *r, const report_row *row)
{
	size_t *w = r->widths[row->fx.cls == DOCKET_REPLAY_UNDECIDED];
	cells c;
	int error;

	if ((error = cells_of(&c, r, row)) < 0)
		return error;
	for (int i = 0; i < TC_COUNT; i++) {
		size_t n = report_width(c.c[i]);

		if (w[i] < report_width(headers[i]))
			w[i] = report_width(headers[i]);
		if (n > w[i])
			w[i] = n;
	}
	return 0;
}

/* ---- table ---- */

static void pad(FILE *f, size_t n)
{
	while (n--)
		fputc(' ', f);
}

static void colored(FILE *f, int on, const char *sgr, const char *s)
{
	if (on && sgr)
		fprintf(f, "\033[%sm%s\033[0m", sgr, s);
	else
		fputs(s, f);
}

static const char *class_sgr(int cls)
{
	return cls == DOCKET_REPLAY_LOOSENED ? "31" : cls == DOCKET_REPLAY_TIGHTENED ? "33" : NULL;
}

static int shown(const docket_replay_report *r, int col, int undecided)
{
	if (col == TC_COMMIT)
		return r->history && !undecided;
	if (undecided)
		return col != TC_WAS && col != TC_CLASS;
	return 1;
}

/* The shown columns of a table, its width, and how much each may shrink. */
static size_t table_total(const docket_replay_report *r, int undecided)
{
	size_t total = 0, n = 0;

	for (int i = 0; i < TC_COUNT; i++)
		if (shown(r, i, undecided)) {
			total += r->widths[undecided][i];
			n++;
		}
	return total + (n ? 2 * (n - 1) : 0);
}

/* Narrow the widest text columns, one column at a time, until the table
 * fits r->width (or every text column is down to TABLE_MIN_CELL). */
static void table_fit(docket_replay_report *r, int undecided)
{
	static const int text_cols[] = { TC_SESSION, TC_INVOCATION, TC_TOOL, TC_TARGET, TC_RULE };
	size_t *w = r->widths[undecided];

	if (!r->width)
		return;
	while (table_total(r, undecided) > r->width) {
		int widest = -1;

		for (size_t k = 0; k < sizeof(text_cols) / sizeof(text_cols[0]); k++)
			if (w[text_cols[k]] > TABLE_MIN_CELL && (widest < 0 || w[text_cols[k]] > w[widest]))
				widest = text_cols[k];
		if (widest < 0)
			return;
		w[widest]--;
	}
}

/* A cell in at most `w` columns: a longer one is cut and ends in "…". */
static size_t put_cell(FILE *f, const char *s, size_t w)
{
	size_t n = report_width(s), cols = 0;

	if (n <= w) {
		fputs(s, f);
		return n;
	}
	for (; *s && cols + 1 < w; cols++) {
		size_t len = 1;

		while (((unsigned char)s[len] & 0xc0) == 0x80)
			len++;
		fwrite(s, 1, len, f);
		s += len;
	}
	fputs("…", f);
	return cols + 1;
}

static void table_line(docket_replay_report *r, FILE *f, const char *const *c, int undecided, int cls)
{
	const size_t *w = r->widths[undecided];
	int last = TC_COUNT - 1, first = 1;
	size_t used;

	while (last > 0 && !shown(r, last, undecided))
		last--;
	for (int i = 0; i <= last; i++) {
		if (!shown(r, i, undecided))
			continue;
		if (!first)
			fputs("  ", f);
		first = 0;
		if (r->color && i == TC_CLASS) {
			colored(f, 1, class_sgr(cls), c[i]);
			used = report_width(c[i]);
		} else {
			used = put_cell(f, c[i], w[i]);
		}
		if (i != last)
			pad(f, w[i] - used);
	}
	fputc('\n', f);
}

/* ---- the table's head: lines wrapped at the terminal's width ---- */

/* Display width of the `n` bytes at `s`. */
static size_t width_n(const char *s, size_t n)
{
	size_t w = 0;

	for (size_t i = 0; i < n; i++)
		w += ((unsigned char)s[i] & 0xc0) != 0x80;
	return w;
}

/* `s` and a newline; with a width, words go on to lines indented by
 * `indent` where they would pass it (a longer word stays whole; the spaces
 * between words stay as they are where no line breaks). */
static void put_wrapped(FILE *f, const char *s, unsigned width, size_t indent)
{
	size_t col = 0, start, sp;

	if (!width) {
		fputs(s, f);
		fputc('\n', f);
		return;
	}
	while (*s == ' ') {
		fputc(*s++, f);
		col++;
	}
	start = col;
	while (*s) {
		size_t n = strcspn(s, " "), w = width_n(s, n);

		fwrite(s, 1, n, f);
		col += w;
		s += n;
		sp = strspn(s, " ");
		s += sp;
		if (!*s)
			break;
		n = strcspn(s, " ");
		if (col + sp + width_n(s, n) > width && col > start) {
			fputc('\n', f);
			pad(f, indent);
			col = start = indent;
		} else {
			pad(f, sp);
			col += sp;
		}
	}
	fputc('\n', f);
}

/* ---- sessions: the assumptions ---- */

static const char *runtime_of(const report_session *e)
{
	return *e->runtime ? e->runtime : "runtime not recorded";
}

/* The warning of a session whose sandbox assumed is not its runtime's. */
static int session_warning(docket_buf *out, const report_session *e)
{
	int error;

	docket_buf_clear(out);
	error = docket_buf_printf(out, "the runtime (%s) ran %s%s; the replay assumed %s (%s): verdicts that "
				  "depend on the sandbox may differ from what the runtime did", runtime_of(e),
				  strcmp(e->recorded, "none") == 0 ? "with no sandbox" : "with sandbox ",
				  strcmp(e->recorded, "none") == 0 ? "" : e->recorded, e->assumed,
				  report_session_from(e));
	if (error == 0 && docket_replay_sandbox_valid(e->recorded))
		error = docket_buf_printf(out, " (--assume-sandbox %s replays as it ran)", e->recorded);
	return error;
}

/* A runtime whose version docket does not model: say which one it decided under (issue 33). */
static int engine_version_note(docket_replay_report *r, FILE *f, const report_session *e)
{
	bool exact;
	const char *v = docket_policy_engine_version(e->runtime, &exact);
	int error;

	/* only Claude Code settings are decided version by version */
	if (!v || exact || !r->policy || strncmp(r->policy, "claude:", 7) != 0)
		return 0;
	docket_buf_clear(&r->head);
	if ((error = docket_buf_printf(&r->head, "  note: %s is not a modelled version: decided as Claude Code %s, "
				       "the nearest modelled one", e->runtime, v)) < 0)
		return error;
	put_wrapped(f, r->head.ptr, r->width, 4);
	return 0;
}

static int table_sessions(docket_replay_report *r, FILE *f)
{
	int error;

	for (size_t i = 0; i < r->nsess; i++) {
		const report_session *e = &r->sess[i];

		if ((error = report_session_baseline(&r->cell, e)) < 0)
			return error;
		docket_buf_clear(&r->head);
		if ((error = docket_buf_printf(&r->head, "%s%s%s (%s): sandbox %s (%s), the runtime had %s; baseline: %s",
					       e->host ? e->host : "", e->host ? "/" : "", e->id, runtime_of(e),
					       e->assumed, report_session_from(e),
					       *e->recorded ? e->recorded : "(not recorded)", r->cell.ptr)) < 0)
			return error;
		put_wrapped(f, r->head.ptr, r->width, 4);
		if ((error = engine_version_note(r, f, e)) < 0)
			return error;
		if (report_session_warns(e)) {
			docket_buf_clear(&r->head);
			if ((error = session_warning(&r->line, e)) < 0 ||
			    (error = docket_buf_printf(&r->head, "  warning: %s", r->line.ptr)) < 0)
				return error;
			put_wrapped(f, r->head.ptr, r->width, 4);
		}
	}
	return 0;
}

static int table_counts(docket_replay_report *r, FILE *f)
{
	int error;

	static const int order[] = { DOCKET_REPLAY_UNCHANGED, DOCKET_REPLAY_TIGHTENED, DOCKET_REPLAY_LOOSENED,
				     DOCKET_REPLAY_UNDECIDED };

	docket_buf_clear(&r->head);
	if ((error = docket_buf_printf(&r->head, "replayed %llu call%s against %s", (unsigned long long)r->calls,
				       r->calls == 1 ? "" : "s", r->policy)) < 0)
		return error;
	put_wrapped(f, r->head.ptr, r->width, 4);
	docket_buf_clear(&r->head);
	if ((error = docket_buf_printf(&r->head, "baseline: %s; approvals: %s",
				       r->baseline ? r->baseline : "recorded verdicts", r->approvals)) < 0)
		return error;
	put_wrapped(f, r->head.ptr, r->width, 4);
	if ((error = table_sessions(r, f)) < 0)
		return error;
	for (size_t i = 0; r->history && i < docket_replay_history_count(r->history); i++) {
		docket_buf_clear(&r->head);
		if ((error = docket_buf_printf(&r->head, "commit %.*s  %s", SHORT_ID,
					       docket_replay_history_commit(r->history, i),
					       docket_replay_history_summary(r->history, i))) < 0)
			return error;
		put_wrapped(f, r->head.ptr, r->width, 4);
	}
	fputc('\n', f);
	for (size_t i = 0; i < 4; i++) {
		fprintf(f, "  %-10s %8llu", docket_replay_class_name((docket_replay_class)order[i]),
			(unsigned long long)r->counts[order[i]]);
		if (order[i] == DOCKET_REPLAY_LOOSENED && r->human_denied)
			fprintf(f, "  (%llu denied by a human when recorded)", (unsigned long long)r->human_denied);
		fputc('\n', f);
	}
	/* the second verdict: what docket's hooks would decide (a fleet replay
	 * counts the same: no line that only a local ledger could know) */
	if (r->enforced_stricter)
		fprintf(f, "\n  %llu call%s stricter under docket's enforcement than the engine decides "
			"(--ran-despite-deny lists the calls that ran although a deny rule names them)\n",
			(unsigned long long)r->enforced_stricter, r->enforced_stricter == 1 ? " is" : "s are");
	fprintf(f, "\n  %-17s  %-17s  %8s\n", "was", "now", "calls");
	for (int was = 0; was < 5; was++)
		for (int now = 0; now < 4; now++)
			if (r->transitions[was][now])
				fprintf(f, "  %-17s  %-17s  %8llu\n", was == 4 ? "undecided" : verdict(was),
					verdict(now), (unsigned long long)r->transitions[was][now]);
	return 0;
}

/* The kept calls of one kind (changed or undecided), as table rows. */
static int table_rows(docket_replay_report *r, FILE *f, int undecided)
{
	docket_buf buf = DOCKET_BUF_INIT;
	report_row row;
	cells c;
	int error;

	if (fseek(r->spool, 0, SEEK_SET) != 0)
		return docket_error_set(DOCKET_ESTORAGE, "cannot read the report's temporary file");
	fputc('\n', f);
	if (undecided)
		fputs("undecided (no verdict recorded or implied by the history yet):\n", f);
	table_fit(r, undecided);
	table_line(r, f, headers, undecided, -1);
	while ((error = report_next(r, &row, &buf)) == 0) {
		if ((row.fx.cls == DOCKET_REPLAY_UNDECIDED) != undecided)
			continue;
		if ((error = cells_of(&c, r, &row)) < 0)
			break;
		table_line(r, f, c.c, undecided, row.fx.cls);
	}
	docket_buf_dispose(&buf);
	return error < 0 ? error : 0;
}

int report_table(docket_replay_report *r, FILE *out)
{
	int error = table_counts(r, out);

	if (error == 0 && r->changed_rows)
		error = table_rows(r, out, 0);
	if (error == 0 && r->undecided_rows)
		error = table_rows(r, out, 1);
	return error;
}

/* ---- json ---- */

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

/* A kept call's row, after those before it in its array. */
static int json_keep(docket_replay_report *r, const report_row *row)
{
	int undecided = row->fx.cls == DOCKET_REPLAY_UNDECIDED;
	uint64_t before = undecided ? r->undecided_rows : r->changed_rows;
	int error;

	docket_buf_clear(&r->line);
	if ((error = docket_buf_puts(&r->line, before ? ",\n    " : "\n    ")) < 0 ||
	    (error = report_json_row(&r->line, commit_of(r, row), row)) < 0)
		return error;
	if (fwrite(r->line.ptr, 1, r->line.len, r->text[undecided]) != r->line.len)
		return docket_error_set(DOCKET_ESTORAGE, "cannot write the report's temporary file");
	return 0;
}

static int dump(FILE *f, const json_t *v)
{
	if (!v)
		return docket_error_set_oom();
	docket_alloc_take_failure();
	if (json_dumpf(v, f, JSON_COMPACT | JSON_ENCODE_ANY) == 0)
		return 0;
	/* jansson says -1 for a failed allocation as for a failed write */
	return docket_alloc_take_failure() ? docket_error_set_oom()
					   : docket_error_set(DOCKET_ESTORAGE, "cannot write the report");
}

static int member(FILE *f, const char *key, json_t *value)
{
	int error;

	fprintf(f, "  \"%s\": ", key);
	error = dump(f, value);
	json_decref(value);
	fputs(",\n", f);
	return error;
}

static json_t *sessions_json(docket_replay_report *r)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < r->nsess; i++) {
		const report_session *e = &r->sess[i];
		int warns = report_session_warns(e);

		if (report_session_baseline(&r->cell, e) < 0 || (warns && session_warning(&r->line, e) < 0) ||
		    json_array_append_new(a, json_pack("{s:s, s:o, s:o, s:{s:s, s:s, s:o}, s:s, s:o}",
			"session", e->id, "host", str_or_null(e->host), "runtime", str_or_null(*e->runtime ? e->runtime : NULL),
			"sandbox", "assumed", e->assumed, "from", e->from,
			"recorded", str_or_null(*e->recorded ? e->recorded : NULL),
			"baseline", r->cell.ptr, "warning", str_or_null(warns ? r->line.ptr : NULL))) < 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

static json_t *head_json(docket_replay_report *r)
{
	json_t *commits = json_array(), *trans = json_array(), *totals;

	for (size_t i = 0; r->history && commits && i < docket_replay_history_count(r->history); i++)
		json_array_append_new(commits, json_pack("{s:s, s:s}", "commit",
							 docket_replay_history_commit(r->history, i), "summary",
							 docket_replay_history_summary(r->history, i)));
	for (int was = 0; trans && was < 5; was++)
		for (int now = 0; now < 4; now++)
			if (r->transitions[was][now])
				json_array_append_new(trans, json_pack("{s:o, s:s, s:s, s:I}",
					"was", was == 4 ? json_null() : json_string(verdict(was)), "now", verdict(now),
					"class", docket_replay_class_name(was == 4 ? DOCKET_REPLAY_UNDECIDED :
						 replay_classify((docket_verdict)was, (docket_verdict)now)),
					"calls", (json_int_t)r->transitions[was][now]));
	totals = json_pack("{s:I, s:I, s:I, s:I, s:I, s:I}", "calls", (json_int_t)r->calls,
			   "unchanged", (json_int_t)r->counts[DOCKET_REPLAY_UNCHANGED],
			   "tightened", (json_int_t)r->counts[DOCKET_REPLAY_TIGHTENED],
			   "loosened", (json_int_t)r->counts[DOCKET_REPLAY_LOOSENED],
			   "loosened_human_denied", (json_int_t)r->human_denied,
			   "undecided", (json_int_t)r->counts[DOCKET_REPLAY_UNDECIDED]);

	return json_pack("{s:s, s:o, s:s, s:{s:o, s:o, s:o}, s:o, s:o, s:o, s:o}",
			 "policy", r->policy, "baseline", str_or_null(r->baseline), "approvals", r->approvals,
			 "filters", "session", str_or_null(r->session), "since", str_or_null(r->since),
			 "until", str_or_null(r->until),
			 "commits", r->history ? commits : (json_decref(commits), json_null()),
			 "totals", totals, "transitions", trans, "sessions", sessions_json(r));
}

/* One array of kept calls ("changes" or "undecided"). */
static int json_rows(docket_replay_report *r, FILE *f, int undecided)
{
	int error;

	fprintf(f, "  \"%s\": [", undecided ? "undecided" : "changes");
	error = report_copy(r->text[undecided], f);
	fputs((undecided ? r->undecided_rows : r->changed_rows) ? "\n  ]" : "]", f);
	return error;
}

int report_json(docket_replay_report *r, FILE *out)
{
	json_t *head = head_json(r);
	const char *key;
	json_t *v;
	int error = 0;

	if (!head)
		return docket_error_set_oom();
	fprintf(out, "{\n  \"schema\": \"docket.replay/v%d\",\n", DOCKET_REPLAY_SCHEMA_VERSION);
	json_object_foreach(head, key, v) {
		if ((error = member(out, key, json_incref(v))) < 0)
			break;
	}
	json_decref(head);
	if (error == 0 && (error = json_rows(r, out, 0)) == 0) {
		fputs(",\n", out);
		error = json_rows(r, out, 1);
	}
	fputs("\n}\n", out);
	return error;
}

/* ---- escaping for XML and markdown ---- */

static void put_escaped(FILE *f, const char *s, int markdown)
{
	for (; s && *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '&')
			fputs("&amp;", f);
		else if (ch == '<')
			fputs("&lt;", f);
		else if (ch == '>')
			fputs("&gt;", f);
		else if (ch == '"' && !markdown)
			fputs("&quot;", f);
		else if (ch == '|' && markdown)
			fputs("&#124;", f);
		else if (ch == '`' && markdown)
			fputs("&#96;", f);
		else if (ch < 0x20 || ch == 0x7f)
			fputc(' ', f);   /* not allowed in XML 1.0, breaks a table row */
		else
			fputc(ch, f);
	}
}

/* ---- junit ---- */

static int fails(const docket_replay_report *r, int cls)
{
	return (cls == DOCKET_REPLAY_LOOSENED && (r->fail_on & DOCKET_REPLAY_FAIL_LOOSENED)) ||
	       (cls == DOCKET_REPLAY_TIGHTENED && (r->fail_on & DOCKET_REPLAY_FAIL_TIGHTENED));
}

static void junit_case(docket_replay_report *r, FILE *f, const report_row *row)
{
	const char *cls = docket_replay_class_name((docket_replay_class)row->fx.cls);
	const char *commit = commit_of(r, row);

	fputs("    <testcase classname=\"docket.replay.", f);
	if (row->s[RS_HOST]) {
		put_escaped(f, row->s[RS_HOST], 0);
		fputs("/", f);
	}
	put_escaped(f, row->s[RS_SESSION], 0);
	fputs("\" name=\"", f);
	put_escaped(f, row->s[RS_INVOCATION], 0);
	fputs(" ", f);
	put_escaped(f, row->s[RS_TOOL], 0);
	fputs(": ", f);
	put_escaped(f, row->s[RS_TARGET], 0);
	fputs("\">\n", f);
	if (fails(r, row->fx.cls)) {
		fprintf(f, "      <failure type=\"%s\" message=\"%s: %s -&gt; %s%s\">", cls, cls, verdict(row->fx.was),
			verdict(row->fx.now), row->fx.human_denied ? " (a human denied it when recorded)" : "");
		fprintf(f, "seq %llu at %s\nbaseline (%s): %s\nnow: %s\nrule: ", (unsigned long long)row->fx.seq,
			row->s[RS_TIME], docket_replay_baseline_name((docket_replay_baseline)row->fx.baseline),
			verdict(row->fx.was), verdict(row->fx.now));
		rule_text(&r->cell, row);
		put_escaped(f, r->cell.ptr, 0);
		if (commit)
			fprintf(f, "\ncommit: %s", commit);
		fputs("</failure>\n", f);
	} else {
		fprintf(f, "      <system-out>%s: %s -&gt; %s</system-out>\n", cls, verdict(row->fx.was),
			verdict(row->fx.now));
	}
	fputs("    </testcase>\n", f);
}

static uint64_t junit_failures(const docket_replay_report *r)
{
	return (fails(r, DOCKET_REPLAY_LOOSENED) ? r->counts[DOCKET_REPLAY_LOOSENED] : 0) +
	       (fails(r, DOCKET_REPLAY_TIGHTENED) ? r->counts[DOCKET_REPLAY_TIGHTENED] : 0);
}

int report_junit(docket_replay_report *r, FILE *out)
{
	uint64_t tests = r->changed_rows ? r->changed_rows : 1, failures = junit_failures(r);
	int error;

	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", out);
	fprintf(out, "<testsuites name=\"docket replay\" tests=\"%llu\" failures=\"%llu\" errors=\"0\">\n",
		(unsigned long long)tests, (unsigned long long)failures);
	fputs("  <testsuite name=\"docket replay: ", out);
	put_escaped(out, r->policy, 0);
	fprintf(out, "\" tests=\"%llu\" failures=\"%llu\" errors=\"0\" skipped=\"0\">\n",
		(unsigned long long)tests, (unsigned long long)failures);
	fputs("    <properties>\n", out);
	for (int c = 0; c < 4; c++)
		fprintf(out, "      <property name=\"%s\" value=\"%llu\"/>\n", docket_replay_class_name((docket_replay_class)c),
			(unsigned long long)r->counts[c]);
	fprintf(out, "      <property name=\"loosened_human_denied\" value=\"%llu\"/>\n    </properties>\n",
		(unsigned long long)r->human_denied);
	if (!r->changed_rows)
		fprintf(out, "    <testcase classname=\"docket.replay\" name=\"no decision changed (%llu calls replayed)\"/>\n",
			(unsigned long long)r->calls);
	error = report_copy(r->text[0], out);
	fputs("  </testsuite>\n</testsuites>\n", out);
	return error;
}

/* ---- markdown ---- */

static void md_code(FILE *f, const char *s)
{
	fputs("<code>", f);
	put_escaped(f, s, 1);
	fputs("</code>", f);
}

/* Text named in the head, cut to `cap` bytes (at a character). */
static void md_source_cut(FILE *f, const char *s, size_t cap)
{
	size_t n = strlen(s);

	if (n <= cap) {
		md_code(f, s);
		return;
	}
	n = cap;
	while (n && ((unsigned char)s[n] & 0xc0) == 0x80)
		n--;
	fputs("<code>", f);
	for (size_t i = 0; i < n; i++) {
		char one[2] = { s[i], '\0' };

		put_escaped(f, one, 1);
	}
	fputs("…</code>", f);
}

static void md_source(FILE *f, const char *s)
{
	md_source_cut(f, s, MD_MAX_SOURCE);
}

/* The sessions' assumptions: a table of at most MD_MAX_SESSIONS, those
 * with a warning first, then the warnings. */
static int md_sessions(docket_replay_report *r, FILE *f)
{
	size_t shown = 0, warned = 0;
	int error;

	if (!r->nsess)
		return 0;
	fputs("\n| session | runtime | sandbox assumed | the runtime had | baseline |\n|---|---|---|---|---|\n", f);
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < r->nsess && shown < MD_MAX_SESSIONS; i++) {
			const report_session *e = &r->sess[i];

			if (report_session_warns(e) != !pass)
				continue;
			if ((error = report_session_baseline(&r->cell, e)) < 0)
				return error;
			fputs(pass ? "| " : "| ⚠ ", f);
			md_source_cut(f, e->id, MD_MAX_SESSION_ID);
			fputs(" | ", f);
			md_source_cut(f, e->runtime, MD_MAX_SESSION_ID);
			fprintf(f, " | %s (%s) | %s | ", e->assumed, report_session_from(e),
				*e->recorded ? e->recorded : "not recorded");
			put_escaped(f, r->cell.ptr, 1);
			fputs(" |\n", f);
			shown++;
			warned += !pass;
		}
	if (r->nsess > shown)
		fprintf(f, "\n… and %zu more sessions (see `docket replay --format json`).\n", r->nsess - shown);
	for (size_t i = 0; i < r->nsess && warned; i++)
		if (report_session_warns(&r->sess[i])) {
			if ((error = session_warning(&r->line, &r->sess[i])) < 0)
				return error;
			fputs("\n> ⚠ ", f);
			md_source_cut(f, r->sess[i].id, MD_MAX_SESSION_ID);
			fputs(": ", f);
			put_escaped(f, r->line.ptr, 1);
			fputc('\n', f);
			warned--;
		}
	return 0;
}

static void md_counts(docket_replay_report *r, FILE *f)
{
	fputs("## docket replay\n\nReplayed **", f);
	fprintf(f, "%llu** call%s against ", (unsigned long long)r->calls, r->calls == 1 ? "" : "s");
	md_source(f, r->policy);
	fputs(" (baseline: ", f);
	if (r->baseline)
		md_source(f, r->baseline);
	else
		fputs("recorded verdicts", f);
	fprintf(f, "; approvals: %s).\n\n", r->approvals);
	fprintf(f, "| class | calls |\n|---|---:|\n");
	fprintf(f, "| **loosened** | %llu", (unsigned long long)r->counts[DOCKET_REPLAY_LOOSENED]);
	if (r->human_denied)
		fprintf(f, " (%llu denied by a human)", (unsigned long long)r->human_denied);
	fprintf(f, " |\n| tightened | %llu |\n| unchanged | %llu |\n| undecided | %llu |\n\n",
		(unsigned long long)r->counts[DOCKET_REPLAY_TIGHTENED],
		(unsigned long long)r->counts[DOCKET_REPLAY_UNCHANGED],
		(unsigned long long)r->counts[DOCKET_REPLAY_UNDECIDED]);
	fputs("| was → now | calls |\n|---|---:|\n", f);
	for (int was = 0; was < 5; was++)
		for (int now = 0; now < 4; now++)
			if (r->transitions[was][now])
				fprintf(f, "| %s → %s | %llu |\n", was == 4 ? "undecided" : verdict(was), verdict(now),
					(unsigned long long)r->transitions[was][now]);
}

static void md_row(docket_replay_report *r, FILE *f, const report_row *row)
{
	cells c;

	if (cells_of(&c, r, row) < 0)
		return;
	fprintf(f, "| %s%s%s | ", row->fx.cls == DOCKET_REPLAY_LOOSENED ? "**" : "",
		docket_replay_class_name((docket_replay_class)row->fx.cls),
		row->fx.cls == DOCKET_REPLAY_LOOSENED ? "**" : "");
	if (row->fx.human_denied)
		fputs("⚠ human denied | ", f);
	else
		fputs(" | ", f);
	for (int i = TC_SESSION; i <= TC_TARGET; i++) {
		md_code(f, c.c[i]);
		fputs(" | ", f);
	}
	fprintf(f, "%s → %s | ", c.c[TC_WAS], c.c[TC_NOW]);
	md_code(f, c.c[TC_RULE]);
	if (r->history) {
		fputs(" | ", f);
		md_code(f, c.c[TC_COMMIT]);
	}
	fputs(" |\n", f);
}

/* The head: counts, transitions, sessions and the changed calls' header. */
static int md_head(docket_replay_report *r, FILE *f)
{
	int error;

	md_counts(r, f);
	if ((error = md_sessions(r, f)) < 0)
		return error;
	if (r->changed_rows) {
		fputs("\n### Changed calls\n\n| class | note | session | invocation | tool | command or target | "
		      "was → now | rule |", f);
		fputs(r->history ? " commit |\n|---|---|---|---|---|---|---|---|---|\n" : "\n|---|---|---|---|---|---|---|---|\n",
		      f);
	}
	return 0;
}

/* The rows that fit in `budget` bytes, whole; *shown counts them. */
static int md_rows(docket_replay_report *r, FILE *out, size_t budget, uint64_t *shown)
{
	FILE *rows = r->text[0];
	char *line = NULL;
	size_t cap = 0, used = 0;
	ssize_t n;
	int error = 0;

	*shown = 0;
	if (fflush(rows) != 0 || fseek(rows, 0, SEEK_SET) != 0)
		return docket_error_set(DOCKET_ESTORAGE, "cannot read the report's temporary file");
	while ((n = getline(&line, &cap, rows)) > 0 && used + (size_t)n <= budget) {
		if (fwrite(line, 1, (size_t)n, out) != (size_t)n) {
			error = docket_error_set(DOCKET_ESTORAGE, "cannot write the report");
			break;
		}
		used += (size_t)n;
		(*shown)++;
	}
	free(line);
	if (error == 0 && ferror(rows))
		error = docket_error_set(DOCKET_ESTORAGE, "cannot read the report's temporary file");
	return error;
}

int report_markdown(docket_replay_report *r, FILE *out)
{
	char *head = NULL;
	size_t hlen = 0;
	uint64_t shown = 0;
	FILE *f = open_memstream(&head, &hlen);
	int error;

	if (!f)
		return docket_error_set_oom();
	error = md_head(r, f);
	if (fclose(f) != 0 && error == 0)
		error = docket_error_set_oom();
	if (error == 0 && fwrite(head, 1, hlen, out) != hlen)
		error = docket_error_set(DOCKET_ESTORAGE, "cannot write the report");
	free(head);
	if (error == 0 && r->changed_rows) {
		error = md_rows(r, out, hlen + MD_TAIL < MD_MAX_BYTES ? MD_MAX_BYTES - MD_TAIL - hlen : 0, &shown);
		if (error == 0 && r->changed_rows > shown)
			fprintf(out, "\n… and %llu more (see `docket replay --format json`).\n",
				(unsigned long long)(r->changed_rows - shown));
	}
	return error;
}

/* ---- keeping a call ---- */

/* A changed call's markdown row, while there are fewer than MD_MAX_ROWS
 * (finish keeps those that fit MD_MAX_BYTES). */
static int md_keep(docket_replay_report *r, const report_row *row)
{
	if (r->changed_rows >= MD_MAX_ROWS)
		return 0;
	md_row(r, r->text[0], row);
	return ferror(r->text[0]) ? docket_error_set(DOCKET_ESTORAGE, "cannot write the report's temporary file") : 0;
}

int report_keep(docket_replay_report *r, const report_row *row)
{
	int undecided = row->fx.cls == DOCKET_REPLAY_UNDECIDED, error;

	switch (r->format) {
	case DOCKET_REPLAY_JSON:
		return json_keep(r, row);
	case DOCKET_REPLAY_JUNIT:
		if (!undecided)
			junit_case(r, r->text[0], row);
		return 0;
	case DOCKET_REPLAY_MARKDOWN:
		return undecided ? 0 : md_keep(r, row);
	default:
		if ((error = report_spool(r, row)) < 0)
			return error;
		return measure(r, row);
	}
}
