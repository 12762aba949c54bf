-- SPDX-License-Identifier: Apache-2.0
--
-- shard_guard.sql: run once on each shard of a sharded fleet store
-- (shards.sql, docs/fleet.md), after `docket fleet init`:
--   psql -v remainder=R -v modulus=M -f shard_guard.sql
-- A ledger whose id hashes to another remainder is refused at its first
-- batch (docket_ingest cannot insert its docket_ledgers row: ship exits 3
-- and the server holds nothing of it), so every ledger is on the shard the
-- coordinator's hash partitioning looks in.

-- the key of the coordinator's partitioning, to hash ledger ids the same way
CREATE TABLE docket_shard_key (ledger_id text) PARTITION BY HASH (ledger_id);
ALTER TABLE docket_ledgers ADD CONSTRAINT docket_shard
  CHECK (satisfies_hash_partition('docket_shard_key'::regclass, :modulus, :remainder, ledger_id));
