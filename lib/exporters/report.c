/* SPDX-License-Identifier: Apache-2.0 */
/*
 * report.c: the audit report, one self-contained HTML page (inline CSS and
 * SVG; no script, no external resource), built from the collector:
 *   headline cards, approval wait-time histogram, decisions over time,
 *   sessions, approvals, denials, policy revisions, in-doubt and recovered
 *   calls, and the ledger's seal (chain head, checkpoints).
 * Every text from the ledger goes through html_text(), which escapes it.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "export_internal.h"
#include "util/alloc.h"
#include "util/error.h"

#define CHART_W 560
#define CHART_H 220
#define CHART_PAD_L 40
#define CHART_PAD_B 42
#define CHART_PAD_T 14
#define MAX_BUCKETS 24

typedef struct report_sink {
	export_sink base;
	collector c;
	docket_ledger *ledger;
	docket_buf html;
	json_t *checkpoints;
	int seal_unreadable;
	const char *title;   /* a fleet report: the store's name (NULL: one ledger) */
	json_t *machines;    /* fleet: host -> {ledger, events, sessions, calls, approvals, denials} */
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

static int nomem(void)
{
	return docket_error_set(DOCKET_ENOMEM, "out of memory");
}

/* ---- HTML helpers ------------------------------------------------------ */

static int html_text(docket_buf *b, const char *s)
{
	int error = 0;

	for (; s && *s && error == 0; s++) {
		switch (*s) {
		case '&': error = docket_buf_puts(b, "&amp;"); break;
		case '<': error = docket_buf_puts(b, "&lt;"); break;
		case '>': error = docket_buf_puts(b, "&gt;"); break;
		case '"': error = docket_buf_puts(b, "&quot;"); break;
		case '\'': error = docket_buf_puts(b, "&#39;"); break;
		default: error = docket_buf_putc(b, *s); break;
		}
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

static int call_cell(docket_buf *b, const json_t *inv)
{
	int error;

	if ((error = docket_buf_puts(b, "<td><span class=\"call\">")) < 0 ||
	    (error = html_text(b, jstr(inv, "summary"))) < 0 ||
	    (error = docket_buf_puts(b, "</span><br><small>")) < 0 ||
	    (error = html_text(b, jstr(inv, "tool"))) < 0 ||
	    (error = docket_buf_puts(b, " &middot; ")) < 0 ||
	    (error = html_text(b, jstr(inv, "invocation"))) < 0)
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

static int is_troubled(const json_t *inv)
{
	return jhas(inv, "recovery") || strcmp(jstr(inv, "status"), "indeterminate") == 0 ||
	       (jhas(inv, "dispatches") && !jhas(inv, "status"));
}

static int in_scope(const json_t *inv)
{
	return json_is_true(json_object_get(inv, "since"));
}

/* ---- header and cards -------------------------------------------------- */

typedef struct totals {
	size_t calls, approvals, approved, waiting, denials, troubled, pending, waits_unknown;
	int64_t *waits;
	size_t nwaits;
	json_t *findings;   /* audit_findings() */
} totals;

static int count_totals(totals *t, const collector *c)
{
	const json_t *inv;
	size_t i;

	memset(t, 0, sizeof(*t));
	if (!(t->waits = docket_calloc(json_array_size(c->invocations) + 1, sizeof(*t->waits))))
		return nomem();
	json_array_foreach(c->invocations, i, inv) {
		if (!in_scope(inv))
			continue;
		t->calls++;
		t->approvals += jhas(inv, "result");
		t->approved += call_granted(inv);
		t->waiting += jhas(inv, "requested_time") && !jhas(inv, "result");
		t->denials += call_denied(inv);
		t->troubled += is_troubled(inv);
		t->pending += call_decision(inv) == D_PENDING;
		if (jhas(inv, "wait_ms"))
			t->waits[t->nwaits++] = json_integer_value(json_object_get(inv, "wait_ms"));
		t->waits_unknown += jhas(inv, "wait_unknown");
	}
	return audit_findings(&t->findings, c);
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

static size_t list_size(const totals *t, const char *key)
{
	return json_array_size(json_object_get(t->findings, key));
}

static json_int_t attention(const totals *t)
{
	return json_integer_value(json_object_get(t->findings, "attention"));
}

static int write_cards(docket_buf *b, const report_sink *r, totals *t)
{
	char n[6][32], sub[6][200], wait[32] = "-";
	int error = 0;

	qsort(t->waits, t->nwaits, sizeof(*t->waits), cmp_i64);
	if (t->nwaits)
		human_ms(wait, sizeof(wait), t->nwaits % 2 ? t->waits[t->nwaits / 2]
				: (t->waits[t->nwaits / 2 - 1] + t->waits[t->nwaits / 2]) / 2);
	snprintf(n[0], sizeof(n[0]), "%zu", json_array_size(r->c.sessions));
	snprintf(sub[0], sizeof(sub[0]), "%llu events in the %s",
		 (unsigned long long)(r->title ? r->base.stats->events : r->base.info.events),
		 r->title ? "fleet" : "ledger");
	snprintf(n[1], sizeof(n[1]), "%zu", t->calls);
	snprintf(sub[1], sizeof(sub[1]), "%zu without an outcome yet", t->pending);
	snprintf(n[2], sizeof(n[2]), "%zu", t->approvals);
	snprintf(sub[2], sizeof(sub[2]), "%zu approved, %zu refused%s", t->approved, t->approvals - t->approved,
		 t->waiting ? ", some still waiting" : "");
	snprintf(n[3], sizeof(n[3]), "%zu", t->denials);
	snprintf(sub[3], sizeof(sub[3]), "by policy or by a person");
	snprintf(n[4], sizeof(n[4]), "%s", wait);
	snprintf(sub[4], sizeof(sub[4]), "median of %zu known approval wait%s", t->nwaits,
		 t->nwaits == 1 ? "" : "s");
	if (t->waits_unknown)
		snprintf(sub[4] + strlen(sub[4]), sizeof(sub[4]) - strlen(sub[4]),
			 "; %zu unknown (the source did not record when it asked)", t->waits_unknown);
	snprintf(n[5], sizeof(n[5]), "%lld", (long long)attention(t));
	snprintf(sub[5], sizeof(sub[5]), "%zu risky session mode%s, %zu escalation%s, %zu risky call%s, "
		 "%zu without outcome, %zu denied (a call in several lists counts once)", list_size(t, "risky_sessions"),
		 list_size(t, "risky_sessions") == 1 ? "" : "s", list_size(t, "escalations"),
		 list_size(t, "escalations") == 1 ? "" : "s", list_size(t, "risky_calls"),
		 list_size(t, "risky_calls") == 1 ? "" : "s", list_size(t, "no_outcome"), list_size(t, "denials"));
	if (!error) error = docket_buf_puts(b, "<section class=\"cards\" id=\"cards\">\n");
	/* never green while anything needs attention */
	if (!error) error = card(b, attention(t) ? "bad attention" : "ok attention", "Needs attention", n[5], sub[5]);
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
	docket_hex(head, r->base.info.head, sizeof(r->base.info.head));
	if ((error = docket_buf_printf(b, "<header><div class=\"in\"><h1>docket audit report</h1>\n"
				       "<p class=\"meta\">ledger <code>%s</code> &middot; generated %s</p>\n"
				       "<p class=\"meta\">chain head: seq <code>%llu</code> hash <code>%.16s&hellip;</code>",
				       r->base.info.ledger_id, now, (unsigned long long)r->base.info.events, head)) < 0)
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

static void bucket_calls(time_buckets *tb, const collector *c)
{
	int64_t lo = INT64_MAX, hi = INT64_MIN, ms;
	const json_t *inv;
	size_t i, w = 0;

	memset(tb, 0, sizeof(*tb));
	json_array_foreach(c->invocations, i, inv) {
		if (in_scope(inv) && docket_time_to_ms(jstr(inv, "intent_time"), &ms) == 0) {
			lo = ms < lo ? ms : lo;
			hi = ms > hi ? ms : hi;
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
	json_array_foreach(c->invocations, i, inv) {
		size_t k;

		if (!in_scope(inv) || docket_time_to_ms(jstr(inv, "intent_time"), &ms) < 0)
			continue;
		k = (size_t)((ms - tb->start) / tb->width);
		tb->counts[k < tb->n ? k : tb->n - 1][call_decision(inv)]++;
	}
}

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

static int decisions_chart(docket_buf *b, const collector *c)
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

static int table_open(docket_buf *b, const char *title, const char *const *heads)
{
	int error = docket_buf_printf(b, "<h2>%s</h2>\n<table><thead><tr>", title);

	for (size_t i = 0; heads[i] && error == 0; i++)
		error = docket_buf_printf(b, "<th>%s</th>", heads[i]);
	return error == 0 ? docket_buf_puts(b, "</tr></thead><tbody>\n") : error;
}

/* Per session: calls, approvals, denials, pending (in scope), one pass. */
enum { SC_CALLS, SC_APPROVALS, SC_DENIALS, SC_PENDING, SC_N };

static int session_counts(json_t **out, const collector *c)
{
	json_t *counts = json_object();
	const json_t *inv;
	size_t i;

	*out = NULL;
	if (!counts)
		return nomem();
	json_array_foreach(c->invocations, i, inv) {
		const char *session = jstr(inv, "session");
		json_t *row = json_object_get(counts, session);
		json_int_t add[SC_N] = { 1, jhas(inv, "result"), call_denied(inv), !jhas(inv, "status") };

		if (!in_scope(inv))
			continue;
		if (!row && (json_object_set_new(counts, session, row = json_pack("[i,i,i,i]", 0, 0, 0, 0)) < 0 ||
			     !row)) {
			json_decref(counts);
			return nomem();
		}
		for (int k = 0; k < SC_N; k++)
			json_integer_set(json_array_get(row, (size_t)k),
					 json_integer_value(json_array_get(row, (size_t)k)) + add[k]);
	}
	*out = counts;
	return 0;
}

static int session_row(docket_buf *b, const json_t *counts, const json_t *s)
{
	const char *id = jstr(s, "session");
	const json_t *row = json_object_get(counts, id);
	char n[SC_N][24];
	int error = 0;

	for (int k = 0; k < SC_N; k++)
		snprintf(n[k], sizeof(n[k]), "%lld", (long long)json_integer_value(json_array_get(row, (size_t)k)));
	if (!error) error = docket_buf_puts(b, "<tr>");
	if (!error) error = cell(b, "call", id);
	if (!error) error = cell(b, NULL, *jstr(s, "runtime") ? jstr(s, "runtime") : "-");
	if (!error) error = time_cell(b, jstr(s, "opened_time"));
	if (!error) error = jhas(s, "closed_time") ? time_cell(b, jstr(s, "closed_time")) : badge(b, "u", "open");
	for (int i = 0; i < SC_N && !error; i++)
		error = cell(b, "num", n[i]);
	return error == 0 ? docket_buf_puts(b, "</tr>\n") : error;
}

static int sessions_table(docket_buf *b, const collector *c)
{
	static const char *const heads[] = { "Session", "Runtime", "Opened", "Closed", "Calls", "Approvals",
					     "Denials", "Pending", NULL };
	const json_t *s;
	json_t *counts = NULL;
	size_t i;
	int error;

	if (json_array_size(c->sessions) == 0)
		return section_empty(b, "Sessions", "No sessions recorded.");
	if ((error = session_counts(&counts, c)) < 0 || (error = table_open(b, "Sessions", heads)) < 0)
		goto cleanup;
	json_array_foreach(c->sessions, i, s)
		if ((error = session_row(b, counts, s)) < 0)
			goto cleanup;
	error = docket_buf_puts(b, "</tbody></table>\n");
cleanup:
	json_decref(counts);
	return error;
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

static const char *result_class(const json_t *inv)
{
	return call_granted(inv) ? "g" : strcmp(jstr(inv, "result"), "superseded") == 0 ? "y" : "r";
}

static int approval_row(docket_buf *b, const json_t *inv)
{
	char wait[32] = "-";
	int error = 0;

	if (jhas(inv, "wait_ms"))
		human_ms(wait, sizeof(wait), json_integer_value(json_object_get(inv, "wait_ms")));
	if (!error) error = docket_buf_puts(b, "<tr>");
	if (!error) error = time_cell(b, jstr(inv, "requested_time"));
	if (!error) error = cell(b, "call", jstr(inv, "session"));
	if (!error) error = call_cell(b, inv);
	if (!error) error = cell(b, NULL, *jstr(inv, "reviewer") ? jstr(inv, "reviewer") : "-");
	if (!error) error = cell(b, NULL, *jstr(inv, "actor") ? jstr(inv, "actor") : "-");
	if (!error) error = jhas(inv, "result") ? badge(b, result_class(inv), jstr(inv, "result"))
						: badge(b, "o", "waiting");
	if (!error) error = cell(b, "num", wait);
	if (!error) error = cell(b, NULL, *jstr(inv, "decision_source") ? jstr(inv, "decision_source") : "-");
	return error == 0 ? docket_buf_puts(b, "</tr>\n") : error;
}

static int asked(const json_t *inv)
{
	return jhas(inv, "requested_time");
}

/* A table of the in-scope invocations `pred` selects, one `row` each. */
static int invocation_table(docket_buf *b, const collector *c, const char *title, const char *const *heads,
			    int (*pred)(const json_t *), int (*row)(docket_buf *, const json_t *),
			    const char *none)
{
	const json_t *inv;
	size_t i, n = 0;
	int error = 0;

	json_array_foreach(c->invocations, i, inv)
		n += in_scope(inv) && pred(inv);
	if (n == 0)
		return section_empty(b, title, none);
	if ((error = table_open(b, title, heads)) < 0)
		return error;
	json_array_foreach(c->invocations, i, inv)
		if (in_scope(inv) && pred(inv) && (error = row(b, inv)) < 0)
			return error;
	return docket_buf_puts(b, "</tbody></table>\n");
}

static int trouble_row(docket_buf *b, const json_t *inv)
{
	docket_buf actions = DOCKET_BUF_INIT;
	const char *status = jstr(inv, "status");
	const json_t *a;
	char attempts[16];
	size_t i;
	int error = 0;

	json_array_foreach(json_object_get(inv, "recovery"), i, a)
		if ((error = docket_buf_printf(&actions, "%s%s", actions.len ? ", " : "", jstr(a, "action"))) < 0)
			break;
	snprintf(attempts, sizeof(attempts), "%zu", json_array_size(json_object_get(inv, "dispatches")));
	if (!error) error = docket_buf_puts(b, "<tr>");
	if (!error) error = cell(b, "call", jstr(inv, "session"));
	if (!error) error = call_cell(b, inv);
	if (!error) error = !*status ? badge(b, "o", "in doubt")
			  : strcmp(status, "indeterminate") == 0 ? badge(b, "r", "indeterminate")
								 : badge(b, "g", "recovered");
	if (!error) error = cell(b, "num", attempts);
	if (!error) error = cell(b, NULL, actions.ptr && *actions.ptr ? actions.ptr : "-");
	if (!error) error = cell(b, NULL, *status ? status : "-");
	if (!error) error = docket_buf_puts(b, "</tr>\n");
	docket_buf_dispose(&actions);
	return error;
}

static int policy_item(docket_buf *b, const json_t *p)
{
	char t[24];
	int error;

	short_time(t, jstr(p, "time"));
	if ((error = docket_buf_printf(b, "<li><b>revision %lld</b> <small>(", (long long)json_integer_value(
					       json_object_get(p, "revision")))) < 0 ||
	    (error = html_text(b, jstr(p, "format"))) < 0 ||
	    (error = docket_buf_printf(b, ")</small> &middot; %s &middot; session <span class=\"call\">", t)) < 0 ||
	    (error = html_text(b, jstr(p, "session"))) < 0 ||
	    (error = docket_buf_puts(b, "</span><br>by ")) < 0 ||
	    (error = html_text(b, *jstr(p, "actor") ? jstr(p, "actor") : "an unnamed actor")) < 0)
		return error;
	if (*jstr(p, "reason") && ((error = docket_buf_puts(b, ": <i>")) < 0 ||
				   (error = html_text(b, jstr(p, "reason"))) < 0 ||
				   (error = docket_buf_puts(b, "</i>")) < 0))
		return error;
	return docket_buf_puts(b, "</li>\n");
}

static int policy_timeline(docket_buf *b, const collector *c)
{
	const json_t *p;
	size_t i;
	int error;

	if ((error = docket_buf_puts(b, "<h2>Policy revisions</h2>\n")) < 0)
		return error;
	if (json_array_size(c->policies) == 0)
		return empty_note(b, "No policy was set in these sessions.");
	if ((error = docket_buf_puts(b, "<ul class=\"tl\">\n")) < 0)
		return error;
	json_array_foreach(c->policies, i, p)
		if ((error = policy_item(b, p)) < 0)
			return error;
	return docket_buf_puts(b, "</ul>\n");
}

/* ---- the risk view (first screen) -------------------------------------- */

/* One row of a findings list: its cells from the item's members (`keys`;
 * "@call" is the call cell, "@time" the time cell). */
static int finding_row(docket_buf *b, const json_t *item, const char *const *keys)
{
	int error = docket_buf_puts(b, "<tr>");

	for (size_t i = 0; keys[i] && error == 0; i++) {
		if (strcmp(keys[i], "@call") == 0)
			error = call_cell(b, item);
		else if (strcmp(keys[i], "@time") == 0)
			error = time_cell(b, jstr(item, "time"));
		else if (strcmp(keys[i], "session") == 0)
			error = cell(b, "call", jstr(item, "session"));
		else
			error = cell(b, NULL, *jstr(item, keys[i]) ? jstr(item, keys[i]) : "-");
	}
	return error == 0 ? docket_buf_puts(b, "</tr>\n") : error;
}

static int finding_table(docket_buf *b, const json_t *findings, const char *key, const char *title,
			 const char *const *heads, const char *const *keys, const char *none)
{
	const json_t *list = json_object_get(findings, key), *item;
	size_t i;
	int error;

	if ((error = docket_buf_printf(b, "<div class=\"finding\" id=\"%s\">", key)) < 0)
		return error;
	if (json_array_size(list) == 0)
		error = section_empty(b, title, none);
	else if ((error = table_open(b, title, heads)) == 0) {
		json_array_foreach(list, i, item)
			if ((error = finding_row(b, item, keys)) < 0)
				return error;
		error = docket_buf_puts(b, "</tbody></table>\n");
	}
	return error == 0 ? docket_buf_puts(b, "</div>\n") : error;
}

static int risk_section(docket_buf *b, const json_t *f)
{
	static const char *const mode_heads[] = { "Session", "Runtime", "Risky settings", "Since", "Working directory", NULL };
	static const char *const mode_keys[] = { "session", "runtime", "settings", "@time", "cwd", NULL };
	static const char *const esc_heads[] = { "When", "Session", "Call", "Justification", "Outcome", NULL };
	static const char *const esc_keys[] = { "@time", "session", "@call", "justification", "outcome", NULL };
	static const char *const risk_heads[] = { "When", "Session", "Call", "Risk classes", "Hosts", "Outcome", NULL };
	static const char *const risk_keys[] = { "@time", "session", "@call", "class_names", "host_list", "outcome",
						 NULL };
	static const char *const open_heads[] = { "When", "Session", "Call", "State", NULL };
	static const char *const open_keys[] = { "@time", "session", "@call", "outcome", NULL };
	static const char *const deny_heads[] = { "When", "Session", "Call", "Denied by", "Reason", "Rule", NULL };
	static const char *const deny_keys[] = { "@time", "session", "@call", "by", "reason", "rule", NULL };
	int error = docket_buf_puts(b, "<section id=\"risk\"><h2>What needs attention</h2>\n");

	if (!error) error = finding_table(b, f, "risky_sessions", "Sessions in risky modes", mode_heads, mode_keys,
					  "No session ran in a risky mode.");
	if (!error) error = finding_table(b, f, "escalations", "Escalations", esc_heads, esc_keys,
					  "No call asked to leave the sandbox.");
	if (!error) error = finding_table(b, f, "risky_calls", "Allowed calls in risk classes", risk_heads,
					  risk_keys, "No allowed call falls in a risk class.");
	if (!error) error = finding_table(b, f, "no_outcome", "Calls without an outcome", open_heads, open_keys,
					  "Every call has an outcome.");
	if (!error) error = finding_table(b, f, "denials", "Denials", deny_heads, deny_keys,
					  "No call was denied.");
	return error == 0 ? docket_buf_puts(b, "</section>\n") : error;
}

/* ---- the page ---------------------------------------------------------- */

static int write_page(report_sink *r)
{
	static const char *const approval_heads[] = { "Requested", "Session", "Call", "Reviewer", "Decided by",
						      "Result", "Wait", "Decision source", NULL };
	static const char *const trouble_heads[] = { "Session", "Call", "State", "Attempts", "Recovery actions",
						     "Outcome", NULL };
	docket_buf *b = &r->html;
	totals t;
	int error;

	if ((error = count_totals(&t, &r->c)) < 0)
		return error;
	if (!error) error = docket_buf_printf(b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
					      "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
					      "<title>docket audit report</title>\n<style>%s</style></head>\n<body>\n", css);
	if (!error) error = write_header(b, r);
	if (!error) error = write_cards(b, r, &t);
	if (!error) error = risk_section(b, t.findings);
	if (!error) error = docket_buf_puts(b, "<h2>At a glance</h2>\n<section class=\"charts\">\n");
	if (!error) error = wait_chart(b, &t);
	if (!error) error = decisions_chart(b, &r->c);
	if (!error) error = docket_buf_puts(b, "</section>\n");
	if (!error) error = machines_table(b, r);
	if (!error) error = sessions_table(b, &r->c);
	if (!error) error = invocation_table(b, &r->c, "Approvals", approval_heads, asked, approval_row,
					     "No call needed an approval.");
	if (!error) error = policy_timeline(b, &r->c);
	if (!error) error = invocation_table(b, &r->c, "In doubt and recovered calls", trouble_heads, is_troubled,
					     trouble_row, "No call was left in doubt or recovered.");
	if (!error) error = docket_buf_printf(b, "<footer>Generated by docket %s from ledger %s. This page is "
					      "self-contained: no script, no external resource.</footer>\n"
					      "</main></body></html>\n", DOCKET_EXPORT_VERSION,
					      r->title ? "the fleet database" : r->base.info.ledger_id);
	docket_free(t.waits);
	json_decref(t.findings);
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
	s->stats->records = 1;
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
		return nomem();
	if (bump(m, "events") < 0 ||
	    (strcmp(type, "session.opened") == 0 && bump(m, "sessions") < 0) ||
	    (strcmp(type, "tool.intent") == 0 && bump(m, "calls") < 0) ||
	    (strcmp(type, "approval.settled") == 0 && bump(m, "approvals") < 0) ||
	    (strcmp(type, "tool.completed") == 0 && (strcmp(status, "denied") == 0 || strcmp(status, "unsupported") == 0) &&
	     bump(m, "denials") < 0))
		return nomem();
	if (!*session)
		return collector_add(&r->c, ev);
	if (!(copy = json_copy((json_t *)ev)) || docket_buf_printf(&id, "%s/%s", host, session) < 0 ||
	    json_object_set_new(copy, "session", json_string(id.ptr)) < 0)
		error = nomem();
	else
		error = collector_add(&r->c, copy);
	json_decref(copy);
	docket_buf_dispose(&id);
	return error;
}

static int report_event(export_sink *s, const json_t *ev, int emit)
{
	report_sink *r = (report_sink *)s;
	const char *host = json_string_value(json_object_get(ev, "host"));

	(void)emit;
	if (r->title && host)
		return machine_event(r, ev, host);
	return collector_add(&r->c, ev);
}

static void report_free(export_sink *s)
{
	report_sink *r = (report_sink *)s;

	collector_dispose(&r->c);
	docket_buf_dispose(&r->html);
	json_decref(r->checkpoints);
	json_decref(r->machines);
	docket_free(r);
}

static int add_checkpoint(void *ctx, const docket_checkpoint *cp)
{
	return json_array_append_new(ctx, json_pack("{s:I, s:s}", "seq", (json_int_t)cp->seq,
				     "key_id", cp->key_id)) == 0 ? 0 : nomem();
}

int sink_report_new(export_sink **out, int64_t since_ms, docket_ledger *ledger)
{
	report_sink *r = docket_calloc(1, sizeof(*r));
	int error;

	*out = NULL;
	if (!r)
		return nomem();
	r->base.event = report_event;
	r->base.finish = report_finish;
	r->base.free = report_free;
	r->ledger = ledger;
	if ((error = collector_init(&r->c, since_ms)) < 0 ||
	    (!(r->checkpoints = json_array()) && (error = nomem()) < 0)) {
		report_free(&r->base);
		return error;
	}
	/* Unreadable checkpoints are reported on the page, not fatal here. */
	if (ledger && docket_checkpoint_list(ledger, add_checkpoint, r->checkpoints) < 0) {
		json_array_clear(r->checkpoints);
		r->seal_unreadable = 1;
	}
	*out = &r->base;
	return 0;
}

int docket_report_html(docket_ledger *ledger, const docket_export_options *opts, FILE *out)
{
	docket_export_options defaults = DOCKET_EXPORT_OPTIONS_INIT;
	export_sink *sink = NULL;
	int error;

	if (!opts)
		opts = &defaults;
	if ((error = sink_report_new(&sink, opts->since_ms, ledger)) < 0)
		return error;
	error = export_run(ledger, opts, sink, out, NULL);
	sink->free(sink);
	return error;
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
		error = nomem();
	else
		error = export_run_read(read, rctx, opts, sink, out, NULL);
	sink->free(sink);
	return error;
}
