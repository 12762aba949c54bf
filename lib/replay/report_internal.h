/* SPDX-License-Identifier: Apache-2.0 */
/*
 * report_internal.h: what report.c (counting, the spool) and report_write.c
 * (the four writers) share.
 */
#ifndef DOCKET_REPLAY_REPORT_INTERNAL_H
#define DOCKET_REPLAY_REPORT_INTERNAL_H

#include "replay_internal.h"
#include "util/htab.h"

/* The strings of a kept call, in spool order. */
enum {
	RS_SESSION, RS_INVOCATION, RS_TIME, RS_TOOL, RS_ARGS, RS_TARGET, RS_RULE, RS_REASON,
	RS_LEDGER, RS_HOST,  /* a fleet replay's: NULL for a local ledger */
	RS_EWHY,             /* the enforced verdict is stricter than `now`: why; else NULL */
	RS_COUNT
};

/* The fixed part of a kept call. */
typedef struct report_fixed {
	uint64_t seq;
	int cls, baseline, was, now, human_denied;
	unsigned rule_line;
	int enforced;         /* meaningful when s[RS_EWHY] is set */
	size_t changed_at;
} report_fixed;

/* A kept call: the fixed part and its strings (NULL when absent). */
typedef struct report_row {
	report_fixed fx;
	const char *s[RS_COUNT];
} report_row;

/* Table columns of the changed calls and the undecided ones. */
enum { TC_SESSION, TC_INVOCATION, TC_TOOL, TC_TARGET, TC_WAS, TC_NOW, TC_CLASS, TC_RULE, TC_COMMIT, TC_COUNT };

/* A session replayed, as the report names it (report_sessions.c). */
typedef struct report_session {
	char *id, *host, *runtime;
	char recorded[24], assumed[24], from[16];  /* docket_replay_call's, "" for NULL */
	int live_settings, imported;
	uint64_t baselines[4];        /* calls per docket_replay_baseline */
} report_session;

struct docket_replay_report {
	docket_replay_format format;
	unsigned fail_on;
	int color;
	unsigned width;                 /* table: terminal columns (0: no limit) */
	const docket_replay_history *history;
	char *policy, *baseline, *approvals, *session, *since, *until;
	uint64_t calls, counts[4], human_denied;
	uint64_t enforced_stricter;     /* calls stricter when enforced (docs/replay.md "Two verdicts") */
	uint64_t transitions[5][4];     /* [was, or 4: undecided][now] */
	uint64_t changed_rows, undecided_rows;
	size_t widths[2][TC_COUNT];     /* [0] changed, [1] undecided */
	FILE *spool;                    /* table: the kept calls as records */
	FILE *text[2];                  /* json, junit, markdown: the rows as written,
					   [0] changed, [1] undecided (json only) */
	docket_buf target, cell, line, session_cell;
	docket_buf head;                /* table: a line of the head, before it is wrapped */
	report_session *sess;           /* in the order they first appear */
	size_t nsess, sess_cap;
	docket_htab sess_index;         /* slots: index + 1 into sess, by (host, id) */
};

/* Write a kept call's record into the table's spool. */
int report_spool(docket_replay_report *r, const report_row *row);
/* Append the bytes of a text spool to `out`. */
int report_copy(FILE *spool, FILE *out);
/* The next kept call (strings in `buf`); 1 at the end. */
int report_next(docket_replay_report *r, report_row *row, docket_buf *buf);
/* Display width of UTF-8 text. */
size_t report_width(const char *s);

/* report_sessions.c */
/* Account a call's session (the first call of a session adds it). */
int report_session_add(docket_replay_report *r, const docket_replay_call *c);
void report_sessions_free(docket_replay_report *r);
/* 1 when the sandbox assumed is not the one the runtime had. */
int report_session_warns(const report_session *e);
/* Why the sandbox assumed is the one: "the policy's", "--assume-sandbox", ... */
const char *report_session_from(const report_session *e);
/* The baselines of the session's calls, named. */
int report_session_baseline(docket_buf *out, const report_session *e);

/* report_write.c */
/* Keep a changed or undecided call: the table spools it and accounts its
 * cells in the column widths; the other formats write its row at once into
 * their text spools (finish copies them after the counts). */
int report_keep(docket_replay_report *r, const report_row *row);
int report_table(docket_replay_report *r, FILE *out);
int report_json(docket_replay_report *r, FILE *out);
int report_junit(docket_replay_report *r, FILE *out);
int report_markdown(docket_replay_report *r, FILE *out);

/* report_json.c: a JSON string (NULL: null) and a row, as jansson writes them */
int report_json_string(docket_buf *out, const char *s);
int report_json_row(docket_buf *out, const char *commit, const report_row *row);

#endif
