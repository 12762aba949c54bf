/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_show.c: `docket show SESSION`: a session as a timeline per tool call.
 *
 * Every event of the session is read once (docket_ledger_read_json with
 * opts.session) and grouped by invocation in the order of the intents. For
 * each call the timeline runs intent -> approval -> dispatch -> outcome; the
 * approval wait is settled.time - requested.time, the run time is
 * completed.time - dispatched.time (the last dispatch), else duration_ms.
 */
#include "cli.h"

#include <string.h>

#include "docket/export.h"
#include "docket/replay.h"
#include "ledger/decision.h"
#include "ledger/spool.h"
#include "policy/risk.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/error.h"
#include "util/json.h"

#define CALL_SUMMARY_MAX 72

typedef struct call {
	const char *invocation;
	json_t *intent;      /* NULL if the session has events but no intent for it */
	json_t *steps;       /* array of the call's events in seq order */
	json_t *completed;   /* the outcome, NULL while pending */
	const json_t *under; /* show --policy: the call's verdicts under that policy, or NULL */
} call;

typedef struct show_ctx {
	json_t *events;      /* every event of the session, in order */
	json_t *index;       /* invocation -> index into calls */
	call *calls;
	size_t ncalls, cap;
	json_t *opened;
	json_t *closed;
	json_t *policies;    /* policy.revised events */
	json_t *other;       /* session events that belong to no invocation */
	json_t *incidents;   /* ledger.incident events about the session (ledger/spool.c) */
} show_ctx;

static int collect(void *vctx, uint64_t seq, json_t *ev)
{
	show_ctx *ctx = vctx;

	(void)seq;
	if (json_array_append(ctx->events, ev) < 0)
		return docket_error_set_oom();
	return 0;
}

static call *call_get(show_ctx *ctx, const char *inv)
{
	json_t *idx = json_object_get(ctx->index, inv);
	call *c;

	if (idx)
		return &ctx->calls[json_integer_value(idx)];
	if (ctx->ncalls == ctx->cap) {
		size_t ncap = ctx->cap ? ctx->cap * 2 : 32;
		call *n;

		if (ncap > SIZE_MAX / sizeof(call))
			return NULL;
		n = docket_realloc(ctx->calls, ncap * sizeof(call));
		if (!n)
			return NULL;
		ctx->calls = n;
		ctx->cap = ncap;
	}
	c = &ctx->calls[ctx->ncalls];
	memset(c, 0, sizeof(*c));
	c->invocation = inv;
	if (!(c->steps = json_array()))
		return NULL;
	if (json_object_set_new(ctx->index, inv, json_integer((json_int_t)ctx->ncalls)) < 0) {
		json_decref(c->steps);
		return NULL;
	}
	ctx->ncalls++;
	return c;
}

static int group(show_ctx *ctx)
{
	size_t i;
	json_t *ev;

	json_array_foreach(ctx->events, i, ev) {
		const char *type = docket_json_str(ev, "type");
		const char *inv = docket_json_str(ev, "invocation");
		call *c;

		if (!type)
			type = "";
		if (strcmp(type, "ledger.incident") == 0) {
			/* a spooled event of this session refused when folded: with
			 * its call when the call is known, else with the other events */
			json_t *entry = docket_spool_incident_entry(ev);
			const json_t *idx = json_object_get(ctx->index, docket_json_str(entry, "invocation") ?
							docket_json_str(entry, "invocation") : "");

			json_decref(entry);
			if (json_array_append(ctx->incidents, ev) < 0 ||
			    json_array_append(idx ? ctx->calls[json_integer_value(idx)].steps : ctx->other, ev) < 0)
				return docket_error_set_oom();
			continue;
		}
		if (!inv) {
			int error = 0;

			if (strcmp(type, "session.opened") == 0 && !ctx->opened)
				ctx->opened = ev;
			else if (strcmp(type, "session.closed") == 0)
				ctx->closed = ev;
			else if (strcmp(type, "policy.revised") == 0)
				error = json_array_append(ctx->policies, ev);
			else
				error = json_array_append(ctx->other, ev);
			if (error < 0)
				return docket_error_set_oom();
			continue;
		}
		if (!(c = call_get(ctx, inv)))
			return docket_error_set_oom();
		if (strcmp(type, "tool.intent") == 0 && !c->intent)
			c->intent = ev;
		if (strcmp(type, "tool.completed") == 0)
			c->completed = ev;
		if (json_array_append(c->steps, ev) < 0)
			return docket_error_set_oom();
	}
	return 0;
}

/* Milliseconds from `a` to `b` (event times), -1 when either is unusable. */
static int64_t span_ms(const json_t *a, const json_t *b)
{
	int64_t ta, tb;

	if (!a || !b || cli_time_parse(docket_json_str(a, "time"), &ta) < 0 ||
	    cli_time_parse(docket_json_str(b, "time"), &tb) < 0 || tb < ta)
		return -1;
	return tb - ta;
}

typedef struct call_facts {
	const char *tool;
	const char *verdict;     /* recorded, else inferred, else "undecided" */
	const char *source;      /* the decision's source, "inferred", or NULL */
	const json_t *decision;  /* the recorded decision, or NULL */
	const json_t *reasons;
	const json_t *rules;     /* the rules the decision names */
	const json_t *last_dispatch;
	const json_t *request;   /* the last approval.requested */
	const json_t *settled;   /* the last approval.settled */
	size_t dispatches;
	int64_t wait_ms;         /* -1: none or unknown */
	int wait_unknown;        /* the source did not record when it asked */
	int64_t run_ms;          /* -1: unknown */
	int64_t recovered_ms;    /* dispatch to an outcome written by recovery; -1: none */
	unsigned risk;           /* docket_call_risk of the intent (escalation left out) */
} call_facts;

#define ROOTS_MAX 16

/* The risk classes of a call (policy/risk.h) in its session's context. */
static unsigned call_risk(const call *c, const json_t *opened)
{
	const json_t *roots = json_object_get(opened, "workspace_roots");
	const char *root[ROOTS_MAX];
	docket_risk_call rc;
	size_t i, n = 0;

	if (!c->intent)
		return 0;
	for (i = 0; i < json_array_size(roots) && n < ROOTS_MAX; i++)
		if (json_string_value(json_array_get(roots, i)))
			root[n++] = json_string_value(json_array_get(roots, i));
	memset(&rc, 0, sizeof(rc));
	rc.tool = docket_json_str(c->intent, "tool") ? docket_json_str(c->intent, "tool") : "";
	rc.args = json_object_get(c->intent, "args");
	rc.cwd = docket_json_str(opened, "cwd");
	rc.roots = root;
	rc.nroots = n;
	rc.home = docket_json_str(json_object_get(opened, "env"), "HOME");
	return docket_call_risk(&rc) & ~(unsigned)DOCKET_RISK_ESCALATION;
}

/* The approval wait from `request` to `settled`; -1 when unknown
 * (docket_wait_known: an importer's stamp, or a request stamped at its
 * answer). */
static int64_t wait_of(const json_t *intent, const json_t *request, const json_t *settled)
{
	const json_t *line = intent ? json_object_get(json_object_get(intent, "provenance"), "line") : NULL;
	int stamped;
	int64_t ta, tb;

	if (!request || !settled || cli_time_parse(docket_json_str(request, "time"), &ta) < 0 ||
	    cli_time_parse(docket_json_str(settled, "time"), &tb) < 0)
		return -1;
	stamped = docket_request_stamped(intent ? docket_json_str(intent, "time") : NULL,
					 json_is_integer(line) ? (int64_t)json_integer_value(line) : -1, request);
	return docket_wait_known(ta, tb, json_object_get(request, "provenance") != NULL, stamped) ? tb - ta : -1;
}

/* A call a live hook let through, with nothing since: in doubt, as
 * `pending` and `recover` say (docket_recover_let_through). */
static int let_through(const call *c)
{
	return c->intent && !c->completed && json_array_size(c->steps) == 1 && docket_recover_let_through(c->intent);
}

/* What to check about a call in doubt (as `pending` says it), or NULL. */
static const char *in_doubt_check(const call *c, const call_facts *f)
{
	if (let_through(c))
		return CLI_LET_THROUGH_CHECK;
	return !c->completed && f->dispatches ? CLI_IN_DOUBT_CHECK : NULL;
}

static void call_analyse(const call *c, call_facts *f)
{
	const json_t *dec = c->intent ? json_object_get(c->intent, "decision") : NULL;
	const json_t *ev;
	size_t i;
	int recovered = 0;

	memset(f, 0, sizeof(*f));
	f->wait_ms = -1;
	f->run_ms = -1;
	f->recovered_ms = -1;
	f->tool = c->intent ? docket_json_str(c->intent, "tool") : NULL;
	f->verdict = docket_json_str(dec, "verdict");
	f->source = docket_json_str(dec, "source");
	f->decision = dec;
	f->reasons = dec ? json_object_get(dec, "reasons") : NULL;
	f->rules = dec ? json_object_get(dec, "rules") : NULL;

	json_array_foreach(c->steps, i, ev) {
		const char *type = docket_json_str(ev, "type");

		if (!type)
			continue;
		if (strcmp(type, "approval.requested") == 0) {
			f->request = ev;
		} else if (strcmp(type, "approval.settled") == 0) {
			f->settled = ev;
			f->wait_ms = wait_of(c->intent, f->request, ev);
			f->wait_unknown = f->request && f->wait_ms < 0;
		} else if (strcmp(type, "tool.dispatched") == 0) {
			f->last_dispatch = ev;
			f->dispatches++;
			recovered = 0;
		} else if (strncmp(type, "recovery.", 9) == 0 && f->last_dispatch) {
			recovered = 1;
		}
	}
	if (c->completed && recovered) {
		/* the outcome came from recovery: the time since the dispatch is how
		 * long the call was in doubt, not how long it ran */
		f->recovered_ms = span_ms(f->last_dispatch, c->completed);
	} else if (c->completed) {
		int64_t d;

		f->run_ms = f->last_dispatch ? span_ms(f->last_dispatch, c->completed) : -1;
		if (f->run_ms < 0 && f->last_dispatch && cli_jint(c->completed, "duration_ms", &d) == 0)
			f->run_ms = d;
	}
	if (!f->verdict) {
		/* DESIGN §3, record mode: the history implies the verdict */
		const char *status = c->completed ? docket_json_str(c->completed, "status") : NULL;

		f->source = "inferred";
		if (f->request)
			f->verdict = "approval_required";
		else if (f->dispatches)
			f->verdict = "allowed";
		else if (status && strcmp(status, "denied") == 0)
			f->verdict = "denied";
		else if (status && strcmp(status, "unsupported") == 0)
			f->verdict = "unsupported";
		else {
			f->verdict = "undecided";
			f->source = NULL;
		}
	}
}

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *ms_or_null(int64_t ms)
{
	return ms >= 0 ? json_integer((json_int_t)ms) : json_null();
}

static json_t *at(const json_t *ev)
{
	int64_t seq;

	if (!ev)
		return json_null();
	if (cli_jint(ev, "seq", &seq) < 0)
		seq = 0;
	return json_pack("{s:I, s:o}", "seq", (json_int_t)seq, "time",
			 str_or_null(docket_json_str(ev, "time")));
}

static json_t *copy_or_null(const json_t *v)
{
	return v ? json_deep_copy(v) : json_null();
}

/* ---- JSON form ---------------------------------------------------------- */

/* The approval.requested step of `c` with request id `request` (NULL: the first without one). */
static const json_t *request_of(const call *c, const char *request)
{
	const json_t *ev;
	size_t i;

	json_array_foreach(c->steps, i, ev) {
		const char *r = docket_json_str(ev, "request");

		if (strcmp(docket_json_str(ev, "type") ? docket_json_str(ev, "type") : "", "approval.requested") == 0 &&
		    ((r && request && strcmp(r, request) == 0) || (!r && !request)))
			return ev;
	}
	return NULL;
}

static json_t *call_json(const call *c)
{
	call_facts f;
	json_t *j, *approvals, *dispatches, *outcome = json_null(), *ev;
	char *summary = NULL;
	size_t i;

	call_analyse(c, &f);
	if (cli_call_summary(&summary, f.tool, c->intent ? json_object_get(c->intent, "args") : NULL,
			     0) < 0)
		return NULL;
	approvals = json_array();
	dispatches = json_array();
	json_array_foreach(c->steps, i, ev) {
		const char *type = docket_json_str(ev, "type");

		if (!type)
			continue;
		if (strcmp(type, "approval.requested") == 0) {
			json_array_append_new(approvals, json_pack(
				"{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}",
				"request", str_or_null(docket_json_str(ev, "request")),
				"reviewer", str_or_null(docket_json_str(ev, "reviewer")),
				"risk", copy_or_null(json_object_get(ev, "risk")),
				"requested", at(ev),
				"settled", json_null(),
				"result", json_null(),
				"actor", json_null(),
				"reason", json_null(),
				"wait_ms", json_null()));
		} else if (strcmp(type, "approval.settled") == 0) {
			const char *req = docket_json_str(ev, "request");
			json_t *a;
			size_t k;

			json_array_foreach(approvals, k, a) {
				const char *r = docket_json_str(a, "request");
				int64_t wait;

				if (!(r && req && strcmp(r, req) == 0) && !(!r && !req))
					continue;
				json_object_set_new(a, "settled", at(ev));
				json_object_set_new(a, "result", str_or_null(docket_json_str(ev, "result")));
				json_object_set_new(a, "actor", str_or_null(docket_json_str(ev, "actor")));
				json_object_set_new(a, "reason", str_or_null(docket_json_str(ev, "reason")));
				if ((wait = wait_of(c->intent, request_of(c, r), ev)) >= 0)
					json_object_set_new(a, "wait_ms", json_integer(wait));
				else
					json_object_set_new(a, "wait_unknown", json_true());
			}
		} else if (strcmp(type, "tool.dispatched") == 0) {
			int64_t attempt = 0;
			json_t *d = at(ev);

			if (cli_jint(ev, "attempt", &attempt) == 0)
				json_object_set_new(d, "attempt", json_integer(attempt));
			json_array_append_new(dispatches, d);
		}
	}
	if (c->completed) {
		int64_t v;

		outcome = at(c->completed);
		json_object_set_new(outcome, "status", str_or_null(docket_json_str(c->completed, "status")));
		json_object_set_new(outcome, "exit_code",
				    cli_jint(c->completed, "exit_code", &v) == 0 ? json_integer(v)
										  : json_null());
		json_object_set_new(outcome, "error", str_or_null(docket_json_str(c->completed, "error")));
		json_object_set_new(outcome, "duration_ms",
				    cli_jint(c->completed, "duration_ms", &v) == 0 ? json_integer(v)
										    : json_null());
	}
	j = json_pack("{s:s, s:o, s:o, s:s, s:o, s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}",
		      "invocation", c->invocation,
		      "turn", str_or_null(c->intent ? docket_json_str(c->intent, "turn") : NULL),
		      "tool", str_or_null(f.tool),
		      "summary", summary,
		      "args", copy_or_null(c->intent ? json_object_get(c->intent, "args") : NULL),
		      "verdict", f.verdict,
		      "verdict_source", str_or_null(f.source),
		      "reasons", copy_or_null(f.reasons),
		      "intent", at(c->intent),
		      "approvals", approvals,
		      "dispatches", dispatches,
		      "outcome", outcome,
		      "wait_ms", ms_or_null(f.wait_ms),
		      "run_ms", ms_or_null(f.run_ms));
	if (j && ((f.wait_unknown && json_object_set_new(j, "wait_unknown", json_true()) < 0) ||
		  (in_doubt_check(c, &f) && (json_object_set_new(j, "state", json_string("in_doubt")) < 0 ||
					     json_object_set_new(j, "check", json_string(in_doubt_check(c, &f))) < 0)) ||
		  (f.recovered_ms >= 0 && json_object_set_new(j, "recovered_ms", json_integer(f.recovered_ms)) < 0) ||
		  json_object_set_new(j, "rules", copy_or_null(f.rules)) < 0)) {
		json_decref(j);
		j = NULL;
	}
	docket_free(summary);
	return j;
}

static json_t *show_json(const show_ctx *ctx, const char *session)
{
	const json_t *o = ctx->opened;
	json_t *j, *calls, *pols, *ev;
	size_t i;

	calls = json_array();
	pols = json_array();
	if (!calls || !pols)
		goto oom;
	for (i = 0; i < ctx->ncalls; i++) {
		json_t *c = call_json(&ctx->calls[i]);

		if (c && ctx->calls[i].under && json_object_set(c, "under_policy", (json_t *)ctx->calls[i].under) < 0) {
			json_decref(c);
			c = NULL;
		}
		if (!c || json_array_append_new(calls, c) < 0)
			goto oom;
	}
	json_array_foreach(ctx->policies, i, ev) {
		json_t *p = at(ev);
		int64_t rev = 0;

		if (!p)
			goto oom;
		cli_jint(ev, "revision", &rev);
		json_object_set_new(p, "revision", json_integer(rev));
		json_object_set_new(p, "format", str_or_null(docket_json_str(ev, "format")));
		json_object_set_new(p, "actor", str_or_null(docket_json_str(ev, "actor")));
		json_object_set_new(p, "reason", str_or_null(docket_json_str(ev, "reason")));
		if (json_array_append_new(pols, p) < 0)
			goto oom;
	}
	j = json_pack("{s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}",
		      "session", session,
		      "runtime", str_or_null(docket_json_str(o, "runtime")),
		      "platform", str_or_null(docket_json_str(o, "platform")),
		      "cwd", str_or_null(docket_json_str(o, "cwd")),
		      "workspace_roots", copy_or_null(o ? json_object_get(o, "workspace_roots") : NULL),
		      "opened", at(o),
		      "closed", at(ctx->closed),
		      "policy_revisions", pols,
		      "invocations", calls);
	if (j && json_array_size(ctx->incidents) > 0 &&
	    json_object_set(j, "incidents", ctx->incidents) < 0) {
		json_decref(j);
		j = NULL;
	}
	return j;
oom:
	json_decref(calls);
	json_decref(pols);
	return NULL;
}

/* ---- human form --------------------------------------------------------- */

/* "; escalated (require_escalated): JUSTIFICATION" for a call that asked
 * to leave the sandbox. */
static int escalation_detail(docket_buf *b, const json_t *args)
{
	const char *sp = docket_json_str(args, "sandbox_permissions"), *why = docket_json_str(args, "justification");

	if (json_is_true(json_object_get(args, "dangerouslyDisableSandbox")))
		sp = "dangerouslyDisableSandbox";
	if (!sp || strcmp(sp, "use_default") == 0)
		return 0;
	return docket_buf_printf(b, "; ESCALATED (%s)%s%s", sp, why ? ": " : "", why ? why : "");
}

/* `text` without a leading "WORD: " that repeats the status just printed
 * ("denied: don't ask mode" after "denied"). */
static const char *without_word(const char *text, const char *word)
{
	size_t n = word ? strlen(word) : 0;

	if (n && strncmp(text, word, n) == 0 && text[n] == ':' && text[n + 1] == ' ')
		return text + n + 2;
	return text;
}

/* "; under P: denied", or both verdicts when they differ:
 * "; under P: engine allowed, enforced denied (a rule names `curl` ...)". */
static int under_detail(docket_buf *b, const json_t *u)
{
	const char *engine = docket_json_str(u, "engine"), *enforced = docket_json_str(u, "enforced");

	if (engine && enforced && strcmp(engine, enforced) != 0)
		return docket_buf_printf(b, "; under %s: engine %s, enforced %s (%s)", docket_json_str(u, "policy"), engine,
					 enforced, docket_json_str(u, "enforced_reason") ? docket_json_str(u, "enforced_reason") : "");
	return docket_buf_printf(b, "; under %s: %s", docket_json_str(u, "policy"), engine ? engine : "?");
}

static int step_detail(docket_buf *b, const call *c, const call_facts *f, const json_t *ev,
		       const json_t **last_request, const char **color)
{
	const char *type = docket_json_str(ev, "type");
	int64_t n;
	int error = 0;

	*color = NULL;
	if (!type)
		return docket_buf_puts(b, "");
	if (strcmp(type, "tool.intent") == 0) {
		docket_buf why = DOCKET_BUF_INIT;
		const json_t *r;
		size_t i, said = 0;

		error = docket_buf_puts(b, f->verdict);
		*color = cli_status_color(f->verdict);
		if (error == 0 && f->source)
			error = docket_buf_printf(b, " (%s)", f->source);
		/* reasons are codes (older ledgers: texts), rendered here; then the
		 * rules a reason does not name already ("denied by rule R") */
		if (error == 0 && (error = decision_reasons_text(&why, f->decision, ", ")) == 0 && why.len)
			error = docket_buf_printf(b, ": %s", why.ptr);
		json_array_foreach(f->rules, i, r)
			if (error == 0 && json_is_string(r) && !(why.len && strstr(why.ptr, json_string_value(r))))
				error = docket_buf_printf(b, "%s%s", said++ ? ", " : "; rule ", json_string_value(r));
		docket_buf_dispose(&why);
		if (error == 0 && docket_json_str(ev, "recovery"))
			error = docket_buf_printf(b, "; recovery %s", docket_json_str(ev, "recovery"));
		if (error == 0)
			error = escalation_detail(b, json_object_get(ev, "args"));
		for (unsigned bit = 1, k = 0; bit && error == 0; bit <<= 1)
			if ((f->risk & bit) && docket_risk_name(bit))
				error = docket_buf_printf(b, "%s%s", k++ ? ", " : "; risk ", docket_risk_name(bit));
		if (error == 0 && c->under)
			error = under_detail(b, c->under);
	} else if (strcmp(type, "approval.requested") == 0) {
		const char *req = docket_json_str(ev, "request");
		const char *reviewer = docket_json_str(ev, "reviewer");
		const json_t *risk = json_object_get(ev, "risk");
		const char *level = docket_json_str(risk, "level");
		const char *summary = docket_json_str(risk, "summary");

		*last_request = ev;
		error = docket_buf_printf(b, "%s asked", req ? req : "request");
		if (error == 0 && reviewer)
			error = docket_buf_printf(b, " %s", reviewer);
		if (error == 0 && level)
			error = docket_buf_printf(b, ", risk %s", level);
		if (error == 0 && summary)
			error = docket_buf_printf(b, ": %s", summary);
	} else if (strcmp(type, "approval.settled") == 0) {
		const char *result = docket_json_str(ev, "result");
		const char *actor = docket_json_str(ev, "actor");
		int64_t wait = wait_of(c->intent, *last_request, ev);

		error = docket_buf_puts(b, result ? result : "?");
		*color = cli_status_color(result);
		if (error == 0 && actor)
			error = docket_buf_printf(b, " by %s", actor);
		if (error == 0 && docket_json_str(ev, "reason"))
			error = docket_buf_printf(b, " (%s)", docket_json_str(ev, "reason"));
		if (error == 0 && wait >= 0) {
			char d[32];

			cli_duration(d, sizeof(d), wait);
			error = docket_buf_printf(b, ", waited %s", d);
		} else if (error == 0 && *last_request) {
			error = docket_buf_puts(b, ", wait unknown (the source did not record when it asked)");
		}
	} else if (strcmp(type, "tool.dispatched") == 0) {
		if (cli_jint(ev, "attempt", &n) == 0)
			error = docket_buf_printf(b, "attempt %lld", (long long)n);
	} else if (strcmp(type, "tool.completed") == 0) {
		const char *status = docket_json_str(ev, "status");

		error = docket_buf_puts(b, status ? status : "?");
		*color = cli_status_color(status);
		if (error == 0 && cli_jint(ev, "exit_code", &n) == 0)
			error = docket_buf_printf(b, ", exit %lld", (long long)n);
		if (error == 0 && f->run_ms >= 0 && ev == c->completed) {
			char d[32];

			cli_duration(d, sizeof(d), f->run_ms);
			error = docket_buf_printf(b, ", ran %s", d);
		} else if (error == 0 && f->recovered_ms >= 0 && ev == c->completed) {
			char d[32];

			cli_duration(d, sizeof(d), f->recovered_ms);
			error = docket_buf_printf(b, ", run time unknown (settled by recovery %s after dispatch)", d);
		}
		if (error == 0 && docket_json_str(ev, "error"))
			error = docket_buf_printf(b, ": %s", without_word(docket_json_str(ev, "error"), status));
	} else if (strcmp(type, "ledger.incident") == 0) {
		*color = CLI_RED;
		error = docket_buf_printf(b, "a spooled record refused when folded (%s): %s",
					  docket_json_str(ev, "file") ? docket_json_str(ev, "file") : "?",
					  docket_json_str(ev, "error") ? docket_json_str(ev, "error") : "?");
	} else if (strcmp(type, "recovery.action") == 0) {
		const json_t *d = json_object_get(ev, "decision");

		error = docket_buf_puts(b, docket_json_str(ev, "action") ? docket_json_str(ev, "action") : "?");
		if (error == 0 && d && json_string_value(json_object_get(d, "verdict")))
			error = docket_buf_printf(b, " -> %s", json_string_value(json_object_get(d, "verdict")));
		if (error == 0 && docket_json_str(ev, "detail"))
			error = docket_buf_printf(b, ": %s", docket_json_str(ev, "detail"));
	} else {
		/* recovery.action and anything newer: the fields as they are */
		json_t *rest = json_deep_copy(ev);
		static const char *const drop[] = { "type", "session", "invocation", "seq", "time",
						    "epoch", "hash", "turn", NULL };
		size_t i;

		if (!rest)
			return docket_error_set_oom();
		for (i = 0; drop[i]; i++)
			json_object_del(rest, drop[i]);
		error = json_object_size(rest) ? docket_json_dump(b, rest) : docket_buf_puts(b, "");
		json_decref(rest);
	}
	if (error == 0 && !b->ptr)
		error = docket_buf_puts(b, "");
	return error;
}

static const char *step_name(const char *type)
{
	if (!type)
		return "?";
	if (strcmp(type, "tool.intent") == 0)
		return "intent";
	if (strcmp(type, "approval.requested") == 0)
		return "approval";
	if (strcmp(type, "approval.settled") == 0)
		return "settled";
	if (strcmp(type, "tool.dispatched") == 0)
		return "dispatched";
	if (strcmp(type, "tool.completed") == 0)
		return "outcome";
	if (strncmp(type, "recovery.", 9) == 0)
		return "recovery";
	if (strcmp(type, "ledger.incident") == 0)
		return "INCIDENT";
	return type;
}

static int kv(cli_table *t, const char *k, const char *v)
{
	int error;

	if ((error = cli_table_cell(t, k)) < 0)
		return error;
	return cli_table_cell(t, v);
}

static int show_header(const show_ctx *ctx, const char *session, FILE *out, int color)
{
	const json_t *o = ctx->opened;
	cli_table *t = NULL;
	docket_buf b = DOCKET_BUF_INIT;
	size_t i, done = 0, pending = 0;
	const json_t *ev;
	int error;

	if ((error = cli_table_new(&t, 2)) < 0)
		return error;
	if ((error = kv(t, "session", session)) < 0)
		goto cleanup;
	if (o) {
		const char *rt = docket_json_str(o, "runtime");
		const char *pf = docket_json_str(o, "platform");
		const json_t *roots = json_object_get(o, "workspace_roots");
		const json_t *r;

		if (rt || pf) {
			docket_buf_clear(&b);
			if ((error = docket_buf_printf(&b, "%s%s%s", rt ? rt : "", rt && pf ? " on " : "",
						       pf ? pf : "")) < 0 ||
			    (error = kv(t, "runtime", b.ptr)) < 0)
				goto cleanup;
		}
		if (docket_json_str(o, "cwd") && (error = kv(t, "cwd", docket_json_str(o, "cwd"))) < 0)
			goto cleanup;
		if (json_array_size(roots) > 0) {
			docket_buf_clear(&b);
			json_array_foreach(roots, i, r)
				if ((error = docket_buf_printf(&b, "%s%s", i ? " " : "",
							       json_is_string(r) ? json_string_value(r)
										 : "?")) < 0)
					goto cleanup;
			if ((error = kv(t, "roots", b.ptr)) < 0)
				goto cleanup;
		}
		docket_buf_clear(&b);
		{
			int64_t seq = 0;

			cli_jint(o, "seq", &seq);
			if ((error = docket_buf_printf(&b, "%s  seq %lld", docket_json_str(o, "time") ?
						       docket_json_str(o, "time") : "-", (long long)seq)) < 0 ||
			    (error = kv(t, "opened", b.ptr)) < 0)
				goto cleanup;
		}
	}
	json_array_foreach(ctx->policies, i, ev) {
		int64_t rev = 0;
		const char *fmt = docket_json_str(ev, "format");
		const char *actor = docket_json_str(ev, "actor");
		const char *reason = docket_json_str(ev, "reason");

		char mode[240];
		int risky;

		cli_jint(ev, "revision", &rev);
		risky = docket_audit_risky_mode(mode, sizeof(mode), ev);
		docket_buf_clear(&b);
		if ((error = docket_buf_printf(&b, "r%lld", (long long)rev)) < 0 ||
		    (fmt && (error = docket_buf_printf(&b, " %s", fmt)) < 0) ||
		    (actor && (error = docket_buf_printf(&b, " by %s", actor)) < 0) ||
		    (reason && (error = docket_buf_printf(&b, " (%s)", reason)) < 0) ||
		    (error = docket_buf_printf(&b, " at %s", docket_json_str(ev, "time") ?
					       docket_json_str(ev, "time") : "-")) < 0 ||
		    (*mode && (error = docket_buf_printf(&b, "; %s%s", mode, risky > 0 ? " (RISKY)" : "")) < 0) ||
		    (error = kv(t, i == 0 ? "policy" : "", b.ptr)) < 0)
			goto cleanup;
	}
	if (ctx->closed) {
		int64_t seq = 0;

		cli_jint(ctx->closed, "seq", &seq);
		docket_buf_clear(&b);
		if ((error = docket_buf_printf(&b, "%s  seq %lld", docket_json_str(ctx->closed, "time") ?
					       docket_json_str(ctx->closed, "time") : "-",
					       (long long)seq)) < 0 ||
		    (error = kv(t, "closed", b.ptr)) < 0)
			goto cleanup;
	} else if ((error = kv(t, "closed", "no (open)")) < 0) {
		goto cleanup;
	}
	for (i = 0; i < ctx->ncalls; i++) {
		if (ctx->calls[i].completed)
			done++;
		else
			pending++;
	}
	docket_buf_clear(&b);
	if ((error = docket_buf_printf(&b, "%zu (%zu finished, %zu pending)", ctx->ncalls, done,
				       pending)) < 0 ||
	    (error = kv(t, "calls", b.ptr)) < 0)
		goto cleanup;
	cli_table_print(t, out, color, 0);

cleanup:
	docket_buf_dispose(&b);
	cli_table_free(t);
	return error;
}

static int show_timeline(const show_ctx *ctx, FILE *out, int color)
{
	cli_table *t = NULL;
	docket_buf b = DOCKET_BUF_INIT;
	const char *turn = NULL;
	size_t i, k;
	int error;

	if ((error = cli_table_new(&t, 4)) < 0)
		return error;
	cli_table_align_right(t, 1);
	for (i = 0; i < ctx->ncalls && error == 0; i++) {
		const call *c = &ctx->calls[i];
		const char *cturn = c->intent ? docket_json_str(c->intent, "turn") : NULL;
		const json_t *last_request = NULL;
		const json_t *ev;
		char *summary = NULL;
		call_facts f;

		call_analyse(c, &f);
		f.risk = call_risk(c, ctx->opened);
		if ((error = cli_table_span(t, NULL, "")) < 0)
			break;
		if (cturn && (!turn || strcmp(turn, cturn) != 0)) {
			docket_buf_clear(&b);
			if ((error = docket_buf_printf(&b, "turn %s", cturn)) < 0 ||
			    (error = cli_table_span(t, CLI_BOLD, b.ptr)) < 0)
				break;
		}
		turn = cturn;
		if ((error = cli_call_summary(&summary, f.tool,
					      c->intent ? json_object_get(c->intent, "args") : NULL,
					      CALL_SUMMARY_MAX)) < 0)
			break;
		docket_buf_clear(&b);
		error = docket_buf_printf(&b, "%s%s  %s%s%s", cturn ? "  " : "", c->invocation,
					  f.tool ? f.tool : "?", summary[0] ? ": " : "", summary);
		docket_free(summary);
		if (error < 0 || (error = cli_table_span(t, CLI_BOLD, b.ptr)) < 0)
			break;
		json_array_foreach(c->steps, k, ev) {
			const char *type = docket_json_str(ev, "type");
			const char *time = docket_json_str(ev, "time");
			const char *scolor = NULL;
			int64_t seq = 0;

			cli_jint(ev, "seq", &seq);
			docket_buf_clear(&b);
			if ((error = step_detail(&b, c, &f, ev, &last_request, &scolor)) < 0)
				break;
			if ((error = cli_table_cellf(t, "%s%s", cturn ? "      " : "    ",
						     time ? time : "-")) < 0 ||
			    (error = cli_table_cellf(t, "#%lld", (long long)seq)) < 0 ||
			    (error = cli_table_cell(t, step_name(type))) < 0 ||
			    (error = cli_table_cell_color(t, scolor, b.ptr)) < 0)
				break;
		}
		if (error == 0 && in_doubt_check(c, &f)) {
			docket_buf_clear(&b);
			if ((error = docket_buf_printf(&b, "%s(in doubt: %s)", cturn ? "      " : "    ",
						       in_doubt_check(c, &f))) == 0)
				error = cli_table_span(t, CLI_YELLOW, b.ptr);
		} else if (error == 0 && !c->completed)
			error = cli_table_span(t, CLI_YELLOW, cturn ? "      (no outcome yet)"
								   : "    (no outcome yet)");
	}
	if (error == 0 && json_array_size(ctx->other) > 0) {
		const json_t *ev;

		if ((error = cli_table_span(t, NULL, "")) == 0)
			error = cli_table_span(t, CLI_BOLD, "other events");
		json_array_foreach(ctx->other, k, ev) {
			int64_t seq = 0;
			const char *time = docket_json_str(ev, "time");
			const char *type = docket_json_str(ev, "type");

			if (error < 0)
				break;
			cli_jint(ev, "seq", &seq);
			if ((error = cli_table_cellf(t, "    %s", time ? time : "-")) < 0 ||
			    (error = cli_table_cellf(t, "#%lld", (long long)seq)) < 0 ||
			    (error = cli_table_cell(t, type ? type : "?")) < 0 ||
			    (error = cli_table_cell(t, docket_json_str(ev, "error") ? docket_json_str(ev, "error") : "")) < 0)
				break;
		}
	}
	if (error == 0)
		cli_table_print(t, out, color, 0);
	docket_buf_dispose(&b);
	cli_table_free(t);
	return error;
}

/* cli_show_session; `under` (or NULL): invocation -> its verdicts under a policy (show --policy). */
static int show_session(cli_event_read read, void *rctx, const char *session, int json, int color,
			const cli_origin *origin, const json_t *under)
{
	show_ctx ctx;
	json_t *j;
	size_t i;
	int rc, error;

	memset(&ctx, 0, sizeof(ctx));
	ctx.events = json_array();
	ctx.index = json_object();
	ctx.policies = json_array();
	ctx.other = json_array();
	ctx.incidents = json_array();
	if (!ctx.events || !ctx.index || !ctx.policies || !ctx.other || !ctx.incidents) {
		rc = cli_fail_oom();
		goto cleanup;
	}
	docket_error_clear();
	if ((error = read(rctx, collect, &ctx)) < 0) {
		rc = cli_fail(error, "cannot read the session");
		goto cleanup;
	}
	if ((error = group(&ctx)) < 0) {
		rc = cli_fail(error, "out of memory");
		goto cleanup;
	}
	for (i = 0; under && i < ctx.ncalls; i++)
		ctx.calls[i].under = json_object_get(under, ctx.calls[i].invocation);
	if (json) {
		j = show_json(&ctx, session);
		if (j && origin && (json_object_set_new(j, "ledger", json_string(origin->ledger)) < 0 ||
				    json_object_set_new(j, "host", json_string(origin->host)) < 0)) {
			json_decref(j);
			j = NULL;
		}
		if ((rc = cli_print_json(j)) != CLI_EXIT_OK)
			goto cleanup;
	} else {
		if (origin)
			printf("host %s, ledger %s\n", origin->host, origin->ledger);
		if ((error = show_header(&ctx, session, stdout, color)) < 0 ||
		    (error = show_timeline(&ctx, stdout, color)) < 0) {
			rc = cli_fail(error, "out of memory");
			goto cleanup;
		}
	}
	rc = CLI_EXIT_OK;

cleanup:
	for (i = 0; i < ctx.ncalls; i++)
		json_decref(ctx.calls[i].steps);
	docket_free(ctx.calls);
	json_decref(ctx.events);
	json_decref(ctx.index);
	json_decref(ctx.policies);
	json_decref(ctx.other);
	json_decref(ctx.incidents);
	return rc;
}

int cli_show_session(cli_event_read read, void *rctx, const char *session, int json, int color,
		     const cli_origin *origin)
{
	return show_session(read, rctx, session, json, color, origin, NULL);
}

/* ---- show --policy: both verdicts of every call under a policy ---------- */

typedef struct under_ctx {
	json_t *calls;       /* invocation -> verdicts */
	const char *policy;
} under_ctx;

static int under_add(void *vctx, const docket_replay_call *c)
{
	under_ctx *u = vctx;
	json_t *o = json_pack("{s:s, s:s, s:s, s:o, s:o}", "policy", u->policy,
			      "engine", docket_policy_verdict_name(c->now),
			      "enforced", docket_policy_verdict_name(c->enforced),
			      "enforced_reason", c->enforced_why ? json_string(c->enforced_why) : json_null(),
			      "deny_rule", c->deny_rule ? json_string(c->deny_rule) : json_null());

	if (!o || json_object_set_new(u->calls, c->invocation, o) < 0)
		return docket_error_set_oom();
	return 0;
}

/* Replay the session under `src` into u->calls; returns an exit code. */
static int under_policy(docket_ledger *ledger, const char *session, const char *src, under_ctx *u)
{
	docket_replay_options o = DOCKET_REPLAY_OPTIONS_INIT;
	docket_policy *p = NULL;
	int error;

	u->policy = src;
	if (!(u->calls = json_object()))
		return cli_fail_oom();
	if ((error = docket_replay_source_load(&p, src, NULL)) < 0)
		return cli_fail(error, "cannot load the policy");
	o.session = session;
	error = docket_replay_run(ledger, NULL, (const docket_policy *const *)&p, 1, &o, under_add, u);
	docket_policy_free(p);
	return error < 0 ? cli_fail(error, "cannot replay the session") : CLI_EXIT_OK;
}

typedef struct local_read {
	docket_ledger *ledger;
	const char *session;
} local_read;

static int read_local(void *vctx, docket_json_cb cb, void *ctx)
{
	local_read *r = vctx;
	docket_read_options ro = DOCKET_READ_OPTIONS_INIT;

	json_t *incidents = NULL, *ev;
	size_t i;
	int error;

	ro.session = r->session;
	if ((error = docket_ledger_read_json(r->ledger, &ro, cb, ctx)) < 0 ||
	    (error = docket_spool_incidents(r->ledger, r->session, &incidents)) < 0)
		return error;
	/* the session's incidents (in no session: ledger/spool.c indexes them) */
	json_array_foreach(incidents, i, ev) {
		json_int_t seq = json_integer_value(json_object_get(ev, "seq"));

		if ((error = cb(ctx, (uint64_t)seq, ev)) < 0)
			break;
	}
	json_decref(incidents);
	return error;
}

int cmd_show(const cli_command *cmd, const cli_global *g, int argc, char **argv)
{
	static const char description[] =
		"Shows one session: where and by which runtime it ran, its policy revisions,\n"
		"then every tool call as a timeline: intent (verdict and who decided),\n"
		"approval (who was asked, who answered, how long it waited), dispatch and\n"
		"outcome (status, exit code, how long it ran). Calls are grouped by turn.\n"
		"Each policy revision shows its mode (RISKY when it never asks or runs\n"
		"unsandboxed); an intent shows its rules, an escalation with its\n"
		"justification and its risk classes (docs/audit.md). An approval wait the\n"
		"source did not record, and a run ended by recovery, are labelled unknown.\n"
		"SESSION may be a unique prefix of the session id. With --policy SRC each\n"
		"intent also shows its verdict under SRC, replayed in the session's context:\n"
		"both the engine's and the enforced one (docket's hooks) when they differ.\n";
	const char *session = NULL, *policy = NULL;
	under_ctx u = { NULL, NULL };
	int json = 0;
	const cli_opt opts[] = {
		CLI_OPT_JSON(&json),
		{ CLI_OPT_STRING, "policy", 'p', &policy, "SRC", "also each call's verdicts under this policy", 0 },
		{ CLI_OPT_ARG, "SESSION", 0, &session, NULL, "the session to show", CLI_OPT_REQUIRED },
		{ CLI_OPT_END, NULL, 0, NULL, NULL, NULL, 0 }
	};
	docket_ledger *ledger = NULL;
	char *owned = NULL;
	local_read r;
	int rc;

	if ((rc = cli_parse(cmd, opts, description, argc, argv)) != CLI_PARSE_OK)
		return CLI_PARSE_EXIT(rc);
	if ((rc = cli_open_ledger(&ledger, g, CLI_OPEN_READ)) != CLI_EXIT_OK)
		return rc;
	if ((rc = cli_session_arg(ledger, &session, &owned)) == CLI_EXIT_OK) {
		r.ledger = ledger;
		r.session = session;
		if (!policy || (rc = under_policy(ledger, session, policy, &u)) == CLI_EXIT_OK)
			rc = show_session(read_local, &r, session, json, g->color_out, NULL, u.calls);
	}
	json_decref(u.calls);
	docket_free(owned);
	docket_ledger_free(ledger);
	return rc;
}
