/* SPDX-License-Identifier: Apache-2.0 */
/*
 * export_internal.h: what the exporters share.
 *
 * export.c reads the ledger, applies redaction and pseudonyms to each event
 * (as the JSON of DESIGN §4) and hands it to a sink: one per format. The
 * collector (collect.c) folds events into one record per invocation and per
 * session for the formats that want rows or spans (CSV, OTel, OCSF) and the
 * git summaries; the report and the risk view read the compact fold of
 * calls.h instead.
 */
#ifndef DOCKET_EXPORT_INTERNAL_H
#define DOCKET_EXPORT_INTERNAL_H

#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "docket.pb-c.h"
#include "docket/export.h"
#include "util/buf.h"

/* ---- sinks ------------------------------------------------------------- */

typedef struct export_sink export_sink;

struct export_sink {
	/* One transformed event. `emit` is 0 for events before --since (they
	 * still feed state such as the intent of a later outcome). */
	int (*event)(export_sink *s, const json_t *ev, int emit);
	/* The same event as stored, for a sink that writes it without a json_t
	 * (JSONL): used instead of `event` when set and nothing transforms the
	 * events (no redaction, no pseudonyms) and the ledger is local. */
	int (*stored)(export_sink *s, uint64_t seq, const Docket__V1__Event *ev, const char *hash, int emit);
	/* Set by a sink that can take the hashes late (JSONL): `stored` may
	 * get export_hash_pending as the hash, and `hashes` then gets the
	 * chain hashes of seqs first..last once a worker has checked them
	 * (ledger_read_events_hashed), before any later event. */
	int (*hashes)(export_sink *s, uint64_t first, uint64_t last, const uint8_t (*h)[32]);
	int (*finish)(export_sink *s);
	void (*free)(export_sink *s);
	FILE *out;
	const char *ledger_id;
	int64_t since_ms;
	docket_export_stats *stats;
	docket_ledger_info info;  /* the ledger at the start of the export */
	docket_ledger *ledger;    /* the ledger read (NULL for the fleet database) */
	/* DOCKET_READ_* the stored path may read with (calls.c: no hashes, no
	 * outcomes), and whether the read passed over the outcomes (only with
	 * current projections, where the invocation records hold them) */
	unsigned read_flags;
	int outcomes_skipped;
};

/* The hex `stored` gets for a hash still being computed (as many '0's). */
extern const char export_hash_pending[65];

/* Tests: 0 makes the stored path read the outcomes for every sink. */
extern int export_outcomes_from_records;

/* Read the ledger through redaction and pseudonyms into `sink`, then
 * finish it. `out` (may be NULL) is flushed and checked at the end. */
int export_run(docket_ledger *ledger, const docket_export_options *opts, export_sink *sink,
	       FILE *out, docket_export_stats *stats);

/* The same over events another store hands to `cb` (the fleet database);
 * sink->info is left as the caller set it. */
typedef int (*export_read)(void *rctx, docket_json_cb cb, void *cbctx);
int export_run_read(export_read read, void *rctx, const docket_export_options *opts, export_sink *sink,
		    FILE *out, docket_export_stats *stats);

int sink_jsonl_new(export_sink **out, int64_t since_ms);
int sink_ocsf_new(export_sink **out, int64_t since_ms);
int sink_otel_new(export_sink **out, int64_t since_ms);
int sink_csv_new(export_sink **out, int64_t since_ms);
int sink_report_new(export_sink **out, int64_t since_ms, docket_ledger *ledger);

/* Write one JSON value as a line; DOCKET_ESTORAGE when the stream fails. */
int export_json_line(FILE *out, const json_t *value);

/* ---- the collector ----------------------------------------------------- */

/*
 * Invocation records (JSON objects, in intent order) with:
 *   session invocation tool turn args summary intent_seq intent_time
 *   verdict decision_source reasons
 *   requested_time reviewer prompt risk_level settled_time result actor
 *   settle_reason wait_ms dispatches [{time attempt token}] completed_time
 *   status exit_code duration_ms error recovery [{time action detail}]
 *   since (1 when the intent is at or after --since)
 * Session records: session runtime platform cwd opened_time closed_time
 * parent; policy revisions: session revision format actor reason time.
 */
typedef struct collector {
	json_t *invocations;   /* array, intent order */
	json_t *by_key;        /* "session\x1finvocation" -> the same objects */
	json_t *sessions;      /* array, open order */
	json_t *session_by_id; /* id -> the same objects */
	json_t *policies;      /* array of revisions */
	int64_t since_ms;
} collector;

int collector_init(collector *c, int64_t since_ms);
void collector_dispose(collector *c);
int collector_add(collector *c, const json_t *ev);
/* The invocation record of an event (NULL when unknown). */
json_t *collector_invocation(const collector *c, const json_t *ev);
json_t *collector_session(const collector *c, const char *session);

/*
 * A sink that folds every event into a collector (OCSF, OTel, CSV): the
 * sinks' structs are this one.
 */
typedef struct collector_sink {
	export_sink base;
	collector c;
} collector_sink;

/* A zeroed collector_sink with its collector ready and these callbacks;
 * its free is collector_sink_free. */
/* A sink whose struct (`size` bytes) begins with a collector_sink: zeroed,
 * its collector started, its callbacks set. */
int collector_sink_make(export_sink **out, size_t size, int64_t since_ms,
			int (*event)(export_sink *s, const json_t *ev, int emit),
			int (*finish)(export_sink *s), void (*free_fn)(export_sink *s));
int collector_sink_new(export_sink **out, int64_t since_ms,
		       int (*event)(export_sink *s, const json_t *ev, int emit),
		       int (*finish)(export_sink *s));
/* The event callback of a sink that only collects (and writes at finish). */
int collector_sink_collect(export_sink *s, const json_t *ev, int emit);
void collector_sink_free(export_sink *s);

/* Decision classes of an invocation record, in the report's chart order. */
enum { D_ALLOWED, D_APPROVED, D_DENIED, D_REJECTED, D_PENDING, D_COUNT };

/* The class of a call from what is known of it (the one rule for every
 * writer): a settled result (granted, superseded), dispatched, an outcome
 * that refused (denied, unsupported), an outcome at all. */
int call_class(int has_result, int granted, int superseded, int dispatched, int refused, int has_status);
/* The class of an invocation record (call_class of its members). */
int call_decision(const json_t *inv);
/* 1 when a person granted the call (approved, approved_for_session). */
int call_granted(const json_t *inv);
/* 1 when the call was denied by policy or refused by a person. */
int call_denied(const json_t *inv);

/* ---- the risk view (audit.c; the lists themselves: calls.h) ------------- */

/* The settings that make a policy revision record risky ("approval never,
 * sandbox danger-full-access"); empty when none. */
int audit_risky_settings(docket_buf *out, const json_t *policy_rec);
/* "denied: <reason>" text of a denied call: the decision's reasons, the
 * settle reason, the outcome's error and what the source said. */
int audit_denial_reason(docket_buf *out, const json_t *inv);
/* Join `text` to the "; "-separated `out` unless it holds it already. */
int audit_reason_add(docket_buf *out, const char *text);

/* ms since the epoch of an event's "time"; -1 when absent or invalid. */
int64_t event_ms(const json_t *ev);

/* ---- small JSON accessors ---------------------------------------------- */

const char *jstr(const json_t *obj, const char *key);  /* "" when absent */
int jhas(const json_t *obj, const char *key);

#endif
