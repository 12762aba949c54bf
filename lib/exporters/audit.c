/* SPDX-License-Identifier: Apache-2.0 */
/*
 * audit.c: the risk view, "what should worry me" (docs/audit.md).
 *
 * From the collector's records it lists, in this order:
 *   1. sessions that ran in a risky mode, with the settings that made them
 *      risky (read from their recorded policy revisions);
 *   2. escalations: calls that asked to leave the sandbox (Codex
 *      sandbox_permissions require_escalated, Claude dangerouslyDisableSandbox)
 *      with their justification and what became of them;
 *   3. calls that ran although they fall in a risk class (the policy
 *      engine's one call analysis, docket_call_risk; see call_risk below);
 *   4. calls without an outcome;
 *   5. denials, with their reasons.
 * "attention" counts the risky sessions and the distinct calls in the four
 * call lists; it is 0 only when every list is empty. The
 * report's first screen, `docket audit` and `docket sessions` read this one
 * function: there is no second list.
 */
#include <stdio.h>
#include <string.h>

#include "export_internal.h"
#include "policy/risk.h"
#include "util/error.h"

static int nomem(void)
{
	return docket_error_set(DOCKET_ENOMEM, "out of memory");
}

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

int audit_risky_settings(docket_buf *out, const json_t *rec)
{
	const json_t *policy = json_object_get(rec, "policy");
	const char *format = jstr(rec, "format"), *v;
	int error = 0;

	docket_buf_clear(out);
	if (strcmp(format, "codex") == 0) {
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
	if (error == 0 && !out->ptr)
		error = docket_buf_puts(out, "");
	return error;
}

/* The mode settings of a revision, risky or not ("approval_policy
 * on-request, sandbox workspace-write"); empty for other formats. */
static void mode_summary(char *out, size_t n, const json_t *rec)
{
	const json_t *policy = json_object_get(rec, "policy");
	const char *format = jstr(rec, "format");

	if (strcmp(format, "codex") == 0)
		snprintf(out, n, "approval_policy %s, sandbox %s", *jstr(policy, "approval_policy") ?
			 jstr(policy, "approval_policy") : "-", *codex_sandbox(policy) ? codex_sandbox(policy) : "-");
	else if (strcmp(format, "claude") == 0)
		snprintf(out, n, "permissions.defaultMode %s",
			 *jstr(json_object_get(policy, "permissions"), "defaultMode")
				 ? jstr(json_object_get(policy, "permissions"), "defaultMode") : "-");
	else if (strcmp(format, "docket") == 0)
		snprintf(out, n, "approval %s, sandbox %s", *jstr(policy, "approval") ? jstr(policy, "approval") : "-",
			 *jstr(policy, "sandbox") ? jstr(policy, "sandbox") : "-");
	else if (n)
		out[0] = '\0';
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

/* One item per risky revision of a session, the session's facts beside it. */
static int risky_sessions(json_t *list, const collector *c)
{
	docket_buf why = DOCKET_BUF_INIT;
	const json_t *p;
	size_t i;
	int error = 0;

	json_array_foreach(c->policies, i, p) {
		const json_t *s = collector_session(c, jstr(p, "session"));

		if ((error = audit_risky_settings(&why, p)) < 0)
			break;
		if (!why.len)
			continue;
		if (json_array_append_new(list, json_pack("{s:s, s:O?, s:s, s:s, s:s, s:s, s:s}",
			"session", jstr(p, "session"), "revision", json_object_get(p, "revision"),
			"format", jstr(p, "format"), "settings", why.ptr, "time", jstr(p, "time"),
			"runtime", jstr(s, "runtime"), "cwd", jstr(s, "cwd"))) < 0) {
			error = nomem();
			break;
		}
	}
	docket_buf_dispose(&why);
	return error;
}

/* ---- calls --------------------------------------------------------------- */

static int escalated(const json_t *inv)
{
	const json_t *args = json_object_get(inv, "args");

	return strcmp(jstr(args, "sandbox_permissions"), "require_escalated") == 0 ||
	       json_is_true(json_object_get(args, "with_escalated_permissions")) ||
	       json_is_true(json_object_get(args, "dangerouslyDisableSandbox"));
}

#define ROOTS_MAX 16

/*
 * The risk classes of a call that ran: the policy engine's one call
 * analysis (docket_call_risk, policy/risk.h), with the session's cwd,
 * workspace roots and HOME. Escalation is listed on its own (escalations),
 * so it is left out here.
 */
static unsigned call_risk(const collector *c, const json_t *inv)
{
	const json_t *s = collector_session(c, jstr(inv, "session")), *roots = json_object_get(s, "workspace_roots");
	const char *root[ROOTS_MAX];
	docket_risk_call call;
	size_t i, n = 0;

	for (i = 0; i < json_array_size(roots) && n < ROOTS_MAX; i++)
		if (json_string_value(json_array_get(roots, i)))
			root[n++] = json_string_value(json_array_get(roots, i));
	memset(&call, 0, sizeof(call));
	call.tool = jstr(inv, "tool");
	call.args = json_object_get(inv, "args");
	call.cwd = *jstr(s, "cwd") ? jstr(s, "cwd") : NULL;
	call.roots = root;
	call.nroots = n;
	call.home = *jstr(s, "home") ? jstr(s, "home") : NULL;
	return docket_call_risk(&call) & ~(unsigned)DOCKET_RISK_ESCALATION;
}

/* "network, push" */
static int class_names(docket_buf *out, unsigned classes)
{
	int error = 0;

	docket_buf_clear(out);
	for (unsigned bit = 1; bit && error == 0; bit <<= 1)
		if ((classes & bit) && docket_risk_name(bit))
			error = docket_buf_printf(out, "%s%s", out->len ? ", " : "", docket_risk_name(bit));
	return error == 0 && !out->ptr ? docket_buf_puts(out, "") : error;
}

/* The host of one URL ("https://user@h.example:8080/x" -> "h.example"). */
static int add_host(json_t *hosts, const char *url, size_t len)
{
	const char *p = memmem(url, len, "://", 3), *end = url + len;
	char host[256];
	size_t n;

	if (!p)
		return 0;
	p += 3;
	n = strcspn(p, "/?#:'\" \t\n)");
	if (p + n > end)
		n = (size_t)(end - p);
	for (const char *at = memchr(p, '@', n); at; at = memchr(p, '@', n)) {
		n -= (size_t)(at + 1 - p);
		p = at + 1;
	}
	if (n == 0 || n >= sizeof(host))
		return 0;
	memcpy(host, p, n);
	host[n] = '\0';
	for (size_t i = 0; i < json_array_size(hosts); i++)
		if (strcmp(json_string_value(json_array_get(hosts, i)), host) == 0)
			return 0;
	return json_array_append_new(hosts, json_string(host)) == 0 ? 0 : nomem();
}

/* The hosts a network call reaches: its url or host, or the URLs in its
 * command line. */
static int call_hosts(json_t *hosts, const json_t *inv)
{
	const json_t *args = json_object_get(inv, "args");
	const char *text = jstr(inv, "summary"), *p;
	int error = 0;

	if (*jstr(args, "host"))
		return json_array_append_new(hosts, json_string(jstr(args, "host"))) == 0 ? 0 : nomem();
	if (*jstr(args, "url"))
		return add_host(hosts, jstr(args, "url"), strlen(jstr(args, "url")));
	for (p = strstr(text, "://"); p && error == 0; p = strstr(p + 3, "://")) {
		const char *start = p;

		while (start > text && ((start[-1] >= 'a' && start[-1] <= 'z') || (start[-1] >= 'A' && start[-1] <= 'Z')))
			start--;
		error = add_host(hosts, start, strlen(start));
	}
	return error;
}


int audit_outcome(docket_buf *out, const json_t *inv)
{
	const char *status = jstr(inv, "status"), *result = jstr(inv, "result");
	int error = 0;

	docket_buf_clear(out);
	if (*result)
		error = docket_buf_printf(out, "%s%s%s", result, *jstr(inv, "actor") ? " by " : "", jstr(inv, "actor"));
	else if (jhas(inv, "verdict"))
		error = docket_buf_printf(out, "%s (%s)", jstr(inv, "verdict"),
					  *jstr(inv, "decision_source") ? jstr(inv, "decision_source") : "inferred");
	if (error == 0)
		error = docket_buf_printf(out, "%s%s", out->len ? "; " : "", *status ? status : "no outcome");
	return error;
}

static int add_part(docket_buf *out, const char *text)
{
	if (!text || !*text || (out->ptr && strstr(out->ptr, text)))
		return 0;
	return docket_buf_printf(out, "%s%s", out->len ? "; " : "", text);
}

int audit_denial_reason(docket_buf *out, const json_t *inv)
{
	const json_t *r;
	size_t i;
	int error = 0;

	docket_buf_clear(out);
	json_array_foreach(json_object_get(inv, "reasons"), i, r)
		if (error == 0)
			error = add_part(out, json_string_value(r));
	if (error == 0) error = add_part(out, jstr(inv, "settle_reason"));
	if (error == 0) error = add_part(out, jstr(inv, "error"));
	if (error == 0) error = add_part(out, jstr(inv, "denial_message"));
	if (error == 0 && !out->ptr)
		error = docket_buf_puts(out, "");
	return error;
}

/* The rule that decided, when the decision names one. */
static const char *first_rule(const json_t *inv)
{
	const char *r = json_string_value(json_array_get(json_object_get(inv, "rules"), 0));

	return r ? r : "";
}

/* {session, invocation, tool, summary, time} of a call, plus `extra`'s members. */
static int add_call(json_t *list, const json_t *inv, json_t *extra)
{
	json_t *item = json_pack("{s:s, s:s, s:s, s:s, s:s, s:I}", "session", jstr(inv, "session"),
				 "invocation", jstr(inv, "invocation"), "tool", jstr(inv, "tool"),
				 "summary", jstr(inv, "summary"), "time", jstr(inv, "intent_time"),
				 "seq", json_integer_value(json_object_get(inv, "intent_seq")));

	if (!item || !extra || json_object_update(item, extra) < 0 || json_array_append_new(list, item) < 0) {
		json_decref(item);
		json_decref(extra);
		return nomem();
	}
	json_decref(extra);
	return 0;
}

typedef struct findings {
	const collector *c;
	json_t *root, *escalations, *risky_calls, *no_outcome, *denials;
	size_t waits_known, waits_unknown;
	size_t calls;   /* distinct calls in any of the lists */
} findings;

static int risky_item(json_t *list, const json_t *inv, unsigned classes, const char *outcome)
{
	docket_buf names = DOCKET_BUF_INIT, joined = DOCKET_BUF_INIT;
	json_t *hosts = json_array(), *arr = json_array();
	int error;

	if (!hosts || !arr) {
		error = nomem();
		goto cleanup;
	}
	for (unsigned bit = 1; bit; bit <<= 1)
		if ((classes & bit) && docket_risk_name(bit) &&
		    json_array_append_new(arr, json_string(docket_risk_name(bit))) < 0) {
			error = nomem();
			goto cleanup;
		}
	if ((error = class_names(&names, classes)) < 0 ||
	    ((classes & DOCKET_RISK_NETWORK) && (error = call_hosts(hosts, inv)) < 0))
		goto cleanup;
	docket_buf_clear(&joined);
	for (size_t i = 0; i < json_array_size(hosts) && error == 0; i++)
		error = docket_buf_printf(&joined, "%s%s", i ? ", " : "", json_string_value(json_array_get(hosts, i)));
	if (error == 0)
		error = add_call(list, inv, json_pack("{s:O, s:s, s:O, s:s, s:s}", "classes", arr, "class_names",
						      names.ptr, "hosts", hosts, "host_list", joined.ptr ? joined.ptr : "",
						      "outcome", outcome));
cleanup:
	json_decref(hosts);
	json_decref(arr);
	docket_buf_dispose(&names);
	docket_buf_dispose(&joined);
	return error;
}

static int call_findings(findings *f, const json_t *inv)
{
	docket_buf outcome = DOCKET_BUF_INIT, reason = DOCKET_BUF_INIT;
	unsigned risk;
	int error, counted = 0;

	if ((error = audit_outcome(&outcome, inv)) < 0)
		goto cleanup;
	f->waits_known += jhas(inv, "wait_ms");
	f->waits_unknown += jhas(inv, "wait_unknown");
	if (escalated(inv)) {
		counted = 1;
		if ((error = add_call(f->escalations, inv, json_pack("{s:s, s:s}", "justification",
				      jstr(json_object_get(inv, "args"), "justification"), "outcome", outcome.ptr))) < 0)
			goto cleanup;
	}
	/* calls that ran: dispatched, or with an outcome other than a refusal */
	if (jhas(inv, "dispatches") && (risk = call_risk(f->c, inv)) != 0) {
		counted = 1;
		if ((error = risky_item(f->risky_calls, inv, risk, outcome.ptr)) < 0)
			goto cleanup;
	}
	if (!*jstr(inv, "status")) {
		counted = 1;
		if ((error = add_call(f->no_outcome, inv, json_pack("{s:s, s:b}", "outcome", outcome.ptr,
				      "dispatched", jhas(inv, "dispatches")))) < 0)
			goto cleanup;
	}
	if (call_denied(inv)) {
		counted = 1;
		if ((error = audit_denial_reason(&reason, inv)) < 0 ||
		    (error = add_call(f->denials, inv, json_pack("{s:s, s:s, s:s}", "by",
				      call_decision(inv) == D_REJECTED ? "person" : "policy",
				      "reason", reason.ptr, "rule", first_rule(inv)))) < 0)
			goto cleanup;
	}
	f->calls += counted;
cleanup:
	docket_buf_dispose(&outcome);
	docket_buf_dispose(&reason);
	return error;
}

static int set_list(json_t *root, const char *key, json_t **list)
{
	if (!(*list = json_array()) || json_object_set_new(root, key, *list) < 0)
		return nomem();
	return 0;
}

int audit_findings(json_t **out, const collector *c)
{
	findings f;
	json_t *sessions = NULL;
	const json_t *inv;
	size_t i, attention;
	int error;

	*out = NULL;
	memset(&f, 0, sizeof(f));
	f.c = c;
	if (!(f.root = json_object()))
		return nomem();
	if ((error = set_list(f.root, "risky_sessions", &sessions)) < 0 ||
	    (error = set_list(f.root, "escalations", &f.escalations)) < 0 ||
	    (error = set_list(f.root, "risky_calls", &f.risky_calls)) < 0 ||
	    (error = set_list(f.root, "no_outcome", &f.no_outcome)) < 0 ||
	    (error = set_list(f.root, "denials", &f.denials)) < 0 ||
	    (error = risky_sessions(sessions, c)) < 0)
		goto fail;
	json_array_foreach(c->invocations, i, inv)
		if (json_is_true(json_object_get(inv, "since")) && (error = call_findings(&f, inv)) < 0)
			goto fail;
	/* a call in several lists (an escalated push that was denied) counts once */
	attention = json_array_size(sessions) + f.calls;
	if (json_object_set_new(f.root, "attention", json_integer((json_int_t)attention)) < 0 ||
	    json_object_set_new(f.root, "waits", json_pack("{s:I, s:I}", "known", (json_int_t)f.waits_known,
							    "unknown", (json_int_t)f.waits_unknown)) < 0) {
		error = nomem();
		goto fail;
	}
	*out = f.root;
	return 0;
fail:
	json_decref(f.root);
	return error;
}

/* ---- over a ledger ------------------------------------------------------- */

typedef struct findings_sink {
	collector_sink base;
	json_t *findings;
} findings_sink;

static int findings_finish(export_sink *s)
{
	findings_sink *o = (findings_sink *)s;

	return audit_findings(&o->findings, &o->base.c);
}

static void findings_free(export_sink *s)
{
	json_decref(((findings_sink *)s)->findings);
	collector_sink_free(s);
}

int docket_audit_findings(json_t **out, docket_ledger *ledger, const docket_export_options *opts)
{
	docket_export_options defaults = DOCKET_EXPORT_OPTIONS_INIT;
	export_sink *sink = NULL;
	int error;

	*out = NULL;
	if (!opts)
		opts = &defaults;
	if ((error = collector_sink_make(&sink, sizeof(findings_sink), opts->since_ms, collector_sink_collect,
					 findings_finish, findings_free)) < 0)
		return error;
	if ((error = export_run(ledger, opts, sink, NULL, NULL)) == 0) {
		*out = ((findings_sink *)sink)->findings;
		((findings_sink *)sink)->findings = NULL;
	}
	sink->free(sink);
	return error;
}
