/* SPDX-License-Identifier: Apache-2.0 */
/*
 * spool.h: the ledger's spool, for writers that must not wait (a friend
 * header: hooks use it; docs/write-path.md §3, docs/file-format.md).
 *
 * A hook that cannot take the ledger's writer lock within its budget
 * appends its events to PATH/spool/journal (one fdatasync per call); the next
 * writer folds them into the chain before its own events (append.c), in
 * name order. An entry the ledger refuses when it is folded becomes a
 * ledger.incident event, never dropped.
 */
#ifndef DOCKET_LEDGER_SPOOL_H
#define DOCKET_LEDGER_SPOOL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#include "docket/ledger.h"

/* Milliseconds on CLOCK_MONOTONIC, the clock of every deadline here. */
uint64_t docket_spool_now_ms(void);

/*
 * Run fn(l, ctx) in a thread if it can take the ledger's writer lock (its
 * first write transaction) before `deadline_ms` (or within 20 ms of the
 * thread's start, whichever is later); once it has, wait for it
 * to finish and return what it returned. When it cannot, *busy is set to 1,
 * the error is DOCKET_ESTORAGE, and every write transaction fn starts later
 * fails without writing. `ctx` belongs to the thread: ctx_free (may be NULL)
 * is called on it when fn is done, whenever that is. While a thread waits
 * for a lock its caller gave up on, `l` must not be freed
 * (docket_spool_waiting()).
 */
typedef int (*docket_write_fn)(docket_ledger *l, void *ctx);
/* A write with a deadline folds at most this many spool entries per
 * transaction (the oldest), so that a large spool cannot outlast a hook's
 * budget; a hook that finds more folds them first and spools its own. */
#define DOCKET_SPOOL_FOLD_CAP 256
int docket_ledger_write_by(docket_ledger *l, docket_write_fn fn, void *ctx, void (*ctx_free)(void *ctx),
			   uint64_t deadline_ms, int *busy) DOCKET_MUST_USE;

/*
 * Append the events (one transaction, as docket_ledger_append_json) if the
 * writer lock can be had before `deadline_ms`. When it cannot, *busy is set
 * to 1, nothing was or will be written by this call, and the error is
 * DOCKET_ESTORAGE. The waiting goes on in a thread that gives up when it
 * finally gets the lock (docket_ledger_write_by).
 */
int docket_ledger_append_json_by(docket_ledger *l, json_t *const *json, size_t n, uint64_t deadline_ms,
				 int *busy) DOCKET_MUST_USE;

/* 1 while a thread of docket_ledger_write_by waits for a lock its caller gave up on. */
int docket_spool_waiting(void);

/*
 * Write the events to the spool of the ledger at `ledger_path`, one entry
 * each, in order: records of its journal, appended by one write(2) and
 * made durable by one fdatasync. On return 0 every entry is durable.
 */
int docket_spool_put(const char *ledger_path, json_t *const *events, size_t n) DOCKET_MUST_USE;

/*
 * 1 when an entry of the spool is an event of `type` in `session` (and
 * with `invocation` unless NULL), 0 when none is; an unreadable spool
 * answers 0 (the fold judges).
 */
int docket_spool_has(const char *ledger_path, const char *type, const char *session, const char *invocation);
/*
 * The same, and *out (may be NULL) gets a new reference to the newest such
 * entry (NULL when there is none): what a hook spooled last about a session,
 * which the ledger does not show until the spool is folded.
 */
int docket_spool_find(const char *ledger_path, const char *type, const char *session, const char *invocation,
		      json_t **out);

/*
 * A snapshot of the spool for several lookups (a hook event's): the
 * journal is read and split once, at the first lookup, instead of once per
 * lookup (a hook looks up several events of its session; with the lock held
 * the journal grows by every event). A snapshot only makes a lookup see the
 * spool earlier, so a reader that reads the spool before the ledger still
 * does; reset it after appending to the spool to see what was appended.
 * docket_spool_view_new returns NULL when out of memory.
 */
typedef struct docket_spool_view docket_spool_view;

docket_spool_view *docket_spool_view_new(void);
int docket_spool_view_find(docket_spool_view *view, const char *ledger_path, const char *type, const char *session,
			   const char *invocation, json_t **out);
/* The records and entries of the view (docket_spool_count's, read once). */
size_t docket_spool_view_count(docket_spool_view *view, const char *ledger_path);
void docket_spool_view_reset(docket_spool_view *view);
void docket_spool_view_free(docket_spool_view *view);

/*
 * Fold the spool into the chain now (a write transaction with nothing else),
 * when it holds entries; _by: within a deadline, as docket_ledger_write_by.
 * For writers that record nothing themselves (a hook event that changes
 * nothing) but found the spool waiting.
 */
int docket_spool_fold(docket_ledger *l) DOCKET_MUST_USE;
int docket_spool_fold_by(docket_ledger *l, uint64_t deadline_ms, int *busy) DOCKET_MUST_USE;
/* Every entry (DOCKET_SPOOL_FOLD_CAP per transaction, each within the
 * deadline): readers fold first (docs/write-path.md §3). */
int docket_spool_fold_all_by(docket_ledger *l, uint64_t deadline_ms, int *busy) DOCKET_MUST_USE;

/*
 * The ledger.incident events of spool entries that name `session` (refused
 * when folded), oldest first, as log --json shows them (a new array); ""
 * for those whose entry names no session.
 */
int docket_spool_incidents(docket_ledger *l, const char *session, json_t **out) DOCKET_MUST_USE;

/* The spool entry a ledger.incident event carries, parsed (a new
 * reference: its session and invocation name what it was about), or NULL
 * when `incident` is no incident or its entry is not a JSON object. */
json_t *docket_spool_incident_entry(const json_t *incident);

/*
 * 1 when the journal of the ledger at `ledger_path` holds bytes (records
 * waiting, or folded but not reclaimed yet): one stat, no read. Entry files
 * of older dockets are not seen (any write folds them).
 */
int docket_spool_nonempty(const char *ledger_path);

/*
 * A server the lingering folder runs beside its folds (cmd_hook.c's hook
 * server). In the folder's process, once it holds the folder lock:
 * `listen` gives a listening socket (or -1: none); each connection on it
 * goes to `serve` with the folder's ledger, which answers it and says what
 * the folder does next: go on, stop at once (a writer thread still waits
 * in the ledger), or step down (a request of another context came: serve
 * no more, fold what waits and go, so that a folder of that context can
 * take over); `unlisten` closes the socket and removes its name before the
 * folder lets go of the lock.
 */
enum {
	DOCKET_SPOOL_SERVE_ON = 0,
	DOCKET_SPOOL_SERVE_STOP = 1,
	DOCKET_SPOOL_SERVE_STEP_DOWN = 2
};

typedef struct docket_spool_server {
	int (*listen)(void *ctx);
	int (*serve)(void *ctx, docket_ledger *l, int conn);
	void (*unlisten)(void *ctx, int fd);
	void *ctx;
} docket_spool_server;

/*
 * The spool-first hook's fold (docs/write-path.md §3, spool_folder.c): fork
 * a detached process (its own session, stdin/stdout/stderr on /dev/null, no
 * other inherited descriptor) that opens the ledger at `ledger_path` and
 * folds its spool if it can take the writer lock within `wait_ms` (not at
 * all when a writer waited in vain less than DOCKET_SPOOL_FRESH_MS ago).
 * With `linger_ms` it then stays, folding the records that land in the
 * journal (and serving `server`, may be NULL), until `linger_ms` pass
 * without one; while it lives docket_spool_folder_alive() is 1 (and
 * another such folder exits at once). The caller goes on at once; the
 * child's pid, or -1 when it could not be started (the next writer or
 * reader folds).
 */
pid_t docket_spool_fold_detached(const char *ledger_path, unsigned wait_ms, unsigned linger_ms,
				 const docket_spool_server *server);

/* 1 when a lingering folder of the ledger at `ledger_path` lives: a record
 * made durable in the journal before this call is folded by it. */
int docket_spool_folder_alive(const char *ledger_path);

/* The number of entries waiting in the spool of the ledger at `ledger_path`. */
int docket_spool_count(const char *ledger_path, size_t *out) DOCKET_MUST_USE;

/*
 * A writer that waited for the lock in vain says so (mark_held); held_within
 * is 1 when one did less than `ms` ago: the lock is held right now, and a
 * hook spools at once instead of waiting. Only a real wait marks it, so
 * hooks that follow the spool do not keep each other from trying the lock.
 */
#define DOCKET_SPOOL_FRESH_MS 200
void docket_spool_mark_held(const char *ledger_path);
int docket_spool_held_within(const char *ledger_path, unsigned ms);

/*
 * 1 while a docket writer has a write transaction open on the ledger at
 * `ledger_path` (its writer lock is held), without waiting: a hook whose
 * records would follow the spool anyway spools at once instead of trying
 * LMDB's lock. A writer that is not docket is not seen (then the wait and
 * mark_held above find it).
 */
int docket_spool_writer_busy(const char *ledger_path);

#endif
