/* SPDX-License-Identifier: Apache-2.0 */
/*
 * protocol_batch.c: executing a batch of protocol calls.
 *
 * proto_batch_prepare prepares calls into groups (one atomic, isolated
 * group per call, and one per recover.apply plan item, per lineage);
 * proto_batch_commit appends them in one write transaction and one commit
 * and gives each call its group's outcome. serve runs the commit on its
 * writer thread while the next batch is prepared (docs/write-path.md §4).
 */
#include "protocol_internal.h"

#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "authority.h"
#include "call_schema.h"
#include "ledger/ledger_sys.h"
#include "recover.h"
#include "util/alloc.h"
#include "util/error.h"
#include "util/json.h"
#include "util/json_write.h"

/* ---- executing a batch ---- */

/*
 * recover.apply, per lineage (docs/write-path.md §2): the items of each
 * lineage follow a runtime.started of that lineage (its own group), and
 * their events carry no epoch, so each is written under the epoch that
 * start just raised: the runtime that dispatched them is fenced, no other.
 * A lineage that is this connection's own, at its current epoch, needs no
 * start: its items carry the connection's epoch. Items of sessions no
 * runtime owns go under one "docket recover" lineage (the connection's own
 * when it is bound). Each item is its own group (isolated).
 */
static ledger_group *group_new(ledger_group **groups, size_t *ngroups, size_t *cap, size_t n)
{
	ledger_group *g;

	if (*ngroups == *cap) {
		ledger_group *ng = docket_array_grow(*groups, cap, sizeof(*ng), 16);

		if (!ng)
			return NULL;
		*groups = ng;
	}
	g = &(*groups)[(*ngroups)++];
	memset(g, 0, sizeof(*g));
	g->events = docket_calloc(n ? n : 1, sizeof(*g->events));
	g->results = docket_calloc(n ? n : 1, sizeof(*g->results));
	if (!g->events || !g->results) {
		docket_error_set_oom();
		return NULL;
	}
	return g;
}

/* The events (a JSON array) as group g, each under `epoch` (0: the ledger's current). */
static int group_fill(ledger_group *g, json_t *events, uint64_t epoch)
{
	json_t *ev;
	size_t j;

	json_array_foreach(events, j, ev) {
		int error;

		if (epoch)
			json_object_set_new(ev, "epoch", json_integer((json_int_t)epoch));
		else
			json_object_del(ev, "epoch");
		if ((error = docket_event_from_json(&g->events[g->n], ev)) < 0)
			return error;
		g->n++;
	}
	return 0;
}

/* The lineage owning an item's session: 1, or 0 when none. */
static int item_owner(const json_t *item, state_lineage *out)
{
	const json_t *o = json_object_get(item, "owner"), *uid = json_object_get(o, "uid");
	const char *name = json_string_value(json_object_get(o, "runtime"));

	memset(out, 0, sizeof(*out));
	if (!name)
		return 0;
	snprintf(out->name, sizeof(out->name), "%s", name);
	out->uid = json_is_integer(uid) ? (uint32_t)json_integer_value(uid) : LINEAGE_UID_NONE;
	return 1;
}

/* The lineage an item is applied under, and the epoch its events carry (0: a new start's);
 * 0 when its session has no owner. */
static int item_lineage(const proto_call *call, const json_t *item, state_lineage *out, uint64_t *epoch)
{
	state_lineage mine;

	conn_lineage(call->conn, &mine);
	*epoch = 0;
	if (!item_owner(item, out)) {
		*out = mine;
		if (call->conn->epoch)
			*epoch = call->conn->epoch;
		else
			snprintf(out->name, sizeof(out->name), "docket recover");
		return 0;
	}
	if (call->conn->epoch && state_lineage_same(out, &mine))
		*epoch = call->conn->epoch;
	return 1;
}

/* A runtime.started of `lin` as its own group; its index noted in `fenced`. */
static int group_start(ledger_group **groups, size_t *ngroups, size_t *cap, const state_lineage *lin,
		       int owner, json_t *fenced)
{
	json_t *ev = json_pack("{s:s, s:s}", "type", "runtime.started", "runtime", lin->name);
	json_t *note = json_pack("{s:s, s:b, s:I}", "runtime", lin->name, "owner", owner,
				 "group", (json_int_t)*ngroups);
	json_t *events = json_array();
	ledger_group *g;
	int error = 0;

	if (ev && lin->uid != LINEAGE_UID_NONE)
		json_object_set_new(ev, "uid", json_integer((json_int_t)lin->uid));
	if (note && lin->uid != LINEAGE_UID_NONE)
		json_object_set_new(note, "uid", json_integer((json_int_t)lin->uid));
	if (!ev || !note || !events || json_array_append(events, ev) < 0 || json_array_append(fenced, note) < 0)
		error = docket_error_set_oom();
	else if (!(g = group_new(groups, ngroups, cap, 1)))
		error = docket_error_last()->code;
	else
		error = group_fill(g, events, 0);
	json_decref(ev);
	json_decref(note);
	json_decref(events);
	return error;
}

static int recover_groups(proto_call *call, ledger_group **groups, size_t *ngroups, size_t *cap)
{
	json_t *items = json_object_get(call->result, "items"), *item, *other;
	json_t *fenced = json_array();
	size_t i, j;
	int error = 0;

	if (!fenced || json_object_set_new(call->result, "fenced", fenced) < 0)
		return docket_error_set_oom();
	json_array_foreach(items, i, item) {
		state_lineage lin, lin2;
		uint64_t epoch, epoch2;
		int owned;

		if (json_array_size(json_object_get(item, "events")) == 0 || json_object_get(item, "group"))
			continue;
		owned = item_lineage(call, item, &lin, &epoch);
		if (!epoch && (error = group_start(groups, ngroups, cap, &lin, owned, fenced)) < 0)
			return error;
		/* this item and every later one of the same lineage */
		for (j = i; j < json_array_size(items) && error == 0; j++) {
			json_t *events;
			ledger_group *g;

			other = json_array_get(items, j);
			events = json_object_get(other, "events");
			if (json_array_size(events) == 0 || json_object_get(other, "group"))
				continue;
			(void)item_lineage(call, other, &lin2, &epoch2);
			if (!state_lineage_same(&lin, &lin2) || epoch2 != epoch)
				continue;
			json_object_set_new(other, "group", json_integer((json_int_t)*ngroups));
			if (!(g = group_new(groups, ngroups, cap, json_array_size(events))))
				return docket_error_last()->code;
			error = group_fill(g, events, epoch);
		}
		if (error < 0)
			return error;
	}
	return 0;
}

static void free_recover_groups(ledger_group *groups, size_t first, size_t n)
{
	for (size_t g = first; g < n; g++) {
		for (size_t i = 0; i < groups[g].n; i++)
			docket_event_free(groups[g].events[i]);
		docket_free(groups[g].events);
		docket_free(groups[g].results);
	}
}

/* Mark each plan item with whether its group went in, and each lineage
 * fenced with the epoch its runtime.started raised (or its error). */
static void recover_report(proto_call *call, const ledger_group *groups)
{
	json_t *items = json_object_get(call->result, "items"), *item;
	json_t *fenced = json_object_get(call->result, "fenced");
	size_t i;

	json_array_foreach(fenced, i, item) {
		const ledger_group *g = &groups[(size_t)json_integer_value(json_object_get(item, "group"))];

		json_object_del(item, "group");
		if (g->error)
			json_object_set_new(item, "error", json_string(g->err.message));
		else
			json_object_set_new(item, "epoch", json_integer((json_int_t)g->results[0].epoch));
	}
	json_array_foreach(items, i, item) {
		json_t *gi = json_object_get(item, "group");
		const ledger_group *g;

		if (!gi) {
			json_object_set_new(item, "applied", json_false());
			continue;
		}
		g = &groups[(size_t)json_integer_value(gi)];
		json_object_del(item, "group");
		json_object_set_new(item, "applied", json_boolean(g->error == 0));
		if (g->error)
			json_object_set_new(item, "error", json_string(g->err.message));
		else if (g->n)
			json_object_set_new(item, "seq", json_integer((json_int_t)g->results[g->n - 1].seq));
	}
}

/* Room in b for n calls and the groups of n calls (and one more). */
static int batch_reserve(proto_batch *b, size_t n)
{
	size_t *o = docket_realloc(b->group_of, (n ? n : 1) * sizeof(*o));
	size_t cap = b->cap ? b->cap : 16;
	ledger_group *g;

	if (!o)
		return docket_error_set_oom();
	b->group_of = o;
	if (n + 1 <= b->cap)
		return 0;
	while (cap < n + 1)
		cap *= 2;
	if (!(g = docket_realloc(b->groups, cap * sizeof(*g))))
		return docket_error_set_oom();
	b->groups = g;
	b->cap = cap;
	return 0;
}

/*
 * Prepare calls[from..n) of the batch (validate, check, decide, build their
 * events) and add their groups; from 0 starts the batch, a later `from`
 * adds calls to it (serve gathers more while the writer commits another
 * batch), each prepared seeing calls[0..i) before it. A recover.apply (the
 * batch's last call) adds its plan's groups. Reads only committed state
 * (read transactions). DOCKET_ENOMEM: calls[from..n) are not in the batch.
 */
int proto_batch_prepare(proto_ctx *ctx, proto_batch *b, proto_call *calls, size_t from, size_t n)
{
	int error;

	if (from == 0) {
		memset(b, 0, sizeof(*b));
		b->calls = calls;
	}
	if ((error = batch_reserve(b, n)) < 0)
		return error;
	b->n = n;
	for (size_t i = from; i < n; i++) {
		proto_call *c = &calls[i];

		b->group_of[i] = SIZE_MAX;
		if (c->reply)
			continue; /* answered before execution */
		c->error = 0;
		c->forbidden = 0;
		ctx->batch = calls;
		ctx->batch_i = i;
		if (prepare(ctx, c) < 0 || c->n == 0)
			continue;
		b->group_of[i] = b->ngroups;
		memset(&b->groups[b->ngroups], 0, sizeof(b->groups[0]));
		b->groups[b->ngroups].events = c->events;
		b->groups[b->ngroups].n = c->n;
		b->groups[b->ngroups].results = c->results;
		b->ngroups++;
	}
	ctx->batch = NULL;
	/* a recover.apply ends its batch: its plan items follow as groups */
	if (n > from && calls[n - 1].kind == M_RECOVER_APPLY && !calls[n - 1].error) {
		b->rec = &calls[n - 1];
		b->rec_first = b->ngroups;
		if ((error = recover_groups(b->rec, &b->groups, &b->ngroups, &b->cap)) < 0)
			refuse_current(b->rec, error);
	}
	return 0;
}

/*
 * Append the prepared groups in one write transaction and one durable
 * commit, then give each call its group's outcome. Touches only the
 * ledger and the batch: serve runs it on its writer thread while the next
 * batch is prepared on the same context.
 */
int proto_batch_commit(proto_ctx *ctx, proto_batch *b)
{
	proto_call *calls = b->calls;
	int error = 0;

	if (b->ngroups && !(b->rec && b->rec->error))
		error = ledger_append_groups(ctx->ledger, b->groups, b->ngroups);
	for (size_t i = 0; i < b->n; i++) {
		if (b->group_of[i] != SIZE_MAX && b->groups[b->group_of[i]].error) {
			calls[i].error = b->groups[b->group_of[i]].error;
			calls[i].err = b->groups[b->group_of[i]].err;
		}
	}
	if (b->rec && !b->rec->error)
		recover_report(b->rec, b->groups);
	return error < 0 ? error : 0;
}

void proto_batch_dispose(proto_batch *b)
{
	if (b->rec)
		free_recover_groups(b->groups, b->rec_first, b->ngroups);
	docket_free(b->group_of);
	docket_free(b->groups);
	memset(b, 0, sizeof(*b));
}

int proto_execute(proto_ctx *ctx, proto_call *calls, size_t n)
{
	proto_batch b;
	int error;

	memset(&b, 0, sizeof(b));
	if ((error = proto_batch_prepare(ctx, &b, calls, 0, n)) < 0) {
		proto_batch_dispose(&b);
		return error;
	}
	error = proto_batch_commit(ctx, &b);
	proto_batch_dispose(&b);
	return error;
}
