/* SPDX-License-Identifier: Apache-2.0 */
/*
 * emit.c: the common emitter. Both importers describe what a transcript says
 * happened; this file turns it into events that obey the ledger's state
 * machine (docs/architecture.md), in record mode:
 *
 *   intent                  tool.intent, no decision (undecided)
 *   ran: ok/error/timeout   tool.dispatched (attempt 1) + tool.completed
 *   user denied             approval.requested + approval.settled denied +
 *                           tool.completed denied   (invariants 2, 3, 9)
 *                           -- when the session's policy never asks, no
 *                           approval can have been asked (invariant 2):
 *                           tool.completed denied only
 *   policy denied           tool.completed denied (no dispatch, invariant 9)
 *   cancelled               tool.completed cancelled (after a dispatch when
 *                           the call had started)
 *   no result               nothing: the call stays pending, so that a grown
 *                           file can still complete it
 *
 * A call gets at most one outcome (invariant 5): a second result for it is
 * counted as an orphan. Ids are checked here (1..256 bytes, no control
 * characters), so the ledger never refuses a batch for an id a transcript
 * got wrong: the line is counted as malformed instead.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "import_internal.h"
#include "ledger/event.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/error.h"

#define COUNT(c, field) do { if (!(c)->muted) (c)->stats->field++; } while (0)

void imp_ctx_init(imp_ctx *c, const char *file, docket_import_stats *stats,
		  docket_import_event_cb sink, void *sink_ctx)
{
	memset(c, 0, sizeof(*c));
	c->file = file;
	c->stats = stats;
	c->sink = sink;
	c->sink_ctx = sink_ctx;
}

void imp_ctx_dispose(imp_ctx *c)
{
	size_t i;

	for (i = 0; i < c->nsessions; i++) {
		docket_free(c->sessions[i].id);
		docket_free(c->sessions[i].policy);
	}
	for (i = 0; i < c->ncalls; i++) {
		docket_free(c->calls[i].id);
		docket_free(c->calls[i].prompt);
	}
	for (i = 0; i < c->nearly; i++) {
		docket_free(c->early[i].output);
		docket_free(c->early[i].error);
	}
	docket_free(c->early);
	imp_map_dispose(&c->early_ix);
	docket_free(c->sessions);
	docket_free(c->calls);
	imp_map_dispose(&c->session_ix);
	imp_map_dispose(&c->call_ix);
}

void imp_set_time(imp_ctx *c, const char *ts)
{
	size_t len = ts ? strlen(ts) : 0;

	c->time[0] = '\0';
	if (len > 0 && len < sizeof(c->time) && docket_time_valid(ts))
		memcpy(c->time, ts, len + 1);
}

void imp_problem(imp_ctx *c, int unknown, const char *fmt, ...)
{
	docket_import_stats *s = c->stats;
	va_list ap;
	int n;

	if (c->muted)
		return;
	if (unknown)
		s->unknown++;
	else
		s->malformed++;
	if (s->first_problem[0])
		return;
	n = snprintf(s->first_problem, sizeof(s->first_problem), "%s:%zu: ", c->file, c->line);
	if (n < 0 || (size_t)n >= sizeof(s->first_problem))
		return;
	va_start(ap, fmt);
	vsnprintf(s->first_problem + n, sizeof(s->first_problem) - (size_t)n, fmt, ap);
	va_end(ap);
}

/* The ledger's own rule (ledger/event.c): no control, line-separator or
 * bidi character, so an imported id cannot spoof `docket log`. */
int imp_id_ok(const char *s)
{
	size_t len = s ? strlen(s) : 0;

	return len > 0 && len <= IMP_ID_MAX && docket_id_unsafe_char(s, len) == (size_t)-1;
}

/*
 * A JSON string of at most IMP_OUTPUT_MAX bytes, cut at a character
 * boundary. Outputs come from strings jansson parsed (valid UTF-8, no NUL), so
 * the copy skips jansson's second validation pass: outputs are most of the
 * bytes an import moves.
 */
static json_t *text_value(const char *s, size_t len)
{
	if (len > IMP_OUTPUT_MAX) {
		len = IMP_OUTPUT_MAX;
		while (len > 0 && ((unsigned char)s[len] & 0xc0) == 0x80)
			len--;
	}
	return json_stringn_nocheck(s, len);
}

/* The skeleton every event shares: type, time, session, invocation, provenance. */
static json_t *ev_new(const imp_ctx *c, const char *type, const char *session,
		      const char *invocation)
{
	json_t *ev = json_object(), *prov = json_object();

	if (!ev || !prov ||
	    imp_set_str(ev, "type", type) < 0 ||
	    (c->time[0] && imp_set_str(ev, "time", c->time) < 0) ||
	    imp_set_str(ev, "session", session) < 0 ||
	    (invocation && imp_set_str(ev, "invocation", invocation) < 0) ||
	    imp_set_str(prov, "file", c->file) < 0 ||
	    imp_set(prov, "line", json_integer((json_int_t)c->line)) < 0)
		goto fail;
	if (imp_set(ev, "provenance", prov) < 0) {
		prov = NULL;
		goto fail;
	}
	return ev;
fail:
	json_decref(prov);
	json_decref(ev);
	return NULL;
}

/* Hand one event to the sink (or drop it on a muted line). Steals `ev`. */
static int emit(imp_ctx *c, json_t *ev)
{
	if (!ev)
		return docket_error_set_oom();
	if (c->muted) {
		json_decref(ev);
		return 0;
	}
	c->stats->events++;
	return c->sink(c->sink_ctx, ev);
}

static int apply_early(imp_ctx *c, const char *id);

int imp_session_find(imp_ctx *c, const char *id, size_t *out)
{
	return imp_map_get(&c->session_ix, id, out);
}

static int push_session(imp_ctx *c, const char *id, size_t *out)
{
	imp_session *s;
	int error;

	if (c->nsessions == c->capsessions) {
		size_t cap = c->capsessions ? c->capsessions * 2 : 4;

		if (!(s = docket_realloc(c->sessions, cap * sizeof(*s))))
			return docket_error_set_oom();
		c->sessions = s;
		c->capsessions = cap;
	}
	s = &c->sessions[c->nsessions];
	memset(s, 0, sizeof(*s));
	if (!(s->id = docket_strdup(id)))
		return docket_error_set_oom();
	if ((error = imp_map_put(&c->session_ix, id, c->nsessions)) < 0) {
		docket_free(s->id);
		return error;
	}
	*out = c->nsessions++;
	return 0;
}

int imp_session_open(imp_ctx *c, const char *id, json_t *fields, size_t *out)
{
	json_t *ev = NULL;
	const char *parent;
	int error;

	if (imp_session_find(c, id, out)) {
		json_decref(fields);
		return 0;
	}
	if (!imp_id_ok(id)) {
		json_decref(fields);
		imp_problem(c, 0, "session id is not a valid id (1..%d bytes, no control, line-separator or bidi characters)",
			    IMP_ID_MAX);
		return 1;
	}
	if ((error = push_session(c, id, out)) < 0) {
		json_decref(fields);
		return error;
	}
	if (!(ev = ev_new(c, "session.opened", id, NULL))) {
		json_decref(fields);
		return docket_error_set_oom();
	}
	if (fields) {
		/* neither client writes a session's end into its transcript: say so,
		 * so an open imported session reads "imported, no end recorded" */
		if (json_is_object(json_object_get(fields, "labels")) &&
		    imp_set_str(json_object_get(fields, "labels"), "import.end", "not recorded") < 0) {
			json_decref(fields);
			json_decref(ev);
			return docket_error_set_oom();
		}
		parent = imp_str(fields, "parent");
		if (parent && !imp_id_ok(parent))
			json_object_del(fields, "parent");
		error = json_object_update(ev, fields);
		json_decref(fields);
		if (error < 0) {
			json_decref(ev);
			return docket_error_set_oom();
		}
	}
	COUNT(c, sessions);
	return emit(c, ev);
}

static int dump_cb(const char *data, size_t size, void *ctx)
{
	return docket_buf_put(ctx, data, size) < 0 ? -1 : 0;
}

int imp_policy(imp_ctx *c, size_t session, const char *format, json_t *policy, int never_asks)
{
	imp_session *s = &c->sessions[session];
	docket_buf text = DOCKET_BUF_INIT;
	json_t *ev;

	if (!policy)
		return docket_error_set_oom();
	/* sorted keys: the same policy always compares equal */
	if (json_dump_callback(policy, dump_cb, &text, JSON_COMPACT | JSON_SORT_KEYS) < 0) {
		docket_buf_dispose(&text);
		json_decref(policy);
		return docket_error_set_oom();
	}
	if (s->policy && strcmp(s->policy, text.ptr) == 0) {
		docket_buf_dispose(&text);
		json_decref(policy);
		return 0;
	}
	docket_free(s->policy);
	s->policy = text.ptr;  /* the buffer's bytes, NUL-terminated, now owned here */
	s->revision++;
	s->never_asks = never_asks;
	if (!(ev = ev_new(c, "policy.revised", s->id, NULL)) ||
	    imp_set(ev, "revision", json_integer((json_int_t)s->revision)) < 0 ||
	    imp_set_str(ev, "format", format) < 0) {
		json_decref(ev);
		json_decref(policy);
		return docket_error_set_oom();
	}
	if (imp_set(ev, "policy", policy) < 0) {
		json_decref(ev);
		return docket_error_set_oom();
	}
	COUNT(c, policies);
	return emit(c, ev);
}

static int push_call(imp_ctx *c, size_t session, const char *id, const char *prompt)
{
	imp_call *k;
	int error;

	if (c->ncalls == c->capcalls) {
		size_t cap = c->capcalls ? c->capcalls * 2 : 64;

		if (!(k = docket_realloc(c->calls, cap * sizeof(*k))))
			return docket_error_set_oom();
		c->calls = k;
		c->capcalls = cap;
	}
	k = &c->calls[c->ncalls];
	memset(k, 0, sizeof(*k));
	k->session = session;
	k->state = IMP_CALL_OPEN;
	memcpy(k->time, c->time, sizeof(k->time));
	k->line = c->line;
	if (!(k->id = docket_strdup(id)) || (prompt && *prompt && !(k->prompt = docket_strdup(prompt)))) {
		docket_free(k->id);
		return docket_error_set_oom();
	}
	if ((error = imp_map_put(&c->call_ix, id, c->ncalls)) < 0) {
		docket_free(k->id);
		docket_free(k->prompt);
		return error;
	}
	c->ncalls++;
	return 0;
}

int imp_intent(imp_ctx *c, size_t session, const char *id, const char *tool, json_t *args,
	       const char *turn, const char *prompt)
{
	size_t existing;
	json_t *ev;
	int error;

	if (!args)
		return docket_error_set_oom();
	if (!imp_id_ok(id) || !tool || !*tool || strlen(tool) > IMP_ID_MAX) {
		json_decref(args);
		imp_problem(c, 0, "tool call without a valid call id or tool name");
		return 0;
	}
	if (imp_map_get(&c->call_ix, id, &existing)) {
		json_decref(args);
		imp_problem(c, 0, "call id %s used a second time", id);
		return 0;
	}
	if ((error = push_call(c, session, id, prompt)) < 0) {
		json_decref(args);
		return error;
	}
	if (!(ev = ev_new(c, "tool.intent", c->sessions[session].id, id)) ||
	    (turn && imp_id_ok(turn) && imp_set_str(ev, "turn", turn) < 0) ||
	    imp_set_str(ev, "tool", tool) < 0) {
		json_decref(ev);
		json_decref(args);
		return docket_error_set_oom();
	}
	if (imp_set(ev, "args", args) < 0) {
		json_decref(ev);
		return docket_error_set_oom();
	}
	COUNT(c, calls);
	if ((error = emit(c, ev)) < 0)
		return error;
	return apply_early(c, id);
}

static int emit_dispatch(imp_ctx *c, const imp_call *k)
{
	json_t *ev = ev_new(c, "tool.dispatched", c->sessions[k->session].id, k->id);

	/* attempt 1 makes a re-send idempotent; dispatched when the call was made */
	if (!ev || imp_set(ev, "attempt", json_integer(1)) < 0 ||
	    (k->time[0] && imp_set_str(ev, "time", k->time) < 0)) {
		json_decref(ev);
		return docket_error_set_oom();
	}
	return emit(c, ev);
}

static const char *status_of(const imp_outcome *o)
{
	switch (o->kind) {
	case IMP_OK: return "ok";
	case IMP_ERROR: return "error";
	case IMP_TIMEOUT: return "timeout";
	case IMP_CANCELLED: return "cancelled";
	case IMP_USER_DENIED:
	case IMP_POLICY_DENIED: return "denied";
	}
	return "error";
}

static int emit_completed(imp_ctx *c, const imp_call *k, const imp_outcome *o)
{
	json_t *ev = ev_new(c, "tool.completed", c->sessions[k->session].id, k->id);

	if (!ev || imp_set_str(ev, "status", status_of(o)) < 0 ||
	    (o->has_exit && imp_set(ev, "exit_code", json_integer(o->exit_code)) < 0) ||
	    (o->output && o->output_len > 0 &&
	     imp_set(ev, "output", text_value(o->output, o->output_len)) < 0) ||
	    (o->duration_ms >= 0 && imp_set(ev, "duration_ms", json_integer(o->duration_ms)) < 0) ||
	    imp_set_str(ev, "error", o->error) < 0) {
		json_decref(ev);
		return docket_error_set_oom();
	}
	return emit(c, ev);
}

/*
 * approval.requested. `shown` 1: the transcript shows the prompt on the
 * current line (its time is the question's). `shown` 0: the transcript only
 * shows the answer, so when the question was asked is unknown; the request
 * then carries no time of its own: it takes its intent's time and line
 * (the question cannot come before the call), which is how a reader tells
 * an unknown wait (docs/import.md, "When a question was asked").
 */
static int emit_request(imp_ctx *c, imp_call *k, int shown)
{
	char now[IMP_TIME_MAX];
	size_t line = c->line;
	json_t *ev;

	memcpy(now, c->time, sizeof(now));
	if (!shown) {
		memcpy(c->time, k->time, sizeof(c->time));
		c->line = k->line;
	}
	ev = ev_new(c, "approval.requested", c->sessions[k->session].id, k->id);
	memcpy(c->time, now, sizeof(now));
	c->line = line;

	if (!ev || imp_set_str(ev, "request", "r1") < 0 || imp_set_str(ev, "reviewer", "user") < 0 ||
	    imp_set_str(ev, "prompt", k->prompt) < 0) {
		json_decref(ev);
		return docket_error_set_oom();
	}
	k->asked = 1;
	COUNT(c, approvals);
	return emit(c, ev);
}

static int emit_settled(imp_ctx *c, const imp_call *k, const char *result, const char *actor)
{
	json_t *ev = ev_new(c, "approval.settled", c->sessions[k->session].id, k->id);

	if (!ev || imp_set_str(ev, "request", "r1") < 0 || imp_set_str(ev, "result", result) < 0 ||
	    imp_set_str(ev, "actor", actor) < 0) {
		json_decref(ev);
		return docket_error_set_oom();
	}
	return emit(c, ev);
}

int imp_approval_asked(imp_ctx *c, const char *id, const char *prompt)
{
	size_t i;
	imp_call *k;

	if (!id || !imp_map_get(&c->call_ix, id, &i))
		return 0;
	k = &c->calls[i];
	if (k->state != IMP_CALL_OPEN || k->asked || c->sessions[k->session].never_asks)
		return 0;
	if (prompt && *prompt && !k->prompt && !(k->prompt = docket_strdup(prompt)))
		return docket_error_set_oom();
	return emit_request(c, k, 1);
}

/* The answer to an open request, as the outcome implies it. */
static int settle_for(imp_ctx *c, imp_call *k, const imp_outcome *o)
{
	switch (o->kind) {
	case IMP_OK:
	case IMP_ERROR:
	case IMP_TIMEOUT:
		return emit_settled(c, k, "approved", "user");
	case IMP_USER_DENIED:
		return emit_settled(c, k, "denied", "user");
	case IMP_POLICY_DENIED:
		return emit_settled(c, k, "denied", NULL);
	case IMP_CANCELLED:
		return emit_settled(c, k, "aborted", NULL);
	}
	return 0;
}

static void count_outcome(imp_ctx *c, const imp_outcome *o)
{
	COUNT(c, results);
	switch (o->kind) {
	case IMP_OK: COUNT(c, ok); break;
	case IMP_ERROR:
	case IMP_TIMEOUT: COUNT(c, errors); break;
	case IMP_USER_DENIED:
	case IMP_POLICY_DENIED: COUNT(c, denials); break;
	case IMP_CANCELLED: COUNT(c, cancelled); break;
	}
}

/* Keep a result whose call has not been seen yet. */
static int keep_early(imp_ctx *c, const char *id, const imp_outcome *o)
{
	imp_early *e;
	size_t i;
	int error;

	if (imp_map_get(&c->early_ix, id, &i)) {
		COUNT(c, orphans);  /* a second early result for the same id */
		return 0;
	}
	if (c->nearly == c->capearly) {
		size_t cap = c->capearly ? c->capearly * 2 : 16;

		if (!(e = docket_realloc(c->early, cap * sizeof(*e))))
			return docket_error_set_oom();
		c->early = e;
		c->capearly = cap;
	}
	e = &c->early[c->nearly];
	memset(e, 0, sizeof(*e));
	e->o = *o;
	e->muted = c->muted;
	memcpy(e->time, c->time, sizeof(e->time));
	if ((o->output && !(e->output = docket_strndup(o->output, o->output_len))) ||
	    (o->error && !(e->error = docket_strdup(o->error)))) {
		docket_free(e->output);
		return docket_error_set_oom();
	}
	e->o.output = e->output;
	e->o.error = e->error;
	if ((error = imp_map_put(&c->early_ix, id, c->nearly)) < 0) {
		docket_free(e->output);
		docket_free(e->error);
		return error;
	}
	c->nearly++;
	return 0;
}

/* The call `id` was just announced: a result that came first applies now. */
static int apply_early(imp_ctx *c, const char *id)
{
	char now[IMP_TIME_MAX];
	imp_early *e;
	size_t i;
	int error;

	if (!imp_map_get(&c->early_ix, id, &i) || c->early[i].used)
		return 0;
	e = &c->early[i];
	e->used = 1;
	memcpy(now, c->time, sizeof(now));
	if (e->time[0])
		memcpy(c->time, e->time, sizeof(c->time));
	error = imp_outcome_of(c, id, &e->o);
	memcpy(c->time, now, sizeof(now));
	return error;
}

void imp_finish(imp_ctx *c)
{
	size_t i;

	for (i = 0; i < c->nearly; i++)
		if (!c->early[i].used && !c->early[i].muted)
			c->stats->orphans++;
}

int imp_outcome_of(imp_ctx *c, const char *id, const imp_outcome *o)
{
	imp_outcome out = *o;
	size_t i;
	imp_call *k;
	int error = 0, ran;

	if (id && imp_id_ok(id) && !imp_map_get(&c->call_ix, id, &i))
		return keep_early(c, id, o);
	if (!id || !imp_map_get(&c->call_ix, id, &i) || c->calls[i].state != IMP_CALL_OPEN) {
		COUNT(c, orphans);
		return 0;
	}
	k = &c->calls[i];
	k->state = IMP_CALL_DONE;
	count_outcome(c, o);
	if (o->kind == IMP_USER_DENIED && !k->asked) {
		if (c->sessions[k->session].never_asks) {
			/* invariant 2: a policy that never asks asked nothing */
			if (!out.error)
				out.error = "rejected by the user";
		} else if ((error = emit_request(c, k, 0)) < 0) {
			return error;
		}
	}
	if (k->asked && (error = settle_for(c, k, o)) < 0)
		return error;
	ran = o->kind == IMP_OK || o->kind == IMP_ERROR || o->kind == IMP_TIMEOUT ||
	      (o->kind == IMP_CANCELLED && o->ran && !k->asked);
	if (ran && (error = emit_dispatch(c, k)) < 0)
		return error;
	return emit_completed(c, k, &out);
}

int imp_cancel_open(imp_ctx *c, size_t session, const char *why)
{
	imp_outcome o = IMP_OUTCOME_INIT(IMP_CANCELLED);
	size_t i;
	int error;

	o.error = why;
	for (i = 0; i < c->ncalls; i++) {
		if (c->calls[i].session != session || c->calls[i].state != IMP_CALL_OPEN)
			continue;
		if ((error = imp_outcome_of(c, c->calls[i].id, &o)) < 0)
			return error;
	}
	return 0;
}
