/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_alloc.c: the bump arena of util/alloc.c (docket_arena) and the
 * routing of jansson's allocations into one, which replay uses for each
 * event it unpacks and each call's args it parses. Every positive case has
 * its negative twin: what does not fit spills to the heap (and is freed
 * there), an arena with a spilled piece refuses a wholesale reset, a refused
 * allocation is NULL, and jansson outside an armed arena allocates on the
 * heap.
 */
#include "testutil.h"

#include <stdint.h>
#include <string.h>

#include "ledger/ledger_internal.h"
#include "util/alloc.h"
#include "util/buf.h"

static int inside(const docket_arena *a, const void *p)
{
	uintptr_t x = (uintptr_t)p, lo = (uintptr_t)a->base;

	return x >= lo && x < lo + a->cap;
}

static void test_arena_bump_and_restart(void **state)
{
	docket_arena a;
	void *p, *q, *z;

	(void)state;
	assert_int_equal(docket_arena_init(&a, 1000), 0);
	assert_int_equal(a.cap % 16, 0);
	p = docket_arena_alloc(&a, 10);
	q = docket_arena_alloc(&a, 33);
	z = docket_arena_alloc(&a, 0);
	assert_true(inside(&a, p) && inside(&a, q) && inside(&a, z));
	assert_int_equal((uintptr_t)q % 16, 0);
	assert_ptr_not_equal(p, q);
	assert_ptr_not_equal(q, z);
	memset(q, 0x5a, 33);
	assert_int_equal(a.live, 3);
	assert_int_equal(a.spilled, 0);
	/* freeing only counts until the last piece goes */
	docket_arena_free(&a, q);
	docket_arena_free(&a, NULL);
	assert_int_equal(a.live, 2);
	assert_true(a.used > 0);
	docket_arena_free(&a, p);
	docket_arena_free(&a, z);
	assert_int_equal(a.live, 0);
	assert_int_equal(a.used, 0);
	assert_ptr_equal(docket_arena_alloc(&a, 8), a.base);
	/* a wholesale reset with nothing spilled */
	assert_int_equal(docket_arena_reset(&a), 1);
	assert_int_equal(a.live, 0);
	assert_ptr_equal(docket_arena_alloc(&a, 8), a.base);
	assert_int_equal(docket_arena_reset(&a), 1);
	docket_arena_dispose(&a);
	docket_arena_dispose(&a);   /* twice, and never initialised: nothing */
}

static void test_arena_spill(void **state)
{
	docket_arena a;
	void *p, *big, *last;

	(void)state;
	assert_int_equal(docket_arena_init(&a, 64), 0);
	p = docket_arena_alloc(&a, 48);
	big = docket_arena_alloc(&a, 4096);         /* bigger than the arena */
	last = docket_arena_alloc(&a, 32);          /* does not fit what is left */
	assert_true(inside(&a, p));
	assert_false(inside(&a, big));
	assert_false(inside(&a, last));
	memset(big, 1, 4096);
	assert_int_equal(a.spilled, 2);
	assert_int_equal(a.live, 3);
	/* spilled pieces must be freed one by one: no wholesale reset */
	assert_int_equal(docket_arena_reset(&a), 0);
	assert_int_equal(a.live, 3);
	docket_arena_free(&a, big);
	docket_arena_free(&a, p);
	assert_int_equal(docket_arena_reset(&a), 0);
	docket_arena_free(&a, last);                 /* the last one starts it over */
	assert_int_equal(a.spilled, 0);
	assert_int_equal(a.live, 0);
	assert_int_equal(a.used, 0);
	docket_arena_dispose(&a);
}

static void test_arena_refused(void **state)
{
	docket_arena a;

	(void)state;
	docket_alloc_fail_after(0);
	assert_int_equal(docket_arena_init(&a, 64), DOCKET_ENOMEM);
	docket_alloc_fail_reset();
	assert_int_equal(docket_arena_init(&a, 64), 0);
	docket_alloc_take_failure();
	docket_alloc_fail_after(0);
	assert_null(docket_arena_alloc(&a, 8));
	assert_null(docket_arena_alloc(&a, 8000));
	docket_alloc_fail_reset();
	assert_int_equal(docket_alloc_take_failure(), 1);
	assert_int_equal(a.live, 0);
	assert_int_equal(a.used, 0);
	docket_arena_dispose(&a);
}

/* protobuf-c through the arena: an event unpacks inside it (or spills), and
 * gives back the same fields as the heap allocator's unpack. */
static void test_arena_protobuf(void **state)
{
	static const char *const small_args = "{\"command\":[\"git\",\"status\"]}";
	Docket__V1__Event ev = DOCKET__V1__EVENT__INIT;
	Docket__V1__ToolIntent ti = DOCKET__V1__TOOL_INTENT__INIT;
	ProtobufCAllocator pb;
	docket_arena a;
	docket_event *out = NULL;
	uint8_t buf[4096];
	char big[3000];
	size_t n;

	(void)state;
	ev.session = "s-1";
	ev.invocation = "i-1";
	ev.body_case = DOCKET__V1__EVENT__BODY_TOOL_INTENT;
	ev.tool_intent = &ti;
	ti.tool = "shell";
	ti.args_json = (char *)small_args;
	n = docket__v1__event__pack(&ev, buf);
	assert_int_equal(docket_arena_init(&a, 1024), 0);
	docket_arena_pb(&pb, &a);
	assert_int_equal(event_unpack_in(&out, &pb, buf, n), 0);
	assert_true(inside(&a, out) && inside(&a, out->tool_intent->args_json));
	assert_string_equal(out->tool_intent->args_json, small_args);
	assert_string_equal(out->session, "s-1");
	assert_int_equal(a.spilled, 0);
	assert_int_equal(docket_arena_reset(&a), 1);
	/* args too big for the arena spill, and are freed piece by piece */
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	ti.args_json = big;
	n = docket__v1__event__pack(&ev, buf);
	assert_int_equal(event_unpack_in(&out, &pb, buf, n), 0);
	assert_false(inside(&a, out->tool_intent->args_json));
	assert_string_equal(out->tool_intent->args_json, big);
	assert_int_equal(docket_arena_reset(&a), 0);
	docket__v1__event__free_unpacked(out, &pb);
	assert_int_equal(a.live, 0);
	/* a damaged payload is refused, and leaves nothing behind */
	assert_int_equal(event_unpack_in(&out, &pb, buf, n - 10), DOCKET_ECORRUPT);
	assert_null(out);
	assert_int_equal(a.live, 0);
	docket_arena_dispose(&a);
}

static void test_json_arena(void **state)
{
	const char *text = "{\"command\":[\"bash\",\"-lc\",\"git status\"],\"cwd\":\"/w\",\"timeout_ms\":120000}";
	docket_arena a;
	json_t *in = NULL, *out = NULL, *big = NULL;
	docket_buf long_text = DOCKET_BUF_INIT;

	(void)state;
	assert_int_equal(docket_arena_init(&a, 4096), 0);
	docket_alloc_json_arena(&a);
	/* not armed: the heap */
	assert_non_null(out = json_loads(text, 0, NULL));
	assert_false(inside(&a, out));
	assert_int_equal(a.live, 0);
	docket_alloc_json_arena_arm(1);
	assert_non_null(in = json_loads(text, 0, NULL));
	docket_alloc_json_arena_arm(0);
	assert_true(inside(&a, in));
	assert_true(inside(&a, json_string_value(json_object_get(in, "cwd"))));
	assert_true(json_equal(in, out));
	assert_true(a.live > 0);
	/* values from the arena and from the heap mix and free correctly */
	assert_int_equal(json_object_set(out, "copy", json_object_get(in, "command")), 0);
	json_decref(in);
	assert_true(a.live > 0);               /* "command" is still held by `out` */
	json_decref(out);
	assert_int_equal(a.live, 0);
	assert_int_equal(a.used, 0);
	/* what does not fit comes from the heap, not counted by the arena */
	docket_alloc_json_arena_arm(1);
	assert_int_equal(docket_buf_puts(&long_text, "[\""), 0);
	for (int i = 0; i < 1000; i++)
		assert_int_equal(docket_buf_puts(&long_text, "0123456789"), 0);
	assert_int_equal(docket_buf_puts(&long_text, "\"]"), 0);
	assert_non_null(big = json_loads(long_text.ptr, 0, NULL));
	docket_alloc_json_arena_arm(0);
	assert_false(inside(&a, json_string_value(json_array_get(big, 0))));
	assert_int_equal(json_string_length(json_array_get(big, 0)), 10000);
	json_decref(big);
	assert_int_equal(a.live, 0);
	/* arming without an arena does nothing */
	docket_alloc_json_arena(NULL);
	docket_alloc_json_arena_arm(1);
	assert_non_null(out = json_loads(text, 0, NULL));
	docket_alloc_json_arena_arm(0);
	assert_false(inside(&a, out));
	json_decref(out);
	docket_buf_dispose(&long_text);
	docket_arena_dispose(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_arena_bump_and_restart),
		cmocka_unit_test(test_arena_spill),
		cmocka_unit_test(test_arena_refused),
		cmocka_unit_test(test_arena_protobuf),
		cmocka_unit_test(test_json_arena),
	};

	docket_alloc_install_json();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
