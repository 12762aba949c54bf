/* SPDX-License-Identifier: Apache-2.0 */
/*
 * merkle.c: the ledger as an RFC 6962 Merkle tree (include/docket/tlog.h,
 * docs/file-format.md "Merkle tree").
 *
 * Leaf i is event seq i + 1; leaf hash SHA-256(0x00 || stored payload), node
 * hash SHA-256(0x01 || left || right). What is stored (in the same write
 * transaction as the events, by merkle_extend from seg_flush):
 *
 *   meta "merkle"   be64 size, then the frontier: the root of each complete
 *                   subtree of the left-to-right decomposition of `size`
 *                   (one per set bit of size, highest level first)
 *   DBI  "tree"     key be64 end || u8 level, value 32 bytes: every complete
 *                   aligned subtree of level >= MERKLE_STORED_LEVEL (256
 *                   leaves and up), covering leaves [end - 2^level, end).
 *                   Keys rise in the order the nodes complete: MDB_APPEND.
 *
 * Invariants:
 *   1. meta "merkle" size == the number of events in the log (head_seq);
 *      absent only while the log is empty, or on a ledger written before
 *      the tree existed (projection version < 4: reindex builds it).
 *   2. the tree DBI holds exactly the nodes of level >= 8 complete within
 *      `size`, and each equals the hash of the events below it.
 *   3. the frontier folds (right to left) to the root of the whole log.
 * merkle_extend keeps 1-3 per flushed segment; merkle_rebuild restores them
 * from the events (reindex); merkle_check_* checks them in verify's one pass.
 *
 * A subtree below level 8 (and the ragged right edge of a tree) is hashed
 * from the events themselves through a segment reader: a proof reads
 * O(log n) stored nodes and the segments of at most two 256-leaf blocks.
 */
#include <stdio.h>
#include <string.h>


#include "docket/tlog.h"
#include "ledger_internal.h"
#include "util/alloc.h"
#include "util/error.h"

#define MERKLE_STORED_LEVEL 8
#define MERKLE_META "merkle"
#define MERKLE_KEY 9

/* ---- hashing ---- */

/* One digest context per thread, kept: allocating and fetching one per
 * hash was most of the tree's cost at append (tests/bench/bench_tlog). */
static int hash_parts(uint8_t out[DOCKET_TLOG_HASH_LEN], uint8_t prefix, const void *a, size_t alen,
		      const void *b, size_t blen)
{
	docket_slice v[3] = { { &prefix, 1 }, { a, alen }, { b, blen } };

	return ledger_sha256_v(out, v, 3);
}

void docket_tlog_leaf_hash(uint8_t out[DOCKET_TLOG_HASH_LEN], const void *event, size_t len)
{
	(void)hash_parts(out, 0x00, event, len, NULL, 0);
}

void docket_tlog_node_hash(uint8_t out[DOCKET_TLOG_HASH_LEN], const uint8_t left[DOCKET_TLOG_HASH_LEN],
			   const uint8_t right[DOCKET_TLOG_HASH_LEN])
{
	(void)hash_parts(out, 0x01, left, DOCKET_TLOG_HASH_LEN, right, DOCKET_TLOG_HASH_LEN);
}

static void empty_root(uint8_t out[DOCKET_TLOG_HASH_LEN])
{
	(void)ledger_sha256(out, "", 0);
}

/* ---- verification (RFC 9162 2.1.3.2, 2.1.4.2) ---- */

static int shape_error(const char *what)
{
	return docket_error_set(DOCKET_EINVALID, "%s", what);
}

int docket_tlog_verify_inclusion(const docket_tlog_proof *proof, const uint8_t leaf[DOCKET_TLOG_HASH_LEN],
				 const uint8_t root[DOCKET_TLOG_HASH_LEN])
{
	uint8_t r[DOCKET_TLOG_HASH_LEN];
	uint64_t fn, sn;

	if (proof->index >= proof->size)
		return shape_error("inclusion proof: leaf index not below the tree size");
	if (proof->len > DOCKET_TLOG_MAX_PROOF)
		return shape_error("inclusion proof: too many hashes");
	fn = proof->index;
	sn = proof->size - 1;
	memcpy(r, leaf, sizeof(r));
	for (size_t i = 0; i < proof->len; i++) {
		if (sn == 0)
			return shape_error("inclusion proof: too many hashes for its tree size");
		if ((fn & 1) || fn == sn) {
			docket_tlog_node_hash(r, proof->hash[i], r);
			while (!(fn & 1) && fn != 0) {
				fn >>= 1;
				sn >>= 1;
			}
		} else {
			docket_tlog_node_hash(r, r, proof->hash[i]);
		}
		fn >>= 1;
		sn >>= 1;
	}
	if (sn != 0)
		return shape_error("inclusion proof: too few hashes for its tree size");
	if (memcmp(r, root, sizeof(r)) != 0)
		return docket_error_set(DOCKET_ECORRUPT, "inclusion proof does not lead to the root");
	return 0;
}

int docket_tlog_verify_consistency(const docket_tlog_proof *proof, const uint8_t old_root[DOCKET_TLOG_HASH_LEN],
				   const uint8_t new_root[DOCKET_TLOG_HASH_LEN])
{
	uint8_t fr[DOCKET_TLOG_HASH_LEN], sr[DOCKET_TLOG_HASH_LEN];
	uint64_t m = proof->index, n = proof->size, fn, sn;
	size_t i = 0;

	if (m == 0 || m > n)
		return shape_error("consistency proof: sizes out of order");
	if (proof->len > DOCKET_TLOG_MAX_PROOF)
		return shape_error("consistency proof: too many hashes");
	if (m == n) {
		if (proof->len != 0)
			return shape_error("consistency proof between equal sizes must be empty");
		if (memcmp(old_root, new_root, DOCKET_TLOG_HASH_LEN) != 0)
			return docket_error_set(DOCKET_ECORRUPT, "two different roots for one tree size");
		return 0;
	}
	if (proof->len == 0)
		return shape_error("consistency proof: no hashes");
	fn = m - 1;
	sn = n - 1;
	while (fn & 1) {
		fn >>= 1;
		sn >>= 1;
	}
	/* m a power of two: the old root is the first node of the path */
	if ((m & (m - 1)) == 0) {
		memcpy(fr, old_root, sizeof(fr));
	} else {
		memcpy(fr, proof->hash[0], sizeof(fr));
		i = 1;
	}
	memcpy(sr, fr, sizeof(sr));
	for (; i < proof->len; i++) {
		if (sn == 0)
			return shape_error("consistency proof: too many hashes for its sizes");
		if ((fn & 1) || fn == sn) {
			docket_tlog_node_hash(fr, proof->hash[i], fr);
			docket_tlog_node_hash(sr, proof->hash[i], sr);
			while (!(fn & 1) && fn != 0) {
				fn >>= 1;
				sn >>= 1;
			}
		} else {
			docket_tlog_node_hash(sr, sr, proof->hash[i]);
		}
		fn >>= 1;
		sn >>= 1;
	}
	if (sn != 0)
		return shape_error("consistency proof: too few hashes for its sizes");
	if (memcmp(fr, old_root, sizeof(fr)) != 0 || memcmp(sr, new_root, sizeof(sr)) != 0)
		return docket_error_set(DOCKET_ECORRUPT, "consistency proof does not lead to both roots");
	return 0;
}

/* ---- generation over any leaf source (RFC 9162 2.1.1, 2.1.3.1, 2.1.4.1) ---- */

static uint64_t split_point(uint64_t n)
{
	uint64_t k = 1;

	while (k << 1 < n)
		k <<= 1;
	return k;
}

/* MTH(D[start:end]); `start` is aligned to the largest power of two <= the
 * length in every range RFC 6962's recursions ask for. */
int merkle_mth(const merkle_src *s, uint64_t start, uint64_t end, uint8_t out[DOCKET_TLOG_HASH_LEN])
{
	uint8_t l[DOCKET_TLOG_HASH_LEN], r[DOCKET_TLOG_HASH_LEN];
	uint64_t n = end - start, k;
	int error;

	if (n == 0) {
		empty_root(out);
		return 0;
	}
	if (n == 1)
		return s->leaf(s->ctx, start, out);
	if ((n & (n - 1)) == 0 && s->node) {
		unsigned level = (unsigned)__builtin_ctzll(n);

		if ((error = s->node(s->ctx, level, start >> level, out)) != DOCKET_ENOTFOUND)
			return error;
	}
	k = split_point(n);
	if ((error = merkle_mth(s, start, start + k, l)) < 0 || (error = merkle_mth(s, start + k, end, r)) < 0)
		return error;
	docket_tlog_node_hash(out, l, r);
	return 0;
}

static int proof_push(docket_tlog_proof *p, const merkle_src *s, uint64_t start, uint64_t end)
{
	if (p->len >= DOCKET_TLOG_MAX_PROOF)
		return docket_error_set(DOCKET_ERROR, "proof too long");
	return merkle_mth(s, start, end, p->hash[p->len++]);
}

/* PATH(m, D[start:end]) */
static int path(docket_tlog_proof *p, const merkle_src *s, uint64_t m, uint64_t start, uint64_t end)
{
	uint64_t n = end - start, k;
	int error;

	if (n <= 1)
		return 0;
	k = split_point(n);
	if (m < k)
		return (error = path(p, s, m, start, start + k)) < 0 ? error : proof_push(p, s, start + k, end);
	return (error = path(p, s, m - k, start + k, end)) < 0 ? error : proof_push(p, s, start, start + k);
}

/* SUBPROOF(m, D[start:end], b) */
static int subproof(docket_tlog_proof *p, const merkle_src *s, uint64_t m, uint64_t start, uint64_t end, int b)
{
	uint64_t n = end - start, k;
	int error;

	if (m == n)
		return b ? 0 : proof_push(p, s, start, end);
	k = split_point(n);
	if (m <= k)
		return (error = subproof(p, s, m, start, start + k, b)) < 0 ? error : proof_push(p, s, start + k, end);
	return (error = subproof(p, s, m - k, start + k, end, 0)) < 0 ? error : proof_push(p, s, start, start + k);
}

int merkle_inclusion(docket_tlog_proof *out, const merkle_src *s, uint64_t index, uint64_t size)
{
	if (index >= size)
		return docket_error_set(DOCKET_EINVALID, "leaf %llu is not in a tree of %llu",
					(unsigned long long)index, (unsigned long long)size);
	out->index = index;
	out->size = size;
	out->len = 0;
	return path(out, s, index, 0, size);
}

int merkle_consistency(docket_tlog_proof *out, const merkle_src *s, uint64_t old_size, uint64_t new_size)
{
	if (old_size == 0 || old_size > new_size)
		return docket_error_set(DOCKET_EINVALID, "no consistency proof from size %llu to %llu",
					(unsigned long long)old_size, (unsigned long long)new_size);
	out->index = old_size;
	out->size = new_size;
	out->len = 0;
	return old_size == new_size ? 0 : subproof(out, s, old_size, 0, new_size, 1);
}

/* ---- the stored tree ---- */

typedef merkle_frontier frontier;

static void node_key(uint8_t key[MERKLE_KEY], uint64_t end, unsigned level)
{
	docket_be64_put(key, end);
	key[8] = (uint8_t)level;
}

int merkle_open(docket_ledger *l, MDB_txn *txn, int create)
{
	int rc = mdb_dbi_open(txn, "tree", create ? MDB_CREATE : 0, &l->dbi.tree);

	l->has_tree = rc == 0;
	if (rc == MDB_NOTFOUND && !create)
		return 0;   /* a ledger of an older docket, open read-only */
	return rc ? store_error(rc, "tree") : 0;
}

/* meta "merkle" into *f: 0; 1 when it is absent (an empty tree then). */
static int frontier_load(frontier *f, docket_ledger *l, MDB_txn *txn)
{
	MDB_val v;
	const uint8_t *p;
	size_t want = 8;
	int error;

	f->size = 0;
	if ((error = store_meta_get(txn, l, MERKLE_META, &v)) == DOCKET_ENOTFOUND)
		return 1;
	if (error < 0)
		return error;
	p = v.mv_data;
	if (v.mv_size >= 8) {
		f->size = docket_be64_get(p);
		want += (size_t)__builtin_popcountll(f->size) * DOCKET_TLOG_HASH_LEN;
	}
	if (v.mv_size < 8 || v.mv_size != want)
		return docket_error_set(DOCKET_ECORRUPT, "the Merkle tree record is damaged; run `docket reindex`");
	p += 8;
	for (int level = 63; level >= 0; level--) {
		if (!(f->size >> level & 1))
			continue;
		memcpy(f->h[level], p, DOCKET_TLOG_HASH_LEN);
		p += DOCKET_TLOG_HASH_LEN;
	}
	return 0;
}

static size_t frontier_encode(const frontier *f, uint8_t *buf)
{
	uint8_t *p = buf + 8;

	docket_be64_put(buf, f->size);
	for (int level = 63; level >= 0; level--) {
		if (!(f->size >> level & 1))
			continue;
		memcpy(p, f->h[level], DOCKET_TLOG_HASH_LEN);
		p += DOCKET_TLOG_HASH_LEN;
	}
	return (size_t)(p - buf);
}

static int frontier_store(const frontier *f, docket_ledger *l, MDB_txn *txn)
{
	uint8_t buf[8 + 64 * DOCKET_TLOG_HASH_LEN];

	return store_meta_put(txn, l, MERKLE_META, buf, frontier_encode(f, buf));
}

static void frontier_root(const frontier *f, uint8_t out[DOCKET_TLOG_HASH_LEN])
{
	int have = 0;

	if (f->size == 0) {
		empty_root(out);
		return;
	}
	for (int level = 0; level < 64; level++) {
		if (!(f->size >> level & 1))
			continue;
		if (have)
			docket_tlog_node_hash(out, f->h[level], out);
		else
			memcpy(out, f->h[level], DOCKET_TLOG_HASH_LEN);
		have = 1;
	}
}

/* A complete node of the frontier's tree: its level and hash, its leaves end at `end`. */
typedef int (*node_fn)(void *ctx, uint64_t end, unsigned level, const uint8_t hash[DOCKET_TLOG_HASH_LEN]);

/* Add a complete subtree of `level` (a leaf: 0) whose leaves start at
 * f->size (a multiple of 2^level); every node of level >= 8 it completes
 * goes to `emit`. */
static int frontier_add_block(frontier *f, unsigned level, const uint8_t hash[DOCKET_TLOG_HASH_LEN], node_fn emit,
			      void *ctx)
{
	uint8_t h[DOCKET_TLOG_HASH_LEN];
	uint64_t end = f->size + (1ull << level);
	int error;

	memcpy(h, hash, sizeof(h));
	while (f->size >> level & 1) {
		docket_tlog_node_hash(h, f->h[level], h);
		level++;
		if (level >= MERKLE_STORED_LEVEL && (error = emit(ctx, end, level, h)) < 0)
			return error;
	}
	memcpy(f->h[level], h, sizeof(h));
	f->size = end;
	return 0;
}

static int frontier_add(frontier *f, const uint8_t leaf[DOCKET_TLOG_HASH_LEN], node_fn emit, void *ctx)
{
	return frontier_add_block(f, 0, leaf, emit, ctx);
}

typedef struct node_put {
	docket_ledger *l;
	MDB_txn *txn;
} node_put;

static int put_node(void *ctx, uint64_t end, unsigned level, const uint8_t hash[DOCKET_TLOG_HASH_LEN])
{
	node_put *np = ctx;
	uint8_t key[MERKLE_KEY];
	MDB_val k = { sizeof(key), key }, v = { DOCKET_TLOG_HASH_LEN, (void *)hash };
	int rc;

	node_key(key, end, level);
	if ((rc = mdb_put(np->txn, np->l->dbi.tree, &k, &v, MDB_APPEND)) != 0)
		return store_error(rc, "write tree");
	return 0;
}

static int no_tree_error(docket_ledger *l)
{
	return docket_error_set(DOCKET_EVERSION,
				"ledger %s has no Merkle tree yet (its indexes were written by an older docket): "
				"run `docket -L %s reindex`", l->path, l->path);
}

/* ---- a segment's leaves, folded apart (any thread) ---- */

/* The largest subtree that starts at leaf `pos` (aligned) and fits in `left` >= 1 leaves. */
static unsigned block_level(uint64_t pos, uint64_t left)
{
	unsigned aligned = pos ? (unsigned)__builtin_ctzll(pos) : 63;
	unsigned fits = 63 - (unsigned)__builtin_clzll(left);

	return aligned < fits ? aligned : fits;
}

void merkle_piece_begin(merkle_piece *p, uint64_t start, uint64_t n)
{
	p->start = p->pos = start;
	p->end = start + n;
	p->level = n ? block_level(start, n) : 0;
	p->local.size = 0;
	p->nblocks = 0;
	docket_buf_clear(&p->nodes);
}

void merkle_piece_dispose(merkle_piece *p)
{
	docket_buf_dispose(&p->nodes);
}

/* A stored node inside the subtree being folded (its `end` counted from
 * the subtree's first leaf, which is aligned: the node is the tree's own). */
static int piece_node(void *ctx, uint64_t end, unsigned level, const uint8_t hash[DOCKET_TLOG_HASH_LEN])
{
	merkle_piece *p = ctx;
	uint8_t rec[MERKLE_KEY + DOCKET_TLOG_HASH_LEN];

	node_key(rec, p->pos + end, level);
	memcpy(rec + MERKLE_KEY, hash, DOCKET_TLOG_HASH_LEN);
	return docket_buf_put(&p->nodes, rec, sizeof(rec));
}

int merkle_piece_leaf(merkle_piece *p, const uint8_t *payload, size_t len)
{
	uint8_t leaf[DOCKET_TLOG_HASH_LEN];
	merkle_block *b;
	int error;

	if (p->pos >= p->end || p->nblocks >= MERKLE_PIECE_BLOCKS)
		return docket_error_set(DOCKET_ERROR, "Merkle piece: more leaves than announced");
	docket_tlog_leaf_hash(leaf, payload, len);
	if ((error = frontier_add(&p->local, leaf, piece_node, p)) < 0)
		return error;
	if (p->local.size < (1ull << p->level))
		return 0;
	b = &p->blocks[p->nblocks++];
	b->level = p->level;
	b->nodes_end = p->nodes.len;
	memcpy(b->hash, p->local.h[p->level], DOCKET_TLOG_HASH_LEN);
	p->pos += p->local.size;
	p->local.size = 0;
	if (p->pos < p->end)
		p->level = block_level(p->pos, p->end - p->pos);
	return 0;
}

static int put_record(node_put *np, const uint8_t *rec)
{
	return put_node(np, docket_be64_get(rec), rec[8], rec + MERKLE_KEY);
}

/* Its subtrees in order, each after the stored nodes inside it: the keys
 * rise as MDB_APPEND needs, as in a leaf-by-leaf fold. */
static int piece_join(frontier *f, const merkle_piece *p, node_put *np)
{
	const uint8_t *rec = (const uint8_t *)p->nodes.ptr;
	size_t off = 0;
	int error;

	for (uint32_t i = 0; i < p->nblocks; i++) {
		for (; off < p->blocks[i].nodes_end; off += MERKLE_KEY + DOCKET_TLOG_HASH_LEN)
			if ((error = put_record(np, rec + off)) < 0)
				return error;
		if ((error = frontier_add_block(f, p->blocks[i].level, p->blocks[i].hash, put_node, np)) < 0)
			return error;
	}
	return 0;
}

int merkle_piece_add(docket_ledger *l, MDB_txn *txn, const merkle_piece *p)
{
	node_put np = { l, txn };
	frontier f;
	int error;

	if (l->merkle_off || p->end == p->start)
		return 0;
	if (!l->has_tree)
		return no_tree_error(l);
	if (p->pos != p->end)
		return docket_error_set(DOCKET_ERROR, "Merkle piece: %llu of its leaves missing",
					(unsigned long long)(p->end - p->pos));
	if ((error = frontier_load(&f, l, txn)) < 0)
		return error;
	if (f.size != p->start) {
		if (error == 1)
			return no_tree_error(l);
		return docket_error_set(DOCKET_ECORRUPT, "the Merkle tree ends at event %llu, the log at %llu: "
					"run `docket reindex`", (unsigned long long)f.size,
					(unsigned long long)p->start);
	}
	if ((error = piece_join(&f, p, &np)) < 0)
		return error;
	return frontier_store(&f, l, txn);
}

static int piece_leaf(void *ctx, const uint8_t *p, size_t len)
{
	return merkle_piece_leaf(ctx, p, len);
}

int merkle_extend(seg_writer *w, MDB_txn *txn)
{
	merkle_piece p;   /* on the stack: only what merkle_piece_begin sets is read */
	int error;

	if (w->l->merkle_off || !w->b.count)
		return 0;
	if (!w->l->has_tree)
		return no_tree_error(w->l);
	p.nodes = (docket_buf)DOCKET_BUF_INIT;
	merkle_piece_begin(&p, w->b.first - 1, w->b.count);
	if ((error = seg_batch_each(&w->b, piece_leaf, &p)) == 0)
		error = merkle_piece_add(w->l, txn, &p);
	merkle_piece_dispose(&p);
	return error;
}

int merkle_drop(docket_ledger *l, MDB_txn *txn)
{
	int rc;

	if (!l->has_tree)
		return 0;
	if ((rc = mdb_drop(txn, l->dbi.tree, 0)) != 0)
		return store_error(rc, "clear tree");
	return store_meta_del(txn, l, MERKLE_META);
}

/* Every event of the log through `emit` (the rebuild). */
static int scan_leaves(docket_ledger *l, MDB_txn *txn, frontier *f, node_fn emit, void *ctx)
{
	ledger_reader r;
	uint64_t last;
	int error;

	f->size = 0;
	reader_init(&r, l, txn);
	r.scan = 1;
	if ((error = reader_last_seq(&r, &last)) < 0)
		goto cleanup;
	for (uint64_t seq = 1; seq <= last; seq++) {
		uint8_t leaf[DOCKET_TLOG_HASH_LEN];
		const uint8_t *p;
		size_t len;

		if ((error = reader_payload(&r, seq, &p, &len)) < 0)
			break;
		docket_tlog_leaf_hash(leaf, p, len);
		if ((error = frontier_add(f, leaf, emit, ctx)) < 0)
			break;
	}
cleanup:
	reader_dispose(&r);
	return error;
}

int merkle_rebuild(docket_ledger *l, MDB_txn *txn)
{
	node_put np = { l, txn };
	frontier f;
	int error;

	if (l->merkle_off)
		return 0;
	if ((error = merkle_drop(l, txn)) < 0 || (error = scan_leaves(l, txn, &f, put_node, &np)) < 0)
		return error;
	return f.size ? frontier_store(&f, l, txn) : 0;
}

/*
 * verify: the stored tree is checked in step with the rebuild (verify.c),
 * from the payloads it has just decompressed and chained, so the events are
 * read once. Each node the recomputation completes is compared with the next
 * stored one (a cursor walk: a node missing, changed or added in between is
 * a difference); the walk spans the read transactions of the rebuild's
 * chunks, resuming after the last node compared (the tree only grows).
 */
typedef struct check_state {
	frontier f;             /* the tree recomputed so far */
	uint8_t last[MERKLE_KEY];
	int have_last;          /* a stored node was compared: resume after `last` */
	char problem[256];      /* the first difference */
	int rc;                 /* an LMDB error reading the tree: reported at finish */
} check_state;

struct merkle_check {
	docket_ledger *l;
	int off;                /* nothing to compare: older indexes, or no tree */
	MDB_txn *txn;           /* where the stored nodes are read now */
	MDB_cursor *cur;        /* on the tree DBI of `txn`; NULL: open at the next node */
	check_state now, saved; /* saved: at merkle_check_mark */
};

int merkle_check_new(merkle_check **out, docket_ledger *l)
{
	merkle_check *mc = docket_calloc(1, sizeof(*mc));

	*out = NULL;
	if (!mc)
		return docket_error_set_oom();
	mc->l = l;
	/* an older docket's ledger opened read-only: its indexes (the tree
	 * among them) are reported as old and not compared */
	mc->off = l->projection_version < DOCKET_PROJECTION_VERSION || !l->has_tree;
	*out = mc;
	return 0;
}

void merkle_check_free(merkle_check *mc)
{
	if (!mc)
		return;
	if (mc->cur)
		mdb_cursor_close(mc->cur);
	docket_free(mc);
}

void merkle_check_txn(merkle_check *mc, MDB_txn *txn)
{
	/* a read-only transaction's cursor is closed by hand, also after it ended */
	if (mc->cur)
		mdb_cursor_close(mc->cur);
	mc->cur = NULL;
	mc->txn = txn;
}

void merkle_check_mark(merkle_check *mc)
{
	mc->saved = mc->now;
}

void merkle_check_rollback(merkle_check *mc)
{
	mc->now = mc->saved;
	merkle_check_txn(mc, NULL);
}

/* The stored node after the last one compared. */
static int next_stored(merkle_check *mc, MDB_val *k, MDB_val *v)
{
	int rc;

	if (mc->cur)
		return mdb_cursor_get(mc->cur, k, v, MDB_NEXT);
	if ((rc = mdb_cursor_open(mc->txn, mc->l->dbi.tree, &mc->cur)) != 0)
		return rc;
	if (!mc->now.have_last)
		return mdb_cursor_get(mc->cur, k, v, MDB_FIRST);
	k->mv_size = MERKLE_KEY;
	k->mv_data = mc->now.last;
	if ((rc = mdb_cursor_get(mc->cur, k, v, MDB_SET_RANGE)) == 0 && k->mv_size == MERKLE_KEY &&
	    memcmp(k->mv_data, mc->now.last, MERKLE_KEY) == 0)
		rc = mdb_cursor_get(mc->cur, k, v, MDB_NEXT);
	return rc;
}

static int check_node(void *ctx, uint64_t end, unsigned level, const uint8_t hash[DOCKET_TLOG_HASH_LEN])
{
	merkle_check *mc = ctx;
	uint8_t key[MERKLE_KEY];
	MDB_val k, v;
	int rc;

	if (*mc->now.problem || mc->now.rc)
		return 0;   /* the first difference is the one reported */
	rc = next_stored(mc, &k, &v);
	node_key(key, end, level);
	if (rc != 0 && rc != MDB_NOTFOUND) {
		/* an error of the tree, not of the event being rebuilt: kept for
		 * the end, where verify reads the rest of the tree */
		mc->now.rc = rc;
		return 0;
	}
	if (rc == 0 && k.mv_size == MERKLE_KEY && memcmp(k.mv_data, key, MERKLE_KEY) == 0 &&
	    v.mv_size == DOCKET_TLOG_HASH_LEN && memcmp(v.mv_data, hash, DOCKET_TLOG_HASH_LEN) == 0) {
		memcpy(mc->now.last, key, MERKLE_KEY);
		mc->now.have_last = 1;
		return 0;
	}
	snprintf(mc->now.problem, sizeof(mc->now.problem),
		 "Merkle tree node of level %u over events %llu..%llu %s", level,
		 (unsigned long long)(end - (1ull << level) + 1), (unsigned long long)end,
		 rc == MDB_NOTFOUND ? "is missing" : "does not match the events");
	return 0;
}

int merkle_check_leaf(merkle_check *mc, const uint8_t *p, size_t len)
{
	uint8_t leaf[DOCKET_TLOG_HASH_LEN];

	if (mc->off)
		return 0;
	docket_tlog_leaf_hash(leaf, p, len);
	return merkle_check_leaf_hash(mc, leaf);
}

int merkle_check_leaf_hash(merkle_check *mc, const uint8_t leaf[DOCKET_TLOG_HASH_LEN])
{
	return mc->off ? 0 : frontier_add(&mc->now.f, leaf, check_node, mc);
}

static int tree_problem(docket_verify_report *rep, const char *problem)
{
	snprintf(rep->problem, sizeof(rep->problem), "%s; run `docket reindex` to rebuild it", problem);
	return 1;
}

static int frontier_same(const frontier *a, const frontier *b)
{
	if (a->size != b->size)
		return 0;
	for (int level = 0; level < 64; level++)
		if ((a->size >> level & 1) && memcmp(a->h[level], b->h[level], DOCKET_TLOG_HASH_LEN) != 0)
			return 0;
	return 1;
}

int merkle_check_finish(merkle_check *mc, MDB_txn *txn, docket_verify_report *rep)
{
	docket_ledger *l = mc->l;
	const frontier *want = &mc->now.f;
	char *problem = mc->now.problem;
	frontier have;
	MDB_val k, v;
	int rc, absent;

	if (l->projection_version < DOCKET_PROJECTION_VERSION)
		return 0;
	if (!l->has_tree)
		return tree_problem(rep, "the ledger has no Merkle tree");
	if ((absent = frontier_load(&have, l, txn)) == DOCKET_ECORRUPT)
		return tree_problem(rep, "the Merkle tree record is damaged");
	if (absent < 0)
		return absent;
	if (mc->now.rc)
		return store_error(mc->now.rc, "read tree");
	merkle_check_txn(mc, txn);
	if (!*problem && (rc = next_stored(mc, &k, &v)) != MDB_NOTFOUND) {
		if (rc != 0)
			return store_error(rc, "read tree");
		snprintf(problem, sizeof(mc->now.problem), "the Merkle tree holds nodes past the end of the log");
	}
	merkle_check_txn(mc, NULL);
	if (absent && want->size)
		return tree_problem(rep, "the ledger has no Merkle tree");
	if (*problem)
		return tree_problem(rep, problem);
	if (!frontier_same(&have, want)) {
		snprintf(problem, sizeof(mc->now.problem),
			 "the Merkle tree's frontier (size %llu) does not match the %llu events",
			 (unsigned long long)have.size, (unsigned long long)want->size);
		return tree_problem(rep, problem);
	}
	return 0;
}

/* ---- proofs over a ledger ---- */

#define BLOCK (1u << MERKLE_STORED_LEVEL)

/* The leaves of a proof come from at most two 256-leaf blocks (the one of
 * the leaf, the ragged right edge): each is hashed once, in seq order, so
 * each segment under it is read once. */
typedef struct leaf_block {
	uint64_t first;         /* first leaf index; UINT64_MAX: empty */
	uint8_t h[BLOCK][DOCKET_TLOG_HASH_LEN];
} leaf_block;

typedef struct ledger_src {
	docket_ledger *l;
	MDB_txn *txn;
	ledger_reader r;
	uint64_t stored;        /* leaves the stored tree covers */
	uint32_t segments;      /* segments the reader loaded */
	unsigned next;          /* the block to replace next */
	leaf_block block[2];
} ledger_src;

static int block_load(ledger_src *s, leaf_block *b, uint64_t first)
{
	uint64_t end = first + BLOCK < s->stored ? first + BLOCK : s->stored;
	int error;

	b->first = UINT64_MAX;
	for (uint64_t i = first; i < end; i++) {
		uint64_t before = s->r.first;
		const uint8_t *p;
		size_t len;

		if ((error = reader_payload(&s->r, i + 1, &p, &len)) < 0)
			return error == DOCKET_ENOTFOUND ? docket_error_set(DOCKET_ECORRUPT, "event %llu is missing",
									    (unsigned long long)(i + 1))
							 : error;
		if (s->r.first != before)
			s->segments++;
		docket_tlog_leaf_hash(b->h[i - first], p, len);
	}
	b->first = first;
	return 0;
}

static int src_leaf(void *ctx, uint64_t index, uint8_t out[DOCKET_TLOG_HASH_LEN])
{
	ledger_src *s = ctx;
	uint64_t first = index & ~(uint64_t)(BLOCK - 1);
	leaf_block *b = NULL;
	int error;

	if (index >= s->stored)
		return docket_error_set(DOCKET_ERROR, "leaf %llu past the tree", (unsigned long long)index);
	for (unsigned i = 0; i < 2 && !b; i++)
		if (s->block[i].first == first)
			b = &s->block[i];
	if (!b) {
		b = &s->block[s->next];
		s->next ^= 1;
		if ((error = block_load(s, b, first)) < 0)
			return error;
	}
	memcpy(out, b->h[index - first], DOCKET_TLOG_HASH_LEN);
	return 0;
}

static int src_node(void *ctx, unsigned level, uint64_t k, uint8_t out[DOCKET_TLOG_HASH_LEN])
{
	ledger_src *s = ctx;

	if (level < MERKLE_STORED_LEVEL || (k + 1) << level > s->stored)
		return DOCKET_ENOTFOUND;
	return merkle_node_get(s->l, s->txn, level, k, out);
}

int merkle_node_get(docket_ledger *l, MDB_txn *txn, unsigned level, uint64_t k, uint8_t out[DOCKET_TLOG_HASH_LEN])
{
	uint8_t key[MERKLE_KEY];
	MDB_val kv = { sizeof(key), key }, v;
	uint64_t end = (k + 1) << level;
	int rc;

	if (!l->has_tree)
		return no_tree_error(l);
	node_key(key, end, level);
	if ((rc = mdb_get(txn, l->dbi.tree, &kv, &v)) == MDB_NOTFOUND || (rc == 0 && v.mv_size != DOCKET_TLOG_HASH_LEN))
		return docket_error_set(DOCKET_ECORRUPT, "Merkle tree node of level %u ending at event %llu is %s; "
					"run `docket verify`", level, (unsigned long long)end,
					rc ? "missing" : "damaged");
	if (rc != 0)
		return store_error(rc, "read tree");
	memcpy(out, v.mv_data, DOCKET_TLOG_HASH_LEN);
	return 0;
}

/* Begin a read of the tree: the frontier and a leaf source over it. */
static int src_begin(ledger_src *s, merkle_src *ms, frontier *f, docket_ledger *l)
{
	int error;

	s->l = l;
	s->txn = NULL;
	s->segments = 0;
	s->next = 0;
	s->block[0].first = s->block[1].first = UINT64_MAX;
	reader_init(&s->r, l, NULL);
	if ((error = store_txn_begin(&s->txn, l, MDB_RDONLY)) < 0)
		return error;
	reader_set_txn(&s->r, s->txn);
	if (!l->has_tree)
		return no_tree_error(l);
	if ((error = frontier_load(f, l, s->txn)) == 1) {
		uint64_t head = 0;

		if ((error = store_meta_get_u64(s->txn, l, "head_seq", &head)) < 0 && error != DOCKET_ENOTFOUND)
			return error;
		if (head)
			return no_tree_error(l);
		error = 0;
	}
	if (error < 0)
		return error;
	s->stored = f->size;
	ms->leaf = src_leaf;
	ms->node = src_node;
	ms->ctx = s;
	return 0;
}

static void src_end(ledger_src *s)
{
	reader_dispose(&s->r);
	if (s->txn)
		store_txn_abort(s->l, s->txn);
}

static int size_check(const frontier *f, uint64_t size)
{
	if (size > f->size)
		return docket_error_set(DOCKET_EINVALID, "the log has %llu events, not %llu",
					(unsigned long long)f->size, (unsigned long long)size);
	return 0;
}

int docket_tlog_head_get(docket_tlog_head *out, docket_ledger *l)
{
	ledger_src s;
	merkle_src ms;
	frontier f;
	int error;

	memset(out, 0, sizeof(*out));
	if ((error = src_begin(&s, &ms, &f, l)) == 0) {
		out->size = f.size;
		frontier_root(&f, out->root);
	}
	src_end(&s);
	return error;
}

int docket_tlog_root_at(uint8_t root[DOCKET_TLOG_HASH_LEN], docket_ledger *l, uint64_t size)
{
	ledger_src s;
	merkle_src ms;
	frontier f;
	int error;

	if ((error = src_begin(&s, &ms, &f, l)) == 0 && (error = size_check(&f, size)) == 0) {
		if (size == f.size)
			frontier_root(&f, root);
		else
			error = merkle_mth(&ms, 0, size, root);
	}
	src_end(&s);
	return error;
}

int docket_tlog_inclusion(docket_tlog_proof *out, docket_ledger *l, uint64_t seq, uint64_t size)
{
	ledger_src s;
	merkle_src ms;
	frontier f;
	int error;

	memset(out, 0, sizeof(*out));
	if (seq == 0 || seq > size)
		return docket_error_set(DOCKET_EINVALID, "event %llu is not in a tree of %llu events",
					(unsigned long long)seq, (unsigned long long)size);
	if ((error = src_begin(&s, &ms, &f, l)) == 0 && (error = size_check(&f, size)) == 0)
		error = merkle_inclusion(out, &ms, seq - 1, size);
	out->segments_read = s.segments;
	src_end(&s);
	return error;
}

int docket_tlog_consistency(docket_tlog_proof *out, docket_ledger *l, uint64_t old_size, uint64_t new_size)
{
	ledger_src s;
	merkle_src ms;
	frontier f;
	int error;

	memset(out, 0, sizeof(*out));
	if ((error = src_begin(&s, &ms, &f, l)) == 0 && (error = size_check(&f, new_size)) == 0)
		error = merkle_consistency(out, &ms, old_size, new_size);
	out->segments_read = s.segments;
	src_end(&s);
	return error;
}

int docket_tlog_origin(char out[64], docket_ledger *l)
{
	int n = snprintf(out, 64, "docket.dev/ledger/%s", l->ledger_id);

	return n > 0 && n < 64 ? 0 : docket_error_set(DOCKET_ERROR, "ledger id too long");
}
