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
 * notes, checkpoints, consistency and witnesses: util/note.c,
 * ledger/checkpoint.c, cli/cmd_checkpoint.c, cli/cmd_witness.c.
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

#endif
