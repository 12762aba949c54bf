/* SPDX-License-Identifier: Apache-2.0 */
/*
 * report.c: the audit report, one self-contained HTML page (inline CSS and
 * SVG; no script, no external resource), built from the compact fold of
 * the ledger (calls.h):
 *   headline cards, approval wait-time histogram, decisions over time,
 *   sessions, approvals, denials, policy revisions, in-doubt and recovered
 *   calls, and the ledger's seal (chain head, checkpoints).
 * Every text from the ledger goes through html_text(), which escapes it.
 * At scale (docs/audit.md "Scale") a table longer than a page keeps its
 * first rows on the report and links the others, on pages of their own in
 * the pages directory: nothing is left out.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>

#include "calls.h"
#include "util/alloc.h"
#include "util/error.h"

#define CHART_W 560
#define CHART_H 220
#define CHART_PAD_L 40
#define CHART_PAD_B 42
#define CHART_PAD_T 14
#define MAX_BUCKETS 24
#define REPORT_PAGE_ROWS 500 /* rows of a table on the report when it has pages */

typedef struct report_sink {
	calls_sink base;      /* first: the sink and its fold */
	docket_ledger *ledger;
	docket_buf html;
	json_t *checkpoints;
	int seal_unreadable;
	const char *title;   /* a fleet report: the store's name (NULL: one ledger) */
	json_t *machines;    /* fleet: host -> {ledger, events, sessions, calls, approvals, denials} */
	const char *pages_dir;  /* long tables go on pages there (NULL: all on the page) */
	const char *pages_href; /* ... linked as pages_href/NAME */
	size_t page_rows;       /* rows per page */
	const char *report_name; /* the report's file name, linked back from its pages */
	size_t pages;           /* pages written */
	struct session_counts *session_counts; /* while the sessions table is written */
} report_sink;

static const struct {
	const char *name;
	const char *color;
} decisions[D_COUNT] = {
	{ "allowed by policy", "#2e7d32" },
	{ "approved by a person", "#1565c0" },
	{ "denied by policy", "#c62828" },
	{ "refused by a person", "#ef6c00" },
	{ "no outcome yet", "#9e9e9e" },
};

static const char css[] =
	"*{box-sizing:border-box}"
	"body{margin:0;font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;"
	"color:#1f2328;background:#f6f7f9}"
	"main{max-width:1180px;margin:0 auto;padding:24px 28px 40px}"
	"header{background:#14213d;color:#fff;padding:22px 28px}"
	"header .in{max-width:1180px;margin:0 auto;padding:0 28px}"
	"h1{margin:0 0 6px;font-size:24px;font-weight:650}"
	"h2{font-size:17px;margin:30px 0 10px;padding-bottom:6px;border-bottom:2px solid #dde1e6}"
	".meta{color:#c9d1e0;margin:2px 0;font-size:13px}"
	".meta code{color:#fff}"
	"code{font:12px ui-monospace,SFMono-Regular,Menlo,monospace}"
	".cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(150px,1fr));gap:12px;margin-top:4px}"
	".card{background:#fff;border:1px solid #dde1e6;border-radius:8px;padding:12px 14px;"
	"border-top:4px solid #8896ab}"
	".card .n{font-size:26px;font-weight:700;line-height:1.1}"
	".card .l{color:#57606a;font-size:12px;text-transform:uppercase;letter-spacing:.04em}"
	".card .s{color:#57606a;font-size:12px}"
	".ok{border-top-color:#2e7d32}.warn{border-top-color:#ef6c00}.bad{border-top-color:#c62828}"
	".info{border-top-color:#1565c0}"
	".charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(420px,1fr));gap:14px}"
	"figure{margin:0;background:#fff;border:1px solid #dde1e6;border-radius:8px;padding:12px}"
	"figcaption{font-weight:600;margin-bottom:6px}"
	"svg{width:100%;height:auto;display:block}"
	"svg text{font:11px system-ui,sans-serif;fill:#57606a}"
	".legend{display:flex;flex-wrap:wrap;gap:10px;font-size:12px;color:#57606a;margin-top:6px}"
	".legend i{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:4px;"
	"vertical-align:-1px}"
	"table{border-collapse:collapse;width:100%;background:#fff;border:1px solid #dde1e6;"
	"border-radius:8px;overflow:hidden;font-size:13px}"
	"th{background:#eef1f5;text-align:left;font-weight:600;color:#333;padding:7px 9px;"
	"white-space:nowrap}"
	"td{padding:6px 9px;border-top:1px solid #eceff3;vertical-align:top}"
	"tr:nth-child(even) td{background:#fafbfc}"
	"td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}"
	"td.t{white-space:nowrap;color:#57606a}"
	".call{font:12px ui-monospace,SFMono-Regular,Menlo,monospace;word-break:break-all}"
	".b{display:inline-block;padding:1px 7px;border-radius:10px;font-size:12px;font-weight:600;"
	"color:#fff;white-space:nowrap}"
	".g{background:#2e7d32}.r{background:#c62828}.o{background:#ef6c00}.u{background:#1565c0}"
	".y{background:#8a8f98}"
	".empty{color:#57606a;font-style:italic;background:#fff;border:1px dashed #cfd5dd;"
	"border-radius:8px;padding:10px 12px}"
	".tl{list-style:none;margin:0;padding:0 0 0 14px;border-left:3px solid #c9d1e0}"
	".tl li{position:relative;margin:0 0 10px;padding-left:10px}"
	".tl li:before{content:'';position:absolute;left:-22px;top:5px;width:11px;height:11px;"
	"border-radius:50%;background:#1565c0;border:2px solid #fff}"
	"footer{color:#57606a;font-size:12px;margin-top:34px}";

/* ---- HTML helpers ------------------------------------------------------ */

static int html_text(docket_buf *b, const char *s)
{
	int error = 0;

	while (s && *s && error == 0) {
		size_t n = strcspn(s, "&<>\"'");

		if (n && (error = docket_buf_put(b, s, n)) < 0)
			break;
		s += n;
		switch (*s) {
		case '&': error = docket_buf_puts(b, "&amp;"); break;
		case '<': error = docket_buf_puts(b, "&lt;"); break;
		case '>': error = docket_buf_puts(b, "&gt;"); break;
		case '"': error = docket_buf_puts(b, "&quot;"); break;
		case '\'': error = docket_buf_puts(b, "&#39;"); break;
		default: continue;
		}
		s++;
	}
	return error;
}

/* A relative URL path of a file name: every byte but letters, digits and
 * "-._~/" percent-encoded (so "#", "?", quotes, spaces cannot break it). */
static int url_path(docket_buf *b, const char *s)
{
	int error = 0;

	for (; s && *s && error == 0; s++) {
		unsigned char ch = (unsigned char)*s;

		if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || strchr("-._~/", ch))
			error = docket_buf_putc(b, (char)ch);
		else
			error = docket_buf_printf(b, "%%%02X", ch);
	}
	return error;
}

/* <td class=CLASS>TEXT</td> */
static int cell(docket_buf *b, const char *class_name, const char *text)
{
	int error;

	if ((error = docket_buf_printf(b, class_name ? "<td class=\"%s\">" : "<td>",
				       class_name ? class_name : "")) < 0 ||
	    (error = html_text(b, text)) < 0)
		return error;
	return docket_buf_puts(b, "</td>");
}

/* "2025-03-14T09:26:53.120Z" -> "2025-03-14 09:26:53" */
static void short_time(char out[24], const char *rfc3339)
{
	snprintf(out, 24, "%.19s", rfc3339 ? rfc3339 : "");
	if (strlen(out) > 10 && out[10] == 'T')
		out[10] = ' ';
}

static int time_cell(docket_buf *b, const char *rfc3339)
{
	char t[24];

	short_time(t, rfc3339);
	return cell(b, "t", *t ? t : "-");
}

static void human_ms(char *out, size_t n, int64_t ms)
{
	if (ms < 0)
		snprintf(out, n, "-");
	else if (ms < 1000)
		snprintf(out, n, "%lld ms", (long long)ms);
	else if (ms < 60000)
		snprintf(out, n, "%.1f s", (double)ms / 1000.0);
	else if (ms < 3600000)
		snprintf(out, n, "%lldm %02llds", (long long)(ms / 60000), (long long)(ms / 1000 % 60));
	else
		snprintf(out, n, "%lldh %02lldm", (long long)(ms / 3600000), (long long)(ms / 60000 % 60));
}

static int badge(docket_buf *b, const char *color_class, const char *text)
{
	int error;

	if ((error = docket_buf_printf(b, "<td><span class=\"b %s\">", color_class)) < 0 ||
	    (error = html_text(b, text)) < 0)
		return error;
	return docket_buf_puts(b, "</span></td>");
}

static int call_cell(docket_buf *b, const call_fold *c, const call_rec *r)
{
	int error;

	if ((error = docket_buf_puts(b, "<td><span class=\"call\">")) < 0 ||
	    (error = html_text(b, calls_str(c, r->summary))) < 0 ||
	    (error = docket_buf_puts(b, "</span><br><small>")) < 0 ||
	    (error = html_text(b, calls_str(c, r->tool))) < 0 ||
	    (error = docket_buf_puts(b, " &middot; ")) < 0 ||
	    (error = html_text(b, calls_str(c, r->invocation))) < 0)
		return error;
	return docket_buf_puts(b, "</small></td>");
}

static int empty_note(docket_buf *b, const char *text)
{
	return docket_buf_printf(b, "<p class=\"empty\">%s</p>\n", text);
}

static int section_empty(docket_buf *b, const char *title, const char *text)
{
	int error = docket_buf_printf(b, "<h2>%s</h2>\n", title);

	return error == 0 ? empty_note(b, text) : error;
}

/* ---- classification ---------------------------------------------------- */

static const call_fold *fold(const report_sink *r)
{
	return &r->base.c;
}

static int in_scope(const call_rec *r)
{
	return (r->flags & CF_SINCE) != 0;
}

static int is_troubled(const call_rec *r)
{
	return (r->flags & CF_RECOVERY) || r->status == DOCKET__V1__OUTCOME_STATUS__OUTCOME_STATUS_INDETERMINATE ||
	       (r->dispatches && !r->status);
}

/* ---- header and cards -------------------------------------------------- */

typedef struct totals {
	size_t calls, approvals, approved, waiting, denials, troubled, pending, waits_unknown, sessions;
	int64_t *waits;
	size_t nwaits;
	audit_counts risk;   /* audit_count() */
} totals;

static int count_totals(totals *t, const call_fold *c)
{
	memset(t, 0, sizeof(*t));
	if (!(t->waits = docket_calloc(c->ncalls + 1, sizeof(*t->waits))))
		return docket_error_set_oom();
	for (size_t i = 0; i < c->nsessions; i++)
		t->sessions += (c->session[i].flags & CS_OPENED) != 0;
	for (size_t i = 0; i < c->ncalls; i++) {
		const call_rec *r = &c->call[i];

		if (!in_scope(r))
			continue;
		t->calls++;
		t->approvals += r->result != 0;
		t->approved += calls_granted(r);
		t->waiting += (r->flags & CF_REQUESTED) && !r->result;
		t->denials += calls_denied(r);
		t->troubled += is_troubled(r);
		t->pending += calls_decision(r) == D_PENDING;
		if (r->flags & CF_WAIT_KNOWN)
			t->waits[t->nwaits++] = r->wait_ms;
		t->waits_unknown += (r->flags & CF_WAIT_UNKNOWN) != 0;
	}
	audit_count(&t->risk, c);
	return 0;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

static int card(docket_buf *b, const char *kind, const char *label, const char *number, const char *sub)
{
	return docket_buf_printf(b, "<div class=\"card %s\"><div class=\"l\">%s</div><div class=\"n\">%s</div>"
				 "<div class=\"s\">%s</div></div>\n", kind, label, number, sub);
}

static const char *plural(size_t n)
{
	return n == 1 ? "" : "s";
}

static int write_cards(docket_buf *b, const report_sink *r, totals *t)
{
	const audit_counts *a = &t->risk;
	char n[6][32], sub[6][260], wait[32] = "-";
	int error = 0;

	qsort(t->waits, t->nwaits, sizeof(*t->waits), cmp_i64);
	if (t->nwaits)
		human_ms(wait, sizeof(wait), t->nwaits % 2 ? t->waits[t->nwaits / 2]
				: (t->waits[t->nwaits / 2 - 1] + t->waits[t->nwaits / 2]) / 2);
	snprintf(n[0], sizeof(n[0]), "%zu", t->sessions);
	snprintf(sub[0], sizeof(sub[0]), "%llu events in the %s",
		 (unsigned long long)(r->title ? r->base.base.stats->events : r->base.base.info.events),
		 r->title ? "fleet" : "ledger");
	snprintf(n[1], sizeof(n[1]), "%zu", t->calls);
	snprintf(sub[1], sizeof(sub[1]), "%zu without an outcome yet", t->pending);
	snprintf(n[2], sizeof(n[2]), "%zu", t->approvals);
	snprintf(sub[2], sizeof(sub[2]), "%zu approved, %zu refused%s", t->approved, t->approvals - t->approved,
		 t->waiting ? ", some still waiting" : "");
	snprintf(n[3], sizeof(n[3]), "%zu", t->denials);
	snprintf(sub[3], sizeof(sub[3]), "by policy or by a person");
	snprintf(n[4], sizeof(n[4]), "%s", wait);
	snprintf(sub[4], sizeof(sub[4]), "median of %zu known approval wait%s", t->nwaits, plural(t->nwaits));
	if (t->waits_unknown)
		snprintf(sub[4] + strlen(sub[4]), sizeof(sub[4]) - strlen(sub[4]),
			 "; %zu unknown (the source did not record when it asked)", t->waits_unknown);
	snprintf(n[5], sizeof(n[5]), "%zu", a->attention);
	snprintf(sub[5], sizeof(sub[5]), "%zu risky session mode%s, %zu escalation%s, %zu risky call%s, "
		 "%zu without outcome, %zu denied", a->risky_sessions, plural(a->risky_sessions), a->escalations,
		 plural(a->escalations), a->risky_calls, plural(a->risky_calls), a->no_outcome, a->denials);
	if (a->incidents)
		snprintf(sub[5] + strlen(sub[5]), sizeof(sub[5]) - strlen(sub[5]), ", %zu ledger incident%s",
			 a->incidents, plural(a->incidents));
	snprintf(sub[5] + strlen(sub[5]), sizeof(sub[5]) - strlen(sub[5]), " (a call in several lists counts once)");
	if (!error) error = docket_buf_puts(b, "<section class=\"cards\" id=\"cards\">\n");
	/* never green while anything needs attention */
	if (!error) error = card(b, a->attention ? "bad attention" : "ok attention", "Needs attention", n[5], sub[5]);
	if (!error) error = card(b, "info", "Sessions", n[0], sub[0]);
	if (!error) error = card(b, "info", "Tool calls", n[1], sub[1]);
	if (!error) error = card(b, "ok", "Approvals", n[2], sub[2]);
	if (!error) error = card(b, t->denials ? "bad" : "ok", "Denials", n[3], sub[3]);
	if (!error) error = card(b, "info", "Approval wait", n[4], sub[4]);
	if (!error) error = docket_buf_puts(b, "</section>\n");
	return error;
}

static int write_header(docket_buf *b, const report_sink *r)
{
	char head[65], now[32];
	const json_t *last = json_array_get(r->checkpoints, json_array_size(r->checkpoints) - 1);
	time_t t = time(NULL);
	struct tm tm;
	int error;

	gmtime_r(&t, &tm);
	strftime(now, sizeof(now), "%Y-%m-%d %H:%M UTC", &tm);
	if (r->title) {
		if ((error = docket_buf_puts(b, "<header><div class=\"in\"><h1>docket fleet audit report</h1>\n"
					     "<p class=\"meta\">")) < 0 ||
		    (error = html_text(b, r->title)) < 0)
			return error;
		return docket_buf_printf(b, " &middot; %zu machine%s &middot; generated %s</p>\n<p class=\"meta\">"
					 "Prove it: <code>docket fleet verify</code> re-checks every ledger held."
					 "</p></div></header>\n<main>\n", json_object_size(r->machines),
					 json_object_size(r->machines) == 1 ? "" : "s", now);
	}
	docket_hex(head, r->base.base.info.head, sizeof(r->base.base.info.head));
	if ((error = docket_buf_printf(b, "<header><div class=\"in\"><h1>docket audit report</h1>\n"
				       "<p class=\"meta\">ledger <code>%s</code> &middot; generated %s</p>\n"
				       "<p class=\"meta\">chain head: seq <code>%llu</code> hash <code>%.16s&hellip;</code>",
				       r->base.base.info.ledger_id, now, (unsigned long long)r->base.base.info.events, head)) < 0)
		return error;
	if (last)
		error = docket_buf_printf(b, " &middot; %zu signed checkpoint%s, the last covers seq %lld "
					  "(key <code>%.16s&hellip;</code>)",
					  json_array_size(r->checkpoints), json_array_size(r->checkpoints) == 1 ? "" : "s",
					  (long long)json_integer_value(json_object_get(last, "seq")),
					  jstr(last, "key_id"));
	else
		error = docket_buf_puts(b, r->seal_unreadable ? " &middot; <b>the checkpoints cannot be read</b>"
							     : " &middot; no signed checkpoints");
	if (error == 0)
		error = docket_buf_puts(b, "</p>\n<p class=\"meta\">Prove it: <code>docket verify --pubkey KEY.pub"
					   "</code> checks the chain and every signature.</p></div></header>\n<main>\n");
	return error;
}

/* ---- charts ------------------------------------------------------------ */

static int svg_open(docket_buf *b, const char *caption, const char *label)
{
	int error;

	if ((error = docket_buf_puts(b, "<figure><figcaption>")) < 0 || (error = html_text(b, caption)) < 0)
		return error;
	return docket_buf_printf(b, "</figcaption><svg viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"%s\">\n"
				 "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#8896ab\"/>\n",
				 CHART_W, CHART_H, label, CHART_PAD_L, CHART_H - CHART_PAD_B, CHART_W - 6,
				 CHART_H - CHART_PAD_B);
}

/* Horizontal grid lines and their labels for a y axis 0..max. */
static int y_axis(docket_buf *b, size_t max)
{
	size_t step = max <= 5 ? 1 : (max + 4) / 5;
	int plot_h = CHART_H - CHART_PAD_B - CHART_PAD_T, error = 0;

	for (size_t v = step; v <= max && error == 0; v += step) {
		int y = CHART_H - CHART_PAD_B - (int)((double)v / (double)max * plot_h);

		error = docket_buf_printf(b, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#eceff3\"/>"
					  "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%zu</text>\n",
					  CHART_PAD_L, y, CHART_W - 6, y, CHART_PAD_L - 6, y + 4, v);
	}
	return error;
}

static int bar(docket_buf *b, int x, int w, int y, int h, const char *color, const char *title)
{
	int error;

	if (h <= 0)
		return 0;
	if ((error = docket_buf_printf(b, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" rx=\"2\" "
				       "fill=\"%s\"><title>", x, y, w, h, color)) < 0 ||
	    (error = html_text(b, title)) < 0)
		return error;
	return docket_buf_puts(b, "</title></rect>\n");
}

static const struct {
	const char *label;
	int64_t below_ms;
} wait_buckets[] = {
	{ "< 5 s", 5000 }, { "5-15 s", 15000 }, { "15-30 s", 30000 }, { "30-60 s", 60000 },
	{ "1-5 min", 300000 }, { "5-30 min", 1800000 }, { "> 30 min", INT64_MAX },
};

#define NWAIT (sizeof(wait_buckets) / sizeof(wait_buckets[0]))

static int wait_chart(docket_buf *b, const totals *t)
{
	size_t counts[NWAIT] = { 0 }, max = 1;
	int plot_w = CHART_W - CHART_PAD_L - 10, plot_h = CHART_H - CHART_PAD_B - CHART_PAD_T;
	int slot = plot_w / (int)NWAIT, error;

	for (size_t i = 0; i < t->nwaits; i++) {
		size_t k = 0;

		while (t->waits[i] >= wait_buckets[k].below_ms)
			k++;
		counts[k]++;
	}
	for (size_t k = 0; k < NWAIT; k++)
		max = counts[k] > max ? counts[k] : max;
	if ((error = svg_open(b, "How long approvals waited", "histogram of approval wait times")) < 0 ||
	    (error = y_axis(b, max)) < 0)
		return error;
	for (size_t k = 0; k < NWAIT && error == 0; k++) {
		int h = (int)((double)counts[k] / (double)max * plot_h), x = CHART_PAD_L + 6 + (int)k * slot;
		char title[64];

		snprintf(title, sizeof(title), "%s: %zu approval%s", wait_buckets[k].label, counts[k],
			 counts[k] == 1 ? "" : "s");
		error = bar(b, x, slot - 12, CHART_H - CHART_PAD_B - h, h, "#1565c0", title);
		if (error == 0)
			error = docket_buf_printf(b, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
						  x + (slot - 12) / 2, CHART_H - CHART_PAD_B + 16, wait_buckets[k].label);
		if (error == 0 && counts[k])
			error = docket_buf_printf(b, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" "
						  "style=\"fill:#1f2328;font-weight:600\">%zu</text>\n",
						  x + (slot - 12) / 2, CHART_H - CHART_PAD_B - h - 4, counts[k]);
	}
	if (error == 0)
		error = docket_buf_printf(b, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">time from request to "
					  "decision</text></svg></figure>\n", CHART_W / 2, CHART_H - 6);
	return error;
}

typedef struct time_buckets {
	int64_t start, width;
	const char *width_name;
	size_t n;
	size_t counts[MAX_BUCKETS][D_COUNT];
} time_buckets;

static const struct {
	int64_t ms;
	const char *name;
} bucket_widths[] = {
	{ 60000, "minute" }, { 300000, "5 minutes" }, { 900000, "15 minutes" }, { 3600000, "hour" },
	{ 21600000, "6 hours" }, { 86400000, "day" }, { 604800000, "week" }, { 2592000000LL, "30 days" },
};

static void bucket_label(char *out, size_t n, const time_buckets *tb, size_t k)
{
	time_t t = (time_t)((tb->start + (int64_t)k * tb->width) / 1000);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(out, n, tb->width >= 86400000 ? "%m-%d" : "%H:%M", &tm);
}

static int stacked_bar(docket_buf *b, const time_buckets *tb, size_t k, int x, int w, size_t max)
{
	int plot_h = CHART_H - CHART_PAD_B - CHART_PAD_T, y = CHART_H - CHART_PAD_B, error = 0;
	char label[16];

	bucket_label(label, sizeof(label), tb, k);
	for (int d = 0; d < D_COUNT && error == 0; d++) {
		int h = (int)((double)tb->counts[k][d] / (double)max * plot_h);
		char title[96];

		snprintf(title, sizeof(title), "%s: %zu %s", label, tb->counts[k][d], decisions[d].name);
		y -= h;
		error = bar(b, x, w, y, h, decisions[d].color, title);
	}
	if (error == 0 && (tb->n <= 12 || k % ((tb->n + 11) / 12) == 0))
		error = docket_buf_printf(b, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
					  x + w / 2, CHART_H - CHART_PAD_B + 16, label);
	return error;
}

static int legend(docket_buf *b)
{
	int error = docket_buf_puts(b, "<div class=\"legend\">");

	for (int d = 0; d < D_COUNT && error == 0; d++)
		error = docket_buf_printf(b, "<span><i style=\"background:%s\"></i>%s</span>",
					  decisions[d].color, decisions[d].name);
	return error == 0 ? docket_buf_puts(b, "</div>") : error;
}

static void bucket_calls(time_buckets *tb, const call_fold *c)
{
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	size_t w = 0;

	memset(tb, 0, sizeof(*tb));
	for (size_t i = 0; i < c->ncalls; i++) {
		const call_rec *r = &c->call[i];

		if (in_scope(r) && r->intent_ms >= 0) {
			lo = r->intent_ms < lo ? r->intent_ms : lo;
			hi = r->intent_ms > hi ? r->intent_ms : hi;
		}
	}
	if (lo > hi)
		return;
	while (w + 1 < sizeof(bucket_widths) / sizeof(bucket_widths[0]) &&
	       (hi - lo) / bucket_widths[w].ms >= MAX_BUCKETS)
		w++;
	tb->width = bucket_widths[w].ms;
	tb->width_name = bucket_widths[w].name;
	tb->start = lo - lo % tb->width;
	tb->n = (size_t)((hi - tb->start) / tb->width) + 1;
	if (tb->n > MAX_BUCKETS)
		tb->n = MAX_BUCKETS;
	for (size_t i = 0; i < c->ncalls; i++) {
		const call_rec *r = &c->call[i];
		size_t k;

		if (!in_scope(r) || r->intent_ms < 0)
			continue;
		k = (size_t)((r->intent_ms - tb->start) / tb->width);
		tb->counts[k < tb->n ? k : tb->n - 1][calls_decision(r)]++;
	}
}

static int decisions_chart(docket_buf *b, const call_fold *c)
{
	time_buckets tb;
	size_t max = 1;
	int plot_w = CHART_W - CHART_PAD_L - 10, slot, error;
	bucket_calls(&tb, c);
	for (size_t k = 0; k < tb.n; k++) {
		size_t sum = 0;

		for (int d = 0; d < D_COUNT; d++)
			sum += tb.counts[k][d];
		max = sum > max ? sum : max;
	}
	if ((error = svg_open(b, "Decisions over time", "tool calls per time bucket by decision")) < 0 ||
	    (error = y_axis(b, max)) < 0)
		return error;
	slot = tb.n ? plot_w / (int)tb.n : plot_w;
	for (size_t k = 0; k < tb.n && error == 0; k++)
		error = stacked_bar(b, &tb, k, CHART_PAD_L + 6 + (int)k * slot, slot > 14 ? slot - 8 : slot - 2, max);
	if (error == 0)
		error = docket_buf_printf(b, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">tool calls per %s "
					  "(UTC)</text></svg>", CHART_W / 2, CHART_H - 6,
					  tb.n ? tb.width_name : "time bucket");
	if (error == 0)
		error = legend(b);
	return error == 0 ? docket_buf_puts(b, "</figure>\n") : error;
}

/* ---- tables ------------------------------------------------------------ */

/* ---- tables ------------------------------------------------------------ */

static int table_open(docket_buf *b, const char *title, const char *const *heads)
{
	int error = docket_buf_printf(b, "<h2>%s</h2>\n<table><thead><tr>", title);

	for (size_t i = 0; heads[i] && error == 0; i++)
		error = docket_buf_printf(b, "<th>%s</th>", heads[i]);
	return error == 0 ? docket_buf_puts(b, "</tr></thead><tbody>\n") : error;
}

/* Fleet reports: one row per machine. */
static int machines_table(docket_buf *b, const report_sink *r)
{
	static const char *const heads[] = { "Host", "Ledger", "Events", "Sessions", "Calls", "Approvals",
					     "Denials", NULL };
	static const char *const keys[] = { "events", "sessions", "calls", "approvals", "denials" };
	const char *host;
	json_t *m;
	char n[24];
	int error;

	if (!r->title)
		return 0;
	if ((error = table_open(b, "Machines", heads)) < 0)
		return error;
	json_object_foreach(r->machines, host, m) {
		if ((error = docket_buf_puts(b, "<tr>")) < 0 || (error = cell(b, "call", host)) < 0 ||
		    (error = cell(b, NULL, jstr(m, "ledger"))) < 0)
			return error;
		for (size_t i = 0; i < 5; i++) {
			snprintf(n, sizeof(n), "%lld", (long long)json_integer_value(json_object_get(m, keys[i])));
			if ((error = cell(b, "num", n)) < 0)
				return error;
		}
		if ((error = docket_buf_puts(b, "</tr>\n")) < 0)
			return error;
	}
	return docket_buf_puts(b, "</tbody></table>\n");
}

/*
 * Rows of a table: `idx` lists the records, `row` writes one. Without a
 * pages directory, or when they fit on one page, all are on the report.
 * Otherwise the report keeps the first page_rows and links the pages
 * NAME-2.html ... in the pages directory that hold the others, each a page
 * of its own with the same table: every row is on exactly one page.
 */
typedef int (*row_fn)(docket_buf *b, const report_sink *r, size_t i);

typedef struct table {
	const char *name, *title, *none;
	const char *const *heads;
	row_fn row;
	size_t *idx;
	size_t n;
} table;

static int table_rows(docket_buf *b, const report_sink *r, const table *t, size_t from, size_t to)
{
	int error = table_open(b, t->title, t->heads);

	for (size_t i = from; i < to && error == 0; i++)
		error = t->row(b, r, t->idx[i]);
	return error == 0 ? docket_buf_puts(b, "</tbody></table>\n") : error;
}

static int write_file(const char *path, const docket_buf *b)
{
	FILE *f = fopen(path, "w");
	int ok = f && fwrite(b->ptr, 1, b->len, f) == b->len;

	if (f && fclose(f) != 0)
		ok = 0;
	return ok ? 0 : docket_error_set(DOCKET_ESTORAGE, "cannot write %s: %s", path, strerror(errno));
}

/* Page `k` (2 ...) of `pages` of table `t`. */
static int table_page(report_sink *r, docket_buf *page, const table *t, size_t k, size_t pages)
{
	docket_buf path = DOCKET_BUF_INIT;
	size_t from = (k - 1) * r->page_rows, to = from + r->page_rows < t->n ? from + r->page_rows : t->n;
	int error;

	docket_buf_clear(page);
	if ((error = docket_buf_printf(page, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
				       "<title>docket audit report: %s, page %zu of %zu</title>\n<style>%s</style>"
				       "</head>\n<body>\n<main>\n<p><a href=\"../", t->title, k, pages, css)) < 0 ||
	    (error = url_path(page, r->report_name)) < 0 ||
	    (error = docket_buf_printf(page, "\">the report</a> &middot; %s: rows %zu to %zu of %zu, page %zu of "
				       "%zu</p>\n", t->title, from + 1, to, t->n, k, pages)) < 0 ||
	    (error = table_rows(page, r, t, from, to)) < 0 ||
	    (error = docket_buf_puts(page, "</main></body></html>\n")) < 0 ||
	    (error = docket_buf_printf(&path, "%s/%s-%zu.html", r->pages_dir, t->name, k)) < 0)
		goto cleanup;
	error = write_file(path.ptr, page);
	r->pages++;
cleanup:
	docket_buf_dispose(&path);
	return error;
}

static int table_more(docket_buf *b, report_sink *r, const table *t, size_t pages)
{
	docket_buf page = DOCKET_BUF_INIT;
	int error;

	if (mkdir(r->pages_dir, 0755) < 0 && errno != EEXIST)
		return docket_error_set(DOCKET_ESTORAGE, "cannot make %s: %s", r->pages_dir, strerror(errno));
	error = docket_buf_printf(b, "<p class=\"more\">%zu rows in all: rows 1 to %zu above, the others on pages",
				  t->n, r->page_rows);
	for (size_t k = 2; k <= pages && error == 0; k++)
		if ((error = docket_buf_puts(b, " <a href=\"")) == 0 && (error = url_path(b, r->pages_href)) == 0 &&
		    (error = docket_buf_printf(b, "/%s-%zu.html\">%zu</a>", t->name, k, k)) == 0)
			error = table_page(r, &page, t, k, pages);
	docket_buf_dispose(&page);
	return error == 0 ? docket_buf_puts(b, "</p>\n") : error;
}

static int write_table(docket_buf *b, report_sink *r, const table *t)
{
	size_t pages;
	int error;

	if (t->n == 0)
		return section_empty(b, t->title, t->none);
	if (!r->pages_dir || t->n <= r->page_rows)
		return table_rows(b, r, t, 0, t->n);
	pages = (t->n + r->page_rows - 1) / r->page_rows;
	if ((error = table_rows(b, r, t, 0, r->page_rows)) < 0)
		return error;
	return table_more(b, r, t, pages);
}

/* The in-scope calls `pred` selects, as a table's rows. */
static int select_calls(table *t, const call_fold *c, int (*pred)(const call_rec *r, unsigned arg), unsigned arg)
{
	t->n = 0;
	if (!(t->idx = docket_calloc(c->ncalls + 1, sizeof(*t->idx))))
		return docket_error_set_oom();
	for (size_t i = 0; i < c->ncalls; i++)
		if (pred(&c->call[i], arg))
			t->idx[t->n++] = i;
	return 0;
}

/* Write `t` over the calls `pred` selects. */
static int calls_table(docket_buf *b, report_sink *r, table *t, int (*pred)(const call_rec *r, unsigned arg),
		       unsigned arg)
{
	int error;

	if ((error = select_calls(t, fold(r), pred, arg)) == 0)
		error = write_table(b, r, t);
	docket_free(t->idx);
	t->idx = NULL;
	return error;
}

/* ---- sessions ---------------------------------------------------------- */

/* Per session: calls, approvals, denials, pending (in scope), one pass. */
enum { SC_CALLS, SC_APPROVALS, SC_DENIALS, SC_PENDING, SC_N };

typedef struct session_counts {
	size_t n[SC_N];
} session_counts;

static session_counts *count_sessions(const call_fold *c)
{
	session_counts *counts = docket_calloc(c->nsessions + 1, sizeof(*counts));

	if (!counts)
		return NULL;
	for (size_t i = 0; i < c->ncalls; i++) {
		const call_rec *r = &c->call[i];
		size_t *n = counts[r->session].n;

		if (!in_scope(r))
			continue;
		n[SC_CALLS]++;
		n[SC_APPROVALS] += r->result != 0;
		n[SC_DENIALS] += calls_denied(r);
		n[SC_PENDING] += !r->status;
	}
	return counts;
}

static int session_row(docket_buf *b, const report_sink *rs, size_t i)
{
	const call_fold *c = fold(rs);
	const session_rec *s = &c->session[i];
	char n[SC_N][24];
	int error = 0;

	for (int k = 0; k < SC_N; k++)
		snprintf(n[k], sizeof(n[k]), "%zu", rs->session_counts[i].n[k]);
	if (!error) error = docket_buf_puts(b, "<tr>");
	if (!error) error = cell(b, "call", calls_str(c, s->id));
	if (!error) error = cell(b, NULL, s->runtime ? calls_str(c, s->runtime) : "-");
	if (!error) error = time_cell(b, calls_str(c, s->opened_time));
	if (!error) error = (s->flags & CS_CLOSED) ? time_cell(b, calls_str(c, s->closed_time)) : badge(b, "u", "open");
	for (int k = 0; k < SC_N && !error; k++)
		error = cell(b, "num", n[k]);
	return error == 0 ? docket_buf_puts(b, "</tr>\n") : error;
}

static int sessions_table(docket_buf *b, report_sink *r)
{
	static const char *const heads[] = { "Session", "Runtime", "Opened", "Closed", "Calls", "Approvals",
					     "Denials", "Pending", NULL };
	const call_fold *c = fold(r);
	table t = { "sessions", "Sessions", "No sessions recorded.", heads, session_row, NULL, 0 };
	int error;

	if (!(t.idx = docket_calloc(c->nsessions + 1, sizeof(*t.idx))) || !(r->session_counts = count_sessions(c))) {
		docket_free(t.idx);
		return docket_error_set_oom();
	}
	for (size_t i = 0; i < c->nsessions; i++)
		if (c->session[i].flags & CS_OPENED)
			t.idx[t.n++] = i;
	error = write_table(b, r, &t);
	docket_free(t.idx);
	docket_free(r->session_counts);
	r->session_counts = NULL;
	return error;
}

/* ---- calls ------------------------------------------------------------- */

static const char *result_class(const call_rec *r)
{
	return calls_granted(r) ? "g" : r->result == DOCKET__V1__APPROVAL_RESULT__APPROVAL_RESULT_SUPERSEDED ? "y" : "r";
}

/* A cell of a text, "-" when empty. */
static int text_cell(docket_buf *b, const char *text)
{
	return cell(b, NULL, *text ? text : "-");
}

static int approval_row(docket_buf *b, const report_sink *rs, size_t i)
{
	const call_fold *c = fold(rs);
	const call_rec *r = &c->call[i];
	char wait[32] = "-";
	int error = 0;

	if (r->flags & CF_WAIT_KNOWN)
		human_ms(wait, sizeof(wait), r->wait_ms);
	if (!error) error = docket_buf_puts(b, "<tr>");
	if (!error) error = time_cell(b, calls_str(c, r->requested_time));
	if (!error) error = cell(b, "call", calls_str(c, c->session[r->session].id));
	if (!error) error = call_cell(b, c, r);
	if (!error) error = text_cell(b, calls_str(c, r->reviewer));
	if (!error) error = text_cell(b, calls_str(c, r->actor));
	if (!error) error = r->result ? badge(b, result_class(r), calls_result(r)) : badge(b, "o", "waiting");
	if (!error) error = cell(b, "num", wait);
	if (!error) error = text_cell(b, calls_str(c, r->source));
	return error == 0 ? docket_buf_puts(b, "</tr>\n") : error;
}

static int asked(const call_rec *r, unsigned arg)
{
	(void)arg;
	return in_scope(r) && (r->flags & CF_REQUESTED);
}

static int troubled(const call_rec *r, unsigned arg)
{
	(void)arg;
	return in_scope(r) && is_troubled(r);
}

static int trouble_row(docket_buf *b, const report_sink *rs, size_t i)
{
	const call_fold *c = fold(rs);
	const call_rec *r = &c->call[i];
	const char *status = calls_status(r);
	char attempts[16];
	int error = 0;

	snprintf(attempts, sizeof(attempts), "%u", (unsigned)r->dispatches);
	if (!error) error = docket_buf_puts(b, "<tr>");
	if (!error) error = cell(b, "call", calls_str(c, c->session[r->session].id));
	if (!error) error = call_cell(b, c, r);
	if (!error) error = !r->status ? badge(b, "o", "in doubt")
			  : r->status == DOCKET__V1__OUTCOME_STATUS__OUTCOME_STATUS_INDETERMINATE
				  ? badge(b, "r", "indeterminate") : badge(b, "g", "recovered");
	if (!error) error = cell(b, "num", attempts);
	if (!error) error = text_cell(b, calls_str(c, r->recovery));
	if (!error) error = text_cell(b, status);
	return error == 0 ? docket_buf_puts(b, "</tr>\n") : error;
}

static int policy_item(docket_buf *b, const call_fold *c, const policy_rec *p)
{
	char t[24];
	int error;

	short_time(t, calls_str(c, p->time));
	if ((error = docket_buf_printf(b, "<li><b>revision %lld</b> <small>(", (long long)p->revision)) < 0 ||
	    (error = html_text(b, calls_str(c, p->format))) < 0 ||
	    (error = docket_buf_printf(b, ")</small> &middot; %s &middot; session <span class=\"call\">", t)) < 0 ||
	    (error = html_text(b, calls_str(c, c->session[p->session].id))) < 0 ||
	    (error = docket_buf_puts(b, "</span><br>by ")) < 0 ||
	    (error = html_text(b, p->actor ? calls_str(c, p->actor) : "an unnamed actor")) < 0)
		return error;
	if (p->reason && ((error = docket_buf_puts(b, ": <i>")) < 0 ||
			  (error = html_text(b, calls_str(c, p->reason))) < 0 ||
			  (error = docket_buf_puts(b, "</i>")) < 0))
		return error;
	return docket_buf_puts(b, "</li>\n");
}

static int policy_timeline(docket_buf *b, const call_fold *c)
{
	int error;

	if ((error = docket_buf_puts(b, "<h2>Policy revisions</h2>\n")) < 0)
		return error;
	if (c->npolicies == 0)
		return empty_note(b, "No policy was set in these sessions.");
	if ((error = docket_buf_puts(b, "<ul class=\"tl\">\n")) < 0)
		return error;
	for (size_t i = 0; i < c->npolicies; i++)
		if ((error = policy_item(b, c, &c->policy[i])) < 0)
			return error;
	return docket_buf_puts(b, "</ul>\n");
}

/* ---- the risk view (first screen) -------------------------------------- */

static int mode_row(docket_buf *b, const report_sink *rs, size_t i)
{
	const call_fold *c = fold(rs);
	const policy_rec *p = &c->policy[i];
	const session_rec *s = &c->session[p->session];
	int error = docket_buf_puts(b, "<tr>");

	if (!error) error = cell(b, "call", calls_str(c, s->id));
	if (!error) error = text_cell(b, calls_str(c, s->runtime));
	if (!error) error = text_cell(b, calls_str(c, p->settings));
	if (!error) error = time_cell(b, calls_str(c, p->time));
	if (!error) error = text_cell(b, calls_str(c, s->cwd));
	return error == 0 ? docket_buf_puts(b, "</tr>\n") : error;
}

/* A row of a list of calls (AL_*): when, session, call, then the list's cells. */
static int finding_row(docket_buf *b, const report_sink *rs, size_t i, unsigned list)
{
	const call_fold *c = fold(rs);
	const call_rec *r = &c->call[i];
	docket_buf text = DOCKET_BUF_INIT, outcome = DOCKET_BUF_INIT;
	int error = docket_buf_puts(b, "<tr>");

	if (!error) error = time_cell(b, calls_str(c, r->intent_time));
	if (!error) error = cell(b, "call", calls_str(c, c->session[r->session].id));
	if (!error) error = call_cell(b, c, r);
	if (!error) error = audit_call_outcome(&outcome, c, r);
	if (!error && list == AL_ESCALATION)
		error = text_cell(b, calls_str(c, r->justification));
	if (!error && list == AL_RISKY && (error = audit_class_names(&text, r->risk)) == 0 &&
	    (error = text_cell(b, text.ptr)) == 0)
		error = text_cell(b, calls_str(c, r->hosts));
	if (!error && list == AL_DENIED && (error = text_cell(b, calls_decision(r) == D_REJECTED ? "person"
										       : "policy")) == 0 &&
	    (error = audit_call_reason(&text, c, r)) == 0 && (error = text_cell(b, text.ptr)) == 0)
		error = text_cell(b, calls_str(c, r->rule));
	if (!error && list != AL_DENIED)
		error = text_cell(b, outcome.ptr);
	docket_buf_dispose(&text);
	docket_buf_dispose(&outcome);
	return error == 0 ? docket_buf_puts(b, "</tr>\n") : error;
}

static int escalation_row(docket_buf *b, const report_sink *r, size_t i)
{
	return finding_row(b, r, i, AL_ESCALATION);
}

static int risky_row(docket_buf *b, const report_sink *r, size_t i)
{
	return finding_row(b, r, i, AL_RISKY);
}

static int open_row(docket_buf *b, const report_sink *r, size_t i)
{
	return finding_row(b, r, i, AL_NO_OUTCOME);
}

static int denial_row(docket_buf *b, const report_sink *r, size_t i)
{
	return finding_row(b, r, i, AL_DENIED);
}

static int incident_row(docket_buf *b, const report_sink *rs, size_t i)
{
	const call_fold *c = fold(rs);
	const incident_rec *r = &c->incident[i];
	char seq[24];
	int error = docket_buf_puts(b, "<tr>");

	snprintf(seq, sizeof(seq), "%llu", (unsigned long long)r->seq);
	if (!error) error = time_cell(b, calls_str(c, r->time));
	if (!error) error = cell(b, "num", seq);
	if (!error) error = text_cell(b, calls_str(c, r->kind));
	if (!error) error = cell(b, "call", calls_str(c, r->file));
	if (!error) error = text_cell(b, calls_str(c, r->error));
	return error == 0 ? docket_buf_puts(b, "</tr>\n") : error;
}

static int in_list(const call_rec *r, unsigned list)
{
	return (audit_call_lists(r) & list) != 0;
}

/* A findings list in its <div id=NAME> (the risk view's anchors). */
static int finding_list(docket_buf *b, report_sink *r, table *t, unsigned list)
{
	int error = docket_buf_printf(b, "<div class=\"finding\" id=\"%s\">", t->name);

	if (!error)
		error = list ? calls_table(b, r, t, in_list, list) : write_table(b, r, t);
	return error == 0 ? docket_buf_puts(b, "</div>\n") : error;
}

static int index_all(table *t, size_t n, int (*keep)(const call_fold *c, size_t i), const call_fold *c)
{
	if (!(t->idx = docket_calloc(n + 1, sizeof(*t->idx))))
		return docket_error_set_oom();
	for (size_t i = 0; i < n; i++)
		if (!keep || keep(c, i))
			t->idx[t->n++] = i;
	return 0;
}

static int risky_policy(const call_fold *c, size_t i)
{
	return c->policy[i].settings != 0;
}

static int risk_section(docket_buf *b, report_sink *r)
{
	static const char *const mode_heads[] = { "Session", "Runtime", "Risky settings", "Since", "Working directory", NULL };
	static const char *const esc_heads[] = { "When", "Session", "Call", "Justification", "Outcome", NULL };
	static const char *const risk_heads[] = { "When", "Session", "Call", "Risk classes", "Hosts", "Outcome", NULL };
	static const char *const open_heads[] = { "When", "Session", "Call", "State", NULL };
	static const char *const deny_heads[] = { "When", "Session", "Call", "Denied by", "Reason", "Rule", NULL };
	static const char *const incident_heads[] = { "When", "Seq", "Kind", "Spool entry", "Why the ledger refused it",
						      NULL };
	const call_fold *c = fold(r);
	table modes = { "risky_sessions", "Sessions in risky modes", "No session ran in a risky mode.", mode_heads,
			mode_row, NULL, 0 };
	table esc = { "escalations", "Escalations", "No call asked to leave the sandbox.", esc_heads, escalation_row,
		      NULL, 0 };
	table risky = { "risky_calls", "Allowed calls in risk classes", "No allowed call falls in a risk class.",
			risk_heads, risky_row, NULL, 0 };
	table open = { "no_outcome", "Calls without an outcome", "Every call has an outcome.", open_heads, open_row,
		       NULL, 0 };
	table deny = { "denials", "Denials", "No call was denied.", deny_heads, denial_row, NULL, 0 };
	table incidents = { "incidents", "Ledger incidents", "No spool entry was refused.", incident_heads,
			    incident_row, NULL, 0 };
	int error = docket_buf_puts(b, "<section id=\"risk\"><h2>What needs attention</h2>\n");

	if (!error && (error = index_all(&modes, c->npolicies, risky_policy, c)) == 0)
		error = finding_list(b, r, &modes, 0);
	if (!error) error = finding_list(b, r, &esc, AL_ESCALATION);
	if (!error) error = finding_list(b, r, &risky, AL_RISKY);
	if (!error) error = finding_list(b, r, &open, AL_NO_OUTCOME);
	if (!error) error = finding_list(b, r, &deny, AL_DENIED);
	if (!error && c->nincidents && (error = index_all(&incidents, c->nincidents, NULL, c)) == 0)
		error = finding_list(b, r, &incidents, 0);
	docket_free(modes.idx);
	docket_free(incidents.idx);
	return error == 0 ? docket_buf_puts(b, "</section>\n") : error;
}

/* ---- the page ---------------------------------------------------------- */

static int write_page(report_sink *r)
{
	static const char *const approval_heads[] = { "Requested", "Session", "Call", "Reviewer", "Decided by",
						      "Result", "Wait", "Decision source", NULL };
	static const char *const trouble_heads[] = { "Session", "Call", "State", "Attempts", "Recovery actions",
						     "Outcome", NULL };
	table approvals = { "approvals", "Approvals", "No call needed an approval.", approval_heads, approval_row,
			    NULL, 0 };
	table trouble = { "in_doubt", "In doubt and recovered calls", "No call was left in doubt or recovered.",
			  trouble_heads, trouble_row, NULL, 0 };
	docket_buf *b = &r->html;
	totals t;
	int error;

	if ((error = count_totals(&t, fold(r))) < 0)
		return error;
	if (!error) error = docket_buf_printf(b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
					      "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
					      "<title>docket audit report</title>\n<style>%s</style></head>\n<body>\n", css);
	if (!error) error = write_header(b, r);
	if (!error) error = write_cards(b, r, &t);
	if (!error) error = risk_section(b, r);
	if (!error) error = docket_buf_puts(b, "<h2>At a glance</h2>\n<section class=\"charts\">\n");
	if (!error) error = wait_chart(b, &t);
	if (!error) error = decisions_chart(b, fold(r));
	if (!error) error = docket_buf_puts(b, "</section>\n");
	if (!error) error = machines_table(b, r);
	if (!error) error = sessions_table(b, r);
	if (!error) error = calls_table(b, r, &approvals, asked, 0);
	if (!error) error = policy_timeline(b, fold(r));
	if (!error) error = calls_table(b, r, &trouble, troubled, 0);
	if (!error) error = docket_buf_printf(b, "<footer>Generated by docket %s from ledger %s. This page is "
					      "self-contained: no script, no external resource.</footer>\n"
					      "</main></body></html>\n", DOCKET_EXPORT_VERSION,
					      r->title ? "the fleet database" : r->base.base.info.ledger_id);
	docket_free(t.waits);
	return error;
}

static int report_finish(export_sink *s)
{
	report_sink *r = (report_sink *)s;
	int error;

	if ((error = write_page(r)) < 0)
		return error;
	if (fwrite(r->html.ptr, 1, r->html.len, s->out) != r->html.len)
		return docket_error_set(DOCKET_ESTORAGE, "cannot write the report");
	s->stats->records = 1 + r->pages;
	return 0;
}

static int bump(json_t *m, const char *key)
{
	return json_object_set_new(m, key, json_integer(json_integer_value(json_object_get(m, key)) + 1));
}

/* A fleet event: counted for its machine, its session told apart as
 * "host/session" (two machines may use the same session ids). */
static int machine_event(report_sink *r, const json_t *ev, const char *host)
{
	const char *type = jstr(ev, "type"), *session = jstr(ev, "session"), *status = jstr(ev, "status");
	json_t *m = json_object_get(r->machines, host), *copy = NULL;
	docket_buf id = DOCKET_BUF_INIT;
	int error = 0;

	if (!m && (!(m = json_pack("{s:s, s:i, s:i, s:i, s:i, s:i}", "ledger", jstr(ev, "ledger"), "events", 0,
				    "sessions", 0, "calls", 0, "approvals", 0, "denials", 0)) ||
		   json_object_set_new(r->machines, host, m) < 0))
		return docket_error_set_oom();
	if (bump(m, "events") < 0 ||
	    (strcmp(type, "session.opened") == 0 && bump(m, "sessions") < 0) ||
	    (strcmp(type, "tool.intent") == 0 && bump(m, "calls") < 0) ||
	    (strcmp(type, "approval.settled") == 0 && bump(m, "approvals") < 0) ||
	    (strcmp(type, "tool.completed") == 0 && (strcmp(status, "denied") == 0 || strcmp(status, "unsupported") == 0) &&
	     bump(m, "denials") < 0))
		return docket_error_set_oom();
	if (!*session)
		return calls_add_json(&r->base.c, ev);
	if (!(copy = json_copy((json_t *)ev)) || docket_buf_printf(&id, "%s/%s", host, session) < 0 ||
	    json_object_set_new(copy, "session", json_string(id.ptr)) < 0)
		error = docket_error_set_oom();
	else
		error = calls_add_json(&r->base.c, copy);
	json_decref(copy);
	docket_buf_dispose(&id);
	return error;
}

static int report_event(export_sink *s, const json_t *ev, int emit)
{
	report_sink *r = (report_sink *)s;
	const char *host = json_string_value(json_object_get(ev, "host"));

	if (r->title && host)
		return machine_event(r, ev, host);
	return calls_sink_event(s, ev, emit);
}

static void report_free(export_sink *s)
{
	report_sink *r = (report_sink *)s;

	docket_buf_dispose(&r->html);
	json_decref(r->checkpoints);
	json_decref(r->machines);
	docket_free(r->session_counts);
	calls_sink_free(s);
}

static int add_checkpoint(void *ctx, const docket_checkpoint *cp)
{
	return json_array_append_new(ctx, json_pack("{s:I, s:s}", "seq", (json_int_t)cp->seq,
				     "key_id", cp->key_id)) == 0 ? 0 : docket_error_set_oom();
}

int sink_report_new(export_sink **out, int64_t since_ms, docket_ledger *ledger)
{
	report_sink *r;
	int error;

	*out = NULL;
	if ((error = calls_sink_make(out, sizeof(*r), since_ms, report_finish, report_free)) < 0)
		return error;
	r = (report_sink *)*out;
	r->base.base.event = report_event;
	r->ledger = ledger;
	r->page_rows = REPORT_PAGE_ROWS;
	if (!(r->checkpoints = json_array())) {
		report_free(*out);
		*out = NULL;
		return docket_error_set_oom();
	}
	/* Unreadable checkpoints are reported on the page, not fatal here. */
	if (ledger && docket_checkpoint_list(ledger, add_checkpoint, r->checkpoints) < 0) {
		json_array_clear(r->checkpoints);
		r->seal_unreadable = 1;
	}
	return 0;
}

int docket_report_html_pages(docket_ledger *ledger, const docket_export_options *opts, FILE *out,
			     const docket_report_pages *pages)
{
	docket_export_options defaults = DOCKET_EXPORT_OPTIONS_INIT;
	export_sink *sink = NULL;
	report_sink *r;
	int error;

	if (!opts)
		opts = &defaults;
	if ((error = sink_report_new(&sink, opts->since_ms, ledger)) < 0)
		return error;
	r = (report_sink *)sink;
	if (pages && pages->dir) {
		r->pages_dir = pages->dir;
		r->pages_href = pages->href ? pages->href : pages->dir;
		r->report_name = pages->report ? pages->report : "";
		if (pages->rows)
			r->page_rows = pages->rows;
	}
	error = export_run(ledger, opts, sink, out, NULL);
	sink->free(sink);
	return error;
}

int docket_report_html(docket_ledger *ledger, const docket_export_options *opts, FILE *out)
{
	return docket_report_html_pages(ledger, opts, out, NULL);
}

int docket_report_html_from(docket_report_read read, void *rctx, const char *title,
			    const docket_export_options *opts, FILE *out)
{
	docket_export_options defaults = DOCKET_EXPORT_OPTIONS_INIT;
	export_sink *sink = NULL;
	report_sink *r;
	int error;

	if (!opts)
		opts = &defaults;
	if ((error = sink_report_new(&sink, opts->since_ms, NULL)) < 0)
		return error;
	r = (report_sink *)sink;
	r->title = title ? title : "fleet";
	if (!(r->machines = json_object()))
		error = docket_error_set_oom();
	else
		error = export_run_read(read, rctx, opts, sink, out, NULL);
	sink->free(sink);
	return error;
}
