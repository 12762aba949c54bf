// SPDX-License-Identifier: Apache-2.0
/*
 * test_seg_stage.c: the parallel segment writer (ledger/seg_stage.c). The
 * same events appended with full segments closed on worker threads and on
 * the append thread alone must give the same stored bytes (events, the
 * Merkle tree, its frontier); the tree must be RFC 6962's over the stored
 * payloads (computed here from the payloads, not by the code under test);
 * a segment a worker fails aborts the whole append; a re-send of an event
 * whose segment is still in flight is found.
 */
#include "testutil.h"

#include <jansson.h>
#include <lmdb.h>
#include <stdlib.h>
#include <string.h>

#include "../bench/gen_mix.h"
#include "docket/ledger.h"
#include "docket/tlog.h"
#include "ledger/event.h"
#include "ledger/ledger_internal.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/error.h"

#define EVENTS 7000

typedef struct events {
	docket_event **ev;
	size_t n;
} events;

typedef struct fixture {
	char *dir[2];
	docket_ledger *l[2];
	events e;
} fixture;

static void events_free(events *e)
{
	for (size_t i = 0; i < e->n; i++)
		docket_event_free(e->ev[i]);
	free(e->ev);
	e->ev = NULL;
	e->n = 0;
}

/* gen_mix's lines (they carry their times: both ledgers store the same bytes). */
static void events_make(events *e, size_t target, uint64_t seed)
{
	docket_buf text = DOCKET_BUF_INIT;
	char *line, *save = NULL;
	size_t cap = 0;

	assert_int_equal(gen_mix(&text, target, seed, NULL), 0);
	assert_int_equal(docket_buf_putc(&text, '\0'), 0);
	for (line = strtok_r(text.ptr, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		json_t *j = json_loads(line, 0, NULL);

		assert_non_null(j);
		if (e->n == cap) {
			cap = cap ? 2 * cap : 1024;
			e->ev = realloc(e->ev, cap * sizeof(*e->ev));
			assert_non_null(e->ev);
		}
		assert_int_equal(docket_event_from_json(&e->ev[e->n++], j), 0);
		json_decref(j);
	}
	docket_buf_dispose(&text);
}

static int setup(void **state)
{
	docket_open_options opts = DOCKET_OPEN_OPTIONS_INIT;
	fixture *f = calloc(1, sizeof(*f));

	opts.flags = DOCKET_OPEN_CREATE;
	for (int i = 0; i < 2; i++) {
		f->dir[i] = test_mkdtemp();
		assert_int_equal(docket_ledger_open(&f->l[i], f->dir[i], &opts), 0);
	}
	events_make(&f->e, EVENTS, 34);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fixture *f = *state;

	ledger_seg_parallel = 1;
	seg_stage_fail_at = 0;
	docket_alloc_fail_reset();
	events_free(&f->e);
	for (int i = 0; i < 2; i++) {
		docket_ledger_free(f->l[i]);
		test_rmdir_free(f->dir[i]);
	}
	free(f);
	return 0;
}

/* events [from, to) in appends of `batch` (the first segment of each then
 * starts anywhere in the tree, not only at a multiple of 1,024) */
static void append_range(docket_ledger *l, events *e, size_t from, size_t to, size_t batch, int parallel)
{
	ledger_seg_parallel = parallel;
	for (size_t i = from; i < to; i += batch) {
		size_t n = to - i < batch ? to - i : batch;

		assert_int_equal(ledger_append(l, e->ev + i, n, NULL), 0);
	}
	ledger_seg_parallel = 1;
}

/* Every record of table `dbi` in both ledgers is the same. */
static void same_table(fixture *f, MDB_dbi d0, MDB_dbi d1, const char *what)
{
	MDB_txn *t[2] = { NULL, NULL };
	MDB_cursor *c[2] = { NULL, NULL };
	MDB_dbi dbi[2] = { d0, d1 };
	size_t records = 0;

	for (int i = 0; i < 2; i++) {
		assert_int_equal(store_txn_begin(&t[i], f->l[i], MDB_RDONLY), 0);
		assert_int_equal(mdb_cursor_open(t[i], dbi[i], &c[i]), 0);
	}
	for (;;) {
		MDB_val k[2], v[2];
		int rc0 = mdb_cursor_get(c[0], &k[0], &v[0], MDB_NEXT);
		int rc1 = mdb_cursor_get(c[1], &k[1], &v[1], MDB_NEXT);

		assert_int_equal(rc0, rc1);
		if (rc0 == MDB_NOTFOUND)
			break;
		assert_int_equal(rc0, 0);
		if (k[0].mv_size != k[1].mv_size || v[0].mv_size != v[1].mv_size ||
		    memcmp(k[0].mv_data, k[1].mv_data, k[0].mv_size) != 0 ||
		    memcmp(v[0].mv_data, v[1].mv_data, v[0].mv_size) != 0)
			fail_msg("%s: record %zu differs", what, records);
		records++;
	}
	assert_true(records > 0);
	for (int i = 0; i < 2; i++) {
		mdb_cursor_close(c[i]);
		store_txn_abort(f->l[i], t[i]);
	}
}

static void same_meta(fixture *f, const char *key)
{
	MDB_txn *t[2] = { NULL, NULL };
	MDB_val v[2];

	for (int i = 0; i < 2; i++) {
		assert_int_equal(store_txn_begin(&t[i], f->l[i], MDB_RDONLY), 0);
		assert_int_equal(store_meta_get(t[i], f->l[i], key, &v[i]), 0);
	}
	assert_int_equal(v[0].mv_size, v[1].mv_size);
	assert_memory_equal(v[0].mv_data, v[1].mv_data, v[0].mv_size);
	for (int i = 0; i < 2; i++)
		store_txn_abort(f->l[i], t[i]);
}

/* RFC 6962 MTH over leaves [0, n), written out here. */
static void mth(uint8_t out[DOCKET_TLOG_HASH_LEN], const uint8_t (*leaf)[DOCKET_TLOG_HASH_LEN], uint64_t n)
{
	uint8_t l[DOCKET_TLOG_HASH_LEN], r[DOCKET_TLOG_HASH_LEN];
	uint64_t k = 1;

	if (n == 1) {
		memcpy(out, leaf[0], DOCKET_TLOG_HASH_LEN);
		return;
	}
	while (k * 2 < n)
		k *= 2;
	mth(l, leaf, k);
	mth(r, leaf + k, n - k);
	docket_tlog_node_hash(out, l, r);
}

/* The ledger's tree against the payloads it stores, at sizes around every
 * boundary a segment or a stored node (256 leaves) can have. */
static void tree_is_rfc6962(docket_ledger *l, uint64_t n)
{
	uint8_t (*leaf)[DOCKET_TLOG_HASH_LEN] = calloc(n, sizeof(*leaf));
	uint64_t sizes[] = { 1, 2, 3, 255, 256, 257, 1023, 1024, 1025, 1029, 2048, 3001, 4096, 4097, n - 1, n };
	uint8_t want[DOCKET_TLOG_HASH_LEN], got[DOCKET_TLOG_HASH_LEN];
	docket_tlog_head head;
	ledger_reader r;
	MDB_txn *txn = NULL;

	assert_non_null(leaf);
	assert_int_equal(store_txn_begin(&txn, l, MDB_RDONLY), 0);
	reader_init(&r, l, txn);
	for (uint64_t seq = 1; seq <= n; seq++) {
		const uint8_t *p;
		size_t len;

		assert_int_equal(reader_payload(&r, seq, &p, &len), 0);
		docket_tlog_leaf_hash(leaf[seq - 1], p, len);
	}
	reader_dispose(&r);
	store_txn_abort(l, txn);
	assert_int_equal(docket_tlog_head_get(&head, l), 0);
	assert_int_equal(head.size, n);
	mth(want, (const uint8_t (*)[DOCKET_TLOG_HASH_LEN])leaf, n);
	assert_memory_equal(head.root, want, DOCKET_TLOG_HASH_LEN);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		if (sizes[i] == 0 || sizes[i] > n)
			continue;
		mth(want, (const uint8_t (*)[DOCKET_TLOG_HASH_LEN])leaf, sizes[i]);
		assert_int_equal(docket_tlog_root_at(got, l, sizes[i]), 0);
		assert_memory_equal(got, want, DOCKET_TLOG_HASH_LEN);
	}
	free(leaf);
}

static uint64_t head_seq(docket_ledger *l)
{
	MDB_txn *txn = NULL;
	uint64_t v = 0;

	assert_int_equal(store_txn_begin(&txn, l, MDB_RDONLY), 0);
	assert_int_equal(store_meta_get_u64(txn, l, "head_seq", &v), 0);
	store_txn_abort(l, txn);
	return v;
}

static void same_ledgers(fixture *f)
{
	same_table(f, f->l[0]->dbi.events, f->l[1]->dbi.events, "events");
	same_table(f, f->l[0]->dbi.tree, f->l[1]->dbi.tree, "tree");
	same_meta(f, "merkle");
	same_meta(f, "head_hash");
	same_meta(f, "frame_bytes");
}

/* Workers or not, the same bytes; and the tree is the RFC's. */
static void test_parallel_equals_serial(void **state)
{
	fixture *f = *state;
	size_t n = f->e.n;
	docket_verify_report rep;

	/* 5 events first: every later segment starts unaligned */
	append_range(f->l[0], &f->e, 0, 5, 5, 0);
	append_range(f->l[1], &f->e, 0, 5, 5, 1);
	append_range(f->l[0], &f->e, 5, n, 3001, 0);
	append_range(f->l[1], &f->e, 5, n, 3001, 1);
	assert_int_equal(head_seq(f->l[1]), n);
	same_ledgers(f);
	tree_is_rfc6962(f->l[1], n);
	/* verify compares every stored node of level >= 8 with the events */
	assert_int_equal(docket_ledger_verify(f->l[1], &rep), 0);
	assert_true(rep.ok);
}

/* A failed worker aborts the append whole, with its message; the ledger
 * is as before, and the same append then succeeds. */
static void test_worker_failure_aborts(void **state)
{
	fixture *f = *state;
	size_t n = f->e.n;
	uint64_t fail[] = { 1, 2, 5 };
	docket_verify_report rep;

	append_range(f->l[0], &f->e, 0, 5, 5, 0);
	append_range(f->l[1], &f->e, 0, 5, 5, 1);
	append_range(f->l[0], &f->e, 5, n, n, 0);
	for (size_t i = 0; i < sizeof(fail) / sizeof(fail[0]); i++) {
		int error;

		seg_stage_fail_at = fail[i];
		error = ledger_append(f->l[1], f->e.ev + 5, n - 5, NULL);
		seg_stage_fail_at = 0;
		assert_int_equal(error, DOCKET_ERROR);
		assert_non_null(strstr(docket_error_last()->message, "failure injected"));
		assert_int_equal(head_seq(f->l[1]), 5);
	}
	assert_int_equal(docket_ledger_verify(f->l[1], &rep), 0);
	assert_true(rep.ok);
	append_range(f->l[1], &f->e, 5, n, n, 1);
	same_ledgers(f);
}

/* Failed allocations anywhere in a parallel append (the workers' included,
 * as they fall): the append fails whole or succeeds whole. */
static void test_alloc_failures(void **state)
{
	fixture *f = *state;
	size_t n = f->e.n < 3000 ? f->e.n : 3000;
	int failed = 0, error = -1;

	append_range(f->l[0], &f->e, 0, n, n, 0);
	for (long k = 0; error != 0; k += 997) {
		docket_alloc_fail_after(k);
		error = ledger_append(f->l[1], f->e.ev, n, NULL);
		docket_alloc_fail_reset();
		if (error == 0)
			break;
		assert_true(error < 0);
		assert_int_equal(head_seq(f->l[1]), 0);
		failed++;
	}
	assert_true(failed > 0);
	same_ledgers(f);
}

/* An identical re-send of an event whose segment a worker may still hold
 * is a duplicate, as on the serial path. */
static void test_resend_in_flight(void **state)
{
	fixture *f = *state;
	size_t n = f->e.n < 4000 ? f->e.n : 4000, first_intent = 0;
	docket_append_result *res[2];
	docket_event **batch = calloc(n + 1, sizeof(*batch));

	assert_non_null(batch);
	for (size_t i = 0; i < n && !first_intent; i++)
		if (f->e.ev[i]->body_case == DOCKET__V1__EVENT__BODY_TOOL_INTENT)
			first_intent = i;
	assert_true(first_intent > 0);
	memcpy(batch, f->e.ev, n * sizeof(*batch));
	batch[n] = f->e.ev[first_intent];   /* the same object: reset between runs by append */
	for (int i = 0; i < 2; i++) {
		res[i] = calloc(n + 1, sizeof(*res[i]));
		assert_non_null(res[i]);
		ledger_seg_parallel = i;
		assert_int_equal(ledger_append(f->l[i], batch, n + 1, res[i]), 0);
		ledger_seg_parallel = 1;
		assert_int_equal(res[i][n].duplicate, 1);
	}
	assert_int_equal(res[1][n].seq, res[0][n].seq);
	assert_int_equal(head_seq(f->l[1]), n);
	same_ledgers(f);
	free(res[0]);
	free(res[1]);
	free(batch);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_parallel_equals_serial, setup, teardown),
		cmocka_unit_test_setup_teardown(test_worker_failure_aborts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_alloc_failures, setup, teardown),
		cmocka_unit_test_setup_teardown(test_resend_in_flight, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
