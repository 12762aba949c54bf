/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tiles.c: `docket export --format tlog-tiles DIR`: the ledger's Merkle tree
 * as the C2SP tlog-tiles static layout (docs/audit.md "Publishing as tiles"),
 * for the tree size of the newest signed checkpoint:
 *
 *   DIR/checkpoint                  the checkpoint's signed note
 *   DIR/tile/<L>/<N>[.p/<W>]        hash tiles of height 8: level 0 holds
 *                                   leaf hashes, level L >= 1 the stored
 *                                   tree nodes of level 8L (ledger/merkle.c)
 *   DIR/tile/entries/<N>[.p/<W>]    entry bundles: be16 length || stored
 *                                   event bytes (the bytes of the leaf hash)
 *
 * <N> in 3-digit groups, all but the last prefixed with 'x' (1234067 ->
 * x001/x234/067); .p/<W> is a partial tile of W < 256 hashes.
 *
 * Updating a previous export of the same origin writes only what changed:
 * the full tiles past the old checkpoint, the new partial tiles, then the
 * checkpoint. Tiles are immutable, so older partial tiles stay (the spec lets
 * a log delete them; clients holding an older checkpoint may still want
 * them). Every file goes in through a temporary file and a rename; all of
 * them are on disk (syncfs) before the new checkpoint replaces the old one,
 * which is synced with its directory: a crash leaves the old, complete
 * export. Files are 0600 and directories 0700 like the ledger (the bundles
 * hold the events verbatim): publishing is a deliberate step.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "checkpoint.h"
#include "docket/export.h"
#include "docket/tlog.h"
#include "ledger/ledger_sys.h"
#include "util/alloc.h"
#include "util/error.h"
#include "util/file.h"
#include "audit/note.h"

#define TILE_HEIGHT 8
#define TILE_WIDTH 256u
#define TILE_LEVELS 8          /* 8 * 8 = 64 tree levels */
#define ENTRY_MAX 65535u       /* a bundle's length prefix is a big-endian uint16 */
#define TILE_PATH_MAX 128

typedef struct tiles_ctx {
	docket_ledger *l;
	const char *dir;
	int dfd;
	MDB_txn *txn;
	ledger_reader r;
	uint64_t size;                /* the checkpoint's tree size */
	docket_buf bundle;
	uint8_t hash[TILE_WIDTH][DOCKET_TLOG_HASH_LEN];
	char made[TILE_PATH_MAX];     /* the directory made last */
	docket_tiles_stats *stats;
} tiles_ctx;

/* ---- paths ---- */

/* "tile/<L>/<N>[.p/<W>]", or with level < 0 "tile/entries/<N>[.p/<W>]". */
static int tile_path(char *out, size_t cap, int level, uint64_t n, unsigned width)
{
	char digits[24];
	size_t len = 0, nd;
	int w;

	w = level < 0 ? snprintf(out, cap, "tile/entries/") : snprintf(out, cap, "tile/%d/", level);
	if (w < 0 || (size_t)w >= cap)
		return docket_error_set(DOCKET_ERROR, "tile path too long");
	len = (size_t)w;
	nd = (size_t)snprintf(digits, sizeof(digits), "%llu", (unsigned long long)n);
	for (size_t group = (nd + 2) / 3, i = 0; group > 0; group--) {
		size_t take = nd - i - (group - 1) * 3;   /* the digits of this group */

		w = snprintf(out + len, cap - len, "%s%.*s%.*s%s", group > 1 ? "x" : "", (int)(3 - take), "00",
			     (int)take, digits + i, group > 1 ? "/" : "");
		if (w < 0 || (size_t)w >= cap - len)
			return docket_error_set(DOCKET_ERROR, "tile path too long");
		len += (size_t)w;
		i += take;
	}
	if (width < TILE_WIDTH) {
		w = snprintf(out + len, cap - len, ".p/%u", width);
		if (w < 0 || (size_t)w >= cap - len)
			return docket_error_set(DOCKET_ERROR, "tile path too long");
	}
	return 0;
}

/* mkdir -p of the directories of `path` (relative to DIR), 0700. */
static int make_parents(tiles_ctx *t, const char *path)
{
	char buf[TILE_PATH_MAX];
	const char *slash = strrchr(path, '/');
	size_t len = slash ? (size_t)(slash - path) : 0;

	if (len == 0 || (strlen(t->made) == len && memcmp(t->made, path, len) == 0))
		return 0;
	memcpy(buf, path, len);
	buf[len] = '\0';
	for (size_t i = 1; i <= len; i++) {
		if (buf[i] != '/' && buf[i] != '\0')
			continue;
		buf[i] = '\0';
		if (mkdirat(t->dfd, buf, 0700) != 0 && errno != EEXIST)
			return docket_error_set(DOCKET_ESTORAGE, "cannot create %s/%s: %s", t->dir, buf,
						strerror(errno));
		buf[i] = path[i];
	}
	memcpy(t->made, path, len);
	t->made[len] = '\0';
	return 0;
}

/* Write `path` (relative to DIR) through ".<name>.tmp" beside it and a
 * rename; with `sync`, the file is fsynced before the rename. */
static int put_file(tiles_ctx *t, const char *path, const void *data, size_t len, int sync)
{
	char tmp[TILE_PATH_MAX + 8];
	const char *slash = strrchr(path, '/');
	size_t dirlen = slash ? (size_t)(slash - path) + 1 : 0;
	int fd, bad, error;

	if ((error = make_parents(t, path)) < 0)
		return error;
	if ((size_t)snprintf(tmp, sizeof(tmp), "%.*s.%s.tmp", (int)dirlen, path, path + dirlen) >= sizeof(tmp))
		return docket_error_set(DOCKET_ERROR, "tile path too long");
	if ((fd = openat(t->dfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600)) < 0)
		return docket_error_set(DOCKET_ESTORAGE, "cannot write %s/%s: %s", t->dir, tmp, strerror(errno));
	bad = fchmod(fd, 0600) != 0 || docket_write_all(fd, data, len) != 0 || (sync && fsync(fd) != 0);
	bad |= close(fd) != 0;
	if (bad || renameat(t->dfd, tmp, t->dfd, path) != 0) {
		int e = errno;

		(void)unlinkat(t->dfd, tmp, 0);
		return docket_error_set(DOCKET_ESTORAGE, "cannot write %s/%s: %s", t->dir, path, strerror(e));
	}
	return 0;
}

/* ---- the previous export ---- */

/* The tree head of a signed checkpoint note (syntax only). */
static int note_head(docket_note_checkpoint *out, const char *text, size_t len)
{
	note_msg *n = docket_malloc(sizeof(*n));
	int error;

	if (!n)
		return docket_error_set_oom();
	if ((error = note_parse(n, text, len)) == 0)
		error = note_checkpoint_parse(out, NULL, (const char *)n->text.ptr, n->text.len);
	docket_free(n);
	return error;
}

/* DIR holds nothing but what an export writes ("checkpoint", "tile", the
 * checkpoint's temporary file): 0, *has_checkpoint set; else DOCKET_EEXISTS. */
static int check_entries(tiles_ctx *t, int *has_checkpoint)
{
	int fd = dup(t->dfd), has_tile = 0, error = 0;
	struct dirent *e;
	DIR *d;

	*has_checkpoint = 0;
	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return docket_error_set(DOCKET_ESTORAGE, "cannot read %s: %s", t->dir, strerror(errno));
	}
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
		    strcmp(e->d_name, ".checkpoint.tmp") == 0)
			continue;
		if (strcmp(e->d_name, "checkpoint") == 0) {
			*has_checkpoint = 1;
		} else if (strcmp(e->d_name, "tile") == 0) {
			has_tile = 1;
		} else {
			error = docket_error_set(DOCKET_EEXISTS, "%s is not empty and holds no tlog-tiles export "
						 "(it has '%s'): name a new or empty directory", t->dir, e->d_name);
			break;
		}
	}
	closedir(d);
	if (error == 0 && has_tile && !*has_checkpoint)
		error = docket_error_set(DOCKET_EEXISTS, "%s has tile/ but no checkpoint: it is not a complete "
					 "tlog-tiles export; name a new or empty directory", t->dir);
	return error;
}

/* The size of the previous export in DIR (0: none), checked to be a prefix
 * of this ledger's tree of the same origin. */
static int previous_size(uint64_t *out, tiles_ctx *t, const char *origin)
{
	docket_buf path = DOCKET_BUF_INIT, text = DOCKET_BUF_INIT;
	docket_note_checkpoint old;
	uint8_t root[DOCKET_TLOG_HASH_LEN];
	int has, error;

	*out = 0;
	if ((error = check_entries(t, &has)) < 0 || !has)
		return error;
	if ((error = docket_buf_printf(&path, "%s/checkpoint", t->dir)) < 0 ||
	    (error = audit_read_file(&text, path.ptr, NOTE_MAX_LEN)) < 0)
		goto cleanup;
	if ((error = note_head(&old, text.ptr, text.len)) < 0) {
		char why[256];

		snprintf(why, sizeof(why), "%.200s", docket_error_last()->message);
		error = docket_error_set(DOCKET_EEXISTS, "%s is not a checkpoint note (%s): %s holds no "
					 "tlog-tiles export; name a new or empty directory", path.ptr, why, t->dir);
		goto cleanup;
	}
	if (strcmp(old.origin, origin) != 0) {
		error = docket_error_set(DOCKET_ECONFLICT, "%s holds the tlog-tiles export of another log (%s), "
					 "not of this ledger (%s)", t->dir, old.origin, origin);
		goto cleanup;
	}
	if (old.size > t->size) {
		error = docket_error_set(DOCKET_ECONFLICT, "%s holds a checkpoint of size %llu, newer than this "
					 "ledger's newest checkpoint (size %llu)", t->dir,
					 (unsigned long long)old.size, (unsigned long long)t->size);
		goto cleanup;
	}
	if (old.size > 0 && (error = docket_tlog_root_at(root, t->l, old.size)) == 0 &&
	    memcmp(root, old.root, sizeof(root)) != 0)
		error = docket_error_set(DOCKET_ECONFLICT, "the checkpoint in %s (size %llu) has another root "
					 "than this ledger's tree at that size: a fork, or the ledger was "
					 "rewritten; its tiles cannot be updated", t->dir,
					 (unsigned long long)old.size);
	if (error == 0)
		*out = old.size;
cleanup:
	docket_buf_dispose(&path);
	docket_buf_dispose(&text);
	return error;
}

/* ---- tiles ---- */

/* Every event of [first, end) fits a bundle entry (checked before anything is
 * written: the lengths are in the segment headers, nothing is decompressed). */
static int check_lengths(tiles_ctx *t, uint64_t first, uint64_t end)
{
	for (uint64_t seq = first + 1; seq <= end;) {
		int error = reader_seek(&t->r, seq);

		if (error < 0)
			return error;
		for (; seq <= end && seq - t->r.first < t->r.count; seq++)
			if (t->r.lens[seq - t->r.first] > ENTRY_MAX)
				return docket_error_set(DOCKET_EINVALID, "event %llu is %u bytes: a tlog-tiles entry "
							"bundle holds entries of at most %u bytes (a big-endian "
							"uint16 length), so this ledger cannot be published as tiles",
							(unsigned long long)seq, (unsigned)t->r.lens[seq - t->r.first],
							ENTRY_MAX);
	}
	return 0;
}

static int array_leaf(void *ctx, uint64_t index, uint8_t out[DOCKET_TLOG_HASH_LEN])
{
	const tiles_ctx *t = ctx;

	memcpy(out, t->hash[index], DOCKET_TLOG_HASH_LEN);
	return 0;
}

/* A full tile at `level` hashes to the stored node above it (of level
 * 8 * (level + 1)): the events, the stored tree and the tiles agree. */
static int check_full(tiles_ctx *t, unsigned level, uint64_t n)
{
	merkle_src src = { array_leaf, NULL, t };
	uint8_t mth[DOCKET_TLOG_HASH_LEN], stored[DOCKET_TLOG_HASH_LEN];
	int error;

	if (TILE_HEIGHT * (level + 1) >= 64)
		return 0;
	if ((error = merkle_mth(&src, 0, TILE_WIDTH, mth)) < 0 ||
	    (error = merkle_node_get(t->l, t->txn, TILE_HEIGHT * (level + 1), n, stored)) < 0)
		return error;
	if (memcmp(mth, stored, sizeof(mth)) != 0)
		return docket_error_set(DOCKET_ECORRUPT, "tile %u/%llu does not hash to the stored Merkle tree "
					"node above it: run `docket verify`", level, (unsigned long long)n);
	return 0;
}

/* Level 0: the leaf hashes and the entry bundle of tile n. */
static int leaf_tile(tiles_ctx *t, uint64_t n, unsigned width)
{
	docket_buf_clear(&t->bundle);
	for (unsigned i = 0; i < width; i++) {
		uint64_t seq = n * TILE_WIDTH + i + 1;
		const uint8_t *p;
		uint8_t be[2];
		size_t len;
		int error;

		if ((error = reader_payload(&t->r, seq, &p, &len)) < 0)
			return error == DOCKET_ENOTFOUND ? docket_error_set(DOCKET_ECORRUPT, "event %llu is missing",
									    (unsigned long long)seq) : error;
		if (len > ENTRY_MAX)
			return docket_error_set(DOCKET_EINVALID, "event %llu is larger than a tlog-tiles entry",
						(unsigned long long)seq);
		docket_tlog_leaf_hash(t->hash[i], p, len);
		be[0] = (uint8_t)(len >> 8);
		be[1] = (uint8_t)len;
		if ((error = docket_buf_put(&t->bundle, be, 2)) < 0 || (error = docket_buf_put(&t->bundle, p, len)) < 0)
			return error;
	}
	return 0;
}

/* Level >= 1: the stored nodes of level 8 * level. */
static int node_tile(tiles_ctx *t, unsigned level, uint64_t n, unsigned width)
{
	for (unsigned i = 0; i < width; i++) {
		int error = merkle_node_get(t->l, t->txn, TILE_HEIGHT * level, n * TILE_WIDTH + i, t->hash[i]);

		if (error < 0)
			return error;
	}
	return 0;
}

static int write_tile(tiles_ctx *t, unsigned level, uint64_t n, unsigned width)
{
	char path[TILE_PATH_MAX];
	int error;

	error = level == 0 ? leaf_tile(t, n, width) : node_tile(t, level, n, width);
	if (error == 0 && width == TILE_WIDTH)
		error = check_full(t, level, n);
	if (error == 0 && level == 0 && (error = tile_path(path, sizeof(path), -1, n, width)) == 0 &&
	    (error = put_file(t, path, t->bundle.ptr, t->bundle.len, 0)) == 0)
		t->stats->bundles++;
	if (error == 0 && (error = tile_path(path, sizeof(path), (int)level, n, width)) == 0 &&
	    (error = put_file(t, path, t->hash, (size_t)width * DOCKET_TLOG_HASH_LEN, 0)) == 0)
		t->stats->tiles++;
	return error;
}

/* The tiles of the tree of t->size that the tree of `old` lacks: at each
 * level the full tiles past the old ones, and the partial tile (the spec:
 * floor(s / 256^l) mod 256 hashes at level l, no empty tile). */
static int write_tiles(tiles_ctx *t, uint64_t old)
{
	int error = 0;

	for (unsigned level = 0; level < TILE_LEVELS && error == 0; level++) {
		uint64_t nodes = t->size >> (TILE_HEIGHT * level), full = nodes / TILE_WIDTH;
		unsigned width = (unsigned)(nodes % TILE_WIDTH);

		if (nodes == 0)
			break;
		for (uint64_t n = (old >> (TILE_HEIGHT * level)) / TILE_WIDTH; n < full && error == 0; n++)
			error = write_tile(t, level, n, TILE_WIDTH);
		if (error == 0 && width)
			error = write_tile(t, level, full, width);
	}
	return error;
}

/* ---- the export ---- */

static int open_dir(tiles_ctx *t)
{
	struct stat st;

	if (mkdir(t->dir, 0700) != 0 && errno != EEXIST)
		return docket_error_set(DOCKET_ESTORAGE, "cannot create %s: %s", t->dir, strerror(errno));
	if ((t->dfd = open(t->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return docket_error_set(errno == ENOTDIR ? DOCKET_EEXISTS : DOCKET_ESTORAGE, "cannot open %s: %s",
					t->dir, strerror(errno));
	if (fstat(t->dfd, &st) != 0 || !S_ISDIR(st.st_mode))
		return docket_error_set(DOCKET_EEXISTS, "%s is not a directory", t->dir);
	/* two exports into one directory take turns */
	while (flock(t->dfd, LOCK_EX) != 0)
		if (errno != EINTR)
			return docket_error_set(DOCKET_ESTORAGE, "cannot lock %s: %s", t->dir, strerror(errno));
	return 0;
}

/* The new checkpoint, once every tile is on disk. */
static int publish(tiles_ctx *t, const char *note, size_t len)
{
	int error;

	if (syncfs(t->dfd) != 0)
		return docket_error_set(DOCKET_ESTORAGE, "cannot sync %s: %s", t->dir, strerror(errno));
	if ((error = put_file(t, "checkpoint", note, len, 1)) < 0)
		return error;
	if (fsync(t->dfd) != 0)
		return docket_error_set(DOCKET_ESTORAGE, "cannot sync %s: %s", t->dir, strerror(errno));
	return 0;
}

static int export_tiles(tiles_ctx *t, const char *note, size_t len, const docket_note_checkpoint *head)
{
	uint8_t root[DOCKET_TLOG_HASH_LEN];
	char origin[64];
	uint64_t old;
	int error;

	if ((error = docket_tlog_origin(origin, t->l)) < 0)
		return error;
	if (strcmp(head->origin, origin) != 0)
		return docket_error_set(DOCKET_ECORRUPT, "the newest checkpoint names %s, not this ledger (%s)",
					head->origin, origin);
	if ((error = docket_tlog_root_at(root, t->l, t->size)) < 0)
		return error;
	if (memcmp(root, head->root, sizeof(root)) != 0)
		return docket_error_set(DOCKET_ECORRUPT, "the ledger's tree at size %llu is not the newest "
					"checkpoint's root: run `docket verify`", (unsigned long long)t->size);
	if ((error = open_dir(t)) < 0 || (error = previous_size(&old, t, origin)) < 0)
		return error;
	t->stats->old_size = old;
	if ((error = store_txn_begin(&t->txn, t->l, MDB_RDONLY)) < 0)
		return error;
	reader_set_txn(&t->r, t->txn);
	if ((error = check_lengths(t, old / TILE_WIDTH * TILE_WIDTH, t->size)) < 0 ||
	    (error = write_tiles(t, old)) < 0)
		return error;
	return publish(t, note, len);
}

int docket_export_tiles(docket_ledger *l, const char *dir, docket_tiles_stats *stats)
{
	docket_tiles_stats dummy;
	docket_note_checkpoint head;
	tiles_ctx *t = NULL;
	char *note = NULL;
	size_t len = 0;
	int error;

	if (!stats)
		stats = &dummy;
	memset(stats, 0, sizeof(*stats));
	if ((error = docket_checkpoint_note(&note, &len, l, 0)) < 0) {
		char why[256];

		snprintf(why, sizeof(why), "%.200s", docket_error_last()->message);
		if (error == DOCKET_ENOTFOUND)
			error = docket_error_set(DOCKET_ENOTFOUND, "tlog-tiles publish the newest signed checkpoint, "
						 "and this ledger has none (%s): make one with `docket checkpoint "
						 "--key KEY`", why);
		return error;
	}
	if ((error = note_head(&head, note, len)) < 0)
		goto cleanup;
	if (!(t = docket_calloc(1, sizeof(*t)))) {
		error = docket_error_set_oom();
		goto cleanup;
	}
	t->l = l;
	t->dir = dir;
	t->dfd = -1;
	t->size = stats->size = head.size;
	t->stats = stats;
	reader_init(&t->r, l, NULL);
	t->r.scan = 1;
	error = export_tiles(t, note, len, &head);
	reader_dispose(&t->r);
	if (t->txn)
		store_txn_abort(l, t->txn);
	if (t->dfd >= 0)
		close(t->dfd);
	docket_buf_dispose(&t->bundle);
cleanup:
	docket_free(t);
	docket_free(note);
	return error;
}
