/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_tlog.c: the Merkle tree (ledger/merkle.c, include/docket/tlog.h).
 *
 *  - the Certificate Transparency reference tree (the 8 leaves of RFC 6962's
 *    test data, published roots and proofs, as Go's and Trillian's tests
 *    carry them): roots, PATH and PROOF generated, verified, and refused
 *    with any bit flipped, a hash dropped or added, a wrong size;
 *  - a ledger of ~1,500 events appended in uneven commits: the stored tree
 *    (nodes of level >= 8, frontier) gives the same roots and proofs as a
 *    tree recomputed from the stored events in memory, for every size;
 *  - verify reports a changed stored node, a changed frontier, a missing
 *    tree; reindex rebuilds it; an older ledger read-only is refused with
 *    a message naming `docket reindex`.
 * Independent expected values for the ledger come from tests/unit/tlog_check.py.
 */
#include "testutil.h"

#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "docket/tlog.h"
#include "../bench/gen_mix.h"
#include "ledger/ledger_internal.h"
#include "test_audit_util.h"
#include "util/alloc.h"
#include "util/buf.h"

static void unhex(uint8_t *out, const char *hex)
{
	for (size_t i = 0; hex[2 * i]; i++) {
		unsigned v;

		assert_int_equal(sscanf(hex + 2 * i, "%2x", &v), 1);
		out[i] = (uint8_t)v;
	}
}

/* ---- the reference tree ---- */

static const char *const ct_leaves[8] = {
	"", "00", "10", "2021", "3031", "40414243", "5051525354555657", "606162636465666768696a6b6c6d6e6f",
};

static const char *const ct_roots[9] = {
	"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
	"6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
	"fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
	"aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
	"d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
	"4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
	"76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
	"ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
	"5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
};

typedef struct vector {
	uint64_t a, b;          /* inclusion: index, size; consistency: old, new size */
	size_t n;
	const char *hash[3];
} vector;

static const vector ct_inclusion[] = {
	{ 0, 8, 3, { "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
		     "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
		     "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4" } },
	{ 5, 8, 3, { "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
		     "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
		     "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7" } },
};

static const vector ct_consistency[] = {
	{ 2, 8, 2, { "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
		     "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4" } },
	{ 6, 8, 3, { "0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
		     "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
		     "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7" } },
};

typedef struct mem_tree {
	size_t n;
	uint8_t (*leaf)[DOCKET_TLOG_HASH_LEN];
} mem_tree;

static int mem_leaf(void *ctx, uint64_t index, uint8_t out[DOCKET_TLOG_HASH_LEN])
{
	mem_tree *t = ctx;

	assert_true(index < t->n);
	memcpy(out, t->leaf[index], DOCKET_TLOG_HASH_LEN);
	return 0;
}

static mem_tree ct_tree(void)
{
	mem_tree t = { 8, calloc(8, DOCKET_TLOG_HASH_LEN) };

	for (size_t i = 0; i < 8; i++) {
		uint8_t data[16];
		size_t len = strlen(ct_leaves[i]) / 2;

		unhex(data, ct_leaves[i]);
		docket_tlog_leaf_hash(t.leaf[i], data, len);
	}
	return t;
}

static void proof_from(docket_tlog_proof *p, const vector *v)
{
	memset(p, 0, sizeof(*p));
	p->index = v->a;
	p->size = v->b;
	p->len = v->n;
	for (size_t i = 0; i < v->n; i++)
		unhex(p->hash[i], v->hash[i]);
}

static void test_reference_roots(void **state)
{
	mem_tree t = ct_tree();
	merkle_src s = { mem_leaf, NULL, &t };

	(void)state;
	for (uint64_t n = 0; n <= 8; n++) {
		uint8_t got[32], want[32];

		unhex(want, ct_roots[n]);
		assert_int_equal(merkle_mth(&s, 0, n, got), 0);
		assert_memory_equal(got, want, 32);
	}
	free(t.leaf);
}

/* Every way to spoil a good proof must be refused. */
static void assert_spoiled_refused(const docket_tlog_proof *good, const uint8_t *a, const uint8_t *b, int inclusion)
{
	docket_tlog_proof p;

#define CHECK(p) (inclusion ? docket_tlog_verify_inclusion(&(p), a, b) : docket_tlog_verify_consistency(&(p), a, b))
	p = *good;
	assert_int_equal(CHECK(p), 0);
	for (size_t i = 0; i < good->len; i++)
		for (int bit = 0; bit < 256; bit += 37) {
			p = *good;
			p.hash[i][bit / 8] ^= (uint8_t)(1u << (bit % 8));
			assert_int_equal(CHECK(p), DOCKET_ECORRUPT);
		}
	if (good->len) {
		p = *good;
		p.len--;
		assert_int_not_equal(CHECK(p), 0);
	}
	p = *good;
	p.len++;
	assert_int_not_equal(CHECK(p), 0);
	p = *good;
	p.size++;
	assert_int_not_equal(CHECK(p), 0);
	p = *good;
	p.index ^= 1;
	assert_int_not_equal(CHECK(p), 0);
#undef CHECK
}

static void test_reference_inclusion(void **state)
{
	mem_tree t = ct_tree();
	merkle_src s = { mem_leaf, NULL, &t };

	(void)state;
	for (size_t v = 0; v < sizeof(ct_inclusion) / sizeof(ct_inclusion[0]); v++) {
		docket_tlog_proof want, got;
		uint8_t root[32], bad[32];

		proof_from(&want, &ct_inclusion[v]);
		unhex(root, ct_roots[want.size]);
		assert_int_equal(merkle_inclusion(&got, &s, want.index, want.size), 0);
		assert_int_equal(got.len, want.len);
		assert_memory_equal(got.hash, want.hash, want.len * 32);
		assert_spoiled_refused(&want, t.leaf[want.index], root, 1);
		/* another leaf, another root */
		assert_int_equal(docket_tlog_verify_inclusion(&want, t.leaf[(want.index + 1) % 8], root),
				 DOCKET_ECORRUPT);
		memcpy(bad, root, 32);
		bad[31] ^= 1;
		assert_int_equal(docket_tlog_verify_inclusion(&want, t.leaf[want.index], bad), DOCKET_ECORRUPT);
	}
	/* shapes that cannot be */
	{
		docket_tlog_proof p;
		uint8_t root[32];

		memset(&p, 0, sizeof(p));
		unhex(root, ct_roots[1]);
		p.index = 1;
		p.size = 1;
		assert_int_equal(docket_tlog_verify_inclusion(&p, t.leaf[0], root), DOCKET_EINVALID);
		p.index = 0;
		assert_int_equal(docket_tlog_verify_inclusion(&p, t.leaf[0], root), 0);
		p.len = DOCKET_TLOG_MAX_PROOF + 1;
		assert_int_equal(docket_tlog_verify_inclusion(&p, t.leaf[0], root), DOCKET_EINVALID);
		assert_int_equal(merkle_inclusion(&p, &s, 8, 8), DOCKET_EINVALID);
	}
	free(t.leaf);
}

static void test_reference_consistency(void **state)
{
	mem_tree t = ct_tree();
	merkle_src s = { mem_leaf, NULL, &t };
	docket_tlog_proof p;
	uint8_t r4[32], r5[32];

	(void)state;
	for (size_t v = 0; v < sizeof(ct_consistency) / sizeof(ct_consistency[0]); v++) {
		docket_tlog_proof want, got;
		uint8_t old_root[32], new_root[32];

		proof_from(&want, &ct_consistency[v]);
		unhex(old_root, ct_roots[want.index]);
		unhex(new_root, ct_roots[want.size]);
		assert_int_equal(merkle_consistency(&got, &s, want.index, want.size), 0);
		assert_int_equal(got.len, want.len);
		assert_memory_equal(got.hash, want.hash, want.len * 32);
		assert_spoiled_refused(&want, old_root, new_root, 0);
		assert_int_equal(docket_tlog_verify_consistency(&want, new_root, old_root), DOCKET_ECORRUPT);
	}
	/* every pair of sizes of the reference tree round-trips */
	for (uint64_t n = 1; n <= 8; n++)
		for (uint64_t m = 1; m <= n; m++) {
			uint8_t a[32], b[32];

			unhex(a, ct_roots[m]);
			unhex(b, ct_roots[n]);
			assert_int_equal(merkle_consistency(&p, &s, m, n), 0);
			assert_int_equal(docket_tlog_verify_consistency(&p, a, b), 0);
		}
	/* equal sizes: empty proof, equal roots (a fork is two roots for one size) */
	unhex(r4, ct_roots[4]);
	unhex(r5, ct_roots[5]);
	memset(&p, 0, sizeof(p));
	p.index = p.size = 4;
	assert_int_equal(docket_tlog_verify_consistency(&p, r4, r4), 0);
	assert_int_equal(docket_tlog_verify_consistency(&p, r4, r5), DOCKET_ECORRUPT);
	p.len = 1;
	assert_int_equal(docket_tlog_verify_consistency(&p, r4, r4), DOCKET_EINVALID);
	p.index = 0;
	p.len = 0;
	assert_int_equal(docket_tlog_verify_consistency(&p, r4, r4), DOCKET_EINVALID);
	p.index = 5;
	assert_int_equal(docket_tlog_verify_consistency(&p, r4, r4), DOCKET_EINVALID);
	assert_int_equal(merkle_consistency(&p, &s, 0, 8), DOCKET_EINVALID);
	free(t.leaf);
}

/* ---- a ledger ---- */

#define LEDGER_EVENTS 1500

typedef struct fixture {
	char *dir;
	docket_ledger *l;
	uint64_t n;
	mem_tree t;             /* leaf hashes recomputed from the stored events */
	uint32_t block_segments; /* most segments under one 256-leaf block */
} fixture;

/* Append the lines of `text` in commits of the sizes in `sizes` (cycled). */
static void append_uneven(docket_ledger *l, const char *text)
{
	static const size_t sizes[] = { 1, 3, 300, 1, 700, 17, 256, 2000 };
	const char *p = text;

	for (size_t i = 0; *p; i++) {
		const char *q = p;
		char *chunk;

		for (size_t k = 0; k < sizes[i % 8] && *q; k++)
			q = strchr(q, '\n') + 1;
		chunk = strndup(p, (size_t)(q - p));
		audit_record_text(l, chunk);
		free(chunk);
		p = q;
	}
}

static void leaves_from_events(fixture *f)
{
	ledger_reader r;
	MDB_txn *txn;

	f->t.n = f->n;
	f->t.leaf = calloc(f->n, DOCKET_TLOG_HASH_LEN);
	assert_int_equal(store_txn_begin(&txn, f->l, MDB_RDONLY), 0);
	reader_init(&r, f->l, txn);
	for (uint64_t seq = 1, in_block = 0, last = 0; seq <= f->n; seq++) {
		const uint8_t *p;
		size_t len;

		assert_int_equal(reader_payload(&r, seq, &p, &len), 0);
		docket_tlog_leaf_hash(f->t.leaf[seq - 1], p, len);
		if ((seq - 1) % 256 == 0)
			in_block = 0, last = 0;
		if (r.first != last)
			in_block++, last = r.first;
		if (in_block > f->block_segments)
			f->block_segments = (uint32_t)in_block;
	}
	reader_dispose(&r);
	store_txn_abort(f->l, txn);
}

static int setup(void **state)
{
	fixture *f = calloc(1, sizeof(*f));
	docket_buf text = DOCKET_BUF_INIT;
	docket_tlog_head head;

	f->l = audit_new_ledger(&f->dir);
	assert_int_equal(gen_mix(&text, LEDGER_EVENTS, 13, NULL), 0);
	assert_int_equal(docket_buf_putc(&text, '\0'), 0);
	append_uneven(f->l, text.ptr);
	docket_buf_dispose(&text);
	assert_int_equal(docket_tlog_head_get(&head, f->l), 0);
	f->n = head.size;
	assert_true(f->n >= LEDGER_EVENTS);
	leaves_from_events(f);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fixture *f = *state;

	docket_ledger_free(f->l);
	test_rmdir_free(f->dir);
	free(f->t.leaf);
	free(f);
	return 0;
}

static void test_ledger_roots(void **state)
{
	fixture *f = *state;
	merkle_src s = { mem_leaf, NULL, &f->t };
	docket_tlog_head head;
	uint8_t want[32], got[32];

	assert_int_equal(docket_tlog_head_get(&head, f->l), 0);
	assert_int_equal(merkle_mth(&s, 0, f->n, want), 0);
	assert_memory_equal(head.root, want, 32);
	for (uint64_t size = 0; size <= f->n; size += size < 600 ? 1 : 7) {
		assert_int_equal(merkle_mth(&s, 0, size, want), 0);
		assert_int_equal(docket_tlog_root_at(got, f->l, size), 0);
		assert_memory_equal(got, want, 32);
	}
	assert_int_equal(docket_tlog_root_at(got, f->l, f->n + 1), DOCKET_EINVALID);
}

static void test_ledger_proofs(void **state)
{
	fixture *f = *state;
	merkle_src s = { mem_leaf, NULL, &f->t };
	static const uint64_t sizes[] = { 1, 2, 255, 256, 257, 511, 512, 1023, 1024, 1025, 1300 };

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint64_t size = sizes[i];
		uint8_t root[32];

		assert_int_equal(docket_tlog_root_at(root, f->l, size), 0);
		for (uint64_t seq = 1; seq <= size; seq += 1 + seq / 5) {
			docket_tlog_proof got, want;

			assert_int_equal(docket_tlog_inclusion(&got, f->l, seq, size), 0);
			assert_int_equal(merkle_inclusion(&want, &s, seq - 1, size), 0);
			assert_int_equal(got.len, want.len);
			assert_memory_equal(got.hash, want.hash, want.len * 32);
			assert_int_equal(docket_tlog_verify_inclusion(&got, f->t.leaf[seq - 1], root), 0);
			/* the leaf's block and the right edge's, each read once */
			if (got.segments_read > 2 * f->block_segments)
				fail_msg("inclusion of %llu in %llu read %u segments", (unsigned long long)seq,
					 (unsigned long long)size, got.segments_read);
		}
		for (uint64_t m = 1; m <= size; m += 1 + m / 3) {
			docket_tlog_proof got, want;
			uint8_t old_root[32];

			assert_int_equal(docket_tlog_consistency(&got, f->l, m, size), 0);
			assert_int_equal(merkle_consistency(&want, &s, m, size), 0);
			assert_int_equal(got.len, want.len);
			assert_memory_equal(got.hash, want.hash, want.len * 32);
			assert_int_equal(docket_tlog_root_at(old_root, f->l, m), 0);
			assert_int_equal(docket_tlog_verify_consistency(&got, old_root, root), 0);
		}
	}
	{
		docket_tlog_proof p;

		assert_int_equal(docket_tlog_inclusion(&p, f->l, 0, 5), DOCKET_EINVALID);
		assert_int_equal(docket_tlog_inclusion(&p, f->l, 6, 5), DOCKET_EINVALID);
		assert_int_equal(docket_tlog_inclusion(&p, f->l, 1, f->n + 1), DOCKET_EINVALID);
		assert_int_equal(docket_tlog_consistency(&p, f->l, 0, 5), DOCKET_EINVALID);
		assert_int_equal(docket_tlog_consistency(&p, f->l, 6, 5), DOCKET_EINVALID);
	}
}

static void test_origin(void **state)
{
	fixture *f = *state;
	char origin[64];

	assert_int_equal(docket_tlog_origin(origin, f->l), 0);
	assert_int_equal(strncmp(origin, "docket.dev/ledger/", 18), 0);
	assert_int_equal(strlen(origin), 18 + 32);
}

static void verify_fails_with(docket_ledger *l, const char *what)
{
	docket_verify_report rep;

	assert_int_equal(docket_ledger_verify(l, &rep), 0);
	if (rep.ok)
		fail_msg("verify passed; expected '%s'", what);
	if (!strstr(rep.problem, what))
		fail_msg("problem '%s' does not mention '%s'", rep.problem, what);
}

static void verify_ok(docket_ledger *l)
{
	docket_verify_report rep;

	assert_int_equal(docket_ledger_verify(l, &rep), 0);
	if (!rep.ok)
		fail_msg("verify: %s", rep.problem);
}

/* Change one byte of the stored node `nth` (0: the first) of the tree DBI. */
static void spoil_node(docket_ledger *l, size_t nth)
{
	MDB_txn *txn;
	MDB_cursor *cur;
	MDB_val k, v;
	uint8_t h[32];
	int rc;

	assert_int_equal(store_txn_begin(&txn, l, 0), 0);
	assert_int_equal(mdb_cursor_open(txn, l->dbi.tree, &cur), 0);
	rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST);
	for (size_t i = 0; rc == 0 && i < nth; i++)
		rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT);
	assert_int_equal(rc, 0);
	memcpy(h, v.mv_data, 32);
	h[5] ^= 0x10;
	v.mv_data = h;
	assert_int_equal(mdb_cursor_put(cur, &k, &v, MDB_CURRENT), 0);
	mdb_cursor_close(cur);
	assert_int_equal(store_txn_commit(l, txn), 0);
}

static void test_verify_tree(void **state)
{
	fixture *f = *state;
	docket_tlog_head before, after;
	MDB_txn *txn;
	MDB_val v;
	uint8_t buf[8 + 64 * 32];

	verify_ok(f->l);
	assert_int_equal(docket_tlog_head_get(&before, f->l), 0);
	/* a stored node */
	spoil_node(f->l, 2);
	verify_fails_with(f->l, "Merkle tree node of level");
	verify_fails_with(f->l, "docket reindex");
	assert_int_equal(docket_ledger_reindex(f->l), 0);
	verify_ok(f->l);
	/* the frontier (the head root) */
	assert_int_equal(store_txn_begin(&txn, f->l, 0), 0);
	assert_int_equal(store_meta_get(txn, f->l, "merkle", &v), 0);
	assert_true(v.mv_size <= sizeof(buf));
	memcpy(buf, v.mv_data, v.mv_size);
	buf[v.mv_size - 1] ^= 1;
	assert_int_equal(store_meta_put(txn, f->l, "merkle", buf, v.mv_size), 0);
	assert_int_equal(store_txn_commit(f->l, txn), 0);
	assert_int_equal(docket_tlog_head_get(&after, f->l), 0);
	assert_memory_not_equal(after.root, before.root, 32);
	verify_fails_with(f->l, "frontier");
	/* a damaged record */
	assert_int_equal(store_txn_begin(&txn, f->l, 0), 0);
	assert_int_equal(store_meta_put(txn, f->l, "merkle", buf, 9), 0);
	assert_int_equal(store_txn_commit(f->l, txn), 0);
	assert_int_equal(docket_tlog_head_get(&after, f->l), DOCKET_ECORRUPT);
	verify_fails_with(f->l, "damaged");
	/* no tree at all, while the indexes claim the current version */
	assert_int_equal(store_txn_begin(&txn, f->l, 0), 0);
	assert_int_equal(merkle_drop(f->l, txn), 0);
	assert_int_equal(store_txn_commit(f->l, txn), 0);
	verify_fails_with(f->l, "no Merkle tree");
	assert_int_equal(docket_ledger_reindex(f->l), 0);
	verify_ok(f->l);
	assert_int_equal(docket_tlog_head_get(&after, f->l), 0);
	assert_memory_equal(after.root, before.root, 32);
	assert_int_equal(after.size, before.size);
}

/* The problem verify reports, or "" when it passes; the same whatever the
 * size of the chunks it rebuilds in (its tree walk resumes across them). */
static void verify_problem(docket_ledger *l, char *out, size_t cap)
{
	static const uint64_t chunks[] = { 97, 256, 1 };
	uint64_t saved = ledger_verify_chunk;
	docket_verify_report rep;

	assert_int_equal(docket_ledger_verify(l, &rep), 0);
	snprintf(out, cap, "%s", rep.ok ? "" : rep.problem);
	for (size_t i = 0; i < sizeof(chunks) / sizeof(chunks[0]); i++) {
		ledger_verify_chunk = chunks[i];
		assert_int_equal(docket_ledger_verify(l, &rep), 0);
		ledger_verify_chunk = saved;
		assert_string_equal(rep.ok ? "" : rep.problem, out);
	}
}

/* Put (or with `del`, delete) the tree node of `level` ending at event `end`. */
static void tree_edit(docket_ledger *l, uint64_t end, unsigned level, int del)
{
	uint8_t key[9], h[32];
	MDB_val k = { sizeof(key), key }, v = { sizeof(h), h };
	MDB_txn *txn;

	docket_be64_put(key, end);
	key[8] = (uint8_t)level;
	memset(h, 0x5a, sizeof(h));
	assert_int_equal(store_txn_begin(&txn, l, 0), 0);
	assert_int_equal(del ? mdb_del(txn, l->dbi.tree, &k, NULL) : mdb_put(txn, l->dbi.tree, &k, &v, 0), 0);
	assert_int_equal(store_txn_commit(l, txn), 0);
}

/*
 * verify checks the tree in the same pass as the chain, chunk by chunk: a
 * node changed, missing or added (between two, or past the end) is found
 * with the same message at every chunk size, and an honest tree passes at
 * every chunk size.
 */
static void test_verify_tree_one_pass(void **state)
{
	fixture *f = *state;
	uint64_t last = f->n & ~(uint64_t)255;   /* the last level-8 node ends here */
	char problem[sizeof(((docket_verify_report *)0)->problem)], want[160];

	assert_true(last >= 1024);
	verify_problem(f->l, problem, sizeof(problem));
	assert_string_equal(problem, "");
	/* the last stored node, in the last chunk */
	spoil_node(f->l, 5);
	verify_problem(f->l, problem, sizeof(problem));
	assert_non_null(strstr(problem, "Merkle tree node of level"));
	assert_non_null(strstr(problem, "does not match the events"));
	assert_int_equal(docket_ledger_reindex(f->l), 0);
	/* a node in the middle goes missing */
	tree_edit(f->l, 768, 8, 1);
	verify_problem(f->l, problem, sizeof(problem));
	assert_string_equal(problem, "Merkle tree node of level 8 over events 513..768 does not match the events; "
				     "run `docket reindex` to rebuild it");
	assert_int_equal(docket_ledger_reindex(f->l), 0);
	/* one added between two: level 8 cannot end at event 700 */
	tree_edit(f->l, 700, 8, 0);
	verify_problem(f->l, problem, sizeof(problem));
	assert_string_equal(problem, "Merkle tree node of level 8 over events 513..768 does not match the events; "
				     "run `docket reindex` to rebuild it");
	assert_int_equal(docket_ledger_reindex(f->l), 0);
	/* one added past the end of the log */
	tree_edit(f->l, last + 256, 8, 0);
	verify_problem(f->l, problem, sizeof(problem));
	assert_string_equal(problem, "the Merkle tree holds nodes past the end of the log; "
				     "run `docket reindex` to rebuild it");
	/* the last node missing: the end of the table comes first */
	assert_int_equal(docket_ledger_reindex(f->l), 0);
	tree_edit(f->l, last, 8, 1);
	verify_problem(f->l, problem, sizeof(problem));
	snprintf(want, sizeof(want), "Merkle tree node of level 8 over events %llu..%llu is missing",
		 (unsigned long long)(last - 255), (unsigned long long)last);
	assert_non_null(strstr(problem, want));
	assert_int_equal(docket_ledger_reindex(f->l), 0);
	verify_problem(f->l, problem, sizeof(problem));
	assert_string_equal(problem, "");
}

/* A format-2 ledger of the docket before the tree: no `tree` table, no
 * meta record, projection version 3. */
static void make_old(fixture *f)
{
	MDB_txn *txn;

	assert_int_equal(store_txn_begin(&txn, f->l, 0), 0);
	assert_int_equal(mdb_drop(txn, f->l->dbi.tree, 1), 0);
	assert_int_equal(mdb_del(txn, f->l->dbi.main, &(MDB_val){ 6, "merkle" }, NULL), 0);
	assert_int_equal(store_meta_put_u64(txn, f->l, "projection_version", 3), 0);
	assert_int_equal(store_txn_commit(f->l, txn), 0);
	docket_ledger_free(f->l);
	f->l = NULL;
}

static void test_old_ledger(void **state)
{
	fixture *f = *state;
	docket_open_options ro = DOCKET_OPEN_OPTIONS_INIT;
	docket_verify_report rep;
	docket_tlog_head head;
	docket_tlog_proof p;
	uint8_t root[32];

	make_old(f);
	ro.flags = DOCKET_OPEN_READONLY;
	assert_int_equal(docket_ledger_open(&f->l, f->dir, &ro), 0);
	assert_int_equal(docket_tlog_head_get(&head, f->l), DOCKET_EVERSION);
	assert_non_null(strstr(docket_error_last()->message, "reindex"));
	assert_int_equal(docket_tlog_root_at(root, f->l, 3), DOCKET_EVERSION);
	assert_int_equal(docket_tlog_inclusion(&p, f->l, 1, 3), DOCKET_EVERSION);
	/* verify: old indexes, not a corruption */
	assert_int_equal(docket_ledger_verify(f->l, &rep), 0);
	assert_true(rep.ok);
	assert_true(rep.old_indexes);
	docket_ledger_free(f->l);
	/* a writable open rebuilds it */
	f->l = audit_open(f->dir);
	assert_int_equal(docket_tlog_head_get(&head, f->l), 0);
	assert_int_equal(head.size, f->n);
	assert_int_equal(merkle_mth(&(merkle_src){ mem_leaf, NULL, &f->t }, 0, f->n, root), 0);
	assert_memory_equal(head.root, root, 32);
	verify_ok(f->l);
}

static void test_empty_ledger(void **state)
{
	char *dir;
	docket_ledger *l = audit_new_ledger(&dir);
	docket_tlog_head head;
	uint8_t empty[32];

	(void)state;
	unhex(empty, ct_roots[0]);
	assert_int_equal(docket_tlog_head_get(&head, l), 0);
	assert_int_equal(head.size, 0);
	assert_memory_equal(head.root, empty, 32);
	verify_ok(l);
	docket_ledger_free(l);
	test_rmdir_free(dir);
}

/* The benchmark switch: no tree, and verify says so. */
static void test_tree_off(void **state)
{
	char *dir;
	docket_ledger *l = audit_new_ledger(&dir);

	(void)state;
	l->merkle_off = 1;
	audit_record_fixture(l, "sessions/demo-basic.jsonl");
	l->merkle_off = 0;
	verify_fails_with(l, "no Merkle tree");
	docket_ledger_free(l);
	test_rmdir_free(dir);
}

/* The demo fixture's lines, with `edit` applied: 's' swaps lines 4 and 5
 * (two intents of different calls: still a legal history), 'd' drops the
 * last line, 'b' changes a byte of an output. */
static char *demo_variant(char edit)
{
	const char *root = getenv("DOCKET_SOURCE_ROOT");
	docket_buf buf = DOCKET_BUF_INIT;
	char path[1024], *text, *lines[64], *p;
	size_t n = 0, len;
	FILE *f;

	snprintf(path, sizeof(path), "%s/fixtures/sessions/demo-basic.jsonl", root);
	assert_non_null(f = fopen(path, "rb"));
	text = calloc(1, 1 << 16);
	len = fread(text, 1, (1 << 16) - 1, f);
	fclose(f);
	assert_true(len > 0);
	if (edit == 'b')
		assert_non_null(p = strstr(text, "42 passing")), p[0] = '7';
	for (p = strtok(text, "\n"); p && n < 64; p = strtok(NULL, "\n"))
		lines[n++] = p;
	if (edit == 's') {
		char *t = lines[3];

		lines[3] = lines[4];
		lines[4] = t;
	} else if (edit == 'd')
		n--;
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(docket_buf_puts(&buf, lines[i]), 0);
		assert_int_equal(docket_buf_putc(&buf, '\n'), 0);
	}
	assert_int_equal(docket_buf_putc(&buf, '\0'), 0);
	free(text);
	return buf.ptr;
}

/* A history re-chained (its own chain is sound) under the tree of another:
 * the events changed, dropped or reordered must not match that tree. */
static void test_rechained_history(void **state)
{
	static const char edits[] = { 's', 'd', 'b' };
	char *dir_a, *dir_b;
	docket_ledger *a = audit_new_ledger(&dir_a);
	MDB_txn *ta, *tb;
	MDB_val v;

	(void)state;
	audit_record_fixture(a, "sessions/demo-basic.jsonl");
	for (size_t i = 0; i < sizeof(edits); i++) {
		docket_ledger *b = audit_new_ledger(&dir_b);
		char *text = demo_variant(edits[i]);
		docket_tlog_head ha, hb;

		audit_record_text(b, text);
		docket_free(text);
		verify_ok(b);
		assert_int_equal(docket_tlog_head_get(&ha, a), 0);
		assert_int_equal(docket_tlog_head_get(&hb, b), 0);
		assert_memory_not_equal(ha.root, hb.root, 32);
		/* b's events under a's tree */
		assert_int_equal(store_txn_begin(&ta, a, MDB_RDONLY), 0);
		assert_int_equal(store_meta_get(ta, a, "merkle", &v), 0);
		assert_int_equal(store_txn_begin(&tb, b, 0), 0);
		assert_int_equal(store_meta_put(tb, b, "merkle", v.mv_data, v.mv_size), 0);
		assert_int_equal(store_txn_commit(b, tb), 0);
		store_txn_abort(a, ta);
		verify_fails_with(b, "Merkle tree");
		docket_ledger_free(b);
		test_rmdir_free(dir_b);
	}
	docket_ledger_free(a);
	test_rmdir_free(dir_a);
}

/* migrate (format 1) and compact build the tree: its head is the tree of
 * the events, before and after. */
static void test_migrate_compact(void **state)
{
	const char *root = getenv("DOCKET_SOURCE_ROOT");
	fixture f;
	docket_rewrite_report rep;
	docket_tlog_head h1, h2;
	uint8_t want[32];
	char src[1024], dst[1024], cmd[3200];

	(void)state;
	memset(&f, 0, sizeof(f));
	assert_non_null(root);
	f.dir = test_mkdtemp();
	snprintf(src, sizeof(src), "%s/fixtures/ledger-v1/data.mdb", root);
	snprintf(dst, sizeof(dst), "%s/data.mdb", f.dir);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s' && chmod 600 '%s'", src, dst, dst);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(docket_ledger_migrate(f.dir, 0, &rep), 0);
	f.l = audit_open(f.dir);
	assert_int_equal(docket_tlog_head_get(&h1, f.l), 0);
	assert_int_equal(h1.size, rep.events);
	f.n = h1.size;
	leaves_from_events(&f);
	assert_int_equal(merkle_mth(&(merkle_src){ mem_leaf, NULL, &f.t }, 0, f.n, want), 0);
	assert_memory_equal(h1.root, want, 32);
	verify_ok(f.l);
	docket_ledger_free(f.l);
	assert_int_equal(docket_ledger_compact(f.dir, 0, &rep), 0);
	f.l = audit_open(f.dir);
	assert_int_equal(docket_tlog_head_get(&h2, f.l), 0);
	assert_int_equal(h2.size, h1.size);
	assert_memory_equal(h2.root, h1.root, 32);
	verify_ok(f.l);
	docket_ledger_free(f.l);
	test_rmdir_free(f.dir);
	free(f.t.leaf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reference_roots),
		cmocka_unit_test(test_reference_inclusion),
		cmocka_unit_test(test_reference_consistency),
		cmocka_unit_test(test_empty_ledger),
		cmocka_unit_test(test_tree_off),
		cmocka_unit_test(test_migrate_compact),
		cmocka_unit_test(test_rechained_history),
		cmocka_unit_test_setup_teardown(test_ledger_roots, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ledger_proofs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_origin, setup, teardown),
		cmocka_unit_test_setup_teardown(test_verify_tree, setup, teardown),
		cmocka_unit_test_setup_teardown(test_verify_tree_one_pass, setup, teardown),
		cmocka_unit_test_setup_teardown(test_old_ledger, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
