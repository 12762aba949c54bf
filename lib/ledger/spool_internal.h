/* SPDX-License-Identifier: Apache-2.0 */
/*
 * spool_internal.h: what append.c needs of spool.c to fold the spool into
 * a write transaction (spool.c has the design).
 */
#ifndef DOCKET_LEDGER_SPOOL_INTERNAL_H
#define DOCKET_LEDGER_SPOOL_INTERNAL_H

#include <sys/types.h>

#include "ledger_internal.h"
#include "util/buf.h"

typedef struct spool_batch spool_batch;

/* The meta key of a folded entry is this prefix and its file name (kept by
 * compact: rewrite.c). */
#define SPOOL_MARKER_PREFIX "spool:"
/* An entry name is shorter than this (spool.c). */
#define SPOOL_NAME_MAX 64
/* The spool's append-only journal, in the spool directory (spool_journal.c). */
#define SPOOL_JOURNAL "journal"

/* ---- spool_journal.c ---- */

/* What a fold read of the journal: reclaimed only if it is still that. */
typedef struct spool_journal_seen {
	int present;
	dev_t dev;
	ino_t ino;
	uint64_t size;
} spool_journal_seen;

/* One record: its name and its JSON text (not NUL-terminated); non-zero stops. */
typedef int (*spool_journal_fn)(void *ctx, const char *name, size_t name_len, const char *json, size_t len);

/* Append one record (0x1E NAME 0x20 JSON 0x0A) to `out`; DOCKET_EINVALID
 * when the JSON holds a raw newline or 0x1E. */
int spool_journal_record(docket_buf *out, const char *name, const char *json, size_t len) DOCKET_MUST_USE;
/* Append whole records to the journal of the spool directory `dir` (made
 * when missing) with one write(2), then one fdatasync: 0 once durable. */
int spool_journal_append(const char *dir, const char *bytes, size_t len) DOCKET_MUST_USE;
/* The complete, named records of buf[0..len) in order, through fn, until it
 * returns non-zero (then *stop is that value); torn records are skipped,
 * an unterminated one at the end ends the walk. The number of records. */
size_t spool_journal_parse(const char *buf, size_t len, spool_journal_fn fn, void *ctx, int *stop);
/* The journal's bytes (none, seen->present 0, when it does not exist). */
int spool_journal_read(docket_buf *out, spool_journal_seen *seen, const char *dir) DOCKET_MUST_USE;
/* The records of the journal of the spool directory `dir` (0 when it has
 * none; folded ones count until it is reclaimed). */
int spool_journal_count(const char *dir, size_t *out) DOCKET_MUST_USE;
/* fsync the directory `dir`: 0, or -1 with errno set. */
int spool_sync_dir(const char *dir) DOCKET_MUST_USE;
/* After a durable fold of every record `seen` held: unlink the journal if
 * it is still that file, that size, and no writer is appending. */
void spool_journal_reclaim(const char *dir, const spool_journal_seen *seen);

/* ---- spool.c ---- */


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
