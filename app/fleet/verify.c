/* SPDX-License-Identifier: Apache-2.0 */
/*
 * verify.c: the central re-check. For each ledger held, its events are read
 * back in seq order (in chunks, by seq range) and the chain is recomputed
 * from the stored payloads with the ledger's own chain function; each
 * payload must decode to an event of the type, session and invocation its
 * columns say (the columns are what fleet queries read); the end of the
 * chain must be the head docket_ingest recorded; each shipped checkpoint must
 * name the chain hash at its seq and the digest of the one before it.
 */
#include <string.h>

#include "fleet_internal.h"
#include "audit/checkpoint.h"
#include "ledger/ledger_sys.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/error.h"

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

static int same(const char *a, const char *b)
{
	return (!a && (!b || !*b)) || (a && b && strcmp(a, b) == 0);
}

/* One stored event: seq, payload, hash, type, session, invocation (binary). */
static int check_row(vstate *v, const PGresult *res, int row)
{
	uint8_t h[LEDGER_HASH_LEN];
	docket_event *ev = NULL;
	const uint8_t *payload = (const uint8_t *)PQgetvalue(res, row, 1);
	size_t len = (size_t)PQgetlength(res, row, 1);
	uint64_t seq;
	char num[24];
	int error;

	seq = docket_be64_get((const uint8_t *)PQgetvalue(res, row, 0));
	snprintf(num, sizeof(num), "%llu", (unsigned long long)seq);
	if (seq != v->seq + 1) {
		char want[24];

		snprintf(want, sizeof(want), "%llu", (unsigned long long)(v->seq + 1));
		return BAD(v, v->seq + 1, "event %s is missing (the next event held is %s)", want, num);
	}
	if ((error = chain_next(h, v->head, seq, payload, len)) < 0)
		return error;
	if (PQgetlength(res, row, 2) != LEDGER_HASH_LEN || memcmp(h, PQgetvalue(res, row, 2), LEDGER_HASH_LEN) != 0)
		return BAD(v, seq, "event %s: the chain recomputed from the stored payload does not match "
			   "the stored hash%s", num, "");
	if (event_unpack(&ev, payload, len) < 0)
		return BAD(v, seq, "event %s: the stored payload does not decode%s", num, "");
	if (!same(col(res, row, 3), docket_event_type(ev)) || !same(col(res, row, 4), ev->session) ||
	    !same(col(res, row, 5), ev->invocation)) {
		BAD(v, seq, "event %s: its columns do not describe its payload (a %s)", num, docket_event_type(ev));
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
		"SELECT seq, payload, hash, type, session, invocation FROM docket_events"
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
	if ((error = check_events(c->f, &v)) == 0)
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
