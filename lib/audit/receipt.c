/* SPDX-License-Identifier: Apache-2.0 */
/*
 * receipt.c: `docket prove` and `docket verify-receipt` (audit/receipt.h).
 *
 * A receipt is one JSON object (docs/file-format.md "Receipts"):
 *
 *   format      "docket-receipt/1"
 *   ledger      the ledger id (32 hex digits)
 *   session, invocation
 *   tree_size   the size of the tree the checkpoint signs
 *   redacted    false: every event carries its stored bytes;
 *               true: an event that redaction changed carries its leaf
 *               hash and its redacted JSON instead (the others their bytes)
 *   checkpoint  the signed note (C2SP tlog-checkpoint, origin
 *               "docket.dev/ledger/<ledger id>")
 *   events      [{seq, type, bytes | leaf_hash, event, proof}] in seq order:
 *               the intent, the last approval request and its settlement,
 *               the last dispatch, the outcome, and the policy revision the
 *               intent cites; proof: base64 hashes, RFC 9162 order.
 *
 * What verify-receipt proves (receipt_verify): the checkpoint is signed by
 * the given key and names this ledger; each event (its bytes, or with
 * redaction only its leaf hash) is leaf seq - 1 of that tree; each `event`
 * is the decoding of its bytes; the events are those of one invocation and
 * the policy revision the intent cites.
 *
 * A redacted event's JSON is the prover's word: nothing checks it against
 * the leaf hash. So nothing is drawn from it: not its type, session,
 * result, verdict or status. The story shows it only as redacted, the
 * checks of content apply to the events with bytes, and the report counts
 * the redacted events so that verify-receipt can exit with its own code.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "checkpoint.h"
#include "docket/tlog.h"
#include "ledger/ledger_sys.h"
#include "receipt.h"
#include "util/alloc.h"
#include "util/error.h"
#include "util/json.h"
#include "audit/note.h"

#define RECEIPT_MAX_EVENT_BYTES ((size_t)1 << 20)

static const char origin_prefix[] = "docket.dev/ledger/";

/* ---- prove ---- */

/* The size and origin the checkpoint note signs (syntax only here). */
static int note_size(docket_note_checkpoint *cp, const char *text, size_t len)
{
	static note_msg n;   /* large; prove runs once per process */
	int error;

	if ((error = note_parse(&n, text, len)) < 0 ||
	    (error = note_checkpoint_parse(cp, NULL, (const char *)n.text.ptr, n.text.len)) < 0)
		docket_error_prefix("the checkpoint: ");
	return error;
}

/* With `cur` on session_events at `session`: the last policy.revised of the
 * session before `before` (0: none). */
static int policy_before(uint64_t *out, docket_ledger *l, MDB_txn *txn, ledger_reader *r,
			 const char *session, uint64_t before)
{
	MDB_cursor *cur = NULL;
	uint8_t be[8];
	MDB_val k = { strlen(session), (void *)session }, v = { 8, be };
	int rc, error = 0;

	*out = 0;
	docket_be64_put(be, before);
	if ((rc = mdb_cursor_open(txn, ledger_table_dbi(l, LEDGER_TABLE_SESSION_EVENTS), &cur)) != 0)
		return store_error(rc, "read session events");
	rc = mdb_cursor_get(cur, &k, &v, MDB_GET_BOTH_RANGE);
	if (rc == 0)
		rc = mdb_cursor_get(cur, &k, &v, MDB_PREV_DUP);
	for (; rc == 0 && error == 0; rc = mdb_cursor_get(cur, &k, &v, MDB_PREV_DUP)) {
		uint64_t seq = docket_be64_get(v.mv_data);
		unsigned kind;

		if ((error = reader_kind(r, seq, &kind)) == 0 && kind == DOCKET__V1__EVENT__BODY_POLICY_REVISED) {
			*out = seq;
			break;
		}
	}
	mdb_cursor_close(cur);
	if (error == 0 && rc != 0 && rc != MDB_NOTFOUND)
		error = store_error(rc, "read session events");
	return error;
}

static int b64_json(json_t **out, const uint8_t *p, size_t len)
{
	docket_buf b = DOCKET_BUF_INIT;
	int error;

	*out = NULL;
	if ((error = note_b64_put(&b, p, len)) == 0 && !(*out = json_stringn(b.ptr, b.len)))
		error = docket_error_set_oom();
	docket_buf_dispose(&b);
	return error;
}

/* The decoding of stored bytes as a receipt shows it: the event's JSON and its seq. */
static int decode_event(json_t **out, docket_event **ev_out, uint64_t seq, const uint8_t *p, size_t len)
{
	docket_event *ev = NULL;
	json_t *obj = NULL;
	int error;

	*out = NULL;
	if ((error = event_unpack(&ev, p, len)) == 0 && (error = docket_event_to_json(&obj, ev)) == 0 &&
	    json_object_set_new(obj, "seq", json_integer((json_int_t)seq)) < 0)
		error = docket_error_set_oom();
	if (error == 0)
		*out = obj;
	else
		json_decref(obj);
	if (ev_out && error == 0)
		*ev_out = ev;
	else
		docket_event_free(ev);
	return error;
}

static int proof_json(json_t **out, const docket_tlog_proof *p)
{
	json_t *arr = json_array(), *h;
	int error = arr ? 0 : docket_error_set_oom();

	for (size_t i = 0; error == 0 && i < p->len; i++)
		if ((error = b64_json(&h, p->hash[i], DOCKET_TLOG_HASH_LEN)) == 0 && json_array_append_new(arr, h) < 0)
			error = docket_error_set_oom();
	if (error < 0) {
		json_decref(arr);
		arr = NULL;
	}
	*out = arr;
	return error;
}

typedef struct prove_ctx {
	docket_ledger *l;
	ledger_reader *r;
	uint64_t size;
	const docket_redactor *redactor;
	const docket_pseudonymizer *pseudo;
	json_t *events;
	size_t redacted;         /* events that carry a leaf hash */
} prove_ctx;

static int add_event(prove_ctx *c, uint64_t seq)
{
	uint8_t leaf[DOCKET_TLOG_HASH_LEN];
	docket_tlog_proof *proof = NULL;
	docket_event *ev = NULL;
	json_t *obj = NULL, *shown = NULL, *v = NULL;
	json_t *stored = NULL;
	const uint8_t *p;
	size_t len;
	int redact = 0, error;

	if ((error = reader_payload(c->r, seq, &p, &len)) < 0 || (error = decode_event(&shown, &ev, seq, p, len)) < 0)
		goto cleanup;
	if (c->redactor || c->pseudo) {
		if (!(stored = json_deep_copy(shown))) {
			error = docket_error_set_oom();
			goto cleanup;
		}
		if ((c->redactor && (error = docket_redact_event(c->redactor, shown, NULL, NULL)) < 0) ||
		    (c->pseudo && (error = docket_pseudonymize_event(c->pseudo, shown)) < 0))
			goto cleanup;
		/* an event redaction left alone keeps its bytes: they show nothing more */
		redact = !json_equal(stored, shown);
		c->redacted += redact;
	}
	docket_tlog_leaf_hash(leaf, p, len);
	if (!(proof = docket_malloc(sizeof(*proof)))) {
		error = docket_error_set_oom();
		goto cleanup;
	}
	if ((error = docket_tlog_inclusion(proof, c->l, seq, c->size)) < 0)
		goto cleanup;
	if (!(obj = json_object()) || json_object_set_new(obj, "seq", json_integer((json_int_t)seq)) < 0 ||
	    json_object_set_new(obj, "type", json_string(docket_event_type(ev))) < 0) {
		error = docket_error_set_oom();
		goto cleanup;
	}
	if ((error = redact ? b64_json(&v, leaf, sizeof(leaf)) : b64_json(&v, p, len)) < 0)
		goto cleanup;
	if (json_object_set_new(obj, redact ? "leaf_hash" : "bytes", v) < 0 ||
	    json_object_set(obj, "event", shown) < 0) {
		error = docket_error_set_oom();
		goto cleanup;
	}
	if ((error = proof_json(&v, proof)) < 0)
		goto cleanup;
	if (json_object_set_new(obj, "proof", v) < 0 || json_array_append(c->events, obj) < 0)
		error = docket_error_set_oom();
cleanup:
	docket_free(proof);
	docket_event_free(ev);
	json_decref(stored);
	json_decref(shown);
	json_decref(obj);
	return error;
}

/* The seqs a receipt of `inv` holds, ascending, no zeros, no repeats. */
static size_t receipt_seqs(uint64_t out[6], const inv_state *inv, uint64_t policy)
{
	uint64_t all[6] = { policy, inv->intent_seq, inv->request_seq, inv->settle_seq, inv->dispatch_seq,
			    inv->outcome_seq };
	size_t n = 0;

	for (size_t i = 0; i < 6; i++) {
		size_t j = n;

		if (!all[i])
			continue;
		for (size_t k = 0; k < n; k++)
			if (out[k] == all[i])
				j = SIZE_MAX;
		if (j == SIZE_MAX)
			continue;
		while (j > 0 && out[j - 1] > all[i]) {
			out[j] = out[j - 1];
			j--;
		}
		out[j] = all[i];
		n++;
	}
	return n;
}

static int set_str(json_t *obj, const char *key, const char *value)
{
	return json_object_set_new(obj, key, json_string(value)) < 0
		       ? docket_error_set_oom() : 0;
}

int receipt_build(json_t **out, docket_ledger *l, const char *session, const char *invocation,
		  const char *note_text, size_t note_len, const docket_redactor *redactor,
		  const docket_pseudonymizer *pseudo)
{
	docket_note_checkpoint cp;
	ledger_reader r;
	MDB_txn *txn = NULL;
	inv_state inv;
	sess_state sess;
	prove_ctx c;
	json_t *obj = NULL;
	uint64_t seqs[6], policy = 0;
	size_t n;
	int error;

	*out = NULL;
	memset(&c, 0, sizeof(c));
	reader_init(&r, l, NULL);
	if ((error = note_size(&cp, note_text, note_len)) < 0 ||
	    (error = ledger_invocation_get(l, session, invocation, &inv)) < 0 ||
	    (error = store_txn_begin(&txn, l, MDB_RDONLY)) < 0)
		goto cleanup;
	reader_set_txn(&r, txn);
	/* the session's current revision, when it predates the intent, was in
	 * force at the intent; otherwise look back from the intent */
	if ((error = ledger_session_get(l, session, &sess, NULL)) < 0)
		goto cleanup;
	if (sess.policy_seq < inv.intent_seq)
		policy = sess.policy_seq;   /* 0: the session never had a policy */
	else if ((error = policy_before(&policy, l, txn, &r, session, inv.intent_seq)) < 0)
		goto cleanup;
	n = receipt_seqs(seqs, &inv, policy);
	if (n == 0 || seqs[n - 1] > cp.size) {
		error = docket_error_set(DOCKET_ENOTFOUND,
			"the newest checkpoint signs the first %llu events; this invocation's reach seq %llu: "
			"sign a new one with `docket checkpoint --key KEY`, then prove",
			(unsigned long long)cp.size, (unsigned long long)(n ? seqs[n - 1] : 0));
		goto cleanup;
	}
	c.l = l;
	c.r = &r;
	c.size = cp.size;
	c.redactor = redactor;
	c.pseudo = pseudo;
	if (!(obj = json_object()) || !(c.events = json_array())) {
		error = docket_error_set_oom();
		goto cleanup;
	}
	for (size_t i = 0; i < n && error == 0; i++)
		error = add_event(&c, seqs[i]);
	if (error < 0)
		goto cleanup;
	{
		/* the session as the events show it (a pseudonym with --pseudonymize) */
		json_t *intent = NULL;

		for (size_t i = 0; i < n; i++)
			if (seqs[i] == inv.intent_seq)
				intent = json_object_get(json_array_get(c.events, i), "event");
		if ((error = set_str(obj, "format", RECEIPT_FORMAT)) < 0 ||
		    (error = set_str(obj, "ledger", ledger_id(l))) < 0 ||
		    (error = set_str(obj, "session", json_string_value(json_object_get(intent, "session")))) < 0 ||
		    (error = set_str(obj, "invocation", invocation)) < 0)
			goto cleanup;
	}
	if (json_object_set_new(obj, "tree_size", json_integer((json_int_t)cp.size)) < 0 ||
	    json_object_set_new(obj, "redacted", json_boolean(c.redacted > 0)) < 0 ||
	    json_object_set_new(obj, "checkpoint", json_stringn(note_text, note_len)) < 0 ||
	    json_object_set(obj, "events", c.events) < 0) {
		error = docket_error_set_oom();
		goto cleanup;
	}
	*out = obj;
	obj = NULL;
cleanup:
	json_decref(c.events);
	json_decref(obj);
	reader_dispose(&r);
	if (txn)
		store_txn_abort(l, txn);
	return error;
}

/* ---- verify ---- */

typedef struct vctx {
	receipt_report *rep;
	const char *session, *invocation;
	uint64_t size;
	int redacted;
	json_int_t cited_revision;   /* the intent's decision.policy_revision; -1: no intent yet */
	json_t *story;
} vctx;

static int bad(receipt_report *rep, const char *fmt, ...) DOCKET_PRINTF(2, 3);

static int bad(receipt_report *rep, const char *fmt, ...)
{
	va_list ap;

	if (!rep->ok)
		return 1;
	va_start(ap, fmt);
	vsnprintf(rep->problem, sizeof(rep->problem), fmt, ap);
	va_end(ap);
	rep->ok = 0;
	return 1;
}

static const char *get_string(const json_t *obj, const char *key)
{
	return json_string_value(json_object_get(obj, key));
}

/* Only `keys` (NULL-terminated), every one in `required` present. */
static int keys_ok(const json_t *obj, const char *const *keys, const char *const *required)
{
	const char *key;
	json_t *v;

	if (!json_is_object(obj))
		return 0;
	json_object_foreach((json_t *)obj, key, v) {
		size_t i = 0;

		while (keys[i] && strcmp(keys[i], key) != 0)
			i++;
		if (!keys[i])
			return 0;
	}
	for (size_t i = 0; required[i]; i++)
		if (!json_object_get(obj, required[i]))
			return 0;
	return 1;
}

/* Canonical base64 of exactly `want` bytes (0: any length up to `max`). */
static int b64_get(uint8_t *out, size_t *out_len, const json_t *v, size_t want, size_t max)
{
	const char *s = json_string_value(v);
	size_t n = 0;

	if (!s || note_b64_decode(out, max, &n, s, json_string_length(v)) < 0 || (want && n != want))
		return -1;
	if (out_len)
		*out_len = n;
	return 0;
}

static int check_member(vctx *c, const json_t *shown, const char *type, uint64_t seq)
{
	const char *session = get_string(shown, "session"), *inv = get_string(shown, "invocation");

	if (!session || strcmp(session, c->session) != 0)
		return bad(c->rep, "event %llu belongs to another session", (unsigned long long)seq);
	if (strcmp(type, "policy.revised") == 0)
		return 0;
	if (!inv || strcmp(inv, c->invocation) != 0)
		return bad(c->rep, "event %llu belongs to another invocation", (unsigned long long)seq);
	if (strcmp(type, "tool.intent") == 0) {
		json_t *rev = json_object_get(json_object_get(shown, "decision"), "policy_revision");

		if (c->cited_revision >= 0)
			return bad(c->rep, "two intents in one receipt");
		c->cited_revision = json_is_integer(rev) ? json_integer_value(rev) : 0;
	}
	return 0;
}

/* The proof of event `seq` as the receipt gives it. */
static int read_proof(vctx *c, const json_t *pj, json_int_t seq, docket_tlog_proof *proof)
{
	if (json_array_size(pj) > DOCKET_TLOG_MAX_PROOF)
		return bad(c->rep, "event %lld: its proof is too long", (long long)seq);
	memset(proof, 0, sizeof(*proof));
	proof->index = (uint64_t)seq - 1;
	proof->size = c->size;
	proof->len = json_array_size(pj);
	for (size_t i = 0; i < proof->len; i++)
		if (b64_get(proof->hash[i], NULL, json_array_get(pj, i), 32, 32) < 0)
			return bad(c->rep, "event %lld: proof hash %zu is not base64 of 32 bytes", (long long)seq, i + 1);
	return 0;
}

/* An event with bytes: its leaf hash from them, and its JSON their decoding. */
static int check_bytes(vctx *c, const json_t *e, json_int_t seq, const char *type,
		       uint8_t leaf[DOCKET_TLOG_HASH_LEN])
{
	static uint8_t bytes[RECEIPT_MAX_EVENT_BYTES];
	json_t *decoded = NULL;
	docket_event *ev = NULL;
	size_t len;
	int same;

	if (b64_get(bytes, &len, json_object_get(e, "bytes"), 0, sizeof(bytes)) < 0)
		return bad(c->rep, "event %lld: its bytes are missing or not base64", (long long)seq);
	docket_tlog_leaf_hash(leaf, bytes, len);
	if (decode_event(&decoded, &ev, (uint64_t)seq, bytes, len) < 0)
		return bad(c->rep, "event %lld: its bytes are not a docket event", (long long)seq);
	same = json_equal(decoded, json_object_get(e, "event")) && strcmp(type, docket_event_type(ev)) == 0;
	json_decref(decoded);
	docket_event_free(ev);
	if (!same)
		return bad(c->rep, "event %lld: the JSON shown is not the decoding of its bytes", (long long)seq);
	return 0;
}

/*
 * One event of the receipt: its shape, its leaf hash (from its bytes, or
 * the one given when it is redacted), its proof; for an event with bytes,
 * that its JSON is their decoding and that it belongs to the invocation.
 * A redacted event (leaf hash only, in a receipt marked redacted) proves
 * its place in the log and nothing else: *redacted_out is set and nothing
 * of its JSON is checked or used. 0 when all holds.
 */
static int check_event(vctx *c, const json_t *e, uint64_t prev_seq, uint64_t *seq_out, int *redacted_out,
		       uint8_t leaf[DOCKET_TLOG_HASH_LEN], docket_tlog_proof *proof)
{
	static const char *const keys[] = { "seq", "type", "bytes", "leaf_hash", "event", "proof", NULL };
	static const char *const required[] = { "seq", "type", "event", "proof", NULL };
	const json_t *shown = json_object_get(e, "event"), *pj = json_object_get(e, "proof");
	const char *type = get_string(e, "type");
	int has_bytes = json_object_get(e, "bytes") != NULL, has_leaf = json_object_get(e, "leaf_hash") != NULL;
	json_int_t seq;

	*redacted_out = 0;
	if (!keys_ok(e, keys, required) || !json_is_integer(json_object_get(e, "seq")) || !type ||
	    !json_is_object(shown) || !json_is_array(pj))
		return bad(c->rep, "an event of the receipt is malformed");
	seq = json_integer_value(json_object_get(e, "seq"));
	if (seq < 1 || (uint64_t)seq <= prev_seq || (uint64_t)seq > c->size)
		return bad(c->rep, "event seq %lld is out of order or outside the checkpoint's %llu events",
			   (long long)seq, (unsigned long long)c->size);
	*seq_out = (uint64_t)seq;
	if (has_bytes == has_leaf)
		return bad(c->rep, "event %lld: carries %s", (long long)seq,
			   has_bytes ? "both bytes and a leaf hash" : "neither bytes nor a leaf hash");
	if (has_leaf && !c->redacted)
		return bad(c->rep, "event %lld: a leaf hash in a receipt not marked redacted", (long long)seq);
	if (read_proof(c, pj, seq, proof) != 0)
		return 1;
	if (has_leaf) {
		if (b64_get(leaf, NULL, json_object_get(e, "leaf_hash"), 32, 32) < 0)
			return bad(c->rep, "event %lld: a redacted event carries a leaf hash (base64, 32 bytes)",
				   (long long)seq);
		*redacted_out = 1;
		return 0;
	}
	if (check_bytes(c, e, seq, type, leaf) != 0)
		return 1;
	if (!get_string(shown, "type") || strcmp(get_string(shown, "type"), type) != 0)
		return bad(c->rep, "event %lld: its type does not match", (long long)seq);
	return check_member(c, shown, type, (uint64_t)seq);
}

/* What the story shows of a redacted event: its seq (proved by its place in the tree), nothing else. */
static json_t *redacted_stub(uint64_t seq)
{
	return json_pack("{s:I, s:b}", "seq", (json_int_t)seq, "redacted", 1);
}

/* The policy revision a receipt shows must be the one its intent cites; an
 * intent that cites none (an import, record mode: no decision) shows the
 * revision in force when it was made, which must come before it. */
static void check_revision(receipt_report *rep, const json_t *evs, json_int_t cited)
{
	json_int_t intent_seq = -1;
	size_t i;

	for (i = 0; i < json_array_size(evs); i++) {
		const json_t *e = json_array_get(evs, i);

		if (get_string(e, "type") && strcmp(get_string(e, "type"), "tool.intent") == 0)
			intent_seq = json_integer_value(json_object_get(e, "seq"));
	}
	for (i = 0; i < json_array_size(evs); i++) {
		const json_t *e = json_array_get(evs, i), *rev = json_object_get(e, "revision");
		const char *type = get_string(e, "type");

		if (!type || strcmp(type, "policy.revised") != 0)
			continue;
		if (cited == 0 && !(json_integer_value(json_object_get(e, "seq")) < intent_seq))
			bad(rep, "the policy revision in the receipt does not come before its intent");
		else if (cited != 0 && (!json_is_integer(rev) || json_integer_value(rev) != cited))
			bad(rep, "the policy revision in the receipt is not the one the intent cites (%lld)",
			    (long long)cited);
	}
}

int receipt_verify(receipt_report *rep, json_t **story, const char *text, size_t len, const char *pubkey_path)
{
	static const char *const keys[] = { "format", "ledger", "session", "invocation", "tree_size",
					    "redacted", "checkpoint", "events", NULL };
	docket_note_checkpoint cp;
	char origin[128], problem[256] = "";
	uint8_t root[DOCKET_TLOG_HASH_LEN];
	json_t *obj = NULL, *events, *out_story = NULL;
	json_error_t jerr;
	const char *ledger, *note_text;
	vctx c;
	uint64_t prev = 0;
	int error = 0;

	memset(rep, 0, sizeof(*rep));
	rep->ok = 1;
	if (story)
		*story = NULL;
	if (len > RECEIPT_MAX_LEN) {
		bad(rep, "the receipt is larger than %zu bytes", RECEIPT_MAX_LEN);
		return 0;
	}
	if (!(obj = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr))) {
		bad(rep, "the receipt is not JSON: %s (line %d)", jerr.text, jerr.line);
		return 0;
	}
	events = json_object_get(obj, "events");
	ledger = get_string(obj, "ledger");
	note_text = get_string(obj, "checkpoint");
	if (!keys_ok(obj, keys, keys) || !get_string(obj, "format") ||
	    strcmp(get_string(obj, "format"), RECEIPT_FORMAT) != 0 || !ledger || strlen(ledger) != 32 ||
	    !get_string(obj, "session") || !get_string(obj, "invocation") || !note_text ||
	    !json_is_integer(json_object_get(obj, "tree_size")) || !json_is_boolean(json_object_get(obj, "redacted")) ||
	    !json_is_array(events) || json_array_size(events) == 0 || json_array_size(events) > RECEIPT_MAX_EVENTS) {
		bad(rep, "not a %s receipt (a field is missing, unknown or of the wrong type)", RECEIPT_FORMAT);
		goto done;
	}
	/* the key: a failure to read it is not a verdict on the receipt */
	{
		EVP_PKEY *key = NULL;

		if ((error = checkpoint_load_pubkey(&key, pubkey_path)) < 0)
			goto done;
		EVP_PKEY_free(key);
	}
	if (docket_note_verify(&cp, note_text, json_string_length(json_object_get(obj, "checkpoint")), pubkey_path,
			       problem, sizeof(problem)) < 0) {
		bad(rep, "the checkpoint: %s", *problem ? problem : docket_error_last()->message);
		goto done;
	}
	snprintf(origin, sizeof(origin), "%s%s", origin_prefix, ledger);
	if (strcmp(cp.origin, origin) != 0) {
		bad(rep, "the checkpoint is of another log (%s), not of ledger %s", cp.origin, ledger);
		goto done;
	}
	if ((json_int_t)cp.size != json_integer_value(json_object_get(obj, "tree_size"))) {
		bad(rep, "the receipt's tree size is not the checkpoint's (%llu)", (unsigned long long)cp.size);
		goto done;
	}
	memcpy(root, cp.root, sizeof(root));
	memset(&c, 0, sizeof(c));
	c.rep = rep;
	c.session = get_string(obj, "session");
	c.invocation = get_string(obj, "invocation");
	c.size = cp.size;
	c.redacted = json_is_true(json_object_get(obj, "redacted"));
	c.cited_revision = -1;
	if (!(out_story = json_object()) || json_object_set_new(out_story, "ledger", json_string(ledger)) < 0 ||
	    json_object_set(out_story, "session", json_object_get(obj, "session")) < 0 ||
	    json_object_set(out_story, "invocation", json_object_get(obj, "invocation")) < 0 ||
	    json_object_set_new(out_story, "tree_size", json_integer((json_int_t)cp.size)) < 0 ||
	    json_object_set_new(out_story, "events", json_array()) < 0) {
		error = docket_error_set_oom();
		goto done;
	}
	for (size_t i = 0; i < json_array_size(events) && rep->ok; i++) {
		const json_t *e = json_array_get(events, i);
		static docket_tlog_proof proof;
		uint8_t leaf[DOCKET_TLOG_HASH_LEN];
		uint64_t seq = 0;
		int redacted = 0;
		json_t *shown;

		if (check_event(&c, e, prev, &seq, &redacted, leaf, &proof) != 0)
			break;
		prev = seq;
		if (docket_tlog_verify_inclusion(&proof, leaf, root) < 0) {
			bad(rep, "event %llu is not in the log the checkpoint signs: %s", (unsigned long long)seq,
			    docket_error_last()->message);
			break;
		}
		shown = redacted ? redacted_stub(seq) : json_incref(json_object_get(e, "event"));
		if (!shown || json_array_append_new(json_object_get(out_story, "events"), shown) < 0) {
			error = docket_error_set_oom();
			goto done;
		}
		rep->events++;
		rep->redacted += (size_t)redacted;
	}
	/* with the intent redacted, which call these events are is not proved
	 * (the story says so); with nothing redacted, an intent is required */
	rep->intent_proved = c.cited_revision >= 0;
	if (rep->ok && !rep->intent_proved && rep->redacted == 0)
		bad(rep, "the receipt has no tool.intent");
	if (rep->ok && rep->intent_proved)
		check_revision(rep, json_object_get(out_story, "events"), c.cited_revision);
done:
	json_decref(obj);
	if (error == 0 && story && rep->ok) {
		*story = out_story;
		out_story = NULL;
	}
	json_decref(out_story);
	return error;
}

/* ---- the story ---- */

/* `s` with every character a terminal could act on escaped: C0, DEL, C1,
 * bidi controls; with `quoted` backslash and quote too (shown in quotes). */
static int put_escaped(docket_buf *out, const char *s, int quoted)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	int error = 0;

	for (; *p && error == 0; p++) {
		if (*p < 0x20 || *p == 0x7f)
			error = docket_buf_printf(out, "\\x%02x", *p);
		else if (quoted && (*p == '\\' || *p == '"'))
			error = docket_buf_printf(out, "\\%c", *p);
		else if (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) {
			error = docket_buf_printf(out, "\\u%04x", p[1]);
			p++;
		} else if (p[0] == 0xe2 && ((p[1] == 0x80 && p[2] >= 0xaa && p[2] <= 0xae) ||
					    (p[1] == 0x81 && p[2] >= 0xa6 && p[2] <= 0xa9))) {
			error = docket_buf_printf(out, "\\u%04x", 0x2000 | ((p[1] & 0x3f) << 6) | (p[2] & 0x3f));
			p += 2;
		} else
			error = docket_buf_putc(out, (char)*p);
	}
	return error;
}

static int put_safe(docket_buf *out, const char *s)
{
	return put_escaped(out, s, 1);
}

static int put_quoted(docket_buf *out, const char *s)
{
	int error;

	if ((error = docket_buf_putc(out, '"')) < 0 || (error = put_safe(out, s)) < 0)
		return error;
	return docket_buf_putc(out, '"');
}

static int put_compact(docket_buf *out, const json_t *v, size_t max)
{
	docket_buf s = DOCKET_BUF_INIT;
	int error;

	if (!v)
		return docket_buf_puts(out, "-");
	if ((error = docket_json_dump(&s, v)) == 0 && (error = docket_buf_putc(&s, '\0')) == 0) {
		if (strlen(s.ptr) > max)
			s.ptr[max] = '\0';
		error = put_escaped(out, s.ptr, 0);   /* JSON: its own escapes */
	}
	docket_buf_dispose(&s);
	return error;
}

/* What an intent says of its decision: the verdict and the policy revision
 * it cites; a decision with no revision (the runtime's own) by its source;
 * none at all (an import, record mode) said so, never an empty verdict. */
static int put_decision(docket_buf *out, const json_t *d)
{
	const json_t *rev = json_object_get(d, "policy_revision");
	int error;

	if (!json_is_object(d) || !get_string(d, "verdict"))
		return docket_buf_puts(out, "no decision recorded (the verdict follows from what happened)");
	if ((error = put_safe(out, get_string(d, "verdict"))) < 0)
		return error;
	if (json_is_integer(rev) && json_integer_value(rev) > 0)
		return docket_buf_printf(out, " under policy revision %lld", (long long)json_integer_value(rev));
	if (!get_string(d, "source"))
		return 0;
	return (error = docket_buf_puts(out, " (decided by ")) < 0 || (error = put_safe(out, get_string(d, "source"))) < 0
		? error : docket_buf_putc(out, ')');
}

static int story_line(docket_buf *out, const json_t *e)
{
	const char *type = get_string(e, "type");
	const json_t *args = json_object_get(e, "args");
	int error;

	size_t at;

	if ((error = docket_buf_printf(out, "  %-6lld ", (long long)json_integer_value(json_object_get(e, "seq")))) < 0)
		return error;
	/* a redacted event: nothing of its text is proved, so nothing is shown */
	if (json_is_true(json_object_get(e, "redacted")))
		return docket_buf_puts(out, "[redacted: its place in the log is proved; its content is not, and is not shown]\n");
	if ((error = put_safe(out, get_string(e, "time"))) < 0 || (error = docket_buf_puts(out, "  ")) < 0)
		return error;
	at = out->len;
	if ((error = put_safe(out, type)) < 0)
		return error;
	while (out->len - at < 20)
		if ((error = docket_buf_putc(out, ' ')) < 0)
			return error;
	if (!strcmp(type, "policy.revised")) {
		if ((error = docket_buf_printf(out, "revision %lld by ",
					       (long long)json_integer_value(json_object_get(e, "revision")))) < 0 ||
		    (error = put_quoted(out, get_string(e, "actor"))) < 0)
			return error;
		if (get_string(e, "reason") && ((error = docket_buf_puts(out, ", reason ")) < 0 ||
						(error = put_quoted(out, get_string(e, "reason"))) < 0))
			return error;
	} else if (!strcmp(type, "tool.intent")) {
		const json_t *d = json_object_get(e, "decision");

		if ((error = put_safe(out, get_string(e, "tool"))) < 0 || (error = docket_buf_putc(out, ' ')) < 0 ||
		    (error = put_compact(out, json_object_get(args, "command") ? json_object_get(args, "command") : args,
					 100)) < 0 ||
		    (error = docket_buf_puts(out, ": ")) < 0 || (error = put_decision(out, d)) < 0)
			return error;
	} else if (!strcmp(type, "approval.requested")) {
		if ((error = docket_buf_puts(out, "to ")) < 0 || (error = put_safe(out, get_string(e, "reviewer"))) < 0 ||
		    (error = docket_buf_puts(out, ": ")) < 0 || (error = put_quoted(out, get_string(e, "prompt"))) < 0)
			return error;
	} else if (!strcmp(type, "approval.settled")) {
		if ((error = put_safe(out, get_string(e, "result"))) < 0 || (error = docket_buf_puts(out, " by ")) < 0 ||
		    (error = put_quoted(out, get_string(e, "actor"))) < 0)
			return error;
	} else if (!strcmp(type, "tool.dispatched")) {
		json_t *a = json_object_get(e, "attempt");

		if (a && (error = docket_buf_printf(out, "attempt %lld", (long long)json_integer_value(a))) < 0)
			return error;
	} else if (!strcmp(type, "tool.completed")) {
		json_t *x = json_object_get(e, "exit_code");

		if ((error = put_safe(out, get_string(e, "status"))) < 0 ||
		    (x && (error = docket_buf_printf(out, ", exit code %lld", (long long)json_integer_value(x))) < 0))
			return error;
	}
	return docket_buf_putc(out, '\n');
}

int receipt_story_text(docket_buf *out, const json_t *story, const receipt_report *rep)
{
	const json_t *evs = json_object_get(story, "events");
	int error;

	if ((error = docket_buf_puts(out, "invocation ")) < 0 ||
	    (error = put_quoted(out, get_string(story, "invocation"))) < 0 ||
	    (error = docket_buf_puts(out, " of session ")) < 0 ||
	    (error = put_quoted(out, get_string(story, "session"))) < 0 ||
	    (error = docket_buf_puts(out, "\nledger ")) < 0 || (error = put_safe(out, get_string(story, "ledger"))) < 0 ||
	    (error = docket_buf_printf(out, ", checkpoint of %lld events: signature good\n",
				       (long long)json_integer_value(json_object_get(story, "tree_size")))) < 0)
		return error;
	if (!rep->intent_proved &&
	    (error = docket_buf_puts(out, "NOT PROVED: the intent is redacted: what was called, with which verdict, "
					  "under which policy revision\n")) < 0)
		return error;
	for (size_t i = 0; i < json_array_size(evs); i++)
		if ((error = story_line(out, json_array_get(evs, i))) < 0)
			return error;
	if (rep->redacted)
		return docket_buf_printf(out, "verified with redacted events: %zu events in the log the checkpoint signs; "
					      "%zu redacted (only their place in the log is proved), %zu shown as their "
					      "stored bytes decode\n", rep->events, rep->redacted, rep->events - rep->redacted);
	return docket_buf_printf(out, "verified: %zu events, each in the log the checkpoint signs, each shown as its "
				      "stored bytes decode\n", rep->events);
}
