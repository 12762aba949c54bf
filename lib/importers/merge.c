/* SPDX-License-Identifier: Apache-2.0 */
/*
 * merge.c: an import into a session the ledger already holds.
 *
 * Live capture (integrations/) records a session while it runs; importing
 * its transcript afterwards (or at Stop, to settle what hooks cannot see)
 * must add no second copy of any call and no conflict: the ledger's record
 * is authoritative, the import only adds what it lacks. The same holds for a
 * resumed import of a grown file. So every event an import maps for a
 * session that existed before this import began goes through this filter:
 *
 *   session.opened        dropped (the session has one)
 *   policy.revised        kept when the session was opened by this very file
 *                         and the revision is the next one; dropped for a
 *                         session another source opened (its own record of
 *                         the policy in force is authoritative), except a
 *                         live Codex session (opened by a `hook:codex/`
 *                         event): Codex's hooks do not carry the approval
 *                         and sandbox policy, so its rollout's revisions are
 *                         adopted, when they are the next ones; and when the
 *                         revision in force has docket's layer (`hook codex
 *                         --enforce`), each one the session is open for and
 *                         that says something new becomes the session's
 *                         next revision (numbered after the ledger's, not
 *                         the rollout's): all_of docket's layer in force and
 *                         the rollout's settings (compose_revision)
 *   tool.intent           dropped when the ledger has the call, else kept
 *   approval.requested    kept while the call has no request, is not
 *                         dispatched and has no outcome
 *   approval.settled      kept when a request is open (naming that request)
 *   tool.dispatched       kept when the call is not dispatched and has no
 *                         outcome (an open request is settled approved first)
 *   tool.completed        kept when the call has no outcome (an open request
 *                         is settled first; a run outcome gets its dispatch)
 *
 * The state comes from one read of the session's events when the session is
 * first seen, and follows the events kept, so a batch is valid as a whole.
 */
#include <string.h>

#include "import_internal.h"
#include "policy/policy_doc.h"
#include "util/alloc.h"
#include "util/error.h"

enum {
	MI_INTENT = 1u << 0,
	MI_ASKED = 1u << 1,      /* a request was made */
	MI_OPEN = 1u << 2,       /* ... and is still open */
	MI_DISPATCHED = 1u << 3,
	MI_DONE = 1u << 4
};

typedef struct merge_inv {
	unsigned int flags;
	char request[IMP_ID_MAX + 1];
} merge_inv;

typedef struct merge_session {
	char *id;
	int merged;          /* the session existed before this import */
	int own;             /* ... opened by this file (a resumed import) */
	int adopt;           /* ... opened by Codex's hooks: the file's policy is adopted */
	uint32_t revision;
	json_t *in_force;    /* the newest policy.revised of the session (NULL: none) */
	int closed;
	imp_map ix;          /* invocation -> index in v */
	merge_inv *v;
	size_t n, cap;
} merge_session;

struct imp_merge {
	docket_ledger *ledger;
	char *file;
	merge_session *s;
	size_t n, cap;
	imp_map ix;
};

int imp_merge_new(imp_merge **out, docket_ledger *ledger, const char *file)
{
	imp_merge *m = docket_calloc(1, sizeof(*m));

	if (!m || !(m->file = docket_strdup(file))) {
		docket_free(m);
		return docket_error_set_oom();
	}
	m->ledger = ledger;
	*out = m;
	return 0;
}

void imp_merge_free(imp_merge *m)
{
	size_t i;

	if (!m)
		return;
	for (i = 0; i < m->n; i++) {
		docket_free(m->s[i].id);
		docket_free(m->s[i].v);
		json_decref(m->s[i].in_force);
		imp_map_dispose(&m->s[i].ix);
	}
	docket_free(m->s);
	imp_map_dispose(&m->ix);
	docket_free(m->file);
	docket_free(m);
}

static merge_inv *inv_get(merge_session *s, const char *id, int create)
{
	size_t i;

	if (imp_map_get(&s->ix, id, &i))
		return &s->v[i];
	if (!create)
		return NULL;
	if (s->n == s->cap) {
		merge_inv *v = docket_array_grow(s->v, &s->cap, sizeof(*v), 16);

		if (!v)
			return NULL;
		s->v = v;
	}
	if (imp_map_put(&s->ix, id, s->n) < 0)
		return NULL;
	memset(&s->v[s->n], 0, sizeof(s->v[s->n]));
	return &s->v[s->n++];
}

static void set_request(merge_inv *k, const char *req)
{
	size_t n = req ? strnlen(req, IMP_ID_MAX) : 0;

	memcpy(k->request, req ? req : "", n);
	k->request[n] = '\0';
}

/* Follow one event (from the ledger or kept from the import). 0 or ENOMEM. */
static int track(merge_session *s, const json_t *ev)
{
	const char *type = imp_str(ev, "type"), *inv = imp_str(ev, "invocation");
	const json_t *rev = json_object_get(ev, "revision");
	merge_inv *k;

	if (!type)
		return 0;
	if (strcmp(type, "policy.revised") == 0 && json_is_integer(rev)) {
		s->revision = (uint32_t)json_integer_value(rev);
		json_decref(s->in_force);
		s->in_force = json_incref((json_t *)ev);
		return 0;
	}
	if (strcmp(type, "session.closed") == 0) {
		s->closed = 1;
		return 0;
	}
	if (!inv)
		return 0;
	if (!(k = inv_get(s, inv, strcmp(type, "tool.intent") == 0)))
		return strcmp(type, "tool.intent") == 0 ? docket_error_set_oom() : 0;
	if (strcmp(type, "tool.intent") == 0) {
		k->flags |= MI_INTENT;
	} else if (strcmp(type, "approval.requested") == 0) {
		k->flags |= MI_ASKED | MI_OPEN;
		set_request(k, imp_str(ev, "request"));
	} else if (strcmp(type, "approval.settled") == 0) {
		k->flags &= ~MI_OPEN;
	} else if (strcmp(type, "tool.dispatched") == 0) {
		k->flags |= MI_DISPATCHED;
	} else if (strcmp(type, "tool.completed") == 0) {
		k->flags |= MI_DONE;
	}
	return 0;
}

typedef struct load_ctx {
	merge_session *s;
	const char *file;
} load_ctx;

static int load_cb(void *ctx, uint64_t seq, json_t *ev)
{
	load_ctx *l = ctx;
	const char *type = imp_str(ev, "type");
	const char *file = imp_str(imp_obj(ev, "provenance"), "file");

	(void)seq;
	if (type && strcmp(type, "session.opened") == 0) {
		l->s->own = file && strcmp(file, l->file) == 0;
		l->s->adopt = file && strncmp(file, "hook:codex/", 11) == 0;
	}
	return track(l->s, ev);
}

static int exists_cb(void *ctx, const docket_session_info *info)
{
	(void)ctx;
	(void)info;
	return 0;
}

/* The filter state of session `id`, created (and loaded) on first sight. */
static int session_of(imp_merge *m, const char *id, merge_session **out)
{
	docket_read_options ro = DOCKET_READ_OPTIONS_INIT;
	load_ctx l;
	merge_session *s;
	size_t i;
	int error;

	if (imp_map_get(&m->ix, id, &i)) {
		*out = &m->s[i];
		return 0;
	}
	if (m->n == m->cap) {
		if (!(s = docket_array_grow(m->s, &m->cap, sizeof(*s), 4)))
			return docket_error_set_oom();
		m->s = s;
	}
	s = &m->s[m->n];
	memset(s, 0, sizeof(*s));
	if (!(s->id = docket_strdup(id)) || (error = imp_map_put(&m->ix, id, m->n)) < 0) {
		docket_free(s->id);
		return docket_error_set_oom();
	}
	m->n++;
	*out = s;
	error = docket_ledger_session(m->ledger, id, exists_cb, NULL);
	if (error == DOCKET_ENOTFOUND)
		return 0;
	if (error < 0)
		return error;
	s->merged = 1;
	ro.session = id;
	l.s = s;
	l.file = m->file;
	return docket_ledger_read_json(m->ledger, &ro, load_cb, &l);
}

/* A settlement the import did not say but the ledger needs first. */
static json_t *synth(const json_t *like, const char *type)
{
	json_t *ev = json_object();
	const json_t *v;

	if (!ev || imp_set_str(ev, "type", type) < 0)
		goto fail;
	if (((v = json_object_get(like, "time")) && json_object_set(ev, "time", (json_t *)v) < 0) ||
	    ((v = json_object_get(like, "session")) && json_object_set(ev, "session", (json_t *)v) < 0) ||
	    ((v = json_object_get(like, "invocation")) &&
	     json_object_set(ev, "invocation", (json_t *)v) < 0) ||
	    ((v = json_object_get(like, "provenance")) &&
	     json_object_set(ev, "provenance", (json_t *)v) < 0))
		goto fail;
	return ev;
fail:
	json_decref(ev);
	return NULL;
}

static int push_settle(merge_inv *k, const json_t *like, const char *result,
		       imp_merge_push push, void *ctx)
{
	json_t *ev = synth(like, "approval.settled");

	if (!ev || imp_set_str(ev, "request", k->request) < 0 || imp_set_str(ev, "result", result) < 0 ||
	    imp_set_str(ev, "reason", "inferred by the import from the call's outcome") < 0) {
		json_decref(ev);
		return docket_error_set_oom();
	}
	k->flags &= ~MI_OPEN;
	return push(ctx, ev);
}

static int push_dispatch(merge_inv *k, const json_t *like, imp_merge_push push, void *ctx)
{
	json_t *ev = synth(like, "tool.dispatched");

	if (!ev)
		return docket_error_set_oom();
	k->flags |= MI_DISPATCHED;
	return push(ctx, ev);
}

static int is_run_status(const char *st)
{
	return st && (strcmp(st, "ok") == 0 || strcmp(st, "error") == 0 || strcmp(st, "timeout") == 0);
}

/* 1: keep the event (after pushing what must precede it), 0: drop it, <0: error. */
static int decide_call(merge_session *s, json_t *ev, const char *type,
		       imp_merge_push push, void *ctx)
{
	merge_inv *k = inv_get(s, imp_str(ev, "invocation"), 0);
	const char *status = imp_str(ev, "status");
	int error;

	if (strcmp(type, "tool.intent") == 0)
		return k && (k->flags & MI_INTENT) ? 0 : 1;
	if (!k || !(k->flags & MI_INTENT) || (k->flags & MI_DONE))
		return 0;
	if (strcmp(type, "approval.requested") == 0)
		return (k->flags & (MI_ASKED | MI_DISPATCHED)) ? 0 : 1;
	if (strcmp(type, "approval.settled") == 0) {
		if (!(k->flags & MI_OPEN))
			return 0;
		return imp_set_str(ev, "request", k->request) < 0 ? docket_error_set_oom() : 1;
	}
	if (strcmp(type, "tool.dispatched") == 0) {
		if (k->flags & MI_DISPATCHED)
			return 0;
		if ((k->flags & MI_OPEN) && (error = push_settle(k, ev, "approved", push, ctx)) < 0)
			return error;
		return 1;
	}
	if (strcmp(type, "tool.completed") != 0)
		return 1;
	if (k->flags & MI_OPEN) {
		const char *result = is_run_status(status) ? "approved" :
				     status && strcmp(status, "cancelled") == 0 ? "aborted" : "denied";

		if ((error = push_settle(k, ev, result, push, ctx)) < 0)
			return error;
	}
	if (is_run_status(status) && !(k->flags & MI_DISPATCHED) &&
	    (error = push_dispatch(k, ev, push, ctx)) < 0)
		return error;
	if (status && strcmp(status, "denied") == 0 && (k->flags & MI_DISPATCHED))
		return 0;  /* the ledger saw it run: the import's reading loses */
	return 1;
}

/*
 * A rollout's revision for a live Codex session under docket's enforced
 * policy: rewritten in place as the session's next revision, docket's
 * layer in force over the rollout's settings. 1: keep it, 0: drop it (the
 * session is closed, or the revision says what the one in force says).
 */
static int compose_revision(merge_session *s, json_t *ev, const json_t *enforced)
{
	json_t *doc;
	int same;

	if (s->closed)
		return 0;
	if (!(doc = policy_doc_compose(enforced, imp_str(ev, "format"), json_object_get(ev, "policy"))))
		return docket_error_set_oom();
	same = json_equal(doc, json_object_get(s->in_force, "policy"));
	if (same || imp_set(ev, "policy", doc) < 0 ||
	    imp_set(ev, "revision", json_integer((json_int_t)s->revision + 1)) < 0 ||
	    imp_set_str(ev, "format", "docket") < 0 || imp_set_str(ev, "actor", "docket") < 0 ||
	    imp_set_str(ev, "reason", "the rollout's settings, under the policy docket's hook enforces") < 0) {
		if (same)
			json_decref(doc);
		return same ? 0 : docket_error_set_oom();
	}
	return 1;
}

/* 1: keep a policy.revised of a merged session (maybe rewritten), 0: drop it. */
static int decide_revision(merge_session *s, json_t *ev)
{
	const json_t *rev = json_object_get(ev, "revision");
	const json_t *enforced = s->adopt ? policy_doc_docket_layer(imp_str(s->in_force, "format"),
								     json_object_get(s->in_force, "policy")) : NULL;

	if (enforced)
		return compose_revision(s, ev, enforced);
	return (s->own || s->adopt) && json_is_integer(rev) &&
	       json_integer_value(rev) == (json_int_t)s->revision + 1;
}

int imp_merge_event(imp_merge *m, json_t *ev, imp_merge_push push, void *ctx)
{
	const char *type = imp_str(ev, "type"), *sid = imp_str(ev, "session");
	merge_session *s = NULL;
	int keep, error;

	if (!sid || !type)
		return push(ctx, ev);
	if ((error = session_of(m, sid, &s)) < 0) {
		json_decref(ev);
		return error;
	}
	if (!s->merged)
		return push(ctx, ev);
	if (strcmp(type, "session.opened") == 0)
		keep = 0;
	else if (strcmp(type, "session.closed") == 0)
		keep = !s->closed;
	else if (strcmp(type, "policy.revised") == 0)
		keep = decide_revision(s, ev);
	else if (s->closed)
		keep = 0;
	else
		keep = decide_call(s, ev, type, push, ctx);
	if (keep <= 0) {
		json_decref(ev);
		return keep;
	}
	if ((error = track(s, ev)) < 0) {
		json_decref(ev);
		return error;
	}
	return push(ctx, ev);
}
