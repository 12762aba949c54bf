/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_receipt.c: receipts (audit/receipt.c): a good one verifies and tells
 * the story; one changed proof hash, changed event bytes, edited JSON, a
 * checkpoint of another ledger, the wrong key, a truncated or garbage file
 * are each refused; in a redacted receipt the events redaction changed
 * verify by leaf hash and are shown only as redacted (a plain receipt
 * turned "redacted" with an edited result shows none of it);
 * terminal escapes in strings are shown escaped.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "docket/tlog.h"
#include "audit/checkpoint.h"
#include "ledger/ledger_internal.h"
#include "audit/receipt.h"
#include "test_audit_util.h"
#include "util/alloc.h"
#include "util/json.h"
#include "audit/note.h"

typedef struct fixture {
	char *dir, *dir2, *key, *pub, *key2, *pub2;
	docket_ledger *l, *l2;
	char *note, *note2;     /* a signed checkpoint of each ledger's head */
} fixture;

/* A C2SP checkpoint of the head of `l` signed by the key at `key_path`,
 * made here from the tree head (the checkpoint command is tlog-notes'). */
static char *sign_head(docket_ledger *l, const char *key_path, uint64_t size)
{
	docket_note_checkpoint cp;
	docket_buf text = DOCKET_BUF_INIT;
	EVP_PKEY *key = NULL;
	char origin[64];
	size_t body;

	memset(&cp, 0, sizeof(cp));
	assert_int_equal(docket_tlog_origin(origin, l), 0);
	snprintf(cp.origin, sizeof(cp.origin), "%s", origin);
	cp.size = size;
	assert_int_equal(docket_tlog_root_at(cp.root, l, size), 0);
	assert_int_equal(checkpoint_load_private(&key, key_path), 0);
	assert_int_equal(note_checkpoint_body(&text, &cp), 0);
	body = text.len;
	assert_int_equal(docket_buf_putc(&text, '\n'), 0);
	assert_int_equal(note_sign(&text, origin, key, text.ptr, body), 0);
	assert_int_equal(docket_buf_putc(&text, '\0'), 0);
	EVP_PKEY_free(key);
	return text.ptr;
}

static uint64_t head_size(docket_ledger *l)
{
	docket_tlog_head h;

	assert_int_equal(docket_tlog_head_get(&h, l), 0);
	return h.size;
}

static int setup(void **state)
{
	fixture *f = calloc(1, sizeof(*f));

	f->l = audit_new_ledger(&f->dir);
	f->l2 = audit_new_ledger(&f->dir2);
	f->key = audit_path(f->dir, "log.key");
	f->pub = audit_path(f->dir, "log.key.pub");
	f->key2 = audit_path(f->dir, "other.key");
	f->pub2 = audit_path(f->dir, "other.key.pub");
	assert_int_equal(docket_keygen(f->key, 0, NULL), 0);
	assert_int_equal(docket_keygen(f->key2, 0, NULL), 0);
	audit_record_fixture(f->l, "sessions/demo-basic.jsonl");
	/* another history before the same session: other seqs, another tree */
	audit_record_fixture(f->l2, "sessions/open-pending.jsonl");
	audit_record_fixture(f->l2, "sessions/demo-basic.jsonl");
	f->note = sign_head(f->l, f->key, head_size(f->l));
	f->note2 = sign_head(f->l2, f->key, head_size(f->l2));
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fixture *f = *state;

	docket_ledger_free(f->l);
	docket_ledger_free(f->l2);
	test_rmdir_free(f->dir);
	test_rmdir_free(f->dir2);
	free(f->key);
	free(f->pub);
	free(f->key2);
	free(f->pub2);
	docket_free(f->note);
	docket_free(f->note2);
	free(f);
	return 0;
}

static json_t *build(fixture *f, const char *invocation, int redact)
{
	docket_redactor *r = NULL;
	json_t *out = NULL;

	if (redact)
		assert_int_equal(docket_redactor_new(&r, NULL, 0), 0);
	if (receipt_build(&out, f->l, "demo-basic", invocation, f->note, strlen(f->note), r, NULL) != 0)
		fail_msg("receipt_build: %s", docket_error_last()->message);
	docket_redactor_free(r);
	return out;
}

/* Verify `receipt` (as text); returns the report, the story text in *story. */
static receipt_report check(const json_t *receipt, const char *pub, char **story)
{
	docket_buf text = DOCKET_BUF_INIT, out = DOCKET_BUF_INIT;
	receipt_report rep;
	json_t *s = NULL;

	assert_int_equal(docket_json_dump(&text, receipt), 0);
	assert_int_equal(receipt_verify(&rep, &s, text.ptr, text.len, pub), 0);
	if (story) {
		*story = NULL;
		if (rep.ok) {
			assert_int_equal(receipt_story_text(&out, s, &rep), 0);
			assert_int_equal(docket_buf_putc(&out, '\0'), 0);
			*story = out.ptr;
			out.ptr = NULL;
		}
	}
	json_decref(s);
	docket_buf_dispose(&text);
	docket_buf_dispose(&out);
	return rep;
}

static void refused(const json_t *receipt, const char *pub, const char *what)
{
	receipt_report rep = check(receipt, pub, NULL);

	if (rep.ok)
		fail_msg("a receipt that should fail (%s) verified", what);
	if (!strstr(rep.problem, what))
		fail_msg("problem '%s' does not mention '%s'", rep.problem, what);
}

static json_t *event_at(json_t *receipt, const char *type)
{
	json_t *evs = json_object_get(receipt, "events");

	for (size_t i = 0; i < json_array_size(evs); i++)
		if (!strcmp(json_string_value(json_object_get(json_array_get(evs, i), "type")), type))
			return json_array_get(evs, i);
	fail_msg("no %s in the receipt", type);
	return NULL;
}

static void test_good(void **state)
{
	fixture *f = *state;
	json_t *r = build(f, "call_rm_build", 0);
	char *story = NULL;
	receipt_report rep = check(r, f->pub, &story);
	static const char *const types[] = { "policy.revised", "tool.intent", "approval.requested",
					     "approval.settled", "tool.dispatched", "tool.completed" };
	json_t *evs = json_object_get(r, "events");

	if (!rep.ok)
		fail_msg("good receipt refused: %s", rep.problem);
	assert_false(rep.redacted);
	assert_int_equal(rep.events, 6);
	assert_int_equal(json_array_size(evs), 6);
	for (size_t i = 0; i < 6; i++)
		assert_string_equal(json_string_value(json_object_get(json_array_get(evs, i), "type")), types[i]);
	assert_non_null(strstr(story, "approved by \"user:ana\""));
	assert_non_null(strstr(story, "under policy revision 1"));
	assert_non_null(strstr(story, "revision 1 by \"user:ana\""));
	assert_non_null(strstr(story, "verified: 6 events"));
	free(story);
	json_decref(r);
	/* an allowed call: no approval events */
	r = build(f, "call_git_status", 0);
	rep = check(r, f->pub, NULL);
	assert_true(rep.ok);
	assert_int_equal(rep.events, 4);
	json_decref(r);
}

static void test_proof_hash_changed(void **state)
{
	fixture *f = *state;
	json_t *r = build(f, "call_rm_build", 0);
	json_t *proof = json_object_get(event_at(r, "approval.settled"), "proof");
	char *h = strdup(json_string_value(json_array_get(proof, 0)));

	h[3] = h[3] == 'A' ? 'B' : 'A';
	json_array_set_new(proof, 0, json_string(h));
	refused(r, f->pub, "is not in the log the checkpoint signs");
	/* a hash dropped */
	json_array_remove(proof, 0);
	refused(r, f->pub, "is not in the log");
	free(h);
	json_decref(r);
}

static void test_bytes_changed(void **state)
{
	fixture *f = *state;
	json_t *r = build(f, "call_rm_build", 0), *e = event_at(r, "approval.settled");
	docket_buf b64 = DOCKET_BUF_INIT;
	uint8_t raw[4096];
	size_t n;

	/* the actor's first letter changed in the stored bytes: they still decode */
	assert_int_equal(note_b64_decode(raw, sizeof(raw), &n, json_string_value(json_object_get(e, "bytes")),
					 json_string_length(json_object_get(e, "bytes"))), 0);
	for (size_t i = 0; i + 8 <= n; i++)
		if (!memcmp(raw + i, "user:ana", 8))
			raw[i + 5] = 'b';
	assert_int_equal(note_b64_put(&b64, raw, n), 0);
	json_object_set_new(e, "bytes", json_stringn(b64.ptr, b64.len));
	refused(r, f->pub, "not the decoding of its bytes");
	/* and with the JSON edited to match: the proof fails */
	json_object_set_new(json_object_get(e, "event"), "actor", json_string("user:bna"));
	refused(r, f->pub, "is not in the log");
	/* bytes that are not base64 */
	json_object_set_new(e, "bytes", json_string("!!!"));
	refused(r, f->pub, "not base64");
	docket_buf_dispose(&b64);
	json_decref(r);
}

static void test_json_edited(void **state)
{
	fixture *f = *state;
	json_t *r = build(f, "call_rm_build", 0);

	json_object_set_new(json_object_get(event_at(r, "approval.settled"), "event"), "actor",
			    json_string("user:root"));
	refused(r, f->pub, "not the decoding of its bytes");
	json_decref(r);
}

static void test_other_ledger(void **state)
{
	fixture *f = *state;
	json_t *r = build(f, "call_rm_build", 0);
	char id2[33];

	/* the other ledger's checkpoint (same key, same events, another log) */
	json_object_set_new(r, "checkpoint", json_string(f->note2));
	refused(r, f->pub, "of another log");
	/* ... and the receipt relabelled to that ledger: its tree has other roots */
	memcpy(id2, f->l2->ledger_id, sizeof(id2));
	json_object_set_new(r, "ledger", json_string(id2));
	json_object_set_new(r, "tree_size", json_integer((json_int_t)head_size(f->l2)));
	refused(r, f->pub, "is not in the log the checkpoint signs");
	json_decref(r);
}

static void test_wrong_key(void **state)
{
	fixture *f = *state;
	json_t *r = build(f, "call_rm_build", 0);

	refused(r, f->pub2, "the checkpoint");
	json_decref(r);
}

static void test_invocation_mixed(void **state)
{
	fixture *f = *state;
	json_t *r = build(f, "call_rm_build", 0), *other = build(f, "call_git_status", 0);
	json_t *evs = json_object_get(r, "events");

	/* an outcome of another call, with its own good proof */
	json_array_set(evs, 5, event_at(other, "tool.completed"));
	{
		receipt_report rep = check(r, f->pub, NULL);

		assert_false(rep.ok);
	}
	json_decref(r);
	/* the same event twice */
	r = build(f, "call_rm_build", 0);
	evs = json_object_get(r, "events");
	json_array_insert(evs, 1, json_array_get(evs, 1));
	refused(r, f->pub, "out of order");
	json_decref(r);
	json_decref(other);
	/* no intent */
	r = build(f, "call_rm_build", 0);
	json_array_remove(json_object_get(r, "events"), 1);
	refused(r, f->pub, "no tool.intent");
	json_decref(r);
}

static json_t *build_rules(fixture *f, const char *invocation, const char *rules)
{
	docket_redactor *r = NULL;
	json_t *out = NULL;

	assert_int_equal(docket_redactor_new(&r, rules, strlen(rules)), 0);
	if (receipt_build(&out, f->l, "demo-basic", invocation, f->note, strlen(f->note), r, NULL) != 0)
		fail_msg("receipt_build: %s", docket_error_last()->message);
	docket_redactor_free(r);
	return out;
}

/* Replace an event's bytes by their leaf hash, as a redacted receipt carries it. */
static void to_leaf_hash(json_t *e)
{
	static uint8_t bytes[1 << 16];
	const char *b64 = json_string_value(json_object_get(e, "bytes"));
	uint8_t leaf[DOCKET_TLOG_HASH_LEN];
	docket_buf text = DOCKET_BUF_INIT;
	size_t n = 0;

	assert_non_null(b64);
	assert_int_equal(note_b64_decode(bytes, sizeof(bytes), &n, b64, strlen(b64)), 0);
	docket_tlog_leaf_hash(leaf, bytes, n);
	assert_int_equal(note_b64_put(&text, leaf, sizeof(leaf)), 0);
	json_object_set_new(e, "leaf_hash", json_stringn(text.ptr, text.len));
	json_object_del(e, "bytes");
	docket_buf_dispose(&text);
}

/* Only the events redaction changed carry a leaf hash; those are shown
 * only as redacted, whatever their JSON says, and counted. */
static void test_redacted(void **state)
{
	fixture *f = *state;
	const char *actors = "{\"builtin\":false,\"rules\":[{\"name\":\"actor\",\"pattern\":\"user:[a-z]+\"}]}";
	json_t *r = build_rules(f, "call_rm_build", actors), *e;
	char *story = NULL;
	receipt_report rep = check(r, f->pub, &story);

	if (!rep.ok)
		fail_msg("redacted receipt refused: %s", rep.problem);
	assert_true(json_is_true(json_object_get(r, "redacted")));
	/* the policy revision and the settlement name the actor: redacted */
	assert_int_equal(rep.redacted, 2);
	assert_int_equal(rep.events, 6);
	assert_true(rep.intent_proved);
	assert_non_null(json_object_get(event_at(r, "tool.intent"), "bytes"));
	e = event_at(r, "approval.settled");
	assert_null(json_object_get(e, "bytes"));
	assert_non_null(json_object_get(e, "leaf_hash"));
	assert_non_null(strstr(story, "[redacted: its place in the log is proved"));
	assert_non_null(strstr(story, "verified with redacted events: 6 events"));
	assert_null(strstr(story, "approved by"));   /* nothing drawn from the redacted settlement */
	assert_non_null(strstr(story, "tool.completed      ok"));   /* the outcome has its bytes */
	free(story);
	/* the shown JSON of a redacted event edited: nothing of it is shown */
	json_object_set_new(json_object_get(e, "event"), "result", json_string("denied"));
	json_object_set_new(json_object_get(e, "event"), "time", json_string("\x1b]0;t\x07"));
	json_object_set_new(e, "type", json_string("x\x1b[2J"));
	rep = check(r, f->pub, &story);
	assert_true(rep.ok);
	assert_int_equal(rep.redacted, 2);
	assert_null(strstr(story, "denied"));
	assert_null(strchr(story, 0x1b));
	assert_null(strchr(story, 0x07));
	free(story);
	/* the leaf hash changed: refused */
	json_object_set_new(e, "leaf_hash", json_string("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="));
	refused(r, f->pub, "is not in the log");
	/* bytes and a leaf hash, neither, a leaf hash in a receipt not marked redacted */
	json_object_set_new(e, "bytes", json_string("AA=="));
	refused(r, f->pub, "both bytes and a leaf hash");
	json_object_del(e, "bytes");
	json_object_del(e, "leaf_hash");
	refused(r, f->pub, "neither bytes nor a leaf hash");
	json_decref(r);
	r = build_rules(f, "call_rm_build", actors);
	json_object_set_new(r, "redacted", json_false());
	refused(r, f->pub, "not marked redacted");
	json_decref(r);
	/* built-in rules with no secret in these events: nothing redacted, all bytes */
	r = build(f, "call_rm_build", 1);
	rep = check(r, f->pub, &story);
	assert_true(rep.ok);
	assert_int_equal(rep.redacted, 0);
	assert_false(json_is_true(json_object_get(r, "redacted")));
	assert_non_null(strstr(story, "each shown as its stored bytes decode"));
	free(story);
	json_decref(r);
}

/* Issue 28: a plain receipt turned into a "redacted" one (every event's
 * bytes replaced by their true leaf hash) and its result edited does not
 * pass as verified: it is "verified with redacted events", shows none of
 * the edited text, and says the call is not proved. */
static void test_redacted_forgery(void **state)
{
	fixture *f = *state;
	json_t *r = build(f, "call_fetch_script", 0), *evs = json_object_get(r, "events");
	char *story = NULL;
	receipt_report rep = check(r, f->pub, &story);

	assert_true(rep.ok);
	assert_int_equal(rep.redacted, 0);
	assert_non_null(strstr(story, "denied by \"user:ana\""));
	free(story);
	json_object_set_new(r, "redacted", json_true());
	for (size_t i = 0; i < json_array_size(evs); i++)
		to_leaf_hash(json_array_get(evs, i));
	json_object_set_new(json_object_get(event_at(r, "approval.settled"), "event"), "result", json_string("approved"));
	json_object_set_new(json_object_get(event_at(r, "tool.completed"), "event"), "status", json_string("ok"));
	rep = check(r, f->pub, &story);
	assert_true(rep.ok);   /* every leaf hash is true */
	assert_int_equal(rep.redacted, rep.events);
	assert_false(rep.intent_proved);
	assert_null(strstr(story, "approved"));
	assert_null(strstr(story, " ok"));
	assert_null(strstr(story, "verified:"));
	assert_non_null(strstr(story, "NOT PROVED: the intent is redacted"));
	free(story);
	json_decref(r);
}

static void test_garbage(void **state)
{
	fixture *f = *state;
	json_t *r = build(f, "call_rm_build", 0);
	docket_buf text = DOCKET_BUF_INIT;
	receipt_report rep;
	json_t *s = NULL;

	assert_int_equal(docket_json_dump(&text, r), 0);
	for (size_t cut = 0; cut < text.len; cut += 1 + text.len / 37) {
		assert_int_equal(receipt_verify(&rep, &s, text.ptr, cut, f->pub), 0);
		assert_false(rep.ok);
		assert_null(s);
		assert_true(*rep.problem);
	}
	assert_int_equal(receipt_verify(&rep, &s, "[1,2]", 5, f->pub), 0);
	assert_false(rep.ok);
	assert_int_equal(receipt_verify(&rep, &s, "{\"format\":\"docket-receipt/1\"}", 29, f->pub), 0);
	assert_false(rep.ok);
	/* an unknown field */
	json_object_set_new(r, "trust_me", json_true());
	refused(r, f->pub, "not a docket-receipt/1 receipt");
	/* a key that cannot be read is not a verdict */
	assert_true(receipt_verify(&rep, &s, text.ptr, text.len, "/nonexistent/key.pub") < 0);
	docket_buf_dispose(&text);
	json_decref(r);
}

static void test_not_covered(void **state)
{
	fixture *f = *state;
	char *old = sign_head(f->l, f->key, 5);
	json_t *out = NULL;

	assert_int_equal(receipt_build(&out, f->l, "demo-basic", "call_rm_build", old, strlen(old), NULL, NULL),
			 DOCKET_ENOTFOUND);
	assert_non_null(strstr(docket_error_last()->message, "docket checkpoint --key KEY"));
	assert_int_equal(receipt_build(&out, f->l, "demo-basic", "no_such_call", f->note, strlen(f->note), NULL,
				       NULL), DOCKET_ENOTFOUND);
	docket_free(old);
}

/* Control characters in strings reach the story escaped. */
static void test_escapes(void **state)
{
	fixture *f = *state;
	json_t *r, *e;
	char *signed_note, *story = NULL;
	receipt_report rep;

	audit_record_text(f->l,
		"{\"type\":\"session.opened\",\"session\":\"esc\",\"runtime\":\"test/1\"}\n"
		"{\"type\":\"tool.intent\",\"session\":\"esc\",\"invocation\":\"call_esc\",\"tool\":\"shell\","
		"\"args\":{\"command\":[\"rm\",\"x\\u001b[2J\"]},\"recovery\":\"never_auto_retry\","
		"\"decision\":{\"verdict\":\"approval_required\",\"source\":\"policy\"}}\n"
		"{\"type\":\"approval.requested\",\"session\":\"esc\",\"invocation\":\"call_esc\",\"request\":\"r9\","
		"\"reviewer\":\"user\",\"prompt\":\"ok?\\u001b]0;owned\\u0007 \\u202e\"}\n"
		"{\"type\":\"approval.settled\",\"session\":\"esc\",\"invocation\":\"call_esc\",\"request\":\"r9\","
		"\"result\":\"approved\",\"actor\":\"user:ana\\u009b\"}\n");
	signed_note = sign_head(f->l, f->key, head_size(f->l));
	assert_int_equal(receipt_build(&r, f->l, "esc", "call_esc", signed_note, strlen(signed_note), NULL, NULL), 0);
	rep = check(r, f->pub, &story);
	if (!rep.ok)
		fail_msg("%s", rep.problem);
	assert_null(strchr(story, 0x1b));
	assert_null(strchr(story, 0x07));
	assert_null(strstr(story, "\xc2\x9b"));
	assert_null(strstr(story, "\xe2\x80\xae"));
	assert_non_null(strstr(story, "u001B[2J"));
	assert_non_null(strstr(story, "\"user:ana\\u009b\""));
	e = event_at(r, "approval.settled");
	(void)e;
	free(story);
	json_decref(r);
	docket_free(signed_note);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_good, setup, teardown),
		cmocka_unit_test_setup_teardown(test_proof_hash_changed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bytes_changed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_json_edited, setup, teardown),
		cmocka_unit_test_setup_teardown(test_other_ledger, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wrong_key, setup, teardown),
		cmocka_unit_test_setup_teardown(test_invocation_mixed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_redacted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_redacted_forgery, setup, teardown),
		cmocka_unit_test_setup_teardown(test_garbage, setup, teardown),
		cmocka_unit_test_setup_teardown(test_not_covered, setup, teardown),
		cmocka_unit_test_setup_teardown(test_escapes, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
