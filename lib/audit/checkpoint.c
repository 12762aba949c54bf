/* SPDX-License-Identifier: Apache-2.0 */
/*
 * checkpoint.c: Ed25519 keys, signed checkpoints and their verification.
 *
 * The model (docs/audit.md): the hash chain proves that the events agree
 * with the head, but anyone who can write the file can recompute a chain.
 * A checkpoint adds a signature: "ledger L had head h[s] at seq s", chained
 * to the previous checkpoint by its digest. With the public key alone, a
 * copied ledger proves
 *   - every event up to the last checkpoint is unmodified (its head matches
 *     the recomputed chain at that seq);
 *   - no checkpoint was dropped (indexes without gaps, each names the
 *     previous one's digest) or re-signed with another key (every signature
 *     verifies under the given key);
 *   - nothing covered was truncated (no checkpoint names a seq past the end).
 * What a copy alone cannot prove: that the *last* checkpoints (and the
 * events after them) were not cut off together. That needs a witness kept
 * elsewhere: a checkpoint record saved to a file or the git archive.
 *
 * Checkpoints live in the `checkpoints` table (primary data, never touched
 * by reindex) under be64(index), as compact JSON (checkpoint_to_json).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>

#include "checkpoint.h"
#include "ledger/ledger_sys.h"
#include "util/alloc.h"
#include "util/error.h"
#include "util/json.h"
#include "audit/note.h"

#define KEY_FILE_MAX ((size_t)64 << 10)
#define RECORD_MAX ((size_t)16 << 10)

static const uint8_t zero_hash[CHECKPOINT_HASH_LEN];

/* ---- files ------------------------------------------------------------- */

int audit_read_file(docket_buf *out, const char *path, size_t max)
{
	FILE *f;
	int error = 0;

	docket_buf_clear(out);
	if (!(f = fopen(path, "rb")))
		return docket_error_set(errno == ENOENT ? DOCKET_ENOTFOUND : DOCKET_ESTORAGE,
					"%s: %s", path, strerror(errno));
	for (;;) {
		size_t got;

		if ((error = docket_buf_reserve(out, 4096)) < 0)
			break;
		got = fread(out->ptr + out->len, 1, out->cap - out->len - 1, f);
		out->len += got;
		out->ptr[out->len] = '\0';
		if (out->len > max) {
			error = docket_error_set(DOCKET_EINVALID, "%s: larger than %zu bytes", path, max);
			break;
		}
		if (got == 0) {
			if (ferror(f))
				error = docket_error_set(DOCKET_ESTORAGE, "%s: cannot read", path);
			break;
		}
	}
	fclose(f);
	return error;
}

static int create_file(FILE **out, const char *path, mode_t mode, int force)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | (force ? O_TRUNC : O_EXCL), mode);

	*out = NULL;
	if (fd < 0)
		return docket_error_set(errno == EEXIST ? DOCKET_EEXISTS : DOCKET_ESTORAGE,
					"%s: %s", path, strerror(errno));
	if (fchmod(fd, mode) != 0 || !(*out = fdopen(fd, "w"))) {
		int e = errno;

		close(fd);
		return docket_error_set(DOCKET_ESTORAGE, "%s: %s", path, strerror(e));
	}
	return 0;
}

static int close_file(FILE *f, const char *path, int ok)
{
	int bad = !ok || fflush(f) != 0 || ferror(f) || fsync(fileno(f)) != 0;

	if (fclose(f) != 0)
		bad = 1;
	return bad ? docket_error_set(DOCKET_ESTORAGE, "cannot write %s", path) : 0;
}

/* ---- keys -------------------------------------------------------------- */

static int sha256(uint8_t out[CHECKPOINT_HASH_LEN], const void *a, size_t alen,
		  const void *b, size_t blen)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	int ok = ctx && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) == 1 &&
		 EVP_DigestUpdate(ctx, a, alen) == 1 &&
		 (blen == 0 || EVP_DigestUpdate(ctx, b, blen) == 1) &&
		 EVP_DigestFinal_ex(ctx, out, NULL) == 1;

	EVP_MD_CTX_free(ctx);
	return ok ? 0 : docket_error_set(DOCKET_ERROR, "SHA-256 failed");
}

/* Refuse to prompt for a pass phrase: encrypted keys are not supported. */
static int no_passphrase(char *buf, int size, int rwflag, void *u)
{
	(void)buf;
	(void)size;
	(void)rwflag;
	(void)u;
	return 0;
}

static int check_private_mode(const char *path)
{
	struct stat st;

	if (stat(path, &st) != 0)
		return docket_error_set(errno == ENOENT ? DOCKET_ENOTFOUND : DOCKET_ESTORAGE,
					"%s: %s", path, strerror(errno));
	if (st.st_mode & 077)
		return docket_error_set(DOCKET_EINVALID,
			"private key %s is accessible by others (mode %03o); chmod 600 it",
			path, (unsigned)(st.st_mode & 0777));
	return 0;
}

/* Load an Ed25519 key from a PEM file: private (PKCS#8) or public (SPKI). */
static int load_key(EVP_PKEY **out, const char *path, int private_key)
{
	docket_buf text = DOCKET_BUF_INIT;
	BIO *bio = NULL;
	EVP_PKEY *key = NULL;
	int error;

	*out = NULL;
	if (private_key && (error = check_private_mode(path)) < 0)
		return error;
	if ((error = audit_read_file(&text, path, KEY_FILE_MAX)) < 0)
		goto cleanup;
	if (!(bio = BIO_new_mem_buf(text.ptr ? text.ptr : "", (int)text.len))) {
		error = docket_error_set_oom();
		goto cleanup;
	}
	key = private_key ? PEM_read_bio_PrivateKey(bio, NULL, no_passphrase, NULL)
			  : PEM_read_bio_PUBKEY(bio, NULL, no_passphrase, NULL);
	ERR_clear_error();
	if (!key) {
		error = docket_error_set(DOCKET_EINVALID, "%s: not a PEM %s key", path,
					 private_key ? "private" : "public");
		goto cleanup;
	}
	if (EVP_PKEY_get_id(key) != EVP_PKEY_ED25519) {
		error = docket_error_set(DOCKET_EINVALID, "%s: not an Ed25519 key", path);
		goto cleanup;
	}
	*out = key;
	key = NULL;
cleanup:
	EVP_PKEY_free(key);
	BIO_free(bio);
	docket_buf_dispose(&text);
	return error;
}

static int key_id(uint8_t out[CHECKPOINT_HASH_LEN], EVP_PKEY *key)
{
	uint8_t raw[32];
	size_t len = sizeof(raw);

	if (EVP_PKEY_get_raw_public_key(key, raw, &len) != 1 || len != sizeof(raw)) {
		ERR_clear_error();
		return docket_error_set(DOCKET_EINVALID, "cannot read the raw public key");
	}
	return sha256(out, raw, len, NULL, 0);
}

int checkpoint_load_pubkey(EVP_PKEY **out, const char *path)
{
	return load_key(out, path, 0);
}

int checkpoint_load_private(EVP_PKEY **out, const char *path)
{
	return load_key(out, path, 1);
}

int checkpoint_key_id(uint8_t out[CHECKPOINT_HASH_LEN], EVP_PKEY *key)
{
	return key_id(out, key);
}

static int write_pem(const char *path, EVP_PKEY *key, int private_key, int force)
{
	FILE *f = NULL;
	int error, ok;

	if ((error = create_file(&f, path, private_key ? 0600 : 0644, force)) < 0)
		return error;
	ok = private_key ? PEM_write_PrivateKey(f, key, NULL, NULL, 0, NULL, NULL)
			 : PEM_write_PUBKEY(f, key);
	ERR_clear_error();
	return close_file(f, path, ok == 1);
}

static int refuse_existing(const char *path)
{
	struct stat st;

	if (lstat(path, &st) == 0)
		return docket_error_set(DOCKET_EEXISTS, "%s exists (use --force to replace it)", path);
	return 0;
}

int docket_keygen(const char *path, int force, char id_hex[65])
{
	docket_buf pub = DOCKET_BUF_INIT;
	EVP_PKEY *key = NULL;
	uint8_t id[CHECKPOINT_HASH_LEN];
	int error;

	if ((error = docket_buf_printf(&pub, "%s.pub", path)) < 0)
		return error;
	if (!force && ((error = refuse_existing(path)) < 0 || (error = refuse_existing(pub.ptr)) < 0))
		goto cleanup;
	if (!(key = EVP_PKEY_Q_keygen(NULL, NULL, "ED25519"))) {
		ERR_clear_error();
		error = docket_error_set(DOCKET_ERROR, "cannot generate an Ed25519 key");
		goto cleanup;
	}
	if ((error = key_id(id, key)) < 0 ||
	    (error = write_pem(path, key, 1, force)) < 0 ||
	    (error = write_pem(pub.ptr, key, 0, force)) < 0)
		goto cleanup;
	if (id_hex)
		docket_hex(id_hex, id, sizeof(id));
cleanup:
	EVP_PKEY_free(key);
	docket_buf_dispose(&pub);
	return error;
}

int docket_keygen_hmac(const char *path, int force)
{
	uint8_t key[32];
	char hex[65];
	FILE *f = NULL;
	int error;

	if (RAND_bytes(key, sizeof(key)) != 1)
		return docket_error_set(DOCKET_ERROR, "cannot draw random bytes");
	docket_hex(hex, key, sizeof(key));
	if ((error = create_file(&f, path, 0600, force)) < 0)
		return error;
	return close_file(f, path, fprintf(f, "%s\n", hex) == 65);
}

static int sign(uint8_t sig[CHECKPOINT_SIG_LEN], EVP_PKEY *key, const docket_buf *msg)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	size_t len = CHECKPOINT_SIG_LEN;
	int ok = ctx && EVP_DigestSignInit(ctx, NULL, NULL, NULL, key) == 1 &&
		 EVP_DigestSign(ctx, sig, &len, (const uint8_t *)msg->ptr, msg->len) == 1 &&
		 len == CHECKPOINT_SIG_LEN;

	EVP_MD_CTX_free(ctx);
	ERR_clear_error();
	return ok ? 0 : docket_error_set(DOCKET_ERROR, "Ed25519 signing failed");
}

/* 1: the signature verifies, 0: it does not, <0: error. */
int checkpoint_signature_ok(const checkpoint_record *c, EVP_PKEY *key)
{
	docket_buf msg = DOCKET_BUF_INIT;
	EVP_MD_CTX *ctx = NULL;
	int error, ok;

	if ((error = checkpoint_statement(&msg, c)) < 0)
		return error;
	ctx = EVP_MD_CTX_new();
	ok = ctx && EVP_DigestVerifyInit(ctx, NULL, NULL, NULL, key) == 1 &&
	     EVP_DigestVerify(ctx, c->sig, CHECKPOINT_SIG_LEN, (const uint8_t *)msg.ptr, msg.len) == 1;
	EVP_MD_CTX_free(ctx);
	ERR_clear_error();
	docket_buf_dispose(&msg);
	return ok;
}

/* ---- records ----------------------------------------------------------- */

int checkpoint_statement(docket_buf *out, const checkpoint_record *c)
{
	char head[65], prev[65], key[65];

	docket_hex(head, c->head, sizeof(c->head));
	docket_hex(prev, c->prev, sizeof(c->prev));
	docket_hex(key, c->key_id, sizeof(c->key_id));
	char root[65];
	int error;

	if ((error = docket_buf_printf(out,
		"docket-checkpoint-v%d\nledger %s\nindex %llu\nseq %llu\nhead %s\nprev %s\n"
		"time %s\nkey %s\n",
		c->version == 2 ? 2 : 1, c->ledger_id, (unsigned long long)c->index,
		(unsigned long long)c->seq, head, prev, c->time, key)) < 0 || c->version != 2)
		return error;
	docket_hex(root, c->root, sizeof(c->root));
	return docket_buf_printf(out, "root %s\n", root);
}

int checkpoint_digest(uint8_t out[CHECKPOINT_HASH_LEN], const checkpoint_record *c)
{
	docket_buf msg = DOCKET_BUF_INIT;
	int error;

	if ((error = checkpoint_statement(&msg, c)) == 0)
		error = sha256(out, msg.ptr, msg.len, c->sig, sizeof(c->sig));
	docket_buf_dispose(&msg);
	return error;
}

int checkpoint_to_json(json_t **out, const checkpoint_record *c)
{
	char head[65], prev[65], key[65], sig[129], digest_hex[65];
	uint8_t digest[CHECKPOINT_HASH_LEN];
	int error;

	*out = NULL;
	if ((error = checkpoint_digest(digest, c)) < 0)
		return error;
	docket_hex(head, c->head, sizeof(c->head));
	docket_hex(prev, c->prev, sizeof(c->prev));
	docket_hex(key, c->key_id, sizeof(c->key_id));
	docket_hex(sig, c->sig, sizeof(c->sig));
	docket_hex(digest_hex, digest, sizeof(digest));
	*out = json_pack("{s:i, s:s, s:I, s:I, s:s, s:s, s:s, s:s, s:s, s:s}",
			 "checkpoint", c->version == 2 ? 2 : 1, "ledger", c->ledger_id,
			 "index", (json_int_t)c->index, "seq", (json_int_t)c->seq,
			 "head", head, "prev", prev, "time", c->time, "key", key,
			 "signature", sig, "digest", digest_hex);
	if (*out && c->version == 2) {
		char root[65];

		docket_hex(root, c->root, sizeof(c->root));
		if (json_object_set_new(*out, "root", json_string(root)) < 0 ||
		    json_object_set_new(*out, "note", json_string(c->note)) < 0) {
			json_decref(*out);
			*out = NULL;
		}
	}
	return *out ? 0 : docket_error_set_oom();
}

static int get_hex(uint8_t *out, size_t len, const json_t *obj, const char *name)
{
	const char *s = json_string_value(json_object_get(obj, name));

	if (!s || strlen(s) != 2 * len || docket_unhex(out, len, s) < 0)
		return docket_error_set(DOCKET_EINVALID, "checkpoint: '%s' must be %zu hex digits",
					name, 2 * len);
	return 0;
}

static int get_count(uint64_t *out, const json_t *obj, const char *name)
{
	const json_t *v = json_object_get(obj, name);

	if (!json_is_integer(v) || json_integer_value(v) < 1)
		return docket_error_set(DOCKET_EINVALID, "checkpoint: '%s' must be a positive integer",
					name);
	*out = (uint64_t)json_integer_value(v);
	return 0;
}

static int get_text(char *out, size_t size, const json_t *obj, const char *name)
{
	const char *s = json_string_value(json_object_get(obj, name));

	if (!s || strlen(s) >= size)
		return docket_error_set(DOCKET_EINVALID, "checkpoint: '%s' is missing or too long", name);
	memcpy(out, s, strlen(s) + 1);
	return 0;
}

static int check_record_keys(const json_t *obj)
{
	/* the last two only in version 2 */
	static const char *const keys[] = { "checkpoint", "ledger", "index", "seq", "head", "prev",
					    "time", "key", "signature", "digest", "root", "note" };
	const json_t *ver = json_object_get(obj, "checkpoint");
	size_t nkeys = sizeof(keys) / sizeof(keys[0]);
	const char *key;
	json_t *v;

	if (!json_is_object(obj))
		return docket_error_set(DOCKET_EINVALID, "checkpoint: not a JSON object");
	if (!json_is_integer(ver) || json_integer_value(ver) < 1 || json_integer_value(ver) > 2)
		return docket_error_set(DOCKET_EINVALID, "checkpoint: unsupported version");
	if (json_integer_value(ver) == 1)
		nkeys -= 2;
	json_object_foreach((json_t *)obj, key, v) {
		size_t i = 0;

		while (i < nkeys && strcmp(keys[i], key) != 0)
			i++;
		if (i == nkeys)
			return docket_error_set(DOCKET_EINVALID, "checkpoint: unknown field '%s'", key);
	}
	return (int)json_integer_value(ver);
}

/* A version-2 record's note: a well-formed signed checkpoint of the record's
 * tree head (its signature is checked by verify, which has the key). */
static int check_record_note(const checkpoint_record *c)
{
	docket_note_checkpoint body;
	note_msg *n = docket_malloc(sizeof(*n));
	int error;

	if (!n)
		return docket_error_set_oom();
	if ((error = note_parse(n, c->note, strlen(c->note))) == 0 &&
	    (error = note_checkpoint_parse(&body, NULL, (const char *)n->text.ptr, n->text.len)) == 0 &&
	    (body.size != c->seq || memcmp(body.root, c->root, sizeof(body.root)) != 0))
		error = docket_error_set(DOCKET_EINVALID, "its note is of another tree head (size %llu)",
					 (unsigned long long)body.size);
	docket_free(n);
	if (error < 0)
		docket_error_prefix("checkpoint %llu: note: ", (unsigned long long)c->index);
	return error;
}

static int record_from_json(checkpoint_record *c, const json_t *obj)
{
	uint8_t digest[CHECKPOINT_HASH_LEN], want[CHECKPOINT_HASH_LEN];
	int error;

	memset(c, 0, sizeof(*c));
	if ((error = check_record_keys(obj)) < 0)
		return error;
	c->version = error;
	if (c->version == 2 &&
	    ((error = get_hex(c->root, sizeof(c->root), obj, "root")) < 0 ||
	     (error = get_text(c->note, sizeof(c->note), obj, "note")) < 0))
		return error;
	if ((error = get_text(c->ledger_id, sizeof(c->ledger_id), obj, "ledger")) < 0 ||
	    (error = get_count(&c->index, obj, "index")) < 0 ||
	    (error = get_count(&c->seq, obj, "seq")) < 0 ||
	    (error = get_hex(c->head, sizeof(c->head), obj, "head")) < 0 ||
	    (error = get_hex(c->prev, sizeof(c->prev), obj, "prev")) < 0 ||
	    (error = get_text(c->time, sizeof(c->time), obj, "time")) < 0 ||
	    (error = get_hex(c->key_id, sizeof(c->key_id), obj, "key")) < 0 ||
	    (error = get_hex(c->sig, sizeof(c->sig), obj, "signature")) < 0 ||
	    (error = get_hex(want, sizeof(want), obj, "digest")) < 0)
		return error;
	if (strlen(c->ledger_id) != 32 || strspn(c->ledger_id, "0123456789abcdef") != 32)
		return docket_error_set(DOCKET_EINVALID, "checkpoint: 'ledger' must be 32 hex digits");
	if (!docket_time_valid(c->time))
		return docket_error_set(DOCKET_EINVALID, "checkpoint: 'time' is not an RFC 3339 time");
	if ((error = checkpoint_digest(digest, c)) < 0)
		return error;
	if (memcmp(digest, want, sizeof(digest)) != 0)
		return docket_error_set(DOCKET_EINVALID, "checkpoint %llu: digest does not match its content",
					(unsigned long long)c->index);
	return c->version == 2 ? check_record_note(c) : 0;
}

int checkpoint_parse(checkpoint_record *out, const char *text, size_t len)
{
	json_t *obj = NULL;
	int error;

	memset(out, 0, sizeof(*out));
	if ((error = docket_json_parse(&obj, text, len)) < 0) {
		docket_error_prefix("checkpoint: ");
		return error;
	}
	error = record_from_json(out, obj);
	json_decref(obj);
	return error;
}

void checkpoint_public(docket_checkpoint *out, const checkpoint_record *c)
{
	uint8_t digest[CHECKPOINT_HASH_LEN];

	memset(out, 0, sizeof(*out));
	out->index = c->index;
	out->seq = c->seq;
	memcpy(out->ledger_id, c->ledger_id, sizeof(out->ledger_id));
	memcpy(out->time, c->time, sizeof(out->time));
	docket_hex(out->head, c->head, sizeof(c->head));
	docket_hex(out->prev, c->prev, sizeof(c->prev));
	docket_hex(out->key_id, c->key_id, sizeof(c->key_id));
	if (checkpoint_digest(digest, c) == 0)
		docket_hex(out->digest, digest, sizeof(digest));
}

/* ---- storage ----------------------------------------------------------- */

static int record_from_mdb(checkpoint_record *c, const MDB_val *k, const MDB_val *v)
{
	int error;

	if (k->mv_size != 8)
		return docket_error_set(DOCKET_ECORRUPT, "checkpoints: bad key length %zu", k->mv_size);
	if (v->mv_size > RECORD_MAX)
		return docket_error_set(DOCKET_ECORRUPT, "checkpoints: record too large");
	if ((error = checkpoint_parse(c, v->mv_data, v->mv_size)) < 0)
		return error;
	if (c->index != docket_be64_get(k->mv_data))
		return docket_error_set(DOCKET_EINVALID, "checkpoint %llu is stored under index %llu",
					(unsigned long long)c->index,
					(unsigned long long)docket_be64_get(k->mv_data));
	return 0;
}

/* The last checkpoint in `txn`; *found 0 when there is none. */
static int last_record(checkpoint_record *out, int *found, docket_ledger *l, MDB_txn *txn)
{
	MDB_cursor *cur = NULL;
	MDB_val k, v;
	int rc, error = 0;

	*found = 0;
	if ((rc = mdb_cursor_open(txn, ledger_table_dbi(l, LEDGER_TABLE_CHECKPOINTS), &cur)) != 0)
		return store_error(rc, "read checkpoints");
	rc = mdb_cursor_get(cur, &k, &v, MDB_LAST);
	if (rc == 0 && (error = record_from_mdb(out, &k, &v)) == 0)
		*found = 1;
	else if (rc != 0 && rc != MDB_NOTFOUND)
		error = store_error(rc, "read checkpoints");
	mdb_cursor_close(cur);
	return error;
}

/* Every checkpoint, in index order, into a docket_malloc'd array. */
static int load_all(checkpoint_record **out, size_t *n, docket_ledger *l)
{
	checkpoint_record *all = NULL;
	size_t count = 0, cap = 0;
	MDB_txn *txn = NULL;
	MDB_cursor *cur = NULL;
	MDB_val k, v;
	int rc, error;

	*out = NULL;
	*n = 0;
	if ((error = store_txn_begin(&txn, l, MDB_RDONLY)) < 0)
		return error;
	if ((rc = mdb_cursor_open(txn, ledger_table_dbi(l, LEDGER_TABLE_CHECKPOINTS), &cur)) != 0) {
		error = store_error(rc, "read checkpoints");
		goto cleanup;
	}
	for (rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == 0;
	     rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
		if (count == cap) {
			size_t ncap = cap ? 2 * cap : 8;
			checkpoint_record *grown = docket_realloc(all, ncap * sizeof(*all));

			if (!grown) {
				error = docket_error_set_oom();
				goto cleanup;
			}
			all = grown;
			cap = ncap;
		}
		if ((error = record_from_mdb(&all[count], &k, &v)) < 0)
			goto cleanup;
		count++;
	}
	if (rc != MDB_NOTFOUND)
		error = store_error(rc, "read checkpoints");
cleanup:
	if (cur)
		mdb_cursor_close(cur);
	store_txn_abort(l, txn);
	if (error < 0) {
		docket_free(all);
		return error;
	}
	*out = all;
	*n = count;
	return 0;
}

static void now_rfc3339(char *out, size_t size)
{
	struct timespec ts;
	struct tm tm;
	char base[32];

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out, size, "%.19s.%03dZ", base, (int)(ts.tv_nsec / 1000000L) % 1000);
}

/* Fill `c` as the successor of `last` (when found) for the head in `txn`. */
static int next_record(checkpoint_record *c, docket_ledger *l, MDB_txn *txn,
		       const checkpoint_record *last, int found, const uint8_t kid[CHECKPOINT_HASH_LEN])
{
	MDB_val head;
	int error;

	memset(c, 0, sizeof(*c));
	if ((error = store_meta_get_u64(txn, l, "head_seq", &c->seq)) < 0)
		return error;
	if (c->seq == 0)
		return docket_error_set(DOCKET_EINVALID, "the ledger is empty: nothing to checkpoint");
	if ((error = store_meta_get(txn, l, "head_hash", &head)) < 0)
		return error;
	if (head.mv_size != CHECKPOINT_HASH_LEN)
		return docket_error_set(DOCKET_ECORRUPT, "meta head_hash: bad length %zu", head.mv_size);
	memcpy(c->head, head.mv_data, CHECKPOINT_HASH_LEN);
	snprintf(c->ledger_id, sizeof(c->ledger_id), "%s", ledger_id(l));
	memcpy(c->key_id, kid, CHECKPOINT_HASH_LEN);
	now_rfc3339(c->time, sizeof(c->time));
	c->index = found ? last->index + 1 : 1;
	if (found)
		return checkpoint_digest(c->prev, last);
	memcpy(c->prev, zero_hash, sizeof(zero_hash));
	return 0;
}

static int put_record(docket_ledger *l, MDB_txn *txn, const checkpoint_record *c)
{
	docket_buf text = DOCKET_BUF_INIT;
	json_t *obj = NULL;
	uint8_t key[8];
	MDB_val k = { sizeof(key), key }, v;
	int rc, error;

	if ((error = checkpoint_to_json(&obj, c)) < 0 || (error = docket_json_dump(&text, obj)) < 0)
		goto cleanup;
	docket_be64_put(key, c->index);
	v.mv_size = text.len;
	v.mv_data = text.ptr;
	if ((rc = mdb_put(txn, ledger_table_dbi(l, LEDGER_TABLE_CHECKPOINTS), &k, &v, MDB_NOOVERWRITE)) != 0)
		error = store_error(rc, "write checkpoint");
cleanup:
	json_decref(obj);
	docket_buf_dispose(&text);
	return error;
}

/* The signed note of `c`'s tree head into c->note. */
static int sign_note(checkpoint_record *c, docket_ledger *l, EVP_PKEY *key)
{
	docket_buf text = DOCKET_BUF_INIT;
	docket_note_checkpoint body;
	size_t body_len;
	int error;

	memset(&body, 0, sizeof(body));
	if ((error = docket_tlog_origin(body.origin, l)) < 0)
		return error;
	body.size = c->seq;
	memcpy(body.root, c->root, sizeof(body.root));
	if ((error = note_checkpoint_body(&text, &body)) < 0)
		goto cleanup;
	body_len = text.len;
	if ((error = docket_buf_putc(&text, '\n')) < 0 ||
	    (error = note_sign(&text, body.origin, key, text.ptr, body_len)) < 0)
		goto cleanup;
	if (text.len >= sizeof(c->note)) {
		error = docket_error_set(DOCKET_ERROR, "checkpoint note too long");
		goto cleanup;
	}
	memcpy(c->note, text.ptr, text.len + 1);
cleanup:
	docket_buf_dispose(&text);
	return error;
}

/* 1 (nothing written) when the ledger grew since `head` was read: try again. */
static int create_txn(docket_checkpoint *out, int *created, docket_ledger *l, EVP_PKEY *key,
		      const uint8_t kid[CHECKPOINT_HASH_LEN], const docket_tlog_head *tree)
{
	docket_buf msg = DOCKET_BUF_INIT;
	checkpoint_record last, c;
	MDB_txn *txn = NULL;
	int found = 0, error;

	*created = 0;
	if ((error = store_txn_begin(&txn, l, 0)) < 0)
		return error;
	if ((error = last_record(&last, &found, l, txn)) < 0)
		goto cleanup;
	if (found && memcmp(last.key_id, kid, CHECKPOINT_HASH_LEN) != 0) {
		char want[65];

		docket_hex(want, last.key_id, sizeof(last.key_id));
		error = docket_error_set(DOCKET_ECONFLICT,
			"this ledger's checkpoints are signed with key %.16s..., not with this key", want);
		goto cleanup;
	}
	if ((error = next_record(&c, l, txn, &last, found, kid)) < 0)
		goto cleanup;
	/* a version-1 checkpoint of the head is followed by a version-2 one */
	if (found && last.seq == c.seq && last.version == 2) {
		checkpoint_public(out, &last);
		goto cleanup;
	}
	if (tree->size != c.seq) {
		error = 1;
		goto cleanup;
	}
	c.version = 2;
	memcpy(c.root, tree->root, sizeof(c.root));
	if ((error = sign_note(&c, l, key)) < 0 ||
	    (error = checkpoint_statement(&msg, &c)) < 0 ||
	    (error = sign(c.sig, key, &msg)) < 0 ||
	    (error = put_record(l, txn, &c)) < 0)
		goto cleanup;
	error = store_txn_commit(l, txn);
	txn = NULL;
	if (error == 0) {
		checkpoint_public(out, &c);
		*created = 1;
	}
cleanup:
	if (txn)
		store_txn_abort(l, txn);
	docket_buf_dispose(&msg);
	return error;
}

int docket_checkpoint_create(docket_checkpoint *out, int *created, docket_ledger *l,
			     const char *key_path)
{
	EVP_PKEY *key = NULL;
	uint8_t kid[CHECKPOINT_HASH_LEN];
	int error;

	memset(out, 0, sizeof(*out));
	*created = 0;
	if (ledger_readonly(l))
		return docket_error_set(DOCKET_EINVALID, "ledger %s is open read-only", ledger_path(l));
	if ((error = load_key(&key, key_path, 1)) < 0 || (error = key_id(kid, key)) < 0)
		goto cleanup;
	for (int tries = 0;; tries++) {
		docket_tlog_head tree;

		if ((error = docket_tlog_head_get(&tree, l)) < 0)
			break;
		error = create_txn(out, created, l, key, kid, &tree);
		if (error == 1 && tries < 8)
			continue;
		if (error == 1)
			error = docket_error_set(DOCKET_ECONFLICT, "the ledger keeps growing: try again");
		if (error != DOCKET_EMAPFULL || (error = store_grow(l)) < 0)
			break;
	}
cleanup:
	EVP_PKEY_free(key);
	return error;
}

int checkpoint_each(docket_ledger *l, checkpoint_record_cb cb, void *ctx)
{
	checkpoint_record *all = NULL;
	size_t n = 0;
	int error;

	if ((error = load_all(&all, &n, l)) < 0)
		return error;
	for (size_t i = 0; i < n && error == 0; i++)
		error = cb(ctx, &all[i]);
	docket_free(all);
	return error > 0 ? 0 : error;
}

typedef struct public_ctx {
	docket_checkpoint_cb cb;
	void *ctx;
} public_ctx;

static int to_public(void *vctx, const checkpoint_record *c)
{
	public_ctx *p = vctx;
	docket_checkpoint pub;

	checkpoint_public(&pub, c);
	return p->cb(p->ctx, &pub);
}

int docket_checkpoint_list(docket_ledger *l, docket_checkpoint_cb cb, void *ctx)
{
	public_ctx p = { cb, ctx };

	return checkpoint_each(l, to_public, &p);
}

/* Every stored checkpoint (*all, freed by the caller even on error) and the
 * one `index` names (0: the last). */
static int load_one(checkpoint_record **all, checkpoint_record **one, docket_ledger *l, uint64_t index)
{
	size_t n = 0;
	int error;

	*one = NULL;
	if ((error = load_all(all, &n, l)) < 0)
		return error;
	if (n == 0 || index > n)
		return docket_error_set(DOCKET_ENOTFOUND, n ? "no checkpoint %llu" : "no checkpoints yet",
					(unsigned long long)index);
	*one = &(*all)[index ? index - 1 : n - 1];
	return 0;
}

int docket_checkpoint_record(char **out, docket_ledger *l, uint64_t index)
{
	docket_buf text = DOCKET_BUF_INIT;
	checkpoint_record *all = NULL, *c;
	json_t *obj = NULL;
	int error;

	*out = NULL;
	if ((error = load_one(&all, &c, l, index)) < 0)
		goto cleanup;
	if ((error = checkpoint_to_json(&obj, c)) < 0 ||
	    (error = docket_json_dump(&text, obj)) < 0)
		goto cleanup;
	*out = text.ptr;
	text.ptr = NULL;
cleanup:
	json_decref(obj);
	docket_buf_dispose(&text);
	docket_free(all);
	return error;
}

/* The last stored checkpoint; DOCKET_ENOTFOUND when there is none. */
static int checkpoint_record_last(checkpoint_record *out, docket_ledger *l)
{
	MDB_txn *txn = NULL;
	int found = 0, error;

	if ((error = store_txn_begin(&txn, l, MDB_RDONLY)) < 0)
		return error;
	error = last_record(out, &found, l, txn);
	store_txn_abort(l, txn);
	if (error == 0 && !found)
		error = docket_error_set(DOCKET_ENOTFOUND, "no checkpoints yet");
	return error;
}

int docket_checkpoint_note(char **out, size_t *len, docket_ledger *l, uint64_t index)
{
	checkpoint_record *all = NULL, *c;
	size_t nlen;
	int error;

	*out = NULL;
	*len = 0;
	if ((error = load_one(&all, &c, l, index)) < 0)
		goto cleanup;
	if (c->version != 2) {
		error = docket_error_set(DOCKET_ENOTFOUND, "checkpoint %llu predates signed notes (it signs "
					 "the chain head only): make a new checkpoint",
					 (unsigned long long)c->index);
		goto cleanup;
	}
	nlen = strlen(c->note);
	if (!(*out = docket_malloc(nlen + 1))) {
		error = docket_error_set_oom();
		goto cleanup;
	}
	memcpy(*out, c->note, nlen + 1);
	*len = nlen;
cleanup:
	docket_free(all);
	return error;
}

/* The old note's tree head, checked to be a prefix of this ledger's tree. */
static int old_head(docket_note_checkpoint *old, docket_ledger *l, const char *text, size_t len,
		    uint64_t newest)
{
	uint8_t root[CHECKPOINT_HASH_LEN];
	char origin[64];
	note_msg *n = docket_malloc(sizeof(*n));
	int error;

	if (!n)
		return docket_error_set_oom();
	if ((error = note_parse(n, text, len)) < 0 ||
	    (error = note_checkpoint_parse(old, NULL, (const char *)n->text.ptr, n->text.len)) < 0 ||
	    (error = docket_tlog_origin(origin, l)) < 0)
		goto cleanup;
	if (strcmp(old->origin, origin) != 0) {
		error = docket_error_set(DOCKET_ECONFLICT, "the old checkpoint is of %s, not of this "
					 "ledger (%s)", old->origin, origin);
		goto cleanup;
	}
	if (old->size > newest) {
		error = docket_error_set(DOCKET_ECONFLICT, "the old checkpoint (size %llu) is newer than "
					 "the newest checkpoint (size %llu)", (unsigned long long)old->size,
					 (unsigned long long)newest);
		goto cleanup;
	}
	if (old->size > 0 && (error = docket_tlog_root_at(root, l, old->size)) == 0 &&
	    memcmp(root, old->root, sizeof(root)) != 0)
		error = docket_error_set(DOCKET_ECONFLICT, "the old checkpoint's root is not this ledger's "
					 "tree at size %llu: a fork, or the ledger was rewritten",
					 (unsigned long long)old->size);
cleanup:
	docket_free(n);
	return error;
}

int docket_checkpoint_consistency(char **out, size_t *len, docket_ledger *l, const char *old_note,
				  size_t old_len)
{
	docket_buf text = DOCKET_BUF_INIT;
	docket_note_checkpoint old;
	docket_tlog_proof *p = NULL;
	char *newest = NULL;
	size_t newest_len = 0;
	checkpoint_record last;
	int error;

	*out = NULL;
	*len = 0;
	if ((error = docket_checkpoint_note(&newest, &newest_len, l, 0)) < 0 ||
	    (error = checkpoint_record_last(&last, l)) < 0 ||
	    (error = old_head(&old, l, old_note, old_len, last.seq)) < 0)
		goto cleanup;
	if (!(p = docket_calloc(1, sizeof(*p)))) {
		error = docket_error_set_oom();
		goto cleanup;
	}
	if (old.size > 0 && old.size < last.seq &&
	    (error = docket_tlog_consistency(p, l, old.size, last.seq)) < 0)
		goto cleanup;
	if ((error = note_proof_put(&text, old.size, (const uint8_t (*)[DOCKET_TLOG_HASH_LEN])p->hash,
				    p->len, newest, newest_len)) < 0)
		goto cleanup;
	*out = text.ptr;
	*len = text.len;
	text.ptr = NULL;
cleanup:
	docket_buf_dispose(&text);
	docket_free(p);
	docket_free(newest);
	return error;
}

/* ---- verification ------------------------------------------------------ */

typedef struct seq_hash {
	uint64_t seq;
	char hash[65];
} seq_hash;

static int take_hash(void *ctx, uint64_t seq, json_t *event)
{
	seq_hash *h = ctx;
	const char *s = json_string_value(json_object_get(event, "hash"));

	h->seq = seq;
	snprintf(h->hash, sizeof(h->hash), "%s", s ? s : "");
	return 1;
}

/* The chain hash stored with event `seq` (hex); "" when there is no such event. */
static int hash_at(char out[65], docket_ledger *l, uint64_t seq)
{
	docket_read_options o = DOCKET_READ_OPTIONS_INIT;
	seq_hash h = { 0, "" };
	int error;

	o.since = seq;
	o.limit = 1;
	if ((error = docket_ledger_read_json(l, &o, take_hash, &h)) < 0)
		return error;
	snprintf(out, 65, "%s", h.seq == seq ? h.hash : "");
	return 0;
}

/* Record a problem: the check ran and found something (return 1). */
static int problem(docket_seal_report *rep, const char *fmt, ...) DOCKET_PRINTF(2, 3);

static int problem(docket_seal_report *rep, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(rep->problem, sizeof(rep->problem), fmt, ap);
	va_end(ap);
	return 1;
}

typedef struct seal_ctx {
	docket_ledger *l;
	EVP_PKEY *key;
	uint8_t kid[CHECKPOINT_HASH_LEN];
	docket_seal_report *rep;
} seal_ctx;

/* Signature, ledger and key of one record; 1 when something is wrong. */
static int check_signed(seal_ctx *s, const checkpoint_record *c, const char *what)
{
	char kid[65];
	int ok;

	if (strcmp(c->ledger_id, ledger_id(s->l)) != 0)
		return problem(s->rep, "%s belongs to ledger %s, not to this ledger (%s)",
			       what, c->ledger_id, ledger_id(s->l));
	if (memcmp(c->key_id, s->kid, sizeof(s->kid)) != 0) {
		docket_hex(kid, c->key_id, sizeof(c->key_id));
		return problem(s->rep, "%s names key %.16s..., not the given key %.16s...: "
			       "re-signed with another key", what, kid, s->rep->key_id);
	}
	if ((ok = checkpoint_signature_ok(c, s->key)) < 0)
		return ok;
	if (!ok)
		return problem(s->rep, "%s: the signature does not verify with the given key "
			       "(altered or re-signed)", what);
	return 0;
}

/* A version-2 record's note: signed by the key for this ledger's origin, and
 * its root is the ledger's tree at that size. 1 when something is wrong. */
static int check_tree(seal_ctx *s, const checkpoint_record *c, const char *what)
{
	docket_note_checkpoint cp;
	uint8_t root[CHECKPOINT_HASH_LEN];
	char origin[64];
	note_msg *n = docket_malloc(sizeof(*n));
	int error;

	if (!n)
		return docket_error_set_oom();
	if ((error = docket_tlog_origin(origin, s->l)) < 0)
		goto cleanup;
	if ((error = note_parse(n, c->note, strlen(c->note))) < 0 ||
	    (error = checkpoint_note_check(&cp, n, s->key)) < 0) {
		error = error == DOCKET_EINVALID || error == DOCKET_ECORRUPT
			? problem(s->rep, "%s: its signed note: %s", what, docket_error_last()->message)
			: error;
		goto cleanup;
	}
	if (strcmp(cp.origin, origin) != 0) {
		error = problem(s->rep, "%s: its note names the log %s, not this ledger (%s)", what,
				cp.origin, origin);
		goto cleanup;
	}
	if ((error = docket_tlog_root_at(root, s->l, c->seq)) < 0)
		goto cleanup;
	if (memcmp(root, c->root, sizeof(root)) != 0)
		error = problem(s->rep, "%s: the Merkle tree of events 1..%llu has another root than the "
				"signed one: events were altered, dropped or reordered", what,
				(unsigned long long)c->seq);
cleanup:
	docket_free(n);
	return error;
}

static int check_one(seal_ctx *s, const checkpoint_record *c, const checkpoint_record *prev,
		     uint64_t want_index)
{
	uint8_t want_prev[CHECKPOINT_HASH_LEN];
	char what[48], head[65], stored[65];
	int error;

	snprintf(what, sizeof(what), "checkpoint %llu", (unsigned long long)c->index);
	if (c->index != want_index)
		return problem(s->rep, "checkpoint %llu is missing (the next one stored is %llu): "
			       "a checkpoint was removed", (unsigned long long)want_index,
			       (unsigned long long)c->index);
	if ((error = check_signed(s, c, what)) != 0)
		return error;
	if (prev && (error = checkpoint_digest(want_prev, prev)) < 0)
		return error;
	if (memcmp(c->prev, prev ? want_prev : zero_hash, CHECKPOINT_HASH_LEN) != 0)
		return problem(s->rep, "%s does not follow checkpoint %llu (its 'prev' digest differs): "
			       "a checkpoint was removed or replaced", what,
			       (unsigned long long)want_index - 1);
	if (prev && c->seq < prev->seq)
		return problem(s->rep, "%s covers seq %llu, before checkpoint %llu (seq %llu)", what,
			       (unsigned long long)c->seq, (unsigned long long)prev->index,
			       (unsigned long long)prev->seq);
	if (c->seq > s->rep->head_seq)
		return problem(s->rep, "%s covers seq %llu but the ledger ends at seq %llu: "
			       "events were removed (truncation)", what, (unsigned long long)c->seq,
			       (unsigned long long)s->rep->head_seq);
	if ((error = hash_at(stored, s->l, c->seq)) < 0)
		return error;
	docket_hex(head, c->head, sizeof(c->head));
	if (strcmp(stored, head) != 0)
		return problem(s->rep, "%s: the chain head at seq %llu is not the signed one: "
			       "events up to seq %llu were altered", what, (unsigned long long)c->seq,
			       (unsigned long long)c->seq);
	if (c->version == 2 && (error = check_tree(s, c, what)) != 0)
		return error;
	s->rep->checkpoints++;
	s->rep->covered_seq = c->seq;
	return 0;
}

static int check_witness(seal_ctx *s, const char *path, const checkpoint_record *all, size_t n)
{
	docket_buf text = DOCKET_BUF_INIT;
	checkpoint_record w;
	uint8_t a[CHECKPOINT_HASH_LEN], b[CHECKPOINT_HASH_LEN];
	int error;

	if ((error = audit_read_file(&text, path, RECORD_MAX)) < 0)
		goto cleanup;
	if ((error = checkpoint_parse(&w, text.ptr ? text.ptr : "", text.len)) < 0) {
		error = problem(s->rep, "witness %s: %s", path, docket_error_last()->message);
		goto cleanup;
	}
	if ((error = check_signed(s, &w, "the witness")) != 0)
		goto cleanup;
	if (w.index > n) {
		error = problem(s->rep, "the witness is checkpoint %llu (seq %llu) but the ledger's "
				"checkpoints end at %zu: checkpoints were removed",
				(unsigned long long)w.index, (unsigned long long)w.seq, n);
		goto cleanup;
	}
	if ((error = checkpoint_digest(a, &w)) < 0 ||
	    (error = checkpoint_digest(b, &all[w.index - 1])) < 0)
		goto cleanup;
	if (memcmp(a, b, sizeof(a)) != 0) {
		error = problem(s->rep, "checkpoint %llu in the ledger differs from the witness",
				(unsigned long long)w.index);
		goto cleanup;
	}
	s->rep->witness_checked = 1;
cleanup:
	docket_buf_dispose(&text);
	return error;
}

static int verify_all(seal_ctx *s, const char *witness_path)
{
	checkpoint_record *all = NULL;
	size_t n = 0;
	int error;

	if ((error = load_all(&all, &n, s->l)) < 0) {
		if (error != DOCKET_EINVALID && error != DOCKET_ECORRUPT)
			return error;
		return problem(s->rep, "%s", docket_error_last()->message);
	}
	if (n == 0)
		error = problem(s->rep, "the ledger has no checkpoints: nothing is signed");
	for (size_t i = 0; i < n && error == 0; i++)
		error = check_one(s, &all[i], i ? &all[i - 1] : NULL, (uint64_t)i + 1);
	if (error == 0 && witness_path)
		error = check_witness(s, witness_path, all, n);
	docket_free(all);
	return error;
}

int docket_ledger_verify_seal(docket_ledger *l, const char *pubkey_path, const char *witness_path,
			      docket_seal_report *rep)
{
	docket_ledger_info info;
	seal_ctx s;
	int error;

	memset(rep, 0, sizeof(*rep));
	memset(&s, 0, sizeof(s));
	s.l = l;
	s.rep = rep;
	if ((error = load_key(&s.key, pubkey_path, 0)) < 0 || (error = key_id(s.kid, s.key)) < 0)
		goto cleanup;
	docket_hex(rep->key_id, s.kid, sizeof(s.kid));
	if ((error = docket_ledger_info_get(l, &info)) < 0)
		goto cleanup;
	rep->head_seq = info.events;
	if ((error = verify_all(&s, witness_path)) < 0)
		goto cleanup;
	rep->ok = error == 0;
	error = 0;
cleanup:
	EVP_PKEY_free(s.key);
	return error;
}

/* ---- signed notes (docket/tlog.h) --------------------------------------- */

static void set_problem(char *problem, size_t len)
{
	if (problem && len)
		snprintf(problem, len, "%s", docket_error_last()->message);
}

int checkpoint_note_check(docket_note_checkpoint *out, const note_msg *n, EVP_PKEY *key)
{
	uint32_t id;
	int error;

	if ((error = note_checkpoint_parse(out, NULL, (const char *)n->text.ptr, n->text.len)) < 0)
		return error;
	if ((error = note_verify_sig(n, out->origin, key)) == DOCKET_ENOTFOUND) {
		if ((error = note_key_id(&id, out->origin, NOTE_TYPE_ED25519, key)) < 0)
			return error;
		return docket_error_set(DOCKET_ECORRUPT, "the checkpoint of %s is not signed by this "
					"key (no signature line by %s with key ID %08x)", out->origin,
					out->origin, (unsigned)id);
	}
	if (error == DOCKET_ECORRUPT)
		docket_error_prefix("checkpoint of %s: ", out->origin);
	return error;
}

int docket_note_verify(docket_note_checkpoint *out, const char *text, size_t len,
		       const char *pubkey_path, char *problem, size_t problem_len)
{
	EVP_PKEY *key = NULL;
	note_msg *n = NULL;
	int error;

	memset(out, 0, sizeof(*out));
	if (problem && problem_len)
		problem[0] = '\0';
	if ((error = load_key(&key, pubkey_path, 0)) < 0)
		goto cleanup;
	if (!(n = docket_malloc(sizeof(*n)))) {
		error = docket_error_set_oom();
		goto cleanup;
	}
	if ((error = note_parse(n, text, len)) < 0 || (error = checkpoint_note_check(out, n, key)) < 0)
		memset(out, 0, sizeof(*out));
cleanup:
	if (error < 0)
		set_problem(problem, problem_len);
	docket_free(n);
	EVP_PKEY_free(key);
	return error;
}
