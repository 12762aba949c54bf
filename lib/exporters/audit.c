/* SPDX-License-Identifier: Apache-2.0 */
/*
 * audit.c: the risk view, "what should worry me" (docs/audit.md).
 *
 * From the compact fold of the ledger (calls.h) it lists, in this order:
 *   1. sessions that ran in a risky mode, with the settings that made them
 *      risky (read from their recorded policy revisions);
 *   2. escalations: calls that asked to leave the sandbox (Codex
 *      sandbox_permissions require_escalated, Claude dangerouslyDisableSandbox)
 *      with their justification and what became of them;
 *   3. calls that ran although they fall in a risk class (the policy
 *      engine's one call analysis, docket_call_risk; see call_risk below);
 *   4. calls without an outcome;
 *   5. denials, with their reasons;
 *   6. ledger incidents: spool entries the ledger refused when it folded
 *      them (ledger.incident, docs/write-path.md).
 * "attention" counts the risky sessions, the distinct calls in the four
 * call lists and the incidents; it is 0 only when every list is empty.
 * The report's first screen and `docket audit` read these functions
 * (audit_call_lists, audit_count); `docket sessions` reads the risky
 * settings (docket_audit_risky_mode): there is no second list.
 */
#include <stdio.h>
#include <string.h>

#include "calls.h"
#include "ledger/decision.h"
#include "policy/risk.h"
#include "util/error.h"

/* ---- risky modes --------------------------------------------------------- */

/* Codex's sandbox_policy: "danger-full-access" or {"mode"|"type": ...}. */
static const char *codex_sandbox(const json_t *policy)
{
	const json_t *sp = json_object_get(policy, "sandbox_policy");

	if (json_is_string(sp))
		return json_string_value(sp);
	if (*jstr(sp, "mode"))
		return jstr(sp, "mode");
	return jstr(sp, "type");
}

static int add_setting(docket_buf *out, const char *text, const char *value)
{
	return docket_buf_printf(out, "%s%s %s", out->len ? ", " : "", text, value);
}

/* Revisions nest one composition deep ({"all_of": [{"format": F, "policy":
 * P}, ...]}, what policy_doc_compose writes: docket's enforced layer over a
 * client's settings); deeper ones are read to this depth and no further. */
#define COMPOSED_DEPTH 4

/* A composed revision's layers (each shaped like a revision: format and
 * policy), or NULL when `rec` is one policy. */
static const json_t *composed_layers(const json_t *rec)
{
	if (strcmp(jstr(rec, "format"), "docket") != 0)
		return NULL;
	return json_object_get(json_object_get(rec, "policy"), "all_of");
}

static int risky_layer(docket_buf *out, const json_t *rec, int depth)
{
	const json_t *policy = json_object_get(rec, "policy"), *layers = composed_layers(rec), *layer;
	const char *format = jstr(rec, "format"), *v;
	size_t i;
	int error = 0;

	if (layers) {
		json_array_foreach(layers, i, layer) {
			if (depth < COMPOSED_DEPTH && (error = risky_layer(out, layer, depth + 1)) < 0)
				break;
		}
	} else if (strcmp(format, "codex") == 0) {
		v = jstr(policy, "approval_policy");
		if (strcmp(v, "never") == 0)
			error = add_setting(out, "approval_policy", v);
		v = codex_sandbox(policy);
		if (error == 0 && strcmp(v, "danger-full-access") == 0)
			error = add_setting(out, "sandbox", v);
		if (error == 0 && json_is_true(json_object_get(json_object_get(policy, "sandbox_policy"),
								"network_access")))
			error = add_setting(out, "network_access", "true");
	} else if (strcmp(format, "claude") == 0) {
		v = jstr(json_object_get(policy, "permissions"), "defaultMode");
		if (strcmp(v, "bypassPermissions") == 0 || strcmp(v, "dontAsk") == 0)
			error = add_setting(out, "permissions.defaultMode", v);
	} else if (strcmp(format, "docket") == 0) {
		v = jstr(policy, "approval");
		if (strcmp(v, "never") == 0)
			error = add_setting(out, "approval", v);
		v = jstr(policy, "sandbox");
		if (error == 0 && strcmp(v, "full_access") == 0)
			error = add_setting(out, "sandbox", v);
	}
	return error;
}

/* The risky settings of a revision, every layer of a composed one (a
 * client's "approval_policy never" under docket's enforced layer is as
 * risky as alone: docket's layer can only deny more). */
int audit_risky_settings(docket_buf *out, const json_t *rec)
{
	int error;

	docket_buf_clear(out);
	error = risky_layer(out, rec, 0);
	if (error == 0 && !out->ptr)
		error = docket_buf_puts(out, "");
	return error;
}

static int mode_layer(docket_buf *out, const json_t *rec, int depth)
{
	const json_t *policy = json_object_get(rec, "policy"), *layers = composed_layers(rec), *layer;
	const char *format = jstr(rec, "format");
	size_t i;
	int error = 0;

	if (layers) {
		json_array_foreach(layers, i, layer) {
			if (depth >= COMPOSED_DEPTH)
				break;
			if (out->len && (error = docket_buf_puts(out, "; ")) < 0)
				break;
			if (!composed_layers(layer) &&
			    (error = docket_buf_printf(out, "%s: ", *jstr(layer, "format") ? jstr(layer, "format") : "-")) < 0)
				break;
			if ((error = mode_layer(out, layer, depth + 1)) < 0)
				break;
		}
	} else if (strcmp(format, "codex") == 0) {
		error = docket_buf_printf(out, "approval_policy %s, sandbox %s",
					  *jstr(policy, "approval_policy") ? jstr(policy, "approval_policy") : "-",
					  *codex_sandbox(policy) ? codex_sandbox(policy) : "-");
	} else if (strcmp(format, "claude") == 0) {
		error = docket_buf_printf(out, "permissions.defaultMode %s",
					  *jstr(json_object_get(policy, "permissions"), "defaultMode")
						  ? jstr(json_object_get(policy, "permissions"), "defaultMode") : "-");
	} else if (strcmp(format, "docket") == 0) {
		error = docket_buf_printf(out, "approval %s, sandbox %s",
					  *jstr(policy, "approval") ? jstr(policy, "approval") : "-",
					  *jstr(policy, "sandbox") ? jstr(policy, "sandbox") : "-");
	}
	return error;
}

/* The mode settings of a revision, risky or not ("approval_policy
 * on-request, sandbox workspace-write"; a composed one's per layer,
 * "docket: approval -, sandbox -; codex: approval_policy never, sandbox
 * workspace-write"); empty for other formats. Cut to `n` bytes. */
static void mode_summary(char *out, size_t n, const json_t *rec)
{
	docket_buf b = DOCKET_BUF_INIT;

	if (n)
		snprintf(out, n, "%s", mode_layer(&b, rec, 0) == 0 && b.ptr ? b.ptr : "?");
	docket_buf_dispose(&b);
}

int docket_audit_risky_mode(char *out, size_t n, const json_t *policy_revised)
{
	docket_buf why = DOCKET_BUF_INIT;
	int error;

	mode_summary(out, n, policy_revised);
	error = audit_risky_settings(&why, policy_revised);
	error = error < 0 ? error : why.len > 0;
	docket_buf_dispose(&why);
	return error;
}

/* ---- calls --------------------------------------------------------------- */

static int escalated(const json_t *args)
{
	return strcmp(jstr(args, "sandbox_permissions"), "require_escalated") == 0 ||
	       json_is_true(json_object_get(args, "with_escalated_permissions")) ||
	       json_is_true(json_object_get(args, "dangerouslyDisableSandbox"));
}

#define ROOTS_MAX 16

/*
 * The risk classes of a call: the policy engine's one call analysis
 * (docket_call_risk, policy/risk.h), with the session's cwd, workspace
 * roots and HOME. Escalation is listed on its own (escalations), so it is
 * left out here.
 */
static unsigned call_risk(const call_fold *c, const call_rec *r, json_t *args)
{
	const session_rec *s = &c->session[r->session];
	const char *root[ROOTS_MAX];
	docket_risk_call call;
	size_t n = 0;

	for (size_t i = 0; i < s->nroots && n < ROOTS_MAX; i++)
		if (s->roots[i])
			root[n++] = calls_str(c, s->roots[i]);
	memset(&call, 0, sizeof(call));
	call.tool = calls_str(c, r->tool);
	call.args = args;
	call.cwd = s->cwd ? calls_str(c, s->cwd) : NULL;
	call.roots = root;
	call.nroots = n;
	call.home = s->home ? calls_str(c, s->home) : NULL;
	return docket_call_risk(&call) & ~(unsigned)DOCKET_RISK_ESCALATION;
}

/* Add the host of one URL ("https://user@h.example:8080/x" -> "h.example")
 * to the ", "-list `out` unless it is there. */
static int add_host(docket_buf *out, const char *url, size_t len)
{
	const char *p = memmem(url, len, "://", 3), *end = url + len, *at;
	size_t n;

	if (!p)
		return 0;
	p += 3;
	n = strcspn(p, "/?#:'\" \t\n),");
	if (p + n > end)
		n = (size_t)(end - p);
	while ((at = memchr(p, '@', n))) {
		n -= (size_t)(at + 1 - p);
		p = at + 1;
	}
	if (n == 0 || n >= 256)
		return 0;
	for (const char *q = out->ptr; q && *q;) {
		size_t k = strcspn(q, ",");

		if (k == n && memcmp(q, p, n) == 0)
			return 0;
		q += k;
		q += *q ? 2 : 0;
	}
	if (out->len && docket_buf_puts(out, ", ") < 0)
		return docket_error_set_oom();
	return docket_buf_put(out, p, n);
}

/* The hosts a network call reaches: its url or host, or the URLs in its
 * command line (`summary`). */
static int call_hosts(docket_buf *out, const json_t *args, const char *text)
{
	const char *p;
	int error = 0;

	if (*jstr(args, "host"))
		return docket_buf_puts(out, jstr(args, "host"));
	if (*jstr(args, "url"))
		return add_host(out, jstr(args, "url"), strlen(jstr(args, "url")));
	for (p = strstr(text, "://"); p && error == 0; p = strstr(p + 3, "://")) {
		const char *start = p;

		while (start > text && ((start[-1] >= 'a' && start[-1] <= 'z') || (start[-1] >= 'A' && start[-1] <= 'Z')))
			start--;
		error = add_host(out, start, strlen(start));
	}
	return error;
}

int audit_call_facts(call_fold *c, call_rec *r, json_t *args)
{
	docket_buf hosts = DOCKET_BUF_INIT;
	cstr s;
	int error = 0;

	if (escalated(args)) {
		r->flags |= CF_ESCALATED;
		if ((error = calls_put(c, &s, jstr(args, "justification"))) < 0)
			return error;
		r->justification = s;
	}
	r->risk = call_risk(c, r, args);
	if ((r->risk & DOCKET_RISK_NETWORK) && (error = call_hosts(&hosts, args, calls_str(c, r->summary))) == 0 &&
	    (error = calls_put(c, &s, hosts.ptr)) == 0)
		r->hosts = s;
	docket_buf_dispose(&hosts);
	return error;
}

int audit_reason_add(docket_buf *out, const char *text)
{
	if (!text || !*text || (out->ptr && strstr(out->ptr, text)))
		return 0;
	return docket_buf_printf(out, "%s%s", out->len ? "; " : "", text);
}

static int reason_end(docket_buf *out, const char *settle_reason, const char *error_text, const char *denial)
{
	int error = audit_reason_add(out, settle_reason);

	if (error == 0) error = audit_reason_add(out, error_text);
	if (error == 0) error = audit_reason_add(out, denial);
	if (error == 0 && !out->ptr)
		error = docket_buf_puts(out, "");
	return error;
}

int audit_denial_reason(docket_buf *out, const json_t *inv)
{
	docket_buf text = DOCKET_BUF_INIT;
	int error = 0;

	docket_buf_clear(out);
	/* stored as codes (older ledgers: texts), rendered for people */
	for (size_t i = 0; error == 0 && i < json_array_size(json_object_get(inv, "reasons")); i++) {
		docket_buf_clear(&text);
		if ((error = decision_reason_at(&text, inv, i)) == 0)
			error = audit_reason_add(out, text.ptr);
	}
	docket_buf_dispose(&text);
	return error == 0 ? reason_end(out, jstr(inv, "settle_reason"), jstr(inv, "error"),
				       jstr(inv, "denial_message")) : error;
}

int audit_call_reason(docket_buf *out, const call_fold *c, const call_rec *r)
{
	int error;

	docket_buf_clear(out);
	if ((error = docket_buf_puts(out, calls_str(c, r->reasons))) < 0)
		return error;
	return reason_end(out, calls_str(c, r->settle_reason), calls_str(c, r->error), calls_str(c, r->denial));
}

int audit_call_outcome(docket_buf *out, const call_fold *c, const call_rec *r)
{
	const char *status = calls_status(r), *result = calls_result(r), *actor = calls_str(c, r->actor);
	int error = 0;

	docket_buf_clear(out);
	if (*result)
		error = docket_buf_printf(out, "%s%s%s", result, *actor ? " by " : "", actor);
	else if (r->verdict)
		error = docket_buf_printf(out, "%s (%s)", calls_verdict(r),
					  r->source ? calls_str(c, r->source) : "inferred");
	if (error == 0)
		error = docket_buf_printf(out, "%s%s", out->len ? "; " : "", *status ? status : "no outcome");
	return error;
}

unsigned audit_call_lists(const call_rec *r)
{
	unsigned lists = 0;

	if (!(r->flags & CF_SINCE))
		return 0;
	if (r->flags & CF_ESCALATED)
		lists |= AL_ESCALATION;
	/* calls that ran: dispatched */
	if (r->dispatches && r->risk)
		lists |= AL_RISKY;
	if (!r->status)
		lists |= AL_NO_OUTCOME;
	if (calls_denied(r))
		lists |= AL_DENIED;
	return lists;
}

void audit_count(audit_counts *out, const call_fold *c)
{
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < c->npolicies; i++)
		out->risky_sessions += c->policy[i].settings != 0;
	for (size_t i = 0; i < c->ncalls; i++) {
		const call_rec *r = &c->call[i];
		unsigned l = audit_call_lists(r);

		if (!(r->flags & CF_SINCE))
			continue;
		out->escalations += (l & AL_ESCALATION) != 0;
		out->risky_calls += (l & AL_RISKY) != 0;
		out->no_outcome += (l & AL_NO_OUTCOME) != 0;
		out->denials += (l & AL_DENIED) != 0;
		out->calls += l != 0;
		out->waits_known += (r->flags & CF_WAIT_KNOWN) != 0;
		out->waits_unknown += (r->flags & CF_WAIT_UNKNOWN) != 0;
	}
	out->incidents = c->nincidents;
	/* a call in several lists (an escalated push that was denied) counts once */
	out->attention = out->risky_sessions + out->calls + out->incidents;
}

/* ---- the findings as JSON ------------------------------------------------ */

static json_t *risky_session_item(const call_fold *c, const policy_rec *p)
{
	const session_rec *s = &c->session[p->session];

	return json_pack("{s:s, s:I, s:s, s:s, s:s, s:s, s:s}", "session", calls_str(c, s->id),
			 "revision", (json_int_t)p->revision, "format", calls_str(c, p->format),
			 "settings", calls_str(c, p->settings), "time", calls_str(c, p->time),
			 "runtime", calls_str(c, s->runtime), "cwd", calls_str(c, s->cwd));
}

/* {session, invocation, tool, summary, time, seq} of a call */
static json_t *call_item(const call_fold *c, const call_rec *r)
{
	return json_pack("{s:s, s:s, s:s, s:s, s:s, s:I}", "session", calls_str(c, c->session[r->session].id),
			 "invocation", calls_str(c, r->invocation), "tool", calls_str(c, r->tool),
			 "summary", calls_str(c, r->summary), "time", calls_str(c, r->intent_time),
			 "seq", (json_int_t)r->intent_seq);
}

int audit_class_names(docket_buf *out, unsigned classes)
{
	int error = 0;

	docket_buf_clear(out);
	for (unsigned bit = 1; bit && error == 0; bit <<= 1)
		if ((classes & bit) && docket_risk_name(bit))
			error = docket_buf_printf(out, "%s%s", out->len ? ", " : "", docket_risk_name(bit));
	return error == 0 && !out->ptr ? docket_buf_puts(out, "") : error;
}

static int risky_members(json_t *item, const call_fold *c, const call_rec *r, const char *outcome)
{
	docket_buf names = DOCKET_BUF_INIT;
	json_t *classes = json_array(), *hosts = json_array();
	const char *list = calls_str(c, r->hosts);
	int error = 0;

	if (!classes || !hosts)
		error = docket_error_set_oom();
	for (unsigned bit = 1; bit && error == 0; bit <<= 1)
		if ((r->risk & bit) && docket_risk_name(bit) &&
		    json_array_append_new(classes, json_string(docket_risk_name(bit))) < 0)
			error = docket_error_set_oom();
	if (error == 0)
		error = audit_class_names(&names, r->risk);
	while (error == 0 && *list) {
		size_t n = strcspn(list, ",");

		if (json_array_append_new(hosts, json_stringn(list, n)) < 0)
			error = docket_error_set_oom();
		list += n + (list[n] ? 2 : 0);
	}
	if (error == 0) {
		json_t *extra = json_pack("{s:O, s:s, s:O, s:s, s:s}", "classes", classes, "class_names",
					  names.ptr ? names.ptr : "", "hosts", hosts, "host_list", calls_str(c, r->hosts),
					  "outcome", outcome);

		if (!extra || json_object_update(item, extra) < 0)
			error = docket_error_set_oom();
		json_decref(extra);
	}
	json_decref(classes);
	json_decref(hosts);
	docket_buf_dispose(&names);
	return error;
}

/* The call's item for list `l` (one AL_*), with that list's members. */
static int call_list_item(json_t **out, const call_fold *c, const call_rec *r, unsigned l)
{
	docket_buf outcome = DOCKET_BUF_INIT, reason = DOCKET_BUF_INIT;
	json_t *item = call_item(c, r), *extra = NULL;
	int error;

	*out = NULL;
	if (!item || (error = audit_call_outcome(&outcome, c, r)) < 0 ||
	    (l == AL_DENIED && (error = audit_call_reason(&reason, c, r)) < 0)) {
		error = docket_error_set_oom();
		goto cleanup;
	}
	if (l == AL_RISKY) {
		error = risky_members(item, c, r, outcome.ptr);
		goto cleanup;
	}
	if (l == AL_ESCALATION)
		extra = json_pack("{s:s, s:s}", "justification", calls_str(c, r->justification), "outcome", outcome.ptr);
	else if (l == AL_NO_OUTCOME)
		extra = json_pack("{s:s, s:b}", "outcome", outcome.ptr, "dispatched", r->dispatches > 0);
	else
		extra = json_pack("{s:s, s:s, s:s}", "by", calls_decision(r) == D_REJECTED ? "person" : "policy",
				  "reason", reason.ptr, "rule", calls_str(c, r->rule));
	error = extra && json_object_update(item, extra) == 0 ? 0 : docket_error_set_oom();
cleanup:
	json_decref(extra);
	docket_buf_dispose(&outcome);
	docket_buf_dispose(&reason);
	if (error == 0)
		*out = item;
	else
		json_decref(item);
	return error;
}

static json_t *incident_item(const call_fold *c, const incident_rec *r)
{
	return json_pack("{s:I, s:s, s:s, s:s, s:s}", "seq", (json_int_t)r->seq, "time", calls_str(c, r->time),
			 "kind", calls_str(c, r->kind), "file", calls_str(c, r->file), "error", calls_str(c, r->error));
}

static int append(json_t *root, const char *key, json_t *item)
{
	return item && json_array_append_new(json_object_get(root, key), item) == 0 ? 0 : docket_error_set_oom();
}

int audit_findings_json(json_t **out, const call_fold *c)
{
	static const struct {
		const char *key;
		unsigned list;
	} lists[] = { { "escalations", AL_ESCALATION }, { "risky_calls", AL_RISKY }, { "no_outcome", AL_NO_OUTCOME },
		      { "denials", AL_DENIED } };
	json_t *root = json_pack("{s:[], s:[], s:[], s:[], s:[], s:[]}", "risky_sessions", "escalations",
				 "risky_calls", "no_outcome", "denials", "incidents");
	audit_counts n;
	int error = root ? 0 : docket_error_set_oom();

	*out = NULL;
	for (size_t i = 0; i < c->npolicies && error == 0; i++)
		if (c->policy[i].settings)
			error = append(root, "risky_sessions", risky_session_item(c, &c->policy[i]));
	for (size_t k = 0; k < sizeof(lists) / sizeof(lists[0]) && error == 0; k++)
		for (size_t i = 0; i < c->ncalls && error == 0; i++) {
			json_t *item;

			if ((audit_call_lists(&c->call[i]) & lists[k].list) &&
			    (error = call_list_item(&item, c, &c->call[i], lists[k].list)) == 0)
				error = append(root, lists[k].key, item);
		}
	for (size_t i = 0; i < c->nincidents && error == 0; i++)
		error = append(root, "incidents", incident_item(c, &c->incident[i]));
	audit_count(&n, c);
	if (error == 0 &&
	    (json_object_set_new(root, "attention", json_integer((json_int_t)n.attention)) < 0 ||
	     json_object_set_new(root, "waits", json_pack("{s:I, s:I}", "known", (json_int_t)n.waits_known,
							   "unknown", (json_int_t)n.waits_unknown)) < 0))
		error = docket_error_set_oom();
	if (error < 0) {
		json_decref(root);
		return error;
	}
	*out = root;
	return 0;
}

/* ---- over a ledger ------------------------------------------------------- */

typedef struct findings_sink {
	calls_sink base;
	json_t *findings;
} findings_sink;

static int findings_finish(export_sink *s)
{
	findings_sink *o = (findings_sink *)s;

	return audit_findings_json(&o->findings, &o->base.c);
}

static void findings_free(export_sink *s)
{
	json_decref(((findings_sink *)s)->findings);
	calls_sink_free(s);
}

int docket_audit_findings(json_t **out, docket_ledger *ledger, const docket_export_options *opts)
{
	docket_export_options defaults = DOCKET_EXPORT_OPTIONS_INIT;
	export_sink *sink = NULL;
	int error;

	*out = NULL;
	if (!opts)
		opts = &defaults;
	if ((error = calls_sink_make(&sink, sizeof(findings_sink), opts->since_ms, findings_finish,
				     findings_free)) < 0)
		return error;
	if ((error = export_run(ledger, opts, sink, NULL, NULL)) == 0) {
		*out = ((findings_sink *)sink)->findings;
		((findings_sink *)sink)->findings = NULL;
	}
	sink->free(sink);
	return error;
}
