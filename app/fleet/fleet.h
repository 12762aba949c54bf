/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fleet.h: ledgers of many machines in one PostgreSQL database (docs/fleet.md).
 *
 * A machine ships its ledger (docket_fleet_ship): every event not yet held
 * centrally, in seq order, in batches of one transaction each; the server
 * checks that each batch continues the ledger's hash chain from the head it
 * holds, derives every column from the payloads (what the shipper sends
 * beside them must agree), checks the host is bound to the shipping role,
 * and refuses (and records an incident) otherwise. The central side
 * re-checks every ledger (docket_fleet_verify) and answers the fleet
 * queries and replays (docket_fleet_events, docket_fleet_replay).
 *
 * Connection strings are libpq's (a postgresql:// URI or key=value pairs);
 * the PG* environment variables apply as libpq reads them.
 */
#ifndef DOCKET_FLEET_H
#define DOCKET_FLEET_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "docket/common.h"
#include "docket/ledger.h"
#include "docket/replay.h"

typedef struct docket_fleet docket_fleet;

/* The schema version this docket writes and reads (docs/fleet.md). */
#define DOCKET_FLEET_SCHEMA_VERSION 7

/*
 * Connect. DOCKET_EINVALID: libpq cannot parse `conninfo`; DOCKET_ESTORAGE:
 * the server cannot be reached or refused the login (libpq's message).
 */
int docket_fleet_connect(docket_fleet **out, const char *conninfo) DOCKET_MUST_USE;
void docket_fleet_free(docket_fleet *f);
/* 1 while the connection is up. */
int docket_fleet_alive(docket_fleet *f);

/*
 * Create or migrate the schema (tables, views, roles docket_shipper and
 * docket_reader, ingest functions). *from and *to (may be NULL) receive the
 * version before and after. DOCKET_EVERSION when the database is newer.
 */
int docket_fleet_init(docket_fleet *f, int *from, int *to) DOCKET_MUST_USE;

/* ---- shipping ---- */

typedef struct docket_ship_options {
	unsigned int version;
	const char *host;    /* the machine's name as the fleet sees it; NULL: gethostname() */
	size_t batch;        /* events per transaction; 0: 2000 */
} docket_ship_options;

#define DOCKET_SHIP_OPTIONS_VERSION 1
#define DOCKET_SHIP_OPTIONS_INIT { DOCKET_SHIP_OPTIONS_VERSION, NULL, 0 }

typedef struct docket_ship_report {
	char ledger_id[33];
	uint64_t shipped;        /* events sent and accepted by this call */
	uint64_t high_seq;       /* what the server holds now */
	uint64_t checkpoints;    /* checkpoints accepted by this call */
	int refused;             /* 1: the server refused a batch (see incident) */
	char incident[1024];     /* the server's reason */
} docket_ship_report;

/*
 * Ship every event of `l` the server does not hold yet, then every
 * checkpoint. Returns 0 when the exchange ran (rep->refused says whether
 * the server accepted everything), <0 on a connection, storage or schema
 * failure. Idempotent: a re-run after any interruption continues from the
 * server's high-water mark.
 */
int docket_fleet_ship(docket_fleet *f, docket_ledger *l, const docket_ship_options *o,
		      docket_ship_report *rep) DOCKET_MUST_USE;

/*
 * Follow: ship, then sleep until the ledger commits again (inotify on the
 * ledger's data file, not a poll), ship again, until *stop becomes non-zero.
 * When the server cannot be reached or goes away the connection is retried
 * with exponential backoff (100 ms doubling up to max_backoff_ms); nothing is
 * buffered meanwhile (the ledger is the backlog, and a batch in memory is at
 * most `batch` events). A refused batch ends the loop (rep->refused). Errors
 * that waiting cannot cure (bad connection string, missing schema, a local
 * storage failure) are returned.
 */
typedef struct docket_follow_options {
	unsigned int version;
	const char *ledger_path;        /* the ledger directory */
	volatile sig_atomic_t *stop;    /* set by a signal handler */
	unsigned int max_backoff_ms;    /* 0: 10000 */
	/* after every round: its report, or the error that ended it (<0) */
	void (*on_round)(void *ctx, const docket_ship_report *r, int error);
	void *ctx;
} docket_follow_options;

#define DOCKET_FOLLOW_OPTIONS_VERSION 1
#define DOCKET_FOLLOW_OPTIONS_INIT { DOCKET_FOLLOW_OPTIONS_VERSION, NULL, NULL, 0, NULL, NULL }

int docket_fleet_follow(const char *conninfo, docket_ledger *l, const docket_ship_options *o,
			const docket_follow_options *fo, docket_ship_report *rep) DOCKET_MUST_USE;

/* ---- reading the central store ---- */

/* Which ledgers a central command looks at (NULL members: all). */
typedef struct docket_fleet_filter {
	const char *ledger_id;
	const char *host;
} docket_fleet_filter;

typedef struct docket_fleet_ledger {
	const char *ledger_id;
	const char *host;
	const char *owner;
	uint64_t high_seq;
	uint64_t checkpoints;
	const char *head;        /* the chain hash at high_seq, hex */
} docket_fleet_ledger;

/* What docket_fleet_verify found for one ledger. */
typedef struct docket_fleet_verify_report {
	docket_fleet_ledger ledger;
	uint64_t events_checked;
	uint64_t checkpoints_checked;
	uint64_t first_bad_seq;  /* 0: none */
	int ok;
	char problem[1024];
} docket_fleet_verify_report;

typedef int (*docket_fleet_verify_cb)(void *ctx, const docket_fleet_verify_report *r);

/*
 * Re-check every selected ledger from the stored bytes: its host bound to
 * its owner (docket_hosts), seqs 1..high_seq without a gap, the chain
 * recomputed from each payload equals each stored hash and the head held,
 * each payload decodes (docket's codec) to exactly the event JSON and every
 * column its row holds (a difference names the column), each checkpoint
 * names the chain hash at its seq and its
 * predecessor's digest; with `pubkey_path` (an Ed25519 public key, PEM)
 * each checkpoint's record must also be signed by that key for its ledger.
 * `cb` once per ledger, in ledger-id order. Returns 0 when the check ran
 * (DOCKET_EINVALID: unreadable key).
 */
int docket_fleet_verify(docket_fleet *f, const docket_fleet_filter *filter, const char *pubkey_path,
			docket_fleet_verify_cb cb, void *ctx) DOCKET_MUST_USE;

/* Each selected ledger's events as the JSON of `docket log --json`. */
typedef int (*docket_fleet_event_cb)(void *ctx, const docket_fleet_ledger *ledger, uint64_t seq,
				     json_t *event);

/* `session` NULL: every session. Ledgers in ledger-id order, events in seq order. */
int docket_fleet_events(docket_fleet *f, const docket_fleet_filter *filter, const char *session,
			docket_fleet_event_cb cb, void *ctx) DOCKET_MUST_USE;

/* The ledgers held, in ledger-id order. */
typedef int (*docket_fleet_ledger_cb)(void *ctx, const docket_fleet_ledger *ledger);
int docket_fleet_ledgers(docket_fleet *f, const docket_fleet_filter *filter,
			 docket_fleet_ledger_cb cb, void *ctx) DOCKET_MUST_USE;

/*
 * Sessions and pending calls of every selected ledger, as the local
 * docket_ledger_sessions and docket_ledger_pending give them (computed from
 * the events held; `session` NULL: all), in ledger-id order, then in the
 * local order.
 */
typedef int (*docket_fleet_session_cb)(void *ctx, const docket_fleet_ledger *ledger,
				       const docket_session_info *info);
typedef int (*docket_fleet_pending_cb)(void *ctx, const docket_fleet_ledger *ledger,
				       const docket_pending_info *info);
int docket_fleet_sessions(docket_fleet *f, const docket_fleet_filter *filter, const char *session,
			  docket_fleet_session_cb cb, void *ctx) DOCKET_MUST_USE;
int docket_fleet_pending(docket_fleet *f, const docket_fleet_filter *filter, const char *session,
			 docket_fleet_pending_cb cb, void *ctx) DOCKET_MUST_USE;

/*
 * Replay the calls of every selected ledger (docket_replay_run for each, in
 * ledger-id order, all into `cb`): the union of the machines' own replays.
 * `on_ledger` (may be NULL) is told which ledger the next calls come from.
 */
int docket_fleet_replay(docket_fleet *f, const docket_fleet_filter *filter, const docket_policy *base,
			const docket_policy *const *policies, size_t n, const docket_replay_options *opts,
			docket_fleet_ledger_cb on_ledger, docket_replay_cb cb, void *ctx) DOCKET_MUST_USE;

#endif
