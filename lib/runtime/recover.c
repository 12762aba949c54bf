/* SPDX-License-Identifier: Apache-2.0 */
/*
 * recover.c: the recovery engine (DESIGN §6). See include/docket/recover.h
 * for the table of states and actions.
 *
 * The plan is computed from the pending index alone (plus, per item, the
 * intent when it must be evaluated): O(pending), not O(log). Applying it
 * appends every item's events as one isolated group of a group commit, so
 * an item the ledger refuses (because a runtime moved it meanwhile) does
 * not hold back the others, and a crash in the middle of recovery leaves
 * either all of it or none of it: the plan of the next run starts from
 * what is there.
 *
 * Only redispatch, and only in modes replay_safe/idempotent, can ever lead
 * to a second dispatch; the ledger enforces that (invariants 4 and 10).
 */
#include "recover.h"

#include "docket/runtime.h"

#include <string.h>

#include "ledger/ledger_sys.h"
#include "protocol.h"
#include "util/alloc.h"
#include "util/error.h"

typedef struct plan_ctx {
	docket_ledger *ledger;
	authority *auth;
	const docket_recover_options *opts;
	const state_lineage *only;
	json_t *items;
	json_t *summary;
	int error;
	/* the owner of the last session looked up (pending calls come by session) */
	char owner_session[STATE_ID_MAX + 1];
	state_lineage owner;
	int owned;
	const char *shown_state; /* the item's state when planning changed it, else NULL */
} plan_ctx;

/* The lineage owning p's session into c->owner (c->owned 0: none). */
static int session_owner(plan_ctx *c, const char *session)
{
	int error;

	if (c->owner_session[0] && strcmp(c->owner_session, session) == 0)
		return 0;
	c->owner_session[0] = '\0';
	error = ledger_session_owner(c->ledger, session, &c->owner);
	if (error < 0 && error != DOCKET_ENOTFOUND)
		return error;
	c->owned = error == 0;
	snprintf(c->owner_session, sizeof(c->owner_session), "%s", session);
	return 0;
}

static json_t *owner_json(const state_lineage *o)
{
	json_t *j = json_pack("{s:s}", "runtime", o->name);

	if (j && o->uid != LINEAGE_UID_NONE)
		json_object_set_new(j, "uid", json_integer((json_int_t)o->uid));
	return j;
}

/* An event object for a recovery item. */
static json_t *item_event(const char *type, const docket_pending_info *p)
{
	return json_pack("{s:s, s:s, s:s}", "type", type, "session", p->session,
			 "invocation", p->invocation);
}

static int add_event(json_t *events, json_t *ev)
{
	return !ev || json_array_append_new(events, ev) < 0 ? -1 : 0;
}

static int add_action(json_t *events, const docket_pending_info *p, const char *action,
		      const char *detail, json_t *decision)
{
	json_t *ev = item_event("recovery.action", p);

	if (!ev)
		return -1;
	json_object_set_new(ev, "action", json_string(action));
	if (detail)
		json_object_set_new(ev, "detail", json_string(detail));
	if (decision)
		json_object_set(ev, "decision", decision);
	return add_event(events, ev);
}

static int add_outcome(json_t *events, const docket_pending_info *p, const char *status,
		       const char *why)
{
	json_t *ev = item_event("tool.completed", p);

	if (!ev)
		return -1;
	json_object_set_new(ev, "status", json_string(status));
	if (why)
		json_object_set_new(ev, "error", json_string(why));
	return add_event(events, ev);
}

/* The outcome of a reconcile answer, as a tool.completed event. */
static int add_answer(json_t *events, const docket_pending_info *p, const json_t *answer)
{
	static const char *const keys[] = { "status", "exit_code", "output", "duration_ms", "error" };
	json_t *ev = item_event("tool.completed", p);

	if (!ev)
		return -1;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		json_t *v = json_object_get(answer, keys[i]);

		if (v)
			json_object_set(ev, keys[i], v);
	}
	if (!json_object_get(ev, "status"))
		json_object_set_new(ev, "status", json_string("ok"));
	return add_event(events, ev);
}

/* Re-evaluate the intent under the current policy (authority mode). */
static int evaluate(plan_ctx *c, const docket_pending_info *p, json_t **decision)
{
	json_t *intent = NULL;
	int error;

	*decision = NULL;
	if (!c->auth)
		return 0;
	if ((error = ledger_event_json(c->ledger, p->intent_seq, &intent)) < 0)
		return error;
	error = authority_decide(c->auth, p->session, intent, decision);
	json_decref(intent);
	return error;
}

static int ask_executor(plan_ctx *c, const docket_pending_info *p, json_t **answer)
{
	const json_t *a;

	*answer = NULL;
	if (c->opts->reconcile && (a = json_object_get(c->opts->reconcile, p->token))) {
		*answer = json_incref((json_t *)a);
		return 0;
	}
	if (c->opts->reconcile_cb)
		return c->opts->reconcile_cb(c->opts->reconcile_ctx, p->session, p->invocation,
					     p->token, answer);
	return 0;
}

/* Plan for a call whose verdict is known and that was never dispatched. */
static int plan_ready(plan_ctx *c, const docket_pending_info *p, json_t *events,
		      const char **action, const char **next)
{
	json_t *decision = NULL;
	const char *verdict;
	int error;

	if ((error = evaluate(c, p, &decision)) < 0)
		return error;
	verdict = decision ? json_string_value(json_object_get(decision, "verdict")) : NULL;
	if (verdict && (strcmp(verdict, "denied") == 0 || strcmp(verdict, "unsupported") == 0)) {
		*action = "outcome";
		*next = "none";
		error = add_outcome(events, p, strcmp(verdict, "denied") == 0 ? "denied" : "unsupported",
				    "revalidation under the current policy refused the call");
	} else if (verdict && strcmp(verdict, "approval_required") == 0 &&
		   strcmp(p->verdict, "allowed") == 0) {
		/* allowed when recorded, the policy now asks: ask first */
		*action = "none";
		*next = "ask_approval";
	} else {
		*action = "dispatch";
		*next = "dispatch";
		error = add_action(events, p, "dispatch", "revalidated; first dispatch", NULL);
	}
	json_decref(decision);
	return error < 0 ? docket_error_set_oom() : 0;
}

static int plan_in_doubt(plan_ctx *c, const docket_pending_info *p, json_t *events,
			 const char **action, const char **next)
{
	json_t *answer = NULL;
	int rc = 0, error;

	if (strcmp(p->recovery, "replay_safe") == 0 || strcmp(p->recovery, "idempotent") == 0) {
		*action = "redispatch";
		*next = "redispatch";
		rc = add_action(events, p, "redispatch",
				strcmp(p->recovery, "idempotent") == 0 ? "same token" : "new attempt", NULL);
	} else if (strcmp(p->recovery, "reconcile") == 0) {
		if ((error = ask_executor(c, p, &answer)) < 0)
			return error;
		if (answer) {
			*action = "reconcile";
			*next = "none";
			rc = add_action(events, p, "reconcile", "the executor answered for the token", NULL);
			if (rc == 0)
				rc = add_answer(events, p, answer);
			json_decref(answer);
		} else {
			*action = "park";
			*next = "wait";
			rc = add_action(events, p, "park", "the executor cannot tell", NULL);
		}
	} else {
		*action = "indeterminate";
		*next = "none";
		rc = add_action(events, p, "indeterminate", "never retried automatically", NULL);
		if (rc == 0)
			rc = add_outcome(events, p, "indeterminate", "in doubt after a crash");
	}
	return rc < 0 ? docket_error_set_oom() : 0;
}

static int plan_approval(plan_ctx *c, const docket_pending_info *p, json_t *events,
			 const char **action, const char **next)
{
	int rc = 0;

	if (strcmp(p->state, "awaiting_approval") == 0) {
		if (c->opts->close_approvals) {
			json_t *settle = item_event("approval.settled", p);

			*action = "close";
			*next = "none";
			rc = add_action(events, p, "close", "approval closed by recovery", NULL);
			if (rc == 0 && settle) {
				json_object_set_new(settle, "request", json_string(p->open_request));
				json_object_set_new(settle, "result", json_string("closed"));
				json_object_set_new(settle, "actor", json_string("docket:recovery"));
			}
			if (rc == 0)
				rc = add_event(events, settle);
			else
				json_decref(settle);
			if (rc == 0)
				rc = add_outcome(events, p, "denied", "approval closed by recovery");
		} else {
			*action = "reprompt";
			*next = "reprompt";
			rc = add_action(events, p, "reprompt", p->open_request, NULL);
		}
	} else if (c->opts->close_approvals) {
		*action = "outcome";
		*next = "none";
		rc = add_outcome(events, p, "denied", "approval closed by recovery");
	} else {
		*action = "none";
		*next = "ask_approval";
	}
	return rc < 0 ? docket_error_set_oom() : 0;
}

int docket_recover_let_through(const json_t *intent)
{
	const char *file = json_string_value(json_object_get(json_object_get(intent, "provenance"), "file"));

	return file && strncmp(file, "hook:", 5) == 0 && strstr(file, "/PreToolUse") &&
	       !json_object_get(intent, "decision");
}

/*
 * An undecided call a live hook let through at PreToolUse whose client
 * ended without reporting it: the client runs a call right after the hook
 * lets it go, so it may have run. It is in doubt (dispatch inferred), never
 * a question for approval that would run it again (issue 27). *hooked is
 * set when so.
 */
static int hook_let_through(plan_ctx *c, const docket_pending_info *p, int *hooked)
{
	json_t *intent = NULL;
	int error;

	*hooked = 0;
	if ((error = ledger_event_json(c->ledger, p->intent_seq, &intent)) < 0)
		return error;
	*hooked = docket_recover_let_through(intent);
	json_decref(intent);
	return 0;
}

static int plan_undecided(plan_ctx *c, const docket_pending_info *p, json_t *events,
			  const char **action, const char **next)
{
	json_t *decision = NULL;
	const char *verdict;
	int error, rc, hooked;

	if ((error = hook_let_through(c, p, &hooked)) < 0)
		return error;
	if (hooked) {
		c->shown_state = "in_doubt";
		json_t *ev = item_event("tool.dispatched", p);

		if (!ev || json_object_set_new(ev, "provenance", json_pack("{s:s, s:i}", "file",
				"recover (dispatch inferred: let through by a hook at PreToolUse)", "line", 0)) < 0 ||
		    add_event(events, ev) < 0)
			return docket_error_set_oom();
		return plan_in_doubt(c, p, events, action, next);
	}
	if ((error = evaluate(c, p, &decision)) < 0)
		return error;
	*action = "evaluate";
	rc = add_action(events, p, "evaluate", decision ? "under the current policy" : "no policy: the runtime decides",
			decision);
	verdict = decision ? json_string_value(json_object_get(decision, "verdict")) : NULL;
	if (!verdict)
		*next = "decide";
	else if (strcmp(verdict, "allowed") == 0)
		*next = "dispatch";
	else if (strcmp(verdict, "approval_required") == 0)
		*next = "ask_approval";
	else {
		*next = "none";
		if (rc == 0)
			rc = add_outcome(events, p, strcmp(verdict, "denied") == 0 ? "denied" : "unsupported",
					 "evaluated at recovery");
	}
	json_decref(decision);
	return rc < 0 ? docket_error_set_oom() : 0;
}

static int plan_item(void *ctx, const docket_pending_info *p)
{
	plan_ctx *c = ctx;
	const char *action = "none", *next = "none";
	json_t *events = json_array(), *item;
	int error = 0;

	if ((error = session_owner(c, p->session)) < 0) {
		json_decref(events);
		return error;
	}
	if ((c->only && (!c->owned || !state_lineage_same(&c->owner, c->only))) ||
	    (c->opts->runtime && (!c->owned || strcmp(c->owner.name, c->opts->runtime) != 0))) {
		json_decref(events);
		return 0; /* another runtime's call: not this runtime's to see */
	}
	if (!events)
		return docket_error_set_oom();
	c->shown_state = NULL;
	if (strcmp(p->state, "in_doubt") == 0)
		error = plan_in_doubt(c, p, events, &action, &next);
	else if (strcmp(p->state, "ready") == 0)
		error = plan_ready(c, p, events, &action, &next);
	else if (strcmp(p->state, "awaiting_approval") == 0 || strcmp(p->state, "needs_approval") == 0)
		error = plan_approval(c, p, events, &action, &next);
	else if (strcmp(p->state, "undecided") == 0)
		error = plan_undecided(c, p, events, &action, &next);
	else if (strcmp(p->state, "refused") == 0) {
		action = "outcome";
		error = add_outcome(events, p, strcmp(p->verdict, "unsupported") == 0 ? "unsupported" : "denied",
				    NULL) < 0 ? docket_error_set_oom() : 0;
	}
	if (error < 0) {
		json_decref(events);
		return error;
	}
	item = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:I, s:s, s:s, s:o}",
			 "session", p->session, "invocation", p->invocation, "tool", p->tool,
			 "state", c->shown_state ? c->shown_state : p->state, "verdict", p->verdict, "recovery", p->recovery,
			 "attempts", (json_int_t)p->attempts, "action", action, "runtime", next,
			 "events", events);
	if (!item || json_array_append_new(c->items, item) < 0)
		return docket_error_set_oom();
	if (*p->token)
		json_object_set_new(item, "token", json_string(p->token));
	if (*p->open_request)
		json_object_set_new(item, "request", json_string(p->open_request));
	if (c->owned)
		json_object_set_new(item, "owner", owner_json(&c->owner));
	json_object_set_new(c->summary, action,
			    json_integer(json_integer_value(json_object_get(c->summary, action)) + 1));
	return 0;
}

int recover_plan(json_t **plan, docket_ledger *l, authority *a, const docket_recover_options *opts,
		 const state_lineage *only)
{
	docket_recover_options defaults = DOCKET_RECOVER_OPTIONS_INIT;
	docket_ledger_info info;
	plan_ctx c;
	int error;

	*plan = NULL;
	memset(&c, 0, sizeof(c));
	c.ledger = l;
	c.auth = a;
	c.opts = opts ? opts : &defaults;
	c.only = only;
	if ((error = docket_ledger_info_get(l, &info)) < 0)
		return error;
	if (!(c.items = json_array()) || !(c.summary = json_object())) {
		error = docket_error_set_oom();
		goto fail;
	}
	if ((error = docket_ledger_pending(l, NULL, plan_item, &c)) < 0)
		goto fail;
	*plan = json_pack("{s:i, s:I, s:I, s:I, s:o, s:o}", "version", 1,
			  "epoch", (json_int_t)info.epoch, "head", (json_int_t)info.events,
			  "pending", (json_int_t)json_array_size(c.items), "summary", c.summary,
			  "items", c.items);
	if (!*plan)
		return docket_error_set_oom();
	return 0;
fail:
	json_decref(c.items);
	json_decref(c.summary);
	return error;
}

int docket_recover_plan(docket_ledger *l, const docket_recover_options *opts, json_t **plan)
{
	authority *a = NULL;
	int error;

	if ((error = authority_new(&a, l)) < 0)
		return error;
	error = recover_plan(plan, l, a, opts, NULL);
	authority_free(a);
	return error;
}

/*
 * Applying a plan fences first, per lineage (recover.apply in protocol.c):
 * a runtime.started for each lineage whose calls it settles raises that
 * lineage's epoch, so the runtime that dispatched a call in doubt (a
 * zombie, perhaps) can no longer write anything about it, and a second
 * apply needs yet another epoch before it can grant another redispatch
 * (invariants 4 and 7). Other runtimes are not fenced; with nothing to
 * settle nothing is written. This handle starts no runtime of its own.
 */
int docket_recover_apply(docket_ledger *l, const docket_recover_options *opts, json_t **report)
{
	docket_runtime *rt = NULL;
	int error;

	*report = NULL;
	if ((error = docket_runtime_operator(&rt, l)) == 0)
		error = docket_runtime_recover(rt, opts, 1, report);
	docket_runtime_free(rt);
	return error;
}
