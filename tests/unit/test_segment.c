// SPDX-License-Identifier: Apache-2.0
/*
 * test_segment.c: the segments of formats 2 and 3 (ledger/segment.c,
 * docs/file-format.md "Segments (format 3)"): what the writer stores, what
 * the reader gives back, which part a read decompresses, and every damage
 * the parser must refuse.
 */
#include "testutil.h"

#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "docket/ledger.h"
#include "ledger/ledger_internal.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/error.h"

#define KIND_INTENT DOCKET__V1__EVENT__BODY_TOOL_INTENT
#define KIND_OUTCOME DOCKET__V1__EVENT__BODY_TOOL_COMPLETED
#define MAX_EVENTS 64

typedef struct fixture {
	char *dir;
	docket_ledger *l;
	uint32_t n;
	unsigned kinds[MAX_EVENTS];
	docket_buf payloads[MAX_EVENTS];
	uint8_t hashes[MAX_EVENTS][LEDGER_HASH_LEN];
	docket_buf seg;                 /* the encoded segment */
} fixture;

static int setup(void **state)
{
	docket_open_options opts = DOCKET_OPEN_OPTIONS_INIT;
	fixture *f = calloc(1, sizeof(*f));

	f->dir = test_mkdtemp();
	opts.flags = DOCKET_OPEN_CREATE;
	assert_int_equal(docket_ledger_open(&f->l, f->dir, &opts), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fixture *f = *state;

	for (uint32_t i = 0; i < MAX_EVENTS; i++)
		docket_buf_dispose(&f->payloads[i]);
	docket_buf_dispose(&f->seg);
	docket_ledger_free(f->l);
	test_rmdir_free(f->dir);
	free(f);
	return 0;
}

/* Event i: `len` bytes of text that compresses (a payload need not be
 * protobuf for the segment layer), chained from the one before. */
static void add_event(fixture *f, unsigned kind, size_t len)
{
	uint32_t i = f->n++;
	docket_buf *b = &f->payloads[i];
	uint8_t zero[LEDGER_HASH_LEN] = { 0 };

	assert_true(i < MAX_EVENTS);
	docket_buf_clear(b);
	f->kinds[i] = kind;
	for (size_t j = 0; b->len < len; j++) {
		char line[64];
		int k = snprintf(line, sizeof(line), "event %u kind %u line %zu ok\n", i, kind, j);

		assert_int_equal(docket_buf_put(b, line, (size_t)k < len - b->len ? (size_t)k : len - b->len), 0);
	}
	assert_int_equal(chain_next(f->hashes[i], i ? f->hashes[i - 1] : zero, i + 1,
				    (const uint8_t *)b->ptr, b->len), 0);
}

/* Encode the events as one segment at seq 1 (version 2 or 3) into f->seg,
 * through the writer's own path (seg_flush into a transaction that is then
 * dropped). */
static void encode(fixture *f, uint8_t version)
{
	MDB_txn *txn = NULL;
	seg_writer w;
	uint8_t key[8];
	MDB_val k = { sizeof(key), key }, v;

	assert_int_equal(store_txn_begin(&txn, f->l, 0), 0);
	seg_writer_init(&w, f->l);
	assert_int_equal(w.version, SEG_VERSION);     /* a new ledger is format 3 */
	w.version = version;
	for (uint32_t i = 0; i < f->n; i++)
		assert_int_equal(seg_add(&w, i + 1, f->kinds[i], (const uint8_t *)f->payloads[i].ptr,
					 f->payloads[i].len, f->hashes[i]), 0);
	f->l->merkle_off = 1;
	assert_int_equal(seg_flush(&w, txn), 0);
	f->l->merkle_off = 0;
	docket_be64_put(key, 1);
	assert_int_equal(mdb_get(txn, f->l->dbi.events, &k, &v), 0);
	docket_buf_clear(&f->seg);
	assert_int_equal(docket_buf_put(&f->seg, v.mv_data, v.mv_size), 0);
	seg_writer_dispose(&w);
	store_txn_abort(f->l, txn);
}

/* Load `seg` as the segment at seq 1 into r (a read transaction in *txn). */
static int adopt(fixture *f, ledger_reader *r, MDB_txn **txn, const void *seg, size_t len)
{
	assert_int_equal(store_txn_begin(txn, f->l, MDB_RDONLY), 0);
	reader_init(r, f->l, *txn);
	r->prev_ok = 1;
	return reader_adopt(r, 1, seg, len);
}

static void release(fixture *f, ledger_reader *r, MDB_txn *txn)
{
	reader_dispose(r);
	store_txn_abort(f->l, txn);
}

/* Every payload and chain hash read back is the one written. */
static void check_all(fixture *f, ledger_reader *r)
{
	for (uint32_t i = 0; i < f->n; i++) {
		const uint8_t *p;
		uint8_t h[LEDGER_HASH_LEN];
		unsigned kind;
		size_t len;

		assert_int_equal(reader_kind(r, i + 1, &kind), 0);
		assert_int_equal(kind, f->kinds[i]);
		assert_int_equal(reader_payload(r, i + 1, &p, &len), 0);
		assert_int_equal(len, f->payloads[i].len);
		assert_memory_equal(p, f->payloads[i].ptr, len);
		assert_int_equal(reader_hash(r, i + 1, h), 0);
		assert_memory_equal(h, f->hashes[i], LEDGER_HASH_LEN);
	}
}

/* A commit's worth: intents (part A) beside outcomes with big outputs
 * (part B), interleaved. */
static void mixed_events(fixture *f)
{
	for (int i = 0; i < 8; i++) {
		add_event(f, KIND_INTENT, 200 + 10 * (size_t)i);
		add_event(f, DOCKET__V1__EVENT__BODY_TOOL_DISPATCHED, 60);
		add_event(f, KIND_OUTCOME, 6000 + 500 * (size_t)i);
	}
}

static void test_v3_layout(void **state)
{
	fixture *f = *state;
	const uint8_t *s;
	size_t pos = 38, size_a = 0;
	int shift = 0;

	mixed_events(f);
	encode(f, SEG_VERSION);
	s = (const uint8_t *)f->seg.ptr;
	assert_int_equal(s[0], 3);
	assert_int_equal(s[1], 1);                       /* part A: zstd */
	assert_int_equal(s[2], 0);                       /* no dictionary */
	assert_int_equal(s[4] << 8 | s[5], (int)f->n);
	assert_memory_equal(s + 6, f->hashes[f->n - 1], LEDGER_HASH_LEN);
	/* the index: the part bit on every outcome and on nothing else */
	for (uint32_t i = 0; i < f->n; i++) {
		assert_int_equal(s[pos] & 0x7f, f->kinds[i]);
		assert_int_equal(!!(s[pos] & 0x80), f->kinds[i] == KIND_OUTCOME);
		for (pos++; s[pos] & 0x80; pos++)
			;
		pos++;
	}
	assert_int_equal(s[pos++], 1);                   /* part B: zstd */
	do
		size_a |= (size_t)(s[pos] & 0x7f) << shift, shift += 7;
	while (s[pos++] & 0x80);
	assert_true(size_a > 0 && pos + size_a < f->seg.len);
	/* part A alone is a zstd frame of exactly the intents and dispatches */
	{
		size_t raw = 0;
		unsigned long long want = 0;

		for (uint32_t i = 0; i < f->n; i++)
			if (f->kinds[i] != KIND_OUTCOME)
				raw += f->payloads[i].len;
		want = ZSTD_getFrameContentSize(s + pos, size_a);
		/* written without a content size: zstd says it does not know */
		assert_true(want == ZSTD_CONTENTSIZE_UNKNOWN || want == raw);
		assert_int_equal(ZSTD_findFrameCompressedSize(s + pos, size_a), size_a);
	}
}

static void test_v3_reads_one_part(void **state)
{
	fixture *f = *state;
	ledger_reader r;
	MDB_txn *txn = NULL;
	const uint8_t *p;
	size_t len;

	mixed_events(f);
	encode(f, SEG_VERSION);
	assert_int_equal(adopt(f, &r, &txn, f->seg.ptr, f->seg.len), 0);
	assert_int_equal(r.version, 3);
	assert_int_equal(r.decoded, 0);
	/* the intents and dispatches: part A only, part B stays compressed */
	for (uint32_t i = 0; i < f->n; i++) {
		if (f->kinds[i] == KIND_OUTCOME)
			continue;
		assert_int_equal(reader_payload(&r, i + 1, &p, &len), 0);
		assert_int_equal(len, f->payloads[i].len);
		assert_memory_equal(p, f->payloads[i].ptr, len);
	}
	assert_int_equal(r.decoded, 1);
	/* an outcome: part B too */
	assert_int_equal(reader_payload(&r, 3, &p, &len), 0);
	assert_memory_equal(p, f->payloads[2].ptr, len);
	assert_int_equal(r.decoded, 3);
	check_all(f, &r);
	release(f, &r, txn);
}

/* The same events in a format-2 and a format-3 segment read back the same
 * payloads and the same chain hashes; a format-2 writer is byte for byte
 * what it was (one part, no part bits). */
static void test_v2_and_v3_agree(void **state)
{
	fixture *f = *state;
	ledger_reader r;
	MDB_txn *txn = NULL;
	const uint8_t *s;

	mixed_events(f);
	encode(f, SEG_VERSION_2);
	s = (const uint8_t *)f->seg.ptr;
	assert_int_equal(s[0], 2);
	for (size_t pos = 38, i = 0; i < f->n; i++) {
		assert_int_equal(s[pos], f->kinds[i]);
		for (pos++; s[pos] & 0x80; pos++)
			;
		pos++;
	}
	assert_int_equal(adopt(f, &r, &txn, f->seg.ptr, f->seg.len), 0);
	assert_int_equal(r.version, 2);
	check_all(f, &r);
	release(f, &r, txn);
	encode(f, SEG_VERSION);
	assert_int_equal(adopt(f, &r, &txn, f->seg.ptr, f->seg.len), 0);
	check_all(f, &r);
	release(f, &r, txn);
}

/* One part empty: outcomes only (part A empty), no outcome (part B empty),
 * and payloads too small to compress (both raw). */
static void test_v3_empty_and_raw_parts(void **state)
{
	fixture *f = *state;
	ledger_reader r;
	MDB_txn *txn = NULL;

	add_event(f, KIND_OUTCOME, 5000);
	add_event(f, KIND_OUTCOME, 7000);
	encode(f, SEG_VERSION);
	assert_int_equal(((uint8_t *)f->seg.ptr)[1], 0); /* empty part A: raw */
	assert_int_equal(adopt(f, &r, &txn, f->seg.ptr, f->seg.len), 0);
	assert_int_equal(r.raw[0], 0);
	check_all(f, &r);
	release(f, &r, txn);

	f->n = 0;
	add_event(f, KIND_INTENT, 9000);
	encode(f, SEG_VERSION);
	assert_int_equal(adopt(f, &r, &txn, f->seg.ptr, f->seg.len), 0);
	assert_int_equal(r.raw[1], 0);
	assert_int_equal(r.codec[1], 0);
	check_all(f, &r);
	release(f, &r, txn);

	f->n = 0;
	add_event(f, KIND_INTENT, 10);
	add_event(f, KIND_OUTCOME, 12);
	encode(f, SEG_VERSION);
	assert_int_equal(adopt(f, &r, &txn, f->seg.ptr, f->seg.len), 0);
	assert_int_equal(r.codec[0], 0);
	assert_int_equal(r.codec[1], 0);
	check_all(f, &r);
	release(f, &r, txn);
}

/* Load damaged bytes: refused at once, or when the damaged part is read
 * (always DOCKET_ECORRUPT, never a crash, never wrong bytes). */
static int load_damaged(fixture *f, const uint8_t *seg, size_t len, int *at_read)
{
	ledger_reader r;
	MDB_txn *txn = NULL;
	int error = adopt(f, &r, &txn, seg, len);

	*at_read = 0;
	if (error == 0) {
		uint8_t h[LEDGER_HASH_LEN];

		*at_read = 1;
		for (uint32_t i = 0; error == 0 && i < r.count; i++) {
			const uint8_t *p;
			size_t n;

			error = reader_payload(&r, i + 1, &p, &n);
			if (error == 0 && (n != f->payloads[i].len || memcmp(p, f->payloads[i].ptr, n) != 0))
				error = reader_hash(&r, i + 1, h);
		}
		if (error == 0)
			error = reader_hash(&r, 1, h);
	}
	release(f, &r, txn);
	return error;
}

static void test_v3_damage_refused(void **state)
{
	fixture *f = *state;
	uint8_t *copy;
	size_t len, pos = 38;
	int at_read;

	mixed_events(f);
	encode(f, SEG_VERSION);
	len = f->seg.len;
	assert_non_null(copy = malloc(len));
	/* every truncation */
	for (size_t cut = 0; cut < len; cut += cut < 400 ? 1 : 97)
		assert_int_equal(load_damaged(f, (const uint8_t *)f->seg.ptr, cut, &at_read), DOCKET_ECORRUPT);
	for (uint32_t i = 0; i < f->n; i++) {
		for (pos++; ((uint8_t *)f->seg.ptr)[pos] & 0x80; pos++)
			;
		pos++;
	}
	/* pos: part B's codec */
#define DAMAGE(off, val, why) do { \
		memcpy(copy, f->seg.ptr, len); \
		copy[off] = (uint8_t)(val); \
		assert_int_equal(load_damaged(f, copy, len, &at_read), DOCKET_ECORRUPT); \
		(void)(why); \
	} while (0)
	DAMAGE(0, 4, "unknown version");
	DAMAGE(1, 3, "unknown codec of part A");
	DAMAGE(pos, 3, "unknown codec of part B");
	DAMAGE(pos, 0, "part B said raw");
	DAMAGE(pos, 2, "part B said dictionary, none named");
	DAMAGE(2, 1, "a dictionary named, no part uses it");
	DAMAGE(pos + 1, 0x7f, "part A's size changed");
	DAMAGE(pos + 1, ((uint8_t *)f->seg.ptr)[pos + 1] ^ 0x80, "part A's size: LEB128 broken");
	DAMAGE(38, ((uint8_t *)f->seg.ptr)[38] ^ 0x80, "an event moved to part B");
	DAMAGE(38 + 2 + 2, ((uint8_t *)f->seg.ptr)[42] | 0x80, "an outcome... and its neighbour");
	/* the last byte of part B: found when part B is read, not before */
	memcpy(copy, f->seg.ptr, len);
	copy[len - 2] ^= 0x55;
	assert_int_equal(load_damaged(f, copy, len, &at_read), DOCKET_ECORRUPT);
	assert_int_equal(at_read, 1);
	free(copy);
#undef DAMAGE
}

/* The stored size of part B of f->seg. */
static size_t r_part_b_len(fixture *f)
{
	ledger_reader r;
	MDB_txn *txn = NULL;
	size_t n;

	assert_int_equal(adopt(f, &r, &txn, f->seg.ptr, f->seg.len), 0);
	n = r.part_len[1];
	release(f, &r, txn);
	return n;
}

/* A damaged part B does not stop the reads that need only part A (replay's),
 * and is reported as soon as anything reads part B or the chain. */
static void test_v3_part_b_damage_isolated(void **state)
{
	fixture *f = *state;
	ledger_reader r;
	MDB_txn *txn = NULL;
	uint8_t *copy, h[LEDGER_HASH_LEN];
	const uint8_t *p;
	size_t len;

	mixed_events(f);
	encode(f, SEG_VERSION);
	assert_non_null(copy = malloc(f->seg.len));
	memcpy(copy, f->seg.ptr, f->seg.len);
	/* part B's frame header: it no longer decompresses */
	copy[f->seg.len - r_part_b_len(f)] ^= 0xff;
	assert_int_equal(adopt(f, &r, &txn, copy, f->seg.len), 0);
	assert_int_equal(reader_payload(&r, 1, &p, &len), 0);
	assert_memory_equal(p, f->payloads[0].ptr, len);
	assert_int_equal(reader_payload(&r, 3, &p, &len), DOCKET_ECORRUPT);
	assert_non_null(strstr(docket_error_last()->message, "part B"));
	assert_int_equal(reader_hash(&r, 1, h), DOCKET_ECORRUPT);
	release(f, &r, txn);
	/* a byte inside part B's data may still decompress to the right size:
	 * the chain names it */
	memcpy(copy, f->seg.ptr, f->seg.len);
	copy[f->seg.len - 20] ^= 0xff;
	assert_int_equal(adopt(f, &r, &txn, copy, f->seg.len), 0);
	assert_int_equal(reader_payload(&r, 1, &p, &len), 0);
	assert_memory_equal(p, f->payloads[0].ptr, len);
	assert_int_equal(reader_hash(&r, 1, h), DOCKET_ECORRUPT);
	release(f, &r, txn);
	free(copy);
}

/* Through the ledger: a new ledger is format 3; a small commit after the
 * dictionary is trained stores its parts with it (codec 2); replay-style
 * reads of a whole log decompress no part B. */
static void test_ledger_format3(void **state)
{
	fixture *f = *state;
	char text[512];
	docket_append_result res[3];  /* one per event of a call */
	json_t *ev;
	MDB_txn *txn = NULL;
	MDB_cursor *cur = NULL;
	MDB_val k, v;
	ledger_reader r;
	uint64_t val;
	int rc, dict_parts = 0;

	assert_int_equal(store_txn_begin(&txn, f->l, MDB_RDONLY), 0);
	assert_int_equal(store_meta_get_u64(txn, f->l, "format_version", &val), 0);
	assert_int_equal(val, 3);
	store_txn_abort(f->l, txn);
	assert_non_null(ev = test_json("{\"type\":\"session.opened\",\"session\":\"s\",\"runtime\":\"t\"}"));
	assert_int_equal(docket_ledger_append_json(f->l, &ev, 1, res), 0);
	json_decref(ev);
	for (int i = 0; i < 300; i++) {
		json_t *evs[3];

		snprintf(text, sizeof(text), "{\"type\":\"tool.intent\",\"session\":\"s\",\"invocation\":\"c%d\","
			 "\"tool\":\"shell\",\"args\":{\"command\":[\"make\",\"t%d\"]},\"recovery\":\"replay_safe\"}", i, i);
		evs[0] = test_json(text);
		snprintf(text, sizeof(text), "{\"type\":\"tool.dispatched\",\"session\":\"s\",\"invocation\":\"c%d\"}", i);
		evs[1] = test_json(text);
		snprintf(text, sizeof(text), "{\"type\":\"tool.completed\",\"session\":\"s\",\"invocation\":\"c%d\","
			 "\"status\":\"ok\",\"exit_code\":0,\"output\":\"built target t%d, %d warnings, all ok\"}", i, i, i % 7);
		evs[2] = test_json(text);
		assert_int_equal(docket_ledger_append_json(f->l, evs, 3, res), 0);
		for (int j = 0; j < 3; j++)
			json_decref(evs[j]);
	}
	/* every segment is format 3; some small ones use the dictionary */
	assert_int_equal(store_txn_begin(&txn, f->l, MDB_RDONLY), 0);
	assert_int_equal(mdb_cursor_open(txn, f->l->dbi.events, &cur), 0);
	while ((rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) == 0) {
		reader_init(&r, f->l, txn);
		assert_int_equal(reader_adopt(&r, docket_be64_get(k.mv_data), v.mv_data, v.mv_size), 0);
		assert_int_equal(r.version, 3);
		dict_parts += r.codec[0] == 2;
		reader_dispose(&r);
	}
	mdb_cursor_close(cur);
	store_txn_abort(f->l, txn);
	assert_true(dict_parts > 0);
	/* the intents of the whole log, as replay reads them: no part B */
	assert_int_equal(store_txn_begin(&txn, f->l, MDB_RDONLY), 0);
	reader_init(&r, f->l, txn);
	for (uint64_t seq = 1; seq <= 901; seq++) {
		const uint8_t *p;
		unsigned kind;
		size_t len;

		assert_int_equal(reader_kind(&r, seq, &kind), 0);
		if (kind == KIND_OUTCOME)
			continue;
		assert_int_equal(reader_payload(&r, seq, &p, &len), 0);
		assert_int_equal(r.decoded & 2, 0);
	}
	reader_dispose(&r);
	store_txn_abort(f->l, txn);
	{
		docket_verify_report rep;

		assert_int_equal(docket_ledger_verify(f->l, &rep), 0);
		assert_true(rep.ok);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_v3_layout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_v3_reads_one_part, setup, teardown),
		cmocka_unit_test_setup_teardown(test_v2_and_v3_agree, setup, teardown),
		cmocka_unit_test_setup_teardown(test_v3_empty_and_raw_parts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_v3_damage_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_v3_part_b_damage_isolated, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ledger_format3, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
