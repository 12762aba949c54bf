/* SPDX-License-Identifier: Apache-2.0 */
/*
 * spool_internal.h: what append.c needs of spool.c to fold the spool into
 * a write transaction (spool.c has the design).
 */
#ifndef DOCKET_LEDGER_SPOOL_INTERNAL_H
#define DOCKET_LEDGER_SPOOL_INTERNAL_H

#include "ledger_internal.h"

typedef struct spool_batch spool_batch;

/* The meta key of a folded entry is this prefix and its file name (kept by
 * compact: rewrite.c). */
#define SPOOL_MARKER_PREFIX "spool:"


/* 0, or an error when the caller of docket_ledger_append_json_by() gave
 * up before this thread got the write lock (the transaction is aborted). */
int spool_gate_pass(void) DOCKET_MUST_USE;

/* The spool's entries in name order; *out NULL when there are none. */
int spool_load(spool_batch **out, docket_ledger *l, MDB_txn *txn) DOCKET_MUST_USE;
size_t spool_size(const spool_batch *b);
/* 1 when entry i was folded by an earlier commit (its file only waits to go). */
int spool_entry_done(const spool_batch *b, size_t i);
/* Entry i as a group of one event; NULL when it is not an event. */
ledger_group *spool_entry_group(spool_batch *b, size_t i);
/* The ledger.incident of entry i (refused with `why`, or NULL: not an
 * event); NULL when out of memory. */
ledger_group *spool_incident_group(spool_batch *b, size_t i, const docket_error *why);
/* Record in `txn` that entry i is folded. */
int spool_mark(spool_batch *b, size_t i, docket_ledger *l, MDB_txn *txn) DOCKET_MUST_USE;
/* After the commit: remove the files of the folded entries. */
void spool_unlink_folded(spool_batch *b);
void spool_batch_free(spool_batch *b);

/* append.c: one write transaction that folds the spool and nothing else. */
int ledger_fold_only(docket_ledger *l) DOCKET_MUST_USE;

#endif
