/* SPDX-License-Identifier: Apache-2.0 */
/*
 * replay.c: one pass over a ledger, re-evaluating every recorded tool.intent.
 *
 * For each intent, in seq order:
 *   1. the time and session filters select it (other events are still
 *      read: they build the contexts and grants);
 *   2. the baseline is the policy `base` when given, else the intent's
 *      recorded decision, else the verdict the history implies (DESIGN §3,
 *      read from the invocation record, which holds the whole history of the
 *      call: an approval request means approval_required, a dispatch without
 *      one allowed, a denied outcome without one denied), else none
 *      (undecided, reported apart);
 *   3. the call is evaluated under every policy with its session's context
 *      and, unless approvals are `none`, the grants recorded before it;
 *   4. it is classified by strictness (format.c) and handed to the callback.
 *
 * State: one entry per open session (sessions.c) and a bounded cache of
 * evaluations (memo.c); nothing grows with the number of events.
 *
 * On two threads (parallel.c) the reader follows the sessions too, with a
 * `follower` of its own fed the same events in the same order by the same
 * functions, and evaluates calls ahead of the evaluating thread while that
 * thread has batches waiting (`ahead`). Evaluation is pure (DESIGN §7): the
 * same policy, context and call give the same eval_out on either thread, so
 * the output is the one-thread run's byte for byte. Invariant: the reader's
 * sessions are the evaluating thread's as of the same event; where the
 * reader cannot follow (an approval whose intent it could not read, an
 * error), it stops evaluating for the rest of the run, and the evaluating
 * thread evaluates what it was not given.
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "replay_internal.h"
#include "policy/policy.h"
#include "util/alloc.h"
#include "util/error.h"
#include "util/json.h"

#define PARALLEL_MIN_EVENTS 65536
#define ARGS_ARENA (64u << 10)  /* one call's parsed args; bigger ones spill to the heap */
/* The most policies (with the base) the reader evaluates ahead: their
 * results ride with each call in the batches (~232 bytes a policy), at most
 * 34 batches of 256 calls in flight: ~32 MB. A longer --policy-history is
 * evaluated on the evaluating thread alone, as before. */
#define AHEAD_MAX_POLICIES 16

#define PB_VERDICT(v) ((docket_verdict)((v) - 1))  /* docket.v1.Verdict -> docket_verdict */

/* What one thread needs to evaluate calls in seq order: the sessions'
 * contexts and grants, a memo, a result and a JSON parser. */
typedef struct follower {
	rsessions sessions;
	memo *memo;
	docket_policy_result *res;
	docket_json_tape *tape;
	int lost;                         /* the reader's: it could not follow; it stopped evaluating */
	long events, lose_at;             /* the reader's: events followed; tests: lost at event N */
} follower;

typedef struct replay {
	docket_ledger *l;                 /* NULL: events come from `in` */
	const docket_replay_input *in;
	const docket_policy *base;
	const docket_policy *const *policies;
	size_t n;
	const docket_replay_options *o;
	docket_replay_cb cb;
	void *ctx;
	follower f;                       /* the evaluating thread's */
	follower *ahead;                  /* the reader thread's (parallel.c), or NULL */
	docket_buf scratch, target;
	ledger_reader at;                 /* scan_event_at's: the intents approvals name are recent */
	ledger_reader *cur;               /* the scan's, holding the event being handled (or NULL) */
	docket_arena args_arena;          /* each call's args are parsed in here (jansson) */
	eval_out *outs;
} replay;

const char *docket_replay_class_name(docket_replay_class c)
{
	static const char *const names[] = { "unchanged", "tightened", "loosened", "undecided" };

	return (unsigned)c < 4 ? names[c] : "unknown";
}

const char *docket_replay_baseline_name(docket_replay_baseline b)
{
	static const char *const names[] = { "none", "recorded", "inferred", "policy" };

	return (unsigned)b < 4 ? names[b] : "unknown";
}

/* ---- evaluating ---- */

/*
 * One intent being replayed. The memo key is hashed once; the call is parsed
 * and canonicalised (docket_policy_call) at most once, on the first memo
 * miss, however many policies evaluate it, and only then.
 */
typedef struct icall {
	const docket_event *ev;
	memo_call key;
	docket_jv_doc args;         /* parsed with the call, kept for the target (ops: parsed) */
	docket_policy_call *call;
	const char *target;         /* the reader thread's (parallel.c), or NULL */
	const eval_out *outs;       /* evaluated ahead by the reader thread (policy i: outs[i]), or NULL */
} icall;

/* `pre`: what the reader thread prepared (its call is taken), or NULL. */
static void intent_init(icall *in, const docket_event *ev, par_prep *pre)
{
	in->ev = ev;
	memset(&in->args, 0, sizeof(in->args));
	in->call = pre ? pre->call : NULL;
	in->target = pre ? pre->target : NULL;
	in->outs = pre ? pre->outs : NULL;
	if (pre)
		pre->call = NULL;
	memo_call_init(&in->key, ev->tool_intent->tool, ev->tool_intent->args_json);
}

int replay_args_parse(docket_jv_doc *out, docket_json_tape *tape, const docket_event *ev)
{
	const char *text = ev->tool_intent->args_json;
	int error;

	docket_alloc_json_arena_arm(1);
	error = docket_jv_parse(out, tape, text, strlen(text));
	docket_alloc_json_arena_arm(0);
	return error;
}

static void intent_dispose(icall *in)
{
	docket_policy_call_free(in->call);
	docket_jv_doc_dispose(&in->args);
	in->call = NULL;
}

static int intent_call(icall *in, docket_json_tape *tape)
{
	const Docket__V1__ToolIntent *ti = in->ev->tool_intent;
	int error;

	if (in->call)
		return 0;
	/* freed by intent_dispose, on this thread, before the next call */
	if ((error = replay_args_parse(&in->args, tape, in->ev)) < 0)
		/* stored arguments were JSON when appended: the file is damaged */
		return error == DOCKET_EINVALID
			? docket_error_set(DOCKET_ECORRUPT, "its stored arguments do not parse: the data file "
					   "is damaged; `docket verify` checks it")
			: error;
	return docket_policy_call_from_jv(&in->call, ti->tool, in->args.ops, in->args.root);
}

/*
 * The enforced verdict of the call docket_policy_eval just judged into res,
 * and the deny rule behind it (a finding no engine gives: a call that ran
 * although a deny rule names it).
 */
static int enforced_of(docket_policy_result *res, const docket_policy *p, const docket_policy_call *call,
		       const docket_policy_context *ctx, eval_out *out)
{
	int error;

	out->ewhy[0] = '\0';
	out->deny_rule = NULL;
	out->deny_line = 0;
	if ((error = pol_enforce(res, p, call, ctx)) < 0)
		return error;
	out->enforced = docket_policy_result_verdict(res);
	if (out->enforced != out->verdict && docket_policy_result_reason_count(res) > 0)
		snprintf(out->ewhy, sizeof(out->ewhy), "%s", docket_policy_result_reason_text(res, 0));
	if (out->enforced == DOCKET_VERDICT_DENIED)
		out->deny_rule = docket_policy_result_deciding_rule(res, &out->deny_line);
	return 0;
}

static int eval_fresh(follower *f, const docket_policy *p, rsession *s, icall *in, eval_out *out)
{
	const docket_policy_context *ctx = NULL;
	const char *code;
	size_t n;
	int error;

	if ((error = intent_call(in, f->tape)) < 0 ||
	    (error = rsession_context(&ctx, s, docket_policy_get_format(p) == DOCKET_POLICY_CODEX)) < 0 ||
	    (error = docket_policy_eval(f->res, p, in->call, ctx)) < 0)
		return error;
	out->verdict = docket_policy_result_verdict(f->res);
	out->rule = docket_policy_result_deciding_rule(f->res, &out->rule_line);
	/* reasons come in the order the evaluator applied its steps (rules,
	 * heuristics, grants, approval mode, platform): the last one decided */
	n = docket_policy_result_reason_count(f->res);
	code = n ? docket_policy_result_reason_code(f->res, n - 1) : NULL;
	n = code ? strnlen(code, sizeof(out->reason) - 1) : 0;
	memcpy(out->reason, code ? code : "", n);
	out->reason[n] = '\0';
	return enforced_of(f->res, p, in->call, ctx, out);
}

/* Evaluate the intent under policy number `pi` (r->n: the base policy)
 * with the sessions and memo of `f`. */
static int eval_with(replay *r, follower *f, size_t pi, rsession *s, icall *in, eval_out *out)
{
	const docket_policy *p = pi == r->n ? r->base : r->policies[pi];
	const eval_out *hit = in->outs ? &in->outs[pi] : memo_get(f->memo, &in->key, s->ctx_id, (uint32_t)pi);
	int error;

	if (hit) {
		*out = *hit;
		return 0;
	}
	if ((error = eval_fresh(f, p, s, in, out)) < 0) {
		docket_error_prefix("session %s, invocation %s: ", in->ev->session, in->ev->invocation);
		/* the call came from the ledger, not the command line: one docket
		 * cannot read is a data error (exit 3), never a usage error */
		if (error == DOCKET_EINVALID) {
			char msg[sizeof(docket_error_last()->message)];

			memcpy(msg, docket_error_last()->message, sizeof(msg));
			error = docket_error_set(DOCKET_ECORRUPT, "%s", msg);
		}
		return error;
	}
	return memo_put(f->memo, &in->key, s->ctx_id, (uint32_t)pi, out);
}

/* The same on the evaluating thread. */
static int eval_call(replay *r, size_t pi, rsession *s, icall *in, eval_out *out)
{
	return eval_with(r, &r->f, pi, s, in, out);
}

/* ---- assumptions ---- */

int docket_replay_sandbox_valid(const char *mode)
{
	static const char *const modes[] = { "read_only", "workspace_write", "full_access", "none" };

	for (size_t i = 0; mode && i < sizeof(modes) / sizeof(modes[0]); i++)
		if (strcmp(mode, modes[i]) == 0)
			return 1;
	return 0;
}

/* What the session's runtime had and what the last policy assumed. */
static void assumptions(const replay *r, const rsession *s, docket_replay_call *c)
{
	const docket_policy *p = r->policies[r->n - 1];
	const char *assume = r->o->version >= 3 ? r->o->assume_sandbox : NULL;

	c->runtime = json_string_value(json_object_get(s->context, "runtime"));
	c->sandbox_recorded = rsession_recorded_sandbox(s);
	if (assume) {
		c->sandbox_assumed = assume;
		c->sandbox_from = "assumed";
	} else {
		c->sandbox_assumed = rsession_assumed_sandbox(s, (int)docket_policy_get_format(p), p->sandbox,
							      &c->sandbox_from);
	}
	c->live_settings = s->live_settings;
	c->imported = s->imported;
}

/* ---- baseline ---- */

typedef struct inv_lookup {
	int done;
	inv_state st;
} inv_lookup;

static int named(const char *name, const char *(*namer)(int), int max)
{
	for (int v = 1; name && v <= max; v++)
		if (namer(v) && strcmp(namer(v), name) == 0)
			return v;
	return 0;
}

static const char *verdict_namer(int v)
{
	return docket_verdict_name((Docket__V1__Verdict)v);
}

static const char *result_namer(int v)
{
	return docket_approval_result_name((Docket__V1__ApprovalResult)v);
}

/* The invocation record's facts, as the input says them. */
static void inv_from_input(inv_state *st, const docket_replay_input *in)
{
	memset(st, 0, sizeof(*st));
	st->requests = in->requests;
	st->verdict = named(in->implied, verdict_namer, 8);
	st->last_result = named(in->last_result, result_namer, 16);
}

static int inv_get(replay *r, MDB_txn *txn, const docket_event *ev, inv_lookup *inv)
{
	int error = 0;

	if (!r->l) {
		inv_from_input(&inv->st, r->in);
		inv->done = 1;
		return 0;
	}
	if (!inv->done && (error = scan_invocation(&inv->st, r->l, txn, ev->session, ev->invocation,
						   &r->scratch)) == 0)
		inv->done = 1;
	return error;
}

/* The verdict the history implies for an intent recorded without one. */
static docket_replay_baseline inferred(const inv_state *st, docket_verdict *was)
{
	if (st->requests > 0) {
		*was = DOCKET_VERDICT_APPROVAL_REQUIRED;
		return DOCKET_REPLAY_BASE_INFERRED;
	}
	if (st->verdict != DOCKET__V1__VERDICT__VERDICT_UNSPECIFIED) {
		*was = PB_VERDICT(st->verdict);
		return DOCKET_REPLAY_BASE_INFERRED;
	}
	return DOCKET_REPLAY_BASE_NONE;
}

static int baseline(replay *r, MDB_txn *txn, rsession *s, icall *in, inv_lookup *inv,
		    docket_replay_call *c)
{
	const docket_event *ev = in->ev;
	const Docket__V1__Decision *d = ev->tool_intent->decision;
	eval_out base;
	int error;

	if (r->base) {
		if ((error = eval_call(r, r->n, s, in, &base)) < 0)
			return error;
		c->was = base.verdict;
		c->baseline = DOCKET_REPLAY_BASE_POLICY;
	} else if (d && d->verdict != DOCKET__V1__VERDICT__VERDICT_UNSPECIFIED) {
		c->was = PB_VERDICT(d->verdict);
		c->baseline = DOCKET_REPLAY_BASE_RECORDED;
	} else {
		if ((error = inv_get(r, txn, ev, inv)) < 0)
			return error;
		c->baseline = inferred(&inv->st, &c->was);
	}
	return 0;
}

/* The call was dispatched, or its outcome says it ran. */
static int ran(const inv_state *st)
{
	return st->dispatch_seq != 0 ||
	       (st->outcome_seq != 0 && st->status != DOCKET__V1__OUTCOME_STATUS__OUTCOME_STATUS_DENIED &&
		st->status != DOCKET__V1__OUTCOME_STATUS__OUTCOME_STATUS_UNSUPPORTED &&
		st->status != DOCKET__V1__OUTCOME_STATUS__OUTCOME_STATUS_UNSPECIFIED);
}

static int human_denied(const inv_state *st)
{
	return st->last_result == DOCKET__V1__APPROVAL_RESULT__APPROVAL_RESULT_DENIED ||
	       st->last_result == DOCKET__V1__APPROVAL_RESULT__APPROVAL_RESULT_ABORTED;
}

/* ---- events ---- */

static int selected(const replay *r, const docket_event *ev)
{
	int64_t t;

	if (!r->o->has_since && !r->o->has_until)
		return 1;
	if (replay_time_ms(ev->time, &t) < 0)
		return 0;
	return (!r->o->has_since || t >= r->o->since_ms) && (!r->o->has_until || t < r->o->until_ms);
}

/* The first policy whose verdict departs from the baseline. */
static size_t first_change(const replay *r, const docket_replay_call *c)
{
	if (r->n < 2 || c->cls == DOCKET_REPLAY_UNCHANGED || c->cls == DOCKET_REPLAY_UNDECIDED)
		return SIZE_MAX;
	for (size_t i = 0; i < r->n; i++)
		if (replay_classify(c->was, r->outs[i].verdict) != DOCKET_REPLAY_UNCHANGED)
			return i;
	return SIZE_MAX;
}

/* Baseline, evaluations and classification of a selected intent into `c`. */
static int replay_intent(replay *r, MDB_txn *txn, rsession *s, icall *in, docket_replay_call *c)
{
	const docket_event *ev = in->ev;
	inv_lookup inv = { 0 };
	const eval_out *now;
	int error;

	if ((error = baseline(r, txn, s, in, &inv, c)) < 0)
		return error;
	for (size_t i = 0; i < r->n; i++)
		if ((error = eval_call(r, i, s, in, &r->outs[i])) < 0)
			return error;
	now = &r->outs[r->n - 1];
	c->now = now->verdict;
	c->cls = c->baseline == DOCKET_REPLAY_BASE_NONE ? DOCKET_REPLAY_UNDECIDED : replay_classify(c->was, c->now);
	if (c->cls == DOCKET_REPLAY_LOOSENED) {
		if ((error = inv_get(r, txn, ev, &inv)) < 0)
			return error;
		c->human_denied = human_denied(&inv.st);
	}
	c->session = ev->session;
	c->invocation = ev->invocation;
	c->time = ev->time;
	c->tool = ev->tool_intent->tool;
	c->args_json = ev->tool_intent->args_json;
	c->rule = now->rule;
	c->rule_line = now->rule_line;
	c->reason = now->reason;
	c->enforced = now->enforced;
	c->enforced_why = now->ewhy[0] ? now->ewhy : NULL;
	c->deny_rule = now->deny_rule;
	c->deny_line = now->deny_line;
	if (c->deny_rule) {
		/* did it run? (a local ledger's invocation record; a fleet replay cannot tell) */
		if (r->l && (error = inv_get(r, txn, ev, &inv)) < 0)
			return error;
		c->ran = r->l ? ran(&inv.st) : -1;
	}
	c->changed_at = first_change(r, c);
	assumptions(r, s, c);
	/* a kept call shows its target: from the args parsed to evaluate it
	 * or the reader thread's (a memo hit parsed nothing: the report
	 * derives it) */
	if (c->cls != DOCKET_REPLAY_UNCHANGED && in->args.ops) {
		if ((error = replay_target_jv(&r->target, in->args.ops, in->args.root)) < 0)
			return error;
		c->target = r->target.ptr ? r->target.ptr : "";
	} else if (c->cls != DOCKET_REPLAY_UNCHANGED) {
		c->target = in->target;
	}
	return 0;
}

/* The session a selected intent is evaluated in (opened without a context
 * when the ledger holds none); NULL when the filters leave it out. */
static int intent_session(const replay *r, follower *f, const docket_event *ev, rsession **out)
{
	if (!selected(r, ev)) {
		*out = NULL;
		return 0;
	}
	if ((*out = rsessions_get(&f->sessions, ev->session)))
		return 0;
	return rsessions_open(out, &f->sessions, ev->session, NULL);
}

static int on_intent(replay *r, MDB_txn *txn, uint64_t seq, const docket_event *ev, par_prep *pre)
{
	docket_replay_call c = { 0 };
	rsession *s;
	icall in;
	int error;

	intent_init(&in, ev, pre);
	if ((error = intent_session(r, &r->f, ev, &s)) < 0 || !s)
		goto cleanup;
	c.seq = seq;
	if ((error = replay_intent(r, txn, s, &in, &c)) == 0)
		error = r->cb(r->ctx, &c);
cleanup:
	intent_dispose(&in);
	/* everything parsed in the args arena is gone: it starts over */
	assert(r->args_arena.live == 0 && r->args_arena.used == 0);
	return error;
}

/* Does approval.settled `ev` grant its session (*s) what its intent asked? */
static int grants(const replay *r, follower *f, const docket_event *ev, rsession **s)
{
	*s = rsessions_get(&f->sessions, ev->session);
	return *s && r->o->approvals != DOCKET_REPLAY_APPROVALS_NONE &&
	       ev->approval_settled->result == DOCKET__V1__APPROVAL_RESULT__APPROVAL_RESULT_APPROVED_FOR_SESSION;
}

/* The grant of `intent` (the event the answer names) to session `s`. */
static int grant(follower *f, rsession *s, const docket_event *intent)
{
	return intent->body_case == DOCKET__V1__EVENT__BODY_TOOL_INTENT ? rsession_grant(&f->sessions, s, intent) : 0;
}

/* An approved_for_session answer: the session is granted what the call
 * asked. `pre`: the intent the reader thread read, or NULL. */
static int on_settled(replay *r, MDB_txn *txn, const docket_event *ev, const par_prep *pre)
{
	docket_event *intent = NULL;
	inv_lookup inv = { 0 };
	rsession *s;
	int error;

	if (!grants(r, &r->f, ev, &s))
		return 0;
	if (pre && pre->intent)
		return grant(&r->f, s, pre->intent);
	if (!r->l)
		error = r->in->intent ? event_unpack(&intent, r->in->intent, r->in->intent_len) : 0;
	else if ((error = inv_get(r, txn, ev, &inv)) == 0)
		error = scan_event_at(&intent, r->cur, &r->at, txn, inv.st.intent_seq);
	if (error < 0 || !intent)
		return error;
	error = grant(&r->f, s, intent);
	docket_event_free(intent);
	return error;
}

/* A session opened, closed or given a policy revision: `f` follows it. */
static int follow(follower *f, const docket_event *ev)
{
	rsession *s;

	switch (ev->body_case) {
	case DOCKET__V1__EVENT__BODY_SESSION_OPENED:
		return rsessions_open(&s, &f->sessions, ev->session, ev);
	case DOCKET__V1__EVENT__BODY_SESSION_CLOSED:
		rsessions_close(&f->sessions, ev->session);
		return 0;
	case DOCKET__V1__EVENT__BODY_POLICY_REVISED:
		s = rsessions_get(&f->sessions, ev->session);
		return s ? rsession_policy(&f->sessions, s, ev) : 0;
	default:
		return 0;
	}
}

/* One event; `pre`: what the reader thread prepared, or NULL. */
static int on_event_pre(void *ctx, MDB_txn *txn, uint64_t seq, const docket_event *ev, par_prep *pre)
{
	replay *r = ctx;

	switch (ev->body_case) {
	case DOCKET__V1__EVENT__BODY_TOOL_INTENT:
		return on_intent(r, txn, seq, ev, pre);
	case DOCKET__V1__EVENT__BODY_APPROVAL_SETTLED:
		return on_settled(r, txn, ev, pre);
	default:
		return follow(&r->f, ev);
	}
}

/* ---- ahead: the reader thread's part (parallel.c) ---- */

/*
 * The evaluations of the intent's call under every policy (and the base),
 * into `arena` for the evaluating thread. An evaluation that fails is left
 * to that thread, which reports it; the sessions stay followed.
 */
static int ahead_intent(replay *r, follower *f, const docket_event *ev, par_prep *pre, int busy,
			docket_arena *arena)
{
	rsession *s;
	eval_out *outs;
	icall in;
	int error;

	if ((error = intent_session(r, f, ev, &s)) < 0 || !s || !busy || !pre->call)
		return error;
	if (!(outs = docket_arena_alloc(arena, (r->n + 1) * sizeof(*outs))))
		goto skip;
	intent_init(&in, ev, NULL);
	in.call = pre->call;   /* borrowed: the evaluating thread takes it */
	for (size_t i = 0; i < r->n && error == 0; i++)
		error = eval_with(r, f, i, s, &in, &outs[i]);
	if (error == 0 && r->base)
		error = eval_with(r, f, r->n, s, &in, &outs[r->n]);
	if (error == 0) {
		pre->outs = outs;
		return 0;
	}
	docket_arena_free(arena, outs);
skip:
	docket_error_clear();
	return 0;
}

/* parallel.c's `ahead`: follow the event; evaluate a call while `busy`.
 * What the reader cannot follow ends its evaluations (invariant above). */
static void ahead(void *ctx, const docket_event *ev, par_prep *pre, int busy, docket_arena *arena)
{
	replay *r = ctx;
	follower *f = r->ahead;
	rsession *s;
	int error;

	if (f->lost)
		return;
	if (++f->events == f->lose_at) {
		f->lost = 1;   /* DOCKET_REPLAY_AHEAD=all,lose@N: as if it could not follow */
		return;
	}
	switch (ev->body_case) {
	case DOCKET__V1__EVENT__BODY_TOOL_INTENT:
		error = ahead_intent(r, f, ev, pre, busy, arena);
		break;
	case DOCKET__V1__EVENT__BODY_APPROVAL_SETTLED:
		error = !grants(r, f, ev, &s) ? 0 : pre->intent ? grant(f, s, pre->intent) : 1;
		break;
	default:
		error = follow(f, ev);
		break;
	}
	if (error != 0) {
		f->lost = 1;
		docket_error_clear();
	}
}

static int on_event(void *ctx, MDB_txn *txn, ledger_reader *cur, uint64_t seq, docket_event *ev)
{
	replay *r = ctx;
	int error;

	r->cur = cur;
	error = on_event_pre(ctx, txn, seq, ev, NULL);
	r->cur = NULL;
	return error;
}

/*
 * Threads for a ledger replay: opts->threads, or (0) two for a ledger of at
 * least PARALLEL_MIN_EVENTS events when a second core is free: two cores or
 * more and a 1-minute load average that leaves one idle. Two threads use
 * up to ~10% more CPU than one (the handoff, each thread's caches), which
 * pays only when it buys wall time (docs/replay.md gives the figures). Two
 * is the most parallel.c uses; the output is the same either way.
 */
static int threads_for(docket_ledger *l, const docket_replay_options *o)
{
	docket_ledger_info info;
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	double load[1];

	if (o->version >= 2 && o->threads > 0)
		return o->threads;
	if (cores < 2 || docket_ledger_info_get(l, &info) < 0 || info.events < PARALLEL_MIN_EVENTS)
		return 1;
	return getloadavg(load, 1) == 1 && load[0] + 1.0 <= (double)cores ? 2 : 1;
}

static int follower_init(follower *f, const docket_replay_options *o)
{
	memset(f, 0, sizeof(*f));
	/* "none": no sandbox, which the policy engine calls full access */
	if (o->version >= 3 && o->assume_sandbox)
		f->sessions.assume = strcmp(o->assume_sandbox, "none") == 0 ? "full_access" : o->assume_sandbox;
	if (memo_new(&f->memo) < 0 || docket_policy_result_new(&f->res) < 0 || !(f->tape = docket_json_tape_new()))
		return docket_error_set_oom();
	return 0;
}

static void follower_dispose(follower *f)
{
	docket_json_tape_free(f->tape);
	rsessions_dispose(&f->sessions);
	memo_free(f->memo);
	docket_policy_result_free(f->res);
}

/*
 * Two threads: the reader follows the sessions and evaluates ahead. Tests:
 * DOCKET_REPLAY_AHEAD=all makes it prepare and evaluate every call whether
 * or not the evaluating thread waits; "all,lose@N" also makes it stop
 * following at its Nth event.
 */
static int run_parallel(replay *r, docket_ledger *l, const docket_replay_options *o)
{
	const char *knob = getenv("DOCKET_REPLAY_AHEAD");
	const char *lose = knob ? strstr(knob, "lose@") : NULL;
	int all = knob && strncmp(knob, "all", 3) == 0;
	follower f;
	int error;

	if (r->n + (r->base != NULL) > AHEAD_MAX_POLICIES)
		return par_scan(l, o->session, on_event_pre, NULL, all, r);
	if ((error = follower_init(&f, o)) == 0) {
		f.lose_at = lose ? strtol(lose + 5, NULL, 10) : 0;
		r->ahead = &f;
		error = par_scan(l, o->session, on_event_pre, ahead, all, r);
		r->ahead = NULL;
	}
	follower_dispose(&f);
	return error;
}

static int no_session(void *ctx, const docket_session_info *info)
{
	(void)ctx;
	(void)info;
	return 0;
}

/* The events of an input source, through the same handler. */
static int scan_input(replay *r, docket_replay_next next, void *next_ctx)
{
	docket_replay_input in;
	docket_event *ev = NULL;
	int error;

	for (;;) {
		memset(&in, 0, sizeof(in));
		if ((error = next(next_ctx, &in)) != 0)
			return error > 0 ? 0 : error;
		if ((error = event_unpack(&ev, in.payload, in.len)) < 0) {
			docket_error_prefix("seq %llu: ", (unsigned long long)in.seq);
			return error;
		}
		r->in = &in;
		error = on_event_pre(r, NULL, in.seq, ev, NULL);
		r->in = NULL;
		docket_event_free(ev);
		if (error != 0)
			return error > 0 ? 0 : error;
	}
}

static int run(docket_ledger *l, docket_replay_next next, void *next_ctx, const docket_policy *base,
	       const docket_policy *const *policies, size_t n, const docket_replay_options *opts,
	       docket_replay_cb cb, void *ctx)
{
	docket_replay_options defaults = DOCKET_REPLAY_OPTIONS_INIT;
	replay r = { 0 };
	int error;

	if (!opts)
		opts = &defaults;
	if (n == 0 || !policies)
		return docket_error_set(DOCKET_EINVALID, "replay needs at least one policy");
	if (opts->version >= 3 && opts->assume_sandbox && !docket_replay_sandbox_valid(opts->assume_sandbox))
		return docket_error_set(DOCKET_EINVALID, "unknown sandbox \"%s\" (read_only, workspace_write, "
					"full_access or none)", opts->assume_sandbox);
	if (l && opts->session && (error = docket_ledger_session(l, opts->session, no_session, NULL)) < 0)
		return error;
	r.l = l;
	reader_init(&r.at, l, NULL);
	r.at.scan = 1;  /* what it reads is copied out: let the mapped pages go */
	r.base = base;
	r.policies = policies;
	r.n = n;
	r.o = opts;
	r.cb = cb;
	r.ctx = ctx;
	if (!(r.outs = docket_calloc(n, sizeof(*r.outs)))) {
		error = docket_error_set_oom();
		goto cleanup;
	}
	if ((error = follower_init(&r.f, opts)) < 0 || (error = docket_arena_init(&r.args_arena, ARGS_ARENA)) < 0)
		goto cleanup;
	docket_alloc_json_arena(&r.args_arena);
	if (!l)
		error = scan_input(&r, next, next_ctx);
	else if (threads_for(l, opts) >= 2)
		error = run_parallel(&r, l, opts);
	else
		error = scan_events(l, opts->session, NULL, on_event, &r);
cleanup:
	docket_alloc_json_arena(NULL);
	docket_arena_dispose(&r.args_arena);
	follower_dispose(&r.f);
	docket_buf_dispose(&r.scratch);
	docket_buf_dispose(&r.target);
	reader_dispose(&r.at);
	docket_free(r.outs);
	return error;
}

int docket_replay_run(docket_ledger *l, const docket_policy *base,
		      const docket_policy *const *policies, size_t n,
		      const docket_replay_options *opts, docket_replay_cb cb, void *ctx)
{
	return run(l, NULL, NULL, base, policies, n, opts, cb, ctx);
}

int docket_replay_run_input(docket_replay_next next, void *next_ctx, const docket_policy *base,
			    const docket_policy *const *policies, size_t n,
			    const docket_replay_options *opts, docket_replay_cb cb, void *ctx)
{
	return run(NULL, next, next_ctx, base, policies, n, opts, cb, ctx);
}
