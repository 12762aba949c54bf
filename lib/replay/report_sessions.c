/* SPDX-License-Identifier: Apache-2.0 */
/*
 * report_sessions.c: what a report says about each session replayed: its
 * runtime, the sandbox the runtime had, the one the policy was evaluated
 * under and why, the baseline its calls were compared with, and a warning
 * when the two sandboxes differ (docs/replay.md, "Assumptions"). Sessions
 * are kept in the order they first appear, indexed by an open-addressing
 * table of (host, session): memory grows with the sessions, not the calls.
 */
#include <string.h>

#include "report_internal.h"
#include "util/alloc.h"
#include "util/error.h"
#include "util/htab.h"

static uint32_t key_hash(const char *host, const char *id)
{
	uint32_t h = docket_hash(DOCKET_HASH_SEED, host ? host : "", host ? strlen(host) + 1 : 1);

	return docket_hash(h, id, strlen(id));
}

static int same_key(const report_session *e, const char *host, const char *id)
{
	return strcmp(e->id, id) == 0 && ((!e->host && !host) || (e->host && host && strcmp(e->host, host) == 0));
}

/* s (NULL: "") cut to cap - 1 bytes, as snprintf would: once per call
 * replayed, so no format parsing */
static void copy_name(char *dst, size_t cap, const char *s)
{
	size_t n = s ? strnlen(s, cap - 1) : 0;

	memcpy(dst, s ? s : "", n);
	dst[n] = '\0';
}

/* What a lookup in the index compares a slot (index + 1 into r->sess) against. */
typedef struct {
	const docket_replay_report *r;
	const char *host, *id;
} sess_key;

static int slot_is(const void *slot, const void *key)
{
	const sess_key *k = key;

	return same_key(&k->r->sess[*(const size_t *)slot - 1], k->host, k->id);
}

static int session_new(docket_replay_report *r, const docket_replay_call *c, report_session **out)
{
	report_session *e;
	void *grown;

	if (r->nsess == r->sess_cap) {
		if (!(grown = docket_array_grow(r->sess, &r->sess_cap, sizeof(*r->sess), 16)))
			return DOCKET_ENOMEM;
		r->sess = grown;
	}
	e = &r->sess[r->nsess];
	memset(e, 0, sizeof(*e));
	e->id = docket_strdup(c->session);
	e->host = c->host ? docket_strdup(c->host) : NULL;
	e->runtime = docket_strdup(c->runtime ? c->runtime : "");
	if (!e->id || (c->host && !e->host) || !e->runtime) {
		docket_free(e->id);
		docket_free(e->host);
		docket_free(e->runtime);
		return docket_error_set_oom();
	}
	r->nsess++;
	*out = e;
	return 0;
}

int report_session_add(docket_replay_report *r, const docket_replay_call *c)
{
	report_session *e = NULL;
	sess_key key = { r, c->host, c->session };
	uint32_t h = key_hash(c->host, c->session);
	size_t *slot;
	int error;

	r->sess_index.esize = sizeof(size_t); /* a zeroed report has an empty index */
	if ((error = docket_htab_reserve(&r->sess_index)) < 0)
		return error;
	slot = docket_htab_find(&r->sess_index, h, slot_is, &key);
	if (!docket_htab_free_at(&r->sess_index, slot)) {
		e = &r->sess[*slot - 1];
	} else {
		if ((error = session_new(r, c, &e)) < 0)
			return error;
		*slot = (size_t)(e - r->sess) + 1;
		docket_htab_take(&r->sess_index, slot, h);
	}
	/* the latest call says what holds (a resumed session may differ) */
	copy_name(e->recorded, sizeof(e->recorded), c->sandbox_recorded);
	copy_name(e->assumed, sizeof(e->assumed), c->sandbox_assumed);
	copy_name(e->from, sizeof(e->from), c->sandbox_from);
	e->live_settings = c->live_settings;
	e->imported = c->imported;
	if ((unsigned)c->baseline < 4)
		e->baselines[c->baseline]++;
	return 0;
}

void report_sessions_free(docket_replay_report *r)
{
	for (size_t i = 0; i < r->nsess; i++) {
		docket_free(r->sess[i].id);
		docket_free(r->sess[i].host);
		docket_free(r->sess[i].runtime);
	}
	docket_free(r->sess);
	docket_htab_dispose(&r->sess_index);
}

/* "none" and "full_access" are the same: nothing contains the tools. */
static int same_sandbox(const char *a, const char *b)
{
	int an = !strcmp(a, "none") || !strcmp(a, "full_access"), bn = !strcmp(b, "none") || !strcmp(b, "full_access");

	return an || bn ? an == bn : strcmp(a, b) == 0;
}

int report_session_warns(const report_session *e)
{
	return *e->recorded && *e->assumed && !same_sandbox(e->recorded, e->assumed);
}

const char *report_session_from(const report_session *e)
{
	if (!strcmp(e->from, "assumed"))
		return "--assume-sandbox";
	if (!strcmp(e->from, "recorded"))
		return "the session's recorded sandbox";
	if (!strcmp(e->from, "default"))
		return "Codex's default: the session recorded no sandbox";
	return "the policy's";
}

int report_session_baseline(docket_buf *out, const report_session *e)
{
	const char *sep = "";
	int error = 0;

	docket_buf_clear(out);
	if (e->baselines[DOCKET_REPLAY_BASE_POLICY]) {
		error = docket_buf_puts(out, "the baseline policy");
		sep = ", ";
	}
	if (error == 0 && e->baselines[DOCKET_REPLAY_BASE_RECORDED]) {
		error = docket_buf_printf(out, "%srecorded decisions%s", sep,
					  e->live_settings ? " under the settings captured live" :
					  e->imported ? " (imported: the runtime's own permission rules are not "
							"in the transcript)" : "");
		sep = ", ";
	}
	if (error == 0 && e->baselines[DOCKET_REPLAY_BASE_INFERRED]) {
		error = docket_buf_printf(out, "%sinferred from the call's history", sep);
		sep = ", ";
	}
	if (error == 0 && e->baselines[DOCKET_REPLAY_BASE_NONE])
		error = docket_buf_printf(out, "%snone (undecided calls)", sep);
	return error;
}
