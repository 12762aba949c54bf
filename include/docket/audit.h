/* SPDX-License-Identifier: Apache-2.0 */
/*
 * audit.h: proving and sharing a ledger (docs/audit.md).
 *
 *  - keys: Ed25519 signing keys (OpenSSL), HMAC keys for pseudonyms;
 *  - checkpoints: signed statements "ledger L had chain head H at seq S",
 *    chained to each other, stored in the ledger's `checkpoints` table;
 *  - seal verification: a copied ledger checked offline against a public key
 *    and, optionally, an external witness (a checkpoint saved elsewhere);
 *  - redaction: secret patterns replaced by "[REDACTED:rule]", at export time
 *    or, when rules are set on the ledger, at write time;
 *  - pseudonyms: session ids, actors and home paths replaced by keyed hashes.
 */
#ifndef DOCKET_AUDIT_H
#define DOCKET_AUDIT_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "docket/common.h"
#include "docket/ledger.h"

/* ---- keys -------------------------------------------------------------- */

/*
 * Write a new Ed25519 private key to `path` (PEM, mode 0600) and its public
 * key to `path`.pub (PEM). DOCKET_EEXISTS when either exists and !force.
 * `key_id` (may be NULL) receives the key id: hex SHA-256 of the raw public key.
 */
DOCKET_EXTERN int docket_keygen(const char *path, int force, char key_id[65]) DOCKET_MUST_USE;

/* Write 32 random bytes as hex to `path` (mode 0600): a pseudonymisation key. */
DOCKET_EXTERN int docket_keygen_hmac(const char *path, int force) DOCKET_MUST_USE;

/* ---- checkpoints ------------------------------------------------------- */

typedef struct docket_checkpoint {
	uint64_t index;         /* 1, 2, 3 ... without gaps */
	uint64_t seq;           /* the last event it covers */
	char ledger_id[33];
	char head[65];          /* chain hash h[seq], hex */
	char prev[65];          /* digest of the previous checkpoint (zeros for the first) */
	char digest[65];        /* SHA-256 of the signed statement and its signature */
	char key_id[65];        /* hex SHA-256 of the signer's raw public key */
	char time[40];          /* when it was made, RFC 3339 UTC */
} docket_checkpoint;

/*
 * Sign the ledger's current chain head with the Ed25519 private key in
 * `key_path` and store the checkpoint. When no event was appended since the
 * last checkpoint, that one is returned and *created is 0. Errors:
 * DOCKET_EINVALID (bad key file, empty ledger), DOCKET_ECONFLICT (earlier
 * checkpoints were signed with another key), DOCKET_ESTORAGE.
 */
DOCKET_EXTERN int docket_checkpoint_create(docket_checkpoint *out, int *created, docket_ledger *ledger,
					   const char *key_path) DOCKET_MUST_USE;

typedef int (*docket_checkpoint_cb)(void *ctx, const docket_checkpoint *cp);

/* Every stored checkpoint in index order. */
DOCKET_EXTERN int docket_checkpoint_list(docket_ledger *ledger, docket_checkpoint_cb cb, void *ctx) DOCKET_MUST_USE;

/*
 * The stored record of checkpoint `index` (0: the last one) as one line of
 * JSON (what `docket checkpoint -o FILE` saves as a witness). *out is freed
 * with docket_free. DOCKET_ENOTFOUND when there is no such checkpoint.
 */
DOCKET_EXTERN int docket_checkpoint_record(char **out, docket_ledger *ledger, uint64_t index) DOCKET_MUST_USE;

/* What docket_ledger_verify_seal found. */
typedef struct docket_seal_report {
	int ok;                  /* 1: every check passed */
	uint64_t checkpoints;    /* checkpoints checked */
	uint64_t covered_seq;    /* events 1..covered_seq are covered by a signature */
	uint64_t head_seq;       /* events in the ledger */
	int witness_checked;     /* a witness was given and matched */
	char key_id[65];         /* the public key's id */
	char problem[1024];      /* what was wrong, if !ok */
} docket_seal_report;

/*
 * Check the checkpoints of a ledger (whose chain docket_ledger_verify has
 * already checked) against the Ed25519 public key in `pubkey_path`: the
 * checkpoints are numbered without gaps, each names the previous one's
 * digest, each is signed by that key for this ledger, each head equals the
 * chain hash at its seq (so the events up to it are unmodified) and no seq is
 * past the end (truncation). `witness_path` (may be NULL) is a checkpoint
 * record kept elsewhere; it must be present, identical, in the ledger. At
 * least one checkpoint must exist. Returns 0 when the check ran (see
 * rep->ok), <0 when it could not (unreadable key, storage error).
 */
DOCKET_EXTERN int docket_ledger_verify_seal(docket_ledger *ledger, const char *pubkey_path,
					    const char *witness_path, docket_seal_report *rep) DOCKET_MUST_USE;

/* ---- redaction --------------------------------------------------------- */

typedef struct docket_redactor docket_redactor;

/*
 * A redactor with the built-in rules (cloud access keys, API tokens, private
 * keys, passwords in URLs, bearer headers, password assignments) and the
 * built-in secret key names (password, token, api_key, secret,
 * authorization, cookie, private_key, ...) and, when `rules_json` is not
 * NULL, the rules of that document:
 *   {"builtin": true|false,
 *    "rules": [{"name": "acme-token", "pattern": "acme_[A-Za-z0-9]{24}",
 *               "group": 0, "icase": false}],
 *    "keys": ["x-acme-auth"]}
 * (POSIX extended regular expressions; `group` N replaces only that
 * capture group; "builtin": false drops the built-in rules and key names).
 * Unknown keys, bad names and patterns are DOCKET_EINVALID.
 */
DOCKET_EXTERN int docket_redactor_new(docket_redactor **out, const char *rules_json, size_t len) DOCKET_MUST_USE;
DOCKET_EXTERN void docket_redactor_free(docket_redactor *r);

/* Read a rules document from a file (at most 1 MiB); *out is NUL-terminated
 * and freed with docket_free. */
DOCKET_EXTERN int docket_redaction_rules_read(char **out, size_t *len, const char *path) DOCKET_MUST_USE;

/* The rules' names, in the order they are applied (for `--help` and docs). */
DOCKET_EXTERN size_t docket_redactor_rules(const docket_redactor *r, const char **names, size_t max);
/* The secret key names, normalised (words in lower case joined by '_'). */
DOCKET_EXTERN size_t docket_redactor_keys(const docket_redactor *r, const char **names, size_t max);

/*
 * Redact every free-text string of one event (DESIGN §4 JSON): args,
 * output, error, prompt, reasons, env and label values, the policy document;
 * values under secret key names at any depth; object keys that are secrets;
 * strings that are whole JSON documents, walked the same way.
 * Ids, enums, times and hashes are left alone. For each field a rule hit,
 * {"field": "args.command[2]", "rule": "aws-access-key"} is appended to
 * `hits` (may be NULL); markers already in the event (write-time redaction)
 * are listed with "stage": "ledger". *changed (may be NULL) is set to 1 when
 * something was replaced.
 */
DOCKET_EXTERN int docket_redact_event(const docket_redactor *r, json_t *event, json_t *hits,
				      int *changed) DOCKET_MUST_USE;

/*
 * Write-time redaction: store rules (a rules document as above, validated
 * first) in the ledger's meta table so that every later append redacts its
 * events before they are validated, encoded and written. `rules_json` NULL
 * turns write-time redaction off.
 */
DOCKET_EXTERN int docket_ledger_set_redaction(docket_ledger *ledger, const char *rules_json,
					      size_t len) DOCKET_MUST_USE;
/* The stored rules document (*out NULL when none); freed with docket_free. */
DOCKET_EXTERN int docket_ledger_get_redaction(docket_ledger *ledger, char **out) DOCKET_MUST_USE;

/* ---- pseudonyms -------------------------------------------------------- */

typedef struct docket_pseudonymizer docket_pseudonymizer;

/*
 * Load an HMAC key from `path`: 64 hex digits (as `docket keygen --hmac`
 * writes), or any file of at least 16 bytes used as it is.
 */
DOCKET_EXTERN int docket_pseudonymizer_load(docket_pseudonymizer **out, const char *path) DOCKET_MUST_USE;
/* The same from bytes in memory. */
DOCKET_EXTERN int docket_pseudonymizer_new(docket_pseudonymizer **out, const uint8_t *key, size_t len) DOCKET_MUST_USE;
DOCKET_EXTERN void docket_pseudonymizer_free(docket_pseudonymizer *p);

/*
 * The pseudonym of `value` of kind `kind` ("session", "actor", "user"):
 * `kind` "-" first 16 hex digits of HMAC-SHA-256(key, kind ":" value).
 */
DOCKET_EXTERN void docket_pseudonym(const docket_pseudonymizer *p, const char *kind, const char *value,
				    char out[64]);

/*
 * Replace in one event (DESIGN §4 JSON): `session`, `parent` and every
 * `actor` by pseudonyms, the user name in home paths (/home/NAME,
 * /Users/NAME, C:\Users\NAME) in every string, the values of USER, LOGNAME
 * and HOME in `env`, and any other occurrence of the event's raw session id.
 */
DOCKET_EXTERN int docket_pseudonymize_event(const docket_pseudonymizer *p, json_t *event) DOCKET_MUST_USE;

#endif
