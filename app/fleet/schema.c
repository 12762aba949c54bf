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
#include "ledger/event.h"
#include "util/buf.h"
#include "util/error.h"

typedef struct migration {
	int version;
	const char *description;
	const char *const *sql;  /* statements, NULL-terminated (C caps literal length) */
	int (*prepare)(docket_fleet *f);  /* run first, in the same transaction (NULL: none) */
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

/* docket_events_insert (migration 3's; migration 7's adds the CTE
 * `with`, a ",\n  name AS (...)" that sees d): the rows of the batch
 * after seq p_after into docket_events, each as derived from its payload;
 * returns how many of them were sent with a column that is not what their
 * payload says (the caller refuses the batch then, and the insert is
 * rolled back with it). */
#define FLEET_EVENTS_INSERT(create, with)                                                                  \
	create " docket_events_insert(p_ledger text, p_after bigint) RETURNS bigint\n"                     \
	"LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $f$\n"                 \
	"DECLARE\n"                                                                                        \
	"  forged bigint;\n"                                                                               \
	"BEGIN\n"                                                                                          \
	"  WITH d AS MATERIALIZED (\n"                                                                     \
	"    SELECT b, docket_event_row(b.payload, b.seq, b.hash) AS r\n"                                  \
	"    FROM pg_temp.docket_batch b WHERE b.seq > p_after),\n"                                        \
	"  ins AS (\n"                                                                                     \
	"    INSERT INTO docket_events (ledger_id, seq, time, type, session, invocation, tool, verdict,\n"  \
	"                               status, actor, policy_revision, event, payload, hash)\n"           \
	"    SELECT p_ledger, (b).seq, (r).time::timestamptz, (r).type, (r).session, (r).invocation, (r).tool,\n" \
	"           (r).verdict, (r).status, (r).actor, (r).policy_revision, (r).event, (b).payload, (b).hash\n" \
	"    FROM d RETURNING 1)" with "\n"                                                                \
	"  SELECT count(*) INTO forged FROM d WHERE NOT docket_column_same(b, r);\n"                       \
	"  RETURN forged;\n"                                                                               \
	"END $f$;\n"

/*
 * Migration 3: the store derives, never trusts (issue 28). A shipper sends
 * genuine payloads; everything else in a row (the event jsonb and every
 * decoded column) is what the shipper *says* the payload holds. The server
 * now decodes each payload itself (docket_pb_json: the protobuf wire format
 * walked in plpgsql, the field map below, the enumeration names written by
 * this docket at init from its own tables, docket_pb_names) and refuses a
 * batch whose columns differ from what it derives (an incident of kind
 * `forged` naming the event and the column). Partitions are made only
 * after a batch passed every check, at most FLEET_PARTITIONS_PER_BATCH new
 * ones per batch (more: kind `partitions`), and a host name is bound to
 * the role that first shipped as it (docket_hosts; another role shipping
 * as that host: kind `host`).
 *
 * Deadlock rule kept from migration 2: a batch that needs a new month
 * takes the partition lock before it reads docket_events (creating a
 * partition locks the parent, and two shippers that each read it and then
 * waited for the other's partition would deadlock).
 */
#define FLEET_PARTITIONS_PER_BATCH "12"

static const char *const m3[] = {
	/* every month's partition has one name */
	"CREATE FUNCTION docket_partition_name(t timestamptz) RETURNS text\n"
	"LANGUAGE sql STABLE SET search_path = pg_catalog, public AS $f$\n"
	"  SELECT format('%I.%I', n.nspname, 'docket_events_' || to_char(date_trunc('month', t AT TIME ZONE 'UTC'), 'YYYYMM'))\n"
	"  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = 'docket_events'::regclass $f$;\n"
	"CREATE OR REPLACE FUNCTION docket_partition_for(t timestamptz) RETURNS void\n"
	"LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $f$\n"
	"DECLARE\n"
	"  lo timestamp := date_trunc('month', t AT TIME ZONE 'UTC');\n"
	"  name text := docket_partition_name(t);\n"
	"BEGIN\n"
	"  IF to_regclass(name) IS NOT NULL THEN RETURN; END IF;\n"
	"  PERFORM pg_advisory_xact_lock(hashtext('docket_partitions'));\n"
	"  IF to_regclass(name) IS NOT NULL THEN RETURN; END IF;\n"
	"  EXECUTE format('CREATE TABLE %s PARTITION OF docket_events FOR VALUES FROM (%L) TO (%L)',\n"
	"                 name, (lo AT TIME ZONE 'UTC'), ((lo + interval '1 month') AT TIME ZONE 'UTC'));\n"
	"END $f$;\n",

	/* Before anything reads docket_events: the partition lock, when the
	 * batch has a month without its partition (or a time that does not
	 * parse: the batch will be refused, the lock costs nothing then). */
	"CREATE FUNCTION docket_partitions_lock() RETURNS void\n"
	"LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $f$\n"
	"DECLARE\n"
	"  missing boolean;\n"
	"BEGIN\n"
	"  BEGIN\n"
	"    SELECT bool_or(to_regclass(docket_partition_name(m)) IS NULL) INTO missing\n"
	"      FROM (SELECT DISTINCT date_trunc('month', x.time::timestamptz) AS m FROM pg_temp.docket_batch x) ms;\n"
	"  EXCEPTION WHEN OTHERS THEN\n"
	"    missing := true;\n"
	"  END;\n"
	"  IF missing THEN\n"
	"    PERFORM pg_advisory_xact_lock(hashtext('docket_partitions'));\n"
	"  END IF;\n"
	"END $f$;\n",

	/* After a batch passed every check: its months' partitions, at most
	 * FLEET_PARTITIONS_PER_BATCH new ones (else the refusal, nothing made). */
	"CREATE FUNCTION docket_partitions_make(p_after bigint) RETURNS text\n"
	"LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $f$\n"
	"DECLARE\n"
	"  months timestamptz[];\n"
	"  m timestamptz;\n"
	"  missing int;\n"
	"BEGIN\n"
	"  SELECT array_agg(DISTINCT date_trunc('month', (x.time::timestamptz) AT TIME ZONE 'UTC') AT TIME ZONE 'UTC')\n"
	"    INTO months FROM pg_temp.docket_batch x WHERE x.seq > p_after;\n"
	"  SELECT count(*) INTO missing FROM unnest(months) u WHERE to_regclass(docket_partition_name(u)) IS NULL;\n"
	"  IF missing > " FLEET_PARTITIONS_PER_BATCH " THEN\n"
	"    RETURN format('the batch needs %s new month partitions, at most %s are made per batch', missing, "
	FLEET_PARTITIONS_PER_BATCH ");\n"
	"  END IF;\n"
	"  FOREACH m IN ARRAY coalesce(months, '{}') LOOP\n"
	"    PERFORM docket_partition_for(m);\n"
	"  END LOOP;\n"
	"  RETURN NULL;\n"
	"END $f$;\n",

	/* A host name belongs to the role that first shipped as it (or the one
	 * the operator registered it for). */
	"CREATE TABLE docket_hosts (\n"
	"  host text PRIMARY KEY,\n"
	"  owner name NOT NULL,\n"
	"  registered_at timestamptz NOT NULL DEFAULT now());\n"
	"INSERT INTO docket_hosts (host, owner)\n"
	"  SELECT DISTINCT ON (host) host, owner FROM docket_ledgers ORDER BY host, registered_at, ledger_id;\n"
	"GRANT SELECT ON docket_hosts TO docket_reader;\n",

	"CREATE FUNCTION docket_host_problem(p_host text) RETURNS text\n"
	"LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $f$\n"
	"DECLARE\n"
	"  o name;\n"
	"BEGIN\n"
	"  IF p_host IS NULL OR p_host = '' THEN\n"
	"    RETURN 'no host name';\n"
	"  END IF;\n"
	"  PERFORM pg_advisory_xact_lock(hashtext('docket_host:' || p_host));\n"
	"  SELECT h.owner INTO o FROM docket_hosts h WHERE h.host = p_host;\n"
	"  IF FOUND AND o <> session_user AND NOT pg_has_role(session_user, o, 'MEMBER') THEN\n"
	"    RETURN format('role %s may not ship as host %s: the host belongs to role %s', session_user, p_host, o);\n"
	"  END IF;\n"
	"  RETURN NULL;\n"
	"END $f$;\n",

	/* The protobuf wire format of docket.v1.Event (schema/docket.proto),
	 * decoded to the JSON docket_event_to_json gives (ledger/event_emit.c):
	 * per message, field number -> [JSON key, kind, message or enumeration].
	 * Stricter than protobuf: an unknown field, a wire type other than the
	 * schema's, a non-repeated field twice, a second body, invalid UTF-8 or
	 * a value out of range is an error (the batch is refused). */
	"CREATE FUNCTION docket_pb_fields() RETURNS jsonb LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $f$ SELECT '{\n"
	"    \"Event\": {\"1\": [\"time\", \"str\"], \"2\": [\"epoch\", \"uint\"], \"3\": [\"session\", \"str\"],\n"
	"      \"4\": [\"invocation\", \"str\"], \"5\": [\"turn\", \"str\"], \"6\": [\"provenance\", \"msg\", \"Provenance\"],\n"
	"      \"16\": [null, \"body\", \"RuntimeStarted\"], \"17\": [null, \"body\", \"SessionOpened\"],\n"
	"      \"18\": [null, \"body\", \"PolicyRevised\"], \"19\": [null, \"body\", \"ToolIntent\"],\n"
	"      \"20\": [null, \"body\", \"ApprovalRequested\"], \"21\": [null, \"body\", \"ApprovalSettled\"],\n"
	"      \"22\": [null, \"body\", \"ToolDispatched\"], \"23\": [null, \"body\", \"ToolCompleted\"],\n"
	"      \"24\": [null, \"body\", \"SessionClosed\"], \"25\": [null, \"body\", \"RecoveryAction\"]},\n"
	"    \"Provenance\": {\"1\": [\"file\", \"str\"], \"2\": [\"line\", \"uint\"]},\n"
	"    \"KeyValue\": {\"1\": [\"key\", \"str\"], \"2\": [\"value\", \"str\"]},\n"
	"    \"Decision\": {\"1\": [\"verdict\", \"enum\", \"verdict\"], \"2\": [\"source\", \"str\"],\n"
	"      \"3\": [\"reasons\", \"strs\"], \"4\": [\"rules\", \"strs\"], \"5\": [\"policy_revision\", \"uint\"]},\n"
	"    \"Risk\": {\"1\": [\"level\", \"str\"], \"2\": [\"category\", \"str\"], \"3\": [\"summary\", \"str\"]},\n"
	"    \"RuntimeStarted\": {\"1\": [\"runtime\", \"str\"]},\n"
	"    \"SessionOpened\": {\"1\": [\"runtime\", \"str\"], \"2\": [\"platform\", \"enum\", \"platform\"],\n"
	"      \"3\": [\"cwd\", \"str\"], \"4\": [\"workspace_roots\", \"strs\"], \"5\": [\"env\", \"map\", \"KeyValue\"],\n"
	"      \"6\": [\"parent\", \"str\"], \"7\": [\"labels\", \"map\", \"KeyValue\"]},\n"
	"    \"PolicyRevised\": {\"1\": [\"revision\", \"uint\"], \"2\": [\"format\", \"enum\", \"format\"],\n"
	"      \"3\": [\"policy\", \"json\"], \"4\": [\"actor\", \"str\"], \"5\": [\"reason\", \"str\"]},\n"
	"    \"ToolIntent\": {\"1\": [\"tool\", \"str\"], \"2\": [\"args\", \"jsonobj\"],\n"
	"      \"3\": [\"recovery\", \"enum\", \"recovery\"], \"4\": [\"decision\", \"msg\", \"Decision\"]},\n"
	"    \"ApprovalRequested\": {\"1\": [\"request\", \"str\"], \"2\": [\"reviewer\", \"str\"], \"3\": [\"prompt\", \"str\"],\n"
	"      \"4\": [\"risk\", \"msg\", \"Risk\"], \"5\": [\"scope\", \"strs\"], \"6\": [\"decision\", \"msg\", \"Decision\"]},\n"
	"    \"ApprovalSettled\": {\"1\": [\"request\", \"str\"], \"2\": [\"result\", \"enum\", \"result\"],\n"
	"      \"3\": [\"actor\", \"str\"], \"4\": [\"reason\", \"str\"], \"5\": [\"decision\", \"msg\", \"Decision\"]},\n"
	"    \"ToolDispatched\": {\"1\": [\"attempt\", \"uint\"], \"2\": [\"token\", \"str\"],\n"
	"      \"3\": [\"policy_revision\", \"uint\"], \"4\": [\"verdict\", \"enum\", \"verdict\"]},\n"
	"    \"ToolCompleted\": {\"1\": [\"status\", \"enum\", \"status\"], \"2\": [\"exit_code\", \"int64\"],\n"
	"      \"3\": [\"output\", \"str\"], \"4\": [\"duration_ms\", \"uint0\"], \"5\": [\"error\", \"str\"],\n"
	"      \"6\": [\"exit_code_set\", \"flag\"], \"7\": [\"duration_ms_set\", \"flag\"]},\n"
	"    \"SessionClosed\": {\"1\": [\"reason\", \"str\"]},\n"
	"    \"RecoveryAction\": {\"1\": [\"action\", \"enum\", \"action\"], \"2\": [\"detail\", \"str\"],\n"
	"      \"3\": [\"decision\", \"msg\", \"Decision\"]}}'::jsonb $f$;\n",

	"CREATE FUNCTION docket_pb_json(p bytea, msg text) RETURNS jsonb\n"
	"LANGUAGE plpgsql IMMUTABLE STRICT SET search_path = pg_catalog, public AS $f$\n"
	"DECLARE\n"
	" fields CONSTANT jsonb := docket_pb_fields();\n"
	" names CONSTANT jsonb := docket_pb_names();\n"
	" o jsonb := '{}';\n"
	" n int := length(p);\n"
	" pos int := 0;\n"
	" c int;\n"
	" v numeric;\n"
	" mul numeric;\n"
	" num int;\n"
	" wt int;\n"
	" f jsonb;\n"
	" k text;\n"
	" kind text;\n"
	" b bytea;\n"
	" s text;\n"
	" x jsonb;\n"
	"BEGIN\n"
	" WHILE pos < n LOOP\n"
	/* the tag, then a varint: the value (wire type 0) or the length (2) */
	"  FOR i IN 1..2 LOOP\n"
	"   IF pos < n AND get_byte(p, pos) < 128 THEN\n"
	"    v := get_byte(p, pos);\n"
	"    pos := pos + 1;\n"
	"   ELSE\n"
	"   v := 0;\n"
	"   mul := 1;\n"
	"   LOOP\n"
	"    IF pos >= n OR mul > 9223372036854775808 THEN\n"
	"     RAISE EXCEPTION 'docket: %: bad varint', msg;\n"
	"    END IF;\n"
	"    c := get_byte(p, pos);\n"
	"    pos := pos + 1;\n"
	"    v := v + (c & 127) * mul;\n"
	"    mul := mul * 128;\n"
	"    EXIT WHEN c < 128;\n"
	"   END LOOP;\n"
	"   END IF;\n"
	"   IF i = 1 THEN\n"
	"    IF v >= 4294967296 THEN RAISE EXCEPTION 'docket: %: bad tag', msg; END IF;\n"
	"    num := div(v, 8);\n"
	"    wt := mod(v, 8);\n"
	"    f := fields -> msg -> (num::text);\n"
	"    IF f IS NULL THEN RAISE EXCEPTION 'docket: % has no field %', msg, num; END IF;\n"
	"    k := f ->> 0;\n"
	"    kind := f ->> 1;\n"
	"    IF wt <> (CASE WHEN kind IN ('uint', 'uint0', 'int64', 'enum', 'flag') THEN 0 ELSE 2 END) THEN\n"
	"     RAISE EXCEPTION 'docket: %.% has wire type %', msg, num, wt;\n"
	"    END IF;\n"
	"   END IF;\n"
	"  END LOOP;\n"
	"  IF wt = 2 THEN\n"
	"   IF v > n - pos THEN RAISE EXCEPTION 'docket: %.% runs past the end', msg, num; END IF;\n"
	"   b := substring(p FROM pos + 1 FOR v::int);\n"
	"   pos := pos + v::int;\n"
	"   IF kind IN ('str', 'strs', 'json', 'jsonobj') THEN s := convert_from(b, 'UTF8'); END IF;\n"
	"  END IF;\n"
	"  IF kind NOT IN ('strs', 'map', 'body') AND o ? k THEN\n"
	"   RAISE EXCEPTION 'docket: %.% appears twice', msg, k;\n"
	"  END IF;\n"
	"  x := NULL;\n"
	"  CASE kind\n"
	"  WHEN 'str' THEN\n"
	"   IF s <> '' THEN x := to_jsonb(s); END IF;\n"
	"  WHEN 'strs' THEN\n"
	"   x := coalesce(o -> k, '[]') || jsonb_build_array(s);\n"
	"  WHEN 'uint', 'uint0' THEN\n"
	"   IF v > 9223372036854775807 THEN RAISE EXCEPTION 'docket: %.% is too large', msg, k; END IF;\n"
	"   IF v <> 0 OR kind = 'uint0' THEN x := to_jsonb(v); END IF;\n"
	"  WHEN 'int64' THEN\n"
	"   IF v >= 18446744073709551616 THEN RAISE EXCEPTION 'docket: %.% is too large', msg, k; END IF;\n"
	"   x := to_jsonb(CASE WHEN v > 9223372036854775807 THEN v - 18446744073709551616 ELSE v END);\n"
	"  WHEN 'flag' THEN\n"
	"   x := to_jsonb(v <> 0);\n"
	"  WHEN 'enum' THEN\n"
	"   IF v <> 0 THEN\n"
	"    x := names -> (f ->> 2) -> (v::text);\n"
	"    IF x IS NULL THEN RAISE EXCEPTION 'docket: %.% = % unknown', msg, k, v; END IF;\n"
	"   END IF;\n"
	"  WHEN 'json', 'jsonobj' THEN\n"
	"   IF s <> '' THEN x := s::jsonb; END IF;\n"
	"   IF kind = 'jsonobj' AND x = '{}' THEN x := NULL; END IF;\n"
	"  WHEN 'msg' THEN\n"
	"   x := docket_pb_json(b, f ->> 2);\n"
	"  WHEN 'map' THEN\n"
	"   x := docket_pb_json(b, f ->> 2);\n"
	"   x := coalesce(o -> k, '{}') || jsonb_build_object(coalesce(x ->> 'key', ''), coalesce(x ->> 'value', ''));\n"
	"  WHEN 'body' THEN\n"
	"   IF o ? 'type' THEN RAISE EXCEPTION 'docket: % has two bodies', msg; END IF;\n"
	"   o := o || docket_pb_json(b, f ->> 2) || jsonb_build_object('type', names -> 'type' -> (num::text));\n"
	"  END CASE;\n"
	"  IF x IS NOT NULL THEN\n"
	"   o := o || jsonb_build_object(k, x);\n"
	"  END IF;\n"
	" END LOOP;\n"
	/* what the emitter writes whatever the wire holds */
	" IF msg = 'ToolCompleted' THEN\n"
	"  o := CASE WHEN (o ->> 'exit_code_set')::boolean THEN o || jsonb_build_object('exit_code', coalesce(o -> 'exit_code', '0'))\n"
	"       ELSE o - 'exit_code' END;\n"
	"  o := CASE WHEN (o ->> 'duration_ms_set')::boolean THEN o || jsonb_build_object('duration_ms', coalesce(o -> 'duration_ms', '0'))\n"
	"       ELSE o - 'duration_ms' END;\n"
	"  o := o - 'exit_code_set' - 'duration_ms_set';\n"
	" ELSIF msg = 'Provenance' THEN\n"
	"  o := jsonb_build_object('file', coalesce(o -> 'file', '\"\"'), 'line', coalesce(o -> 'line', '0'));\n"
	" ELSIF msg = 'Event' THEN\n"
	"  IF NOT o ? 'type' THEN RAISE EXCEPTION 'docket: the event has no body'; END IF;\n"
	"  IF o ? 'time' AND NOT o ? 'epoch' THEN o := o || '{\"epoch\": 0}'; END IF;\n"
	" END IF;\n"
	" RETURN o;\n"
	"END $f$;\n",

	/* What a row of docket_events holds, derived from its payload alone:
	 * the event as `docket log --json` prints it and the columns
	 * (fleet_event_columns in ship.c reads them the same way). */
	"CREATE TYPE docket_derived AS (\n"
	"  event jsonb, time text, type text, session text, invocation text, tool text,\n"
	"  verdict text, status text, actor text, policy_revision integer);\n"
	"CREATE FUNCTION docket_event_row(p_payload bytea, p_seq bigint, p_hash bytea) RETURNS docket_derived\n"
	"LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, public AS $f$\n"
	"DECLARE\n"
	"  e jsonb := docket_pb_json(p_payload, 'Event') || jsonb_build_object('seq', p_seq, 'hash', encode(p_hash, 'hex'));\n"
	"  rev jsonb := coalesce(e -> 'revision', e -> 'decision' -> 'policy_revision');\n"
	"BEGIN\n"
	/* docket_time_valid's spelling (ledger/event.c), and a time PostgreSQL
	 * can place: the partition key */
	"  IF NOT coalesce(e ->> 'time' ~ '^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d(\\.\\d{1,9})?Z$', false) THEN\n"
	"    RAISE EXCEPTION 'docket: the event time is not YYYY-MM-DDTHH:MM:SS[.F]Z';\n"
	"  END IF;\n"
	"  PERFORM (e ->> 'time')::timestamptz;\n"
	"  RETURN ROW(e, e ->> 'time', e ->> 'type', e ->> 'session', e ->> 'invocation', e ->> 'tool',\n"
	"             e -> 'decision' ->> 'verdict', e ->> 'status', e ->> 'actor',\n"
	"             CASE WHEN jsonb_typeof(rev) = 'number' AND rev::numeric BETWEEN 0 AND 2147483647\n"
	"                  THEN rev::numeric::integer END)::docket_derived;\n"
	"END $f$;\n",

	/* Whether a shipped row is exactly what its payload says: every
	 * attribute of docket_derived against the row's column of that name
	 * (an attribute the row does not have makes them differ). */
	"CREATE FUNCTION docket_column_same(b docket_batch_row, d docket_derived) RETURNS boolean\n"
	"LANGUAGE sql IMMUTABLE AS $f$\n"
	"  SELECT to_jsonb(b) - '{seq, payload, hash}'::text[] = to_jsonb(d) $f$;\n",

	/* The first column of a shipped row that is not what its payload says
	 * (NULL: none). Every attribute of docket_derived is compared. */
	"CREATE FUNCTION docket_column_problem(b docket_batch_row, d docket_derived) RETURNS text\n"
	"LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, public AS $f$\n"
	"DECLARE\n"
	"  sent jsonb := to_jsonb(b);\n"
	"  c record;\n"
	"BEGIN\n"
	"  IF docket_column_same(b, d) THEN\n"
	"    RETURN NULL;\n"
	"  END IF;\n"
	"  IF b.event IS DISTINCT FROM d.event THEN\n"
	"    RETURN format('column event is not the event the payload holds (it differs at %s)',\n"
	"      CASE WHEN jsonb_typeof(b.event) = 'object' THEN (SELECT string_agg(coalesce(x.key, y.key), ', '\n"
	"        ORDER BY coalesce(x.key, y.key)) FROM jsonb_each(b.event) x FULL JOIN jsonb_each(d.event) y\n"
	"        ON x.key = y.key WHERE x.value IS DISTINCT FROM y.value) ELSE 'its top' END);\n"
	"  END IF;\n"
	"  FOR c IN SELECT key, value FROM jsonb_each(to_jsonb(d)) WHERE key <> 'event' ORDER BY key LOOP\n"
	"    IF sent -> c.key IS DISTINCT FROM c.value THEN\n"
	"      RETURN format('column %s is %s, the payload says %s', c.key, coalesce(sent ->> c.key, 'null'),\n"
	"                    coalesce(c.value #>> '{}', 'null'));\n"
	"    END IF;\n"
	"  END LOOP;\n"
	"  RETURN 'a column the payload does not give';\n"
	"END $f$;\n"
	"CREATE FUNCTION docket_batch_problem(b docket_batch_row) RETURNS text\n"
	"LANGUAGE plpgsql STABLE SET search_path = pg_catalog, public AS $f$\n"
	"BEGIN\n"
	"  RETURN docket_column_problem(b, docket_event_row(b.payload, b.seq, b.hash));\n"
	"EXCEPTION WHEN OTHERS THEN\n"
	"  RETURN format('the payload does not decode (%s)', SQLERRM);\n"
	"END $f$;\n",

	/* the batch must be a plain temp table of our row type: a view, row
	 * security policies or rules would run the caller's code with the
	 * ingest functions' rights */
	"CREATE FUNCTION docket_batch_ok() RETURNS boolean\n"
	"LANGUAGE sql STABLE SET search_path = pg_catalog, public AS $f$\n"
	"  SELECT EXISTS (SELECT 1 FROM pg_class c WHERE c.oid = to_regclass('pg_temp.docket_batch')\n"
	"    AND c.relkind = 'r' AND c.relpersistence = 't' AND NOT c.relrowsecurity\n"
	"    AND NOT c.relhasrules AND c.reloftype = 'docket_batch_row'::regtype) $f$;\n",

	FLEET_EVENTS_INSERT("CREATE FUNCTION", ""),

	/* The reference check, row by row (migration 1's, with the host, the
	 * columns and the partitions): it finds the first thing wrong and
	 * records the incident. docket_ingest hands it every batch it does not
	 * accept outright. */
	"CREATE OR REPLACE FUNCTION docket_ingest_checked(p_ledger text, p_host text, p_local_head bigint)\n"
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
	"BEGIN\n"
	"  IF p_ledger IS NULL OR p_ledger !~ '^[0-9a-f]{32}$' THEN\n"
	"    RAISE EXCEPTION 'docket: bad ledger id %', p_ledger USING ERRCODE = '22023';\n"
	"  END IF;\n"
	"  IF NOT docket_batch_ok() THEN\n"
	"    RAISE EXCEPTION 'docket: pg_temp.docket_batch must be a temporary table OF docket_batch_row'\n"
	"      USING ERRCODE = '42501';\n"
	"  END IF;\n"
	"  why := docket_host_problem(p_host);\n"
	"  IF why IS NOT NULL THEN\n"
	"    PERFORM docket_incident(p_ledger, p_host, 'host', NULL, why);\n"
	"    SELECT * INTO l FROM docket_ledgers d WHERE d.ledger_id = p_ledger;\n"
	"    RETURN QUERY SELECT 'refused'::text, coalesce(l.high_seq, 0), encode(coalesce(l.head, '\\x'), 'hex'),\n"
	"      'host: ' || why;\n"
	"    RETURN;\n"
	"  END IF;\n"
	"  PERFORM docket_partitions_lock();\n"
	"  INSERT INTO docket_ledgers (ledger_id, host, owner) VALUES (p_ledger, p_host, session_user)\n"
	"    ON CONFLICT (ledger_id) DO NOTHING;\n"
	"  SELECT * INTO l FROM docket_ledgers d WHERE d.ledger_id = p_ledger FOR UPDATE;\n"
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
	"      why := docket_batch_problem(r);\n"
	"      IF why IS NOT NULL THEN\n"
	"        kind := 'forged'; at := r.seq;\n"
	"        why := format('event %s: %s', r.seq, why);\n"
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
	"  IF kind IS NULL AND hi > l.high_seq THEN\n"
	"    why := docket_partitions_make(l.high_seq);\n"
	"    IF why IS NOT NULL THEN\n"
	"      kind := 'partitions'; at := l.high_seq + 1;\n"
	"    END IF;\n"
	"  END IF;\n"
	"  IF kind IS NOT NULL THEN\n"
	"    PERFORM docket_incident(p_ledger, p_host, kind, at, why);\n"
	"    RETURN QUERY SELECT 'refused'::text, l.high_seq, encode(l.head, 'hex'), kind || ': ' || why;\n"
	"    RETURN;\n"
	"  END IF;\n"
	"  IF hi > l.high_seq AND docket_events_insert(p_ledger, l.high_seq) > 0 THEN\n"
	"    RAISE EXCEPTION 'docket: a column checked row by row differs when inserted';\n"
	"  END IF;\n"
	"  INSERT INTO docket_hosts (host, owner) VALUES (p_host, session_user) ON CONFLICT (host) DO NOTHING;\n"
	"  UPDATE docket_ledgers d SET high_seq = hi, head = h, host = p_host, shipped_at = now()\n"
	"    WHERE d.ledger_id = p_ledger;\n"
	"  RETURN QUERY SELECT 'ok'::text, hi, encode(h, 'hex'), format('%s new events', hi - l.high_seq);\n"
	"END $f$;\n"
	"REVOKE ALL ON FUNCTION docket_ingest_checked(text, text, bigint) FROM PUBLIC, docket_shipper;\n",

	/* The set-based check (migration 2's) with the host, the columns and
	 * the partitions: the events held again and the new events' chain in
	 * two queries; then, in a subtransaction, the months' partitions and
	 * the rows as derived from their payloads, inserted while each is
	 * compared with what was sent. Anything wrong rolls the subtransaction
	 * back (partitions included) and hands the batch to
	 * docket_ingest_checked, which records why. */
	"CREATE OR REPLACE FUNCTION docket_ingest(p_ledger text, p_host text, p_local_head bigint)\n"
	"RETURNS TABLE (status text, high_seq bigint, head text, detail text)\n"
	"LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $f$\n"
	"DECLARE\n"
	"  l docket_ledgers%ROWTYPE;\n"
	"  ok boolean;\n"
	"  n bigint;\n"
	"  hi bigint;\n"
	"  h bytea;\n"
	"  forged bigint;\n"
	"BEGIN\n"
	"  IF p_ledger IS NULL OR p_ledger !~ '^[0-9a-f]{32}$' OR NOT docket_batch_ok()\n"
	"      OR docket_host_problem(p_host) IS NOT NULL THEN\n"
	"    RETURN QUERY SELECT * FROM docket_ingest_checked(p_ledger, p_host, p_local_head);\n"
	"    RETURN;\n"
	"  END IF;\n"
	"  PERFORM docket_partitions_lock();\n"
	"  INSERT INTO docket_ledgers (ledger_id, host, owner) VALUES (p_ledger, p_host, session_user)\n"
	"    ON CONFLICT (ledger_id) DO NOTHING;\n"
	"  SELECT * INTO l FROM docket_ledgers d WHERE d.ledger_id = p_ledger FOR UPDATE;\n"
	"  ok := (l.owner = session_user OR pg_has_role(session_user, l.owner, 'MEMBER'))\n"
	"        AND p_local_head >= l.high_seq;\n"
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
	"  IF ok AND n > 0 THEN\n"
	"    BEGIN\n"
	"      IF docket_partitions_make(l.high_seq) IS NOT NULL THEN\n"
	"        RAISE EXCEPTION 'docket: too many partitions';\n"
	"      END IF;\n"
	"      forged := docket_events_insert(p_ledger, l.high_seq);\n"
	"      IF forged > 0 THEN\n"
	"        RAISE EXCEPTION 'docket: forged columns';\n"
	"      END IF;\n"
	"    EXCEPTION WHEN OTHERS THEN\n"
	"      ok := false;\n"
	"    END;\n"
	"  END IF;\n"
	"  IF NOT ok THEN\n"
	"    RETURN QUERY SELECT * FROM docket_ingest_checked(p_ledger, p_host, p_local_head);\n"
	"    RETURN;\n"
	"  END IF;\n"
	"  hi := coalesce(hi, l.high_seq);\n"
	"  h := l.head;\n"
	"  IF n > 0 THEN\n"
	"    SELECT x.hash INTO h FROM pg_temp.docket_batch x WHERE x.seq = hi;\n"
	"  END IF;\n"
	"  INSERT INTO docket_hosts (host, owner) VALUES (p_host, session_user) ON CONFLICT (host) DO NOTHING;\n"
	"  UPDATE docket_ledgers d SET high_seq = hi, head = h, host = p_host, shipped_at = now()\n"
	"    WHERE d.ledger_id = p_ledger;\n"
	"  RETURN QUERY SELECT 'ok'::text, hi, encode(h, 'hex'), format('%s new events', hi - l.high_seq);\n"
	"END $f$;\n",

	"REVOKE ALL ON FUNCTION docket_partitions_lock(), docket_partitions_make(bigint), docket_host_problem(text),\n"
	"  docket_partition_name(timestamptz), docket_events_insert(text, bigint), docket_batch_ok() FROM PUBLIC;\n",
	NULL
};

/*
 * Migration 4: the fleet at scale (issue 35). The views looked a call's
 * intent (and, for a denial, its last approval answer) up in every month's
 * partition, for every row: at 10M events a month's denials took seconds.
 * A ledger holds at most one tool.intent per call (ledger/state.c refuses
 * another), so the views now look it up first among the events of the 7
 * days up to the row's time (run-time partition pruning: one or two
 * partitions), and only when it is not there in the other months; the
 * union of the two lookups is every intent of the call, so the answer is
 * the same as before, whatever the times. The actor of docket_denials
 * stays a lookup over every month (it is computed only when selected): a
 * month's human denials by actor are docket_approvals' rows with result
 * denied. Two partial indexes for the month's denials and escalations, and
 * the view docket_escalations (the audit report's escalations list:
 * exporters/audit.c). FLEET_CALL_WINDOW is the window. And the ingest's
 * server side made cheaper with the same answers: the payload decoder
 * (docket_pb_members), docket_event_row, docket_column_same; JIT off for
 * the database.
 */
#define FLEET_CALL_WINDOW "interval '7 days'"
#define FLEET_INTENT_OF(row)                                                                            \
	"  LEFT JOIN LATERAL ((SELECT i.tool, i.event -> 'args' AS args, i.verdict FROM docket_events i\n"  \
	"      WHERE i.ledger_id = " row ".ledger_id AND i.session = " row ".session\n"                      \
	"        AND i.invocation = " row ".invocation AND i.type = 'tool.intent'\n"                         \
	"        AND i.time > " row ".time - " FLEET_CALL_WINDOW " AND i.time <= " row ".time)\n"            \
	"    UNION ALL\n"                                                                                     \
	"    (SELECT i.tool, i.event -> 'args' AS args, i.verdict FROM docket_events i\n"                    \
	"      WHERE i.ledger_id = " row ".ledger_id AND i.session = " row ".session\n"                      \
	"        AND i.invocation = " row ".invocation AND i.type = 'tool.intent'\n"                         \
	"        AND NOT (i.time > " row ".time - " FLEET_CALL_WINDOW " AND i.time <= " row ".time))\n"      \
	"    LIMIT 1) i ON true\n"
#define FLEET_ESCALATED(args)                                                                           \
	"(" args " ->> 'sandbox_permissions' = 'require_escalated'"                                        \
	" OR " args " -> 'with_escalated_permissions' = 'true'"                                            \
	" OR " args " -> 'dangerouslyDisableSandbox' = 'true')"

/* docket_pb_members (migration 4's decoder), in pieces: C caps the length
 * of a literal; create_members joins them */
static const char *const pb_members[] = {
	"CREATE FUNCTION docket_pb_members(p bytea, msg text) RETURNS text\n"
	"LANGUAGE plpgsql IMMUTABLE STRICT SET search_path = pg_catalog, public AS $f$\n"
	"DECLARE\n"
	" mf CONSTANT jsonb := docket_pb_fields() -> msg;\n"
	" names CONSTANT jsonb := docket_pb_names();\n"
	" n CONSTANT int := length(p);\n"
	" m text := '';\n"
	" rep jsonb := '{}';\n"
	" seen bigint := 0;\n"
	" body boolean := false;\n"
	" late jsonb := '{}';\n"
	" pos int := 0;\n"
	" c int;\n"
	" v bigint;\n"
	" hi int;\n"
	" sh int;\n"
	" num bigint;\n"
	" wt int;\n"
	" f jsonb;\n"
	" k text;\n"
	" kind text;\n"
	" b bytea;\n"
	" s text;\n"
	" x text;\n"
	"BEGIN\n"
	" WHILE pos < n LOOP\n"
	"  c := get_byte(p, pos);\n"
	"  pos := pos + 1;\n"
	"  IF c >= 128 THEN\n"
	"   v := c & 127;\n"
	"   sh := 7;\n"
	"   LOOP\n"
	"    IF pos >= n OR sh > 28 THEN RAISE EXCEPTION 'docket: %: bad tag', msg; END IF;\n"
	"    c := get_byte(p, pos);\n"
	"    pos := pos + 1;\n"
	"    v := v | ((c & 127)::bigint << sh);\n"
	"    sh := sh + 7;\n"
	"    EXIT WHEN c < 128;\n"
	"   END LOOP;\n"
	"   IF v >= 4294967296 THEN RAISE EXCEPTION 'docket: %: bad tag', msg; END IF;\n"
	"   num := v >> 3;\n"
	"   wt := v & 7;\n"
	"  ELSE\n"
	"   num := c >> 3;\n"
	"   wt := c & 7;\n"
	"  END IF;\n"
	"  f := mf -> (num::text);\n"
	"  IF f IS NULL THEN RAISE EXCEPTION 'docket: % has no field %', msg, num; END IF;\n"
	"  k := f ->> 0;\n"
	"  kind := f ->> 1;\n"
	"  IF wt <> (CASE WHEN kind IN ('uint', 'uint0', 'int64', 'enum', 'flag') THEN 0 ELSE 2 END) THEN\n"
	"   RAISE EXCEPTION 'docket: %.% has wire type %', msg, num, wt;\n"
	"  END IF;\n"
	"  IF pos >= n THEN RAISE EXCEPTION 'docket: %: bad varint', msg; END IF;\n"
	"  c := get_byte(p, pos);\n"
	"  pos := pos + 1;\n"
	"  v := c & 127;\n"
	"  hi := 0;\n"
	"  IF c >= 128 THEN\n"
	"   sh := 7;\n"
	"   LOOP\n"
	"    IF pos >= n THEN RAISE EXCEPTION 'docket: %: bad varint', msg; END IF;\n"
	"    c := get_byte(p, pos);\n"
	"    pos := pos + 1;\n"
	"    IF sh = 63 THEN\n"
	"     IF c >= 128 THEN RAISE EXCEPTION 'docket: %: bad varint', msg; END IF;\n"
	"     hi := c;\n"
	"     EXIT;\n"
	"    END IF;\n"
	"    v := v | ((c & 127)::bigint << sh);\n"
	"    sh := sh + 7;\n"
	"    EXIT WHEN c < 128;\n"
	"   END LOOP;\n"
	"  END IF;\n"
	"  IF wt = 2 THEN\n"
	"   IF hi > 0 OR v > n - pos THEN RAISE EXCEPTION 'docket: %.% runs past the end', msg, num; END IF;\n"
	"   b := substring(p FROM pos + 1 FOR v::int);\n"
	"   pos := pos + v::int;\n"
	"   IF kind IN ('str', 'strs', 'json', 'jsonobj') THEN s := convert_from(b, 'UTF8'); END IF;\n"
	"  END IF;\n"
	"  IF kind NOT IN ('strs', 'map', 'body') AND (seen & (1::bigint << num::int)) <> 0 THEN\n"
	"   RAISE EXCEPTION 'docket: %.% appears twice', msg, k;\n"
	"  END IF;\n"
	"  x := NULL;\n"
	"  CASE kind\n"
	"  WHEN 'str' THEN\n"
	"   IF s <> '' THEN x := to_json(s)::text; END IF;\n"
	"  WHEN 'strs' THEN\n"
	"   rep := rep || jsonb_build_object(k, coalesce(rep -> k, '[]') || jsonb_build_array(s));\n"
	"  WHEN 'uint', 'uint0' THEN\n"
	"   IF hi > 0 THEN RAISE EXCEPTION 'docket: %.% is too large', msg, k; END IF;\n"
	"   IF v <> 0 OR kind = 'uint0' THEN x := v::text; END IF;\n"
	"  WHEN 'int64' THEN\n"
	"   IF hi > 1 THEN RAISE EXCEPTION 'docket: %.% is too large', msg, k; END IF;\n"
	"   x := (CASE WHEN hi = 1 THEN v + (-9223372036854775807 - 1) ELSE v END)::text;\n"
	"  WHEN 'flag' THEN\n",
	"   x := (v <> 0 OR hi <> 0)::text;\n"
	"  WHEN 'enum' THEN\n"
	"   IF v <> 0 OR hi <> 0 THEN\n"
	"    x := CASE WHEN hi = 0 THEN (names -> (f ->> 2) -> (v::text))::text END;\n"
	"    IF x IS NULL THEN RAISE EXCEPTION 'docket: %.% = % unknown', msg, k, v; END IF;\n"
	"   END IF;\n"
	"  WHEN 'json', 'jsonobj' THEN\n"
	"   IF s <> '' THEN x := s::jsonb::text; END IF;\n"
	"   IF kind = 'jsonobj' AND x = '{}' THEN x := NULL; END IF;\n"
	"  WHEN 'msg' THEN\n"
	"   x := '{' || docket_pb_members(b, f ->> 2) || '}';\n"
	"  WHEN 'map' THEN\n"
	"   x := docket_pb_members(b, f ->> 2);\n"
	"   rep := rep || jsonb_build_object(k, coalesce(rep -> k, '{}') || jsonb_build_object(\n"
	"     coalesce(('{' || x || '}')::jsonb ->> 'key', ''), coalesce(('{' || x || '}')::jsonb ->> 'value', '')));\n"
	"   x := NULL;\n"
	"  WHEN 'body' THEN\n"
	"   IF body THEN RAISE EXCEPTION 'docket: % has two bodies', msg; END IF;\n"
	"   body := true;\n"
	"   x := docket_pb_members(b, f ->> 2);\n"
	"   m := m || CASE WHEN m = '' OR x = '' THEN '' ELSE ',' END || x\n"
	"          || CASE WHEN m = '' AND x = '' THEN '' ELSE ',' END || '\"type\":' || (names -> 'type' -> (num::text))::text;\n"
	"   x := NULL;\n"
	"  END CASE;\n"
	"  IF x IS NOT NULL THEN\n"
	"   seen := seen | (1::bigint << num::int);\n"
	"   IF msg = 'Provenance' OR k IN ('exit_code', 'exit_code_set', 'duration_ms', 'duration_ms_set') THEN\n"
	"    late := late || jsonb_build_object(k, x::jsonb);\n"
	"   ELSE\n"
	"    m := m || CASE WHEN m = '' THEN '' ELSE ',' END || to_json(k)::text || ':' || x;\n"
	"   END IF;\n"
	"  END IF;\n"
	" END LOOP;\n"
	" IF msg = 'ToolCompleted' THEN\n"
	"  late := CASE WHEN (late ->> 'exit_code_set')::boolean THEN late || jsonb_build_object('exit_code', coalesce(late -> 'exit_code', '0'))\n"
	"          ELSE late - 'exit_code' END;\n"
	"  late := CASE WHEN (late ->> 'duration_ms_set')::boolean THEN late || jsonb_build_object('duration_ms', coalesce(late -> 'duration_ms', '0'))\n"
	"          ELSE late - 'duration_ms' END;\n"
	"  late := late - 'exit_code_set' - 'duration_ms_set';\n"
	" ELSIF msg = 'Provenance' THEN\n"
	"  late := jsonb_build_object('file', coalesce(late -> 'file', '\"\"'), 'line', coalesce(late -> 'line', '0'));\n"
	" ELSIF msg = 'Event' THEN\n"
	"  IF NOT body THEN RAISE EXCEPTION 'docket: the event has no body'; END IF;\n"
	"  IF (seen & 2) <> 0 AND (seen & 4) = 0 THEN m := m || ',\"epoch\":0'; END IF;\n"
	" END IF;\n"
	" IF late <> '{}' THEN rep := rep || late; END IF;\n"
	" IF rep <> '{}' THEN\n"
	"  m := m || CASE WHEN m = '' THEN '' ELSE ',' END || substr(rep::text, 2, length(rep::text) - 2);\n"
	" END IF;\n"
	" RETURN m;\n"
	"END $f$;\n",
	NULL
};

static int create_members(docket_fleet *f)
{
	docket_buf b = DOCKET_BUF_INIT;
	int error = 0;

	for (size_t i = 0; pb_members[i] && error == 0; i++)
		error = docket_buf_puts(&b, pb_members[i]);
	if (error == 0)
		error = fleet_exec(f, b.ptr);
	docket_buf_dispose(&b);
	return error;
}

static const char *const m4[] = {
	"CREATE OR REPLACE VIEW docket_approvals AS\n"
	"  SELECT s.ledger_id, l.host, s.seq, s.time, s.session, s.invocation, i.tool,\n"
	"         i.args, s.event ->> 'result' AS result, s.actor, s.event ->> 'reason' AS reason\n"
	"  FROM docket_events s JOIN docket_ledgers l USING (ledger_id)\n"
	FLEET_INTENT_OF("s")
	"  WHERE s.type = 'approval.settled';\n"
	"CREATE OR REPLACE VIEW docket_denials AS\n"
	"  SELECT c.ledger_id, l.host, c.seq, c.time, c.session, c.invocation, i.tool,\n"
	"         i.args, i.verdict, c.status,\n"
	"         (SELECT s.actor FROM docket_events s WHERE s.ledger_id = c.ledger_id\n"
	"            AND s.session = c.session AND s.invocation = c.invocation\n"
	"            AND s.type = 'approval.settled' ORDER BY s.seq DESC LIMIT 1) AS actor\n"
	"  FROM docket_events c JOIN docket_ledgers l USING (ledger_id)\n"
	FLEET_INTENT_OF("c")
	"  WHERE c.type = 'tool.completed' AND c.status IN ('denied', 'unsupported');\n"
	"CREATE VIEW docket_escalations AS\n"
	"  SELECT i.ledger_id, l.host, i.seq, i.time, i.session, i.invocation, i.tool,\n"
	"         i.event -> 'args' AS args, i.verdict\n"
	"  FROM docket_events i JOIN docket_ledgers l USING (ledger_id)\n"
	"  WHERE i.type = 'tool.intent' AND " FLEET_ESCALATED("(i.event -> 'args')") ";\n"
	"GRANT SELECT ON docket_escalations TO docket_reader;\n",

	/* The decoder again, for speed (issue 35), the same answers: varints
	 * in bigint (the tenth byte's bit apart), the members written as JSON
	 * text and parsed once (jsonb concatenation was most of the cost), the
	 * fields seen kept in a bit mask. docket_pb_json keeps its name and
	 * signature; tests/fleet's decoder_differential holds it to fleet
	 * verify's codec. Stricter in one thing: a tag of more than 5 bytes. */

	"CREATE OR REPLACE FUNCTION docket_pb_json(p bytea, msg text) RETURNS jsonb\n"
	"LANGUAGE sql IMMUTABLE STRICT SET search_path = pg_catalog, public AS $f$ SELECT ('{' || docket_pb_members(p, msg) || '}')::jsonb $f$;\n",

	/* schema 3's, with the event's seq and hash written into its JSON text
	 * before the one parse, and the time checked by an assignment (PERFORM
	 * is a query of its own) */
	"CREATE OR REPLACE FUNCTION docket_event_row(p_payload bytea, p_seq bigint, p_hash bytea) RETURNS docket_derived\n"
	"LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, public AS $f$\n"
	"DECLARE\n"
	"  e jsonb := ('{' || docket_pb_members(p_payload, 'Event') || ',\"seq\":' || coalesce(p_seq::text, 'null')\n"
	"             || ',\"hash\":' || coalesce(to_json(encode(p_hash, 'hex'))::text, 'null') || '}')::jsonb;\n"
	"  rev jsonb := coalesce(e -> 'revision', e -> 'decision' -> 'policy_revision');\n"
	"  t timestamptz;\n"
	"BEGIN\n"
	"  IF NOT coalesce(e ->> 'time' ~ '^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d(\\.\\d{1,9})?Z$', false) THEN\n"
	"    RAISE EXCEPTION 'docket: the event time is not YYYY-MM-DDTHH:MM:SS[.F]Z';\n"
	"  END IF;\n"
	"  t := (e ->> 'time')::timestamptz;\n"
	"  RETURN ROW(e, e ->> 'time', e ->> 'type', e ->> 'session', e ->> 'invocation', e ->> 'tool',\n"
	"             e -> 'decision' ->> 'verdict', e ->> 'status', e ->> 'actor',\n"
	"             CASE WHEN jsonb_typeof(rev) = 'number' AND rev::numeric BETWEEN 0 AND 2147483647\n"
	"                  THEN rev::numeric::integer END)::docket_derived;\n"
	"END $f$;\n",

	/* a shipped row against what its payload says, column by column (the
	 * same test as schema 3's to_jsonb(b) - '{seq, payload, hash}' =
	 * to_jsonb(d), without building two jsonb objects a row) */
	"CREATE OR REPLACE FUNCTION docket_column_same(b docket_batch_row, d docket_derived) RETURNS boolean\n"
	"LANGUAGE sql IMMUTABLE AS $f$\n"
	"  SELECT b.event IS NOT DISTINCT FROM d.event AND b.time IS NOT DISTINCT FROM d.time\n"
	"    AND b.type IS NOT DISTINCT FROM d.type AND b.session IS NOT DISTINCT FROM d.session\n"
	"    AND b.invocation IS NOT DISTINCT FROM d.invocation AND b.tool IS NOT DISTINCT FROM d.tool\n"
	"    AND b.verdict IS NOT DISTINCT FROM d.verdict AND b.status IS NOT DISTINCT FROM d.status\n"
	"    AND b.actor IS NOT DISTINCT FROM d.actor AND b.policy_revision IS NOT DISTINCT FROM d.policy_revision $f$;\n",

	/* No JIT for the fleet database when this role may say so: the fleet
	 * queries are index lookups whose plans cost past jit_above_cost at
	 * millions of events, and compiling them took 2 to 24 s of a 1 s query
	 * on the shared VM (docs/fleet.md). Applies to new sessions. */
	"DO $$ BEGIN\n"
	"  EXECUTE format('ALTER DATABASE %I SET jit = off', current_database());\n"
	"EXCEPTION WHEN insufficient_privilege THEN\n"
	"  RAISE NOTICE 'docket: not the owner of the database: jit is left as it is';\n"
	"END $$;\n",

	"CREATE INDEX docket_events_denied ON docket_events (time)\n"
	"  WHERE type = 'tool.completed' AND status IN ('denied', 'unsupported');\n"
	"CREATE INDEX docket_events_escalated ON docket_events (time)\n"
	"  WHERE type = 'tool.intent' AND " FLEET_ESCALATED("(event -> 'args')") ";\n",
	NULL
};

/*
 * Migration 5: month-wide reports at scale (issue 35). At 10M events a
 * month's denials by host and tool and a month's escalations with their
 * answers took over a second: each matching row looked its call's intent
 * (or answer) up through the index of every event of the call, reading
 * each of the call's events from the heap to find the one of the right
 * type, and the views computed the intent's args (a heap read and a jsonb
 * extraction) whether selected or not. Now:
 *   - a partial index of the intents by call, with the time the window
 *     lookup ranges over and what the views read (tool, verdict, seq):
 *     the lookup is an index-only scan;
 *   - a partial index of the settlements by call and time (a call's
 *     answers in a time range);
 *   - the denials' partial index covers the columns the view reads of a
 *     denial, so a month's denials are read from the index alone;
 *   - the views read the intent's args by its primary key (seq, time),
 *     and only when a query selects them; the intent's lookup is an
 *     aggregate over at most one row (min() of each column: a ledger holds
 *     at most one intent per call), so a query that selects none of tool,
 *     verdict and args does not look it up at all (PostgreSQL removes a
 *     left join to a relation of at most one row whose columns are unused:
 *     the answers of a month's escalations);
 *   - docket_approvals reads a row's host by the ledger's key, a nested
 *     loop of index lookups (OFFSET 0 keeps it one): with the join free,
 *     the planner hashed all of docket_ledgers once per escalation.
 * The views' rows are the same (test scale_answers compares them with
 * schema 4's definitions, kept below as FLEET_INTENT_OF). The indexes are
 * built on every partition in the migration's transaction.
 */
#define FLEET_INTENT_KEY_OF(row)                                                                        \
	"  LEFT JOIN LATERAL (SELECT min(x.tool) AS tool, min(x.verdict) AS verdict, min(x.seq) AS seq,\n"  \
	"      min(x.time) AS time FROM (\n"                                                                 \
	"    (SELECT i.tool, i.verdict, i.seq, i.time FROM docket_events i\n"                                \
	"      WHERE i.ledger_id = " row ".ledger_id AND i.session = " row ".session\n"                      \
	"        AND i.invocation = " row ".invocation AND i.type = 'tool.intent'\n"                         \
	"        AND i.time > " row ".time - " FLEET_CALL_WINDOW " AND i.time <= " row ".time)\n"            \
	"    UNION ALL\n"                                                                                     \
	"    (SELECT i.tool, i.verdict, i.seq, i.time FROM docket_events i\n"                                \
	"      WHERE i.ledger_id = " row ".ledger_id AND i.session = " row ".session\n"                      \
	"        AND i.invocation = " row ".invocation AND i.type = 'tool.intent'\n"                         \
	"        AND NOT (i.time > " row ".time - " FLEET_CALL_WINDOW " AND i.time <= " row ".time))\n"      \
	"    LIMIT 1) x) i ON true\n"
#define FLEET_INTENT_ARGS(row)                                                                          \
	"(SELECT a.event -> 'args' FROM docket_events a WHERE a.ledger_id = " row ".ledger_id\n"           \
	"            AND a.seq = i.seq AND a.time = i.time)"

static const char *const m5[] = {
	"CREATE INDEX docket_events_intent ON docket_events (ledger_id, session, invocation, time)\n"
	"  INCLUDE (tool, verdict, seq) WHERE type = 'tool.intent';\n"
	"CREATE INDEX docket_events_settled ON docket_events (ledger_id, session, invocation, time)\n"
	"  WHERE type = 'approval.settled';\n"
	"DROP INDEX docket_events_denied;\n"
	"CREATE INDEX docket_events_denied ON docket_events (time) INCLUDE (ledger_id, session, invocation, status, seq)\n"
	"  WHERE type = 'tool.completed' AND status IN ('denied', 'unsupported');\n",

	"CREATE OR REPLACE VIEW docket_approvals AS\n"
	"  SELECT s.ledger_id, l.host, s.seq, s.time, s.session, s.invocation, i.tool,\n"
	"         " FLEET_INTENT_ARGS("s") " AS args,\n"
	"         s.event ->> 'result' AS result, s.actor, s.event ->> 'reason' AS reason\n"
	"  FROM docket_events s\n"
	"  CROSS JOIN LATERAL (SELECT l.host FROM docket_ledgers l WHERE l.ledger_id = s.ledger_id OFFSET 0) l\n"
	FLEET_INTENT_KEY_OF("s")
	"  WHERE s.type = 'approval.settled';\n"
	"CREATE OR REPLACE VIEW docket_denials AS\n"
	"  SELECT c.ledger_id, l.host, c.seq, c.time, c.session, c.invocation, i.tool,\n"
	"         " FLEET_INTENT_ARGS("c") " AS args,\n"
	"         i.verdict, c.status,\n"
	"         (SELECT s.actor FROM docket_events s WHERE s.ledger_id = c.ledger_id\n"
	"            AND s.session = c.session AND s.invocation = c.invocation\n"
	"            AND s.type = 'approval.settled' ORDER BY s.seq DESC LIMIT 1) AS actor\n"
	"  FROM docket_events c JOIN docket_ledgers l USING (ledger_id)\n"
	FLEET_INTENT_KEY_OF("c")
	"  WHERE c.type = 'tool.completed' AND c.status IN ('denied', 'unsupported');\n",
	NULL
};

/*
 * Migration 6: frames (issue 35). A shipper sent each event three times:
 * the payload, the event as jsonb and nine columns, and the server parsed
 * the jsonb, derived all of it again from the payload and compared the
 * two. `docket ship` now sends frames: rows of docket_batch_row with only
 * seq, time, payload and hash (event and the other columns NULL). Nothing
 * is trusted that was not before: every stored column is still derived from
 * the payload; a frame's time (the partitions are made from it before the
 * rows are derived) is compared with the payload's; a row with an event or
 * any other column is compared in full, as before (a forging shipper that
 * sends columns is refused as before, naming the column).
 */
static const char *const m6[] = {
	"CREATE FUNCTION docket_batch_frame(b docket_batch_row) RETURNS boolean\n"
	"LANGUAGE sql IMMUTABLE AS $f$\n"
	"  SELECT b.event IS NULL AND b.type IS NULL AND b.session IS NULL AND b.invocation IS NULL\n"
	"    AND b.tool IS NULL AND b.verdict IS NULL AND b.status IS NULL AND b.actor IS NULL\n"
	"    AND b.policy_revision IS NULL $f$;\n"
	/* a frame as the row it stands for (its time as sent) */
	"CREATE FUNCTION docket_batch_filled(b docket_batch_row, d docket_derived) RETURNS docket_batch_row\n"
	"LANGUAGE sql IMMUTABLE AS $f$\n"
	"  SELECT CASE WHEN docket_batch_frame(b) THEN ROW(b.seq, b.time, d.type, d.session, d.invocation, d.tool,\n"
	"    d.verdict, d.status, d.actor, d.policy_revision, d.event, b.payload, b.hash)::docket_batch_row ELSE b END $f$;\n"
	/* the comparison, frames included: docket_column_same_full(
	 * docket_batch_filled(b, d), d) without comparing a frame's derived
	 * event with itself; docket_events_insert and docket_column_problem
	 * call it by this name */
	"ALTER FUNCTION docket_column_same(docket_batch_row, docket_derived) RENAME TO docket_column_same_full;\n"
	"CREATE FUNCTION docket_column_same(b docket_batch_row, d docket_derived) RETURNS boolean\n"
	"LANGUAGE sql IMMUTABLE AS $f$\n"
	"  SELECT CASE WHEN docket_batch_frame(b) THEN b.time IS NOT DISTINCT FROM d.time\n"
	"    ELSE docket_column_same_full(b, d) END $f$;\n",

	"CREATE OR REPLACE FUNCTION docket_batch_problem(b docket_batch_row) RETURNS text\n"
	"LANGUAGE plpgsql STABLE SET search_path = pg_catalog, public AS $f$\n"
	"DECLARE\n"
	"  d docket_derived;\n"
	"BEGIN\n"
	"  d := docket_event_row(b.payload, b.seq, b.hash);\n"
	"  RETURN docket_column_problem(docket_batch_filled(b, d), d);\n"
	"EXCEPTION WHEN OTHERS THEN\n"
	"  RETURN format('the payload does not decode (%s)', SQLERRM);\n"
	"END $f$;\n",

	NULL
};

/*
 * Migration 7: per-call history records (issue 35). A fleet replay read
 * every event of a ledger to fold each call's history in the client;
 * docket_calls holds that history, one row per call (FLEET_CALLS_OF),
 * kept by docket_events_insert in the same statement as the rows it
 * derives from their payloads (so nothing a shipper sends but the payloads
 * reaches it), merged with the call's row from earlier batches: batches
 * arrive in seq order, so a first (an intent, an evaluation, an outcome)
 * already held stays, a later settlement replaces the result. Shipping
 * roles have no privilege on it; fleet verify recomputes it from the
 * events it has verified.
 */
static const char *const m7[] = {
	"CREATE TABLE docket_calls (\n"
	"  ledger_id text NOT NULL, session text NOT NULL, invocation text NOT NULL,\n"
	"  requests integer NOT NULL, last_request bigint, last_settled bigint, result text,\n"
	"  evaluated_seq bigint, evaluated text, outcome_seq bigint, outcome text, dispatched boolean NOT NULL,\n"
	"  intent_seq bigint, intent_time timestamptz, for_session boolean NOT NULL,\n"
	"  PRIMARY KEY (ledger_id, session, invocation));\n"
	"REVOKE ALL ON docket_calls FROM PUBLIC;\n"
	"GRANT SELECT ON docket_calls TO docket_reader;\n"
	"INSERT INTO docket_calls " FLEET_CALLS_OF(FLEET_EVENTS_AS_CALL_ROWS("")) ";\n"
	"CREATE INDEX docket_events_replayed ON docket_events (ledger_id, seq) WHERE type IN " FLEET_REPLAYED_TYPES ";\n",

	FLEET_EVENTS_INSERT("CREATE OR REPLACE FUNCTION",
		",\n  calls AS (\n"
		"    INSERT INTO docket_calls AS c " FLEET_CALLS_OF(
			"(SELECT p_ledger AS ledger_id, (b).seq, (r).time::timestamptz AS time, (r).type, (r).session,"
			" (r).invocation, (r).verdict, (r).status, (r).event ->> 'result' AS result FROM d) x") "\n"
		"    ON CONFLICT (ledger_id, session, invocation) DO UPDATE SET\n"
		"      requests = c.requests + excluded.requests,\n"
		"      last_request = greatest(c.last_request, excluded.last_request),\n"
		"      last_settled = greatest(c.last_settled, excluded.last_settled),\n"
		"      result = CASE WHEN excluded.last_settled > coalesce(c.last_settled, 0) THEN excluded.result\n"
		"                    ELSE c.result END,\n"
		"      evaluated_seq = coalesce(c.evaluated_seq, excluded.evaluated_seq),\n"
		"      evaluated = CASE WHEN c.evaluated_seq IS NULL THEN excluded.evaluated ELSE c.evaluated END,\n"
		"      outcome_seq = coalesce(c.outcome_seq, excluded.outcome_seq),\n"
		"      outcome = CASE WHEN c.outcome_seq IS NULL THEN excluded.outcome ELSE c.outcome END,\n"
		"      dispatched = c.dispatched OR excluded.dispatched,\n"
		"      intent_seq = coalesce(c.intent_seq, excluded.intent_seq),\n"
		"      intent_time = CASE WHEN c.intent_seq IS NULL THEN excluded.intent_time ELSE c.intent_time END,\n"
		"      for_session = c.for_session OR excluded.for_session\n"
		"    RETURNING 1)"),
	"REVOKE ALL ON FUNCTION docket_events_insert(text, bigint) FROM PUBLIC;\n",
	NULL
};

/*
 * docket_pb_names(): the names the server's decoder gives enumeration values
 * and event bodies, written from this docket's own tables (ledger/event.c),
 * so that the server and the ledger cannot disagree on a name.
 */
#define ENUM_SCAN 64  /* past the last value of every enumeration */

/* "key": {"1": "name", ...}, after a '{' or a previous key */
static int put_enum_names(docket_buf *b, const char *key, const char *(*name)(int))
{
	const char *sep = "";
	int error = docket_buf_printf(b, "%s\"%s\": {", b->ptr[b->len - 1] == '{' ? "" : ", ", key);

	for (int v = 1; v <= ENUM_SCAN && error == 0; v++) {
		const char *n = name(v);

		if (!n || strcmp(n, "unknown") == 0)
			continue;
		if (strpbrk(n, "'\"\\$"))
			return docket_error_set(DOCKET_EINVALID, "enumeration name %s cannot be quoted", n);
		error = docket_buf_printf(b, "%s\"%d\": \"%s\"", sep, v, n);
		sep = ", ";
	}
	return error < 0 ? error : docket_buf_puts(b, "}");
}

static const char *verdict_name(int v) { return docket_verdict_name((Docket__V1__Verdict)v); }
static const char *result_name(int v) { return docket_approval_result_name((Docket__V1__ApprovalResult)v); }
static const char *status_name(int v) { return docket_outcome_status_name((Docket__V1__OutcomeStatus)v); }
static const char *recovery_name(int v) { return docket_recovery_mode_name((Docket__V1__RecoveryMode)v); }
static const char *format_name(int v) { return docket_policy_format_name((Docket__V1__PolicyFormat)v); }
static const char *platform_name(int v) { return docket_platform_name((Docket__V1__Platform)v); }
static const char *action_name(int v) { return docket_recovery_action_name((Docket__V1__RecoveryActionKind)v); }

static const char *body_name(int v)
{
	docket_event ev = DOCKET__V1__EVENT__INIT;

	ev.body_case = (Docket__V1__Event__BodyCase)v;
	return docket_event_type(&ev);
}

static int create_names(docket_fleet *f)
{
	static const struct {
		const char *key;
		const char *(*name)(int);
	} enums[] = {
		{ "verdict", verdict_name }, { "result", result_name }, { "status", status_name },
		{ "recovery", recovery_name }, { "format", format_name }, { "platform", platform_name },
		{ "action", action_name },
	};
	docket_buf b = DOCKET_BUF_INIT;
	int error;

	if ((error = docket_buf_puts(&b, "CREATE FUNCTION docket_pb_names() RETURNS jsonb LANGUAGE sql IMMUTABLE "
				     "PARALLEL SAFE AS $f$ SELECT '{")) < 0 ||
	    (error = put_enum_names(&b, "type", body_name)) < 0)
		goto cleanup;
	for (size_t i = 0; i < sizeof(enums) / sizeof(enums[0]) && error == 0; i++)
		error = put_enum_names(&b, enums[i].key, enums[i].name);
	if (error < 0 || (error = docket_buf_puts(&b, "}'::jsonb $f$")) < 0)
		goto cleanup;
	error = fleet_exec(f, b.ptr);
cleanup:
	docket_buf_dispose(&b);
	return error;
}

static const migration migrations[] = {
	{ 1, "events, checkpoints, incidents, views, roles, ingest functions", m1, NULL },
	{ 2, "set-based chain check at ingest", m2, NULL },
	{ 3, "columns derived from the payload, partitions after acceptance, hosts bound to roles", m3, create_names },
	{ 4, "views and indexes for a fleet at scale, a faster decoder", m4, create_members },
	{ 5, "covering and partial indexes for month-wide reports, views that read args only when selected", m5, NULL },
	{ 6, "frames: batch rows of seq, time, payload and hash, the rest derived", m6, NULL },
	{ 7, "per-call history records kept at ingest", m7, NULL },
};

#define NMIGRATIONS (sizeof(migrations) / sizeof(migrations[0]))
_Static_assert(NMIGRATIONS == DOCKET_FLEET_SCHEMA_VERSION, "fleet.h names the latest migration");

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
	if (m->prepare)
		error = m->prepare(f);
	for (size_t i = 0; m->sql[i] && error == 0; i++)
		error = fleet_exec(f, m->sql[i]);
	if (error == 0)
		error = fleet_command(f, "INSERT INTO docket_schema (version, description) VALUES ($1, $2)", 2, params);
	if (error < 0)
		docket_error_prefix("migration %d: ", m->version);
	return error;
}

/* The version `fleet init` migrates to: the latest, or an older one that
 * DOCKET_FLEET_INIT_UPTO names (tests/fleet make a store of an older
 * schema with it, to test the migrations from it). */
static int init_target(void)
{
	const char *upto = getenv("DOCKET_FLEET_INIT_UPTO");
	char *end;
	long v;

	if (!upto || !*upto)
		return fleet_schema_latest();
	v = strtol(upto, &end, 10);
	if (*end || v < 1 || v > fleet_schema_latest())
		return docket_error_set(DOCKET_EINVALID, "DOCKET_FLEET_INIT_UPTO=%s: not a schema version "
					"from 1 to %d", upto, fleet_schema_latest());
	return (int)v;
}

int docket_fleet_init(docket_fleet *f, int *from, int *to)
{
	int v = 0, target = init_target(), error;
	size_t i;

	if (target < 0)
		return target;

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
		if (migrations[i].version > v && migrations[i].version <= target &&
		    (error = apply(f, &migrations[i])) < 0)
			goto cleanup;
	error = fleet_exec(f, "COMMIT");
cleanup:
	if (error < 0)
		fleet_rollback(f);
	if (from)
		*from = v;
	if (to)
		*to = error < 0 ? v : (v > target ? v : target);
	return error;
}
