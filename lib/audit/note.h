/* SPDX-License-Identifier: Apache-2.0 */
/*
 * note.h: C2SP signed notes, tlog-checkpoint bodies and tlog-cosignature/v1
 * (audit/note.c). Pure functions over bytes and OpenSSL keys; the ledger
 * side (which key, which checkpoint) is audit/checkpoint.c.
 *
 *   signed note   text ending "\n", a blank line, then one or more lines
 *                 "— <key name> <base64(be32 key ID || signature)>\n"
 *   key ID        SHA-256(key name || 0x0A || type || public key)[:4]
 *                 type 0x01: Ed25519 over the text (the log's signature)
 *                 type 0x04: tlog-cosignature/v1: the signature is
 *                 be64(time) || Ed25519 over
 *                 "cosignature/v1\ntime <time>\n" || text
 *   checkpoint    "<origin>\n<size>\n<base64 root>\n" [extension lines]
 *
 * Everything parsed here is untrusted input: bounded (NOTE_MAX_LEN bytes,
 * NOTE_MAX_LINE per line, NOTE_MAX_SIGS signature lines) and strict (UTF-8,
 * no control character but "\n", canonical base64, no leading zeros).
 */
#ifndef DOCKET_UTIL_NOTE_H
#define DOCKET_UTIL_NOTE_H

#include <stddef.h>
#include <stdint.h>

#include <openssl/evp.h>

#include "docket/tlog.h"
#include "util/buf.h"

#define NOTE_MAX_LEN ((size_t)256 << 10)
#define NOTE_MAX_LINE ((size_t)8 << 10)
/* The spec asks for at least 16; Go's golang.org/x/mod/sumdb/note stops at 100. */
#define NOTE_MAX_SIGS 100

#define NOTE_TYPE_ED25519 0x01
#define NOTE_TYPE_COSIG_V1 0x04

/* One signature line, borrowed from the note. */
typedef struct note_sig {
	docket_slice name;
	docket_slice b64;     /* base64(key ID || signature) */
	uint32_t key_id;
} note_sig;

typedef struct note_msg {
	docket_slice text;    /* the signed text, its final newline included */
	size_t nsigs;
	note_sig sig[NOTE_MAX_SIGS];
} note_msg;

/* Strict parse of a signed note (syntax only: no signature is checked).
 * DOCKET_EINVALID with the reason. `out` borrows from `msg`. */
int note_parse(note_msg *out, const char *msg, size_t len) DOCKET_MUST_USE;

/* Strict parse of a tlog-checkpoint body (extension lines allowed, ignored);
 * *extensions (may be NULL) receives how many there were. */
int note_checkpoint_parse(docket_note_checkpoint *out, size_t *extensions, const char *text,
			  size_t len) DOCKET_MUST_USE;

/* Append the body "<origin>\n<size>\n<base64 root>\n" to `out`. */
int note_checkpoint_body(docket_buf *out, const docket_note_checkpoint *c) DOCKET_MUST_USE;

/* A key name as signed-note allows it: non-empty, UTF-8, no Unicode space,
 * no '+', no control character. */
int note_name_valid(const char *name, size_t len);

/* SHA-256(name || 0x0A || type || raw Ed25519 public key of `key`)[:4]. */
int note_key_id(uint32_t *out, const char *name, uint8_t type, EVP_PKEY *key) DOCKET_MUST_USE;

/* Append "— <name> <base64>\n": the Ed25519 signature of `text` (type 0x01),
 * or with `cosign` the tlog-cosignature/v1 of `text` at `time` (type 0x04). */
int note_sign(docket_buf *out, const char *name, EVP_PKEY *key, const char *text, size_t len)
	DOCKET_MUST_USE;
int note_cosign(docket_buf *out, const char *name, EVP_PKEY *key, uint64_t time, const char *text,
		size_t len) DOCKET_MUST_USE;

/*
 * Check the signatures of `n` by `key` under `name` (NULL for the cosignature
 * form: any line whose key ID matches its own name and `key`): 0 when at
 * least one verifies and none of that key fails; DOCKET_ENOTFOUND when no line
 * is by that key; DOCKET_ECORRUPT when one by that key does not verify.
 * `note_verify_cosig` puts the newest verified timestamp in *time (may be NULL).
 */
int note_verify_sig(const note_msg *n, const char *name, EVP_PKEY *key) DOCKET_MUST_USE;
int note_verify_cosig(const note_msg *n, const char *name, EVP_PKEY *key, uint64_t *time) DOCKET_MUST_USE;

/*
 * A consistency proof file: the body of a C2SP tlog-witness add-checkpoint
 * request, "old <size>\n", one base64 hash per line (at most
 * NOTE_MAX_PROOF), a blank line, then the new checkpoint's signed note.
 */
#define NOTE_MAX_PROOF 63

typedef struct note_proof {
	uint64_t old_size;
	size_t len;
	uint8_t hash[NOTE_MAX_PROOF][DOCKET_TLOG_HASH_LEN];
	docket_slice checkpoint;   /* the signed note, borrowed */
} note_proof;

int note_proof_parse(note_proof *out, const char *msg, size_t len) DOCKET_MUST_USE;
int note_proof_put(docket_buf *out, uint64_t old_size, const uint8_t (*hash)[DOCKET_TLOG_HASH_LEN],
		   size_t n, const char *signed_note, size_t note_len) DOCKET_MUST_USE;

/* Read the file at `path` ("-": stdin) into `out`, at most NOTE_MAX_LEN
 * bytes: DOCKET_EINVALID when larger, DOCKET_ENOTFOUND when missing. */
int note_read_file(docket_buf *out, const char *path) DOCKET_MUST_USE;

/* Standard base64 (RFC 4648 §4), canonical only: *out_len bytes into `out`,
 * which has room for `cap` (exactly the decoded length is written; longer
 * input is refused). DOCKET_EINVALID on anything else. */
int note_b64_decode(uint8_t *out, size_t cap, size_t *out_len, const char *in, size_t len) DOCKET_MUST_USE;
int note_b64_put(docket_buf *out, const uint8_t *data, size_t len) DOCKET_MUST_USE;

#endif
