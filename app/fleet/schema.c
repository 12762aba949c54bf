/* SPDX-License-Identifier: Apache-2.0 */
/*
 * schema.c: the central schema and its migrations (docs/fleet.md).
 *
 * Migrations are numbered from 1 and applied in order, each in its own
 * transaction together with its row in docket_schema, under an advisory
 * lock so that two `docket fleet init` runs do not race. A database whose
 * schema is newer than this docket knows is refused (it would not know
 * what the newer version guarantees).
 *
 * Invariants the schema enforces (the ingest functions are the only way in
 * for a shipping role; it has no INSERT, UPDATE or DELETE on any table):
 *   1. a ledger belongs to the role that first shipped it (or the one the
 *      operator registered it for); no other role may ship its events;
 *   2. docket_events holds, per ledger, exactly seqs 1..high_seq: a batch
 *      is accepted only when it continues seq high_seq + 1 and every event
 *      extends the hash chain h[n] = SHA-256(h[n-1] || be64(n) || payload)
 *      from the head held centrally (computed here, in SQL);
 *   3. events a batch repeats (seq <= high_seq) must be byte-identical in
 *      their chain hash to the ones held, else the batch is refused;
 *   4. a refused batch writes nothing but its row in docket_incidents;
 *   5. a checkpoint is accepted only when it names the chain hash held at
 *      its seq and the digest of the checkpoint before it.
 */
#include <string.h>

#include "fleet_internal.h"
#include "util/error.h"

typedef struct migration {
	int version;
	const char *description;
	const char *const *sql;  /* statements, NULL-terminated (C caps literal length) */
} migration;

static const char schema_table[] =
	"CREATE TABLE IF NOT EXISTS docket_schema ("
	" version integer PRIMARY KEY,"
	" description text NOT NULL,"
	" applied_at timestamptz NOT NULL DEFAULT now())";

/* Migration 1: tables, views, roles, ingest functions. */
static const char *const m1[] = {
	"DO $$ BEGIN\n"
	"  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'docket_shipper') THEN\n"
	"    CREATE ROLE docket_shipper NOLOGIN;\n"
	"  END IF;\n"
	"  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'docket_reader') THEN\n"
	"    CREATE ROLE docket_reader NOLOGIN;\n"
	"  END IF;\n"
	"END $$;\n",

	"CREATE TABLE docket_ledgers (\n"
	"  ledger_id text PRIMARY KEY CHECK (ledger_id ~ '^[0-9a-f]{32}$'),\n"
	"  host text NOT NULL,\n"
	"  owner name NOT NULL,\n"
	"  high_seq bigint NOT NULL DEFAULT 0,\n"
	"  head bytea NOT NULL DEFAULT '\\x0000000000000000000000000000000000000000000000000000000000000000',\n"
	"  checkpoints bigint NOT NULL DEFAULT 0,\n"
	"  registered_at timestamptz NOT NULL DEFAULT now(),\n"
	"  shipped_at timestamptz);\n",

	"CREATE TABLE docket_events (\n"
	"  ledger_id text NOT NULL,\n"
	"  seq bigint NOT NULL CHECK (seq > 0),\n"
	"  time timestamptz NOT NULL,\n"
	"  type text NOT NULL,\n"
	"  session text,\n"
	"  invocation text,\n"
	"  tool text,\n"
	"  verdict text,\n"
	"  status text,\n"
	"  actor text,\n"
	"  policy_revision integer,\n"
	"  event jsonb NOT NULL,\n"
	"  payload bytea NOT NULL,\n"
	"  hash bytea NOT NULL CHECK (length(hash) = 32),\n"
	"  PRIMARY KEY (ledger_id, seq, time)\n"
	") PARTITION BY RANGE (time);\n"
	"CREATE INDEX docket_events_call ON docket_events (ledger_id, session, invocation);\n"
	"CREATE INDEX docket_events_type_time ON docket_events (type, time);\n",

	"CREATE TABLE docket_checkpoints (\n"
	"  ledger_id text NOT NULL REFERENCES docket_ledgers,\n"
	"  index bigint NOT NULL,\n"
	"  seq bigint NOT NULL,\n"
	"  head bytea NOT NULL,\n"
	"  prev bytea NOT NULL,\n"
	"  digest bytea NOT NULL,\n"
	"  key_id text NOT NULL,\n"
	"  time timestamptz NOT NULL,\n"
	"  record jsonb NOT NULL,\n"
	"  PRIMARY KEY (ledger_id, index));\n",

	"CREATE TABLE docket_incidents (\n"
	"  id bigserial PRIMARY KEY,\n"
	"  at timestamptz NOT NULL DEFAULT now(),\n"
	"  ledger_id text NOT NULL,\n"
	"  host text,\n"
	"  role name NOT NULL DEFAULT session_user,\n"
	"  kind text NOT NULL,\n"
	"  seq bigint,\n"
	"  detail text NOT NULL);\n",

	/* what a shipper sends: one row per event, COPY'd into a temp table OF this type */
	"CREATE TYPE docket_batch_row AS (\n"
	"  seq bigint, time text, type text, session text, invocation text, tool text,\n"
	"  verdict text, status text, actor text, policy_revision integer,\n"
	"  event jsonb, payload bytea, hash bytea);\n",

	"CREATE VIEW docket_approvals AS\n"
	"  SELECT s.ledger_id, l.host, s.seq, s.time, s.session, s.invocation, i.tool,\n"
	"         i.event -> 'args' AS args, s.event ->> 'result' AS result, s.actor,\n"
	"         s.event ->> 'reason' AS reason\n"
	"  FROM docket_events s JOIN docket_ledgers l USING (ledger_id)\n"
	"  LEFT JOIN docket_events i ON i.ledger_id = s.ledger_id AND i.session = s.session\n"
	"       AND i.invocation = s.invocation AND i.type = 'tool.intent'\n"
	"  WHERE s.type = 'approval.settled';\n"
	"CREATE VIEW docket_denials AS\n"
	"  SELECT c.ledger_id, l.host, c.seq, c.time, c.session, c.invocation, i.tool,\n"
	"         i.event -> 'args' AS args, i.verdict, c.status,\n"
	"         (SELECT s.actor FROM docket_events s WHERE s.ledger_id = c.ledger_id\n"
	"            AND s.session = c.session AND s.invocation = c.invocation\n"
	"            AND s.type = 'approval.settled' ORDER BY s.seq DESC LIMIT 1) AS actor\n"
	"  FROM docket_events c JOIN docket_ledgers l USING (ledger_id)\n"
	"  LEFT JOIN docket_events i ON i.ledger_id = c.ledger_id AND i.session = c.session\n"
	"       AND i.invocation = c.invocation AND i.type = 'tool.intent'\n"
	"  WHERE c.type = 'tool.completed' AND c.status IN ('denied', 'unsupported');\n",

	/* monthly partitions, created on first use under an advisory lock */
	"CREATE FUNCTION docket_partition_for(t timestamptz) RETURNS void\n"
	"LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $f$\n"
	"DECLARE\n"
	"  lo timestamp := date_trunc('month', t AT TIME ZONE 'UTC');\n"
	"  name text := 'docket_events_' || to_char(lo, 'YYYYMM');\n"
	"  sch text := (SELECT n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace\n"
	"               WHERE c.oid = 'docket_events'::regclass);\n"
	"BEGIN\n"
	"  IF to_regclass(format('%I.%I', sch, name)) IS NOT NULL THEN RETURN; END IF;\n"
	"  PERFORM pg_advisory_xact_lock(hashtext('docket_partitions'));\n"
	"  IF to_regclass(format('%I.%I', sch, name)) IS NOT NULL THEN RETURN; END IF;\n"
	"  EXECUTE format('CREATE TABLE %I.%I PARTITION OF %I.docket_events FOR VALUES FROM (%L) TO (%L)',\n"
	"                 sch, name, sch, (lo AT TIME ZONE 'UTC'), ((lo + interval '1 month') AT TIME ZONE 'UTC'));\n"
	"END $f$;\n",

	"CREATE FUNCTION docket_incident(p_ledger text, p_host text, p_kind text, p_seq bigint, p_detail text)\n"
	"RETURNS void LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, public AS $f$\n"
	"  INSERT INTO docket_incidents (ledger_id, host, kind, seq, detail)\n"
	"  VALUES (p_ledger, p_host, p_kind, p_seq, p_detail) $f$;\n",

	/* The owner check and the chain check of one batch (invariants 1-4).
	 * The batch is the caller's temp table pg_temp.docket_batch (COPY'd,
	 * then granted to this function's owner): nothing else is read. */
	"CREATE FUNCTION docket_ingest(p_ledger text, p_host text, p_local_head bigint)\n"
	"RETURNS TABLE (status text, high_seq bigint, head text, detail text)\n"
	"LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $f$\n"
	"DECLARE\n"
	"  l docket_ledgers%ROWTYPE;\n"
	"  r docket_batch_row;\n"
	"  h bytea;\n"
	"  hi bigint;\n"
	"  held bytea;\n"
	"  why text;\n"
	"  kind text;\n"
	"  at bigint;\n"
	"  t timestamptz;\n"
	"BEGIN\n"
	"  IF p_ledger IS NULL OR p_ledger !~ '^[0-9a-f]{32}$' THEN\n"
	"    RAISE EXCEPTION 'docket: bad ledger id %', p_ledger USING ERRCODE = '22023';\n"
	"  END IF;\n"
	/* the batch must be a plain temp table of our row type: a view, row
	 * security policies or rules would run the caller's code with this
	 * function's rights */
	"  IF NOT EXISTS (SELECT 1 FROM pg_class c WHERE c.oid = to_regclass('pg_temp.docket_batch')\n"
	"                 AND c.relkind = 'r' AND c.relpersistence = 't' AND NOT c.relrowsecurity\n"
	"                 AND NOT c.relhasrules AND c.reloftype = 'docket_batch_row'::regtype) THEN\n"
	"    RAISE EXCEPTION 'docket: pg_temp.docket_batch must be a temporary table OF docket_batch_row'\n"
	"      USING ERRCODE = '42501';\n"
	"  END IF;\n"
	"  INSERT INTO docket_ledgers (ledger_id, host, owner) VALUES (p_ledger, p_host, session_user)\n"
	"    ON CONFLICT (ledger_id) DO NOTHING;\n"
	"  SELECT * INTO l FROM docket_ledgers WHERE ledger_id = p_ledger FOR UPDATE;\n"
	"  IF l.owner <> session_user AND NOT pg_has_role(session_user, l.owner, 'MEMBER') THEN\n"
	"    kind := 'foreign_ledger';\n"
	"    why := format('role %s may not ship ledger %s: it belongs to role %s', session_user, p_ledger, l.owner);\n"
	"  END IF;\n"
	"  hi := l.high_seq;\n"
	"  h := l.head;\n"
	"  IF kind IS NULL THEN\n"
	"    FOR r IN SELECT * FROM pg_temp.docket_batch b ORDER BY b.seq LOOP\n"
	"      IF r.seq <= l.high_seq THEN\n"
	"        SELECT e.hash INTO held FROM docket_events e WHERE e.ledger_id = p_ledger AND e.seq = r.seq;\n"
	"        IF held IS DISTINCT FROM r.hash THEN\n"
	"          kind := 'rewritten'; at := r.seq;\n"
	"          why := format('event %s differs from the one shipped earlier: the ledger''s history was rewritten', r.seq);\n"
	"          EXIT;\n"
	"        END IF;\n"
	"        CONTINUE;\n"
	"      END IF;\n"
	"      IF r.seq <> hi + 1 THEN\n"
	"        kind := 'gap'; at := r.seq;\n"
	"        why := format('event %s does not follow event %s held centrally', r.seq, hi);\n"
	"        EXIT;\n"
	"      END IF;\n"
	"      IF r.hash IS NULL OR r.payload IS NULL OR sha256(h || int8send(r.seq) || r.payload) <> r.hash THEN\n"
	"        kind := CASE WHEN r.seq = l.high_seq + 1 THEN 'rewritten' ELSE 'chain_break' END; at := r.seq;\n"
	"        why := format('event %s does not continue the hash chain held centrally (head %s at seq %s)',\n"
	"                      r.seq, encode(h, 'hex'), hi);\n"
	"        EXIT;\n"
	"      END IF;\n"
	"      h := r.hash;\n"
	"      hi := r.seq;\n"
	"    END LOOP;\n"
	"  END IF;\n"
	"  IF kind IS NULL AND p_local_head < l.high_seq THEN\n"
	"    kind := 'truncated'; at := p_local_head;\n"
	"    why := format('the ledger holds %s events, %s were shipped before', p_local_head, l.high_seq);\n"
	"  END IF;\n"
	"  IF kind IS NOT NULL THEN\n"
	"    PERFORM docket_incident(p_ledger, p_host, kind, at, why);\n"
	"    RETURN QUERY SELECT 'refused'::text, l.high_seq, encode(l.head, 'hex'), kind || ': ' || why;\n"
	"    RETURN;\n"
	"  END IF;\n"
	"  IF hi > l.high_seq THEN\n"
	"    FOR t IN SELECT DISTINCT date_trunc('month', (x.time::timestamptz) AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'\n"
	"             FROM pg_temp.docket_batch x WHERE x.seq > l.high_seq LOOP\n"
	"      PERFORM docket_partition_for(t);\n"
	"    END LOOP;\n"
	"    INSERT INTO docket_events (ledger_id, seq, time, type, session, invocation, tool, verdict,\n"
	"                               status, actor, policy_revision, event, payload, hash)\n"
	"      SELECT p_ledger, x.seq, x.time::timestamptz, x.type, x.session, x.invocation, x.tool,\n"
	"             x.verdict, x.status, x.actor, x.policy_revision, x.event, x.payload, x.hash\n"
	"      FROM pg_temp.docket_batch x WHERE x.seq > l.high_seq ORDER BY x.seq;\n"
	"  END IF;\n"
	"  UPDATE docket_ledgers SET high_seq = hi, head = h, host = p_host, shipped_at = now()\n"
	"    WHERE ledger_id = p_ledger;\n"
	"  RETURN QUERY SELECT 'ok'::text, hi, encode(h, 'hex'), format('%s new events', hi - l.high_seq);\n"
	"END $f$;\n",

	/* Invariant 5: one checkpoint, after the events it covers. */
	"CREATE FUNCTION docket_ingest_checkpoint(p_ledger text, p_host text, p_index bigint, p_seq bigint,\n"
	"    p_head text, p_prev text, p_digest text, p_key_id text, p_time text, p_record jsonb)\n"
	"RETURNS TABLE (status text, detail text)\n"
	"LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $f$\n"
	"DECLARE\n"
	"  l docket_ledgers%ROWTYPE;\n"
	"  held docket_checkpoints%ROWTYPE;\n"
	"  at_seq bytea;\n"
	"  prev_digest bytea;\n"
	"  why text;\n"
	"BEGIN\n"
	"  SELECT * INTO l FROM docket_ledgers WHERE ledger_id = p_ledger FOR UPDATE;\n"
	"  IF NOT FOUND OR (l.owner <> session_user AND NOT pg_has_role(session_user, l.owner, 'MEMBER')) THEN\n"
	"    RAISE EXCEPTION 'docket: role % may not ship checkpoints of ledger %', session_user, p_ledger\n"
	"      USING ERRCODE = '42501';\n"
	"  END IF;\n"
	"  SELECT * INTO held FROM docket_checkpoints c WHERE c.ledger_id = p_ledger AND c.index = p_index;\n"
	"  IF FOUND THEN\n"
	"    IF held.digest = decode(p_digest, 'hex') THEN\n"
	"      RETURN QUERY SELECT 'held'::text, ''::text; RETURN;\n"
	"    END IF;\n"
	"    why := format('checkpoint %s differs from the one shipped earlier', p_index);\n"
	"  ELSIF p_index <> l.checkpoints + 1 THEN\n"
	"    why := format('checkpoint %s does not follow checkpoint %s held centrally', p_index, l.checkpoints);\n"
	"  ELSIF p_seq < 1 OR p_seq > l.high_seq THEN\n"
	"    why := format('checkpoint %s covers seq %s, past the %s events held', p_index, p_seq, l.high_seq);\n"
	"  ELSE\n"
	"    SELECT e.hash INTO at_seq FROM docket_events e WHERE e.ledger_id = p_ledger AND e.seq = p_seq;\n"
	"    SELECT c.digest INTO prev_digest FROM docket_checkpoints c\n"
	"      WHERE c.ledger_id = p_ledger AND c.index = p_index - 1;\n"
	"    IF at_seq IS DISTINCT FROM decode(p_head, 'hex') THEN\n"
	"      why := format('checkpoint %s signs head %s at seq %s, the chain held centrally has %s there',\n"
	"                    p_index, p_head, p_seq, encode(at_seq, 'hex'));\n"
	"    ELSIF p_index > 1 AND prev_digest IS DISTINCT FROM decode(p_prev, 'hex') THEN\n"
	"      why := format('checkpoint %s does not name checkpoint %s', p_index, p_index - 1);\n"
	"    END IF;\n"
	"  END IF;\n"
	"  IF why IS NOT NULL THEN\n"
	"    PERFORM docket_incident(p_ledger, p_host, 'checkpoint', p_seq, why);\n"
	"    RETURN QUERY SELECT 'refused'::text, 'checkpoint: ' || why; RETURN;\n"
	"  END IF;\n"
	"  INSERT INTO docket_checkpoints VALUES (p_ledger, p_index, p_seq, decode(p_head, 'hex'),\n"
	"    decode(p_prev, 'hex'), decode(p_digest, 'hex'), p_key_id, p_time::timestamptz, p_record);\n"
	"  UPDATE docket_ledgers SET checkpoints = p_index WHERE ledger_id = p_ledger;\n"
	"  RETURN QUERY SELECT 'ok'::text, ''::text;\n"
	"END $f$;\n",

	/* least privilege: shippers read their own ledger's row and call the
	 * ingest functions; readers read everything; nobody else anything */
	"REVOKE ALL ON FUNCTION docket_partition_for(timestamptz) FROM PUBLIC;\n"
	"REVOKE ALL ON FUNCTION docket_incident(text, text, text, bigint, text) FROM PUBLIC;\n"
	"REVOKE ALL ON FUNCTION docket_ingest(text, text, bigint) FROM PUBLIC;\n"
	"REVOKE ALL ON FUNCTION docket_ingest_checkpoint(text, text, bigint, bigint, text, text, text, text, text, jsonb) FROM PUBLIC;\n"
	"GRANT EXECUTE ON FUNCTION docket_ingest(text, text, bigint) TO docket_shipper;\n"
	"GRANT EXECUTE ON FUNCTION docket_ingest_checkpoint(text, text, bigint, bigint, text, text, text, text, text, jsonb) TO docket_shipper;\n"
	"ALTER TABLE docket_ledgers ENABLE ROW LEVEL SECURITY;\n"
	"CREATE POLICY docket_ledgers_own ON docket_ledgers FOR SELECT TO docket_shipper\n"
	"  USING (owner = current_user);\n"
	"CREATE POLICY docket_ledgers_all ON docket_ledgers FOR SELECT TO docket_reader USING (true);\n"
	"GRANT SELECT ON docket_schema, docket_ledgers TO docket_shipper;\n"
	"GRANT SELECT ON docket_schema, docket_ledgers, docket_events, docket_checkpoints, docket_incidents,\n"
	"  docket_approvals, docket_denials TO docket_reader;\n",
	NULL
};

/*
 * Migration 2: the chain check of a batch in set-based SQL. Version 1
 * checked the batch row by row in plpgsql; that function stays, renamed
 * docket_ingest_checked, as the reference: the new docket_ingest checks the
 * owner, the events held (the anchor) and the new events' chain in two
 * queries over the whole batch (each new event's seq and hash against its
 * predecessor's, the first against the head held), and inserts when
 * everything holds. Anything else (a refusal, a foreign or truncated
 * ledger) is handed to docket_ingest_checked, which finds the first bad
 * event, writes the incident and answers exactly as before. No ORDER BY on
 * the insert (the primary key orders); the months' partitions are made in
 * one pass, first (see below).
 */
static const char *const m2[] = {
	"ALTER FUNCTION docket_ingest(text, text, bigint) RENAME TO docket_ingest_checked;\n"
	"REVOKE ALL ON FUNCTION docket_ingest_checked(text, text, bigint) FROM PUBLIC, docket_shipper;\n",

	"CREATE FUNCTION docket_ingest(p_ledger text, p_host text, p_local_head bigint)\n"
	"RETURNS TABLE (status text, high_seq bigint, head text, detail text)\n"
	"LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $f$\n"
	"DECLARE\n"
	"  l docket_ledgers%ROWTYPE;\n"
	"  ok boolean;\n"
	"  n bigint;\n"
	"  hi bigint;\n"
	"  h bytea;\n"
	"BEGIN\n"
	"  IF p_ledger IS NULL OR p_ledger !~ '^[0-9a-f]{32}$' OR NOT EXISTS (SELECT 1 FROM pg_class c\n"
	"      WHERE c.oid = to_regclass('pg_temp.docket_batch') AND c.relkind = 'r' AND c.relpersistence = 't'\n"
	"      AND NOT c.relrowsecurity AND NOT c.relhasrules AND c.reloftype = 'docket_batch_row'::regtype) THEN\n"
	"    RETURN QUERY SELECT * FROM docket_ingest_checked(p_ledger, p_host, p_local_head);\n"
	"    RETURN;\n"
	"  END IF;\n"
	"  INSERT INTO docket_ledgers (ledger_id, host, owner) VALUES (p_ledger, p_host, session_user)\n"
	"    ON CONFLICT (ledger_id) DO NOTHING;\n"
	"  SELECT * INTO l FROM docket_ledgers WHERE ledger_id = p_ledger FOR UPDATE;\n"
	"  ok := (l.owner = session_user OR pg_has_role(session_user, l.owner, 'MEMBER'))\n"
	"        AND p_local_head >= l.high_seq;\n"
	/* the months' partitions before anything reads docket_events: creating
	 * one locks the parent, and two shippers that each read it first and
	 * then waited for the other's lock would deadlock */
	"  IF ok THEN\n"
	"    PERFORM docket_partition_for(m) FROM (SELECT DISTINCT date_trunc('month',\n"
	"      (x.time::timestamptz) AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS m\n"
	"      FROM pg_temp.docket_batch x WHERE x.seq > l.high_seq) months;\n"
	"  END IF;\n"
	/* the events held again (the anchor) carry the hash held */
	"  ok := ok AND NOT EXISTS (SELECT 1 FROM pg_temp.docket_batch b WHERE b.seq IS NULL\n"
	"    OR (b.seq <= l.high_seq AND b.hash IS DISTINCT FROM\n"
	"        (SELECT e.hash FROM docket_events e WHERE e.ledger_id = p_ledger AND e.seq = b.seq)));\n"
	/* every new event follows its predecessor in seq and in the chain */
	"  IF ok THEN\n"
	"    SELECT count(*), max(x.seq), coalesce(bool_and(coalesce(x.seq = coalesce(x.prev_seq, l.high_seq) + 1\n"
	"             AND x.payload IS NOT NULL AND x.hash IS NOT NULL\n"
	"             AND sha256(coalesce(x.prev, l.head) || int8send(x.seq) || x.payload) = x.hash, false)), true)\n"
	"      INTO n, hi, ok\n"
	"      FROM (SELECT b.seq, b.payload, b.hash, lag(b.seq) OVER w AS prev_seq, lag(b.hash) OVER w AS prev\n"
	"            FROM pg_temp.docket_batch b WHERE b.seq > l.high_seq WINDOW w AS (ORDER BY b.seq)) x;\n"
	"  END IF;\n"
	"  IF NOT ok THEN\n"
	"    RETURN QUERY SELECT * FROM docket_ingest_checked(p_ledger, p_host, p_local_head);\n"
	"    RETURN;\n"
	"  END IF;\n"
	"  hi := coalesce(hi, l.high_seq);\n"
	"  h := l.head;\n"
	"  IF n > 0 THEN\n"
	"    INSERT INTO docket_events SELECT p_ledger, x.seq, x.time::timestamptz, x.type, x.session,\n"
	"        x.invocation, x.tool, x.verdict, x.status, x.actor, x.policy_revision, x.event, x.payload, x.hash\n"
	"      FROM pg_temp.docket_batch x WHERE x.seq > l.high_seq;\n"
	"    SELECT x.hash INTO h FROM pg_temp.docket_batch x WHERE x.seq = hi;\n"
	"  END IF;\n"
	"  UPDATE docket_ledgers SET high_seq = hi, head = h, host = p_host, shipped_at = now()\n"
	"    WHERE ledger_id = p_ledger;\n"
	"  RETURN QUERY SELECT 'ok'::text, hi, encode(h, 'hex'), format('%s new events', hi - l.high_seq);\n"
	"END $f$;\n"
	"REVOKE ALL ON FUNCTION docket_ingest(text, text, bigint) FROM PUBLIC;\n"
	"GRANT EXECUTE ON FUNCTION docket_ingest(text, text, bigint) TO docket_shipper;\n",
	NULL
};

static const migration migrations[] = {
	{ 1, "events, checkpoints, incidents, views, roles, ingest functions", m1 },
	{ 2, "set-based chain check at ingest", m2 },
};

#define NMIGRATIONS (sizeof(migrations) / sizeof(migrations[0]))

int fleet_schema_latest(void)
{
	return migrations[NMIGRATIONS - 1].version;
}

int fleet_schema_version(docket_fleet *f, int *out)
{
	PGresult *res = NULL;
	int error;

	*out = 0;
	if ((error = fleet_query(&res, f, "SELECT to_regclass('docket_schema') IS NOT NULL", 0, NULL)) < 0)
		return error;
	if (strcmp(PQgetvalue(res, 0, 0), "t") != 0)
		goto cleanup;
	PQclear(res);
	res = NULL;
	if ((error = fleet_query(&res, f, "SELECT coalesce(max(version), 0) FROM docket_schema", 0, NULL)) < 0)
		return error;
	*out = (int)strtol(PQgetvalue(res, 0, 0), NULL, 10);
cleanup:
	PQclear(res);
	return error;
}

int fleet_schema_check(docket_fleet *f)
{
	int v, error;

	if ((error = fleet_schema_version(f, &v)) < 0)
		return error;
	if (v == fleet_schema_latest())
		return 0;
	if (v == 0)
		return docket_error_set(DOCKET_EVERSION, "no docket schema in this database: run docket fleet init --db ...");
	if (v < fleet_schema_latest())
		return docket_error_set(DOCKET_EVERSION, "the docket schema is at version %d, this docket needs %d: "
					"run docket fleet init --db ...", v, fleet_schema_latest());
	return docket_error_set(DOCKET_EVERSION, "the docket schema is at version %d, newer than this docket "
				"knows (%d)", v, fleet_schema_latest());
}

static int apply(docket_fleet *f, const migration *m)
{
	char version[16];
	const char *params[2];
	int error = 0;

	snprintf(version, sizeof(version), "%d", m->version);
	params[0] = version;
	params[1] = m->description;
	for (size_t i = 0; m->sql[i] && error == 0; i++)
		error = fleet_exec(f, m->sql[i]);
	if (error == 0)
		error = fleet_command(f, "INSERT INTO docket_schema (version, description) VALUES ($1, $2)", 2, params);
	if (error < 0)
		docket_error_prefix("migration %d: ", m->version);
	return error;
}

int docket_fleet_init(docket_fleet *f, int *from, int *to)
{
	int v = 0, error;
	size_t i;

	if ((error = fleet_exec(f, "BEGIN")) < 0)
		return error;
	if ((error = fleet_exec(f, "SELECT pg_advisory_xact_lock(hashtext('docket_schema'))")) < 0 ||
	    (error = fleet_exec(f, schema_table)) < 0 ||
	    (error = fleet_schema_version(f, &v)) < 0)
		goto cleanup;
	if (v > fleet_schema_latest()) {
		error = docket_error_set(DOCKET_EVERSION, "the docket schema is at version %d, newer than this "
					 "docket knows (%d)", v, fleet_schema_latest());
		goto cleanup;
	}
	for (i = 0; i < NMIGRATIONS; i++)
		if (migrations[i].version > v && (error = apply(f, &migrations[i])) < 0)
			goto cleanup;
	error = fleet_exec(f, "COMMIT");
cleanup:
	if (error < 0)
		fleet_rollback(f);
	if (from)
		*from = v;
	if (to)
		*to = error < 0 ? v : fleet_schema_latest();
	return error;
}
