/* SPDX-License-Identifier: Apache-2.0 */
/*
 * store.c: the LMDB environment of a ledger.
 *
 * LMDB discipline (lmdb.h caveats, Postfix slmdb.c):
 *  - one environment per ledger handle, MDB_NOTLS so transactions are not
 *    tied to threads, never NOSYNC/WRITEMAP: a commit is durable on return;
 *  - explicit map size, grown on MDB_MAP_FULL (from put or commit) by the
 *    caller replaying the whole transaction, up to a cap;
 *  - a map grown by another process (MDB_MAP_RESIZED) is adopted;
 *  - mdb_reader_check on open, and every 10 s in long-running processes,
 *    clears slots of dead readers;
 *  - the data file's meta pages and size are checked before LMDB maps it
 *    (store_check_file), lock files are created with their blocks allocated
 *    (lock_file_prepare), a ledger nobody can write is read MDB_NOLOCK
 *    (env_open);
 *  - DBIs are opened once, at open, in a write transaction;
 *  - a ledger someone else could change or replace is refused at every
 *    open and create (store_check_trust);
 *  - every write transaction also holds docket's writer lock, an flock on
 *    PATH/writer.lock: LMDB's writer mutex cannot be tried without waiting,
 *    this can (ledger_writer_busy), so a hook that finds a writer in the
 *    middle of a transaction spools at once (docs/write-path.md §3).
 */
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <fcntl.h>
#include <openssl/rand.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "ledger_internal.h"
#include "util/alloc.h"
#include "util/error.h"

#define DEFAULT_MAP_SIZE ((size_t)64 << 20)
#define READER_CHECK_MS 10000
#if SIZE_MAX > 0xffffffffu
#define DEFAULT_MAP_MAX ((size_t)1 << 40)
#else
#define DEFAULT_MAP_MAX ((size_t)1 << 31)
#endif

int store_error(int rc, const char *what)
{
	switch (rc) {
	case MDB_MAP_FULL:
		return docket_error_set(DOCKET_EMAPFULL, "%s: ledger map is full", what);
	case ENOMEM:
		return docket_error_set(DOCKET_ENOMEM, "%s: out of memory", what);
	case MDB_CORRUPTED:
	case MDB_PAGE_NOTFOUND:
		return docket_error_set(DOCKET_ECORRUPT, "%s: %s", what, mdb_strerror(rc));
	case MDB_VERSION_MISMATCH:
	case MDB_INVALID:
		return docket_error_set(DOCKET_EVERSION, "%s: %s", what, mdb_strerror(rc));
	default:
		return docket_error_set(DOCKET_ESTORAGE, "%s: %s", what, mdb_strerror(rc));
	}
}

/*
 * A process killed inside a read transaction leaves its reader slot behind,
 * pinning the snapshot it read: the file then grows without bound under a
 * long-lived writer. Clear dead slots on open and then at most every
 * `reader_check_ms` in any long-running process (record from a pipe,
 * import, log --follow, serve), on the next transaction.
 */
static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void reader_check_due(docket_ledger *l)
{
	uint64_t now = now_ms(), last = __atomic_load_n(&l->reader_checked_ms, __ATOMIC_RELAXED);
	int dead = 0;

	if (l->nolock || now - last < l->reader_check_ms)
		return;
	if (__atomic_compare_exchange_n(&l->reader_checked_ms, &last, now, 0, __ATOMIC_RELAXED,
					__ATOMIC_RELAXED) &&
	    mdb_reader_check(l->env, &dead) == 0 && dead > 0)
		__atomic_add_fetch(&l->readers_cleared, dead, __ATOMIC_RELAXED);
}

/*
 * `docket compact` and `docket migrate` replace the ledger's files with a
 * rewritten copy, then mark the old ones "moved" in a last commit: a writer
 * that still has the old files open must not append to them (nobody would
 * read what it wrote).
 */
static int moved_check(docket_ledger *l, MDB_txn *txn)
{
	MDB_val k = { 5, (void *)"moved" }, v;

	if (!l->ready || mdb_get(txn, l->dbi.meta, &k, &v) != 0)
		return 0;
	return docket_error_set(DOCKET_ESTORAGE, "ledger %s was rewritten (docket compact or migrate) "
				"since it was opened: open it again", l->path);
}

/* ---- docket's writer lock ---- */

/*
 * Taken before LMDB's writer mutex, released after the commit or abort.
 * Best effort: a ledger directory where the file cannot be made (read-only
 * media) has none, and then hooks find out by waiting, as before. Several
 * threads writing through one handle share the file's lock (flock belongs
 * to the open file): the first commit releases it while the next writer
 * may still wait for LMDB, so the lock can only be seen free too early,
 * never held too long.
 */
static void writer_lock(docket_ledger *l)
{
	char path[4096];
	int fd = atomic_load(&l->wlock_fd), expected = -1;

	if (fd == -1 && snprintf(path, sizeof(path), "%s/" LEDGER_WRITER_LOCK, l->path) < (int)sizeof(path)) {
		fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (!atomic_compare_exchange_strong(&l->wlock_fd, &expected, fd < 0 ? -2 : fd)) {
			if (fd >= 0)
				close(fd);
			fd = expected;
		}
	}
	while (fd >= 0 && flock(fd, LOCK_EX) != 0 && errno == EINTR)
		;
}

static void writer_unlock(docket_ledger *l, MDB_txn *txn)
{
	MDB_txn *expected = txn;
	int fd = atomic_load(&l->wlock_fd);

	if (txn && atomic_compare_exchange_strong(&l->wtxn, &expected, NULL) && fd >= 0)
		(void)flock(fd, LOCK_UN);
}

int ledger_writer_busy(const char *path)
{
	char file[4096];
	int fd, busy;

	if (snprintf(file, sizeof(file), "%s/" LEDGER_WRITER_LOCK, path) >= (int)sizeof(file) ||
	    (fd = open(file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0)
		return 0;
	busy = flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
	close(fd);  /* and with it the shared lock, if it got one */
	return busy;
}

int store_txn_begin(MDB_txn **out, docket_ledger *l, unsigned int flags)
{
	int rc, error, writing = !(flags & MDB_RDONLY) && !l->nolock;

	*out = NULL;
	reader_check_due(l);
	if (writing)
		writer_lock(l);
	for (int tries = 0; tries < 8; tries++) {
		pthread_rwlock_rdlock(&l->resize_lock);
		rc = mdb_txn_begin(l->env, NULL, flags, out);
		if (rc == 0 && writing)
			atomic_store(&l->wtxn, *out);
		if (rc == 0 && !(flags & MDB_RDONLY) && (error = moved_check(l, *out)) < 0) {
			store_txn_abort(l, *out);
			*out = NULL;
			return error;
		}
		if (rc == 0)
			return 0;
		pthread_rwlock_unlock(&l->resize_lock);
		if (rc != MDB_MAP_RESIZED)
			break;
		/* Another process grew the map: adopt its size. */
		pthread_rwlock_wrlock(&l->resize_lock);
		rc = mdb_env_set_mapsize(l->env, 0);
		if (rc == 0) {
			MDB_envinfo info;

			mdb_env_info(l->env, &info);
			l->map_size = info.me_mapsize;
		}
		pthread_rwlock_unlock(&l->resize_lock);
		if (rc != 0)
			break;
	}
	if (writing && atomic_load(&l->wlock_fd) >= 0)
		(void)flock(atomic_load(&l->wlock_fd), LOCK_UN);
	return store_error(rc, "begin transaction");
}

/*
 * A commit that failed writing the data file: a full disk shows as ENOSPC,
 * or as EIO when the file system took part of a write (LMDB reports a short
 * write so); a quota as EDQUOT. Name it and the way out, not "Input/output
 * error". The transaction is gone whole: the previous commit is intact.
 */
static int commit_error(docket_ledger *l, int rc)
{
	struct statvfs vfs;
	unsigned long long avail = 0;
	int known = statvfs(l->path, &vfs) == 0;

	if (known)
		avail = (unsigned long long)vfs.f_bavail * vfs.f_frsize;
	if (rc == ENOSPC || (rc == EIO && known && avail < ((unsigned long long)1 << 20)))
		return docket_error_set(DOCKET_ESTORAGE,
			"commit: no space left on device (%llu KiB free on the file system of %s); nothing "
			"was written: free some space or move the ledger to a larger disk, then retry",
			avail >> 10, l->path);
	if (rc == EDQUOT)
		return docket_error_set(DOCKET_ESTORAGE,
			"commit: disk quota exceeded on the file system of %s; nothing was written: free "
			"some space or raise the quota, then retry", l->path);
	return store_error(rc, "commit");
}

/* Under sync_lock: the first `n` commits are durable. */
static void covered(docket_ledger *l, uint64_t n)
{
	if (!l->sync_failed && n > atomic_load(&l->commits_durable))
		atomic_store(&l->commits_durable, n);
}

/*
 * A commit under deferred meta sync returned: did it write a meta page?
 * LMDB commits a transaction with nothing dirty without writing (or
 * syncing) anything; one that wrote its meta page fdatasynced the data file
 * first, which made every meta page written before durable. If another
 * process committed meanwhile with the same txnid, its commit synced the
 * file after our earlier meta pages too, so the conclusion holds. The lock
 * waits for a sync running on another thread: if that sync failed, the
 * error it took may have been about a page this commit's own fdatasync
 * then found clean, so nothing counts as durable.
 */
static void note_commit(docket_ledger *l, size_t txnid)
{
	MDB_envinfo info;

	if (mdb_env_info(l->env, &info) != 0 || info.me_last_txnid < txnid)
		return;
	pthread_mutex_lock(&l->sync_lock);
	covered(l, atomic_load(&l->commits_written));
	atomic_fetch_add(&l->commits_written, 1);
	pthread_mutex_unlock(&l->sync_lock);
}

/*
 * A commit under deferred meta sync failed with EIO: it may be its
 * fdatasync that failed, and the kernel may have dropped the unsynced meta
 * page of an earlier commit with it, so nothing pending is known to be on
 * disk, now or after a later sync.
 */
static void note_commit_failed(docket_ledger *l, int rc)
{
	if (rc != EIO)
		return;
	pthread_mutex_lock(&l->sync_lock);
	l->sync_failed = 1;
	pthread_mutex_unlock(&l->sync_lock);
}

int store_txn_commit(docket_ledger *l, MDB_txn *txn)
{
	size_t txnid = mdb_txn_id(txn);
	int rc = mdb_txn_commit(txn);

	writer_unlock(l, txn);
	if (rc == 0 && l->defer_meta)
		note_commit(l, txnid);
	else if (l->defer_meta)
		note_commit_failed(l, rc);
	pthread_rwlock_unlock(&l->resize_lock);
	return rc == 0 ? 0 : commit_error(l, rc);
}

/*
 * Under sync_lock, held across the fdatasync: a commit's count waits for
 * it (note_commit), and only the commits counted before it started are
 * covered by it.
 */
int store_sync(docket_ledger *l)
{
	uint64_t written;
	int rc = 0, failed_before;

	pthread_mutex_lock(&l->sync_lock);
	written = atomic_load(&l->commits_written);
	failed_before = l->sync_failed;
	if (!failed_before && written != atomic_load(&l->commits_durable)) {
		if ((rc = mdb_env_sync(l->env, 1)) != 0)
			l->sync_failed = 1;
		else
			covered(l, written);
	}
	pthread_mutex_unlock(&l->sync_lock);
	if (failed_before)
		return docket_error_set(DOCKET_ESTORAGE, "sync %s: an earlier sync failed; what was committed "
					"since may not be on disk: stop and check the disk, then run docket verify",
					l->path);
	if (rc != 0)
		return docket_error_set(DOCKET_ESTORAGE, "sync %s: %s; what was committed since the last "
					"sync may not be on disk", l->path, mdb_strerror(rc));
	return 0;
}

int store_defer_meta_sync(docket_ledger *l, int on)
{
	int error, rc;

	if (!on && l->defer_meta && (error = store_sync(l)) < 0)
		return error;
	if ((rc = mdb_env_set_flags(l->env, MDB_NOMETASYNC, on ? 1 : 0)) != 0)
		return store_error(rc, "set MDB_NOMETASYNC");
	l->defer_meta = on != 0;
	return 0;
}

uint64_t store_commits_written(const docket_ledger *l)
{
	return atomic_load(&l->commits_written);
}

uint64_t store_commits_durable(const docket_ledger *l)
{
	return atomic_load(&l->commits_durable);
}

void store_txn_abort(docket_ledger *l, MDB_txn *txn)
{
	if (!txn)
		return;
	mdb_txn_abort(txn);
	writer_unlock(l, txn);
	pthread_rwlock_unlock(&l->resize_lock);
}

int store_grow(docket_ledger *l)
{
	size_t next;
	int rc;

	pthread_rwlock_wrlock(&l->resize_lock);
	if (l->map_size >= l->map_size_max) {
		pthread_rwlock_unlock(&l->resize_lock);
		return docket_error_set(DOCKET_EMAPFULL,
			"ledger is full: it reached its size cap of %zu bytes (nothing was written; "
			"raise the cap, e.g. with --map-max or DOCKET_MAP_MAX, to append more)", l->map_size_max);
	}
	next = l->map_size > l->map_size_max / 2 ? l->map_size_max : l->map_size * 2;
	rc = mdb_env_set_mapsize(l->env, next);
	if (rc == 0)
		l->map_size = next;
	pthread_rwlock_unlock(&l->resize_lock);
	return rc == 0 ? 0 : store_error(rc, "grow map");
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb; (void)flag; (void)ftw;
	return remove(path);
}

void store_remove_tree(const char *dir)
{
	nftw(dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
}

int store_reserve(docket_ledger *l, size_t bytes)
{
	MDB_envinfo info;
	MDB_stat st;
	size_t used, want;
	int error;

	if (mdb_env_info(l->env, &info) != 0 || mdb_env_stat(l->env, &st) != 0)
		return 0;
	used = ((size_t)info.me_last_pgno + 1) * st.ms_psize;
	want = used + bytes;
	if (want > l->map_size_max)
		want = l->map_size_max;
	while (l->map_size < want)
		if ((error = store_grow(l)) < 0)
			return error;
	return 0;
}

/*
 * The meta records every append rewrites live in LMDB's main table, the
 * one that holds the roots of the named tables: its leaf is written by
 * every commit anyway, so kept in `meta` they cost one page more per commit
 * (issue 12, fifth pass; docs/file-format.md). Every other record stays in
 * `meta`. A reader looks in the main table first, then in `meta` (a ledger
 * of an older docket, open read-only); a writable open moves them
 * (meta_relocate). "merkle" is merkle.c's frontier.
 */
static const char *const hot_meta[] = {
	"head_seq", "head_hash", "epoch", "clock_us", "payload_bytes", "frame_bytes", "merkle", "pending_count",
};

static int meta_hot(const char *name)
{
	for (size_t i = 0; i < sizeof(hot_meta) / sizeof(hot_meta[0]); i++)
		if (strcmp(name, hot_meta[i]) == 0)
			return 1;
	return 0;
}

int store_meta_get(MDB_txn *txn, docket_ledger *l, const char *name, MDB_val *out)
{
	MDB_val key = { strlen(name), (void *)name };
	int rc = meta_hot(name) ? mdb_get(txn, l->dbi.main, &key, out) : MDB_NOTFOUND;

	if (rc == MDB_NOTFOUND)
		rc = mdb_get(txn, l->dbi.meta, &key, out);
	if (rc == MDB_NOTFOUND)
		return DOCKET_ENOTFOUND;
	return rc == 0 ? 0 : store_error(rc, "read meta");
}

int store_meta_put(MDB_txn *txn, docket_ledger *l, const char *name, const void *v, size_t len)
{
	MDB_val key = { strlen(name), (void *)name };
	MDB_val val = { len, (void *)v };
	int rc = mdb_put(txn, meta_hot(name) ? l->dbi.main : l->dbi.meta, &key, &val, 0);

	return rc == 0 ? 0 : store_error(rc, "write meta");
}

int store_meta_del(MDB_txn *txn, docket_ledger *l, const char *name)
{
	MDB_val key = { strlen(name), (void *)name };
	MDB_dbi dbis[2] = { l->dbi.meta, l->dbi.main };

	for (int i = 0; i < (meta_hot(name) ? 2 : 1); i++) {
		int rc = mdb_del(txn, dbis[i], &key, NULL);

		if (rc != 0 && rc != MDB_NOTFOUND)
			return store_error(rc, "clear meta");
	}
	return 0;
}

/* Move the hot records an older docket kept in `meta` to the main table. */
static int meta_relocate(docket_ledger *l, MDB_txn *txn)
{
	for (size_t i = 0; i < sizeof(hot_meta) / sizeof(hot_meta[0]); i++) {
		MDB_val key = { strlen(hot_meta[i]), (void *)hot_meta[i] }, val;
		int rc = mdb_get(txn, l->dbi.meta, &key, &val);

		if (rc == MDB_NOTFOUND)
			continue;
		if (rc == 0)
			rc = mdb_put(txn, l->dbi.main, &key, &val, 0);
		if (rc == 0)
			rc = mdb_del(txn, l->dbi.meta, &key, NULL);
		if (rc != 0)
			return store_error(rc, "move meta");
	}
	return 0;
}

/*
 * The projections (sessions, invocations, pending, per-session index) as
 * this docket lays them out. A writable open rebuilds older ones; a
 * read-only open cannot, so a reader of them says the one command to run
 * instead of misreading a record of the older layout.
 */
int ledger_projections_current(const docket_ledger *l)
{
	if (l->projection_version >= DOCKET_PROJECTION_VERSION)
		return 0;
	return docket_error_set(DOCKET_EVERSION,
				"ledger %s has indexes written by an older docket (projection version %u, this "
				"docket reads %u): run `docket -L %s reindex`", l->path, l->projection_version,
				DOCKET_PROJECTION_VERSION, l->path);
}

int store_meta_get_u64(MDB_txn *txn, docket_ledger *l, const char *name, uint64_t *out)
{
	MDB_val val;
	int error;

	*out = 0;
	if ((error = store_meta_get(txn, l, name, &val)) < 0)
		return error == DOCKET_ENOTFOUND ? 0 : error;
	if (val.mv_size != 8)
		return docket_error_set(DOCKET_ECORRUPT, "meta %s: bad length %zu", name, val.mv_size);
	*out = docket_be64_get(val.mv_data);
	return 0;
}

int store_meta_put_u64(MDB_txn *txn, docket_ledger *l, const char *name, uint64_t v)
{
	uint8_t be[8];

	docket_be64_put(be, v);
	return store_meta_put(txn, l, name, be, sizeof(be));
}

static int open_dbis(docket_ledger *l, MDB_txn *txn, unsigned int create)
{
	int rc;
	static const struct {
		const char *name;
		size_t offset;
		unsigned int flags;
	} table[] = {
		{ "events", offsetof(ledger_dbis, events), MDB_INTEGERKEY * 0 },
		{ "dicts", offsetof(ledger_dbis, dicts), 0 },
		{ "meta", offsetof(ledger_dbis, meta), 0 },
		{ "sessions", offsetof(ledger_dbis, sessions), 0 },
		{ "session_events", offsetof(ledger_dbis, session_events), MDB_DUPSORT | MDB_DUPFIXED },
		{ "invocations", offsetof(ledger_dbis, invocations), 0 },
		{ "pending", offsetof(ledger_dbis, pending), 0 },
		{ "policies", offsetof(ledger_dbis, policies), 0 },
		{ "checkpoints", offsetof(ledger_dbis, checkpoints), 0 },
		{ "imports", offsetof(ledger_dbis, imports), 0 },
	};

	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		MDB_dbi *dbi = (MDB_dbi *)((char *)&l->dbi + table[i].offset);
		rc = mdb_dbi_open(txn, table[i].name, table[i].flags | create, dbi);
		if (rc == MDB_NOTFOUND)
			return docket_error_set(DOCKET_ECORRUPT,
				"ledger %s has no '%s' table: not a docket ledger or damaged",
				l->path, table[i].name);
		if (rc != 0)
			return store_error(rc, table[i].name);
	}
	rc = mdb_dbi_open(txn, NULL, 0, &l->dbi.main);
	return rc == 0 ? 0 : store_error(rc, "main table");
}

/* Write the meta records of a new ledger, or check those of an existing one. */
static int init_or_check_meta(docket_ledger *l, MDB_txn *txn, int writable)
{
	uint64_t version;
	MDB_val val;
	int error;

	if ((error = store_meta_get(txn, l, "format_version", &val)) == DOCKET_ENOTFOUND) {
		uint8_t id[16];

		if (!writable)
			return docket_error_set(DOCKET_ENOTFOUND, "%s is not an initialised docket ledger", l->path);
		if (RAND_bytes(id, sizeof(id)) != 1)
			return docket_error_set(DOCKET_ESTORAGE, "cannot draw a random ledger id");
		docket_hex(l->ledger_id, id, sizeof(id));
		l->format = DOCKET_FORMAT_VERSION;
		if ((error = store_meta_put_u64(txn, l, "format_version", DOCKET_FORMAT_VERSION)) < 0 ||
		    (error = store_meta_put_u64(txn, l, "projection_version", DOCKET_PROJECTION_VERSION)) < 0 ||
		    (error = store_meta_put(txn, l, "ledger_id", l->ledger_id, 32)) < 0)
			return error;
		l->projection_version = DOCKET_PROJECTION_VERSION;
		return 1;
	}
	if (error < 0)
		return error;
	if ((error = store_meta_get_u64(txn, l, "format_version", &version)) < 0)
		return error;
	if (version == 1 && !l->legacy_ok)
		return docket_error_set(DOCKET_EVERSION,
			"ledger %s is in format 1; this docket reads formats 2 and %u: convert it with "
			"`docket -L %s migrate` (every event, seq and hash is kept)",
			l->path, DOCKET_FORMAT_VERSION, l->path);
	if (version != DOCKET_FORMAT_VERSION && version != 2 && version != 1)
		return docket_error_set(DOCKET_EVERSION,
			"ledger %s has format version %llu; this docket reads versions 2 to %u",
			l->path, (unsigned long long)version, DOCKET_FORMAT_VERSION);
	l->format = (unsigned)version;
	if ((error = store_meta_get(txn, l, "ledger_id", &val)) < 0 || val.mv_size != 32)
		return error < 0 ? error : docket_error_set(DOCKET_ECORRUPT, "bad ledger id");
	memcpy(l->ledger_id, val.mv_data, 32);
	l->ledger_id[32] = '\0';
	if ((error = store_meta_get_u64(txn, l, "projection_version", &version)) == DOCKET_ENOTFOUND)
		version = 1;
	else if (error < 0)
		return error;
	l->projection_version = (unsigned)(version < UINT32_MAX ? version : UINT32_MAX);
	return writable && ledger_segmented(l) ? meta_relocate(l, txn) : 0;
}

/*
 * The structure LMDB trusts, checked before LMDB maps the file (issue 11).
 * LMDB dereferences its pages without bounds checks: a data file cut short
 * gives SIGBUS when a page past its end is touched, a damaged meta page
 * sends it anywhere. So before mdb_env_open, read both meta pages (LMDB
 * 0.9 layout, host byte order, docs/file-format.md) and refuse a file whose
 * meta pages are not LMDB's, whose newest meta names a last page beyond
 * the end of the file, or whose roots lie past that last page. What this
 * cannot see (a damaged interior page) is caught where the reading runs:
 * verify reads in a child process, and so does every other command but
 * serve (cli_run, docs/audit.md).
 */
#define LMDB_MAGIC 0xBEEFC0DEu
#define LMDB_DATA_VERSION 1u
#define LMDB_P_META 0x08u
#define LMDB_PAGEHDR 16u
#define LMDB_P_INVALID (~(uint64_t)0)

typedef struct lmdb_meta {
	uint32_t magic, version, psize;
	uint16_t page_flags;
	uint64_t mapsize, free_root, main_root, last_pg, txnid;
} lmdb_meta;

static uint64_t host64_at(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static uint32_t host32_at(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

/* One meta page at `off`; 0, or -1 when it cannot be read whole. */
static int meta_read(int fd, off_t off, lmdb_meta *m)
{
	uint8_t b[LMDB_PAGEHDR + 136];
	const uint8_t *mm = b + LMDB_PAGEHDR;
	uint16_t flags;

	if (pread(fd, b, sizeof(b), off) != (ssize_t)sizeof(b))
		return -1;
	memcpy(&flags, b + 10, 2);
	m->page_flags = flags;
	m->magic = host32_at(mm);
	m->version = host32_at(mm + 4);
	m->mapsize = host64_at(mm + 16);
	/* mm_dbs[0] (free DB) at 24, mm_dbs[1] (main DB) at 72, 48 bytes each;
	 * the page size is kept in the free DB's md_pad, its root at +40 */
	m->psize = host32_at(mm + 24);
	m->free_root = host64_at(mm + 24 + 40);
	m->main_root = host64_at(mm + 72 + 40);
	m->last_pg = host64_at(mm + 120);
	m->txnid = host64_at(mm + 128);
	return 0;
}

static int meta_sane(const lmdb_meta *m)
{
	return (m->page_flags & LMDB_P_META) && m->magic == LMDB_MAGIC && m->version == LMDB_DATA_VERSION;
}

int store_check_file(const char *datafile)
{
	lmdb_meta m[2];
	struct stat st;
	uint64_t size;
	const lmdb_meta *cur;
	int fd, error = 0;

	if ((fd = open(datafile, O_RDONLY | O_CLOEXEC)) < 0)
		return errno == ENOENT ? DOCKET_ENOTFOUND
				       : docket_error_set(DOCKET_ESTORAGE, "%s: %s", datafile, strerror(errno));
	if (fstat(fd, &st) != 0) {
		error = docket_error_set(DOCKET_ESTORAGE, "%s: %s", datafile, strerror(errno));
		goto done;
	}
	size = (uint64_t)st.st_size;
	if (meta_read(fd, 0, &m[0]) < 0 || !meta_sane(&m[0])) {
		error = docket_error_set(DOCKET_ECORRUPT, "the data file is corrupt: %s %s", datafile,
					 size < 4096 ? "is truncated (shorter than its first page)"
						     : "does not start with an LMDB meta page");
		goto done;
	}
	if (m[0].psize < 512 || m[0].psize > 65536 || (m[0].psize & (m[0].psize - 1)) != 0) {
		error = docket_error_set(DOCKET_ECORRUPT, "the data file is corrupt: %s names a page size of %u",
					 datafile, m[0].psize);
		goto done;
	}
	if (meta_read(fd, (off_t)m[0].psize, &m[1]) < 0 || !meta_sane(&m[1])) {
		error = docket_error_set(DOCKET_ECORRUPT, "the data file is corrupt: %s %s", datafile,
					 size < 2 * (uint64_t)m[0].psize ? "is truncated (shorter than its two meta pages)"
									 : "has a damaged second meta page");
		goto done;
	}
	cur = m[1].txnid > m[0].txnid ? &m[1] : &m[0];
	if (cur->last_pg >= (UINT64_MAX / m[0].psize) - 1 || (cur->last_pg + 1) * m[0].psize > size) {
		error = docket_error_set(DOCKET_ECORRUPT,
			"the data file is corrupt: %s is truncated or its meta page is damaged "
			"(the file has %llu bytes, its last page ends at byte %llu)", datafile,
			(unsigned long long)size, (unsigned long long)(cur->last_pg + 1) * m[0].psize);
		goto done;
	}
	if ((cur->main_root != LMDB_P_INVALID && cur->main_root > cur->last_pg) ||
	    (cur->free_root != LMDB_P_INVALID && cur->free_root > cur->last_pg) ||
	    cur->mapsize < (cur->last_pg + 1) * m[0].psize)
		error = docket_error_set(DOCKET_ECORRUPT,
			"the data file is corrupt: %s has a damaged meta page (a root or the map size "
			"lies outside the file)", datafile);
done:
	close(fd);
	return error;
}

/* mkdir -p, every directory it creates 0700. */
static int make_dirs(const char *path)
{
	char buf[4096];
	size_t len = strlen(path);

	if (len == 0 || len >= sizeof(buf))
		return docket_error_set(DOCKET_EINVALID, "bad ledger path");
	memcpy(buf, path, len + 1);
	for (size_t i = 1; i <= len; i++) {
		if (buf[i] != '/' && buf[i] != '\0')
			continue;
		buf[i] = '\0';
		if (mkdir(buf, 0700) != 0 && errno != EEXIST)
			return docket_error_set(DOCKET_ESTORAGE, "cannot create %s: %s", buf, strerror(errno));
		buf[i] = path[i];
	}
	return 0;
}

/* ---- who may change the ledger (issue 28) ---- */

/*
 * A ledger is trusted only when nobody but its user (or root) can change it:
 * whoever can write its directory or files can rewrite history before the
 * next checkpoint, and whoever can replace it (its parent's owner, anyone
 * in a world-writable parent without the sticky bit, the owner of a
 * symbolic link to it) can hand docket another ledger. store_check_trust
 * refuses, with a message that says why:
 *   - a symbolic link (the last component) owned by another user;
 *   - a ledger directory (the link's target) that is not a directory, is
 *     owned by another user (writable opens; read-only opens accept
 *     another owner, e.g. an auditor reading a colleague's ledger), or is
 *     writable by group or others;
 *   - a parent directory (of the resolved path) owned by another user, or
 *     writable by others without the sticky bit;
 *   - an entry in the ledger directory that is a symbolic link, is owned by
 *     another user (writable opens) or is writable by group or others.
 * "Another user" is neither `uid` nor root. ENOENT is left to the caller.
 */
#define TRUST_PATH_MAX 4096

static int trusted_owner(uid_t owner, uid_t uid)
{
	return owner == uid || owner == 0;
}

static int check_link(const char *path, uid_t uid)
{
	struct stat st;

	if (lstat(path, &st) != 0)
		return errno == ENOENT ? DOCKET_ENOTFOUND : docket_error_set(DOCKET_ESTORAGE, "%s: %s", path, strerror(errno));
	if (S_ISLNK(st.st_mode) && !trusted_owner(st.st_uid, uid))
		return docket_error_set(DOCKET_ESTORAGE, "refusing ledger %s: it is a symbolic link owned by uid %lu "
					"(you are uid %lu): its owner can point it at another ledger",
					path, (unsigned long)st.st_uid, (unsigned long)uid);
	return 0;
}

static int check_parent(const char *path, const char *real, uid_t uid)
{
	char parent[TRUST_PATH_MAX];
	const char *slash = strrchr(real, '/');
	struct stat st;

	snprintf(parent, sizeof(parent), "%.*s", slash && slash != real ? (int)(slash - real) : 1, real);
	if (stat(parent, &st) != 0)
		return docket_error_set(DOCKET_ESTORAGE, "%s: %s", parent, strerror(errno));
	if (!trusted_owner(st.st_uid, uid))
		return docket_error_set(DOCKET_ESTORAGE, "refusing ledger %s: it is in %s, which uid %lu owns "
					"(you are uid %lu): that user can replace the ledger; move it to a directory of yours",
					path, parent, (unsigned long)st.st_uid, (unsigned long)uid);
	if ((st.st_mode & S_IWOTH) && !(st.st_mode & S_ISVTX))
		return docket_error_set(DOCKET_ESTORAGE, "refusing ledger %s: it is in %s, which anyone can write "
					"(mode %04o, no sticky bit): anyone can replace the ledger",
					path, parent, (unsigned)(st.st_mode & 07777));
	return 0;
}

/* The directory and each entry in it. */
static int check_node(const char *path, const char *what, const struct stat *st, uid_t uid, int writable)
{
	char name[TRUST_PATH_MAX + 64];

	snprintf(name, sizeof(name), "%s%s%s", path, what ? "/" : "", what ? what : "");
	if (S_ISLNK(st->st_mode))
		return docket_error_set(DOCKET_ESTORAGE, "refusing ledger %s: %s is a symbolic link: a ledger's "
					"files are its own", path, name);
	if (writable && !trusted_owner(st->st_uid, uid))
		return docket_error_set(DOCKET_ESTORAGE, "refusing ledger %s: %s is owned by uid %lu (you are uid "
					"%lu): its owner can change the log under you", path, name,
					(unsigned long)st->st_uid, (unsigned long)uid);
	if (st->st_mode & (S_IWGRP | S_IWOTH))
		return docket_error_set(DOCKET_ESTORAGE, "refusing ledger %s: %s is writable by %s (mode %04o): "
					"they can rewrite the log; chmod go-w %s", path, name,
					(st->st_mode & S_IWOTH) ? "others" : "its group", (unsigned)(st->st_mode & 07777), name);
	return 0;
}

static int check_entries(const char *path, const char *real, uid_t uid, int writable)
{
	struct dirent *de;
	struct stat st;
	DIR *d;
	int error = 0;

	if (!(d = opendir(real)))
		return errno == EACCES && !writable ? 0 : docket_error_set(DOCKET_ESTORAGE, "%s: %s", path, strerror(errno));
	while (error == 0 && (de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
			continue;   /* gone meanwhile (a temporary lock file) */
		error = check_node(path, de->d_name, &st, uid, writable);
	}
	closedir(d);
	return error;
}

int store_check_trust(const char *path, uid_t uid, int writable)
{
	char *real = NULL;
	struct stat st;
	int error;

	if ((error = check_link(path, uid)) < 0)
		return error;
	if (!(real = realpath(path, NULL)))
		return errno == ENOENT && lstat(path, &st) == 0 && S_ISLNK(st.st_mode)
			? docket_error_set(DOCKET_ESTORAGE, "refusing ledger %s: it is a symbolic link to a directory "
					   "that does not exist; docket does not create ledgers through links (create "
					   "the directory, or give its real path)", path)
			: docket_error_set(DOCKET_ESTORAGE, "%s: %s", path, strerror(errno));
	if (stat(real, &st) != 0)
		error = docket_error_set(DOCKET_ESTORAGE, "%s: %s", path, strerror(errno));
	else if (!S_ISDIR(st.st_mode))
		error = docket_error_set(DOCKET_ESTORAGE, "%s exists and is not a directory", path);
	if (error == 0 && (error = check_node(path, NULL, &st, uid, writable)) == 0 &&
	    (error = check_parent(path, real, uid)) == 0)
		error = check_entries(path, real, uid, writable);
	free(real);
	return error;
}

static int make_dir(const char *path, int create, int *made)
{
	struct stat st;

	*made = 0;
	if (stat(path, &st) == 0) {
		if (!S_ISDIR(st.st_mode))
			return docket_error_set(DOCKET_ESTORAGE, "%s exists and is not a directory", path);
		return 0;
	}
	if (errno != ENOENT)
		return docket_error_set(DOCKET_ESTORAGE, "%s: %s", path, strerror(errno));
	if (!create)
		return docket_error_set(DOCKET_ENOTFOUND, "no ledger at %s (run `docket init`)", path);
	if (lstat(path, &st) == 0)
		return 0;   /* a dangling link: store_check_trust says why not */
	*made = 1;
	return make_dirs(path);
}

/*
 * A read-only open LMDB refused because it cannot write the lock file
 * (a read-only directory or file system, another user's ledger): can it be
 * read without one (MDB_NOLOCK)? Only when no writer can exist: the file
 * system is read-only, or nobody may write data.mdb (no write bit), or the
 * lock file is readable and no process holds LMDB's lock on it (every open
 * environment holds one). 1 yes, 0 no (`why` says why not).
 */
static int no_writer_possible(const char *path, char *why, size_t n)
{
	char file[4096];
	struct statvfs vfs;
	struct flock lk;
	struct stat st;
	int fd, busy;

	if (statvfs(path, &vfs) == 0 && (vfs.f_flag & ST_RDONLY))
		return 1;
	snprintf(file, sizeof(file), "%s/data.mdb", path);
	if (stat(file, &st) == 0 && (st.st_mode & 0222) == 0)
		return 1;
	snprintf(file, sizeof(file), "%s/lock.mdb", path);
	if ((fd = open(file, O_RDONLY | O_CLOEXEC)) < 0) {
		if (errno == ENOENT)
			return 1;
		snprintf(why, n, "its lock file cannot be read (%s), so docket cannot tell whether "
			 "a writer is using it", strerror(errno));
		return 0;
	}
	memset(&lk, 0, sizeof(lk));
	lk.l_type = F_WRLCK;
	lk.l_whence = SEEK_SET;
	lk.l_len = 1;
	busy = fcntl(fd, F_GETLK, &lk) != 0 || lk.l_type != F_UNLCK;
	close(fd);
	if (busy)
		snprintf(why, n, "another process (pid %ld) has it open and you cannot share its lock file",
			 (long)lk.l_pid);
	return !busy;
}

/*
 * LMDB maps its lock file after growing it with ftruncate: on a full file
 * system the pages of that sparse file cannot be allocated and the first
 * touch is SIGBUS (seen with verify's scratch copy on a full tmpfs). So a
 * missing lock file is made here first, its blocks allocated for real, and
 * linked into place whole (link fails if another process made one
 * meanwhile; that one is used). 16 KiB holds LMDB's default reader table;
 * LMDB sizes its table from the file. A directory docket cannot write is
 * left to LMDB (read-only opens, env_open).
 */
#define LOCK_FILE_BYTES 16384

static int lock_file_prepare(const char *dir)
{
	char lock[4096], tmp[4096];
	int fd, rc;

	snprintf(lock, sizeof(lock), "%s/lock.mdb", dir);
	if (access(lock, F_OK) == 0 || errno != ENOENT)
		return 0;
	snprintf(tmp, sizeof(tmp), "%s/lock.mdb.XXXXXX", dir);
	if ((fd = mkstemp(tmp)) < 0)
		return 0;
	rc = posix_fallocate(fd, 0, LOCK_FILE_BYTES);
	close(fd);
	if (rc == 0 && link(tmp, lock) != 0 && errno != EEXIST)
		rc = errno;
	unlink(tmp);
	if (rc == ENOSPC || rc == EDQUOT)
		return docket_error_set(DOCKET_ESTORAGE,
			"no space left on device: cannot create the lock file of %s; free some space, "
			"then retry", dir);
	return 0;
}

static int env_open(docket_ledger *l, int readonly)
{
	char why[256] = "";
	int rc;

	if ((rc = lock_file_prepare(l->path)) < 0)
		return rc;
	rc = mdb_env_open(l->env, l->path, MDB_NOTLS | (readonly ? MDB_RDONLY : 0), 0600);
	if (rc == 0)
		return 0;
	if (!readonly && (rc == EACCES || rc == EROFS || rc == EPERM))
		return docket_error_set(DOCKET_ESTORAGE, "%s: %s (writing to a ledger needs write access "
					"to its directory and files)", l->path, mdb_strerror(rc));
	if (!readonly || (rc != EACCES && rc != EROFS && rc != EPERM))
		return store_error(rc, l->path);
	if (!no_writer_possible(l->path, why, sizeof(why)))
		return docket_error_set(DOCKET_ESTORAGE,
			"%s: LMDB needs to write its lock file (%s) and %s; ask the ledger's owner for "
			"write access to the directory, or read a copy of it (cp -r)",
			l->path, mdb_strerror(rc), why);
	/* nobody can write the ledger: read it without the lock file */
	mdb_env_close(l->env);
	l->env = NULL;
	if ((rc = mdb_env_create(&l->env)) != 0 || (rc = mdb_env_set_maxdbs(l->env, 16)) != 0 ||
	    (rc = mdb_env_set_mapsize(l->env, l->map_size)) != 0 ||
	    (rc = mdb_env_open(l->env, l->path, MDB_NOTLS | MDB_RDONLY | MDB_NOLOCK, 0600)) != 0)
		return store_error(rc, l->path);
	l->nolock = 1;
	return 0;
}

/* 0 when an existing ledger opened fully in a read transaction (nothing
 * to create, no meta record to move); otherwise nothing is kept and the
 * caller takes the write transaction. */
static int open_without_writer(docket_ledger *l)
{
	MDB_txn *txn = NULL;
	MDB_val v;
	int error;

	if ((error = store_txn_begin(&txn, l, MDB_RDONLY)) < 0) {
		docket_error_clear();
		return -1;
	}
	error = open_dbis(l, txn, 0);
	if (error == 0)
		error = merkle_open(l, txn, 0);
	if (error == 0 && !l->has_tree)
		error = -1;
	if (error == 0)
		error = init_or_check_meta(l, txn, 0);
	if (error == 0 && !ledger_segmented(l))
		error = -1;
	for (size_t i = 0; error == 0 && i < sizeof(hot_meta) / sizeof(hot_meta[0]); i++) {
		MDB_val key = { strlen(hot_meta[i]), (void *)hot_meta[i] };

		if (mdb_get(txn, l->dbi.meta, &key, &v) != MDB_NOTFOUND)
			error = -1;  /* meta_relocate has work to do */
	}
	if (error < 0) {
		store_txn_abort(l, txn);
		docket_error_clear();
		return -1;
	}
	/* commit, not abort: aborting would close the DBI handles it opened */
	if ((error = store_txn_commit(l, txn)) < 0)
		docket_error_clear();
	return error;
}

static int ledger_setup(docket_ledger *l, const docket_open_options *opts)
{
	int create = (opts->flags & DOCKET_OPEN_CREATE) != 0;
	int readonly = (opts->flags & DOCKET_OPEN_READONLY) != 0;
	char datafile[4096];
	struct stat st;
	MDB_txn *txn = NULL;
	MDB_envinfo info;
	int rc, error, dead = 0, made = 0;

	if ((error = make_dir(l->path, create && !readonly, &made)) < 0)
		return error;
	if ((error = store_check_trust(l->path, geteuid(), !readonly)) < 0) {
		if (made)
			rmdir(l->path);   /* just made, empty: leave nothing in a place refused */
		return error;
	}
	snprintf(datafile, sizeof(datafile), "%s/data.mdb", l->path);
	if (stat(datafile, &st) != 0) {
		if (errno != ENOENT)
			return docket_error_set(DOCKET_ESTORAGE, "cannot read %s: %s", datafile, strerror(errno));
		if (!(create && !readonly))
			return docket_error_set(DOCKET_ENOTFOUND, "no ledger at %s (run `docket init`)", l->path);
		st.st_size = 0;   /* to be created: nothing to open without the writer */
	} else if ((st.st_size > 0 || !create) && (error = store_check_file(datafile)) < 0) {
		return error;
	}

	if ((rc = mdb_env_create(&l->env)) != 0)
		return store_error(rc, "create environment");
	if ((rc = mdb_env_set_maxdbs(l->env, 16)) != 0 ||
	    (rc = mdb_env_set_mapsize(l->env, l->map_size)) != 0)
		return store_error(rc, "configure environment");
	if ((error = env_open(l, readonly)) < 0)
		return error;
	if (!l->nolock)
		mdb_reader_check(l->env, &dead);
	l->reader_checked_ms = now_ms();
	mdb_env_info(l->env, &info);
	l->map_size = info.me_mapsize;
	if (l->map_size > l->map_size_max)
		l->map_size_max = l->map_size;

	/*
	 * A ledger that has everything this docket needs is opened in a read
	 * transaction: a hook must be able to open it while another writer
	 * holds the writer lock (docs/write-path.md §3). Anything to create or
	 * move takes the write transaction below.
	 */
	if (!readonly && st.st_size > 0 && open_without_writer(l) == 0) {
		l->ready = 1;
		return 0;
	}
	if ((error = store_txn_begin(&txn, l, readonly ? MDB_RDONLY : 0)) < 0)
		return error;
	if ((error = open_dbis(l, txn, readonly ? 0 : MDB_CREATE)) < 0 ||
	    (error = merkle_open(l, txn, !readonly)) < 0 ||
	    (error = init_or_check_meta(l, txn, !readonly)) < 0) {
		store_txn_abort(l, txn);
		return error;
	}
	/* Commit even a read-only transaction: aborting it would close the DBI
	 * handles it opened. */
	if ((error = store_txn_commit(l, txn)) == 0)
		l->ready = 1;
	return error;
}

int ledger_open_ex(docket_ledger **out, const char *path, const docket_open_options *opts, int legacy_ok)
{
	docket_open_options defaults = DOCKET_OPEN_OPTIONS_INIT;
	docket_ledger *l;
	int error;

	*out = NULL;
	if (!opts)
		opts = &defaults;
	if (opts->version != DOCKET_OPEN_OPTIONS_VERSION)
		return docket_error_set(DOCKET_EINVALID, "unsupported docket_open_options version %u", opts->version);
	if (!(l = docket_calloc(1, sizeof(*l))))
		return docket_error_set_oom();
	pthread_rwlock_init(&l->resize_lock, NULL);
	pthread_mutex_init(&l->sync_lock, NULL);
	atomic_init(&l->wlock_fd, -1);
	l->flags = opts->flags;
	l->legacy_ok = legacy_ok;
	l->reader_check_ms = READER_CHECK_MS;
	l->map_size = opts->map_size ? opts->map_size : DEFAULT_MAP_SIZE;
	l->map_size_max = opts->map_size_max ? opts->map_size_max : DEFAULT_MAP_MAX;
	if (l->map_size > l->map_size_max)
		l->map_size = l->map_size_max;
	if (!(l->path = docket_strdup(path))) {
		error = docket_error_set_oom();
		goto fail;
	}
	if ((error = codec_init(&l->codec)) < 0 || (error = ledger_setup(l, opts)) < 0)
		goto fail;
	/* projections of an older docket lack fields the transitions read:
	 * rebuild them before anything is appended */
	if (!(opts->flags & DOCKET_OPEN_READONLY) && ledger_segmented(l) &&
	    l->projection_version < DOCKET_PROJECTION_VERSION && (error = docket_ledger_reindex(l)) < 0)
		goto fail;
	*out = l;
	return 0;
fail:
	docket_ledger_free(l);
	return error;
}

int docket_ledger_open(docket_ledger **out, const char *path, const docket_open_options *opts)
{
	return ledger_open_ex(out, path, opts, 0);
}

void docket_ledger_free(docket_ledger *l)
{
	if (!l)
		return;
	if (l->env && l->defer_meta && store_sync(l) < 0)
		docket_error_clear(); /* closing: the owner synced (and answered) already */
	if (l->env)
		mdb_env_close(l->env);
	codec_dispose(&l->codec);
	if (atomic_load(&l->wlock_fd) >= 0)
		close(atomic_load(&l->wlock_fd));
	pthread_rwlock_destroy(&l->resize_lock);
	pthread_mutex_destroy(&l->sync_lock);
	docket_free(l->path);
	docket_free(l);
}

/* ---- the friend API's view of a ledger (ledger_sys.h) ---- */

MDB_dbi ledger_table_dbi(const docket_ledger *l, ledger_table t)
{
	return t == LEDGER_TABLE_CHECKPOINTS ? l->dbi.checkpoints : l->dbi.session_events;
}

const char *ledger_id(const docket_ledger *l)
{
	return l->ledger_id;
}

const char *ledger_path(const docket_ledger *l)
{
	return l->path;
}

int ledger_readonly(const docket_ledger *l)
{
	return (l->flags & DOCKET_OPEN_READONLY) != 0;
}

int ledger_reader_check(docket_ledger *l, int *dead)
{
	int rc = mdb_reader_check(l->env, dead);

	if (rc != 0)
		return store_error(rc, "reader check");
	/* with the slots the timed check (reader_check_due) cleared since */
	*dead += __atomic_exchange_n(&l->readers_cleared, 0, __ATOMIC_RELAXED);
	return 0;
}
