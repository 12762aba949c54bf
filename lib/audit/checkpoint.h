/* SPDX-License-Identifier: Apache-2.0 */
/*
 * checkpoint.h: signed checkpoints (audit/checkpoint.c), the internals the
 * tests and the fuzz target use. The public API is in docket/audit.h; the
 * model is described in docs/audit.md.
 *
 * A checkpoint is the statement
 *
 *   docket-checkpoint-v1\n
 *   ledger <ledger id>\n
 *   index <n>\n
 *   seq <s>\n
 *   head <h[s], hex>\n
 *   prev <digest of checkpoint n-1, hex; 64 zeros for n = 1>\n
 *   time <RFC 3339>\n
 *   key <key id, hex>\n
 *
 * signed with Ed25519; its digest is SHA-256(statement || signature), which
 * the next checkpoint names as `prev`. Stored in the `checkpoints` table under
 * be64(n) as one compact JSON object (checkpoint_to_json).
 *
 * Version 2 (docket with the Merkle tree, docs/audit.md) starts the statement
 * with "docket-checkpoint-v2", ends it with "root <tree root at size s, hex>\n",
 * and stores beside it the C2SP signed note of the same tree head
 * ("docket.dev/ledger/<id>\n<s>\n<base64 root>\n", signed by the same key
 * under the origin as key name). Version-1 records keep verifying as they
 * always did; they simply prove nothing about the tree.
 */
#ifndef DOCKET_LEDGER_CHECKPOINT_H
#define DOCKET_LEDGER_CHECKPOINT_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <openssl/evp.h>

#include "docket/audit.h"
#include "docket/tlog.h"
#include "util/buf.h"
#include "audit/note.h"

#define CHECKPOINT_HASH_LEN 32
#define CHECKPOINT_SIG_LEN 64

/* Room for a stored note: a checkpoint body and one signature line. */
#define CHECKPOINT_NOTE_MAX 1024

typedef struct checkpoint_record {
	int version;              /* 1: chain head only; 2: also the tree root and its note */
	uint64_t index;
	uint64_t seq;
	char ledger_id[33];
	char time[40];
	uint8_t head[CHECKPOINT_HASH_LEN];
	uint8_t prev[CHECKPOINT_HASH_LEN];
	uint8_t key_id[CHECKPOINT_HASH_LEN];
	uint8_t sig[CHECKPOINT_SIG_LEN];
	uint8_t root[CHECKPOINT_HASH_LEN];  /* version 2: the tree of `seq` events */
	char note[CHECKPOINT_NOTE_MAX];     /* version 2: its signed note ("" in version 1) */
} checkpoint_record;

/* The statement that is signed (appended to `out`). */
int checkpoint_statement(docket_buf *out, const checkpoint_record *c) DOCKET_MUST_USE;

/* SHA-256(statement || signature). */
int checkpoint_digest(uint8_t out[CHECKPOINT_HASH_LEN], const checkpoint_record *c) DOCKET_MUST_USE;

/* The stored JSON object; the digest is included for readers' convenience
 * (and checked on parse). */
int checkpoint_to_json(json_t **out, const checkpoint_record *c) DOCKET_MUST_USE;

/* Strict parse of a stored record or witness file (outside input):
 * DOCKET_EINVALID naming the field on any defect. */
int checkpoint_parse(checkpoint_record *out, const char *text, size_t len) DOCKET_MUST_USE;

/* Read a whole file of at most `max` bytes into `out` (replacing its
 * contents). DOCKET_ENOTFOUND when missing, DOCKET_EINVALID when too big. */
int audit_read_file(docket_buf *out, const char *path, size_t max) DOCKET_MUST_USE;

/* Ed25519 public key from a PEM file (SPKI), its id (SHA-256 of the raw
 * key), and whether a record's signature verifies under it (1, 0, <0). */
int checkpoint_load_pubkey(EVP_PKEY **out, const char *path) DOCKET_MUST_USE;
/* The same for a private key (PKCS#8; refused when others can read it). */
int checkpoint_load_private(EVP_PKEY **out, const char *path) DOCKET_MUST_USE;
int checkpoint_key_id(uint8_t out[CHECKPOINT_HASH_LEN], EVP_PKEY *key) DOCKET_MUST_USE;
int checkpoint_signature_ok(const checkpoint_record *c, EVP_PKEY *key) DOCKET_MUST_USE;

/* The tlog-checkpoint body of `n` (parsed into *out) signed by `key` under
 * its origin as key name: DOCKET_EINVALID (malformed) or DOCKET_ECORRUPT
 * (no good signature by that key), with the reason. */
int checkpoint_note_check(docket_note_checkpoint *out, const note_msg *n, EVP_PKEY *key) DOCKET_MUST_USE;

/* Every stored checkpoint in index order (one read of the table); a
 * callback's non-zero return stops (a positive one is not an error). */
typedef int (*checkpoint_record_cb)(void *ctx, const checkpoint_record *c);
int checkpoint_each(docket_ledger *ledger, checkpoint_record_cb cb, void *ctx) DOCKET_MUST_USE;

/* The public form (hex strings). */
void checkpoint_public(docket_checkpoint *out, const checkpoint_record *c);

#endif
