/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rewrite.c: `docket migrate` (format 1 or 2 -> 3) and `docket compact`
 * (format 3 into full segments), one pipeline:
 *
 *   1. open the ledger and begin a write transaction on it, held to the end:
 *      no other writer can append while it is copied;
 *   2. create PATH.rewrite-XXXXXX next to it (mkdtemp: 0700) and a new
 *      ledger in it; copy the dictionaries, then every event in seq order,
 *      each checked on the way exactly as verify does (the chain from h[0],
 *      the stored hashes, every invariant of the state machine, which also
 *      rebuilds the indexes); then the checkpoints, import records and the
 *      meta records that are primary data (ledger id, redaction rules,
 *      dictionary state, clock);
 *   3. refuse unless the copy ends at the head the original records;
 *   4. swap the two directories (renameat2 RENAME_EXCHANGE: atomic), sync
 *      the parent, mark the old files "moved" (a writer of this docket that
 *      still has them open is refused its next append) and remove them.
 *
 * The chain is the same in every format, so every hash `log --json` prints,
 * every checkpoint signed before and every exported copy stays valid.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ledger_internal.h"
#include "spool_internal.h"
#include "util/alloc.h"
#include "util/crash.h"
#include "util/error.h"

#define COPY_CHUNK 65536    /* events per write transaction of the copy */

typedef struct rewrite {
	docket_ledger *src, *dst;
	MDB_txn *stxn;           /* on src, held: the writer lock */
	ledger_reader r;         /* format-2 or format-3 source */
	docket_buf payload;      /* format-1 source: the decoded frame */
	uint8_t hash[LEDGER_HASH_LEN]; /* the chain so far */
	uint64_t head;           /* what src's meta records as its head */
	uint8_t head_hash[LEDGER_HASH_LEN];
	docket_rewrite_report *rep;
} rewrite;

/* ---- reading the source ---- */

/* A format-1 frame: the payload, its stored hash checked against the chain. */
static int v1_payload(rewrite *rw, uint64_t seq, const uint8_t **p, size_t *len)
{
	uint8_t key[8];
	MDB_val k = { sizeof(key), key }, v;
	frame_header hdr;
	int rc, error;

	docket_be64_put(key, seq);
	if ((rc = mdb_get(rw->stxn, rw->src->dbi.events, &k, &v)) == MDB_NOTFOUND)
		return docket_error_set(DOCKET_ECORRUPT, "seq %llu is missing from the log", (unsigned long long)seq);
	if (rc != 0)
		return store_error(rc, "read events");
	if ((error = frame_decode(&rw->payload, &hdr, rw->src, rw->stxn, v.mv_data, v.mv_size)) < 0 ||
	    (error = chain_next(rw->hash, rw->hash, seq, (const uint8_t *)rw->payload.ptr, rw->payload.len)) < 0)
		return error;
	if (memcmp(rw->hash, hdr.hash, LEDGER_HASH_LEN) != 0)
		return docket_error_set(DOCKET_ECORRUPT, "chain hash does not match the event");
	*p = (const uint8_t *)rw->payload.ptr;
	*len = rw->payload.len;
	return 0;
}

static int source_payload(rewrite *rw, uint64_t seq, const uint8_t **p, size_t *len)
{
	if (rw->src->format == 1)
		return v1_payload(rw, seq, p, len);
	return reader_check(&rw->r, seq, rw->hash, p, len);
}

/* ---- writing the copy ---- */

/* Copy events [from, to] into dst in one transaction. */
static int copy_events(rewrite *rw, uint64_t from, uint64_t to)
{
	docket_ledger *dst = rw->dst;
	MDB_txn *txn = NULL;
	state_txn *st = NULL;
	seg_writer w;
	int error;

	seg_writer_init(&w, dst);
	/* history: fewer, larger segments, compressed harder (segment.c) */
	w.target = SEG_REWRITE_EVENTS;
	w.level = SEG_REWRITE_LEVEL;
	w.parallel = 1;
	if ((error = store_txn_begin(&txn, dst, 0)) < 0)
		goto cleanup;
	if ((error = state_txn_begin(&st, dst, txn)) < 0)
		goto cleanup;
	/* re-send checks read the source (a format-1 log: nothing to read) */
	state_set_source(st, rw->src->format == 1 ? NULL : rw->src, rw->stxn);
	for (uint64_t seq = from; seq <= to; seq++) {
		const uint8_t *p;
		unsigned kind = 0;
		size_t len;

		if ((error = source_payload(rw, seq, &p, &len)) == 0 &&
		    (error = state_apply_stored(st, seq, p, len, &kind)) == 0)
			error = seg_add(&w, seq, kind, p, len, rw->hash);
		if (error == 0 && seg_full(&w)) {
			rw->rep->segments++;
			error = seg_close(&w, txn);
		}
		if (error < 0) {
			docket_error_prefix("seq %llu: ", (unsigned long long)seq);
			goto cleanup;
		}
		state_set_head(st, seq, rw->hash);
		state_count_bytes(st, len, 0);
	}
	if (w.b.count)
		rw->rep->segments++;
	if ((error = seg_flush(&w, txn)) < 0 || (error = state_txn_finish(st)) < 0)
		goto cleanup;
	error = store_txn_commit(dst, txn);
	txn = NULL;
cleanup:
	state_txn_free(st);
	if (txn)
		store_txn_abort(dst, txn);
	seg_writer_dispose(&w);
	return error;
}

/* Every record of a primary table, verbatim. */
static int copy_table(rewrite *rw, MDB_txn *dtxn, MDB_dbi from, MDB_dbi to)
{
	MDB_cursor *cur = NULL;
	MDB_val k, v;
	int rc;

	if ((rc = mdb_cursor_open(rw->stxn, from, &cur)) != 0)
		return store_error(rc, "read table");
	for (rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == 0; rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT))
		if ((rc = mdb_put(dtxn, to, &k, &v, 0)) != 0)
			break;
	mdb_cursor_close(cur);
	return rc == 0 || rc == MDB_NOTFOUND ? 0 : store_error(rc, "copy table");
}

/* Every meta record whose key starts with `prefix`, verbatim. */
static int copy_meta_prefix(rewrite *rw, MDB_txn *dtxn, const char *prefix)
{
	size_t plen = strlen(prefix);
	MDB_cursor *cur = NULL;
	MDB_val k = { plen, (void *)prefix }, v;
	int rc;

	if ((rc = mdb_cursor_open(rw->stxn, rw->src->dbi.meta, &cur)) != 0)
		return store_error(rc, "read meta");
	for (rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE); rc == 0 && k.mv_size >= plen &&
	     memcmp(k.mv_data, prefix, plen) == 0; rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT))
		if ((rc = mdb_put(dtxn, rw->dst->dbi.meta, &k, &v, 0)) != 0)
			break;
	mdb_cursor_close(cur);
	return rc == 0 || rc == MDB_NOTFOUND ? 0 : store_error(rc, "copy meta");
}

/* The meta records that are primary data (the rest is rebuilt): among
 * them the spool's fold markers ("spool:<entry>"), which keep an entry a
 * crash left behind after its fold from being folded twice (spool.c). */
static int copy_meta(rewrite *rw, MDB_txn *dtxn)
{
	static const char *const names[] = { "ledger_id", "redaction_rules", "dict_active", "dict_next_try",
					     "clock_us" };
	int error;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		MDB_val v;

		error = store_meta_get(rw->stxn, rw->src, names[i], &v);
		if (error == DOCKET_ENOTFOUND)
			continue;
		if (error < 0 || (error = store_meta_put(dtxn, rw->dst, names[i], v.mv_data, v.mv_size)) < 0)
			return error;
	}
	memcpy(rw->dst->ledger_id, rw->src->ledger_id, sizeof(rw->dst->ledger_id));
	return copy_meta_prefix(rw, dtxn, SPOOL_MARKER_PREFIX);
}

/* Dictionaries first (segments may use them), or everything else last. */
static int copy_primary(rewrite *rw, int dicts)
{
	MDB_txn *dtxn = NULL;
	int error;

	if ((error = store_txn_begin(&dtxn, rw->dst, 0)) < 0)
		return error;
	if (dicts)
		error = copy_table(rw, dtxn, rw->src->dbi.dicts, rw->dst->dbi.dicts);
	else if ((error = copy_table(rw, dtxn, rw->src->dbi.checkpoints, rw->dst->dbi.checkpoints)) == 0 &&
		 (error = copy_table(rw, dtxn, rw->src->dbi.imports, rw->dst->dbi.imports)) == 0)
		error = copy_meta(rw, dtxn);
	if (error < 0) {
		store_txn_abort(rw->dst, dtxn);
		return error;
	}
	return store_txn_commit(rw->dst, dtxn);
}

/* Every event, in chunks; a full map grows and redoes the chunk. */
static int copy_log(rewrite *rw)
{
	uint64_t last = rw->head;
	int error;

	if (ledger_segmented(rw->src) && (error = reader_last_seq(&rw->r, &last)) < 0)
		return error;
	if (last != rw->head)
		return docket_error_set(DOCKET_ECORRUPT, "the log ends at seq %llu, the ledger records seq %llu",
					(unsigned long long)last, (unsigned long long)rw->head);
	for (uint64_t from = 1; from <= last;) {
		uint64_t to = last - from + 1 > COPY_CHUNK ? from + COPY_CHUNK - 1 : last;
		uint8_t saved[LEDGER_HASH_LEN];
		uint64_t segments = rw->rep->segments;

		memcpy(saved, rw->hash, sizeof(saved));
		error = copy_events(rw, from, to);
		docket_crash_point("rewrite.copying");
		if (error == DOCKET_EMAPFULL) {
			memcpy(rw->hash, saved, sizeof(saved));
			rw->rep->segments = segments;
			if ((error = store_grow(rw->dst)) < 0)
				return error;
			continue;
		}
		if (error < 0)
			return error;
		from = to + 1;
	}
	if (memcmp(rw->hash, rw->head_hash, LEDGER_HASH_LEN) != 0)
		return docket_error_set(DOCKET_ECORRUPT, "the chain does not end at the head the ledger records");
	rw->rep->events = last;
	memcpy(rw->rep->head, rw->hash, LEDGER_HASH_LEN);
	return 0;
}

/* ---- swapping the files ---- */

static uint64_t data_size(const char *dir)
{
	char path[4096];
	struct stat st;

	snprintf(path, sizeof(path), "%s/data.mdb", dir);
	return stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

static int sync_parent(const char *path)
{
	char parent[4096];
	char *slash;
	int fd;

	snprintf(parent, sizeof(parent), "%s", path);
	slash = strrchr(parent, '/');
	if (slash == parent)
		parent[1] = '\0';
	else if (slash)
		*slash = '\0';
	else
		snprintf(parent, sizeof(parent), ".");
	if ((fd = open(parent, O_RDONLY | O_DIRECTORY)) < 0)
		return docket_error_set(DOCKET_ESTORAGE, "cannot open %s: %s", parent, strerror(errno));
	if (fsync(fd) < 0) {
		close(fd);
		return docket_error_set(DOCKET_ESTORAGE, "cannot sync %s: %s", parent, strerror(errno));
	}
	close(fd);
	return 0;
}

/* Put the copy at `path` and the old files at `tmp`, atomically. */
static int swap_dirs(const char *path, const char *tmp)
{
	if (renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_EXCHANGE) < 0)
		return docket_error_set(DOCKET_ESTORAGE, "cannot swap %s and %s: %s (nothing was changed; "
					"remove %s)", tmp, path, strerror(errno), tmp);
	return sync_parent(path);
}

/*
 * Anything else the user kept in the ledger directory follows it: after the
 * swap it is in `from` (the old directory) and moves to `to`. 1 when some
 * entry could not be moved (then `from` is kept and named).
 */
static int carry_files(const char *from, const char *to)
{
	DIR *d = opendir(from);
	struct dirent *e;
	char a[4096], b[4096];
	int stuck = 0;

	if (!d)
		return 1;
	while ((e = readdir(d)) != NULL) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || !strcmp(e->d_name, "data.mdb") ||
		    !strcmp(e->d_name, "lock.mdb") || !strcmp(e->d_name, LEDGER_WRITER_LOCK))
			continue;
		snprintf(a, sizeof(a), "%s/%s", from, e->d_name);
		snprintf(b, sizeof(b), "%s/%s", to, e->d_name);
		if (renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_NOREPLACE) < 0)
			stuck = 1;
	}
	closedir(d);
	return stuck;
}

/* Mark the old files (now at the temporary path) moved, and let go of them. */
static int retire_source(rewrite *rw)
{
	static const char note[] = "rewritten";
	int error = store_meta_put(rw->stxn, rw->src, "moved", note, sizeof(note) - 1);

	if (error == 0)
		error = store_txn_commit(rw->src, rw->stxn);
	else
		store_txn_abort(rw->src, rw->stxn);
	rw->stxn = NULL;
	return error;
}

/* ---- the pipeline ---- */

static int open_source(rewrite *rw, const char *path, size_t map_max)
{
	docket_open_options o = DOCKET_OPEN_OPTIONS_INIT;
	MDB_val head;
	int error;

	o.map_size_max = map_max;
	if ((error = ledger_open_ex(&rw->src, path, &o, 1)) < 0 ||
	    (error = store_txn_begin(&rw->stxn, rw->src, 0)) < 0 ||
	    (error = store_meta_get_u64(rw->stxn, rw->src, "head_seq", &rw->head)) < 0)
		return error;
	memset(rw->head_hash, 0, LEDGER_HASH_LEN);
	if ((error = store_meta_get(rw->stxn, rw->src, "head_hash", &head)) == 0 && head.mv_size == LEDGER_HASH_LEN)
		memcpy(rw->head_hash, head.mv_data, LEDGER_HASH_LEN);
	else if (error != DOCKET_ENOTFOUND)
		return error < 0 ? error : docket_error_set(DOCKET_ECORRUPT, "bad chain head in meta");
	reader_init(&rw->r, rw->src, rw->stxn);
	rw->rep->from_format = rw->src->format;
	return 0;
}

/*
 * The copy was written in several transactions (the dictionaries, chunks of
 * events, the rest), and LMDB's copy-on-write left free pages behind: its
 * data file is replaced by LMDB's compacting copy (MDB_CP_COMPACT: the live
 * pages only, renumbered), written to a new file of mode 0600 and synced,
 * then renamed over it once the copy's environment is closed.
 */
static int compact_file(rewrite *rw, const char *dir)
{
	char from[4096], to[4096];
	int fd, rc;

	snprintf(to, sizeof(to), "%s/data.mdb", dir);
	snprintf(from, sizeof(from), "%s/data.mdb.compact", dir);
	if ((fd = open(from, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) < 0)
		return docket_error_set(DOCKET_ESTORAGE, "cannot create %s: %s", from, strerror(errno));
	rc = mdb_env_copyfd2(rw->dst->env, fd, MDB_CP_COMPACT);
	if (rc == 0 && fsync(fd) < 0)
		rc = errno;
	close(fd);
	docket_ledger_free(rw->dst);
	rw->dst = NULL;
	if (rc == 0 && rename(from, to) < 0)
		rc = errno;
	if (rc != 0) {
		unlink(from);
		return store_error(rc, "compact the copy");
	}
	return 0;
}

/* Steps 2-4 into `tmp` (created), for an open source. */
static int rewrite_into(rewrite *rw, const char *path, char *tmp, size_t map_max)
{
	docket_open_options o = DOCKET_OPEN_OPTIONS_INIT;
	int error;

	o.flags = DOCKET_OPEN_CREATE;
	o.map_size_max = map_max;
	if ((error = docket_ledger_open(&rw->dst, tmp, &o)) < 0 ||
	    (error = store_reserve(rw->dst, (size_t)(data_size(path) / 2))) < 0 ||
	    (error = copy_primary(rw, 1)) < 0 || (error = copy_log(rw)) < 0 ||
	    (error = copy_primary(rw, 0)) < 0 || (error = compact_file(rw, tmp)) < 0)
		return error;
	rw->rep->bytes_after = data_size(tmp);
	docket_crash_point("rewrite.before_swap");
	if ((error = swap_dirs(path, tmp)) < 0)
		return error;
	rw->rep->rewritten = 1;
	docket_crash_point("rewrite.after_swap");
	if ((error = retire_source(rw)) < 0)
		return error;
	if (carry_files(tmp, path))
		return docket_error_set(DOCKET_ESTORAGE, "the ledger was rewritten, but some files of its "
					"directory could not be moved along: they are in %s", tmp);
	return 0;
}

/* Step 2's directory is PATH (no trailing '/') and this, mkdtemp's XXXXXX filled in. */
#define REWRITE_SUFFIX ".rewrite-XXXXXX"

/* `path`'s length without its trailing slashes (a lone "/" kept). */
static size_t trimmed_len(const char *path)
{
	size_t n = strlen(path);

	while (n > 1 && path[n - 1] == '/')
		n--;
	return n;
}

/* Does `name` (an entry of the ledger's parent) read BASE.rewrite-XXXXXX? */
static int leftover_name(const char *name, const char *base, size_t blen)
{
	size_t mark = sizeof(REWRITE_SUFFIX) - 1 - 6;   /* ".rewrite-" */

	return strlen(name) == blen + sizeof(REWRITE_SUFFIX) - 1 && memcmp(name, base, blen) == 0 &&
	       memcmp(name + blen, REWRITE_SUFFIX, mark) == 0;
}

/*
 * Remove what interrupted rewrites of `path` left beside it (step 2's
 * PATH.rewrite-XXXXXX: a partial copy before the swap, the old files after
 * it). The caller holds the ledger's write transaction, so no other rewrite
 * of it is between steps 2 and 4. Returns how many were removed.
 */
static unsigned remove_leftovers(const char *path)
{
	docket_buf dir = DOCKET_BUF_INIT, entry = DOCKET_BUF_INIT;
	const char *base, *slash;
	size_t n = trimmed_len(path), blen, dlen;
	struct dirent *d;
	struct stat st;
	unsigned removed = 0;
	DIR *dp;

	slash = memrchr(path, '/', n);
	base = slash ? slash + 1 : path;
	blen = n - (size_t)(base - path);
	/* the parent: "." for a bare name, "/" for one at the root */
	dlen = !slash || slash == path ? 1 : (size_t)(slash - path);
	if (blen == 0 || docket_buf_put(&dir, slash ? path : ".", dlen) < 0 || docket_buf_putc(&dir, '\0') < 0 ||
	    !(dp = opendir(dir.ptr))) {
		docket_buf_dispose(&dir);
		return 0;
	}
	while ((d = readdir(dp))) {
		if (!leftover_name(d->d_name, base, blen))
			continue;
		docket_buf_clear(&entry);
		if (docket_buf_printf(&entry, "%s%s%s", dir.ptr, strcmp(dir.ptr, "/") ? "/" : "", d->d_name) < 0 ||
		    lstat(entry.ptr, &st) != 0 || !S_ISDIR(st.st_mode))
			continue;
		store_remove_tree(entry.ptr);
		removed += access(entry.ptr, F_OK) != 0;
	}
	closedir(dp);
	docket_buf_dispose(&dir);
	docket_buf_dispose(&entry);
	return removed;
}

static int rewrite_ledger(const char *path, size_t map_max, int migrate, docket_rewrite_report *rep)
{
	rewrite rw;
	char *tmp = NULL;
	size_t n;
	int error, made = 0;

	memset(rep, 0, sizeof(*rep));
	memset(&rw, 0, sizeof(rw));
	rw.rep = rep;
	rep->to_format = DOCKET_FORMAT_VERSION;
	if ((error = open_source(&rw, path, map_max)) < 0)
		goto cleanup;
	rep->leftovers = remove_leftovers(path);
	rep->bytes_before = rep->bytes_after = data_size(path);
	if (migrate && rw.src->format == DOCKET_FORMAT_VERSION) {
		rep->events = rw.head;
		memcpy(rep->head, rw.head_hash, LEDGER_HASH_LEN);
		goto cleanup; /* nothing to do */
	}
	if (!migrate && rw.src->format != DOCKET_FORMAT_VERSION) {
		error = docket_error_set(DOCKET_EVERSION, "ledger %s is in format %u: run `docket -L %s migrate` "
					 "first", path, rw.src->format, path);
		goto cleanup;
	}
	if (!(tmp = docket_malloc(strlen(path) + sizeof(REWRITE_SUFFIX)))) {
		error = docket_error_set_oom();
		goto cleanup;
	}
	n = trimmed_len(path);
	memcpy(tmp, path, n);
	memcpy(tmp + n, REWRITE_SUFFIX, sizeof(REWRITE_SUFFIX));
	if (!mkdtemp(tmp)) {
		error = docket_error_set(DOCKET_ESTORAGE, "cannot create %s: %s", tmp, strerror(errno));
		goto cleanup;
	}
	made = 1;
	error = rewrite_into(&rw, path, tmp, map_max);
cleanup:
	docket_ledger_free(rw.dst);
	reader_dispose(&rw.r);
	docket_buf_dispose(&rw.payload);
	if (rw.stxn)
		store_txn_abort(rw.src, rw.stxn);
	docket_ledger_free(rw.src);
	/* the old files after a swap, or the unfinished copy (kept when
	 * carry_files could not empty it) */
	if (made && !(rep->rewritten && error < 0))
		store_remove_tree(tmp);
	docket_free(tmp);
	return error;
}

int docket_ledger_migrate(const char *path, size_t map_size_max, docket_rewrite_report *report)
{
	return rewrite_ledger(path, map_size_max, 1, report);
}

int docket_ledger_compact(const char *path, size_t map_size_max, docket_rewrite_report *report)
{
	return rewrite_ledger(path, map_size_max, 0, report);
}
