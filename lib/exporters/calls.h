/* SPDX-License-Identifier: Apache-2.0 */
/*
 * calls.h: the compact fold of a ledger that the risk view (audit.c) and
 * the report (report.c) read: one fixed-size record per call, per session,
 * per policy revision and per ledger incident, their texts in one string
 * arena. It is fed the stored events (no JSON tree per event), so a ledger
 * of a million calls is read once into about 150 bytes per call
 * (docs/audit.md "Scale"). The other exports keep the JSON collector
 * (export_internal.h).
 */
#ifndef DOCKET_EXPORT_CALLS_H
#define DOCKET_EXPORT_CALLS_H

#include <stddef.h>
#include <stdint.h>

#include "export_internal.h"
#include "ledger/event.h"

typedef uint32_t cstr;  /* offset of a text in calls.strings; 0 is "" */

enum {
	CF_SINCE = 1 << 0,        /* the intent is at or after --since */
	CF_ESCALATED = 1 << 1,    /* asked to leave the sandbox */
	CF_REQUESTED = 1 << 2,    /* an approval was asked */
	CF_WAIT_KNOWN = 1 << 3,   /* wait_ms holds the approval wait */
	CF_WAIT_UNKNOWN = 1 << 4, /* settled, but when it was asked is not known */
	CF_REQ_IMPORTED = 1 << 5, /* the last request came from a transcript */
	CF_REQ_STAMPED = 1 << 6,  /* ... stamped with its intent's time and line */
	CF_RECOVERY = 1 << 7,     /* a recovery action touched it */
};

typedef struct call_rec {
	uint64_t intent_seq;
	int64_t intent_ms, wait_ms, intent_line; /* intent_ms -1: no valid time; intent_line -1: not imported */
	uint32_t session, flags, risk, dispatches;
	uint8_t verdict, result, status; /* Docket__V1__ enums, 0: none */
	cstr invocation, tool, summary, intent_time, requested_time, reviewer, actor, source, reasons, rule,
	     settle_reason, error, denial, justification, recovery, hosts;
	cstr args;  /* the args text of a call whose facts others reuse (calls.c, memo) */
} call_rec;

enum { CS_OPENED = 1, CS_CLOSED = 2 };

typedef struct session_rec {
	cstr id, runtime, cwd, opened_time, closed_time, parent, home;
	cstr *roots;
	size_t nroots;
	uint32_t flags;
} session_rec;

typedef struct policy_rec {
	uint32_t session, revision;
	cstr format, actor, reason, time, settings; /* settings: the risky ones, "" when none */
} policy_rec;

typedef struct incident_rec {
	uint64_t seq;
	cstr time, kind, file, error;
} incident_rec;

typedef struct call_fold {
	int64_t since_ms;
	docket_buf strings;
	call_rec *call;
	size_t ncalls, call_cap;
	session_rec *session;
	size_t nsessions, session_cap;
	policy_rec *policy;
	size_t npolicies, policy_cap;
	incident_rec *incident;
	size_t nincidents, incident_cap;
	uint32_t *call_slot, *session_slot; /* open addressing: index + 1, 0 free */
	size_t call_slots, session_slots;
	uint32_t *memo, *memo_slot;          /* calls whose facts others reuse; slots: index in memo + 1 */
	size_t nmemo, memo_cap, memo_slots;
	size_t last_call;                    /* the call of the last event (+1) */
} call_fold;

int calls_init(call_fold *c, int64_t since_ms);
void calls_dispose(call_fold *c);
/* Store `s` (NULL or "": 0). */
int calls_put(call_fold *c, cstr *out, const char *s);
/* Fold one stored event. */
int calls_add(call_fold *c, uint64_t seq, const docket_event *ev);
/* The outcomes of the folded calls from `l`'s invocation records, after a
 * read that passed over them (DOCKET_READ_NO_OUTCOMES): every call's
 * status, and the outcome event itself of a denied call (its error and
 * output are the reason the report and audit show). Outcomes after `upto`
 * (appended after the read) are left out. */
int calls_outcomes(call_fold *c, docket_ledger *l, uint64_t upto);
/* Fold one event given as JSON (redacted, pseudonymised, or from the fleet
 * database): converted to the stored form first. */
int calls_add_json(call_fold *c, const json_t *ev);

static inline const char *calls_str(const call_fold *c, cstr s)
{
	return s ? c->strings.ptr + s : "";
}

/* The class of a call (D_ALLOWED ...; export_internal.h), as call_decision. */
int calls_decision(const call_rec *r);
int calls_granted(const call_rec *r);
int calls_denied(const call_rec *r);
/* Names of its enums ("" for none). */
const char *calls_verdict(const call_rec *r);
const char *calls_result(const call_rec *r);
const char *calls_status(const call_rec *r);

/* An export sink that folds every event into `c` (stored or JSON); the
 * struct of a sink that starts with it. */
typedef struct calls_sink {
	export_sink base;
	call_fold c;
	int (*finish)(export_sink *s);  /* the report's or audit's, after the outcomes */
} calls_sink;

int calls_sink_make(export_sink **out, size_t size, int64_t since_ms, int (*finish)(export_sink *s),
		    void (*free_fn)(export_sink *s));
void calls_sink_free(export_sink *s);
int calls_sink_event(export_sink *s, const json_t *ev, int emit);

/* ---- the risk view over the fold (audit.c) ------------------------------ */

enum { AL_ESCALATION = 1, AL_RISKY = 2, AL_NO_OUTCOME = 4, AL_DENIED = 8 };

/* The lists a call is in (AL_*); 0 for none or before --since. */
unsigned audit_call_lists(const call_rec *r);

typedef struct audit_counts {
	size_t risky_sessions, escalations, risky_calls, no_outcome, denials, incidents;
	size_t calls;       /* distinct calls in any list */
	size_t attention;   /* risky sessions + those calls + incidents */
	size_t waits_known, waits_unknown;
} audit_counts;

void audit_count(audit_counts *out, const call_fold *c);
/* What the risk view reads of an intent's args, set on its record (at the
 * intent; its session is known): escalation and justification, the risk
 * classes (docket_call_risk, escalation left out) and the hosts. */
int audit_call_facts(call_fold *c, call_rec *r, json_t *args);
/* "allowed (inferred); ok", "approved by user; ok", "...; no outcome" */
int audit_call_outcome(docket_buf *out, const call_fold *c, const call_rec *r);
/* The reason of a denied call (audit_denial_reason's parts). */
int audit_call_reason(docket_buf *out, const call_fold *c, const call_rec *r);
/* The names of risk classes, ", "-joined ("network, push"). */
int audit_class_names(docket_buf *out, unsigned classes);
/* The findings as JSON (docket_audit_findings's object). */
int audit_findings_json(json_t **out, const call_fold *c);

#endif
