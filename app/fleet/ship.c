/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ship.c: sending a local ledger to the central database.
 *
 * One batch is one transaction:
 *
 *   BEGIN
 *   COPY docket_batch FROM STDIN (FORMAT binary)   a temp table OF docket_batch_row
 *   SELECT * FROM docket_ingest(ledger, host, local head)  reads docket_batch
 *   COMMIT
 *
 * The last two go out together in a libpq pipeline, and while the server
 * checks and stores the batch, the next one is read from the ledger and
 * encoded (as if this one were accepted; it is read again if the server
 * answers otherwise), so the machine's work and the server's overlap.
 *
 * docket_ingest (schema.c) checks the owner and the chain and moves the rows
 * into docket_events and the high-water mark in the same transaction, so an
 * interruption anywhere (SIGKILL, network cut) leaves either the whole batch
 * or nothing, and the next run starts again from the high-water mark: no gap,
 * no duplicate. Every batch after the first event also carries the event the
 * server holds last (the anchor): the server compares it with its copy, so a
 * ledger rewritten without growing is caught too. A refused batch commits
 * only its incident row.
 *
 * Events are read through the ledger's segment reader and sent as frames
 * (seq, time, payload, chain hash): the payload (docket.v1.Event, the bytes
 * the chain hashes) is what is stored for re-verification, and the server
 * derives every other column from it (schema.c, migration 6).
 */
#include <string.h>
#include <unistd.h>

#include "fleet_internal.h"
#include "docket/audit.h"
#include "ledger/ledger_sys.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/error.h"
#include "util/json.h"

#define SHIP_BATCH_DEFAULT 2000
#define SHIP_COLUMNS 13
#define SHIP_DERIVED 9   /* type .. policy_revision, event: NULL in a frame */

typedef struct shipper {
	docket_fleet *f;
	docket_ledger *l;
	const char *host;
	char head_s[24];          /* the local head seq, as text */
	docket_ship_report *rep;
	docket_buf copy[2];       /* batches in COPY binary format: the one sent, the next */
	ledger_reader reader;     /* the stored events, a segment at a time */
} shipper;

/* ---- COPY binary format ---- */

static int put_len(docket_buf *b, int32_t len)
{
	uint8_t be[4];

	docket_be32_put(be, (uint32_t)len);
	return docket_buf_put(b, be, 4);
}

static int put_bytes(docket_buf *b, const void *p, size_t len)
{
	int error;

	if (len > INT32_MAX - 1)
		return docket_error_set(DOCKET_EINVALID, "field too large for COPY");
	if ((error = put_len(b, (int32_t)len)) < 0)
		return error;
	return docket_buf_put(b, p, len);
}

static int put_text(docket_buf *b, const char *s)
{
	return s ? put_bytes(b, s, strlen(s)) : put_len(b, -1);
}

static int put_int8(docket_buf *b, uint64_t v)
{
	uint8_t be[8];
	int error;

	docket_be64_put(be, v);
	if ((error = put_len(b, 8)) < 0)
		return error;
	return docket_buf_put(b, be, 8);
}

static int copy_header(docket_buf *b)
{
	static const uint8_t sig[] = { 'P', 'G', 'C', 'O', 'P', 'Y', '\n', 0xff, '\r', '\n', 0 };
	static const uint8_t zero[8] = { 0 };
	int error;

	docket_buf_clear(b);
	if ((error = docket_buf_put(b, sig, sizeof(sig))) < 0)
		return error;
	return docket_buf_put(b, zero, 8);  /* flags, header extension length */
}


void fleet_event_columns(fleet_columns *out, const json_t *ev)
{
	const json_t *decision = json_object_get(ev, "decision");
	const json_t *rev = json_object_get(ev, "revision");

	if (!rev)
		rev = json_object_get(decision, "policy_revision");
	out->time = docket_json_str(ev, "time");
	out->type = docket_json_str(ev, "type");
	out->session = docket_json_str(ev, "session");
	out->invocation = docket_json_str(ev, "invocation");
	out->tool = docket_json_str(ev, "tool");
	out->verdict = docket_json_str(decision, "verdict");
	out->status = docket_json_str(ev, "status");
	out->actor = docket_json_str(ev, "actor");
	out->has_revision = json_is_integer(rev) && json_integer_value(rev) >= 0 && json_integer_value(rev) <= INT32_MAX;
	out->revision = out->has_revision ? (int32_t)json_integer_value(rev) : 0;
}

/* One event as a frame, a row of docket_batch_row with its seq, time,
 * payload and chain hash, the other columns NULL: the server derives
 * them from the payload (schema.c, migration 6), and makes the month
 * partitions from the time (compared with the payload's). */
static int copy_row(docket_buf *b, uint64_t seq, const char *time, const uint8_t *payload, size_t len,
		    const uint8_t hash[LEDGER_HASH_LEN])
{
	uint8_t n[2] = { 0, SHIP_COLUMNS };
	int error = 0;

	if ((error = docket_buf_put(b, n, 2)) < 0 ||
	    (error = put_int8(b, seq)) < 0 ||
	    (error = put_text(b, time)) < 0)
		return error;
	for (int i = 0; i < SHIP_DERIVED && error == 0; i++)
		error = put_len(b, -1);
	if (error < 0 || (error = put_bytes(b, payload, len)) < 0)
		return error;
	return put_bytes(b, hash, LEDGER_HASH_LEN);
}

/* ---- reading the ledger ---- */

/* The months (UTC, "YYYY-MM") of one batch's events: the server makes at
 * most FLEET_MONTHS_PER_BATCH new month partitions for one batch (schema.c)
 * and refuses a batch that needs more, so a batch is cut before the event
 * whose month would be one too many. */
#define FLEET_MONTHS_PER_BATCH 12

typedef struct month_set {
	char month[FLEET_MONTHS_PER_BATCH][8];
	int n;
} month_set;

/* 1 when `time`'s month is in the set or was added, 0 when the set is full. */
static int month_add(month_set *m, const char *time)
{
	char month[8] = "";

	if (time)
		snprintf(month, sizeof(month), "%.7s", time);
	for (int i = 0; i < m->n; i++)
		if (strcmp(m->month[i], month) == 0)
			return 1;
	if (m->n == FLEET_MONTHS_PER_BATCH)
		return 0;
	memcpy(m->month[m->n++], month, sizeof(month));
	return 1;
}

/* The event at `seq` as a frame in `b`; 1 (nothing written) when its
 * month does not fit in `months`. */
static int read_one(shipper *s, docket_buf *b, MDB_txn *txn, uint64_t seq, month_set *months)
{
	uint8_t hash[LEDGER_HASH_LEN];
	docket_event *ev = NULL;
	const uint8_t *payload;
	size_t len;
	int error;

	reader_set_txn(&s->reader, txn);
	if ((error = reader_payload(&s->reader, seq, &payload, &len)) < 0 ||
	    (error = reader_hash(&s->reader, seq, hash)) < 0 ||
	    (error = event_unpack(&ev, payload, len)) < 0)
		goto cleanup;
	if (!month_add(months, ev->time && *ev->time ? ev->time : NULL))
		error = 1;
	else
		error = copy_row(b, seq, ev->time && *ev->time ? ev->time : NULL, payload, len, hash);
cleanup:
	if (error < 0)
		docket_error_prefix("seq %llu: ", (unsigned long long)seq);
	docket_event_free(ev);
	return error;
}

typedef struct range {
	uint64_t first, want;  /* what was asked for: first..want */
	uint64_t last;         /* what was read (want, or less: the months) */
} range;

/* Events r->first..r->want into `b` in COPY binary format, in one read
 * transaction, cut at the months' bound (r->last: the last one read). */
static int read_range(shipper *s, docket_buf *b, range *r)
{
	static const uint8_t trailer[2] = { 0xff, 0xff };
	MDB_txn *txn = NULL;
	month_set months;
	int error;

	months.n = 0;
	r->last = r->first;
	if ((error = copy_header(b)) < 0 ||
	    (error = store_txn_begin(&txn, s->l, MDB_RDONLY)) < 0)
		return error;
	for (uint64_t seq = r->first; seq && seq <= r->want && error == 0; seq++)
		if ((error = read_one(s, b, txn, seq, &months)) == 0)
			r->last = seq;
	store_txn_abort(s->l, txn);
	return error < 0 ? error : docket_buf_put(b, trailer, 2);
}

/* ---- one batch ---- */

static int send_copy(shipper *s, const docket_buf *b)
{
	PGresult *res;
	int error = 0;

	res = PQexec(s->f->conn, "COPY docket_batch FROM STDIN (FORMAT binary)");
	if (PQresultStatus(res) != PGRES_COPY_IN) {
		error = fleet_result_error(res, s->f, "ship (COPY)");
		PQclear(res);
		return error;
	}
	PQclear(res);
	if (PQputCopyData(s->f->conn, b->ptr, (int)b->len) != 1 ||
	    PQputCopyEnd(s->f->conn, NULL) != 1)
		return fleet_result_error(NULL, s->f, "ship (COPY)");
	while ((res = PQgetResult(s->f->conn))) {
		if (PQresultStatus(res) != PGRES_COMMAND_OK && error == 0)
			error = fleet_result_error(res, s->f, "ship (COPY)");
		PQclear(res);
	}
	return error;
}

/* BEGIN, the COPY of `b`, then docket_ingest and COMMIT in one pipeline,
 * not waiting for their answers (collect() reads them). */
static int send_batch(shipper *s, const docket_buf *b)
{
	static const char sql[] =
		"SELECT status, high_seq, head, detail FROM docket_ingest($1, $2, $3)";
	const char *params[3] = { s->rep->ledger_id, s->host, s->head_s };
	PGconn *c = s->f->conn;
	int error;

	if ((error = fleet_exec(s->f, "BEGIN")) < 0)
		return error;
	if ((error = send_copy(s, b)) < 0)
		goto fail;
	if (PQenterPipelineMode(c) != 1 || PQsendQueryParams(c, sql, 3, NULL, params, NULL, NULL, 0) != 1 ||
	    PQsendQueryParams(c, "COMMIT", 0, NULL, NULL, NULL, NULL, 0) != 1 || PQpipelineSync(c) != 1) {
		error = fleet_result_error(NULL, s->f, "ship");
		PQexitPipelineMode(c);
		goto fail;
	}
	return 0;
fail:
	fleet_rollback(s->f);
	return error;
}

static int ingest_answer(shipper *s, const PGresult *res, uint64_t *high)
{
	if (PQntuples(res) != 1 || PQnfields(res) != 4)
		return docket_error_set(DOCKET_ESTORAGE, "ship: docket_ingest returned %d rows", PQntuples(res));
	*high = strtoull(PQgetvalue(res, 0, 1), NULL, 10);
	if (strcmp(PQgetvalue(res, 0, 0), "ok") != 0) {
		s->rep->refused = 1;
		snprintf(s->rep->incident, sizeof(s->rep->incident), "%s", PQgetvalue(res, 0, 3));
	}
	return 0;
}

/* The answers of send_batch's pipeline: docket_ingest's row, COMMIT, the
 * sync point. */
static int collect(shipper *s, uint64_t *high)
{
	PGconn *c = s->f->conn;
	PGresult *res;
	int error = 0, answered = 0, synced = 0, ends = 0;

	while (!synced && PQstatus(c) == CONNECTION_OK && ends <= 2) {
		ExecStatusType st;

		if (!(res = PQgetResult(c))) {
			ends++;  /* the end of one statement's results */
			continue;
		}
		st = PQresultStatus(res);
		if (st == PGRES_PIPELINE_SYNC)
			synced = 1;
		else if (st == PGRES_TUPLES_OK && !answered++)
			error = ingest_answer(s, res, high);
		else if (st != PGRES_COMMAND_OK && st != PGRES_PIPELINE_ABORTED && error == 0)
			error = fleet_result_error(res, s->f, "ship");
		PQclear(res);
	}
	if (synced)
		PQexitPipelineMode(c);
	if (error == 0 && (!synced || !answered))
		error = fleet_result_error(NULL, s->f, "ship");
	if (error < 0)
		fleet_rollback(s->f);
	return error;
}

/* ---- the session ---- */

static int server_state(shipper *s, uint64_t *high, uint64_t *checkpoints)
{
	const char *params[1] = { s->rep->ledger_id };
	PGresult *res = NULL;
	int error;

	*high = *checkpoints = 0;
	if ((error = fleet_query(&res, s->f, "SELECT high_seq, checkpoints FROM docket_ledgers WHERE ledger_id = $1",
				 1, params)) < 0)
		return error;
	if (PQntuples(res) == 1) {
		*high = strtoull(PQgetvalue(res, 0, 0), NULL, 10);
		*checkpoints = strtoull(PQgetvalue(res, 0, 1), NULL, 10);
	}
	PQclear(res);
	return 0;
}

/* What to send when the server holds 1..high: from the anchor, the last
 * event the server holds (or our last one, when the server holds more than
 * we have: it says truncated; with no event at all the batch is empty). */
static range next_range(uint64_t high, uint64_t head, uint64_t batch)
{
	range r;

	r.first = high < head ? high : head;
	if (r.first == 0 && head > 0)
		r.first = 1;
	r.want = high + batch < head ? high + batch : head;
	if (r.want < r.first)
		r.want = r.first;
	r.last = r.first;
	return r;
}

static int ship_events(shipper *s, uint64_t head, uint64_t batch)
{
	uint64_t high, cps, before;
	range cur, next = { 0, 0, 0 }, want;
	int i = 0, ready, error, read_error;

	if ((error = server_state(s, &high, &cps)) < 0)
		return error;
	if (head == 0 && high == 0)
		goto done;
	cur = next_range(high, head, batch);
	if ((error = read_range(s, &s->copy[i], &cur)) < 0)
		return error;
	for (;;) {
		before = high;
		if ((error = send_batch(s, &s->copy[i])) < 0)
			return error;
		/* while the server works: the next batch, as if this one were accepted */
		ready = cur.last < head;
		read_error = 0;
		if (ready) {
			next = next_range(cur.last, head, batch);
			read_error = read_range(s, &s->copy[!i], &next);
		}
		if ((error = collect(s, &high)) < 0)
			return error;
		if (read_error < 0)
			return read_error;
		if (!s->rep->refused && high > before)
			s->rep->shipped += high - before;
		if (s->rep->refused || high >= head)
			break;
		i = !i;
		want = next_range(high, head, batch);
		if (ready && want.first == next.first && want.want == next.want) {
			cur = next;
		} else {
			cur = want;
			if ((error = read_range(s, &s->copy[i], &cur)) < 0)
				return error;
		}
	}
done:
	s->rep->high_seq = high;
	return 0;
}

typedef struct cp_ship {
	shipper *s;
	uint64_t held;
	int error;
} cp_ship;

static int ship_checkpoint(void *ctx, const docket_checkpoint *cp)
{
	static const char sql[] =
		"SELECT status, detail FROM docket_ingest_checkpoint($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)";
	cp_ship *c = ctx;
	char index[24], seq[24];
	char *record = NULL;
	const char *params[10];
	PGresult *res = NULL;
	int error;

	if (cp->index <= c->held)
		return 0;
	if ((error = docket_checkpoint_record(&record, c->s->l, cp->index)) < 0)
		return error;
	snprintf(index, sizeof(index), "%llu", (unsigned long long)cp->index);
	snprintf(seq, sizeof(seq), "%llu", (unsigned long long)cp->seq);
	params[0] = c->s->rep->ledger_id;
	params[1] = c->s->host;
	params[2] = index;
	params[3] = seq;
	params[4] = cp->head;
	params[5] = cp->prev;
	params[6] = cp->digest;
	params[7] = cp->key_id;
	params[8] = cp->time;
	params[9] = record;
	error = fleet_query(&res, c->s->f, sql, 10, params);
	docket_free(record);
	if (error < 0)
		return error;
	if (strcmp(PQgetvalue(res, 0, 0), "refused") == 0) {
		c->s->rep->refused = 1;
		snprintf(c->s->rep->incident, sizeof(c->s->rep->incident), "%s", PQgetvalue(res, 0, 1));
		error = 1;  /* stop */
	} else if (strcmp(PQgetvalue(res, 0, 0), "ok") == 0) {
		c->s->rep->checkpoints++;
	}
	PQclear(res);
	return error;
}

static int ship_checkpoints(shipper *s)
{
	uint64_t high, held;
	cp_ship c;
	int error;

	if ((error = server_state(s, &high, &held)) < 0)
		return error;
	c.s = s;
	c.held = held;
	c.error = 0;
	error = docket_checkpoint_list(s->l, ship_checkpoint, &c);
	return error > 0 ? 0 : error;
}

/*
 * The batch table: temporary (this session's), emptied at each commit, and
 * readable by the owner of docket_ingest, which reads the batch from it
 * (the shipping role grants it; the grant is to its own temp table).
 */
static int prepare(shipper *s)
{
	static const char grant[] =
		"DO $$ BEGIN EXECUTE format('GRANT SELECT ON pg_temp.docket_batch TO %I',"
		" (SELECT p.proowner::regrole::text FROM pg_proc p"
		"  WHERE p.oid = 'docket_ingest(text, text, bigint)'::regprocedure)); END $$";
	int error;

	if ((error = fleet_exec(s->f, "CREATE TEMP TABLE IF NOT EXISTS docket_batch OF docket_batch_row"
				" ON COMMIT DELETE ROWS")) < 0)
		return error;
	return fleet_exec(s->f, grant);
}

int docket_fleet_ship(docket_fleet *f, docket_ledger *l, const docket_ship_options *o,
		      docket_ship_report *rep)
{
	docket_ship_options defaults = DOCKET_SHIP_OPTIONS_INIT;
	docket_ledger_info info;
	char hostname[256];
	shipper s;
	int error;

	memset(rep, 0, sizeof(*rep));
	memset(&s, 0, sizeof(s));
	if (!o)
		o = &defaults;
	if ((error = docket_ledger_info_get(l, &info)) < 0)
		return error;
	memcpy(rep->ledger_id, info.ledger_id, sizeof(rep->ledger_id));
	if (!o->host || !*o->host) {
		if (gethostname(hostname, sizeof(hostname)) < 0)
			snprintf(hostname, sizeof(hostname), "unknown");
		hostname[sizeof(hostname) - 1] = '\0';
	}
	s.f = f;
	s.l = l;
	reader_init(&s.reader, l, NULL);
	s.reader.scan = 1;
	s.host = o->host && *o->host ? o->host : hostname;
	s.rep = rep;
	snprintf(s.head_s, sizeof(s.head_s), "%llu", (unsigned long long)info.events);
	if ((error = fleet_schema_check(f)) < 0 || (error = prepare(&s)) < 0)
		goto cleanup;
	if ((error = ship_events(&s, info.events, o->batch ? o->batch : SHIP_BATCH_DEFAULT)) < 0)
		goto cleanup;
	if (!rep->refused)
		error = ship_checkpoints(&s);
cleanup:
	docket_buf_dispose(&s.copy[0]);
	docket_buf_dispose(&s.copy[1]);
	reader_dispose(&s.reader);
	return error;
}
