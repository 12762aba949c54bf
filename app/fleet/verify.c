/* SPDX-License-Identifier: Apache-2.0 */
/*
 * verify.c: the central re-check. For each ledger held, its events are read
 * back in seq order (in chunks, by seq range) and the chain is recomputed
 * from the stored payloads with the ledger's own chain function; each
 * payload is decoded here, by docket's own codec, and every column of its
 * row (the event jsonb, time, type, session, invocation, tool, verdict,
 * status, actor, policy revision: what fleet queries and the views read)
 * must be what the payload says; the end of the
 * chain must be the head docket_ingest recorded; the per-call records
 * (docket_calls) must be what the verified events say; each shipped
 * checkpoint must name the chain hash at its seq and the digest of the one
 * before it.
 */
#include <stddef.h>
#include <string.h>

#include "fleet_internal.h"
#include "audit/checkpoint.h"
#include "ledger/ledger_sys.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/error.h"
#include "util/rfc3339.h"

#define VERIFY_CHUNK 5000

typedef struct vstate {
	docket_fleet_verify_report *r;
	EVP_PKEY *key;                  /* NULL: signatures are not checked */
	uint8_t key_id[CHECKPOINT_HASH_LEN];
	uint8_t head[LEDGER_HASH_LEN];
	uint64_t seq;
} vstate;

static int bad(vstate *v, uint64_t seq)
{
	v->r->ok = 0;
	v->r->first_bad_seq = seq;
	return 1;  /* stop checking this ledger */
}

/* Say what is wrong (printf-style) and stop. */
#define BAD(v, seq, ...) (snprintf((v)->r->problem, sizeof((v)->r->problem), __VA_ARGS__), bad((v), (seq)))

static const char *col(const PGresult *res, int row, int c)
{
	return PQgetisnull(res, row, c) ? NULL : PQgetvalue(res, row, c);
}

/* The columns of check_events' query. */
enum {
	C_SEQ, C_PAYLOAD, C_HASH, C_TYPE, C_SESSION, C_INVOCATION, C_TOOL, C_VERDICT, C_STATUS, C_ACTOR,
	C_REVISION, C_EVENT, C_TIME_US
};

/* A stored text column against the value derived from the payload. */
static int same_text(const char *stored, const char *derived)
{
	return (!stored && !derived) || (stored && derived && strcmp(stored, derived) == 0);
}

/* The first column of the row that is not what the payload `obj` says
 * (NULL: none); `obj` is the payload's event as docket log --json prints it. */
static const char *column_problem(const PGresult *res, int row, const json_t *obj)
{
	static const struct {
		int col;
		const char *name;
		size_t off;
	} text[] = {
		{ C_TYPE, "type", offsetof(fleet_columns, type) },
		{ C_SESSION, "session", offsetof(fleet_columns, session) },
		{ C_INVOCATION, "invocation", offsetof(fleet_columns, invocation) },
		{ C_TOOL, "tool", offsetof(fleet_columns, tool) },
		{ C_VERDICT, "verdict", offsetof(fleet_columns, verdict) },
		{ C_STATUS, "status", offsetof(fleet_columns, status) },
		{ C_ACTOR, "actor", offsetof(fleet_columns, actor) },
	};
	fleet_columns c;
	json_t *stored;
	int64_t ms, us;
	int equal;

	stored = PQgetisnull(res, row, C_EVENT) ? NULL : json_loads(PQgetvalue(res, row, C_EVENT), JSON_DECODE_ANY, NULL);
	equal = stored && json_equal(stored, (json_t *)obj);
	json_decref(stored);
	if (!equal)
		return "event";
	fleet_event_columns(&c, obj);
	for (size_t i = 0; i < sizeof(text) / sizeof(text[0]); i++)
		if (!same_text(col(res, row, text[i].col), *(const char *const *)((const char *)&c + text[i].off)))
			return text[i].name;
	if (PQgetisnull(res, row, C_REVISION) != !c.has_revision ||
	    (c.has_revision && (PQgetlength(res, row, C_REVISION) != 4 ||
				(int32_t)docket_be32_get((const uint8_t *)PQgetvalue(res, row, C_REVISION)) != c.revision)))
		return "policy_revision";
	/* the stored time is microseconds, the payload's kept to the millisecond */
	if (PQgetlength(res, row, C_TIME_US) != 8)
		return "time";
	us = (int64_t)docket_be64_get((const uint8_t *)PQgetvalue(res, row, C_TIME_US));
	if (!c.time || docket_time_parse_ms(c.time, 0, &ms) < 0 || ms > INT64_MAX / 1000 || ms < INT64_MIN / 1000 ||
	    us - ms * 1000 > 1000 || ms * 1000 - us > 1000)
		return "time";
	return NULL;
}

/* One stored event (the columns of check_events' query, binary). */
static int check_row(vstate *v, const PGresult *res, int row)
{
	uint8_t h[LEDGER_HASH_LEN];
	docket_event *ev = NULL;
	json_t *obj = NULL;
	const uint8_t *payload = (const uint8_t *)PQgetvalue(res, row, C_PAYLOAD);
	size_t len = (size_t)PQgetlength(res, row, C_PAYLOAD);
	const char *column;
	uint64_t seq;
	char num[24];
	int error;

	seq = docket_be64_get((const uint8_t *)PQgetvalue(res, row, C_SEQ));
	snprintf(num, sizeof(num), "%llu", (unsigned long long)seq);
	if (seq != v->seq + 1) {
		char want[24];

		snprintf(want, sizeof(want), "%llu", (unsigned long long)(v->seq + 1));
		return BAD(v, v->seq + 1, "event %s is missing (the next event held is %s)", want, num);
	}
	if ((error = chain_next(h, v->head, seq, payload, len)) < 0)
		return error;
	if (PQgetlength(res, row, C_HASH) != LEDGER_HASH_LEN ||
	    memcmp(h, PQgetvalue(res, row, C_HASH), LEDGER_HASH_LEN) != 0)
		return BAD(v, seq, "event %s: the chain recomputed from the stored payload does not match "
			   "the stored hash%s", num, "");
	if (event_unpack(&ev, payload, len) < 0 || ledger_event_to_json(&obj, seq, ev, h) < 0) {
		docket_event_free(ev);
		return BAD(v, seq, "event %s: the stored payload does not decode%s", num, "");
	}
	column = column_problem(res, row, obj);
	json_decref(obj);
	if (column) {
		BAD(v, seq, "event %s: column %s is not what its payload says (a %s)", num, column,
		    docket_event_type(ev));
		docket_event_free(ev);
		return 1;
	}
	docket_event_free(ev);
	memcpy(v->head, h, sizeof(h));
	v->seq = seq;
	v->r->events_checked++;
	return 0;
}

static int check_events(docket_fleet *f, vstate *v)
{
	static const char sql[] =
		"SELECT seq, payload, hash, type, session, invocation, tool, verdict, status, actor,"
		" policy_revision, event::text, (extract(epoch FROM time) * 1000000)::bigint FROM docket_events"
		" WHERE ledger_id = $1 AND seq > $2 ORDER BY seq LIMIT " "5000";
	const char *params[2];
	char after[24];
	PGresult *res = NULL;
	int n, error = 0;

	params[0] = v->r->ledger.ledger_id;
	params[1] = after;
	do {
		snprintf(after, sizeof(after), "%llu", (unsigned long long)v->seq);
		res = PQexecParams(f->conn, sql, 2, NULL, params, NULL, NULL, 1);
		if (PQresultStatus(res) != PGRES_TUPLES_OK) {
			error = fleet_result_error(res, f, "fleet verify");
			PQclear(res);
			return error;
		}
		n = PQntuples(res);
		for (int i = 0; i < n && error == 0; i++)
			error = check_row(v, res, i);
		PQclear(res);
	} while (error == 0 && n == VERIFY_CHUNK);
	if (error == 0 && v->seq != v->r->ledger.high_seq) {
		char a[24], b[24];

		snprintf(a, sizeof(a), "%llu", (unsigned long long)v->seq);
		snprintf(b, sizeof(b), "%llu", (unsigned long long)v->r->ledger.high_seq);
		error = BAD(v, v->seq + 1, "events end at seq %s, the high-water mark says %s", a, b);
	}
	return error;
}

/* The stored record is signed by the key, for this ledger, and says what
 * its columns say. */
static int check_signature(vstate *v, const PGresult *res, int row, uint64_t seq)
{
	const char *idx = PQgetvalue(res, row, 0), *text = PQgetvalue(res, row, 6);
	checkpoint_record c;
	char head[65];
	int ok;

	if (checkpoint_parse(&c, text, strlen(text)) < 0)
		return BAD(v, seq, "checkpoint %s: its record does not parse: %.900s", idx, docket_error_last()->message);
	docket_hex(head, c.head, sizeof(c.head));
	if (strcmp(c.ledger_id, v->r->ledger.ledger_id) != 0 || c.seq != seq ||
	    c.index != strtoull(idx, NULL, 10) || strcmp(head, PQgetvalue(res, row, 2)) != 0)
		return BAD(v, seq, "checkpoint %s: its record does not match its columns%s", idx, "");
	if (memcmp(c.key_id, v->key_id, sizeof(c.key_id)) != 0)
		return BAD(v, seq, "checkpoint %s is signed by another key%s", idx, "");
	if ((ok = checkpoint_signature_ok(&c, v->key)) < 0)
		return ok;
	return ok ? 0 : BAD(v, seq, "checkpoint %s: the signature does not verify%s", idx, "");
}

/* The hash held at `seq` (recomputed chain is not kept: read it back). */
static int check_checkpoints(docket_fleet *f, vstate *v, const char *head_hex)
{
	static const char sql[] =
		"SELECT c.index, c.seq, encode(c.head, 'hex'), encode(c.prev, 'hex'), encode(c.digest, 'hex'),"
		" encode(e.hash, 'hex'), c.record::text FROM docket_checkpoints c"
		" LEFT JOIN docket_events e ON e.ledger_id = c.ledger_id AND e.seq = c.seq"
		" WHERE c.ledger_id = $1 ORDER BY c.index";
	const char *params[1] = { v->r->ledger.ledger_id };
	char prev[65] = "0000000000000000000000000000000000000000000000000000000000000000";
	PGresult *res = NULL;
	int error;

	if (strcmp(head_hex, "") != 0) {
		char mine[65];

		docket_hex(mine, v->head, LEDGER_HASH_LEN);
		if (strcmp(mine, head_hex) != 0)
			return BAD(v, v->seq, "the chain ends at %s, the head recorded at ingest is %s", mine, head_hex);
	}
	if ((error = fleet_query(&res, f, sql, 1, params)) < 0)
		return error;
	for (int i = 0; i < PQntuples(res) && error == 0; i++) {
		const char *idx = PQgetvalue(res, i, 0), *held = col(res, i, 5);
		uint64_t seq = strtoull(PQgetvalue(res, i, 1), NULL, 10);

		if (strtoull(idx, NULL, 10) != (uint64_t)i + 1)
			error = BAD(v, seq, "checkpoint %s is out of order (expected %s)", idx, "the next index");
		else if (!held || strcmp(held, PQgetvalue(res, i, 2)) != 0)
			error = BAD(v, seq, "checkpoint %s signs a head the chain does not have at its seq%s", idx, "");
		else if (i > 0 && strcmp(prev, PQgetvalue(res, i, 3)) != 0)
			error = BAD(v, seq, "checkpoint %s does not name the checkpoint before it%s", idx, "");
		else if (v->key && (error = check_signature(v, res, i, seq)) != 0)
			;
		else
			v->r->checkpoints_checked++;
		snprintf(prev, sizeof(prev), "%s", PQgetvalue(res, i, 4));
	}
	PQclear(res);
	return error;
}

/* docket_calls (schema 7: what replay --from reads of each call's history)
 * holds exactly the calls the verified events make, each as they say:
 * recomputed here from the rows check_events verified, in plain SQL (no
 * function of the store's), so a record edited, added or removed in the
 * database shows. */
static int check_calls(docket_fleet *f, vstate *v)
{
	static const char sql[] =
		"SELECT coalesce(x.session, c.session), coalesce(x.invocation, c.invocation), x.session IS NULL,"
		" c.session IS NULL FROM (" FLEET_CALLS_OF(FLEET_EVENTS_AS_CALL_ROWS("WHERE ledger_id = $1")) ") x"
		" FULL JOIN (SELECT * FROM docket_calls WHERE ledger_id = $1) c"
		" ON c.session = x.session AND c.invocation = x.invocation"
		" WHERE ROW(x.*) IS DISTINCT FROM ROW(c.*) ORDER BY 1, 2 LIMIT 1";
	const char *params[1] = { v->r->ledger.ledger_id };
	PGresult *res = NULL;
	int error;

	if ((error = fleet_query(&res, f, sql, 1, params)) < 0)
		return error;
	if (PQntuples(res) == 1)
		error = BAD(v, 0, "docket_calls: call %s/%s %s", PQgetvalue(res, 0, 0), PQgetvalue(res, 0, 1),
			    strcmp(PQgetvalue(res, 0, 2), "t") == 0 ? "has a record but no event"
			    : strcmp(PQgetvalue(res, 0, 3), "t") == 0 ? "has no record"
			    : "has a record that is not what its events say");
	PQclear(res);
	return error;
}

/* The ledger's host is bound (docket_hosts) to the role that owns the
 * ledger, or to a role it is a member of: a host name edited in
 * docket_ledgers, or a binding edited in docket_hosts, shows here. */
static int check_host(docket_fleet *f, vstate *v)
{
	static const char sql[] =
		"SELECT h.owner, CASE WHEN l.owner = h.owner THEN true"
		" WHEN (SELECT count(*) FROM pg_roles r WHERE r.rolname IN (l.owner, h.owner)) < 2 THEN false"
		" ELSE pg_has_role(l.owner, h.owner, 'MEMBER') END FROM docket_ledgers l"
		" LEFT JOIN docket_hosts h ON h.host = l.host WHERE l.ledger_id = $1";
	const char *params[1] = { v->r->ledger.ledger_id };
	PGresult *res = NULL;
	int error;

	if ((error = fleet_query(&res, f, sql, 1, params)) < 0)
		return error;
	if (PQntuples(res) != 1 || PQgetisnull(res, 0, 0))
		error = BAD(v, 0, "column host: host %s is not registered in docket_hosts", v->r->ledger.host);
	else if (strcmp(PQgetvalue(res, 0, 1), "t") != 0)
		error = BAD(v, 0, "column host: host %s is bound to role %s, the ledger belongs to role %s",
			    v->r->ledger.host, PQgetvalue(res, 0, 0), v->r->ledger.owner);
	PQclear(res);
	return error;
}

typedef struct verify_ctx {
	docket_fleet *f;
	docket_fleet_verify_cb cb;
	void *ctx;
	EVP_PKEY *key;
	uint8_t key_id[CHECKPOINT_HASH_LEN];
} verify_ctx;

static int verify_one(void *vctx, const docket_fleet_ledger *l)
{
	verify_ctx *c = vctx;
	const char *head_hex = l->head;
	docket_fleet_verify_report r;
	vstate v;
	int error;

	memset(&r, 0, sizeof(r));
	memset(&v, 0, sizeof(v));
	r.ledger = *l;
	r.ok = 1;
	v.r = &r;
	v.key = c->key;
	memcpy(v.key_id, c->key_id, sizeof(v.key_id));
	if ((error = check_host(c->f, &v)) == 0 && (error = check_events(c->f, &v)) == 0 &&
	    (error = check_calls(c->f, &v)) == 0)
		error = check_checkpoints(c->f, &v, head_hex);
	if (error < 0)
		return error;
	return c->cb(c->ctx, &r);
}

int docket_fleet_verify(docket_fleet *f, const docket_fleet_filter *filter, const char *pubkey_path,
			docket_fleet_verify_cb cb, void *ctx)
{
	verify_ctx c = { f, cb, ctx, NULL, { 0 } };
	int error;

	if (pubkey_path && ((error = checkpoint_load_pubkey(&c.key, pubkey_path)) < 0 ||
			    (error = checkpoint_key_id(c.key_id, c.key)) < 0))
		goto cleanup;
	error = fleet_each_ledger(f, filter, verify_one, &c);
cleanup:
	EVP_PKEY_free(c.key);
	return error;
}
