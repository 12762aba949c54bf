/* SPDX-License-Identifier: Apache-2.0 */
/*
 * state.c: the invocation state machine: its transitions and their numbered
 * invariants, and the list of every projection they keep (below; the one
 * place that lists them: ledger_internal.h points here).
 *
 * Every event goes through state_apply() inside the write transaction that
 * appends it (STATE_APPEND), and again when reindex or verify rebuild the
 * projections from the log (STATE_REBUILD). One code path decides what is
 * legal, so a history that was accepted once is accepted again, and a log
 * edited behind the ledger's back is caught by verify.
 *
 * Invariants (DESIGN §3, numbered as there; 8-10 are docket's additions,
 * see docs/architecture.md):
 *
 *   1. Nothing about an invocation precedes its tool.intent; intents are
 *      unique per session; an identical re-send is idempotent, a different
 *      intent with the same id is a conflict.
 *   2. approval.requested only when the verdict is approval_required or
 *      undecided, at most one open request, never while the session's
 *      policy never asks, never after dispatch.
 *   3. approval.settled settles the open request exactly once (same result
 *      again: idempotent; different: conflict); an outcome cannot be
 *      recorded while a request is open.
 *   4. tool.dispatched only when dispatchable (allowed, or approved) and not
 *      yet dispatched; another attempt only after a recovery `redispatch`
 *      action and only in modes replay_safe/idempotent; unsupported never.
 *   5. Exactly one tool.completed per invocation; nothing after it.
 *   6. Policy revisions of a session are 1, 2, 3 ... without gaps.
 *   7. runtime.started takes the next epoch and makes it the current
 *      epoch of its lineage (runtime name and peer uid); an event whose
 *      epoch is older than its lineage's current epoch is stale, one with
 *      an epoch not yet issued is refused. An event appended without an
 *      epoch gets the ledger's current one, but a session.opened keeps
 *      epoch 0: no runtime owns that session. A session opened under an epoch is owned by its lineage
 *      (who else may touch it is the protocol's role check).
 *   8. A session's events follow its session.opened (unique per session)
 *      and precede its session.closed, which needs every invocation of the
 *      session to have its outcome.
 *   9. The outcome agrees with the history: ok/error/timeout/indeterminate
 *      need a dispatch, denied/unsupported need none, unsupported needs an
 *      unsupported (or undecided) verdict.
 *  10. A recovery.action matches the invocation's state (redispatch,
 *      reconcile, park, indeterminate: in doubt; reprompt, close: awaiting
 *      approval; dispatch: dispatchable; evaluate: undecided).
 *
 * States of an invocation (phase) and the events that move it:
 *
 *                tool.intent
 *                    |
 *                    v
 *   +-----------> DECIDING ----------- tool.completed (denied, unsupported,
 *   |              |    |                               cancelled) --+
 *   | approval.    |    | tool.dispatched                           |
 *   | settled      |    v                                           |
 *   |   approval.  |  DISPATCHED --- tool.completed ---------------->+
 *   |   requested  |    ^    |                                      v
 *   |              v    +----+ recovery.action redispatch       COMPLETED
 *   +---- AWAITING_APPROVAL       + tool.dispatched (attempt+1)
 *
 * The table `transitions` below says which function performs each
 * transition and what must hold before it runs; state_apply() dispatches
 * through it. Each handler names the invariant it enforces in its error.
 *
 * Projections (derived from the log: reindex and verify rebuild them, and
 * state_clear_projections() drops them), each kept by one file:
 *
 *   sessions        session -> its record, SessionState (state_record.c),
 *                   loaded into and written back from the transaction's
 *                   caches (state_cache.c, sess_cache.c)
 *   invocations     (session ordinal, invocation) -> the compact record
 *                   (state_record.c; keys: state_cache.c), for calls no
 *                   longer in their session's recent list (state_recent.c)
 *   pending         the unfinished invocations of `invocations`, and meta
 *                   "pending_count" (state_pending.c)
 *   session_events  session -> the blocks of seqs holding its events
 *                   (record_session_event(), here)
 *   policies        policy hash -> policy document (handle_policy_revised())
 *   meta            head_seq, head_hash, epoch, clock_us and byte counts
 *                   (state_txn.c); lineages, epochs, owners (state_lineage.c);
 *                   "incidents:<session>", the seqs of a session's
 *                   ledger.incident events (state_incident.c)
 *
 * Every write goes through the transaction's overlay (overlay.c) and
 * reaches LMDB at state_txn_finish() (state_txn.c).
 */
#include <assert.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "state_internal.h"
#include "policy/policy_doc.h"
#include "util/alloc.h"
#include "util/error.h"

/* ---- helpers for the handlers ---- */

#define V(x) DOCKET__V1__VERDICT__VERDICT_##x
#define PH(x) DOCKET__V1__PHASE__PHASE_##x
#define AR(x) DOCKET__V1__APPROVAL_RESULT__APPROVAL_RESULT_##x
#define OS(x) DOCKET__V1__OUTCOME_STATUS__OUTCOME_STATUS_##x
#define RM(x) DOCKET__V1__RECOVERY_MODE__RECOVERY_MODE_##x
#define RA(x) DOCKET__V1__RECOVERY_ACTION_KIND__RECOVERY_ACTION_##x

/* The per-event context handed to the handlers. */
typedef struct apply_ctx {
	state_txn *st;
	docket_event *ev;
	state_mode mode;
	uint64_t seq;          /* the seq this event gets if it is written */
	uint64_t *seq_out;
	int *duplicate;
	docket_append_result *res;
	int closed;            /* the session is closed: only an identical re-send passes */
} apply_ctx;

static int refuse(const apply_ctx *c, int code, int invariant, const char *fmt, ...) DOCKET_PRINTF(4, 5);

/*
 * The transitions: per event type, the function that performs it and what
 * dispatch_handler() establishes before calling it, in this order: the
 * event's session is open (invariant 8, require_open_session()), then its
 * invocation has its intent (invariant 1, require_invocation()). The
 * comment gives the invariants each function enforces.
 */
typedef enum transition_scope {
	SCOPE_LEDGER,           /* nothing: the event belongs to no open session */
	SCOPE_SESSION,          /* the session is open and cached (st->sess) */
	SCOPE_INVOCATION        /* ... and the invocation has its intent and is cached (st->inv) */
} transition_scope;

typedef struct transition {
	int (*fn)(apply_ctx *c);
	transition_scope scope;
} transition;

static int handle_runtime_started(apply_ctx *c);
static int handle_incident(apply_ctx *c);
static int handle_session_opened(apply_ctx *c);
static int handle_session_closed(apply_ctx *c);
static int handle_policy_revised(apply_ctx *c);
static int handle_intent(apply_ctx *c);
static int handle_approval_requested(apply_ctx *c);
static int handle_approval_settled(apply_ctx *c);
static int handle_dispatched(apply_ctx *c);
static int handle_completed(apply_ctx *c);
static int handle_recovery_action(apply_ctx *c);
static int handle_unknown(apply_ctx *c);

#define EV(x) DOCKET__V1__EVENT__BODY_##x
static const transition transitions[] = {
	[EV(RUNTIME_STARTED)]    = { handle_runtime_started,    SCOPE_LEDGER },     /* 7 */
	[EV(LEDGER_INCIDENT)]    = { handle_incident,           SCOPE_LEDGER },
	[EV(SESSION_OPENED)]     = { handle_session_opened,     SCOPE_LEDGER },     /* 8 */
	[EV(SESSION_CLOSED)]     = { handle_session_closed,     SCOPE_SESSION },    /* 8 */
	[EV(POLICY_REVISED)]     = { handle_policy_revised,     SCOPE_SESSION },    /* 6 */
	[EV(TOOL_INTENT)]        = { handle_intent,             SCOPE_SESSION },    /* 1 */
	[EV(APPROVAL_REQUESTED)] = { handle_approval_requested, SCOPE_INVOCATION }, /* 2, 3, 5 */
	[EV(APPROVAL_SETTLED)]   = { handle_approval_settled,   SCOPE_INVOCATION }, /* 3, 5 */
	[EV(TOOL_DISPATCHED)]    = { handle_dispatched,         SCOPE_INVOCATION }, /* 4, 5 */
	[EV(TOOL_COMPLETED)]     = { handle_completed,          SCOPE_INVOCATION }, /* 3, 5, 9 */
	[EV(RECOVERY_ACTION)]    = { handle_recovery_action,    SCOPE_INVOCATION }, /* 4, 5, 10 */
};
/* any other type is refused once its session and invocation are checked */
static const transition unknown_transition = { handle_unknown, SCOPE_INVOCATION };
#undef EV

#ifndef NDEBUG
/* What a scope guarantees a handler (its assert()ed preconditions): the
 * caches hold the event's session, opened (and its invocation, begun). */
static int holds_session(const apply_ctx *c)
{
	const state_txn *st = c->st;

	return st->sess_loaded && strcmp(st->sess_id, c->ev->session) == 0 && st->sess.opened_seq;
}

static int holds_invocation(const apply_ctx *c)
{
	return holds_session(c) && c->st->inv_loaded && c->st->inv.intent_seq;
}
#endif

/* Error naming the invariant, the event type, the session and the
 * invocation (only when the event has one: session.closed has none). */
static int refuse(const apply_ctx *c, int code, int invariant, const char *fmt, ...)
{
	char what[512], where[600];
	const char *inv = c->ev->invocation;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (inv && *inv)
		snprintf(where, sizeof(where), "session \"%s\", invocation \"%s\"", c->ev->session, inv);
	else
		snprintf(where, sizeof(where), "session \"%s\"", c->ev->session ? c->ev->session : "");
	if (invariant)
		return docket_error_invariant(code, invariant, "invariant %d: %s rejected (%s): %s",
					      invariant, docket_event_type(c->ev), where, what);
	return docket_error_set(code, "%s rejected (%s): %s", docket_event_type(c->ev), where, what);
}

static int mark_duplicate(const apply_ctx *c, uint64_t seq)
{
	*c->duplicate = 1;
	*c->seq_out = seq;
	return 0;
}

static int is_granted(int result)
{
	return result == AR(APPROVED) || result == AR(APPROVED_FOR_SESSION);
}

/* DESIGN §3: these settlements end in tool.completed(denied); nothing re-opens them. */
static int is_refusal(int result)
{
	return result == AR(DENIED) || result == AR(ABORTED) || result == AR(EXPIRED) || result == AR(CLOSED);
}

static const char *verdict_str(int v)
{
	const char *s = docket_verdict_name(v);

	return v == 0 || !s ? "undecided" : s;
}

/* ---- handlers, one per event type ---- */

/*
 * Whether the event is a re-send of the stored event `seq`: 1, 0 when it
 * differs. The digest is taken only here, when an earlier event with the
 * same id exists: a rebuild (verify, reindex) then never re-packs and hashes
 * an event that has no twin.
 */
static int stored_resend(apply_ctx *c, uint64_t seq)
{
	uint8_t digest[LEDGER_HASH_LEN];
	int error;

	if ((error = state_event_digest(digest, c->st, c->ev)) < 0)
		return error;
	return state_stored_matches(c->st, seq, digest);
}

static int handle_session_opened(apply_ctx *c)
{
	state_txn *st = c->st;
	Docket__V1__SessionOpened *b = c->ev->session_opened;
	uint8_t digest[LEDGER_HASH_LEN];
	int error = state_sess_load(st, c->ev->session);

	if (error < 0 && error != DOCKET_ENOTFOUND)
		return error;
	if (error == 0) {
		/* a re-send is checked against the stored event (issue 12: the
		 * session record keeps no digest of it) */
		if ((error = state_event_digest(digest, st, c->ev)) < 0 ||
		    (error = state_stored_matches(st, st->sess.opened_seq, digest)) < 0)
			return error;
		if (error)
			return mark_duplicate(c, st->sess.opened_seq);
		return refuse(c, DOCKET_ECONFLICT, 8, "session was already opened at seq %llu with other content",
			      (unsigned long long)st->sess.opened_seq);
	}
	st->sess.opened_seq = c->seq;
	state_str_copy(st->sess.runtime, sizeof(st->sess.runtime), b->runtime);
	state_str_copy(st->sess.parent, sizeof(st->sess.parent), b->parent);
	st->sess_dirty = 1;
	/* invariant 7: the lineage of its epoch owns it */
	return c->ev->epoch ? state_session_owner_set(st, c->ev->session, c->ev->epoch) : 0;
}

/* Every event of a session other than session.opened: invariant 8. */
static int require_open_session(apply_ctx *c)
{
	int error = state_sess_load(c->st, c->ev->session);

	if (error == DOCKET_ENOTFOUND)
		return refuse(c, DOCKET_ETRANSITION, 8, "session was never opened");
	if (error < 0)
		return error;
	if (c->st->sess.closed_seq) {
		if (c->ev->body_case == DOCKET__V1__EVENT__BODY_SESSION_CLOSED)
			return mark_duplicate(c, c->st->sess.closed_seq);
		c->closed = 1; /* the handler may still find an identical re-send */
	}
	return 0;
}

static int handle_session_closed(apply_ctx *c)
{
	sess_state *s = &c->st->sess;

	assert(holds_session(c));
	if (s->pending)
		return refuse(c, DOCKET_ETRANSITION, 8,
			      "%llu invocation(s) of the session have no outcome yet",
			      (unsigned long long)s->pending);
	s->closed_seq = c->seq;
	c->st->sess_dirty = 1;
	return 0;
}

static int handle_policy_revised(apply_ctx *c)
{
	state_txn *st = c->st;
	Docket__V1__PolicyRevised *b = c->ev->policy_revised;
	uint8_t hash[LEDGER_HASH_LEN];
	size_t len = strlen(b->policy_json);
	int error;

	assert(holds_session(c));
	if ((error = state_sha256(hash, b->policy_json, len)) < 0)
		return error;
	if (b->revision != 0 && b->revision <= st->sess.policy_revision) {
		if (b->revision == st->sess.policy_revision &&
		    b->format == (uint32_t)st->sess.policy_format &&
		    memcmp(hash, st->sess.policy_hash, sizeof(hash)) == 0)
			return mark_duplicate(c, st->sess.policy_seq);
		return refuse(c, DOCKET_ECONFLICT, 6, "revision %u already exists with other content "
			      "(the session is at revision %u)", b->revision, st->sess.policy_revision);
	}
	if (b->revision != st->sess.policy_revision + 1)
		return refuse(c, DOCKET_ETRANSITION, 6, "revision %u does not follow revision %u",
			      b->revision, st->sess.policy_revision);
	if ((error = overlay_defer(&st->ov, st->l->dbi.policies, OV_PUT, hash, sizeof(hash), b->policy_json, len)) < 0)
		return error;
	st->sess.policy_revision = b->revision;
	st->sess.policy_format = b->format;
	memcpy(st->sess.policy_hash, hash, sizeof(hash));
	if ((error = policy_doc_never_asks(docket_policy_format_name(b->format), b->policy_json, hash)) < 0)
		return error;
	st->sess.never_asks = error;
	st->sess.policy_seq = c->seq;
	st->sess_dirty = 1;
	return 0;
}

static int handle_intent(apply_ctx *c)
{
	state_txn *st = c->st;
	Docket__V1__ToolIntent *b = c->ev->tool_intent;
	int error;

	assert(holds_session(c));
	error = state_inv_load(st, c->ev->session, c->ev->invocation);
	if (error < 0 && error != DOCKET_ENOTFOUND)
		return error;
	if (st->inv.intent_seq) {
		if ((error = stored_resend(c, st->inv.intent_seq)) < 0)
			return error;
		if (error)
			return mark_duplicate(c, st->inv.intent_seq);
		return refuse(c, DOCKET_ECONFLICT, 1, "another intent with this id exists (seq %llu)",
			      (unsigned long long)st->inv.intent_seq);
	}
	if (strlen(b->tool) > STATE_ID_MAX)
		return refuse(c, DOCKET_EINVALID, 0, "tool name longer than %d bytes", STATE_ID_MAX);
	st->inv.intent_seq = c->seq;
	st->inv.verdict = b->decision ? (int)b->decision->verdict : V(UNSPECIFIED);
	st->inv.phase = PH(DECIDING);
	st->inv.recovery = b->recovery;
	state_str_copy(st->inv.tool, sizeof(st->inv.tool), b->tool);
	st->inv_dirty = 1;
	st->sess.invocations++;
	st->sess.pending++;
	st->sess_dirty = 1;
	return state_pending_set(st, 1);
}

/* Every invocation event but the intent: invariants 1 and 5. */
static int require_invocation(apply_ctx *c)
{
	int error = state_inv_load(c->st, c->ev->session, c->ev->invocation);

	if (error == DOCKET_ENOTFOUND)
		return refuse(c, DOCKET_ETRANSITION, 1, "no tool.intent for this invocation");
	return error;
}

static int require_not_completed(apply_ctx *c)
{
	if (c->st->inv.phase == PH(COMPLETED))
		return refuse(c, DOCKET_ETRANSITION, 5, "the invocation already has its outcome (seq %llu)",
			      (unsigned long long)c->st->inv.outcome_seq);
	return 0;
}

/*
 * An approval request may carry docket's re-decision: a call decided
 * allowed under an earlier revision that the current revision asks about
 * (revalidation). It only narrows, and it must name the current revision.
 */
static int check_redecision(apply_ctx *c)
{
	const Docket__V1__Decision *d = c->ev->approval_requested->decision;
	uint32_t current = c->st->sess.policy_revision;

	assert(c->st->inv.phase == PH(DECIDING));
	if (!d)
		return 0;
	if (d->verdict != V(APPROVAL_REQUIRED))
		return refuse(c, DOCKET_ETRANSITION, 2, "a request's decision must be approval_required, not %s",
			      verdict_str(d->verdict));
	if (d->policy_revision != current)
		return refuse(c, c->mode == STATE_APPEND ? DOCKET_ECONFLICT : DOCKET_ECORRUPT, 2,
			      "decided under policy revision %u, the session is at revision %u",
			      d->policy_revision, current);
	return 0;
}

static int handle_approval_requested(apply_ctx *c)
{
	inv_state *inv = &c->st->inv;
	const char *req = c->ev->approval_requested->request;
	int error;

	assert(holds_invocation(c));
	if ((inv->phase == PH(AWAITING_APPROVAL) && strcmp(inv->open_request, req) == 0) ||
	    (inv->request_seq && strcmp(inv->last_request, req) == 0)) {
		if ((error = stored_resend(c, inv->request_seq)) < 0)
			return error;
		if (error)
			return mark_duplicate(c, inv->request_seq);
		return refuse(c, DOCKET_ECONFLICT, 2, "request \"%s\" already exists with other content", req);
	}
	if ((error = require_not_completed(c)) < 0)
		return error;
	if (inv->phase == PH(AWAITING_APPROVAL))
		return refuse(c, DOCKET_ETRANSITION, 2, "request \"%s\" is still open", inv->open_request);
	if (inv->phase == PH(DISPATCHED))
		return refuse(c, DOCKET_ETRANSITION, 2, "the invocation was already dispatched");
	if (inv->refused)
		return refuse(c, DOCKET_ETRANSITION, 3, "request \"%s\" was settled %s: only the outcome denied may follow",
			      inv->last_request, docket_approval_result_name(inv->last_result));
	if ((error = check_redecision(c)) < 0)
		return error;
	if (inv->verdict != V(APPROVAL_REQUIRED) && inv->verdict != V(UNSPECIFIED) && !c->ev->approval_requested->decision)
		return refuse(c, DOCKET_ETRANSITION, 2, "verdict is %s, not approval_required",
			      verdict_str(inv->verdict));
	if (c->st->sess.never_asks)
		return refuse(c, DOCKET_ETRANSITION, 2,
			      "the session's policy (revision %u) never asks for approval",
			      c->st->sess.policy_revision);
	if (strlen(req) > STATE_ID_MAX)
		return refuse(c, DOCKET_EINVALID, 0, "request id longer than %d bytes", STATE_ID_MAX);
	inv->verdict = V(APPROVAL_REQUIRED);
	inv->phase = PH(AWAITING_APPROVAL);
	state_str_copy(inv->open_request, sizeof(inv->open_request), req);
	state_str_copy(inv->last_request, sizeof(inv->last_request), req);
	inv->request_seq = c->seq;
	inv->request_revision = c->st->sess.policy_revision;
	inv->last_result = AR(UNSPECIFIED);
	inv->requests++;
	return 0;
}

/*
 * `superseded` is docket's own settlement: the policy was revised while the
 * request was open and the new revision decides outright. So its decision
 * must name the session's current revision, that revision must be newer
 * than the one the request was made under, and it must decide (allowed,
 * denied, unsupported), not ask again.
 */
static int check_supersede(apply_ctx *c)
{
	const Docket__V1__Decision *d = c->ev->approval_settled->decision;
	uint32_t current = c->st->sess.policy_revision;

	assert(c->st->inv.phase == PH(AWAITING_APPROVAL));
	if (!d)
		return refuse(c, DOCKET_EINVALID, 3, "a superseded settlement needs the new decision");
	if (current <= c->st->inv.request_revision)
		return refuse(c, DOCKET_ETRANSITION, 3,
			      "superseded, but the policy was not revised since the request (revision %u)",
			      c->st->inv.request_revision);
	if (d->policy_revision != current)
		return refuse(c, DOCKET_ETRANSITION, 3,
			      "superseded by revision %u, but the session is at revision %u",
			      d->policy_revision, current);
	if (d->verdict == V(APPROVAL_REQUIRED) || d->verdict == V(UNSPECIFIED))
		return refuse(c, DOCKET_ETRANSITION, 3, "a superseded settlement must decide, not ask (%s)",
			      verdict_str(d->verdict));
	return 0;
}

static int handle_approval_settled(apply_ctx *c)
{
	inv_state *inv = &c->st->inv;
	Docket__V1__ApprovalSettled *b = c->ev->approval_settled;
	int error;

	assert(holds_invocation(c));
	if (inv->phase != PH(AWAITING_APPROVAL) || strcmp(inv->open_request, b->request) != 0) {
		if (inv->last_result && strcmp(inv->last_request, b->request) == 0) {
			if ((error = stored_resend(c, inv->settle_seq)) < 0)
				return error;
			if (error)
				return mark_duplicate(c, inv->settle_seq);
			return refuse(c, DOCKET_ECONFLICT, 3, "request \"%s\" was already settled as %s",
				      b->request, docket_approval_result_name(inv->last_result));
		}
		if ((error = require_not_completed(c)) < 0)
			return error;
		return refuse(c, DOCKET_ETRANSITION, 3, "no open request \"%s\"", b->request);
	}
	if (b->result == AR(SUPERSEDED) && (error = check_supersede(c)) < 0)
		return error;
	inv->phase = PH(DECIDING);
	inv->open_request[0] = '\0';
	inv->last_result = b->result;
	inv->settle_seq = c->seq;
	inv->refused = is_refusal(b->result);
	if (b->result == AR(APPROVED_FOR_SESSION)) {
		c->st->sess.grants++;
		c->st->sess_dirty = 1;
	}
	if (b->result == AR(SUPERSEDED))
		inv->verdict = b->decision->verdict;
	return 0;
}

static int dispatchable(const inv_state *inv)
{
	if (inv->phase != PH(DECIDING) || inv->attempts)
		return 0;
	switch (inv->verdict) {
	case V(ALLOWED):
		return 1;
	case V(APPROVAL_REQUIRED):
		return is_granted(inv->last_result);
	case V(UNSPECIFIED):
		/* record mode: a dispatch with no approval implies allowed */
		return inv->requests == 0 || is_granted(inv->last_result);
	default:
		return 0;
	}
}

/*
 * Authority mode: docket revalidated the call under the session's policy
 * and the dispatch carries that revision and verdict. Both are checked
 * here, inside the transaction that appends the dispatch: a revision that
 * is no longer current is a conflict (the runtime asks again and docket
 * decides under the new one), and the revalidated verdict can only narrow
 * what the ledger's own state allows.
 */
static int check_revalidation(apply_ctx *c)
{
	const Docket__V1__ToolDispatched *b = c->ev->tool_dispatched;
	const inv_state *inv = &c->st->inv;

	assert(inv->phase == PH(DECIDING) || inv->phase == PH(DISPATCHED));
	if (b->policy_revision && b->policy_revision != c->st->sess.policy_revision)
		return refuse(c, c->mode == STATE_APPEND ? DOCKET_ECONFLICT : DOCKET_ECORRUPT, 4,
			      "revalidated under policy revision %u, the session is at revision %u: decide again",
			      b->policy_revision, c->st->sess.policy_revision);
	if (b->verdict == V(DENIED) || b->verdict == V(UNSUPPORTED))
		return refuse(c, DOCKET_ETRANSITION, 4, "revalidation refused the call (%s)", verdict_str(b->verdict));
	if (b->verdict == V(APPROVAL_REQUIRED) && inv->phase == PH(DECIDING) && !is_granted(inv->last_result))
		return refuse(c, DOCKET_ETRANSITION, 4,
			      "the current policy (revision %u) requires an approval; ask for one first",
			      c->st->sess.policy_revision);
	return 0;
}

static int handle_dispatched(apply_ctx *c)
{
	state_txn *st = c->st;
	inv_state *inv = &st->inv;
	Docket__V1__ToolDispatched *b = c->ev->tool_dispatched;
	uint32_t attempt;
	char token[48];
	int error;

	assert(holds_invocation(c));
	/* a re-send naming the current attempt (a lost reply, a re-import) is
	 * the same dispatch, also after the outcome */
	if ((inv->phase == PH(DISPATCHED) || inv->phase == PH(COMPLETED)) && b->attempt &&
	    b->attempt == inv->attempts &&
	    (!*b->token || strcmp(b->token, inv->token) == 0) && c->mode == STATE_APPEND) {
		c->res->attempt = inv->attempts;
		state_str_copy(c->res->token, sizeof(c->res->token), inv->token);
		return mark_duplicate(c, inv->dispatch_seq);
	}
	if ((error = require_not_completed(c)) < 0)
		return error;
	if (inv->verdict == V(UNSUPPORTED))
		return refuse(c, DOCKET_ETRANSITION, 4, "an unsupported call is never dispatchable");
	if (inv->phase == PH(AWAITING_APPROVAL))
		return refuse(c, DOCKET_ETRANSITION, 4, "approval request \"%s\" is still open", inv->open_request);
	if ((error = check_revalidation(c)) < 0)
		return error;
	if (inv->phase == PH(DISPATCHED)) {
		if (!inv->redispatch_granted)
			return refuse(c, DOCKET_ETRANSITION, 4,
				      "already dispatched (attempt %u); another attempt needs a recovery redispatch",
				      inv->attempts);
	} else if (!dispatchable(inv)) {
		return refuse(c, DOCKET_ETRANSITION, 4, "not dispatchable: verdict %s, approval %s",
			      verdict_str(inv->verdict),
			      inv->last_result ? docket_approval_result_name(inv->last_result) : "none");
	}
	attempt = inv->attempts + 1;
	/* idempotent mode keeps the first token: the executor dedups on it */
	if ((error = state_dispatch_token(token, c->ev->session, c->ev->invocation, inv->intent_seq,
				    inv->recovery == RM(IDEMPOTENT) ? 1 : attempt)) < 0)
		return error;
	if (b->attempt && b->attempt != attempt)
		return refuse(c, c->mode == STATE_APPEND ? DOCKET_ECONFLICT : DOCKET_ECORRUPT, 4,
			      "attempt %u given, the next attempt is %u", b->attempt, attempt);
	if (*b->token && strcmp(b->token, token) != 0)
		return refuse(c, c->mode == STATE_APPEND ? DOCKET_ECONFLICT : DOCKET_ECORRUPT, 4,
			      "token \"%s\" given, the ledger's token is \"%s\"", b->token, token);
	if (c->mode == STATE_APPEND) {
		if (!*b->token) {
			char *dup = docket_strdup(token);

			if (!dup)
				return docket_error_set_oom();
			b->token = dup;
		}
		b->attempt = attempt;
	} else if (!b->attempt || !*b->token) {
		return refuse(c, DOCKET_ECORRUPT, 4, "stored dispatch lacks its attempt or token");
	}
	if (inv->verdict == V(UNSPECIFIED) && inv->requests == 0)
		inv->verdict = V(ALLOWED);
	inv->attempts = attempt;
	inv->redispatch_granted = 0;
	inv->phase = PH(DISPATCHED);
	inv->dispatch_seq = c->seq;
	inv->dispatch_epoch = c->ev->epoch;
	state_str_copy(inv->token, sizeof(inv->token), token);
	c->res->attempt = attempt;
	state_str_copy(c->res->token, sizeof(c->res->token), token);
	return 0;
}

static int handle_completed(apply_ctx *c)
{
	state_txn *st = c->st;
	inv_state *inv = &st->inv;
	int status = c->ev->tool_completed->status;
	int error;

	assert(holds_invocation(c));
	if (inv->phase == PH(COMPLETED)) {
		if ((error = stored_resend(c, inv->outcome_seq)) < 0)
			return error;
		if (error)
			return mark_duplicate(c, inv->outcome_seq);
		return refuse(c, DOCKET_ECONFLICT, 5, "the invocation already has its outcome (seq %llu, %s)",
			      (unsigned long long)inv->outcome_seq, docket_outcome_status_name(inv->status));
	}
	if (inv->phase == PH(AWAITING_APPROVAL))
		return refuse(c, DOCKET_ETRANSITION, 3, "approval request \"%s\" is still open; settle it first",
			      inv->open_request);
	switch (status) {
	case OS(OK):
	case OS(ERROR):
	case OS(TIMEOUT):
	case OS(INDETERMINATE):
		if (inv->phase != PH(DISPATCHED))
			return refuse(c, DOCKET_ETRANSITION, 9, "status %s needs a dispatch first",
				      docket_outcome_status_name(status));
		break;
	case OS(UNSUPPORTED):
		if (inv->verdict != V(UNSUPPORTED) && inv->verdict != V(UNSPECIFIED))
			return refuse(c, DOCKET_ETRANSITION, 9, "status unsupported for a call with verdict %s",
				      verdict_str(inv->verdict));
		/* fall through */
	case OS(DENIED):
		if (inv->attempts)
			return refuse(c, DOCKET_ETRANSITION, 9, "status %s after a dispatch",
				      docket_outcome_status_name(status));
		break;
	default:
		break;
	}
	if (inv->verdict == V(UNSPECIFIED) && inv->requests == 0) {
		if (status == OS(DENIED))
			inv->verdict = V(DENIED);
		else if (status == OS(UNSUPPORTED))
			inv->verdict = V(UNSUPPORTED);
	}
	inv->phase = PH(COMPLETED);
	inv->status = status;
	inv->outcome_seq = c->seq;
	inv->redispatch_granted = 0;
	st->sess.pending--;
	st->sess_dirty = 1;
	return state_pending_set(st, 0);
}

static int handle_recovery_action(apply_ctx *c)
{
	inv_state *inv = &c->st->inv;
	int action = c->ev->recovery_action->action;
	int ok;
	int error;

	assert(holds_invocation(c));
	if ((error = require_not_completed(c)) < 0)
		return error;
	switch (action) {
	case RA(REDISPATCH):
		if (inv->phase == PH(DISPATCHED) && inv->recovery != RM(REPLAY_SAFE) &&
		    inv->recovery != RM(IDEMPOTENT))
			return refuse(c, DOCKET_ETRANSITION, 4,
				      "recovery mode %s never re-dispatches",
				      inv->recovery ? docket_recovery_mode_name(inv->recovery) : "never_auto_retry");
		ok = inv->phase == PH(DISPATCHED);
		if (ok && c->ev->epoch <= inv->dispatch_epoch)
			return refuse(c, DOCKET_ETRANSITION, 4,
				      "attempt %u was dispatched at epoch %llu: a redispatch needs a newer runtime (runtime.started)",
				      inv->attempts, (unsigned long long)inv->dispatch_epoch);
		break;
	case RA(RECONCILE):
	case RA(PARK):
	case RA(INDETERMINATE):
		ok = inv->phase == PH(DISPATCHED);
		break;
	case RA(REPROMPT):
	case RA(CLOSE):
		ok = inv->phase == PH(AWAITING_APPROVAL);
		break;
	case RA(DISPATCH):
		ok = dispatchable(inv);
		break;
	case RA(EVALUATE):
		ok = inv->phase == PH(DECIDING) && inv->verdict == V(UNSPECIFIED);
		break;
	default:
		ok = 0;
	}
	if (!ok)
		return refuse(c, DOCKET_ETRANSITION, 10, "action %s does not fit state %s",
			      docket_recovery_action_name(action), inv_pending_state(inv));
	if (action == RA(REDISPATCH))
		inv->redispatch_granted = 1;
	if (action == RA(EVALUATE) && c->ev->recovery_action->decision)
		inv->verdict = c->ev->recovery_action->decision->verdict;
	return 0;
}

/* ---- the entry point ---- */

/* RFC 3339 UTC with microseconds of `us` (microseconds since the epoch)
 * into `out`: the date and time of day are formatted once per second
 * (snprintf per event was 5% of a bulk `record`). */
static void format_time(char out[96], uint64_t us)
{
	static _Thread_local time_t cached_secs = (time_t)-1;
	static _Thread_local char cached[64];
	static _Thread_local size_t cached_len;
	time_t secs = (time_t)(us / 1000000u);
	uint32_t frac = (uint32_t)(us % 1000000u);

	if (secs != cached_secs) {
		struct tm tm;

		gmtime_r(&secs, &tm);
		snprintf(cached, sizeof(cached), "%04d-%02d-%02dT%02d:%02d:%02d",
			 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
		cached_len = strlen(cached);
		cached_secs = secs;
	}
	if (cached_len != 19) { /* past year 9999 */
		snprintf(out, 96, "%s.%06luZ", cached, (unsigned long)frac);
		return;
	}
	memcpy(out, cached, 19);
	out[19] = '.';
	for (int i = 25; i >= 20; i--, frac /= 10)
		out[i] = (char)('0' + frac % 10);
	out[26] = 'Z';
	out[27] = '\0';
}

/*
 * docket's clock for an event that came without a time (every live append):
 * monotonic per ledger, so a clock stepped back (or another writer's clock
 * behind ours) never stamps an event before the last one docket stamped.
 */
static int stamp_time(state_txn *st, docket_event *ev)
{
	struct timespec ts;
	uint64_t us;
	char buf[96];
	char *dup;

	clock_gettime(CLOCK_REALTIME, &ts);
	us = (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
	if (us <= st->clock_us)
		us = st->clock_us + 1;
	st->clock_us = us;
	format_time(buf, us);
	if (!(dup = docket_strdup(buf)))
		return docket_error_set_oom();
	ev->time = dup;
	return 0;
}

/*
 * Invariant 7, per lineage: the epoch an event carries must be the current
 * epoch of the lineage it was issued to. Starting one runtime fences only
 * its own earlier instances. An epoch issued before lineages were kept has
 * none on record: it must then be the ledger's current epoch (the old,
 * ledger-wide rule).
 */
static int check_lineage(apply_ctx *c)
{
	state_lineage lin;
	uint64_t e = c->ev->epoch;
	int error = state_epoch_lineage(c->st, e, &lin);

	if (error == DOCKET_ENOTFOUND) {
		if (e < c->st->epoch)
			return refuse(c, DOCKET_ESTALE, 7, "stale epoch %llu: the ledger is at epoch %llu; "
				      "call runtime.start", (unsigned long long)e, (unsigned long long)c->st->epoch);
		return 0;
	}
	if (error < 0)
		return error;
	if (e < lin.epoch)
		return refuse(c, DOCKET_ESTALE, 7, "stale epoch %llu: runtime \"%s\" (uid %s%lld) was started "
			      "again at epoch %llu (seq %llu, %s), which fences this instance; "
			      "call runtime.start, then recover.plan",
			      (unsigned long long)e, lin.name, lin.uid == LINEAGE_UID_NONE ? "unknown" : "",
			      lin.uid == LINEAGE_UID_NONE ? 0LL : (long long)lin.uid,
			      (unsigned long long)lin.epoch, (unsigned long long)lin.seq, lin.time);
	return 0;
}

static int check_epoch(apply_ctx *c)
{
	state_txn *st = c->st;
	docket_event *ev = c->ev;
	int error;

	/* runtime.started takes the next epoch (handle_runtime_started) */
	if (ev->body_case == DOCKET__V1__EVENT__BODY_RUNTIME_STARTED)
		return 0;
	/* an event without an epoch is written under the ledger's current one
	 * (which is its lineage's current epoch), but a session opened without
	 * one has no runtime owner */
	if (c->mode == STATE_APPEND && ev->epoch == 0 && ev->body_case != DOCKET__V1__EVENT__BODY_SESSION_OPENED)
		ev->epoch = st->epoch;
	if (ev->epoch > st->epoch)
		return refuse(c, DOCKET_ESTALE, 7, "epoch %llu has not been issued (the ledger is at epoch %llu)",
			      (unsigned long long)ev->epoch, (unsigned long long)st->epoch);
	if (ev->epoch && (error = check_lineage(c)) < 0)
		return error;
	if (c->res)
		c->res->epoch = ev->epoch;
	return 0;
}

/* runtime.started (invariant 7): the next epoch, its lineage's current one. */
static int handle_runtime_started(apply_ctx *c)
{
	state_txn *st = c->st;
	docket_event *ev = c->ev;
	uint64_t next = st->epoch + 1;

	if (ev->epoch && ev->epoch != next)
		return refuse(c, c->mode == STATE_APPEND ? DOCKET_ESTALE : DOCKET_ECORRUPT, 7,
			      "runtime.started carries epoch %llu, the next epoch is %llu",
			      (unsigned long long)ev->epoch, (unsigned long long)next);
	ev->epoch = next;
	st->epoch = next;
	if (c->res)
		c->res->epoch = next;
	return state_lineage_start(st, ev, c->seq);
}

/*
 * ledger.incident (docs/write-path.md §3): a record the ledger could not
 * take as written, kept in the chain instead of dropped. It belongs to no
 * session; it needs a kind, and is indexed under the session its entry
 * names (state_incident_index).
 */
static int handle_incident(apply_ctx *c)
{
	const Docket__V1__LedgerIncident *b = c->ev->ledger_incident;

	if (!b->kind || !*b->kind)
		return refuse(c, DOCKET_EINVALID, 0, "ledger.incident without a kind");
	return state_incident_index(c->st, c->ev, c->seq);
}

static int handle_unknown(apply_ctx *c)
{
	return refuse(c, DOCKET_EINVALID, 0, "event has no known type");
}

/* The entry of `transitions` for an event type. */
static const transition *transition_of(int body)
{
	if (body >= 0 && (size_t)body < sizeof(transitions) / sizeof(transitions[0]) && transitions[body].fn)
		return &transitions[body];
	return &unknown_transition;
}

/* An event of a session through its transition, once the invocation it
 * names has its intent (SCOPE_INVOCATION). */
static int session_transition(apply_ctx *c, const transition *t)
{
	int error;

	assert(holds_session(c));
	if (t->scope == SCOPE_INVOCATION && (error = require_invocation(c)) < 0)
		return error;
	assert(t->scope != SCOPE_INVOCATION || holds_invocation(c));
	return t->fn(c);
}

static int dispatch_handler(apply_ctx *c)
{
	const transition *t = transition_of(c->ev->body_case);
	int error;

	if (t->scope == SCOPE_LEDGER)
		return t->fn(c);
	if ((error = require_open_session(c)) < 0 || *c->duplicate)
		return error;
	if ((error = session_transition(c, t)) < 0 || !c->closed || *c->duplicate)
		return error;
	/* whatever the handler did is discarded with the refused append */
	return refuse(c, DOCKET_ETRANSITION, 8, "session was closed at seq %llu",
		      (unsigned long long)c->st->sess.closed_seq);
}

/* Projection updates every written event of a session shares. The session
 * index gains the event's block when it is the session's first there. */
static int record_session_event(state_txn *st, const docket_event *ev, uint64_t seq)
{
	uint64_t block = seq >> SESSION_BLOCK_SHIFT;
	uint8_t be[4];
	int error;

	assert(st->sess_loaded && strcmp(st->sess_id, ev->session) == 0);
	if (block > UINT32_MAX)
		return docket_error_set(DOCKET_EINVALID, "seq %llu is past the session index",
					(unsigned long long)seq);
	docket_be32_put(be, (uint32_t)block);
	if ((!st->sess.last_seq || st->sess.last_seq >> SESSION_BLOCK_SHIFT != block) &&
	    (error = overlay_defer(&st->ov, st->l->dbi.session_events, OV_ADD_DUP, ev->session,
				   strlen(ev->session), be, sizeof(be))) < 0)
		return error;
	st->sess.last_seq = seq;
	st->sess.events++;
	if (!st->sess.first_time[0])
		state_str_copy(st->sess.first_time, sizeof(st->sess.first_time), ev->time);
	state_str_copy(st->sess.last_time, sizeof(st->sess.last_time), ev->time);
	st->sess_dirty = 1;
	return 0;
}

int state_apply(state_txn *st, docket_event *ev, state_mode mode, uint64_t seq,
		uint64_t *seq_out, int *duplicate, docket_append_result *res)
{
	docket_append_result scratch;
	apply_ctx c;
	int error;

	assert(st && ev && ev->time && seq_out && duplicate);
	memset(&scratch, 0, sizeof(scratch));
	st->payload_ok = 0;
	c.st = st;
	c.ev = ev;
	c.mode = mode;
	c.seq = st->head_seq + 1;
	c.seq_out = seq_out;
	c.duplicate = duplicate;
	c.res = res ? res : &scratch;
	c.closed = 0;
	*duplicate = 0;
	*seq_out = c.seq;
	if (mode == STATE_REBUILD && seq != c.seq)
		return docket_error_set(DOCKET_ECORRUPT, "seq %llu follows seq %llu",
					(unsigned long long)seq, (unsigned long long)st->head_seq);
	if (!*ev->time) {
		if (mode == STATE_REBUILD)
			return refuse(&c, DOCKET_ECORRUPT, 0, "stored event has no time");
		if ((error = stamp_time(st, ev)) < 0)
			return error;
	}
	if ((error = check_epoch(&c)) < 0)
		return error;
	if ((error = dispatch_handler(&c)) < 0)
		return error;
	if (ev->body_case == DOCKET__V1__EVENT__BODY_TOOL_DISPATCHED)
		st->payload_ok = 0; /* the handler assigned attempt and token */
	if (*duplicate) {
		if (*seq_out == 0)
			*seq_out = c.seq - 1; /* no better answer: the head */
		return 0;
	}
	if (st->inv_loaded && ev->invocation && *ev->invocation) {
		st->inv.last_seq = c.seq;
		st->inv_dirty = 1;
	}
	if (ev->session && *ev->session && (error = record_session_event(st, ev, c.seq)) < 0)
		return error;
	return overlay_write_due(&st->ov, st->txn);
}
