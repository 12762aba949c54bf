/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hook.c: one hook event of Claude Code or Codex -> ledger events (record
 * mode), and the answer the client expects (docs/integrations.md).
 *
 *   SessionStart        session.opened; Claude: policy.revised with the
 *                       effective settings when they changed
 *   (any, Claude)       a permission_mode other than the one in force:
 *                       policy.revised with it (track_mode)
 *   PreToolUse          tool.intent (invocation = tool_use_id, tool mapped as
 *                       the importer maps it); enforce: docket's verdict, and
 *                       for a denial its tool.completed denied at once
 *   PermissionRequest   approval.requested for the newest open intent of the
 *                       session with the same tool and args (the event names
 *                       no tool_use_id)
 *   PostToolUse         (approval.settled approved) + tool.dispatched
 *                       (inferred: its provenance says so) + tool.completed ok
 *   PostToolUseFailure  the same with error, or cancelled for an interrupt
 *   PermissionDenied    tool.completed denied
 *   Stop, SubagentStop  the transcript is imported (merged: see
 *                       importers/merge.c) to settle what hooks cannot see,
 *                       then every call still open without a dispatch ends
 *                       denied, with a reason that says it was inferred
 *   SessionEnd          the same, then session.closed
 *
 * A session is opened on first sight whatever the event, so integrating in
 * the middle of a session loses nothing after that point. Every append is
 * one durable transaction; a re-delivered event is a duplicate or a
 * conflict, both harmless here.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


#include "docket/import.h"
#include "integrations_internal.h"
#include "ledger/decision.h"
#include "ledger/ledger_sys.h"
#include "ledger/spool.h"
#include "policy/policy_doc.h"
#include "util/alloc.h"
#include "util/error.h"
#include "util/json.h"

#define SESSION_MAX 256
#define OUTPUT_MAX (64u << 10)
/* How long a hook waits for the writer lock when the spool already holds
 * entries (another hook found the lock held): its records follow them.
 * (The writer thread gets at least 20 ms from its start: ledger/spool.h.) */
#define SPOOL_BUSY_WAIT_MS 5

#if defined(__APPLE__)
#define HOST_PLATFORM "macos"
#elif defined(_WIN32)
#define HOST_PLATFORM "windows"
#else
#define HOST_PLATFORM "linux"
#endif

typedef struct hook_ctx {
	docket_ledger *ledger;
	const docket_hook_options *opts;
	const json_t *ev;          /* the payload */
	const char *name;          /* hook_event_name */
	const char *cwd;
	char session[SESSION_MAX + 1];
	char parent[SESSION_MAX + 1];
	char prov[64];             /* provenance.file of what this event records */
	docket_hook_answer *answer;
	const docket_import_outcome *codex_out;  /* Codex PostToolUse: what tool_response says */
	int spooling;              /* the ledger could not take a record: the rest goes to the spool */
	uint64_t deadline_ms;      /* for the writer lock; 0 until the first append (then set) */
	int wrote;                 /* a transaction of this event committed (it folded the spool) */
	int fresh;                 /* a hook waited for the lock in vain a moment ago (lock_deadline_ex) */
	size_t spool_n;            /* entries waiting in the spool (lock_deadline_ex) */
	char continues[SESSION_MAX + 1]; /* the closed session this event's session continues, or "" */
	int quiet;                 /* nothing to record (an end event of a session already closed) */
	json_t *enforced;          /* the policy docket enforces, as recorded (enforced_doc), or NULL */
	uint32_t carry_from;       /* the revision a new enforced revision follows (note_carry) */
	int direct;                /* spool first, but the next append tries the ledger (append) */
	docket_spool_view *view;   /* the spool as this event reads it (spool_find), or NULL */
} hook_ctx;


static int set_str(json_t *o, const char *k, const char *v)
{
	if (!v || !*v)
		return 0;
	return json_object_set_new(o, k, json_string(v)) < 0 ? docket_error_set_oom() : 0;
}

int docket_client_parse(docket_client *out, const char *name)
{
	if (name && strcmp(name, "claude") == 0)
		*out = DOCKET_CLIENT_CLAUDE;
	else if (name && strcmp(name, "codex") == 0)
		*out = DOCKET_CLIENT_CODEX;
	else
		return docket_error_set(DOCKET_EINVALID, "unknown client \"%s\" (expected claude or codex)",
					name ? name : "");
	return 0;
}

const char *docket_client_name(docket_client client)
{
	return client == DOCKET_CLIENT_CODEX ? "codex" : "claude";
}

void docket_hook_answer_dispose(docket_hook_answer *a)
{
	if (!a)
		return;
	docket_free(a->out);
	docket_free(a->err);
	a->out = a->err = NULL;
}

/* ---- appending ---- */

/* An event skeleton: type, session, invocation, provenance. */
json_t *hook_event_new(const char *type, const char *session, const char *prov, const char *invocation)
{
	json_t *ev = json_pack("{ss ss s{ss si}}", "type", type, "session", session,
			       "provenance", "file", prov, "line", 0);

	if (ev && invocation && set_str(ev, "invocation", invocation) < 0) {
		json_decref(ev);
		return NULL;
	}
	return ev;
}

static json_t *ev_new(const hook_ctx *h, const char *type, const char *invocation)
{
	return hook_event_new(type, h->session, h->prov, invocation);
}

/* tool.dispatched for `id`, its provenance saying the dispatch is inferred
 * (hooks do not see the dispatch moment); NULL when out of memory. */
static json_t *dispatched_inferred(hook_ctx *h, const char *id)
{
	char prov[sizeof(h->prov)];
	json_t *ev;

	memcpy(prov, h->prov, sizeof(prov));
	snprintf(h->prov, sizeof(h->prov), "%.30s (dispatch inferred)", prov);
	ev = ev_new(h, "tool.dispatched", id);
	memcpy(h->prov, prov, sizeof(prov));
	return ev;
}

/* tool.completed denied for `id`, `why`; NULL when out of memory. */
static json_t *denied_event(hook_ctx *h, const char *id, const char *why)
{
	json_t *ev = ev_new(h, "tool.completed", id);

	if (ev && (set_str(ev, "status", "denied") < 0 || set_str(ev, "error", why) < 0)) {
		json_decref(ev);
		return NULL;
	}
	return ev;
}

int hook_append(docket_ledger *ledger, json_t **evs, size_t n)
{
	size_t i;
	int error = 0;

	for (i = 0; i < n; i++)
		if (!evs[i])
			error = docket_error_set_oom();
	if (error == 0)
		error = docket_ledger_append_json(ledger, evs, n, NULL);
	for (i = 0; i < n; i++)
		json_decref(evs[i]);
	return error;
}

/* Errors after which the record can still go to the spool: the writer
 * lock not had in time, the disk, the map's cap. */
static int spoolable(int error)
{
	return error == DOCKET_ESTORAGE || error == DOCKET_EMAPFULL || error == DOCKET_ENOMEM;
}

/* The writer lock's deadline: the caller's, or a short one when the spool
 * already holds entries (the lock was held a moment ago) or a docket writer
 * holds the lock right now; *fresh is set
 * when the lock is held right now, not worth a wait: a docket writer holds
 * it (docket_spool_writer_busy), or a hook waited for it in vain less than
 * DOCKET_SPOOL_FRESH_MS ago (a writer that is not docket). */
/* Bring the deadline forward to `ms` from now, never later than it is. */
static void deadline_within(hook_ctx *h, unsigned ms)
{
	uint64_t soon = docket_spool_now_ms() + ms;

	if (soon < h->deadline_ms)
		h->deadline_ms = soon;
}

/* The spool's records, from the event's view of it (spool_find). */
static int spool_count(hook_ctx *h, size_t *n)
{
	if (!h->view && !(h->view = docket_spool_view_new()))
		return docket_spool_count(h->opts->spool_path, n);
	*n = docket_spool_view_count(h->view, h->opts->spool_path);
	return 0;
}

static uint64_t lock_deadline_ex(hook_ctx *h, int *fresh)
{
	const char *spool = h->opts->spool_path;
	size_t n = 0;

	if (!h->deadline_ms) {
		int busy = spool && docket_spool_writer_busy(spool);

		h->deadline_ms = h->opts->deadline_ms;
		if (spool && spool_count(h, &n) == 0 && n > 0) {
			h->spool_n = n;
			deadline_within(h, SPOOL_BUSY_WAIT_MS);
			h->fresh = busy || docket_spool_held_within(spool, DOCKET_SPOOL_FRESH_MS);
		} else {
			h->fresh = busy;  /* one append + fdatasync beats waiting for its commit and ours */
		}
		docket_error_clear();
	}
	if (fresh)
		*fresh = h->fresh;
	return h->deadline_ms;
}

static uint64_t lock_deadline(hook_ctx *h)
{
	return lock_deadline_ex(h, NULL);
}

/* More entries wait than one transaction with a deadline folds: fold the
 * oldest (DOCKET_SPOOL_FOLD_CAP) on their own; this event's records then
 * follow the rest in the spool, in order. Always 1 (spool). */
static int fold_oldest(hook_ctx *h)
{
	int busy = 0;

	if (docket_spool_fold_by(h->ledger, lock_deadline(h), &busy) < 0 || busy)
		docket_error_clear();
	else
		h->wrote = 1;
	return 1;
}

static int spool_first(const hook_ctx *h)
{
	return h->opts->spool_first && h->opts->spool_path && h->opts->deadline_ms;
}

static int fold_until(hook_ctx *h, uint64_t deadline);

/*
 * One transaction of the event's records, within the budget: the ledger
 * when it can take them before the deadline, else the spool (fsynced). Once
 * one record went to the spool every later one of this event follows it
 * there, so they fold in order.
 */
static int append(hook_ctx *h, json_t **evs, size_t n)
{
	size_t i;
	int busy = 0, error = 0;

	for (i = 0; i < n; i++)
		if (!evs[i])
			error = docket_error_set_oom();
	/* spool first: the journal is the durable record, the fold comes after
	 * the answer; a direct append (records the ledger may refuse as a
	 * re-delivery, tolerated there, an incident once folded) folds the
	 * journal in its own transaction first, so the order holds */
	if (spool_first(h))
		h->spooling = !h->direct;
	h->direct = 0;
	if (error == 0 && !h->spooling && h->opts->deadline_ms && h->opts->spool_path) {
		int fresh = 0;

		(void)lock_deadline_ex(h, &fresh);
		h->spooling = fresh;  /* the lock is held right now: straight to the spool */
		if (!fresh && h->spool_n > DOCKET_SPOOL_FOLD_CAP)
			h->spooling = fold_oldest(h);  /* a large spool: fold some, follow it */
	}
	if (error == 0 && !h->spooling) {
		if (h->opts->deadline_ms)
			error = docket_ledger_append_json_by(h->ledger, evs, n, lock_deadline(h), &busy);
		else
			error = docket_ledger_append_json(h->ledger, evs, n, NULL);
		if (error < 0 && h->opts->spool_path && (busy || spoolable(error)))
			h->spooling = 1;
		if (busy && h->opts->spool_path)
			docket_spool_mark_held(h->opts->spool_path);
		h->wrote |= error == 0;
	}
	if (h->spooling && (error == 0 || busy || spoolable(error))) {
		docket_error_clear();
		if ((error = docket_spool_put(h->opts->spool_path, evs, n)) == 0)
			h->answer->spooled += n;
		docket_spool_view_reset(h->view);  /* the next lookup sees what was appended */
	}
	for (i = 0; i < n; i++)
		json_decref(evs[i]);
	return error;
}

/* Conflicts and transitions mean the ledger already has this (a re-delivery). */
static int tolerate(int error)
{
	if (error == DOCKET_ECONFLICT || error == DOCKET_ETRANSITION) {
		docket_error_clear();
		return 0;
	}
	return error;
}

/* ---- sessions ---- */

static int exists_cb(void *ctx, const docket_session_info *info)
{
	*(int *)ctx = info->closed_seq ? 2 : 1;
	return 0;
}

/* 0: absent, 1: open, 2: closed. */
static int session_state(hook_ctx *h, const char *id, int *out)
{
	int error;

	*out = 0;
	error = docket_ledger_session(h->ledger, id, exists_cb, out);
	return error == DOCKET_ENOTFOUND ? 0 : error;
}

/* session.opened (labels stolen); NULL when out of memory. */
static json_t *session_opened_event(const char *id, const char *runtime, const char *prov, const char *cwd,
				    const char *parent, json_t *labels)
{
	json_t *ev = json_pack("{ss ss ss s{ss si}}", "type", "session.opened", "session", id, "runtime", runtime,
			       "provenance", "file", prov, "line", 0);

	if (!ev || !labels || set_str(ev, "platform", HOST_PLATFORM) < 0 || set_str(ev, "cwd", cwd) < 0 ||
	    set_str(ev, "parent", parent) < 0 || json_object_set(ev, "labels", labels) < 0) {
		json_decref(ev);
		ev = NULL;
	}
	json_decref(labels);
	return ev;
}

int hook_open_session(docket_ledger *ledger, const char *id, const char *runtime, const char *prov,
		      const char *cwd, const char *parent, json_t *labels)
{
	json_t *ev;
	int state = 0, error;

	error = docket_ledger_session(ledger, id, exists_cb, &state);
	if (error == DOCKET_ENOTFOUND) {
		docket_error_clear();
		error = 0;
	}
	if (error < 0 || state != 0) {
		json_decref(labels);
		return error;  /* known: opened before (or closed) */
	}
	if (!(ev = session_opened_event(id, runtime, prov, cwd, parent, labels)))
		return docket_error_set_oom();
	return tolerate(hook_append(ledger, &ev, 1));
}

/* 1 when the spool holds an event of `type` for `session` (`invocation`),
 * and *out (may be NULL) a new reference to the newest: read once per event
 * (docket_spool_view), again after the event appended to the spool. */
static int spool_find(hook_ctx *h, const char *type, const char *session, const char *invocation, json_t **out)
{
	if (!h->view && !(h->view = docket_spool_view_new()))
		return docket_spool_find(h->opts->spool_path, type, session, invocation, out);
	return docket_spool_view_find(h->view, h->opts->spool_path, type, session, invocation, out);
}

/* 1 when the spool holds an event of `type` for `session` (`invocation`). */
static int spooled(hook_ctx *h, const char *type, const char *session, const char *invocation)
{
	const char *path = h->opts->spool_path;

	/* spool first: a stat says whether there is anything to read */
	return path && (!spool_first(h) || docket_spool_nonempty(path)) && spool_find(h, type, session, invocation, NULL);
}

/*
 * The session's state (0 absent, 1 open, 2 closed) from the spool and the
 * ledger, the spool read FIRST: a fold that commits a record and then
 * empties the journal between the two reads leaves it in the ledger read
 * second (read in the other order, it would be in neither).
 */
static int session_state_spooled(hook_ctx *h, const char *id, int *out)
{
	int closed = spooled(h, "session.closed", id, NULL), opened = closed || spooled(h, "session.opened", id, NULL);
	int error = session_state(h, id, out);

	if (error == 0 && closed)
		*out = 2;
	else if (error == 0 && *out == 0 && opened)
		*out = 1;
	return error;
}

/* session.opened for `id` unless the ledger (or the spool) has it; `links`
 * (may be NULL, stolen) are labels that say where the session comes from;
 * `first` (may be NULL, stolen) an event that goes in the same append. */
static int open_session(hook_ctx *h, const char *id, const char *parent, json_t *links, json_t *first)
{
	json_t *labels = links ? links : json_object(), *evs[2] = { NULL, first };
	int state, error;

	if ((error = session_state_spooled(h, id, &state)) < 0 || state != 0) {
		json_decref(labels);
		json_decref(first);
		return error;
	}
	if (labels && (set_str(labels, "capture", "hook") < 0 ||
		       set_str(labels, "transcript", docket_json_str_nonempty(h->ev, "transcript_path")) < 0 ||
		       set_str(labels, "model", docket_json_str_nonempty(h->ev, "model")) < 0)) {
		json_decref(labels);
		labels = NULL;
	}
	evs[0] = session_opened_event(id, h->opts->client == DOCKET_CLIENT_CODEX ? "codex" : "claude-code", h->prov,
				      h->cwd, parent, labels);
	return tolerate(append(h, evs, first ? 2 : 1));
}

/* The labels that link a session to where it comes from: {key: value};
 * NULL when out of memory. */
static json_t *link_labels(const char *key, const char *value)
{
	json_t *o = json_object();

	if (o && set_str(o, key, value) < 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static int is_agent_tool(const char *tool)
{
	return tool && (strcmp(tool, "Task") == 0 || strcmp(tool, "Agent") == 0);
}

static int agent_call(hook_ctx *h, const char *parent, char *out, size_t size);
static json_t *inherited_revision(hook_ctx *h);

/* The session of the event ("<id>/agent-<agent_id>" inside a subagent, as
 * the importer names it), opened on first sight: a continuation with the
 * session it continues, a subagent with its parent and the parent's call
 * that started it (label parent_call). */
static int ensure_session(hook_ctx *h)
{
	char call[SESSION_MAX + 1];
	int error, state;

	if (h->parent[0]) {
		if ((error = open_session(h, h->parent, NULL,
					  h->continues[0] ? link_labels("continues", h->continues) : NULL, NULL)) < 0 ||
		    (error = session_state(h, h->session, &state)) < 0)
			return error;
		if (state != 0)
			return 0;
		if ((error = agent_call(h, h->parent, call, sizeof(call))) < 0)
			return error;
		return open_session(h, h->session, h->parent, call[0] ? link_labels("parent_call", call) : NULL, NULL);
	}
	if (!h->continues[0])
		return open_session(h, h->session, NULL, NULL, NULL);
	return open_session(h, h->session, NULL, link_labels("continues", h->continues), inherited_revision(h));
}

/* ---- policy revisions ----
 *
 * A hook session's revision records what decided its calls: the client's
 * own settings (Claude Code's effective settings under its permission
 * mode) and, under --enforce, the policy docket enforces. With both, the
 * revision is {"all_of":[docket's layer, the client's layer]} (format
 * docket; the strictest verdict of the layers wins, as for serve's
 * operator and client layers): docket's enforced policy first (its YAML,
 * policy_doc_of, as `serve --policy` records an operator's), the client's
 * settings after it. With one of them, it is that one alone. So a replay
 * of the recorded revision reproduces what actually decided: the client's
 * settings and docket's enforcement (docs/integrations.md).
 *
 * The revision is written in the append of the event that first needs it
 * (a PreToolUse under --enforce, a Claude Code SessionStart or mode
 * change), and again only when one layer's content changes; the decisions
 * docket records name it (policy_revision).
 */

typedef struct revision_now {
	uint32_t revision;         /* 0: none */
	const char *format;        /* borrowed: a static name, or from `event` */
	json_t *policy;            /* the recorded document, NULL when none */
	json_t *event;             /* a spooled policy.revised it came from */
} revision_now;

static void revision_now_dispose(revision_now *r)
{
	json_decref(r->policy);
	json_decref(r->event);
	memset(r, 0, sizeof(*r));
}

/* 1 when the spool holds entries this event's view of the ledger lacks. */
static int spool_waiting(hook_ctx *h)
{
	size_t n = 0;

	if (!h->opts->spool_path)
		return 0;
	if (h->spooling)
		return 1;
	if (spool_first(h))
		return docket_spool_nonempty(h->opts->spool_path);  /* a stat: no count */
	if (h->opts->deadline_ms) {
		(void)lock_deadline(h);  /* counts the spool (once per event) */
		return h->spool_n > 0;
	}
	if (docket_spool_count(h->opts->spool_path, &n) < 0)
		docket_error_clear();
	return n > 0;
}

/* The revision in force of session `id` in the ledger (0: none). */
static int ledger_revision(hook_ctx *h, const char *id, revision_now *out)
{
	sess_state ss;
	char *text = NULL;
	int error;

	memset(out, 0, sizeof(*out));
	error = ledger_session_get(h->ledger, id, &ss, &text);
	if (error == DOCKET_ENOTFOUND) {  /* not folded yet: no revision */
		docket_error_clear();
		return 0;
	}
	if (error == 0 && ss.policy_revision) {
		out->revision = ss.policy_revision;
		out->format = docket_policy_format_name(ss.policy_format);
		error = docket_json_parse(&out->policy, text, strlen(text));
	}
	docket_free(text);
	return error;
}

/* The revision in force: the newest one spooled for the session (the
 * spool folds before anything later), else the ledger's. */
static int current_revision(hook_ctx *h, revision_now *out)
{
	memset(out, 0, sizeof(*out));
	if (spool_waiting(h) &&
	    spool_find(h, "policy.revised", h->session, NULL, &out->event)) {
		json_int_t rev = json_integer_value(json_object_get(out->event, "revision"));

		out->revision = rev > 0 && rev <= UINT32_MAX ? (uint32_t)rev : 0;
		out->format = docket_json_str_nonempty(out->event, "format");
		out->policy = json_incref(json_object_get(out->event, "policy"));
		return 0;
	}
	return ledger_revision(h, h->session, out);
}

static int is_format(const char *format, const char *want)
{
	return format && strcmp(format, want) == 0;
}

/* The layers of a hook's recorded revision: *enforced (borrowed, NULL:
 * none) docket's enforced policy; returned, the client's settings as a
 * layer {format, policy} (a new reference; NULL: none, or out of memory
 * when *oom). */
static json_t *revision_layers(const revision_now *r, const json_t **enforced, int *oom)
{
	const json_t *all = json_object_get(r->policy, "all_of");
	const json_t *first = json_array_get(all, 0);
	json_t *client = NULL;

	*enforced = NULL;
	*oom = 0;
	if (!r->policy)
		return NULL;
	if (is_format(r->format, "docket") && json_array_size(all) == 2 &&
	    is_format(docket_json_str_nonempty(first, "format"), "docket")) {
		*enforced = json_object_get(first, "policy");
		return json_incref(json_array_get(all, 1));
	}
	if (is_format(r->format, "docket")) {
		*enforced = r->policy;
		return NULL;
	}
	if (!(client = json_pack("{s:s?, s:O}", "format", r->format, "policy", r->policy)))
		*oom = 1;
	return client;
}

/* The policy docket enforces, as recorded (built once per event). */
static int enforced_doc(hook_ctx *h, const json_t **out)
{
	int error;

	if (!h->enforced && (error = policy_doc_of(&h->enforced, h->opts->policy)) < 0)
		return error;
	*out = h->enforced;
	return 0;
}

/* The document of a revision with `enforced` (may be NULL) and the
 * client's layer (may be NULL; {format, policy}); *format its format. */
static json_t *revision_doc(const json_t *enforced, const json_t *client, const char **format)
{
	if (!enforced) {
		*format = docket_json_str_nonempty(client, "format");
		return json_incref(json_object_get(client, "policy"));
	}
	*format = "docket";
	if (!client)
		return json_incref((json_t *)enforced);
	return policy_doc_compose(enforced, docket_json_str_nonempty(client, "format"), json_object_get(client, "policy"));
}

/* policy.revised `revision` with `policy` (borrowed); NULL when out of memory. */
json_t *hook_revision_fill(json_t *ev, uint32_t revision, const char *format, const json_t *policy,
			   const char *actor, const char *reason)
{
	if (!ev || json_object_set_new(ev, "revision", json_integer(revision)) < 0 ||
	    set_str(ev, "format", format) < 0 || set_str(ev, "actor", actor) < 0 ||
	    set_str(ev, "reason", reason) < 0 || json_object_set(ev, "policy", (json_t *)policy) < 0) {
		json_decref(ev);
		return NULL;
	}
	return ev;
}

static json_t *revision_event(hook_ctx *h, uint32_t revision, const char *format, const json_t *policy,
			      const char *actor, const char *reason)
{
	return hook_revision_fill(ev_new(h, "policy.revised", NULL), revision, format, policy, actor, reason);
}

/*
 * The first revision of a Codex continuation (the next turn): the one in
 * force when the session it continues closed, so the turn's calls have a
 * policy in force (docket's layer and the rollout's settings adopted at the
 * first Stop), in the append that opens it. NULL: none (Claude Code's
 * SessionStart records its own; nothing in force; a read that failed).
 */
static json_t *inherited_revision(hook_ctx *h)
{
	revision_now now;
	json_t *ev = NULL;

	if (h->opts->client != DOCKET_CLIENT_CODEX)
		return NULL;
	if (ledger_revision(h, h->continues, &now) < 0)
		docket_error_clear();
	else if (now.revision)
		ev = revision_event(h, 1, now.format, now.policy, "docket",
				    "the policy in force when the session it continues closed");
	revision_now_dispose(&now);
	return ev;
}

/* policy.revised with the client's settings `policy` (stolen, `format`),
 * under docket's enforced policy when there is one, unless that is the
 * revision in force; *in_force (may be NULL) gets the revision that is it,
 * or 0 when a concurrent writer made that unknown. */
static int revise_policy(hook_ctx *h, json_t *policy, const char *format, const char *reason,
			 uint32_t *in_force)
{
	const json_t *enforced = NULL;
	json_t *client = NULL, *doc = NULL, *ev;
	const char *doc_format = NULL;
	revision_now now;
	int error;

	if (in_force)
		*in_force = 0;
	if ((error = current_revision(h, &now)) < 0 ||
	    (h->opts->policy && (error = enforced_doc(h, &enforced)) < 0))
		goto done;
	if (!(client = json_pack("{s:s, s:O}", "format", format, "policy", policy)) ||
	    !(doc = revision_doc(enforced, client, &doc_format))) {
		error = docket_error_set_oom();
		goto done;
	}
	if (now.policy && is_format(now.format, doc_format) && json_equal(now.policy, doc)) {
		if (in_force)
			*in_force = now.revision;
		goto done;
	}
	if (!(ev = revision_event(h, now.revision + 1, doc_format, doc, docket_client_name(h->opts->client),
				  reason))) {
		error = docket_error_set_oom();
		goto done;
	}
	error = append(h, &ev, 1);
	if (error == 0 && in_force)
		*in_force = now.revision + 1;
	error = tolerate(error);  /* another hook revised it first */
done:
	revision_now_dispose(&now);
	json_decref(client);
	json_decref(doc);
	json_decref(policy);
	return error;
}

/*
 * Under --enforce, before a decision: *rev gets the revision that records
 * docket's enforced policy, and *ev (NULL when it is in force already) the
 * policy.revised that makes it so, to go in the decision's own append
 * (*from: the revision it follows). The client's layer in force stays.
 */
static int enforced_revision(hook_ctx *h, json_t **ev, uint32_t *rev, uint32_t *from)
{
	const json_t *enforced = NULL, *old_enforced;
	json_t *client, *doc = NULL;
	const char *format = NULL;
	revision_now now;
	int error, oom;

	*ev = NULL;
	*rev = *from = 0;
	if (!h->opts->policy)
		return 0;
	if ((error = enforced_doc(h, &enforced)) < 0 || (error = current_revision(h, &now)) < 0)
		return error;
	*from = now.revision;
	client = revision_layers(&now, &old_enforced, &oom);
	if (!oom && old_enforced && json_equal(old_enforced, enforced)) {
		*rev = now.revision;
		goto done;
	}
	if (oom || !(doc = revision_doc(enforced, client, &format)) ||
	    !(*ev = revision_event(h, now.revision + 1, format, doc, "docket",
				   client ? "the policy docket's hook enforces, over the client's settings in force"
					  : "the policy docket's hook enforces")))
		error = docket_error_set_oom();
	else
		*rev = now.revision + 1;
done:
	json_decref(client);
	json_decref(doc);
	revision_now_dispose(&now);
	return error;
}

/* ---- the permission mode (Claude Code) ----
 *
 * Claude Code's events carry the session's permission_mode; a change
 * (shift-tab, ExitPlanMode, /permissions) changes the policy in force, so it
 * is a new policy.revised: the effective settings with that mode, recorded
 * before the event that showed it. Finding the mode in force would mean
 * reading the session on every event; instead a note in the cache
 * directory, "<revision> <mode>", says which mode a revision has. A
 * revision never changes, so a note can be missing or old (then the session
 * is read, and the note rewritten), never wrong.
 */

static int revision_cb(void *ctx, const docket_session_info *info)
{
	*(uint32_t *)ctx = info->policy_revision;
	return 0;
}

/* Spool first: the revision in force, the newest spooled for the session
 * (the fold has not run yet) else the ledger's; 0 when the session is
 * still in the spool without one. */
static int spooled_revision(hook_ctx *h, uint32_t *rev)
{
	json_t *ev = NULL;
	int error;

	*rev = 0;
	if (spool_waiting(h) && spool_find(h, "policy.revised", h->session, NULL, &ev)) {
		json_int_t r = json_integer_value(json_object_get(ev, "revision"));

		*rev = r > 0 && r <= UINT32_MAX ? (uint32_t)r : 0;
		json_decref(ev);
		return 0;
	}
	error = docket_ledger_session(h->ledger, h->session, revision_cb, rev);
	if (error == DOCKET_ENOTFOUND) {
		docket_error_clear();
		error = 0;  /* opened in the spool: no revision yet */
	}
	return error;
}

static int note_path(docket_buf *out, const hook_ctx *h, int dir_only)
{
	uint8_t md[32];
	char hex[33];
	int error;

	if ((error = ledger_sha256(md, h->session, strlen(h->session))) < 0)
		return error;
	docket_hex(hex, md, 16);
	return dir_only ? docket_buf_printf(out, "%s/hook-modes", h->opts->cache_dir)
			: docket_buf_printf(out, "%s/hook-modes/%s", h->opts->cache_dir, hex);
}

/* 1 when the note says revision `rev` has `mode`. */
static int note_says(const hook_ctx *h, uint32_t rev, const char *mode)
{
	docket_buf path = DOCKET_BUF_INIT, text = DOCKET_BUF_INIT, want = DOCKET_BUF_INIT;
	int same = 0;

	if (h->opts->cache_dir && rev && note_path(&path, h, 0) == 0 &&
	    docket_buf_read_path(&text, path.ptr) == 0 && docket_buf_printf(&want, "%u %s\n", rev, mode) == 0)
		same = text.len == want.len && memcmp(text.ptr, want.ptr, want.len) == 0;
	docket_error_clear();  /* no note is no answer */
	docket_buf_dispose(&path);
	docket_buf_dispose(&text);
	docket_buf_dispose(&want);
	return same;
}

/* Best effort: a note that cannot be written costs a read next time. */
static void note_write(const hook_ctx *h, uint32_t rev, const char *mode)
{
	docket_buf dir = DOCKET_BUF_INIT, path = DOCKET_BUF_INIT, tmp = DOCKET_BUF_INIT, text = DOCKET_BUF_INIT;
	int fd = -1;

	if (!h->opts->cache_dir || !rev || note_path(&dir, h, 1) < 0 || note_path(&path, h, 0) < 0 ||
	    docket_buf_printf(&tmp, "%s.%ld", path.ptr, (long)getpid()) < 0 ||
	    docket_buf_printf(&text, "%u %s\n", rev, mode) < 0)
		goto done;
	if (mkdir(dir.ptr, 0700) != 0 && errno != EEXIST)
		goto done;
	if ((fd = open(tmp.ptr, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) < 0)
		goto done;
	if (write(fd, text.ptr, text.len) == (ssize_t)text.len && close(fd) == 0) {
		fd = -1;
		if (rename(tmp.ptr, path.ptr) == 0)
			goto done;
	}
	unlink(tmp.ptr);
done:
	if (fd >= 0)
		close(fd);
	docket_error_clear();
	docket_buf_dispose(&dir);
	docket_buf_dispose(&path);
	docket_buf_dispose(&tmp);
	docket_buf_dispose(&text);
}

/* A revision `to` that only changed docket's enforced layer keeps the
 * client's settings, and so the mode the note says revision `from` has. */
static void note_carry(const hook_ctx *h, uint32_t from, uint32_t to)
{
	docket_buf path = DOCKET_BUF_INIT, text = DOCKET_BUF_INIT, head = DOCKET_BUF_INIT;

	if (h->opts->cache_dir && from && note_path(&path, h, 0) == 0 &&
	    docket_buf_read_path(&text, path.ptr) == 0 && docket_buf_printf(&head, "%u ", from) == 0 &&
	    text.len > head.len + 1 && memcmp(text.ptr, head.ptr, head.len) == 0 && text.ptr[text.len - 1] == '\n') {
		text.ptr[text.len - 1] = '\0';
		note_write(h, to, text.ptr + head.len);
	}
	docket_error_clear();
	docket_buf_dispose(&path);
	docket_buf_dispose(&text);
	docket_buf_dispose(&head);
}

/* policy.revised with the effective settings under `mode`, unless in force. */
static int revise_mode(hook_ctx *h, const char *mode, const char *why)
{
	json_t *files = json_array(), *policy = NULL;
	docket_buf reason = DOCKET_BUF_INIT;
	char *note_mode = NULL;
	uint32_t rev = 0;
	size_t i;
	int error;

	if (!files)
		return docket_error_set_oom();
	if ((error = docket_claude_effective_settings(&policy, h->cwd, mode, files)) < 0)
		goto done;
	error = docket_buf_puts(&reason, why);
	for (i = 0; error == 0 && i < json_array_size(files); i++)
		error = docket_buf_printf(&reason, "%s %s", i ? "," : ":",
					  json_string_value(json_array_get(files, i)));
	/* no mode (SessionStart has none): the settings' defaultMode is in force */
	if (error == 0 && !mode) {
		const char *implied = docket_json_str_nonempty(json_object_get(policy, "permissions"), "defaultMode");

		if (!(mode = note_mode = docket_strdup(implied ? implied : "default")))
			error = docket_error_set_oom();
	}
	if (error == 0)
		error = revise_policy(h, policy, "claude", reason.ptr, &rev);
	else
		json_decref(policy);
	if (error == 0)
		note_write(h, rev, mode);
done:
	docket_free(note_mode);
	docket_buf_dispose(&reason);
	json_decref(files);
	return error;
}

/* The event's permission_mode against the revision in force. */
static int track_mode(hook_ctx *h)
{
	const char *mode = docket_json_str_nonempty(h->ev, "permission_mode");
	docket_buf why = DOCKET_BUF_INIT;
	uint32_t rev = 0;
	int error;

	if (!mode || (error = ensure_session(h)) < 0)
		return mode ? error : 0;
	error = spool_first(h) ? spooled_revision(h, &rev) : docket_ledger_session(h->ledger, h->session, revision_cb, &rev);
	if (error == DOCKET_ENOTFOUND) {
		/* opened in the spool (the writer lock was held): its revision
		 * waits there too; the mode is checked again at the next event */
		docket_error_clear();
		return 0;
	}
	if (error < 0 || note_says(h, rev, mode))
		return error;
	if ((error = docket_buf_printf(&why, "permission mode %.64s (seen at %.32s); effective Claude Code settings",
				       mode, h->name)) == 0)
		error = revise_mode(h, mode, why.ptr);
	docket_buf_dispose(&why);
	return error;
}

/* ---- calls ---- */

static int map_call(const hook_ctx *h, const char **tool, json_t **args)
{
	const char *name = docket_json_str_nonempty(h->ev, "tool_name");

	if (!name)
		return docket_error_set(DOCKET_EINVALID, "%s event without tool_name", h->name);
	return docket_import_map_tool(tool, args,
				      h->opts->client == DOCKET_CLIENT_CODEX ? DOCKET_IMPORT_CODEX
									    : DOCKET_IMPORT_CLAUDE,
				      name, json_object_get(h->ev, "tool_input"), h->cwd);
}

static json_t *intent_event(const hook_ctx *h, const char *id)
{
	const char *tool;
	json_t *args = NULL, *ev;

	if (map_call(h, &tool, &args) < 0)
		return NULL;
	if (!(ev = ev_new(h, "tool.intent", id)) || set_str(ev, "tool", tool) < 0 ||
	    set_str(ev, "turn", docket_json_str_nonempty(h->ev, "turn_id")) < 0 ||
	    json_object_set_new(ev, "args", args) < 0) {
		json_decref(ev);
		return NULL;
	}
	return ev;
}

static const char *call_id(const hook_ctx *h)
{
	return docket_json_str_nonempty(h->ev, "tool_use_id");
}

/* ---- enforce ---- */

int hook_evaluate(const docket_policy *policy, uint32_t revision, const json_t *intent, const char *cwd,
		  const char *client, hook_verdict *vi)
{
	docket_policy_call *call = NULL;
	docket_policy_context *pctx = NULL;
	docket_policy_result *res = NULL;
	/* platform, HOME and user from this process, never from the event (issue 26) */
	json_t *cj = json_pack("{ss ss}", "platform", HOST_PLATFORM, "client", client ? client : "mcp");
	json_t *env = json_object();
	const char *rule, *text, *home = getenv("HOME"), *user = getenv("USER");
	unsigned line = 0;
	int error;

	if (!cj || !env || set_str(cj, "cwd", cwd) < 0 ||
	    (cwd && json_object_set_new(cj, "workspace_roots", json_pack("[s]", cwd)) < 0) ||
	    set_str(env, "HOME", home && home[0] == '/' ? home : NULL) < 0 || set_str(env, "USER", user) < 0 ||
	    json_object_set(cj, "env", env) < 0) {
		error = docket_error_set_oom();
		goto done;
	}
	if ((error = docket_policy_call_from_json(&call, intent)) < 0 ||
	    (error = docket_policy_context_from_json(&pctx, cj)) < 0 ||
	    (error = docket_policy_result_new(&res)) < 0 ||
	    (error = docket_policy_eval_enforced(res, policy, call, pctx)) < 0)
		goto done;
	vi->verdict = docket_policy_result_verdict(res);
	rule = docket_policy_result_deciding_rule(res, &line);
	text = docket_policy_result_reason_count(res) ? docket_policy_result_reason_text(res, 0) : "";
	if (rule)
		snprintf(vi->reason, sizeof(vi->reason), "docket policy: %s (rule %s)", text, rule);
	else
		snprintf(vi->reason, sizeof(vi->reason), "docket policy: %s", text);
	/* the decision's reasons are codes; the answer above is for people */
	if (vi->verdict != DOCKET_VERDICT_ALLOWED)
		error = decision_build(&vi->decision, res, revision);
done:
	json_decref(env);
	json_decref(cj);
	docket_policy_result_free(res);
	docket_policy_context_free(pctx);
	docket_policy_call_free(call);
	return error;
}

/* The client's answer to a denial or a question at PreToolUse. */
static int answer_pre(hook_ctx *h, const char *decision, const char *reason)
{
	json_t *o = json_pack("{s{ss ss ss}}", "hookSpecificOutput", "hookEventName", "PreToolUse",
			      "permissionDecision", decision, "permissionDecisionReason", reason);
	docket_buf b = DOCKET_BUF_INIT, msg = DOCKET_BUF_INIT;
	int error;

	if (!o)
		return docket_error_set_oom();
	/* Claude Code shows systemMessage to the user (the reason goes to the
	 * model): a block names docket and the rule there too */
	if (h->opts->client == DOCKET_CLIENT_CLAUDE &&
	    (docket_buf_printf(&msg, "docket %s %s: %s", strcmp(decision, "deny") == 0 ? "blocked" : "asks about",
			       docket_json_str_nonempty(h->ev, "tool_name") ? docket_json_str_nonempty(h->ev, "tool_name") : "a call", reason) < 0 ||
	     json_object_set_new(o, "systemMessage", json_string(msg.ptr)) < 0)) {
		docket_buf_dispose(&msg);
		json_decref(o);
		return docket_error_set_oom();
	}
	docket_buf_dispose(&msg);
	error = docket_json_dump(&b, o);
	json_decref(o);
	if (error == 0)
		error = docket_buf_putc(&b, '\n');
	if (error < 0) {
		docket_buf_dispose(&b);
		return error;
	}
	h->answer->out = b.ptr;
	return 0;
}

/*
 * One try at recording a PreToolUse: the intent, under --enforce docket's
 * decision (naming the revision of the policy it enforces, recorded in the
 * same append when it is not in force yet) and a denial's outcome. *revised
 * is 1 when the append carried a revision (another hook may have written a
 * different one first: then it is tried again).
 */
static int pre_tool_use_once(hook_ctx *h, const char *id, hook_verdict *vi, int *ask, int *revised)
{
	json_t *evs[3] = { NULL, NULL, NULL };
	uint32_t rev = 0, from = 0;
	size_t n = 0;
	int error;

	memset(vi, 0, sizeof(*vi));
	*ask = *revised = 0;
	if ((error = enforced_revision(h, &evs[0], &rev, &from)) < 0)
		return error;
	n = evs[0] ? 1 : 0;
	*revised = evs[0] != NULL;
	if (!(evs[n] = intent_event(h, id))) {
		json_decref(evs[0]);
		return docket_error_last()->code ? docket_error_last()->code : docket_error_set_oom();
	}
	if (h->opts->policy &&
	    (error = hook_evaluate(h->opts->policy, rev, evs[n], h->cwd,
				   h->opts->client == DOCKET_CLIENT_CODEX ? "codex" : "claude", vi)) < 0) {
		json_decref(evs[0]);
		json_decref(evs[1]);
		return error;
	}
	if (*revised && h->opts->client == DOCKET_CLIENT_CLAUDE)
		h->carry_from = from;
	if (h->opts->policy && vi->verdict != DOCKET_VERDICT_ALLOWED) {
		/* Codex rejects "ask": a call docket would ask about is denied there */
		*ask = vi->verdict == DOCKET_VERDICT_APPROVAL_REQUIRED && h->opts->client == DOCKET_CLIENT_CLAUDE;
		if (!*ask)
			json_object_set_new(vi->decision, "verdict", json_string("denied"));
		if (json_object_set_new(evs[n], "decision", vi->decision) < 0)
			error = docket_error_set_oom();
		vi->decision = NULL;
		if (!*ask)
			evs[n + 1] = denied_event(h, id, vi->reason);
		n += *ask ? 1 : 2;
	} else {
		n++;
	}
	if (error < 0) {
		while (n > 0)
			json_decref(evs[--n]);
		return error;
	}
	return append(h, evs, n);
}

/* Tries: a revision another hook wrote in between is read on the next. */
#define PRE_TOOL_USE_TRIES 3

static int on_pre_tool_use(hook_ctx *h)
{
	const char *id = call_id(h);
	hook_verdict vi;
	int ask = 0, revised = 0, error;

	if (!id)
		return docket_error_set(DOCKET_EINVALID, "PreToolUse event without tool_use_id");
	if ((error = ensure_session(h)) < 0)
		return error;
	for (int i = 0; i < PRE_TOOL_USE_TRIES; i++) {
		error = pre_tool_use_once(h, id, &vi, &ask, &revised);
		if (!revised || (error != DOCKET_ECONFLICT && error != DOCKET_ETRANSITION))
			break;
		docket_error_clear();
	}
	if (error == 0 && revised && h->carry_from)
		note_carry(h, h->carry_from, h->carry_from + 1);
	if ((error = tolerate(error)) < 0)
		return error;
	if (!h->opts->policy || vi.verdict == DOCKET_VERDICT_ALLOWED)
		return 0;
	return answer_pre(h, ask ? "ask" : "deny", vi.reason);
}

/* ---- finding an open call ---- */

typedef struct pending_ctx {
	const char *invocation;   /* look for this one, or NULL: collect all */
	char state[24];
	char request[SESSION_MAX + 1];
	uint64_t intent_seq;
	int found;
	json_t *all;              /* with invocation NULL: [{invocation,state,request,intent_seq}] */
} pending_ctx;

static int pending_cb(void *ctx, const docket_pending_info *info)
{
	pending_ctx *p = ctx;

	if (p->all) {
		json_t *o = json_pack("{ss ss ss ss sI}", "invocation", info->invocation, "state", info->state,
				      "request", info->open_request ? info->open_request : "", "tool", info->tool,
				      "intent_seq", (json_int_t)info->intent_seq);

		return !o || json_array_append_new(p->all, o) < 0 ? docket_error_set_oom() : 0;
	}
	if (strcmp(info->invocation, p->invocation) != 0)
		return 0;
	snprintf(p->state, sizeof(p->state), "%s", info->state);
	snprintf(p->request, sizeof(p->request), "%s", info->open_request);
	p->intent_seq = info->intent_seq;
	p->found = 1;
	return 1;
}

/* The state of a pending call; found 0 when it has no intent or is complete. */
static int find_pending(hook_ctx *h, const char *invocation, pending_ctx *p)
{
	int error;

	memset(p, 0, sizeof(*p));
	p->invocation = invocation;
	error = docket_ledger_pending(h->ledger, h->session, pending_cb, p);
	return error > 0 ? 0 : error;
}

/* The newest open Agent/Task call of `parent`: the one that started a
 * subagent seen for the first time (its PostToolUse comes after the
 * subagent ends). "" when there is none. */
static int agent_call(hook_ctx *h, const char *parent, char *out, size_t size)
{
	pending_ctx p;
	int error;

	out[0] = '\0';
	memset(&p, 0, sizeof(p));
	if (!(p.all = json_array()))
		return docket_error_set_oom();
	if ((error = docket_ledger_pending(h->ledger, parent, pending_cb, &p)) < 0) {
		json_decref(p.all);
		return error;
	}
	for (size_t i = json_array_size(p.all); i-- > 0;) {
		const json_t *e = json_array_get(p.all, i);

		if (is_agent_tool(docket_json_str_nonempty(e, "tool"))) {
			snprintf(out, size, "%s", docket_json_str_nonempty(e, "invocation"));
			break;
		}
	}
	json_decref(p.all);
	return 0;
}

typedef struct intent_ctx {
	json_t *intent;
} intent_ctx;

static int intent_cb(void *ctx, uint64_t seq, json_t *ev)
{
	intent_ctx *i = ctx;

	(void)seq;
	i->intent = json_incref(ev);
	return 1;
}

static int on_permission_request(hook_ctx *h)
{
	docket_read_options ro = DOCKET_READ_OPTIONS_INIT;
	pending_ctx p;
	json_t *want = NULL, *ev;
	const char *match = NULL;
	size_t i;
	int error;

	memset(&p, 0, sizeof(p));
	if ((error = ensure_session(h)) < 0)
		return error;
	if (!(p.all = json_array()) || !(want = intent_event(h, "x"))) {
		error = docket_error_last()->code ? docket_error_last()->code : docket_error_set_oom();
		goto done;
	}
	if ((error = docket_ledger_pending(h->ledger, h->session, pending_cb, &p)) < 0)
		goto done;
	/* newest first: the request is for the call the client just announced */
	for (i = json_array_size(p.all); i-- > 0 && !match;) {
		const json_t *e = json_array_get(p.all, i);
		intent_ctx ic = { NULL };
		const char *st = docket_json_str_nonempty(e, "state");

		if (!st || (strcmp(st, "undecided") != 0 && strcmp(st, "needs_approval") != 0))
			continue;
		ro.since = (uint64_t)json_integer_value(json_object_get(e, "intent_seq"));
		ro.limit = 1;
		if ((error = docket_ledger_read_json(h->ledger, &ro, intent_cb, &ic)) < 0)
			goto done;
		if (ic.intent && json_equal(json_object_get(ic.intent, "tool"), json_object_get(want, "tool")) &&
		    json_equal(json_object_get(ic.intent, "args"), json_object_get(want, "args")))
			match = docket_json_str_nonempty(e, "invocation");
		json_decref(ic.intent);
	}
	if (!match)
		goto done;  /* a request for a call docket never saw: nothing to join */
	if (!(ev = ev_new(h, "approval.requested", match)) || set_str(ev, "request", "r1") < 0 ||
	    set_str(ev, "reviewer", "user") < 0) {
		json_decref(ev);
		error = docket_error_set_oom();
		goto done;
	}
	error = tolerate(append(h, &ev, 1));
done:
	json_decref(want);
	json_decref(p.all);
	return error;
}

/* The output text of a tool_response: Bash's stdout/stderr, a string, or JSON. */
static int response_text(docket_buf *out, const json_t *resp)
{
	const char *so = docket_json_str_nonempty(resp, "stdout"), *se = docket_json_str_nonempty(resp, "stderr");
	int error = 0;

	if (json_is_string(resp))
		return docket_buf_puts(out, json_string_value(resp));
	if (so || se) {
		if (so)
			error = docket_buf_puts(out, so);
		if (error == 0 && so && se)
			error = docket_buf_putc(out, '\n');
		if (error == 0 && se)
			error = docket_buf_puts(out, se);
		return error;
	}
	return resp ? docket_json_dump(out, resp) : 0;
}

json_t *hook_bounded(const char *s, size_t len)
{
	if (len > OUTPUT_MAX) {
		len = OUTPUT_MAX;
		while (len > 0 && ((unsigned char)s[len] & 0xc0) == 0x80)
			len--;
	}
	return json_stringn(s, len);
}

static json_t *settle_event(hook_ctx *h, const char *id, const char *request, const char *result,
			    const char *reason)
{
	json_t *ev = ev_new(h, "approval.settled", id);

	if (ev && (set_str(ev, "request", request) < 0 || set_str(ev, "result", result) < 0 ||
		   set_str(ev, "reason", reason) < 0)) {
		json_decref(ev);
		return NULL;
	}
	return ev;
}

/* fn for each call of the session without an outcome (the pending index:
 * {invocation, state, request, tool, intent_seq}), until one fails. */
typedef int (*pending_fn)(hook_ctx *h, const json_t *call);

static int each_pending(hook_ctx *h, pending_fn fn)
{
	pending_ctx p;
	size_t i;
	int error;

	memset(&p, 0, sizeof(p));
	if (!(p.all = json_array()))
		return docket_error_set_oom();
	error = docket_ledger_pending(h->ledger, h->session, pending_cb, &p);
	for (i = 0; error >= 0 && i < json_array_size(p.all); i++)
		error = fn(h, json_array_get(p.all, i));
	json_decref(p.all);
	return error < 0 ? error : 0;
}

/* The end of a call the client reports: `status` ok/error/cancelled/denied. */
static int finish_call(hook_ctx *h, const char *status, const char *error_text, int ran)
{
	const char *id = call_id(h);
	const json_t *dur = json_object_get(h->ev, "duration_ms");
	docket_buf text = DOCKET_BUF_INIT;
	json_t *evs[4] = { NULL, NULL, NULL, NULL }, *done;
	pending_ctx p;
	size_t n = 0;
	int error, intent_spooled;

	if (!id)
		return docket_error_set(DOCKET_EINVALID, "%s event without tool_use_id", h->name);
	/* the spool read before the ledger (session_state_spooled) */
	intent_spooled = spooled(h, "tool.intent", h->session, id);
	if ((error = ensure_session(h)) < 0 || (error = find_pending(h, id, &p)) < 0)
		return error;
	/* a call asked about in the spool: its settlement needs its state */
	if (!(p.found && strcmp(p.state, "awaiting_approval") == 0) &&
	    spooled(h, "approval.requested", h->session, id) &&
	    fold_until(h, h->opts->deadline_ms) && (error = find_pending(h, id, &p)) < 0)
		return error;
	if (!p.found && !intent_spooled) {
		evs[n++] = intent_event(h, id);  /* no PreToolUse seen; a completed call conflicts */
		h->direct = 1;
	}
	if (p.found && strcmp(p.state, "awaiting_approval") == 0)
		evs[n++] = settle_event(h, id, p.request,
					ran ? "approved" : strcmp(status, "cancelled") == 0 ? "aborted" : "denied",
					ran ? "inferred: the client reports the call ran" : NULL);
	if (ran && !(p.found && strcmp(p.state, "in_doubt") == 0))
		evs[n++] = dispatched_inferred(h, id);
	/* status NULL: the outcome is not known yet (Codex: see on_codex_post) */
	done = status ? (evs[n++] = ev_new(h, "tool.completed", id)) : NULL;
	if (status && !done)
		error = docket_error_set_oom();
	if (done && ((error = set_str(done, "status", status)) < 0 ||
		     (error = set_str(done, "error", error_text)) < 0 ||
		     (json_is_integer(dur) && json_integer_value(dur) >= 0 &&
		      json_object_set(done, "duration_ms", (json_t *)dur) < 0) ||
		     (h->codex_out && h->codex_out->has_exit &&
		      json_object_set_new(done, "exit_code", json_integer(h->codex_out->exit_code)) < 0) ||
		     (h->codex_out && !json_is_integer(dur) && h->codex_out->duration_ms >= 0 &&
		      json_object_set_new(done, "duration_ms", json_integer(h->codex_out->duration_ms)) < 0) ||
		     (error = response_text(&text, json_object_get(h->ev, "tool_response"))) < 0 ||
		     (text.len && json_object_set_new(done, "output", hook_bounded(text.ptr, text.len)) < 0)))
		error = error < 0 ? error : docket_error_set_oom();
	docket_buf_dispose(&text);
	if (error < 0) {
		while (n > 0)
			json_decref(evs[--n]);
		return error;
	}
	return tolerate(append(h, evs, n));
}

/*
 * Codex's PostToolUse reports every call that ended, whatever its end, and
 * its tool_response says how when it can (the importer's rules: an exit
 * code, the user's rejection, Codex's own refusal, "aborted"). For a shell
 * call 0.171 sends only the output text, no exit code: then the rollout
 * says it (its item_completed / function_call_output for the call, read
 * from the file's tail), and when the rollout does not have it yet the call
 * is recorded dispatched with no outcome, which the Stop-time import of the
 * rollout gives it. `false` is never recorded ok.
 */
static int on_codex_post(hook_ctx *h)
{
	const char *tool = docket_json_str_nonempty(h->ev, "tool_name"), *path = docket_json_str_nonempty(h->ev, "transcript_path");
	docket_import_outcome o, r;
	int error;

	if ((error = docket_import_codex_outcome(&o, json_object_get(h->ev, "tool_response"))) < 0)
		return error;
	if (!o.has_exit && o.ran && strcmp(o.status, "ok") == 0 && tool && strcmp(tool, "Bash") == 0) {
		error = path && call_id(h) ? docket_import_codex_rollout_outcome(&r, path, call_id(h)) : DOCKET_ENOTFOUND;
		if (error < 0 && error != DOCKET_ENOTFOUND)
			return error;
		docket_error_clear();
		if (error == DOCKET_ENOTFOUND)
			return finish_call(h, NULL, NULL, 1);  /* dispatched; its outcome comes at Stop */
		o = r;
	}
	h->codex_out = &o;
	error = finish_call(h, o.status, o.error, o.ran);
	h->codex_out = NULL;
	return error;
}

static int on_post_failure(hook_ctx *h)
{
	int interrupt = json_is_true(json_object_get(h->ev, "is_interrupt"));

	return finish_call(h, interrupt ? "cancelled" : "error",
			   interrupt ? "interrupted by the user" : docket_json_str_nonempty(h->ev, "error"), 1);
}

static int on_permission_denied(hook_ctx *h)
{
	char why[512];

	snprintf(why, sizeof(why), "denied by %s%s%.400s", docket_client_name(h->opts->client),
		 docket_json_str_nonempty(h->ev, "reason") ? ": " : "", docket_json_str_nonempty(h->ev, "reason") ? docket_json_str_nonempty(h->ev, "reason") : "");
	return finish_call(h, "denied", why, 0);
}

/* ---- Stop / SessionEnd ---- */

typedef struct import_job {
	docket_import_format format;
	char *path;
} import_job;

static void import_job_free(void *p)
{
	import_job *j = p;

	docket_free(j->path);
	docket_free(j);
}

static int import_job_run(docket_ledger *ledger, void *p)
{
	docket_import_options io = DOCKET_IMPORT_OPTIONS_INIT;
	docket_import_stats stats;
	import_job *j = p;
	int error;

	memset(&stats, 0, sizeof(stats));
	error = docket_import_file(ledger, j->format, j->path, &io, &stats);
	return error == DOCKET_ENOTFOUND ? (docket_error_clear(), 0) : error;
}

typedef struct first_session {
	char id[SESSION_MAX + 1];
} first_session;

static int first_session_cb(void *ctx, json_t *ev)
{
	first_session *f = ctx;
	const char *id = docket_json_str_nonempty(ev, "session");

	if (!f->id[0] && id)
		snprintf(f->id, sizeof(f->id), "%s", id);
	json_decref(ev);
	return 0;
}

/*
 * A Codex rollout is imported into the live session only when it records
 * that session (its session_meta, the first line): a transcript_path that
 * names another session's rollout would import that session instead, and
 * adopt its settings nowhere. A rollout that cannot be read is left to the
 * import (which says why).
 */
static int rollout_of_session(hook_ctx *h, const char *path)
{
	docket_import_stats stats;
	first_session f = { "" };
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	FILE *fp;
	int error = 0;

	if (h->opts->client != DOCKET_CLIENT_CODEX || !(fp = fopen(path, "r")))
		return 0;
	memset(&stats, 0, sizeof(stats));
	if ((len = getline(&line, &cap, fp)) > 0 &&
	    (error = docket_import_buffer(DOCKET_IMPORT_CODEX, path, line, (size_t)len, NULL, first_session_cb, &f,
					  &stats)) == 0 &&
	    f.id[0] && strcmp(f.id, docket_json_str_nonempty(h->ev, "session_id")) != 0)
		error = docket_error_set(DOCKET_EINVALID, "%s is the rollout of session %s, not of %s", path, f.id,
					 docket_json_str_nonempty(h->ev, "session_id"));
	free(line);
	fclose(fp);
	return error;
}

/*
 * The transcript, merged into the live session, within the budget: an
 * import needs the writer lock, and when it cannot have it in time (or the
 * event's records went to the spool) it is left to the next Stop or to
 * `docket import`. A continuation is recorded by hooks alone: its
 * transcript is the closed session's file, which the ledger cannot extend.
 */
static int import_transcript(hook_ctx *h)
{
	const char *path = docket_json_str_nonempty(h->ev, "transcript_path");
	import_job *j;
	int busy = 0, error;

	if (!path || h->spooling || h->continues[0] || strstr(h->session, "/continued-"))
		return 0;
	if ((error = rollout_of_session(h, path)) < 0)
		return error;
	if (!(j = docket_calloc(1, sizeof(*j))) || !(j->path = docket_strdup(path))) {
		docket_free(j);
		return docket_error_set_oom();
	}
	j->format = h->opts->client == DOCKET_CLIENT_CODEX ? DOCKET_IMPORT_CODEX : DOCKET_IMPORT_CLAUDE;
	if (!h->opts->deadline_ms) {
		error = import_job_run(h->ledger, j);
		import_job_free(j);
		return error;
	}
	error = docket_ledger_write_by(h->ledger, import_job_run, j, import_job_free, lock_deadline(h), &busy);
	if (busy) {
		h->spooling = h->opts->spool_path != NULL;
		docket_error_clear();
		return 0;
	}
	return error;
}

/* A call of the session still open and never dispatched ends denied. */
static int close_open_call(hook_ctx *h, const json_t *e)
{
	const char *st = docket_json_str_nonempty(e, "state"), *id = docket_json_str_nonempty(e, "invocation");
	json_t *evs[2] = { NULL, NULL };
	size_t n = 0;
	char why[160];

	if (!st || !id || strcmp(st, "in_doubt") == 0)
		return 0;  /* dispatched: the client may still report it */
	snprintf(why, sizeof(why), "inferred at %s: no hook reported an outcome (blocked, or refused at a prompt)",
		 h->name);
	if (strcmp(st, "awaiting_approval") == 0)
		evs[n++] = settle_event(h, id, docket_json_str_nonempty(e, "request"), "denied", why);
	evs[n++] = denied_event(h, id, why);
	return tolerate(append(h, evs, n));
}

/* A transcript that cannot be imported must not leave calls open for
 * ever: the failure is reported (stderr) and the calls are closed. */
static int import_or_warn(hook_ctx *h)
{
	docket_buf msg = DOCKET_BUF_INIT;
	int error = import_transcript(h);

	if (error == 0 || error == DOCKET_ENOMEM)
		return error;
	if (docket_buf_printf(&msg, "docket: the transcript was not imported (%s); calls without an outcome "
			      "are closed as inferred\n", docket_error_last()->message) < 0)
		return DOCKET_ENOMEM;
	docket_error_clear();
	docket_free(h->answer->err);
	h->answer->err = msg.ptr;
	return 0;
}

/*
 * A SessionStart for a session still open, from a new client process (not
 * Claude Code's own after compacting): the client that ran it ended
 * without SessionEnd (killed, or a Codex turn cut short) and this one
 * resumes it. Its calls without an outcome are settled now (issue 27):
 *
 *   let through at PreToolUse, no prompt seen   tool.dispatched, "dispatch
 *     (undecided, or allowed not dispatched)    inferred": in_doubt, never
 *                                               "ask for approval" again
 *   a prompt nobody answered (awaiting)         approval.settled aborted,
 *                                               tool.completed denied
 *   docket asked, the prompt never came         tool.completed denied
 *
 * The dispatch is recorded here, not at the allow answer: after docket lets
 * a call go the client may still prompt (PermissionRequest), and a dispatch
 * cannot be taken back. A client that went on to Stop reported every call
 * it ran; one that did not may have run it: in doubt is the truthful state
 * (the recovery mode, never_auto_retry, keeps anyone from running it again).
 * `docket recover` settles the same way when no resume comes.
 */
static int settle_orphan(hook_ctx *h, const json_t *e)
{
	const char *st = docket_json_str_nonempty(e, "state"), *id = docket_json_str_nonempty(e, "invocation");
	const char *why = "the client ended before its prompt was answered";
	json_t *evs[2] = { NULL, NULL };
	size_t n = 0;

	if (!st || !id || strcmp(st, "in_doubt") == 0 || strcmp(st, "refused") == 0)
		return 0;
	if (strcmp(st, "undecided") == 0 || strcmp(st, "ready") == 0) {
		evs[n++] = dispatched_inferred(h, id);
	} else {
		if (strcmp(st, "awaiting_approval") == 0)
			evs[n++] = settle_event(h, id, docket_json_str_nonempty(e, "request"), "aborted", why);
		evs[n++] = denied_event(h, id, why);
	}
	return tolerate(append(h, evs, n));
}

/* A SessionStart of a new client process: Claude Code also sends one, in
 * the same process, after compacting (source "compact") or /clear. */
static int new_process(const hook_ctx *h)
{
	const char *source = docket_json_str_nonempty(h->ev, "source");

	return !source || (strcmp(source, "compact") != 0 && strcmp(source, "clear") != 0);
}

static int on_session_start(hook_ctx *h)
{
	int error, state = 0;

	if ((error = session_state(h, h->session, &state)) < 0 || (error = ensure_session(h)) < 0 ||
	    (state == 1 && new_process(h) && (error = each_pending(h, settle_orphan)) < 0) ||
	    h->opts->client != DOCKET_CLIENT_CLAUDE)
		return error;
	return revise_mode(h, docket_json_str_nonempty(h->ev, "permission_mode"), "effective Claude Code settings");
}

/* tool.completed for `id` from what the rollout says (Codex); NULL when
 * out of memory. */
static json_t *rollout_completed(hook_ctx *h, const char *id, const docket_import_outcome *o)
{
	json_t *ev = ev_new(h, "tool.completed", id);

	if (ev && (set_str(ev, "status", o->status) < 0 || set_str(ev, "error", o->error) < 0 ||
		   (o->has_exit && json_object_set_new(ev, "exit_code", json_integer(o->exit_code)) < 0) ||
		   (o->duration_ms >= 0 && json_object_set_new(ev, "duration_ms", json_integer(o->duration_ms)) < 0))) {
		json_decref(ev);
		return NULL;
	}
	return ev;
}

/*
 * Codex at Stop: a call recorded dispatched whose outcome the rollout did
 * not have at PostToolUse gets it now, read from the rollout's tail for
 * that call alone. The Stop-time import does the same for the first turn;
 * a later turn is a continuation (the session closes at every Stop), which
 * the import does not extend, so this is what gives its calls their real
 * outcomes. A call the rollout still says nothing about stays in doubt.
 */
static int settle_from_rollout_call(hook_ctx *h, const json_t *e)
{
	const char *id = docket_json_str_nonempty(e, "invocation"), *st = docket_json_str_nonempty(e, "state");
	docket_import_outcome o;
	json_t *ev;

	if (!id || !st || strcmp(st, "in_doubt") != 0)
		return 0;
	if (docket_import_codex_rollout_outcome(&o, docket_json_str_nonempty(h->ev, "transcript_path"), id) < 0) {
		/* not there (yet), or a rollout it cannot read: in doubt it stays */
		docket_error_clear();
		return 0;
	}
	if (!(ev = rollout_completed(h, id, &o)))
		return docket_error_set_oom();
	return tolerate(append(h, &ev, 1));
}

static int settle_from_rollout(hook_ctx *h)
{
	if (h->opts->client != DOCKET_CLIENT_CODEX || !docket_json_str_nonempty(h->ev, "transcript_path") || h->spooling)
		return 0;
	return each_pending(h, settle_from_rollout_call);
}

static int on_stop(hook_ctx *h, int end)
{
	json_t *ev;
	int error, state;

	if ((error = ensure_session(h)) < 0 || (error = import_or_warn(h)) < 0 ||
	    (error = settle_from_rollout(h)) < 0 || (error = each_pending(h, close_open_call)) < 0 || !end)
		return error;
	if ((error = session_state_spooled(h, h->session, &state)) < 0)
		return error;  /* opened in the spool: closed there after it */
	if (state != 1)
		return error;
	ev = ev_new(h, "session.closed", NULL);
	if (ev && set_str(ev, "reason", docket_json_str_nonempty(h->ev, "reason")) < 0) {
		json_decref(ev);
		ev = NULL;
	}
	h->direct = 1;  /* refused while a call has no outcome: tolerated there, not an incident */
	return tolerate(append(h, &ev, 1));
}

/* ---- dispatch ---- */

static int parse_event(json_t **out, const char *input, size_t len)
{
	json_t *ev = NULL;
	size_t i = 0;
	int error;

	while (i < len && (input[i] == ' ' || input[i] == '\t' || input[i] == '\n' || input[i] == '\r'))
		i++;
	if (i == len)
		return docket_error_set(DOCKET_EINVALID, "empty hook input: the client sent nothing on stdin "
					"(expected one JSON object with hook_event_name and session_id)");
	if ((error = docket_json_parse(&ev, input, len)) < 0) {
		docket_error_prefix("hook input is not JSON: ");
		return error;
	}
	if (!json_is_object(ev) || !docket_json_str_nonempty(ev, "hook_event_name") || !docket_json_str_nonempty(ev, "session_id")) {
		json_decref(ev);
		return docket_error_set(DOCKET_EINVALID,
					"not a hook event (an object with hook_event_name and session_id)");
	}
	*out = ev;
	return 0;
}

int docket_hook_blocks(const char *input, size_t len)
{
	json_t *ev = NULL;
	const char *name;
	int blocks;

	if (parse_event(&ev, input, len) < 0) {
		docket_error_clear();
		return 1;
	}
	name = docket_json_str_nonempty(ev, "hook_event_name");
	blocks = docket_hook_event_blocks(name);
	json_decref(ev);
	return blocks;
}

int docket_hook_event_blocks(const char *name)
{
	return strcmp(name, "PreToolUse") == 0 || strcmp(name, "PermissionRequest") == 0;
}

/* Codex closes its session at every Stop (it has no SessionEnd), so an
 * interactive Codex session is one continuation per turn: many of them. */
#define CONTINUATIONS_MAX (1 << 24)

static int is_end_event(const char *name)
{
	return strcmp(name, "Stop") == 0 || strcmp(name, "SubagentStop") == 0 || strcmp(name, "SessionEnd") == 0;
}

/* The name of continuation n of `sid` (n 1: sid itself). */
static int continuation(char *out, size_t size, const char *sid, uint32_t n)
{
	int len = n < 2 ? snprintf(out, size, "%s", sid) : snprintf(out, size, "%s/continued-%u", sid, n);

	if (len < 0 || (size_t)len >= size)
		return docket_error_set(DOCKET_EINVALID, "session_id longer than %d bytes", SESSION_MAX);
	return 0;
}

/* *closed: 1 when continuation n of `sid` is closed. */
static int continuation_closed(hook_ctx *h, const char *sid, uint32_t n, int *closed)
{
	char id[SESSION_MAX + 1];
	int error, state;

	/* closed in the spool too (spool first: the fold has not run yet) */
	if ((error = continuation(id, sizeof(id), sid, n)) < 0 || (error = session_state_spooled(h, id, &state)) < 0)
		return error;
	*closed = state == 2;
	return 0;
}

/*
 * The top-level session of the event. A session id whose session was
 * closed (SessionEnd; for Codex, every Stop) and is used again (claude
 * --continue / --resume, codex exec resume, the next Codex turn) goes on in
 * a continuation, "<id>/continued-<n>" (n = 2, 3 ...; the first one not
 * closed), opened with the label continues=<the session before it>: a
 * closed session stays closed (invariant 8), and no later call is dropped.
 * An end event (Stop, SessionEnd) for a session already closed, with no
 * continuation open, records nothing. Continuations are closed in order
 * (one opens only after the one before it closed), so the first one not
 * closed is found by doubling then halving: O(log n) lookups.
 */
static int resolve_top(hook_ctx *h, const char *sid, char *top, size_t size)
{
	uint32_t lo = 1, hi = 2;  /* lo closed; hi: the first not closed is at most hi once found */
	int error, closed, state;

	if ((error = continuation_closed(h, sid, 1, &closed)) < 0 || !closed)
		return error < 0 ? error : continuation(top, size, sid, 1);
	for (;;) {  /* lo is closed: double hi until one is not */
		if ((error = continuation_closed(h, sid, hi, &closed)) < 0)
			return error;
		if (!closed)
			break;
		if (hi >= CONTINUATIONS_MAX)
			return docket_error_set(DOCKET_EINVALID, "session %s was continued %d times", sid,
						CONTINUATIONS_MAX);
		lo = hi;
		hi *= 2;
	}
	while (hi - lo > 1) {  /* lo closed, hi not */
		uint32_t mid = lo + (hi - lo) / 2;

		if ((error = continuation_closed(h, sid, mid, &closed)) < 0)
			return error;
		if (closed)
			lo = mid;
		else
			hi = mid;
	}
	if ((error = continuation(top, size, sid, hi)) < 0 || (error = session_state_spooled(h, top, &state)) < 0)
		return error;
	if (state == 0) {
		h->quiet = is_end_event(h->name);
		return continuation(h->continues, sizeof(h->continues), sid, lo);
	}
	return 0;
}

static int set_session(hook_ctx *h)
{
	const char *sid = docket_json_str_nonempty(h->ev, "session_id"), *agent = docket_json_str_nonempty(h->ev, "agent_id");
	char top[SESSION_MAX + 1];
	int n, error;

	if (strlen(sid) > SESSION_MAX)
		return docket_error_set(DOCKET_EINVALID, "session_id longer than %d bytes", SESSION_MAX);
	if ((error = resolve_top(h, sid, top, sizeof(top))) < 0)
		return error;
	if (agent) {
		n = snprintf(h->session, sizeof(h->session), "%s/agent-%s", top, agent);
		snprintf(h->parent, sizeof(h->parent), "%s", top);
	} else {
		n = snprintf(h->session, sizeof(h->session), "%s", top);
	}
	if (n < 0 || (size_t)n >= sizeof(h->session))
		return docket_error_set(DOCKET_EINVALID, "session_id longer than %d bytes", SESSION_MAX);
	return 0;
}

/* An event that wrote nothing to the ledger folds what waits in the spool
 * (the lock was held a moment ago), within the budget; a lock still held
 * leaves it for the next writer. */
static int fold_waiting(hook_ctx *h)
{
	int busy = 0, error;

	if (h->spooling || h->wrote || !h->opts->spool_path || spool_first(h))
		return 0;  /* spool first: the caller folds after its answer */
	if (!h->opts->deadline_ms)
		return docket_spool_fold(h->ledger);
	if (docket_spool_writer_busy(h->opts->spool_path))
		return 0;  /* not worth a wait: the next writer folds it */
	error = docket_spool_fold_by(h->ledger, lock_deadline(h), &busy);
	if (busy) {
		docket_error_clear();
		return 0;
	}
	return error;
}

/*
 * Spool first, before reading any state: an event that reads a whole
 * session folds a journal earlier events left first (waiting for the lock
 * within the budget); every other event reads the ledger and the journal's
 * records beside it (session_state_spooled, current_revision), the journal
 * first.
 */
static int fold_until(hook_ctx *h, uint64_t deadline)
{
	int busy = 0, error;

	if (deadline > h->opts->deadline_ms)
		deadline = h->opts->deadline_ms;
	if ((error = docket_spool_fold_by(h->ledger, deadline, &busy)) < 0 && busy)
		docket_spool_mark_held(h->opts->spool_path);
	docket_error_clear();  /* not folded: the records wait, and are read beside the ledger */
	return error == 0;
}

/* Events whose decisions read every pending call or a transcript: they wait
 * for the previous event's fold (within the lock's budget) before reading. */
static int reads_whole_session(const hook_ctx *h)
{
	static const char *const names[] = { "SessionStart", "PermissionRequest", "Stop", "SubagentStop",
					     "SessionEnd" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(h->name, names[i]) == 0)
			return 1;
	return 0;
}

static void fold_behind(hook_ctx *h)
{
	const char *path = h->opts->spool_path;

	/* the others read the journal beside the ledger: a commit here would put
	 * two flushes back on the client's path (the detached folds keep the
	 * journal short) */
	if (!spool_first(h) || !reads_whole_session(h) || !docket_spool_nonempty(path))
		return;
	/* not folded within the budget: as with a held lock, the rest of the
	 * event follows the spool and leaves the transcript to later */
	h->spooling = !fold_until(h, h->opts->deadline_ms);
}

int docket_hook_handle(docket_ledger *ledger, const docket_hook_options *opts, const char *input,
		       size_t len, docket_hook_answer *answer)
{
	hook_ctx h;
	json_t *ev = NULL;
	int error;

	memset(answer, 0, sizeof(*answer));
	memset(&h, 0, sizeof(h));
	if ((error = parse_event(&ev, input, len)) < 0)
		return error;
	h.ledger = ledger;
	h.opts = opts;
	h.ev = ev;
	h.answer = answer;
	h.name = docket_json_str_nonempty(ev, "hook_event_name");
	if (opts->blocks)
		*opts->blocks = docket_hook_event_blocks(h.name);
	h.cwd = docket_json_str_nonempty(ev, "cwd");
	snprintf(h.prov, sizeof(h.prov), "hook:%s/%.32s", docket_client_name(opts->client), h.name);
	fold_behind(&h);
	if ((error = set_session(&h)) < 0 || h.quiet)
		goto done;
	if (opts->client == DOCKET_CLIENT_CLAUDE && strcmp(h.name, "SessionStart") != 0 &&
	    (error = track_mode(&h)) < 0)
		goto done;
	if (strcmp(h.name, "SessionStart") == 0)
		error = on_session_start(&h);
	else if (strcmp(h.name, "PreToolUse") == 0)
		error = on_pre_tool_use(&h);
	else if (strcmp(h.name, "PermissionRequest") == 0)
		error = on_permission_request(&h);
	else if (strcmp(h.name, "PostToolUse") == 0)
		error = opts->client == DOCKET_CLIENT_CODEX ? on_codex_post(&h) : finish_call(&h, "ok", NULL, 1);
	else if (strcmp(h.name, "PostToolUseFailure") == 0)
		error = on_post_failure(&h);
	else if (strcmp(h.name, "PermissionDenied") == 0)
		error = on_permission_denied(&h);
	else if (strcmp(h.name, "Stop") == 0)
		error = on_stop(&h, opts->client == DOCKET_CLIENT_CODEX);  /* Codex has no SessionEnd */
	else if (strcmp(h.name, "SubagentStop") == 0)
		error = on_stop(&h, h.parent[0] != '\0');  /* the subagent's session ends with it */
	else if (strcmp(h.name, "SessionEnd") == 0)
		error = on_stop(&h, 1);
	/* other events (UserPromptSubmit, Notification, PreCompact ...) say nothing about calls */
	if (error == 0)
		error = fold_waiting(&h);
done:
	json_decref(h.enforced);
	docket_spool_view_free(h.view);
	json_decref(ev);
	if (error < 0)
		docket_hook_answer_dispose(answer);
	return error;
}
