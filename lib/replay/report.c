/* SPDX-License-Identifier: Apache-2.0 */
/*
 * report.c: replay reports. A report counts every call and keeps the
 * changed and undecided ones in temporary files, so memory does not grow
 * with them: json, junit and markdown write each row as it comes (in its
 * final form, report_write.c), the table keeps records (its column widths
 * are known only at the end). finish() writes the counts, which every format
 * puts first, then copies the rows. Nothing in a report depends on the clock
 * or the machine: the same calls give the same bytes.
 */
#include <string.h>

#include "report_internal.h"
#include "util/alloc.h"
#include "util/error.h"

static char *dup_or_null(const char *s, int *bad)
{
	char *d;

	if (!s)
		return NULL;
	if (!(d = docket_malloc(strlen(s) + 1))) {
		*bad = 1;
		return NULL;
	}
	memcpy(d, s, strlen(s) + 1);
	return d;
}

int docket_replay_report_new(docket_replay_report **out, const docket_replay_report_info *info)
{
	docket_replay_report *r = docket_calloc(1, sizeof(*r));
	int bad = 0;

	*out = NULL;
	if (!r)
		return docket_error_set_oom();
	r->format = info->format;
	r->fail_on = info->fail_on;
	r->color = info->color;
	r->width = info->width;
	r->history = info->history;
	r->policy = dup_or_null(info->policy ? info->policy : "", &bad);
	r->baseline = dup_or_null(info->baseline, &bad);
	r->approvals = dup_or_null(info->approvals ? info->approvals : "recorded", &bad);
	r->session = dup_or_null(info->session, &bad);
	r->since = dup_or_null(info->since, &bad);
	r->until = dup_or_null(info->until, &bad);
	if (bad) {
		docket_replay_report_free(r);
		return docket_error_set_oom();
	}
	if (r->format == DOCKET_REPLAY_TABLE)
		bad = !(r->spool = tmpfile());
	else
		bad = !(r->text[0] = tmpfile()) || (r->format == DOCKET_REPLAY_JSON && !(r->text[1] = tmpfile()));
	if (bad) {
		docket_replay_report_free(r);
		return docket_error_set(DOCKET_ESTORAGE, "cannot create a temporary file for the report");
	}
	*out = r;
	return 0;
}

void docket_replay_report_free(docket_replay_report *r)
{
	if (!r)
		return;
	if (r->spool)
		fclose(r->spool);
	for (int i = 0; i < 2; i++)
		if (r->text[i])
			fclose(r->text[i]);
	docket_free(r->policy);
	docket_free(r->baseline);
	docket_free(r->approvals);
	docket_free(r->session);
	docket_free(r->since);
	docket_free(r->until);
	docket_buf_dispose(&r->target);
	docket_buf_dispose(&r->cell);
	docket_buf_dispose(&r->session_cell);
	docket_buf_dispose(&r->line);
	docket_buf_dispose(&r->head);
	report_sessions_free(r);
	docket_free(r);
}

uint64_t docket_replay_report_count(const docket_replay_report *r, docket_replay_class c)
{
	return (unsigned)c < 4 ? r->counts[c] : 0;
}

uint64_t docket_replay_report_human_denied(const docket_replay_report *r)
{
	return r->human_denied;
}

int docket_replay_report_failed(const docket_replay_report *r, unsigned fail_on)
{
	return ((fail_on & DOCKET_REPLAY_FAIL_LOOSENED) && r->counts[DOCKET_REPLAY_LOOSENED]) ||
	       ((fail_on & DOCKET_REPLAY_FAIL_TIGHTENED) && r->counts[DOCKET_REPLAY_TIGHTENED]);
}

/* ---- the spool: one record per kept call ---- */

static int put_str(FILE *f, const char *s)
{
	uint32_t n = s ? (uint32_t)strlen(s) : UINT32_MAX;

	if (fwrite(&n, sizeof(n), 1, f) != 1 || (s && n && fwrite(s, 1, n, f) != n))
		return docket_error_set(DOCKET_ESTORAGE, "cannot write the report's temporary file");
	return 0;
}

int report_spool(docket_replay_report *r, const report_row *row)
{
	int error = 0;

	if (fwrite(&row->fx, sizeof(row->fx), 1, r->spool) != 1)
		return docket_error_set(DOCKET_ESTORAGE, "cannot write the report's temporary file");
	for (int i = 0; i < RS_COUNT && error == 0; i++)
		error = put_str(r->spool, row->s[i]);
	return error;
}

static int get_str(FILE *f, docket_buf *buf, size_t *off)
{
	uint32_t n;

	if (fread(&n, sizeof(n), 1, f) != 1)
		return docket_error_set(DOCKET_ESTORAGE, "cannot read the report's temporary file");
	if (n == UINT32_MAX) {
		*off = SIZE_MAX;
		return 0;
	}
	*off = buf->len;
	if (docket_buf_reserve(buf, (size_t)n + 1) < 0)
		return DOCKET_ENOMEM;
	if (n && fread(buf->ptr + buf->len, 1, n, f) != n)
		return docket_error_set(DOCKET_ESTORAGE, "cannot read the report's temporary file");
	buf->len += n;
	buf->ptr[buf->len++] = '\0';
	return 0;
}

int report_copy(FILE *spool, FILE *out)
{
	char chunk[65536];
	size_t n;

	if (fflush(spool) != 0 || fseek(spool, 0, SEEK_SET) != 0)
		return docket_error_set(DOCKET_ESTORAGE, "cannot read the report's temporary file");
	while ((n = fread(chunk, 1, sizeof(chunk), spool)) > 0)
		if (fwrite(chunk, 1, n, out) != n)
			return docket_error_set(DOCKET_ESTORAGE, "cannot write the report");
	return ferror(spool) ? docket_error_set(DOCKET_ESTORAGE, "cannot read the report's temporary file") : 0;
}

int report_next(docket_replay_report *r, report_row *row, docket_buf *buf)
{
	size_t off[RS_COUNT];
	int error = 0;

	docket_buf_clear(buf);
	if (fread(&row->fx, sizeof(row->fx), 1, r->spool) != 1)
		return 1;
	for (int i = 0; i < RS_COUNT && error == 0; i++)
		error = get_str(r->spool, buf, &off[i]);
	for (int i = 0; i < RS_COUNT && error == 0; i++)
		row->s[i] = off[i] == SIZE_MAX ? NULL : buf->ptr + off[i];
	return error;
}

/* ---- adding calls ---- */

/* Display width of UTF-8 text: one column per code point. */
size_t report_width(const char *s)
{
	size_t w = 0;

	for (; s && *s; s++)
		w += ((unsigned char)*s & 0xc0) != 0x80;
	return w;
}

static void row_of(report_row *row, const docket_replay_call *c, const char *target)
{
	report_fixed fx = { c->seq, (int)c->cls, (int)c->baseline, (int)c->was, (int)c->now, c->human_denied,
			    c->rule_line, (int)c->enforced, c->changed_at };

	row->fx = fx;
	row->s[RS_SESSION] = c->session;
	row->s[RS_INVOCATION] = c->invocation;
	row->s[RS_TIME] = c->time;
	row->s[RS_TOOL] = c->tool;
	row->s[RS_ARGS] = c->args_json;
	row->s[RS_TARGET] = target;
	row->s[RS_RULE] = c->rule;
	row->s[RS_REASON] = c->reason;
	row->s[RS_LEDGER] = c->ledger;
	row->s[RS_HOST] = c->host;
	row->s[RS_EWHY] = c->enforced_why && c->enforced != c->now ? c->enforced_why : NULL;
}

int docket_replay_report_add(void *ctx, const docket_replay_call *c)
{
	docket_replay_report *r = ctx;
	report_row row;
	int error;

	if ((error = report_session_add(r, c)) < 0)
		return error;
	r->calls++;
	r->counts[c->cls]++;
	r->transitions[c->baseline == DOCKET_REPLAY_BASE_NONE ? 4 : c->was][c->now]++;
	if (c->cls == DOCKET_REPLAY_LOOSENED && c->human_denied)
		r->human_denied++;
	if (c->enforced_why && c->enforced != c->now)
		r->enforced_stricter++;
	if (c->cls == DOCKET_REPLAY_UNCHANGED)
		return 0;
	if (!c->target && (error = replay_target(&r->target, c->args_json)) < 0)
		return error;
	row_of(&row, c, c->target ? c->target : r->target.ptr ? r->target.ptr : "");
	if ((error = report_keep(r, &row)) < 0)
		return error;
	if (c->cls == DOCKET_REPLAY_UNDECIDED)
		r->undecided_rows++;
	else
		r->changed_rows++;
	return 0;
}

int docket_replay_report_finish(docket_replay_report *r, FILE *out)
{
	int error;

	if (r->spool && (fflush(r->spool) != 0 || fseek(r->spool, 0, SEEK_SET) != 0))
		return docket_error_set(DOCKET_ESTORAGE, "cannot read the report's temporary file");
	switch (r->format) {
	case DOCKET_REPLAY_JSON:
		error = report_json(r, out);
		break;
	case DOCKET_REPLAY_JUNIT:
		error = report_junit(r, out);
		break;
	case DOCKET_REPLAY_MARKDOWN:
		error = report_markdown(r, out);
		break;
	default:
		error = report_table(r, out);
		break;
	}
	if (error == 0 && (fflush(out) != 0 || ferror(out)))
		error = docket_error_set(DOCKET_ESTORAGE, "cannot write the report");
	return error;
}
