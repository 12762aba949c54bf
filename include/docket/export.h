/* SPDX-License-Identifier: Apache-2.0 */
/*
 * export.h: the ledger for other tools and for people (docs/audit.md).
 *
 *  - docket_export: JSONL (the events of DESIGN §4), OCSF (NDJSON), OTLP/JSON
 *    spans, CSV (one row per invocation), optionally redacted and
 *    pseudonymised;
 *  - docket_export_git: a git archive, one directory per session and one
 *    commit per export carrying the chain head (libgit2, optional);
 *  - docket_export_tiles: the Merkle tree as C2SP tlog-tiles (static files);
 *  - docket_report_html: one self-contained HTML page for auditors.
 */
#ifndef DOCKET_EXPORT_H
#define DOCKET_EXPORT_H

#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "docket/audit.h"
#include "docket/common.h"
#include "docket/ledger.h"

typedef enum docket_export_format {
	DOCKET_EXPORT_JSONL = 0,
	DOCKET_EXPORT_OCSF,
	DOCKET_EXPORT_OTEL,
	DOCKET_EXPORT_CSV
} docket_export_format;

/* "jsonl" "ocsf" "otel" "csv" -> format; -1 when unknown. */
DOCKET_EXTERN int docket_export_format_parse(const char *name);

typedef struct docket_export_options {
	unsigned int version;
	int format;                            /* docket_export_format */
	const char *session;                   /* NULL: every session */
	int64_t since_ms;                      /* events at or after this time; 0: all */
	const docket_redactor *redactor;       /* NULL: no export-time redaction */
	const docket_pseudonymizer *pseudonymizer; /* NULL: raw identifiers */
	uint64_t since_seq;                    /* first seq to read; 0: from the start */
} docket_export_options;

#define DOCKET_EXPORT_OPTIONS_VERSION 1
#define DOCKET_EXPORT_OPTIONS_INIT { DOCKET_EXPORT_OPTIONS_VERSION, DOCKET_EXPORT_JSONL, NULL, 0, NULL, NULL, 0 }

typedef struct docket_export_stats {
	uint64_t events;        /* events read */
	uint64_t records;       /* records written (lines, rows, spans) */
	uint64_t invocations;   /* distinct invocations seen */
	uint64_t approvals;     /* approval.settled events */
	uint64_t redactions;    /* fields redacted */
	uint64_t head_seq;      /* the last seq exported */
} docket_export_stats;

/* Write the export to `out`. `stats` may be NULL. */
DOCKET_EXTERN int docket_export(docket_ledger *ledger, const docket_export_options *opts, FILE *out,
				docket_export_stats *stats) DOCKET_MUST_USE;

/*
 * The risk view of a ledger (docs/audit.md): sessions in risky modes,
 * escalations, allowed calls in risk classes, calls without an outcome and
 * denials, as the JSON object `docket audit --json` prints; `opts` selects as
 * for docket_export (session, since_ms, pseudonymizer; format is ignored).
 */
DOCKET_EXTERN int docket_audit_findings(json_t **out, docket_ledger *ledger,
					const docket_export_options *opts) DOCKET_MUST_USE;

/*
 * 1 when a policy.revised event (or a record with its "format" and
 * "policy") puts its session in a risky mode, 0 when not, <0 on error
 * (docs/audit.md lists the modes). `out` (`n` bytes) receives its mode
 * settings either way ("approval_policy never, sandbox danger-full-access";
 * empty for formats without modes).
 */
DOCKET_EXTERN int docket_audit_risky_mode(char *out, size_t n, const json_t *policy_revised);

/* RFC 3339 (as docket writes it, or with an offset) -> ms since the epoch; -1 if invalid. */
DOCKET_EXTERN int docket_time_to_ms(const char *rfc3339, int64_t *out_ms);

/*
 * 1 when an approval's wait (settled - asked, in ms) is known. It is unknown
 * when the settle precedes the request; when the request is the importer's
 * stamp (`stamped`: docket_request_stamped); and when an imported request
 * (`imported`: the event carries provenance) has the settle's own time (how
 * imports before the stamp marked a question the transcript did not time).
 * Unknown waits are labelled and left out of medians and histograms
 * (docs/audit.md); the report, `show` and the exports all ask this function.
 */
DOCKET_EXTERN int docket_wait_known(int64_t asked_ms, int64_t settled_ms, int imported, int stamped);

/*
 * 1 when `request` (an approval.requested as JSON) is an importer's stamp:
 * it carries provenance, its intent's time (`intent_time`) and its intent's
 * source line (`intent_line`, -1: unknown). The importer writes a request so
 * when the transcript shows only the answer (docs/import.md): when the
 * question was asked is then not known.
 */
DOCKET_EXTERN int docket_request_stamped(const char *intent_time, int64_t intent_line, const json_t *request);

/* ---- git archive (libgit2) -------------------------------------------- */

/* 1 when this docket was built with libgit2. */
DOCKET_EXTERN int docket_git_available(void);

/*
 * Export into the git repository at `dir` (created, bare, when missing):
 * sessions/<id>/events.jsonl and sessions/<id>/summary.md, one commit whose
 * message carries the ledger id and chain head (seq and hash). Incremental:
 * only events after the seq of the last commit are added; no new events, no
 * commit. `opts` gives redaction/pseudonyms (format and filters are ignored).
 */
DOCKET_EXTERN int docket_export_git(docket_ledger *ledger, const docket_export_options *opts, const char *dir,
				    docket_export_stats *stats) DOCKET_MUST_USE;

typedef struct docket_git_report {
	int ok;
	uint64_t commits;        /* export commits checked */
	uint64_t events_checked; /* archived events whose hash was compared */
	uint64_t head_seq;       /* chain head named by the newest commit */
	char problem[1024];
} docket_git_report;

/*
 * Cross-check an archive against the ledger: every export commit names this
 * ledger and a chain head the ledger has (same hash at that seq, so the
 * ledger was not cut or rewritten since), and every archived event's hash is
 * the ledger's at its seq. 0 when the check ran (see rep->ok).
 */
DOCKET_EXTERN int docket_git_verify(docket_ledger *ledger, const char *dir, docket_git_report *rep) DOCKET_MUST_USE;

/* ---- tlog-tiles (audit/tiles.c, docs/audit.md "Publishing as tiles") */

typedef struct docket_tiles_stats {
	uint64_t size;          /* the tree size published (the newest checkpoint's) */
	uint64_t old_size;      /* the size of the previous export in DIR (0: none) */
	uint64_t tiles;         /* hash tiles written */
	uint64_t bundles;       /* entry bundles written */
} docket_tiles_stats;

/*
 * Write the C2SP tlog-tiles layout of the tree of the newest signed
 * checkpoint into `dir` (created 0700; files 0600): `checkpoint`, hash tiles
 * `tile/<L>/<N>[.p/<W>]`, entry bundles `tile/entries/<N>[.p/<W>]`. A
 * directory holding a previous export of this ledger is updated (only new
 * tiles and the checkpoint are written). DOCKET_ENOTFOUND without a signed
 * checkpoint; DOCKET_EEXISTS when `dir` holds anything else; DOCKET_ECONFLICT
 * for another log's export or one this ledger does not extend;
 * DOCKET_EINVALID for an event larger than an entry may be (65,535 bytes).
 * `stats` may be NULL.
 */
DOCKET_EXTERN int docket_export_tiles(docket_ledger *ledger, const char *dir,
				      docket_tiles_stats *stats) DOCKET_MUST_USE;

/* ---- report ------------------------------------------------------------ */

/* One self-contained HTML page (inline CSS and SVG, no external assets). */
DOCKET_EXTERN int docket_report_html(docket_ledger *ledger, const docket_export_options *opts, FILE *out) DOCKET_MUST_USE;

/*
 * The same, with long tables on pages: a table of more than `rows` rows
 * (0: 500) keeps its first `rows` on the report and links the others, on
 * pages `dir`/NAME-2.html ... (made as needed), linked as `href`/NAME-2.html
 * from the report and back to `report` (its file name) from each page.
 */
typedef struct docket_report_pages {
	const char *dir, *href, *report;
	size_t rows;
} docket_report_pages;
DOCKET_EXTERN int docket_report_html_pages(docket_ledger *ledger, const docket_export_options *opts, FILE *out,
					   const docket_report_pages *pages) DOCKET_MUST_USE;

/*
 * The report over events from another store (the fleet database): `read`
 * hands every event to `cb` as `docket log --json` shows it, plus "host"
 * (the machine) and "ledger" (its id), machine after machine; sessions are
 * told apart per machine, and the report gets a table of the machines.
 * `title` names the store in the header ("fleet database ...").
 */
typedef int (*docket_report_read)(void *rctx, docket_json_cb cb, void *cbctx);
DOCKET_EXTERN int docket_report_html_from(docket_report_read read, void *rctx, const char *title,
			    const docket_export_options *opts, FILE *out) DOCKET_MUST_USE;

#endif
