/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_audit.c: signed checkpoints and their verification against every
 * tampering case (truncation, a dropped checkpoint, a swapped key, a
 * rewritten history, a witness), redaction (every built-in rule, on args and
 * outputs, at export time and at write time, nothing left in the raw files)
 * and pseudonyms.
 */
#include "testutil.h"

#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "audit/checkpoint.h"
#include "ledger/ledger_internal.h"
#include "test_audit_util.h"
#include "util/alloc.h"
#include "util/file.h"
#include "audit/note.h"

typedef struct fixture {
	char *dir;
	docket_ledger *l;
	char *key, *pub, *key2, *pub2;
} fixture;

static int setup(void **state)
{
	fixture *f = calloc(1, sizeof(*f));

	f->l = audit_new_ledger(&f->dir);
	f->key = audit_path(f->dir, "signing.key");
	f->pub = audit_path(f->dir, "signing.key.pub");
	f->key2 = audit_path(f->dir, "other.key");
	f->pub2 = audit_path(f->dir, "other.key.pub");
	assert_int_equal(docket_keygen(f->key, 0, NULL), 0);
	assert_int_equal(docket_keygen(f->key2, 0, NULL), 0);
	audit_record_fixture(f->l, "sessions/demo-basic.jsonl");
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fixture *f = *state;

	docket_ledger_free(f->l);
	test_rmdir_free(f->dir);
	free(f->key);
	free(f->pub);
	free(f->key2);
	free(f->pub2);
	free(f);
	return 0;
}

static void checkpoint(fixture *f, const char *key)
{
	docket_checkpoint cp;
	int created;

	if (docket_checkpoint_create(&cp, &created, f->l, key) != 0)
		fail_msg("checkpoint: %s", docket_error_last()->message);
}

/* More events so that a later checkpoint covers more. */
static void more_events(fixture *f, const char *session)
{
	char text[512];

	snprintf(text, sizeof(text),
		 "{\"type\":\"session.opened\",\"session\":\"%s\",\"runtime\":\"t/1\"}\n"
		 "{\"type\":\"session.closed\",\"session\":\"%s\"}\n", session, session);
	audit_record_text(f->l, text);
}

/* verify_seal must find a problem mentioning `what` (NULL: must pass). */
static void expect_seal(fixture *f, const char *pub, const char *witness, const char *what)
{
	docket_seal_report rep;

	assert_int_equal(docket_ledger_verify_seal(f->l, pub, witness, &rep), 0);
	if (!what) {
		if (!rep.ok)
			fail_msg("seal should verify: %s", rep.problem);
		return;
	}
	if (rep.ok)
		fail_msg("seal verified but should fail with '%s'", what);
	if (!strstr(rep.problem, what))
		fail_msg("problem '%s' does not mention '%s'", rep.problem, what);
}

static void chain_ok(fixture *f)
{
	docket_verify_report rep;

	assert_int_equal(docket_ledger_verify(f->l, &rep), 0);
	if (!rep.ok)
		fail_msg("chain: %s", rep.problem);
}

/* Delete events after `keep` directly in LMDB, then reindex: a truncated
 * copy whose chain still verifies. */
static void truncate_events(fixture *f, uint64_t keep)
{
	MDB_txn *txn;

	assert_int_equal(store_txn_begin(&txn, f->l, 0), 0);
	assert_int_equal(seg_truncate(f->l, txn, keep), 0);
	assert_int_equal(store_txn_commit(f->l, txn), 0);
	assert_int_equal(docket_ledger_reindex(f->l), 0);
}

static void delete_checkpoint(fixture *f, uint64_t index)
{
	MDB_txn *txn;
	uint8_t key[8];
	MDB_val k = { 8, key };

	docket_be64_put(key, index);
	assert_int_equal(store_txn_begin(&txn, f->l, 0), 0);
	assert_int_equal(mdb_del(txn, f->l->dbi.checkpoints, &k, NULL), 0);
	assert_int_equal(store_txn_commit(f->l, txn), 0);
}

static void put_checkpoint_text(docket_ledger *l, uint64_t index, const char *text)
{
	MDB_txn *txn;
	uint8_t key[8];
	MDB_val k = { 8, key }, v = { strlen(text), (void *)text };

	docket_be64_put(key, index);
	assert_int_equal(store_txn_begin(&txn, l, 0), 0);
	assert_int_equal(mdb_put(txn, l->dbi.checkpoints, &k, &v, 0), 0);
	assert_int_equal(store_txn_commit(l, txn), 0);
}

static char *save_witness(fixture *f, uint64_t index)
{
	char *record = NULL, *path = audit_path(f->dir, "witness.json");
	FILE *out;

	assert_int_equal(docket_checkpoint_record(&record, f->l, index), 0);
	assert_non_null(out = fopen(path, "w"));
	fprintf(out, "%s\n", record);
	fclose(out);
	docket_free(record);
	return path;
}

/* ---- checkpoints ------------------------------------------------------- */

static void test_keygen_files(void **state)
{
	fixture *f = *state;
	struct stat st;
	char id[65];

	assert_int_equal(stat(f->key, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(stat(f->pub, &st), 0);
	assert_int_equal(docket_keygen(f->key, 0, NULL), DOCKET_EEXISTS);
	assert_int_equal(docket_keygen(f->key, 1, id), 0);
	assert_int_equal(strlen(id), 64);
	/* a private key others can read is refused */
	chmod(f->key, 0644);
	{
		docket_checkpoint cp;
		int created;

		assert_int_equal(docket_checkpoint_create(&cp, &created, f->l, f->key), DOCKET_EINVALID);
		assert_non_null(strstr(docket_error_last()->message, "chmod 600"));
	}
	/* a public key where a private one is wanted, and the reverse */
	chmod(f->key, 0600);
	{
		docket_checkpoint cp;
		int created;
		docket_seal_report rep;

		chmod(f->pub, 0600);
		assert_int_equal(docket_checkpoint_create(&cp, &created, f->l, f->pub), DOCKET_EINVALID);
		assert_int_equal(docket_ledger_verify_seal(f->l, f->key, NULL, &rep), DOCKET_EINVALID);
	}
}

static void test_checkpoint_chain(void **state)
{
	fixture *f = *state;
	docket_checkpoint cp;
	int created;

	assert_int_equal(docket_checkpoint_create(&cp, &created, f->l, f->key), 0);
	assert_int_equal(created, 1);
	assert_int_equal(cp.index, 1);
	assert_int_equal(cp.seq, 24);
	assert_string_equal(cp.prev, "0000000000000000000000000000000000000000000000000000000000000000");
	/* nothing new: the same checkpoint */
	assert_int_equal(docket_checkpoint_create(&cp, &created, f->l, f->key), 0);
	assert_int_equal(created, 0);
	assert_int_equal(cp.index, 1);
	more_events(f, "later");
	{
		char digest1[65];

		memcpy(digest1, cp.digest, sizeof(digest1));
		assert_int_equal(docket_checkpoint_create(&cp, &created, f->l, f->key), 0);
		assert_int_equal(cp.index, 2);
		assert_int_equal(cp.seq, 26);
		assert_string_equal(cp.prev, digest1);
	}
	/* another key may not continue the chain */
	more_events(f, "later2");
	assert_int_equal(docket_checkpoint_create(&cp, &created, f->l, f->key2), DOCKET_ECONFLICT);
	chain_ok(f);
	expect_seal(f, f->pub, NULL, NULL);
}

static void test_clean_copy_verifies(void **state)
{
	fixture *f = *state;
	docket_seal_report rep;
	char *witness;

	checkpoint(f, f->key);
	more_events(f, "after");
	witness = save_witness(f, 0);
	assert_int_equal(docket_ledger_verify_seal(f->l, f->pub, witness, &rep), 0);
	assert_true(rep.ok);
	assert_int_equal(rep.checkpoints, 1);
	assert_int_equal(rep.covered_seq, 24);
	assert_int_equal(rep.head_seq, 26);
	assert_true(rep.witness_checked);
	free(witness);
}

static void test_no_checkpoint_fails(void **state)
{
	expect_seal(*state, ((fixture *)*state)->pub, NULL, "no checkpoints");
}

static void test_truncation_detected(void **state)
{
	fixture *f = *state;

	checkpoint(f, f->key);
	truncate_events(f, 20);
	chain_ok(f);  /* the chain alone cannot tell */
	expect_seal(f, f->pub, NULL, "truncation");
}

static void test_dropped_checkpoint_detected(void **state)
{
	fixture *f = *state;

	checkpoint(f, f->key);
	more_events(f, "b");
	checkpoint(f, f->key);
	more_events(f, "c");
	checkpoint(f, f->key);
	expect_seal(f, f->pub, NULL, NULL);
	delete_checkpoint(f, 2);
	expect_seal(f, f->pub, NULL, "checkpoint 2 is missing");
}

static void test_dropped_first_checkpoint_detected(void **state)
{
	fixture *f = *state;

	checkpoint(f, f->key);
	more_events(f, "b");
	checkpoint(f, f->key);
	delete_checkpoint(f, 1);
	expect_seal(f, f->pub, NULL, "checkpoint 1 is missing");
}

static void test_dropped_last_needs_witness(void **state)
{
	fixture *f = *state;
	char *witness;

	checkpoint(f, f->key);
	more_events(f, "b");
	checkpoint(f, f->key);
	witness = save_witness(f, 0);
	/* cut the last checkpoint and the events it covered */
	delete_checkpoint(f, 2);
	truncate_events(f, 24);
	expect_seal(f, f->pub, NULL, NULL);  /* undetectable from the copy alone */
	expect_seal(f, f->pub, witness, "checkpoints were removed");
	free(witness);
}

static void test_swapped_key_detected(void **state)
{
	fixture *f = *state;

	checkpoint(f, f->key);
	/* an attacker replaces every checkpoint with their own */
	delete_checkpoint(f, 1);
	checkpoint(f, f->key2);
	expect_seal(f, f->pub2, NULL, NULL);
	expect_seal(f, f->pub, NULL, "re-signed with another key");
}

static void test_forged_key_id_detected(void **state)
{
	fixture *f = *state;
	checkpoint_record c;
	char *record = NULL, *forged;
	json_t *obj;
	char kid[65];
	MDB_txn *txn;
	MDB_val v;
	uint8_t key[8];
	MDB_val k = { 8, key };

	/* sign with key2, then claim key 1's id: the signature must fail */
	checkpoint(f, f->key);
	assert_int_equal(store_txn_begin(&txn, f->l, MDB_RDONLY), 0);
	docket_be64_put(key, 1);
	assert_int_equal(mdb_get(txn, f->l->dbi.checkpoints, &k, &v), 0);
	assert_int_equal(checkpoint_parse(&c, v.mv_data, v.mv_size), 0);
	store_txn_abort(f->l, txn);
	docket_hex(kid, c.key_id, 32);
	delete_checkpoint(f, 1);
	checkpoint(f, f->key2);
	assert_int_equal(docket_checkpoint_record(&record, f->l, 1), 0);
	obj = test_json(record);
	assert_int_equal(checkpoint_parse(&c, record, strlen(record)), 0);
	assert_int_equal(docket_unhex(c.key_id, 32, kid), 0);
	json_decref(obj);
	assert_int_equal(checkpoint_to_json(&obj, &c), 0);
	forged = json_dumps(obj, JSON_COMPACT);
	put_checkpoint_text(f->l, 1, forged);
	expect_seal(f, f->pub, NULL, "signature does not verify");
	free(forged);
	json_decref(obj);
	docket_free(record);
}

/* ---- version-2 checkpoints: the tree root and its signed note ---------- */

static void sign_record(checkpoint_record *c, const char *key_path)
{
	docket_buf msg = DOCKET_BUF_INIT;
	EVP_PKEY *key = NULL;
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	size_t len = sizeof(c->sig);

	assert_int_equal(checkpoint_load_private(&key, key_path), 0);
	assert_int_equal(checkpoint_key_id(c->key_id, key), 0);
	assert_int_equal(checkpoint_statement(&msg, c), 0);
	assert_int_equal(EVP_DigestSignInit(ctx, NULL, NULL, NULL, key), 1);
	assert_int_equal(EVP_DigestSign(ctx, c->sig, &len, (const uint8_t *)msg.ptr, msg.len), 1);
	EVP_MD_CTX_free(ctx);
	EVP_PKEY_free(key);
	docket_buf_dispose(&msg);
}

static void put_record(docket_ledger *l, const checkpoint_record *c)
{
	json_t *obj;
	char *text;

	assert_int_equal(checkpoint_to_json(&obj, c), 0);
	text = json_dumps(obj, JSON_COMPACT);
	put_checkpoint_text(l, c->index, text);
	free(text);
	json_decref(obj);
}

/* A checkpoint made by docket before signed notes (version 1) keeps
 * verifying; the next checkpoint of the same head adds the tree (version 2). */
static void test_version1_then_version2(void **state)
{
	fixture *f = *state;
	docket_ledger_info info;
	docket_seal_report rep;
	docket_checkpoint cp;
	checkpoint_record c;
	char *note = NULL;
	size_t len;
	int created;

	assert_int_equal(docket_ledger_info_get(f->l, &info), 0);
	memset(&c, 0, sizeof(c));
	c.version = 1;
	c.index = 1;
	c.seq = info.events;
	memcpy(c.head, info.head, sizeof(c.head));
	memcpy(c.ledger_id, f->l->ledger_id, sizeof(c.ledger_id));
	snprintf(c.time, sizeof(c.time), "2026-01-01T00:00:00.000Z");
	sign_record(&c, f->key);
	put_record(f->l, &c);
	assert_int_equal(docket_ledger_verify_seal(f->l, f->pub, NULL, &rep), 0);
	assert_true(rep.ok);
	assert_int_equal(rep.checkpoints, 1);
	assert_int_equal(docket_checkpoint_note(&note, &len, f->l, 1), DOCKET_ENOTFOUND);
	assert_non_null(strstr(docket_error_last()->message, "predates signed notes"));
	/* no new event, but the head has no tree checkpoint yet: one is made */
	assert_int_equal(docket_checkpoint_create(&cp, &created, f->l, f->key), 0);
	assert_int_equal(created, 1);
	assert_int_equal(cp.index, 2);
	assert_int_equal(cp.seq, info.events);
	assert_int_equal(docket_checkpoint_note(&note, &len, f->l, 2), 0);
	assert_int_equal(strlen(note), len);
	docket_free(note);
	assert_int_equal(docket_ledger_verify_seal(f->l, f->pub, NULL, &rep), 0);
	assert_true(rep.ok);
	assert_int_equal(rep.checkpoints, 2);
	/* and then nothing new */
	assert_int_equal(docket_checkpoint_create(&cp, &created, f->l, f->key), 0);
	assert_int_equal(created, 0);
}

/* The signed note of a version-2 record is checked: by the key, for this
 * ledger's origin, and its root against the recomputed tree, even when the
 * key holder signed a false root. */
static void get_record(fixture *f, uint64_t index, checkpoint_record *c)
{
	MDB_txn *txn;
	MDB_val v;
	uint8_t key[8];
	MDB_val k = { 8, key };

	assert_int_equal(store_txn_begin(&txn, f->l, MDB_RDONLY), 0);
	docket_be64_put(key, index);
	assert_int_equal(mdb_get(txn, f->l->dbi.checkpoints, &k, &v), 0);
	assert_int_equal(checkpoint_parse(c, v.mv_data, v.mv_size), 0);
	store_txn_abort(f->l, txn);
}

/* c->note := the note of (origin, c->seq, c->root) signed by `key_path`. */
static void set_note(checkpoint_record *c, const char *origin, const char *key_path)
{
	docket_note_checkpoint body;
	docket_buf text = DOCKET_BUF_INIT;
	EVP_PKEY *key = NULL;
	size_t body_len;

	memset(&body, 0, sizeof(body));
	snprintf(body.origin, sizeof(body.origin), "%s", origin);
	body.size = c->seq;
	memcpy(body.root, c->root, sizeof(body.root));
	assert_int_equal(checkpoint_load_private(&key, key_path), 0);
	assert_int_equal(note_checkpoint_body(&text, &body), 0);
	body_len = text.len;
	assert_int_equal(docket_buf_putc(&text, '\n'), 0);
	assert_int_equal(note_sign(&text, origin, key, text.ptr, body_len), 0);
	assert_true(text.len < sizeof(c->note));
	memcpy(c->note, text.ptr, text.len + 1);
	EVP_PKEY_free(key);
	docket_buf_dispose(&text);
}

static void test_version2_tree_checked(void **state)
{
	fixture *f = *state;
	checkpoint_record good, c;
	char origin[64];

	checkpoint(f, f->key);
	get_record(f, 1, &good);
	assert_int_equal(good.version, 2);
	assert_int_equal(docket_tlog_origin(origin, f->l), 0);
	expect_seal(f, f->pub, NULL, NULL);
	/* the key holder signs a false root, note and record alike */
	c = good;
	c.root[0] ^= 1;
	set_note(&c, origin, f->key);
	sign_record(&c, f->key);
	put_record(f->l, &c);
	expect_seal(f, f->pub, NULL, "has another root than the signed one");
	/* the note signed by another key */
	c = good;
	set_note(&c, origin, f->key2);
	sign_record(&c, f->key);
	put_record(f->l, &c);
	expect_seal(f, f->pub, NULL, "its signed note: the checkpoint of");
	/* the note of another log */
	c = good;
	set_note(&c, "docket.dev/ledger/ffffffffffffffffffffffffffffffff", f->key);
	sign_record(&c, f->key);
	put_record(f->l, &c);
	expect_seal(f, f->pub, NULL, "not this ledger");
	/* the good one again */
	put_record(f->l, &good);
	expect_seal(f, f->pub, NULL, NULL);
}



/* A forgery with the same ledger id, the same number of events and a chain
 * recomputed over different events, carrying the original checkpoint. */
static docket_ledger *forge(fixture *f, char **dir)
{
	docket_ledger *forged = audit_new_ledger(dir);
	MDB_txn *txn;

	assert_int_equal(store_txn_begin(&txn, forged, 0), 0);
	assert_int_equal(store_meta_put(txn, forged, "ledger_id", f->l->ledger_id, 32), 0);
	assert_int_equal(store_txn_commit(forged, txn), 0);
	docket_ledger_free(forged);
	forged = audit_open(*dir);
	audit_record_text(forged, "{\"type\":\"runtime.started\",\"runtime\":\"evil\"}\n"
			  "{\"type\":\"session.opened\",\"session\":\"x\",\"runtime\":\"evil\"}\n");
	for (int i = 0; i < 22; i++) {
		char line[160];

		snprintf(line, sizeof(line), "{\"type\":\"policy.revised\",\"session\":\"x\",\"revision\":%d,"
			 "\"format\":\"opaque\",\"policy\":{}}\n", i + 1);
		audit_record_text(forged, line);
	}
	return forged;
}

static void test_rewritten_history_detected(void **state)
{
	fixture *f = *state;
	char *dir2 = NULL, *record = NULL;
	docket_ledger *forged;
	docket_seal_report rep;
	docket_verify_report vrep;

	checkpoint(f, f->key);
	assert_int_equal(docket_checkpoint_record(&record, f->l, 1), 0);
	forged = forge(f, &dir2);
	put_checkpoint_text(forged, 1, record);
	assert_int_equal(docket_ledger_verify(forged, &vrep), 0);
	assert_true(vrep.ok);  /* the chain alone cannot tell */
	assert_int_equal(docket_ledger_verify_seal(forged, f->pub, NULL, &rep), 0);
	assert_false(rep.ok);
	assert_non_null(strstr(rep.problem, "were altered"));
	docket_ledger_free(forged);
	test_rmdir_free(dir2);
	docket_free(record);
}

static void test_witness_from_other_ledger(void **state)
{
	fixture *f = *state;
	char *dir2 = NULL, *witness, *record = NULL;
	docket_ledger *other = audit_new_ledger(&dir2);
	docket_checkpoint cp;
	FILE *out;
	int created;

	audit_record_fixture(other, "sessions/demo-basic.jsonl");
	assert_int_equal(docket_checkpoint_create(&cp, &created, other, f->key), 0);
	assert_int_equal(docket_checkpoint_record(&record, other, 0), 0);
	witness = audit_path(f->dir, "other-witness.json");
	assert_non_null(out = fopen(witness, "w"));
	fputs(record, out);
	fclose(out);
	checkpoint(f, f->key);
	expect_seal(f, f->pub, witness, "not to this ledger");
	docket_ledger_free(other);
	test_rmdir_free(dir2);
	docket_free(record);
	free(witness);
}

static void test_corrupt_record_detected(void **state)
{
	fixture *f = *state;

	checkpoint(f, f->key);
	put_checkpoint_text(f->l, 1, "{\"checkpoint\":1,\"ledger\":\"x\"}");
	expect_seal(f, f->pub, NULL, "checkpoint");
	put_checkpoint_text(f->l, 1, "not json");
	expect_seal(f, f->pub, NULL, "checkpoint");
}

static void test_checkpoints_survive_reindex(void **state)
{
	fixture *f = *state;

	checkpoint(f, f->key);
	assert_int_equal(docket_ledger_reindex(f->l), 0);
	chain_ok(f);
	expect_seal(f, f->pub, NULL, NULL);
}

static void test_record_parse_strict(void **state)
{
	fixture *f = *state;
	char *record = NULL;
	checkpoint_record c;
	json_t *obj;
	char *text;

	(void)state;
	checkpoint(f, f->key);
	assert_int_equal(docket_checkpoint_record(&record, f->l, 1), 0);
	assert_int_equal(checkpoint_parse(&c, record, strlen(record)), 0);
	obj = test_json(record);
	json_object_set_new(obj, "extra", json_true());
	text = json_dumps(obj, JSON_COMPACT);
	assert_int_equal(checkpoint_parse(&c, text, strlen(text)), DOCKET_EINVALID);
	free(text);
	json_object_del(obj, "extra");
	json_object_set_new(obj, "seq", json_integer(23));  /* digest no longer matches */
	text = json_dumps(obj, JSON_COMPACT);
	assert_int_equal(checkpoint_parse(&c, text, strlen(text)), DOCKET_EINVALID);
	free(text);
	json_decref(obj);
	assert_int_equal(checkpoint_parse(&c, "", 0), DOCKET_EINVALID);
	assert_int_equal(checkpoint_parse(&c, "[]", 2), DOCKET_EINVALID);
	docket_free(record);
}

/* ---- redaction --------------------------------------------------------- */

typedef struct secret {
	const char *rule;
	const char *text;     /* where it appears */
	const char *needle;   /* what must disappear */
} secret;

static const secret secrets[] = {
	{ "private-key", "-----BEGIN OPENSSH PRIVATE KEY-----\\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\\n"
			 "-----END OPENSSH PRIVATE KEY-----", "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ" },
	{ "aws-access-key", "export AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE" },
	{ "aws-secret-key", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
	  "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY" },
	{ "github-token", "git push https://x:ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789@github.com/o/r",
	  "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789" },
	{ "gitlab-token", "token glpat-xYz12345678901234567", "glpat-xYz12345678901234567" },
	{ "slack-token", "SLACK=xoxb-123456789012-abcdefghijkl", "xoxb-123456789012-abcdefghijkl" },
	{ "google-api-key", "key=AIzaSyA1234567890abcdefghijklmnopqrstuv", "AIzaSyA1234567890abcdefghijklmnopqrstuv" },
	{ "stripe-key", "stripe sk_live_abcdefghijklmnop1234", "sk_live_abcdefghijklmnop1234" },
	{ "api-key", "OPENAI_API_KEY sk-proj-abcdefghijklmnopqrstuvwxyz012345", "sk-proj-abcdefghijklmnopqrstuvwxyz012345" },
	{ "jwt", "cookie eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFU",
	  "eyJzdWIiOiIxMjM0NTY3ODkwIn0" },
	{ "url-password", "git clone https://deploy:hunter2secret@git.example.com/repo.git", "hunter2secret" },
	{ "bearer-token", "curl -H 'Authorization: Bearer abcDEF123456ghiJKL' api", "abcDEF123456ghiJKL" },
	{ "basic-auth", "Authorization: Basic dXNlcjpwYXNzd29yZDEyMw==", "dXNlcjpwYXNzd29yZDEyMw" },
	{ "password-assignment", "DB_PASSWORD=Sup3rS3cretPw ./run", "Sup3rS3cretPw" },
};

#define NSECRETS (sizeof(secrets) / sizeof(secrets[0]))

/* One session with a call per secret: in the args and in the output. */
static void record_secrets(docket_ledger *l)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	fprintf(f, "{\"type\":\"session.opened\",\"session\":\"sec\",\"runtime\":\"t/1\"}\n");
	for (size_t i = 0; i < NSECRETS; i++) {
		fprintf(f, "{\"type\":\"tool.intent\",\"session\":\"sec\",\"invocation\":\"c%zu\",\"tool\":\"shell\","
			"\"args\":{\"command\":[\"bash\",\"-lc\",\"%s\"]},\"decision\":{\"verdict\":\"allowed\"}}\n",
			i, secrets[i].text);
		fprintf(f, "{\"type\":\"tool.dispatched\",\"session\":\"sec\",\"invocation\":\"c%zu\"}\n", i);
		fprintf(f, "{\"type\":\"tool.completed\",\"session\":\"sec\",\"invocation\":\"c%zu\",\"status\":\"ok\","
			"\"output\":\"before %s after\"}\n", i, secrets[i].text);
	}
	fclose(f);
	audit_record_text(l, text);
	free(text);
}

static void no_needles(const char *text, const char *where)
{
	for (size_t i = 0; i < NSECRETS; i++)
		if (strstr(text, secrets[i].needle))
			fail_msg("%s: secret of rule %s left: %s", where, secrets[i].rule, secrets[i].needle);
}

static int count_hits(const json_t *lines, const char *rule, const char *field_prefix)
{
	const json_t *ev, *hit;
	size_t i, j;
	int n = 0;

	json_array_foreach(lines, i, ev)
		json_array_foreach(json_object_get(ev, "redacted"), j, hit)
			n += strcmp(json_string_value(json_object_get(hit, "rule")), rule) == 0 &&
			     strncmp(json_string_value(json_object_get(hit, "field")), field_prefix,
				     strlen(field_prefix)) == 0;
	return n;
}

static void test_redact_export_builtins(void **state)
{
	fixture *f = *state;
	docket_export_options o = DOCKET_EXPORT_OPTIONS_INIT;
	docket_redactor *r = NULL;
	char *out;
	json_t *lines;

	record_secrets(f->l);
	assert_int_equal(docket_redactor_new(&r, NULL, 0), 0);
	o.redactor = r;
	o.session = "sec";
	out = audit_export(f->l, &o);
	no_needles(out, "jsonl export");
	lines = audit_lines(out);
	for (size_t i = 0; i < NSECRETS; i++) {
		char marker[64];

		snprintf(marker, sizeof(marker), "[REDACTED:%s]", secrets[i].rule);
		if (!strstr(out, marker))
			fail_msg("no marker %s in the export", marker);
		if (count_hits(lines, secrets[i].rule, "args.command[2]") < 1 ||
		    count_hits(lines, secrets[i].rule, "output") < 1)
			fail_msg("rule %s: hits on args and output are not both recorded", secrets[i].rule);
	}
	json_decref(lines);
	free(out);
	/* the ledger itself still holds them: redaction at export time only */
	o.redactor = NULL;
	out = audit_export(f->l, &o);
	assert_non_null(strstr(out, secrets[1].needle));
	free(out);
	docket_redactor_free(r);
}

static void test_redact_idempotent(void **state)
{
	docket_redactor *r = NULL;
	json_t *ev = test_json("{\"type\":\"tool.completed\",\"output\":\"https://u:pw12345@h/ Bearer abcdefghijklmn "
			       "password=hunter22 AKIAIOSFODNN7EXAMPLE\"}");
	char *once, *twice;
	int changed;

	(void)state;
	assert_int_equal(docket_redactor_new(&r, NULL, 0), 0);
	assert_int_equal(docket_redact_event(r, ev, NULL, &changed), 0);
	assert_true(changed);
	once = json_dumps(ev, JSON_COMPACT);
	assert_int_equal(docket_redact_event(r, ev, NULL, &changed), 0);
	assert_false(changed);
	twice = json_dumps(ev, JSON_COMPACT);
	assert_string_equal(once, twice);
	assert_null(strstr(once, "pw12345"));
	assert_null(strstr(once, "hunter22"));
	free(once);
	free(twice);
	json_decref(ev);
	docket_redactor_free(r);
}

static void test_redact_leaves_ids_alone(void **state)
{
	docket_redactor *r = NULL;
	json_t *ev = test_json("{\"type\":\"tool.intent\",\"session\":\"AKIAIOSFODNN7EXAMPLE\","
			       "\"invocation\":\"sk-proj-abcdefghijklmnopqrstuvwxyz\",\"tool\":\"shell\"}");

	(void)state;
	assert_int_equal(docket_redactor_new(&r, NULL, 0), 0);
	assert_int_equal(docket_redact_event(r, ev, NULL, NULL), 0);
	assert_string_equal(json_string_value(json_object_get(ev, "session")), "AKIAIOSFODNN7EXAMPLE");
	json_decref(ev);
	docket_redactor_free(r);
}

static void test_redact_user_rules(void **state)
{
	docket_redactor *r = NULL;
	const char *doc = "{\"builtin\":false,\"rules\":[{\"name\":\"acme\",\"pattern\":\"acme_([a-z]{6})\","
			  "\"group\":1},{\"name\":\"ci\",\"pattern\":\"SeCrEt\",\"icase\":true}]}";
	json_t *ev = test_json("{\"type\":\"tool.completed\",\"output\":\"acme_qwerty secret AKIAIOSFODNN7EXAMPLE\"}");
	json_t *hits = json_array();
	const char *names[8];

	(void)state;
	assert_int_equal(docket_redactor_new(&r, doc, strlen(doc)), 0);
	assert_int_equal(docket_redactor_rules(r, names, 8), 2);
	assert_int_equal(docket_redact_event(r, ev, hits, NULL), 0);
	assert_string_equal(json_string_value(json_object_get(ev, "output")),
			    "acme_[REDACTED:acme] [REDACTED:ci] AKIAIOSFODNN7EXAMPLE");
	assert_int_equal(json_array_size(hits), 2);
	json_decref(hits);
	json_decref(ev);
	docket_redactor_free(r);
}

static void test_redact_rules_rejected(void **state)
{
	static const char *const bad[] = {
		"", "[]", "{\"rules\":{}}", "{\"builtin\":1}", "{\"unknown\":true}",
		"{\"rules\":[{\"name\":\"x\"}]}", "{\"rules\":[{\"name\":\"Bad Name\",\"pattern\":\"a\"}]}",
		"{\"rules\":[{\"name\":\"x\",\"pattern\":\"(\"}]}", "{\"rules\":[{\"name\":\"x\",\"pattern\":\"a\",\"group\":1}]}",
		"{\"rules\":[{\"name\":\"x\",\"pattern\":\"a\",\"extra\":1}]}",
		"{\"rules\":[{\"name\":\"x\",\"pattern\":\"\"}]}",
		"{\"rules\":[{\"name\":\"x\",\"pattern\":\"am++++e\"}]}",
		"{\"rules\":[{\"name\":\"x\",\"pattern\":\"a*{2}\"}]}",
		"{\"rules\":[{\"name\":\"x\",\"pattern\":\"((a{99}){99}){99}\"}]}",
		"{\"rules\":[{\"name\":\"x\",\"pattern\":\"(a)\\\\1\"}]}",
	};
	docket_redactor *r = NULL;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (docket_redactor_new(&r, bad[i], strlen(bad[i])) != DOCKET_EINVALID)
			fail_msg("rules accepted: %s", bad[i]);
		assert_null(r);
	}
}

static void test_redact_write_time(void **state)
{
	fixture *f = *state;
	docket_export_options o = DOCKET_EXPORT_OPTIONS_INIT;
	const char *rules = "{\"builtin\":true}";
	docket_verify_report rep;
	char *out = NULL, *stored = NULL;
	json_t *lines;

	assert_int_equal(docket_ledger_set_redaction(f->l, rules, strlen(rules)), 0);
	assert_int_equal(docket_ledger_get_redaction(f->l, &stored), 0);
	assert_string_equal(stored, rules);
	docket_free(stored);
	record_secrets(f->l);
	/* re-sending an event with a secret is still recognised as a duplicate */
	{
		json_t *ev = test_json("{\"type\":\"tool.intent\",\"session\":\"sec\",\"invocation\":\"c1\",\"tool\":\"shell\","
				       "\"args\":{\"command\":[\"bash\",\"-lc\",\"export AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\"]},"
				       "\"decision\":{\"verdict\":\"allowed\"}}");
		docket_append_result res;

		assert_int_equal(docket_ledger_append_json(f->l, &ev, 1, &res), 0);
		assert_true(res.duplicate);
		json_decref(ev);
	}
	o.session = "sec";
	out = audit_export(f->l, &o);
	no_needles(out, "ledger after write-time redaction");
	lines = audit_lines(out);
	free(out);
	json_decref(lines);
	/* with --redact the markers are listed as ledger-stage redactions */
	{
		docket_redactor *r = NULL;

		assert_int_equal(docket_redactor_new(&r, NULL, 0), 0);
		o.redactor = r;
		out = audit_export(f->l, &o);
		assert_non_null(strstr(out, "\"stage\":\"ledger\""));
		free(out);
		docket_redactor_free(r);
	}
	docket_ledger_free(f->l);
	f->l = NULL;
	for (size_t i = 0; i < NSECRETS; i++)
		if (audit_grep_dir(f->dir, secrets[i].needle))
			fail_msg("raw ledger files hold the secret of %s", secrets[i].rule);
	f->l = audit_open(f->dir);
	assert_int_equal(docket_ledger_verify(f->l, &rep), 0);
	assert_true(rep.ok);
	assert_int_equal(docket_ledger_reindex(f->l), 0);
	assert_int_equal(docket_ledger_get_redaction(f->l, &stored), 0);
	assert_non_null(stored);  /* reindex keeps the rules */
	docket_free(stored);
	assert_int_equal(docket_ledger_set_redaction(f->l, NULL, 0), 0);
	assert_int_equal(docket_ledger_get_redaction(f->l, &stored), 0);
	assert_null(stored);
	assert_int_equal(docket_ledger_set_redaction(f->l, "{\"x\":1}", 7), DOCKET_EINVALID);
}

/* A control for the raw grep: without rules, small raw frames keep the text. */
static void test_raw_grep_control(void **state)
{
	fixture *f = *state;

	audit_record_text(f->l, "{\"type\":\"session.opened\",\"session\":\"s\",\"cwd\":\"AKIAIOSFODNN7EXAMPLE\"}\n");
	docket_ledger_free(f->l);
	f->l = NULL;
	assert_true(audit_grep_dir(f->dir, "AKIAIOSFODNN7EXAMPLE"));
	f->l = audit_open(f->dir);
}

/* ---- pseudonyms -------------------------------------------------------- */

static char *pseudo_export(fixture *f, const char *keyfile, int format)
{
	docket_export_options o = DOCKET_EXPORT_OPTIONS_INIT;
	docket_pseudonymizer *p = NULL;
	char *out;

	assert_int_equal(docket_pseudonymizer_load(&p, keyfile), 0);
	o.pseudonymizer = p;
	o.format = format;
	out = audit_export(f->l, &o);
	docket_pseudonymizer_free(p);
	return out;
}

static void test_pseudonyms(void **state)
{
	fixture *f = *state;
	char *k1 = audit_path(f->dir, "h1"), *k2 = audit_path(f->dir, "h2");
	const int formats[] = { DOCKET_EXPORT_JSONL, DOCKET_EXPORT_OCSF, DOCKET_EXPORT_OTEL, DOCKET_EXPORT_CSV };

	assert_int_equal(docket_keygen_hmac(k1, 0), 0);
	assert_int_equal(docket_keygen_hmac(k2, 0), 0);
	audit_record_text(f->l, "{\"type\":\"session.opened\",\"session\":\"sess-4711\",\"cwd\":\"/Users/bob/x\","
			  "\"env\":{\"USER\":\"bob\",\"HOME\":\"/Users/bob\"}}\n"
			  "{\"type\":\"tool.intent\",\"session\":\"sess-4711\",\"invocation\":\"c\",\"tool\":\"read_file\","
			  "\"args\":{\"path\":\"/home/ana/.ssh/config\"}}\n"
			  "{\"type\":\"approval.requested\",\"session\":\"sess-4711\",\"invocation\":\"c\",\"request\":\"r\","
			  "\"prompt\":\"read /home/ana/.ssh/config for sess-4711?\"}\n"
			  "{\"type\":\"approval.settled\",\"session\":\"sess-4711\",\"invocation\":\"c\",\"request\":\"r\","
			  "\"result\":\"denied\",\"actor\":\"user:carol\"}\n"
			  "{\"type\":\"tool.completed\",\"session\":\"sess-4711\",\"invocation\":\"c\",\"status\":\"denied\"}\n");
	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
		char *a = pseudo_export(f, k1, formats[i]), *b = pseudo_export(f, k1, formats[i]);
		char *c = pseudo_export(f, k2, formats[i]);
		static const char *const raw[] = { "demo-basic", "sess-4711", "user:ana", "user:carol",
						   "/home/ana", "/Users/bob", "\"bob\"" };

		for (size_t j = 0; j < sizeof(raw) / sizeof(raw[0]); j++)
			if (strstr(a, raw[j]))
				fail_msg("format %d: raw identifier %s left", formats[i], raw[j]);
		assert_string_equal(a, b);   /* the same key gives the same pseudonyms */
		assert_string_not_equal(a, c);
		free(a);
		free(b);
		free(c);
	}
	free(k1);
	free(k2);
}

static void test_pseudonym_key_files(void **state)
{
	fixture *f = *state;
	docket_pseudonymizer *p = NULL;
	char *short_key = audit_path(f->dir, "short"), *raw_key = audit_path(f->dir, "raw");
	char a[64], b[64];
	FILE *out;

	assert_non_null(out = fopen(short_key, "w"));
	fputs("tooshort", out);
	fclose(out);
	assert_int_equal(docket_pseudonymizer_load(&p, short_key), DOCKET_EINVALID);
	assert_int_equal(docket_pseudonymizer_load(&p, "/nonexistent/key"), DOCKET_ENOTFOUND);
	assert_non_null(out = fopen(raw_key, "w"));
	fputs("a passphrase that is long enough", out);
	fclose(out);
	assert_int_equal(docket_pseudonymizer_load(&p, raw_key), 0);
	docket_pseudonym(p, "session", "s1", a);
	docket_pseudonym(p, "session", "s1", b);
	assert_string_equal(a, b);
	assert_int_equal(strncmp(a, "session-", 8), 0);
	assert_int_equal(strlen(a), 8 + 16);
	docket_pseudonymizer_free(p);
	free(short_key);
	free(raw_key);
}

/* util/file.c, which the witness keeps its state with: a replace is whole
 * or nothing, with the mode asked for, and leaves no temporary file. */
static void test_file_replace(void **state)
{
	fixture *f = *state;
	char *path = audit_path(f->dir, "state"), *missing = audit_path(f->dir, "no/such/dir/state");
	char *tmp = audit_path(f->dir, "state.docket-tmp");
	struct stat st;
	FILE *in;
	char got[16] = { 0 };

	assert_int_equal(docket_file_replace(path, NULL, "first\n", 6, 0600, DOCKET_REPLACE_SYNC_DIR), 0);
	assert_int_equal(docket_file_replace(path, NULL, "second\n", 7, 0600, 0), 0);
	assert_non_null(in = fopen(path, "r"));
	assert_int_equal(fread(got, 1, sizeof(got) - 1, in), 7);
	fclose(in);
	assert_string_equal(got, "second\n");
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_not_equal(stat(tmp, &st), 0);
	/* a directory that is not there: an error naming the file, nothing made */
	assert_int_equal(docket_file_replace(missing, NULL, "x", 1, 0600, 0), DOCKET_ESTORAGE);
	assert_non_null(strstr(docket_error_last()->message, "no/such/dir/state"));
	assert_int_not_equal(stat(missing, &st), 0);
	free(path);
	free(missing);
	free(tmp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_keygen_files, setup, teardown),
		cmocka_unit_test_setup_teardown(test_file_replace, setup, teardown),
		cmocka_unit_test_setup_teardown(test_checkpoint_chain, setup, teardown),
		cmocka_unit_test_setup_teardown(test_version1_then_version2, setup, teardown),
		cmocka_unit_test_setup_teardown(test_version2_tree_checked, setup, teardown),
		cmocka_unit_test_setup_teardown(test_clean_copy_verifies, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_checkpoint_fails, setup, teardown),
		cmocka_unit_test_setup_teardown(test_truncation_detected, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dropped_checkpoint_detected, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dropped_first_checkpoint_detected, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dropped_last_needs_witness, setup, teardown),
		cmocka_unit_test_setup_teardown(test_swapped_key_detected, setup, teardown),
		cmocka_unit_test_setup_teardown(test_forged_key_id_detected, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rewritten_history_detected, setup, teardown),
		cmocka_unit_test_setup_teardown(test_witness_from_other_ledger, setup, teardown),
		cmocka_unit_test_setup_teardown(test_corrupt_record_detected, setup, teardown),
		cmocka_unit_test_setup_teardown(test_checkpoints_survive_reindex, setup, teardown),
		cmocka_unit_test_setup_teardown(test_record_parse_strict, setup, teardown),
		cmocka_unit_test_setup_teardown(test_redact_export_builtins, setup, teardown),
		cmocka_unit_test(test_redact_idempotent),
		cmocka_unit_test(test_redact_leaves_ids_alone),
		cmocka_unit_test(test_redact_user_rules),
		cmocka_unit_test(test_redact_rules_rejected),
		cmocka_unit_test_setup_teardown(test_redact_write_time, setup, teardown),
		cmocka_unit_test_setup_teardown(test_raw_grep_control, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pseudonyms, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pseudonym_key_files, setup, teardown),
	};

	docket_alloc_install_json();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
