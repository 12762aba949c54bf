-- SPDX-License-Identifier: Apache-2.0
--
-- shards.sql: one fleet store over several PostgreSQL servers (docs/fleet.md,
-- "Past one server"), with PostgreSQL's own machinery only.
--
-- Every shard is an ordinary docket store (`docket fleet init` on it) that
-- machines ship to directly. A ledger belongs to exactly one shard: the
-- remainder of the hash of its ledger id (PostgreSQL's hash partitioning of
-- text). This script, run once as a superuser in an empty database on the
-- coordinator, installs two functions:
--
--   docket_shard_add(remainder, modulus, server options, user mapping)
--       imports a shard's docket tables (postgres_fdw) into schema
--       shard_<remainder> and attaches them as the hash partitions
--       FOR VALUES WITH (MODULUS m, REMAINDER r) of the coordinator's
--       docket_ledgers, docket_events, docket_checkpoints, docket_calls and
--       docket_incidents; docket_hosts and docket_schema become views over
--       every shard (a schema version counts once every shard has it), and
--       the shard's own views (docket_approvals, docket_denials, ...) are
--       made here from their definitions there (pg_views), over these;
--   docket_shard_of(ledger id, modulus)
--       the remainder (the shard) a ledger id belongs to.
--
-- On each shard, shard_guard.sql adds a CHECK to its docket_ledgers: a
-- ledger of another shard is refused at its first batch, so nothing is
-- ever stored where the coordinator would not look for it.
--
-- The fleet commands (`fleet verify|sessions|pending|log|show`, `replay
-- --from`, `report --from`) then run against the coordinator unchanged: the
-- tables and views they read have the same names and columns; a query for
-- one ledger is pruned to its shard and pushed down to it.

CREATE EXTENSION IF NOT EXISTS postgres_fdw;

DO $$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'docket_reader') THEN
    CREATE ROLE docket_reader NOLOGIN;
  END IF;
END $$;

CREATE TABLE docket_ledgers (
  ledger_id text NOT NULL, host text NOT NULL, owner name NOT NULL, high_seq bigint NOT NULL,
  head bytea NOT NULL, checkpoints bigint NOT NULL, registered_at timestamptz NOT NULL,
  shipped_at timestamptz
) PARTITION BY HASH (ledger_id);
CREATE TABLE docket_events (
  ledger_id text NOT NULL, seq bigint NOT NULL, time timestamptz NOT NULL, type text NOT NULL,
  session text, invocation text, tool text, verdict text, status text, actor text,
  policy_revision integer, event jsonb NOT NULL, payload bytea NOT NULL, hash bytea NOT NULL
) PARTITION BY HASH (ledger_id);
CREATE TABLE docket_checkpoints (
  ledger_id text NOT NULL, index bigint NOT NULL, seq bigint NOT NULL, head bytea NOT NULL,
  prev bytea NOT NULL, digest bytea NOT NULL, key_id text NOT NULL, time timestamptz NOT NULL,
  record jsonb NOT NULL
) PARTITION BY HASH (ledger_id);
CREATE TABLE docket_calls (
  ledger_id text NOT NULL, session text NOT NULL, invocation text NOT NULL, requests integer NOT NULL,
  last_request bigint, last_settled bigint, result text, evaluated_seq bigint, evaluated text,
  outcome_seq bigint, outcome text, dispatched boolean NOT NULL, intent_seq bigint, intent_time timestamptz,
  for_session boolean NOT NULL
) PARTITION BY HASH (ledger_id);
CREATE TABLE docket_incidents (
  id bigint NOT NULL, at timestamptz NOT NULL, ledger_id text NOT NULL, host text, role name NOT NULL,
  kind text NOT NULL, seq bigint, detail text NOT NULL
) PARTITION BY HASH (ledger_id);

-- which shard a ledger id belongs to, of `modulus` (for the machine's --to)
CREATE FUNCTION docket_shard_of(p_ledger text, p_modulus int) RETURNS int
LANGUAGE sql STABLE AS $f$
  SELECT r FROM generate_series(0, p_modulus - 1) r
  WHERE satisfies_hash_partition('docket_ledgers'::regclass, p_modulus, r, p_ledger) $f$;

CREATE FUNCTION docket_shard_add(p_remainder int, p_modulus int, p_server_options text, p_mapping_options text)
RETURNS void LANGUAGE plpgsql AS $f$
DECLARE
  srv text := 'docket_shard_' || p_remainder;
  sch text := 'shard_' || p_remainder;
  t text;
  v record;
  shards text[];
BEGIN
  EXECUTE format('CREATE SERVER %I FOREIGN DATA WRAPPER postgres_fdw OPTIONS (%s)', srv, p_server_options);
  EXECUTE format('CREATE USER MAPPING FOR PUBLIC SERVER %I OPTIONS (%s)', srv, p_mapping_options);
  EXECUTE format('CREATE SCHEMA %I', sch);
  EXECUTE format('IMPORT FOREIGN SCHEMA public LIMIT TO (docket_ledgers, docket_events, docket_checkpoints,'
                 ' docket_calls, docket_incidents, docket_hosts, docket_schema) FROM SERVER %I INTO %I', srv, sch);
  FOREACH t IN ARRAY ARRAY['docket_ledgers', 'docket_events', 'docket_checkpoints', 'docket_calls',
                           'docket_incidents'] LOOP
    EXECUTE format('ALTER TABLE %I ATTACH PARTITION %I.%I FOR VALUES WITH (MODULUS %s, REMAINDER %s)',
                   t, sch, t, p_modulus, p_remainder);
  END LOOP;
  -- the shard's views (docket_approvals, ...), as its schema defines
  -- them, over the coordinator's tables
  EXECUTE format('IMPORT FOREIGN SCHEMA pg_catalog LIMIT TO (pg_views) FROM SERVER %I INTO %I', srv, sch);
  FOR v IN EXECUTE format('SELECT viewname, definition FROM %I.pg_views WHERE schemaname = ''public''', sch) LOOP
    EXECUTE format('CREATE OR REPLACE VIEW %I AS %s', v.viewname, v.definition);
    EXECUTE format('GRANT SELECT ON %I TO docket_reader', v.viewname);
  END LOOP;
  SELECT array_agg(nspname ORDER BY nspname) INTO shards FROM pg_namespace WHERE nspname ~ '^shard_[0-9]+$';
  DROP VIEW IF EXISTS docket_hosts, docket_schema;
  -- a host bound on two shards to different roles is two rows: fleet
  -- verify then reports the host as not bound (it cannot decide)
  EXECUTE 'CREATE VIEW docket_hosts AS ' || (SELECT string_agg(format(
      'SELECT host, owner, registered_at FROM %I.docket_hosts', s), ' UNION ') FROM unnest(shards) s);
  EXECUTE 'CREATE VIEW docket_schema AS ' || (SELECT string_agg(format(
      'SELECT version, description FROM %I.docket_schema', s), ' INTERSECT ') FROM unnest(shards) s);
  EXECUTE format('GRANT USAGE ON SCHEMA %I TO docket_reader', sch);
  EXECUTE format('GRANT SELECT ON ALL TABLES IN SCHEMA %I TO docket_reader', sch);
  GRANT SELECT ON docket_ledgers, docket_events, docket_checkpoints, docket_calls, docket_incidents, docket_hosts,
    docket_schema TO docket_reader;
END $f$;
