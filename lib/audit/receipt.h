/* SPDX-License-Identifier: Apache-2.0 */
/*
 * receipt.h: receipts (docs/audit.md "## Receipts", docs/file-format.md):
 * one invocation's events, each with an inclusion proof in the tree a signed
 * checkpoint note names, checkable with no ledger (audit/receipt.c).
 */
#ifndef DOCKET_LEDGER_RECEIPT_H
#define DOCKET_LEDGER_RECEIPT_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "docket/audit.h"
#include "docket/ledger.h"
#include "util/buf.h"

#define RECEIPT_FORMAT "docket-receipt/1"
#define RECEIPT_MAX_LEN ((size_t)4 << 20)   /* bytes verify-receipt reads */
#define RECEIPT_MAX_EVENTS 64

/*
 * The receipt of `invocation` of `session` against the checkpoint `note`
 * (a signed tlog-checkpoint note of this ledger). With `redactor` or
 * `pseudo`, each event that redaction changes carries the leaf hash of its
 * stored bytes and its redacted JSON instead of the bytes. DOCKET_ENOTFOUND: no such invocation,
 * or the checkpoint does not cover its events (the message says what to run).
 */
int receipt_build(json_t **out, docket_ledger *l, const char *session, const char *invocation,
		  const char *note, size_t note_len, const docket_redactor *redactor,
		  const docket_pseudonymizer *pseudo) DOCKET_MUST_USE;

typedef struct receipt_report {
	int ok;                  /* every check held */
	size_t redacted;         /* events proved by leaf hash only: shown only as redacted */
	int intent_proved;       /* the intent carries its bytes: the call is proved */
	size_t events;
	char problem[512];       /* the first check that failed */
} receipt_report;

/*
 * Check a receipt (untrusted text, at most RECEIPT_MAX_LEN bytes) offline
 * against the log's public key: the note's signature, the origin against
 * the ledger id, every leaf hash and inclusion proof, the decoding of every
 * event's bytes, that the events are one invocation's. Returns 0 when the
 * check ran (rep->ok says how it went; `story` (may be NULL) gets the
 * one-screen story, terminal-safe), <0 when it could not run (the key).
 * Anything wrong with the receipt is rep->ok == 0, never a negative code.
 * rep->ok with rep->redacted > 0 is "verified with redacted events": the
 * story shows those events only as redacted (nothing drawn from their text).
 */
int receipt_verify(receipt_report *rep, json_t **story, const char *text, size_t len,
		   const char *pubkey_path) DOCKET_MUST_USE;

/* The story as text lines (control characters escaped) into `out`. */
int receipt_story_text(docket_buf *out, const json_t *story, const receipt_report *rep) DOCKET_MUST_USE;

#endif
