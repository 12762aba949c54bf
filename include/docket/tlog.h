/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tlog.h: the ledger as a transparency log (docs/audit.md, issue 13).
 *
 * Every event is a leaf of an RFC 6962 Merkle tree, in seq order: event
 * `seq` is leaf index seq - 1; the tree of size N covers events 1..N.
 *   leaf hash  SHA-256(0x00 || stored event bytes)   (the protobuf payload,
 *                                                      the bytes the chain hashes)
 *   node hash  SHA-256(0x01 || left || right)
 * The tree is maintained at append inside the write transaction
 * (ledger/merkle.c); `docket verify` recomputes it.
 *
 * Checkpoints are C2SP tlog-checkpoint bodies in signed-note envelopes:
 *   <origin>\n<size>\n<base64 root>\n
 * with origin "docket.dev/ledger/<ledger id>" (docket_tlog_origin).
 *
 * Owners: the tree, proofs and receipts: ledger/merkle.c, cli/cmd_prove.c;
 * notes, checkpoints, consistency and witnesses: audit/note.c,
 * audit/checkpoint.c, cli/cmd_checkpoint.c, cli/cmd_witness.c.
 */
#ifndef DOCKET_TLOG_H
#define DOCKET_TLOG_H

#include <stddef.h>
#include <stdint.h>

#include "docket/common.h"
#include "docket/ledger.h"

#define DOCKET_TLOG_HASH_LEN 32
/* A proof in a tree of at most 2^64 leaves has at most 2 * 64 hashes. */
#define DOCKET_TLOG_MAX_PROOF 128

typedef struct docket_tlog_head {
	uint64_t size;                        /* leaves (events) in the tree */
	uint8_t root[DOCKET_TLOG_HASH_LEN];   /* RFC 6962 MTH; SHA-256("") for size 0 */
} docket_tlog_head;

/* An inclusion or consistency proof, hashes in RFC 6962 / 9162 order. */
typedef struct docket_tlog_proof {
	uint64_t index;                       /* inclusion: leaf index; consistency: old size */
	uint64_t size;                        /* the tree size the proof is against */
	size_t len;
	uint8_t hash[DOCKET_TLOG_MAX_PROOF][DOCKET_TLOG_HASH_LEN];
	uint32_t segments_read;               /* how many stored segments computing it read */
} docket_tlog_proof;

/* ---- pure functions (no ledger): hashing and proof verification ----- */

DOCKET_EXTERN void docket_tlog_leaf_hash(uint8_t out[DOCKET_TLOG_HASH_LEN], const void *event, size_t len);
DOCKET_EXTERN void docket_tlog_node_hash(uint8_t out[DOCKET_TLOG_HASH_LEN], const uint8_t left[DOCKET_TLOG_HASH_LEN],
					 const uint8_t right[DOCKET_TLOG_HASH_LEN]);

/* 0 when `proof` (an inclusion proof of leaf proof->index in a tree of
 * proof->size) takes `leaf` to `root`; DOCKET_ECORRUPT when it does not,
 * DOCKET_EINVALID when the shape is impossible (index >= size, wrong length). */
DOCKET_EXTERN int docket_tlog_verify_inclusion(const docket_tlog_proof *proof, const uint8_t leaf[DOCKET_TLOG_HASH_LEN],
					       const uint8_t root[DOCKET_TLOG_HASH_LEN]) DOCKET_MUST_USE;

/* 0 when `proof` (proof->index = old size m, proof->size = new size n,
 * 0 < m <= n) shows the tree with `old_root` is a prefix of the one with
 * `new_root`; DOCKET_ECORRUPT / DOCKET_EINVALID as above. */
DOCKET_EXTERN int docket_tlog_verify_consistency(const docket_tlog_proof *proof,
						 const uint8_t old_root[DOCKET_TLOG_HASH_LEN],
						 const uint8_t new_root[DOCKET_TLOG_HASH_LEN]) DOCKET_MUST_USE;

/* ---- over a ledger ---------------------------------------------------- */

/* The tree over every event appended so far (O(log n) stored reads). */
DOCKET_EXTERN int docket_tlog_head_get(docket_tlog_head *out, docket_ledger *ledger) DOCKET_MUST_USE;

/* The root of the tree of the first `size` events (size <= events). */
DOCKET_EXTERN int docket_tlog_root_at(uint8_t root[DOCKET_TLOG_HASH_LEN], docket_ledger *ledger,
				      uint64_t size) DOCKET_MUST_USE;

/* The inclusion proof of event `seq` (1-based) in the tree of `size` events. */
DOCKET_EXTERN int docket_tlog_inclusion(docket_tlog_proof *out, docket_ledger *ledger, uint64_t seq,
					uint64_t size) DOCKET_MUST_USE;

/* The consistency proof from the tree of `old_size` events to `new_size`. */
DOCKET_EXTERN int docket_tlog_consistency(docket_tlog_proof *out, docket_ledger *ledger, uint64_t old_size,
					  uint64_t new_size) DOCKET_MUST_USE;

/* "docket.dev/ledger/<ledger id>": the checkpoint origin line of a ledger. */
DOCKET_EXTERN int docket_tlog_origin(char out[64], docket_ledger *ledger) DOCKET_MUST_USE;

/* ---- signed notes (C2SP signed-note, tlog-checkpoint, tlog-cosignature) */

typedef struct docket_note_checkpoint {
	char origin[256];
	uint64_t size;
	uint8_t root[DOCKET_TLOG_HASH_LEN];
} docket_note_checkpoint;

/*
 * The signed note of stored checkpoint `index` (0: the last one): the
 * tlog-checkpoint body and the log's Ed25519 signature line (and any
 * cosignatures stored with it). *out is NUL-terminated, freed with
 * docket_free. DOCKET_ENOTFOUND when there is no such checkpoint.
 */
DOCKET_EXTERN int docket_checkpoint_note(char **out, size_t *len, docket_ledger *ledger,
					 uint64_t index) DOCKET_MUST_USE;

/*
 * Parse `note` (untrusted: bounded, strict) and check its signature by the
 * Ed25519 public key in `pubkey_path` (PEM, as `docket keygen` writes).
 * 0 and *out filled when the body is a well-formed tlog-checkpoint signed by
 * that key; DOCKET_ECORRUPT (bad or missing signature) or DOCKET_EINVALID
 * (malformed) otherwise, with the reason in `problem`.
 */
DOCKET_EXTERN int docket_note_verify(docket_note_checkpoint *out, const char *note, size_t len,
				     const char *pubkey_path, char *problem, size_t problem_len) DOCKET_MUST_USE;

/* ---- consistency proofs and witnesses (audit/checkpoint.c, audit/witness.c) */

/*
 * The RFC 6962 consistency proof from the tree of `old_note` (a checkpoint
 * note of this ledger; its signature is not checked, its root must be this
 * ledger's tree at its size) to the newest stored checkpoint, as a C2SP
 * tlog-witness add-checkpoint request body: "old <size>\n", one base64 hash
 * a line, a blank line, the newest signed note. *out is freed with
 * docket_free. DOCKET_ECONFLICT when the old note is not a prefix of this
 * ledger (another root at its size: a fork, or another ledger) or is newer
 * than the newest checkpoint; DOCKET_ENOTFOUND without a signed-note
 * checkpoint; DOCKET_EINVALID for a malformed note.
 */
DOCKET_EXTERN int docket_checkpoint_consistency(char **out, size_t *len, docket_ledger *ledger,
						const char *old_note, size_t old_len) DOCKET_MUST_USE;

typedef struct docket_witness_options {
	unsigned int version;
	const char *state_dir;   /* the last checkpoint seen per origin (0700; files 0600) */
	const char *log_pubkey;  /* the log's Ed25519 public key (PEM) */
	const char *key;         /* the witness's private key; NULL: check and record only */
	const char *name;        /* its key name; NULL: "docket-witness/<16 hex of its key id>" */
	const char *proof;       /* an add-checkpoint body (may be NULL) */
	size_t proof_len;
	uint64_t time;           /* the cosignature's time (POSIX seconds); 0: now */
} docket_witness_options;

#define DOCKET_WITNESS_OPTIONS_VERSION 1
#define DOCKET_WITNESS_OPTIONS_INIT { DOCKET_WITNESS_OPTIONS_VERSION, NULL, NULL, NULL, NULL, NULL, 0, 0 }

typedef struct docket_witness_result {
	int accepted;                       /* consistent with what the witness saw: recorded */
	int first_seen;                     /* no earlier checkpoint of the origin (trust on first use) */
	uint64_t old_size;                  /* the size the witness had seen */
	docket_note_checkpoint checkpoint;  /* the new checkpoint (when it parsed) */
	char name[256];                     /* the witness's key name (with a key) */
	char problem[1024];                 /* why it was refused (!accepted) */
} docket_witness_result;

/*
 * Witness the signed checkpoint `note` (or a whole add-checkpoint body):
 * verify its signature by the log's key, check it extends the checkpoint
 * stored for its origin (consistency proof from opts->proof or the body),
 * store it, and with opts->key co-sign it (C2SP tlog-cosignature/v1).
 * Returns 0 when the check ran: res->accepted says whether the checkpoint was
 * accepted; then *out is the note with the cosignature line appended (freed
 * with docket_free). A rollback, a fork, a bad proof or a bad signature is
 * res->accepted == 0 with the reason in res->problem, and nothing is stored
 * or signed. <0 when the witness could not run (key files, state directory,
 * a state file it cannot parse: DOCKET_ECORRUPT).
 */
DOCKET_EXTERN int docket_witness_add(char **out, size_t *len, docket_witness_result *res, const char *note,
				     size_t note_len, const docket_witness_options *opts) DOCKET_MUST_USE;

typedef struct docket_witness_report {
	int ok;                   /* every note matches the ledger and enough witnesses co-signed */
	size_t notes;             /* witness notes that matched */
	size_t cosigners;         /* distinct given witness keys with a good cosignature on one */
	size_t required;
	uint64_t largest_size;    /* the largest witnessed size: events 1..it are witnessed */
	char problem[1024];
} docket_witness_report;

/*
 * Check witnessed checkpoint notes against a ledger: each is signed by the
 * log key in `pubkey_path`, names this ledger's origin, is no larger than the
 * ledger and has the root of the ledger's tree at its size. `required` of
 * the `witness_keys` (PEM public keys) must have co-signed one of them
 * (cosignatures by other keys are ignored). 0 when the check ran (rep->ok).
 */
DOCKET_EXTERN int docket_ledger_verify_notes(docket_ledger *ledger, const char *pubkey_path,
					     const char *const *notes, size_t nnotes,
					     const char *const *witness_keys, size_t nkeys, size_t required,
					     docket_witness_report *rep) DOCKET_MUST_USE;

#endif
