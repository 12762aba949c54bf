/* SPDX-License-Identifier: Apache-2.0 */
/*
 * witness.c: a tiny transparency-log witness (`docket witness`) and the
 * check of witnessed checkpoints against a ledger (`docket verify
 * --witness NOTE --witness-key KEY --witnesses N`). docs/audit.md.
 *
 * The witness keeps, per origin, the last checkpoint it accepted, in
 * <state dir>/<hex SHA-256 of the origin>.note (the signed note as it was
 * accepted, with the witness's cosignature). A new checkpoint is accepted
 * only when
 *   1. it is a well-formed tlog-checkpoint signed by the log's key (the key
 *      name is the origin);
 *   2. there is no stored checkpoint of that origin (trust on first use), or
 *      its size is larger and a consistency proof from the stored size to
 *      the new one verifies against both roots, or its size and root are
 *      the stored ones;
 * and refused as a rollback (smaller size), a fork (same size, another
 * root), a bad proof or a bad signature otherwise. Checking the stored size
 * and replacing the state happen under an exclusive lock of <dir>/.lock, and
 * the state is on disk (fsync, rename, fsync of the directory) before any
 * cosignature leaves: the race c2sp.org/tlog-witness warns about (two
 * requests rolling the state back) cannot happen.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "checkpoint.h"
#include "docket/tlog.h"
#include "util/alloc.h"
#include "util/error.h"
#include "util/file.h"
#include "audit/note.h"

/* ---- the state directory --------------------------------------------- */

static int open_state_dir(int *lock_fd, const char *dir)
{
	struct stat st;
	char path[4096];
	int fd;

	*lock_fd = -1;
	if (mkdir(dir, 0700) != 0 && errno != EEXIST)
		return docket_error_set(DOCKET_ESTORAGE, "cannot create %s: %s", dir, strerror(errno));
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
		return docket_error_set(DOCKET_ESTORAGE, "%s is not a directory", dir);
	if (st.st_mode & 077)
		return docket_error_set(DOCKET_EINVALID, "witness state %s is accessible by others "
					"(mode %03o); chmod 700 it", dir, (unsigned)(st.st_mode & 0777));
	if ((size_t)snprintf(path, sizeof(path), "%s/.lock", dir) >= sizeof(path))
		return docket_error_set(DOCKET_EINVALID, "path too long: %s", dir);
	if ((fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) < 0)
		return docket_error_set(DOCKET_ESTORAGE, "cannot open %s: %s", path, strerror(errno));
	while (flock(fd, LOCK_EX) != 0) {
		if (errno != EINTR) {
			close(fd);
			return docket_error_set(DOCKET_ESTORAGE, "cannot lock %s: %s", path, strerror(errno));
		}
	}
	*lock_fd = fd;
	return 0;
}

static int state_path(char *out, size_t size, const char *dir, const char *origin, const char *suffix)
{
	uint8_t md[32];
	char hex[65];
	unsigned int len = 0;

	if (EVP_Digest(origin, strlen(origin), md, &len, EVP_sha256(), NULL) != 1 || len != 32)
		return docket_error_set(DOCKET_ERROR, "SHA-256 failed");
	docket_hex(hex, md, sizeof(md));
	if ((size_t)snprintf(out, size, "%s/%s%s", dir, hex, suffix) >= size)
		return docket_error_set(DOCKET_EINVALID, "path too long: %s", dir);
	return 0;
}

/* The stored checkpoint of `origin`; *found 0 when there is none. A state
 * file that does not parse or verify is an error: the witness refuses to
 * guess what it saw. */
static int state_load(docket_note_checkpoint *old, int *found, const char *path, const char *origin,
		      EVP_PKEY *log_key)
{
	docket_buf text = DOCKET_BUF_INIT;
	note_msg *n = NULL;
	int error;

	*found = 0;
	memset(old, 0, sizeof(*old));
	if ((error = audit_read_file(&text, path, NOTE_MAX_LEN)) == DOCKET_ENOTFOUND) {
		error = 0;
		goto cleanup;
	}
	if (error < 0)
		goto cleanup;
	if (!(n = docket_malloc(sizeof(*n)))) {
		error = docket_error_set_oom();
		goto cleanup;
	}
	if ((error = note_parse(n, text.ptr ? text.ptr : "", text.len)) < 0 ||
	    (error = checkpoint_note_check(old, n, log_key)) < 0 ||
	    (strcmp(old->origin, origin) != 0 &&
	     (error = docket_error_set(DOCKET_ECORRUPT, "it holds origin %s", old->origin)) < 0)) {
		docket_error_prefix("the witness state %s cannot be used (restore it, or remove it to "
				    "trust the next checkpoint on first use): ", path);
		error = DOCKET_ECORRUPT;
		goto cleanup;
	}
	*found = 1;
cleanup:
	docket_free(n);
	docket_buf_dispose(&text);
	return error;
}

/* ---- the witness ------------------------------------------------------ */

typedef struct witness {
	const docket_witness_options *o;
	docket_witness_result *res;
	EVP_PKEY *log_key, *key;
	note_msg *n;                     /* the new checkpoint's note */
	note_proof *proof;           /* NULL when none was given */
	const char *note_text;
	size_t note_len;
} witness;

static int refuse(docket_witness_result *res, const char *fmt, ...) DOCKET_PRINTF(2, 3);

static int refuse(docket_witness_result *res, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(res->problem, sizeof(res->problem), fmt, ap);
	va_end(ap);
	res->accepted = 0;
	return 1;
}

static int default_name(char out[256], EVP_PKEY *key)
{
	uint8_t id[CHECKPOINT_HASH_LEN];
	char hex[65];
	int error;

	if ((error = checkpoint_key_id(id, key)) < 0)
		return error;
	docket_hex(hex, id, sizeof(id));
	snprintf(out, 256, "docket-witness/%.16s", hex);
	return 0;
}

/* Parse the proof (if any) and the note; 1 when refused. */
static int parse_input(witness *w, const char *input, size_t len)
{
	const docket_witness_options *o = w->o;
	const char *proof = o->proof;
	size_t proof_len = o->proof_len;
	int error;

	w->note_text = input;
	w->note_len = len;
	if (!proof && len >= 4 && memcmp(input, "old ", 4) == 0) {
		proof = input;  /* the note file is a whole add-checkpoint body */
		proof_len = len;
	}
	if (proof) {
		if (!(w->proof = docket_malloc(sizeof(*w->proof))))
			return docket_error_set_oom();
		if ((error = note_proof_parse(w->proof, proof, proof_len)) < 0)
			return error == DOCKET_EINVALID
				? refuse(w->res, "malformed proof: %s", docket_error_last()->message) : error;
		if (proof == input) {
			w->note_text = (const char *)w->proof->checkpoint.ptr;
			w->note_len = w->proof->checkpoint.len;
		}
	}
	if ((error = note_parse(w->n, w->note_text, w->note_len)) < 0)
		return error == DOCKET_EINVALID
			? refuse(w->res, "malformed note: %s", docket_error_last()->message) : error;
	if ((error = checkpoint_note_check(&w->res->checkpoint, w->n, w->log_key)) < 0)
		return error == DOCKET_EINVALID || error == DOCKET_ECORRUPT
			? refuse(w->res, "%s: %s", error == DOCKET_EINVALID ? "malformed checkpoint"
				 : "bad signature", docket_error_last()->message) : error;
	if (w->proof && proof != input) {
		note_msg *pn = docket_malloc(sizeof(*pn));
		int same;

		if (!pn)
			return docket_error_set_oom();
		same = note_parse(pn, (const char *)w->proof->checkpoint.ptr, w->proof->checkpoint.len) == 0 &&
		       pn->text.len == w->n->text.len &&
		       memcmp(pn->text.ptr, w->n->text.ptr, pn->text.len) == 0;
		docket_free(pn);
		if (!same)
			return refuse(w->res, "the proof file is for another checkpoint than the note");
	}
	return 0;
}

/* Is the new checkpoint consistent with `old`? 0 yes, 1 refused. */
static int check_consistent(witness *w, const docket_note_checkpoint *old)
{
	const docket_note_checkpoint *cp = &w->res->checkpoint;
	docket_tlog_proof *p;
	int error;

	w->res->old_size = old->size;
	if (cp->size < old->size)
		return refuse(w->res, "rollback: the witness saw %s at size %llu; this checkpoint has size "
			      "%llu", cp->origin, (unsigned long long)old->size, (unsigned long long)cp->size);
	if (cp->size == old->size)
		return memcmp(cp->root, old->root, DOCKET_TLOG_HASH_LEN) == 0 ? 0
			: refuse(w->res, "fork: the witness saw %s at size %llu with another root hash",
				 cp->origin, (unsigned long long)cp->size);
	if (!w->proof)
		return refuse(w->res, "no consistency proof from size %llu (the size the witness saw) to "
			      "%llu: give --proof FILE (`docket checkpoint --consistency`)",
			      (unsigned long long)old->size, (unsigned long long)cp->size);
	if (w->proof->old_size != old->size)
		return refuse(w->res, "the proof starts at size %llu, but the witness saw size %llu",
			      (unsigned long long)w->proof->old_size, (unsigned long long)old->size);
	if (old->size == 0)
		return 0;  /* every tree extends the empty one */
	if (!(p = docket_calloc(1, sizeof(*p))))
		return docket_error_set_oom();
	p->index = old->size;
	p->size = cp->size;
	p->len = w->proof->len;
	memcpy(p->hash, w->proof->hash, p->len * DOCKET_TLOG_HASH_LEN);
	error = docket_tlog_verify_consistency(p, old->root, cp->root);
	docket_free(p);
	if (error == DOCKET_ECORRUPT || error == DOCKET_EINVALID)
		return refuse(w->res, "bad consistency proof from size %llu to %llu: %s",
			      (unsigned long long)old->size, (unsigned long long)cp->size,
			      docket_error_last()->message);
	return error;
}

/* Check against the state, then store and co-sign; 1 when refused. */
static int witness_locked(witness *w, docket_buf *out)
{
	const docket_witness_options *o = w->o;
	docket_note_checkpoint old;
	char path[4096], tmp[4096];
	int found = 0, error;
	uint64_t now = o->time ? o->time : (uint64_t)time(NULL);

	if ((error = state_path(path, sizeof(path), o->state_dir, w->res->checkpoint.origin, ".note")) < 0 ||
	    (error = state_path(tmp, sizeof(tmp), o->state_dir, w->res->checkpoint.origin, ".tmp")) < 0 ||
	    (error = state_load(&old, &found, path, w->res->checkpoint.origin, w->log_key)) < 0)
		return error;
	w->res->first_seen = !found;
	if (found && (error = check_consistent(w, &old)) != 0)
		return error;
	if ((error = docket_buf_put(out, w->note_text, w->note_len)) < 0)
		return error;
	if (w->key && (error = note_cosign(out, w->res->name, w->key, now, (const char *)w->n->text.ptr,
					   w->n->text.len)) < 0)
		return error;
	if ((error = docket_file_replace(path, tmp, out->ptr, out->len, 0600, DOCKET_REPLACE_SYNC_DIR)) < 0)
		return error;
	w->res->accepted = 1;
	return 0;
}

int docket_witness_add(char **out, size_t *out_len, docket_witness_result *res, const char *input,
		       size_t len, const docket_witness_options *o)
{
	docket_buf text = DOCKET_BUF_INIT;
	witness w;
	int lock_fd = -1, error;

	*out = NULL;
	*out_len = 0;
	memset(res, 0, sizeof(*res));
	memset(&w, 0, sizeof(w));
	w.o = o;
	w.res = res;
	if (!o || o->version != DOCKET_WITNESS_OPTIONS_VERSION || !o->state_dir || !o->log_pubkey)
		return docket_error_set(DOCKET_EINVALID, "witness: bad options");
	if ((error = checkpoint_load_pubkey(&w.log_key, o->log_pubkey)) < 0)
		goto cleanup;
	if (o->key && ((error = checkpoint_load_private(&w.key, o->key)) < 0 ||
		       (error = o->name ? 0 : default_name(res->name, w.key)) < 0))
		goto cleanup;
	if (o->name && (size_t)snprintf(res->name, sizeof(res->name), "%s", o->name) >= sizeof(res->name)) {
		error = docket_error_set(DOCKET_EINVALID, "witness name too long");
		goto cleanup;
	}
	if (o->key && !note_name_valid(res->name, strlen(res->name))) {
		error = docket_error_set(DOCKET_EINVALID, "'%s' is not a valid key name (no spaces, no '+')",
					 res->name);
		goto cleanup;
	}
	if (!(w.n = docket_malloc(sizeof(*w.n)))) {
		error = docket_error_set_oom();
		goto cleanup;
	}
	if ((error = parse_input(&w, input, len)) != 0)
		goto cleanup;
	if ((error = open_state_dir(&lock_fd, o->state_dir)) < 0 ||
	    (error = witness_locked(&w, &text)) != 0)
		goto cleanup;
	*out = text.ptr;
	*out_len = text.len;
	text.ptr = NULL;
cleanup:
	if (lock_fd >= 0)
		close(lock_fd);
	docket_buf_dispose(&text);
	docket_free(w.n);
	docket_free(w.proof);
	EVP_PKEY_free(w.log_key);
	EVP_PKEY_free(w.key);
	return error > 0 ? 0 : error;
}

/* ---- witnessed checkpoints against a ledger ---------------------------- */

typedef struct notes_ctx {
	docket_ledger *l;
	EVP_PKEY *log_key;
	EVP_PKEY **keys;
	size_t nkeys;
	int *counted;
	uint64_t events;
	char origin[64];
	docket_witness_report *rep;
} notes_ctx;

static int report_problem(docket_witness_report *rep, const char *fmt, ...) DOCKET_PRINTF(2, 3);

static int report_problem(docket_witness_report *rep, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(rep->problem, sizeof(rep->problem), fmt, ap);
	va_end(ap);
	return 1;
}

/* One witness note: its checkpoint must be this ledger's tree at its size. */
static int check_note_file(notes_ctx *c, const char *path, note_msg *n)
{
	docket_buf text = DOCKET_BUF_INIT;
	docket_note_checkpoint cp;
	uint8_t root[DOCKET_TLOG_HASH_LEN];
	int error;

	if ((error = audit_read_file(&text, path, NOTE_MAX_LEN)) < 0)
		goto cleanup;
	if ((error = note_parse(n, text.ptr ? text.ptr : "", text.len)) < 0 ||
	    (error = checkpoint_note_check(&cp, n, c->log_key)) < 0) {
		error = error == DOCKET_EINVALID || error == DOCKET_ECORRUPT
			? report_problem(c->rep, "witness %s: %s", path, docket_error_last()->message) : error;
		goto cleanup;
	}
	if (strcmp(cp.origin, c->origin) != 0) {
		error = report_problem(c->rep, "witness %s is a checkpoint of %s, not of this ledger (%s)",
				       path, cp.origin, c->origin);
		goto cleanup;
	}
	if (cp.size > c->events) {
		error = report_problem(c->rep, "witness %s has size %llu but the ledger ends at %llu events: "
				       "events were removed (truncation)", path,
				       (unsigned long long)cp.size, (unsigned long long)c->events);
		goto cleanup;
	}
	if (cp.size > 0) {
		if ((error = docket_tlog_root_at(root, c->l, cp.size)) < 0)
			goto cleanup;
		if (memcmp(root, cp.root, sizeof(root)) != 0) {
			error = report_problem(c->rep, "witness %s: the ledger's tree at size %llu has another "
					       "root: the first %llu events were altered, or the log forked",
					       path, (unsigned long long)cp.size, (unsigned long long)cp.size);
			goto cleanup;
		}
	}
	for (size_t k = 0; k < c->nkeys; k++)
		if (note_verify_cosig(n, NULL, c->keys[k], NULL) == 0)
			c->counted[k] = 1;
	docket_error_clear();
	c->rep->notes++;
	if (cp.size > c->rep->largest_size)
		c->rep->largest_size = cp.size;
cleanup:
	docket_buf_dispose(&text);
	return error;
}

static int load_keys(notes_ctx *c, const char *const *paths, size_t n)
{
	int error;

	if (!(c->keys = docket_calloc(n ? n : 1, sizeof(*c->keys))) ||
	    !(c->counted = docket_calloc(n ? n : 1, sizeof(*c->counted))))
		return docket_error_set_oom();
	for (size_t i = 0; i < n; i++) {
		if ((error = checkpoint_load_pubkey(&c->keys[i], paths[i])) < 0)
			return error;
		c->nkeys++;
	}
	return 0;
}

/* Distinct keys: the same public key twice counts once. */
static size_t count_cosigners(const notes_ctx *c)
{
	size_t count = 0;

	for (size_t i = 0; i < c->nkeys; i++) {
		int dup = 0;

		for (size_t j = 0; j < i && !dup; j++)
			dup = c->counted[j] && EVP_PKEY_eq(c->keys[i], c->keys[j]) == 1;
		count += c->counted[i] && !dup;
	}
	return count;
}

int docket_ledger_verify_notes(docket_ledger *l, const char *pubkey_path, const char *const *notes,
			       size_t nnotes, const char *const *witness_keys, size_t nkeys, size_t required,
			       docket_witness_report *rep)
{
	docket_ledger_info info;
	notes_ctx c;
	note_msg *n = NULL;
	int error = 0;

	memset(rep, 0, sizeof(*rep));
	memset(&c, 0, sizeof(c));
	c.l = l;
	c.rep = rep;
	rep->required = required;
	if (required > nkeys)
		return docket_error_set(DOCKET_EINVALID, "%zu cosignatures required but %zu witness key%s given",
					required, nkeys, nkeys == 1 ? "" : "s");
	if ((error = checkpoint_load_pubkey(&c.log_key, pubkey_path)) < 0 ||
	    (error = load_keys(&c, witness_keys, nkeys)) < 0 ||
	    (error = docket_ledger_info_get(l, &info)) < 0 ||
	    (error = docket_tlog_origin(c.origin, l)) < 0)
		goto cleanup;
	c.events = info.events;
	if (!(n = docket_malloc(sizeof(*n)))) {
		error = docket_error_set_oom();
		goto cleanup;
	}
	for (size_t i = 0; i < nnotes && error == 0; i++)
		error = check_note_file(&c, notes[i], n);
	if (error < 0)
		goto cleanup;
	rep->cosigners = count_cosigners(&c);
	if (error == 0 && rep->cosigners < required)
		error = report_problem(rep, "%zu of the %zu witness keys co-signed a checkpoint that matches "
				       "the ledger; %zu required", rep->cosigners, nkeys, required);
	rep->ok = error == 0;
	error = 0;
cleanup:
	for (size_t i = 0; i < c.nkeys; i++)
		EVP_PKEY_free(c.keys[i]);
	docket_free(c.keys);
	docket_free(c.counted);
	docket_free(n);
	EVP_PKEY_free(c.log_key);
	return error;
}
