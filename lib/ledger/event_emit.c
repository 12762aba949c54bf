/* SPDX-License-Identifier: Apache-2.0 */
/*
 * event_emit.c: docket.v1.Event -> JSON (the to_json half of the codec; the
 * from_json half and the rules both follow are in event.c).
 *
 * The fields of each event kind are listed once (emit_event, emit_body) and
 * go through a small emitter interface with two backends:
 *   - the tree backend builds the json_t every reader gets
 *     (docket_event_to_json, docket_event_to_json_framed);
 *   - the text backend writes the JSON text straight into a buffer
 *     (docket_event_write_json, the JSONL export), byte for byte what
 *     docket_json_dump gives for the tree (util/json_write.c escapes as
 *     jansson does; tests/unit/test_event_emit.c compares the two on every
 *     fixture ledger, generated mixes and hostile strings).
 *
 * Both backends see the same checks in the same order, so a corrupt field
 * gives the same DOCKET_ECORRUPT message either way. The only places where
 * the text backend cannot simply write what it is given:
 *   1. Stored JSON text (args_json, policy_json) is copied as stored when it
 *      is provably jansson's own compact dump (docket_json_is_dump: what
 *      docket wrote at append time always is); anything else is parsed and
 *      dumped by jansson, as the tree backend does, which also gives the
 *      same error for text that is not JSON. So a tampered ledger cannot put
 *      a newline, a raw control byte or a second value into a line.
 *   2. A string map (env, labels) whose keys repeat (no valid input makes
 *      one, the protobuf can hold one) is built as a json_t and dumped, so
 *      jansson's rule (the last value at the first key's place) holds.
 */
#include "event.h"

#include <stdbool.h>
#include <string.h>

#include "util/json.h"
#include "util/json_write.h"
#include "util/error.h"
#include "util/utf8.h"

_Static_assert(sizeof(json_int_t) == sizeof(int64_t), "json_int_t is 64 bits");

#define MAP_SCAN_MAX 64 /* longer string maps go through jansson for the duplicate check */

/* Where we are, for messages: event type and enclosing object ("decision"). */
typedef struct emit_ctx {
	const char *type;
	const char *prefix;
} emit_ctx;

static int out_of_memory(void)
{
	return docket_error_set_oom();
}

static int corrupt(const emit_ctx *c, const char *key, const char *what)
{
	return docket_error_set(DOCKET_ECORRUPT, "%s: field \"%s%s%s\": %s", c->type,
				c->prefix ? c->prefix : "", c->prefix ? "." : "", key, what);
}

/* ---- the emitter interface ----------------------------------------------- */

typedef Docket__V1__KeyValue kv_item;
typedef struct emitter emitter;

typedef struct emitter_ops {
	/* A nested object under `key` (NULL: the event itself), and its end. */
	int (*open)(emitter *e, const char *key);
	int (*close)(emitter *e);
	/* DOCKET_EINVALID when s is not valid UTF-8 (the caller says which field). */
	int (*string)(emitter *e, const char *key, const char *s, size_t len);
	int (*integer)(emitter *e, const char *key, json_int_t n);
	/* An array of strings: DOCKET_EINVALID when one is not valid UTF-8. */
	int (*strings)(emitter *e, const char *key, char *const *items, size_t n);
	/* A string map, and stored JSON text: these set their own messages. */
	int (*map)(emitter *e, const emit_ctx *c, const char *key, kv_item *const *items, size_t n);
	int (*json_text)(emitter *e, const emit_ctx *c, const char *key, const char *text, bool omit_empty_object);
} emitter_ops;

struct emitter {
	const emitter_ops *ops;
};

static const char *item_key(const kv_item *kv)
{
	return kv && kv->key ? kv->key : "";
}

static const char *item_value(const kv_item *kv)
{
	return kv && kv->value ? kv->value : "";
}

/* Strict UTF-8 (no overlongs, no surrogates, <= U+10FFFF), as jansson wants. */
static bool utf8_valid(const char *s, size_t len)
{
	return docket_utf8_check(s, len) == len;
}

/* The map as a json_t, checked key then value, item by item. */
static int map_to_tree(json_t **out, const emit_ctx *c, const char *key, kv_item *const *items, size_t n)
{
	json_t *map;
	int error = 0;

	*out = NULL;
	if (!(map = json_object()))
		return out_of_memory();
	for (size_t i = 0; i < n; i++) {
		const char *k = item_key(items[i]), *s = item_value(items[i]);
		json_t *v;

		if (!utf8_valid(k, strlen(k))) {
			error = corrupt(c, key, "key not valid UTF-8");
			goto fail;
		}
		if (!utf8_valid(s, strlen(s))) {
			error = corrupt(c, key, "not valid UTF-8");
			goto fail;
		}
		if (!(v = json_stringn_nocheck(s, strlen(s))) || json_object_set_new_nocheck(map, k, v) < 0) {
			error = out_of_memory();
			goto fail;
		}
	}
	*out = map;
	return 0;
fail:
	json_decref(map);
	return error;
}

/* Stored JSON text parsed back; *out NULL when an empty object is omitted. */
static int json_text_to_tree(json_t **out, const emit_ctx *c, const char *key, const char *text,
			     bool omit_empty_object)
{
	json_error_t jerr;
	json_t *v = NULL;
	int error;

	*out = NULL;
	/* docket_json_load tells a failed allocation (ENOMEM) from bad JSON, which jansson does not */
	if ((error = docket_json_load(&v, text, strlen(text), JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr)) ==
	    DOCKET_ENOMEM)
		return error;
	if (error < 0)
		return docket_error_set(DOCKET_ECORRUPT, "%s: field \"%s\": stored JSON is invalid: %s",
					c->type, key, jerr.text);
	if (omit_empty_object && json_is_object(v) && json_object_size(v) == 0) {
		json_decref(v);
		return 0;
	}
	*out = v;
	return 0;
}

/* ---- the tree backend ---------------------------------------------------- */

#define TREE_DEPTH 4

typedef struct tree_emitter {
	emitter base;
	json_t *root;
	json_t *open[TREE_DEPTH]; /* borrowed: the innermost object is open[depth - 1] */
	size_t depth;
} tree_emitter;

/* Adds `v` (a new reference, NULL after a failed allocation) to the open object. */
static int tree_put(emitter *e, const char *key, json_t *v)
{
	tree_emitter *t = (tree_emitter *)e;

	if (!v || json_object_set_new_nocheck(t->open[t->depth - 1], key, v) < 0)
		return out_of_memory();
	return 0;
}

static int tree_open(emitter *e, const char *key)
{
	tree_emitter *t = (tree_emitter *)e;
	json_t *obj;
	int error;

	if (t->depth == TREE_DEPTH)
		return docket_error_set(DOCKET_ERROR, "event JSON nested too deep");
	if (!(obj = json_object()))
		return out_of_memory();
	if (!key)
		t->root = obj;
	else if ((error = tree_put(e, key, obj)) < 0)
		return error;
	t->open[t->depth++] = obj;
	return 0;
}

static int tree_close(emitter *e)
{
	((tree_emitter *)e)->depth--;
	return 0;
}

static int tree_string(emitter *e, const char *key, const char *s, size_t len)
{
	if (!utf8_valid(s, len))
		return DOCKET_EINVALID;
	return tree_put(e, key, json_stringn_nocheck(s, len));
}

static int tree_integer(emitter *e, const char *key, json_int_t n)
{
	return tree_put(e, key, json_integer(n));
}

static int tree_strings(emitter *e, const char *key, char *const *items, size_t n)
{
	json_t *arr;
	int error = 0;

	if (!(arr = json_array()))
		return out_of_memory();
	for (size_t i = 0; i < n; i++) {
		const char *s = items[i] ? items[i] : "";

		if (!utf8_valid(s, strlen(s))) {
			error = DOCKET_EINVALID;
			goto fail;
		}
		if (json_array_append_new(arr, json_stringn_nocheck(s, strlen(s))) < 0) {
			error = out_of_memory();
			goto fail;
		}
	}
	return tree_put(e, key, arr);
fail:
	json_decref(arr);
	return error;
}

static int tree_map(emitter *e, const emit_ctx *c, const char *key, kv_item *const *items, size_t n)
{
	json_t *map;
	int error;

	if ((error = map_to_tree(&map, c, key, items, n)) < 0)
		return error;
	return tree_put(e, key, map);
}

static int tree_json_text(emitter *e, const emit_ctx *c, const char *key, const char *text,
			  bool omit_empty_object)
{
	json_t *v;
	int error;

	if ((error = json_text_to_tree(&v, c, key, text, omit_empty_object)) < 0 || !v)
		return error;
	return tree_put(e, key, v);
}

static const emitter_ops tree_ops = {
	tree_open, tree_close, tree_string, tree_integer, tree_strings, tree_map, tree_json_text,
};

/* ---- the text backend ---------------------------------------------------- */

typedef struct text_emitter {
	emitter base;
	docket_buf *out;
	bool first; /* nothing written yet in the innermost open object */
} text_emitter;

/* `,"key":` (no comma first in an object); keys of fields are plain ASCII. */
static int text_key(emitter *e, const char *key)
{
	text_emitter *t = (text_emitter *)e;
	size_t n = strlen(key);
	char *o;
	int error;

	if ((error = docket_buf_reserve(t->out, n + 4)) < 0)
		return error;
	o = t->out->ptr + t->out->len;
	if (!t->first)
		*o++ = ',';
	*o++ = '"';
	memcpy(o, key, n);
	o += n;
	*o++ = '"';
	*o++ = ':';
	*o = '\0';
	t->out->len = (size_t)(o - t->out->ptr);
	t->first = false;
	return 0;
}

static int text_put(emitter *e, const char *s, size_t len)
{
	return docket_buf_put(((text_emitter *)e)->out, s, len);
}

static int text_open(emitter *e, const char *key)
{
	text_emitter *t = (text_emitter *)e;
	int error;

	if ((key && (error = text_key(e, key)) < 0) || (error = text_put(e, "{", 1)) < 0)
		return error;
	t->first = true;
	return 0;
}

static int text_close(emitter *e)
{
	((text_emitter *)e)->first = false;
	return text_put(e, "}", 1);
}

static int text_string(emitter *e, const char *key, const char *s, size_t len)
{
	int error;

	if ((error = text_key(e, key)) < 0)
		return error;
	return docket_json_write_string(((text_emitter *)e)->out, s, len);
}

static int text_integer(emitter *e, const char *key, json_int_t n)
{
	int error;

	if ((error = text_key(e, key)) < 0)
		return error;
	return docket_json_write_int(((text_emitter *)e)->out, n);
}

static int text_strings(emitter *e, const char *key, char *const *items, size_t n)
{
	docket_buf *out = ((text_emitter *)e)->out;
	int error;

	if ((error = text_key(e, key)) < 0 || (error = text_put(e, "[", 1)) < 0)
		return error;
	for (size_t i = 0; i < n; i++) {
		const char *s = items[i] ? items[i] : "";

		if ((i && (error = text_put(e, ",", 1)) < 0) ||
		    (error = docket_json_write_string(out, s, strlen(s))) < 0)
			return error;
	}
	return text_put(e, "]", 1);
}

static bool keys_repeat(kv_item *const *items, size_t n)
{
	if (n > MAP_SCAN_MAX)
		return true; /* not looked at: jansson's hash table does it */
	for (size_t i = 1; i < n; i++)
		for (size_t j = 0; j < i; j++)
			if (strcmp(item_key(items[i]), item_key(items[j])) == 0)
				return true;
	return false;
}

/* A map through jansson: the JSON of map_to_tree, dumped. */
static int text_map_dumped(emitter *e, const emit_ctx *c, const char *key, kv_item *const *items, size_t n)
{
	json_t *map;
	int error;

	if ((error = map_to_tree(&map, c, key, items, n)) < 0)
		return error;
	if ((error = text_key(e, key)) == 0)
		error = docket_json_dump(((text_emitter *)e)->out, map);
	json_decref(map);
	return error;
}

static int text_map(emitter *e, const emit_ctx *c, const char *key, kv_item *const *items, size_t n)
{
	docket_buf *out = ((text_emitter *)e)->out;
	int error;

	if (keys_repeat(items, n))
		return text_map_dumped(e, c, key, items, n);
	if ((error = text_key(e, key)) < 0 || (error = text_put(e, "{", 1)) < 0)
		return error;
	for (size_t i = 0; i < n; i++) {
		const char *k = item_key(items[i]), *s = item_value(items[i]);

		if (i && (error = text_put(e, ",", 1)) < 0)
			return error;
		if ((error = docket_json_write_string(out, k, strlen(k))) < 0)
			return error == DOCKET_EINVALID ? corrupt(c, key, "key not valid UTF-8") : error;
		if ((error = text_put(e, ":", 1)) < 0)
			return error;
		if ((error = docket_json_write_string(out, s, strlen(s))) < 0)
			return error == DOCKET_EINVALID ? corrupt(c, key, "not valid UTF-8") : error;
	}
	return text_put(e, "}", 1);
}

static int text_json_text(emitter *e, const emit_ctx *c, const char *key, const char *text,
			  bool omit_empty_object)
{
	size_t len = strlen(text);
	json_t *v;
	int error;

	if (docket_json_is_dump(text, len)) {
		if (omit_empty_object && len == 2 && text[0] == '{')
			return 0;
		if ((error = text_key(e, key)) < 0)
			return error;
		return text_put(e, text, len);
	}
	if ((error = json_text_to_tree(&v, c, key, text, omit_empty_object)) < 0 || !v)
		return error;
	if ((error = text_key(e, key)) == 0)
		error = docket_json_dump(((text_emitter *)e)->out, v);
	json_decref(v);
	return error;
}

static const emitter_ops text_ops = {
	text_open, text_close, text_string, text_integer, text_strings, text_map, text_json_text,
};

/* ---- the fields, once ---------------------------------------------------- */

/* A string field; empty ones are omitted unless `always`. */
static int put_string(emitter *e, const emit_ctx *c, const char *key, const char *s, bool always)
{
	int error;

	if (!s)
		s = "";
	if (!*s && !always)
		return 0;
	if ((error = e->ops->string(e, key, s, strlen(s))) == DOCKET_EINVALID)
		return corrupt(c, key, "not valid UTF-8");
	return error;
}

static int put_uint(emitter *e, const emit_ctx *c, const char *key, uint64_t n)
{
	if (n > (uint64_t)INT64_MAX)
		return corrupt(c, key, "integer too large for JSON");
	return e->ops->integer(e, key, (json_int_t)n);
}

/* An enum field; *_UNSPECIFIED (0) is omitted. `name` is the codec's table. */
static int put_enum(emitter *e, const emit_ctx *c, const char *key, const char *name, int v)
{
	if (v == 0)
		return 0;
	if (!name)
		return corrupt(c, key, "value outside its enumeration");
	return e->ops->string(e, key, name, strlen(name));
}

static int put_string_array(emitter *e, const emit_ctx *c, const char *key, char *const *items, size_t n)
{
	int error;

	if (n == 0)
		return 0;
	if ((error = e->ops->strings(e, key, items, n)) == DOCKET_EINVALID)
		return corrupt(c, key, "not valid UTF-8");
	return error;
}

static int put_string_map(emitter *e, const emit_ctx *c, const char *key, kv_item *const *items, size_t n)
{
	return n == 0 ? 0 : e->ops->map(e, c, key, items, n);
}

/* JSON text the codec stored (args_json, policy_json). */
static int put_json_text(emitter *e, const emit_ctx *c, const char *key, const char *text,
			 bool omit_empty_object)
{
	if (!text || !*text)
		return 0;
	return e->ops->json_text(e, c, key, text, omit_empty_object);
}

static int put_decision(emitter *e, const emit_ctx *parent, const char *key, const Docket__V1__Decision *d)
{
	emit_ctx c = { parent->type, key };
	int error;

	if (!d)
		return 0;
	if ((error = e->ops->open(e, key)) < 0 ||
	    (error = put_enum(e, &c, "verdict", docket_verdict_name(d->verdict), (int)d->verdict)) < 0 ||
	    (error = put_string(e, &c, "source", d->source, false)) < 0 ||
	    (error = put_string_array(e, &c, "reasons", d->reasons, d->n_reasons)) < 0 ||
	    (error = put_string_array(e, &c, "rules", d->rules, d->n_rules)) < 0 ||
	    (d->policy_revision && (error = put_uint(e, &c, "policy_revision", d->policy_revision)) < 0))
		return error;
	return e->ops->close(e);
}

static int put_risk(emitter *e, const emit_ctx *parent, const char *key, const Docket__V1__Risk *r)
{
	emit_ctx c = { parent->type, key };
	int error;

	if (!r)
		return 0;
	if ((error = e->ops->open(e, key)) < 0 ||
	    (error = put_string(e, &c, "level", r->level, false)) < 0 ||
	    (error = put_string(e, &c, "category", r->category, false)) < 0 ||
	    (error = put_string(e, &c, "summary", r->summary, false)) < 0)
		return error;
	return e->ops->close(e);
}

/* Provenance is all-or-nothing on input, so both members are always written. */
static int put_provenance(emitter *e, const emit_ctx *parent, const char *key, const Docket__V1__Provenance *p)
{
	emit_ctx c = { parent->type, key };
	int error;

	if (!p)
		return 0;
	if ((error = e->ops->open(e, key)) < 0 ||
	    (error = put_string(e, &c, "file", p->file, true)) < 0 ||
	    (error = put_uint(e, &c, "line", p->line)) < 0)
		return error;
	return e->ops->close(e);
}

static int body_session_opened(emitter *e, const emit_ctx *c, const Docket__V1__SessionOpened *b)
{
	int error;

	if ((error = put_string(e, c, "runtime", b->runtime, false)) < 0 ||
	    (error = put_enum(e, c, "platform", docket_platform_name(b->platform), (int)b->platform)) < 0 ||
	    (error = put_string(e, c, "cwd", b->cwd, false)) < 0 ||
	    (error = put_string_array(e, c, "workspace_roots", b->workspace_roots, b->n_workspace_roots)) < 0 ||
	    (error = put_string_map(e, c, "env", b->env, b->n_env)) < 0 ||
	    (error = put_string(e, c, "parent", b->parent, false)) < 0 ||
	    (error = put_string_map(e, c, "labels", b->labels, b->n_labels)) < 0)
		return error;
	return 0;
}

static int body_policy_revised(emitter *e, const emit_ctx *c, const Docket__V1__PolicyRevised *b)
{
	int error;

	if ((b->revision && (error = put_uint(e, c, "revision", b->revision)) < 0) ||
	    (error = put_enum(e, c, "format", docket_policy_format_name(b->format), (int)b->format)) < 0 ||
	    (error = put_json_text(e, c, "policy", b->policy_json, false)) < 0 ||
	    (error = put_string(e, c, "actor", b->actor, false)) < 0 ||
	    (error = put_string(e, c, "reason", b->reason, false)) < 0)
		return error;
	return 0;
}

static int body_tool_intent(emitter *e, const emit_ctx *c, const Docket__V1__ToolIntent *b)
{
	int error;

	if ((error = put_string(e, c, "tool", b->tool, false)) < 0 ||
	    (error = put_json_text(e, c, "args", b->args_json, true)) < 0 ||
	    (error = put_enum(e, c, "recovery", docket_recovery_mode_name(b->recovery), (int)b->recovery)) < 0 ||
	    (error = put_decision(e, c, "decision", b->decision)) < 0)
		return error;
	return 0;
}

static int body_approval_requested(emitter *e, const emit_ctx *c, const Docket__V1__ApprovalRequested *b)
{
	int error;

	if ((error = put_string(e, c, "request", b->request, false)) < 0 ||
	    (error = put_string(e, c, "reviewer", b->reviewer, false)) < 0 ||
	    (error = put_string(e, c, "prompt", b->prompt, false)) < 0 ||
	    (error = put_risk(e, c, "risk", b->risk)) < 0 ||
	    (error = put_string_array(e, c, "scope", b->scope, b->n_scope)) < 0 ||
	    (error = put_decision(e, c, "decision", b->decision)) < 0)
		return error;
	return 0;
}

static int body_approval_settled(emitter *e, const emit_ctx *c, const Docket__V1__ApprovalSettled *b)
{
	int error;

	if ((error = put_string(e, c, "request", b->request, false)) < 0 ||
	    (error = put_enum(e, c, "result", docket_approval_result_name(b->result), (int)b->result)) < 0 ||
	    (error = put_string(e, c, "actor", b->actor, false)) < 0 ||
	    (error = put_string(e, c, "reason", b->reason, false)) < 0 ||
	    (error = put_decision(e, c, "decision", b->decision)) < 0)
		return error;
	return 0;
}

static int body_tool_dispatched(emitter *e, const emit_ctx *c, const Docket__V1__ToolDispatched *b)
{
	int error;

	if ((b->attempt && (error = put_uint(e, c, "attempt", b->attempt)) < 0) ||
	    (error = put_string(e, c, "token", b->token, false)) < 0 ||
	    (b->policy_revision && (error = put_uint(e, c, "policy_revision", b->policy_revision)) < 0) ||
	    (error = put_enum(e, c, "verdict", docket_verdict_name(b->verdict), (int)b->verdict)) < 0)
		return error;
	return 0;
}

static int body_tool_completed(emitter *e, const emit_ctx *c, const Docket__V1__ToolCompleted *b)
{
	int error;

	if ((error = put_enum(e, c, "status", docket_outcome_status_name(b->status), (int)b->status)) < 0 ||
	    (b->exit_code_set && (error = e->ops->integer(e, "exit_code", (json_int_t)b->exit_code)) < 0) ||
	    (error = put_string(e, c, "output", b->output, false)) < 0 ||
	    (b->duration_ms_set && (error = put_uint(e, c, "duration_ms", b->duration_ms)) < 0) ||
	    (error = put_string(e, c, "error", b->error, false)) < 0)
		return error;
	return 0;
}

static int body_recovery_action(emitter *e, const emit_ctx *c, const Docket__V1__RecoveryAction *b)
{
	int error;

	if ((error = put_enum(e, c, "action", docket_recovery_action_name(b->action), (int)b->action)) < 0 ||
	    (error = put_string(e, c, "detail", b->detail, false)) < 0 ||
	    (error = put_decision(e, c, "decision", b->decision)) < 0)
		return error;
	return 0;
}

static int body_runtime_started(emitter *e, const emit_ctx *c, const Docket__V1__RuntimeStarted *b)
{
	int error;

	if ((error = put_string(e, c, "runtime", b->runtime, false)) < 0 ||
	    (b->uid_set && (error = put_uint(e, c, "uid", b->uid)) < 0))
		return error;
	return 0;
}

static int body_ledger_incident(emitter *e, const emit_ctx *c, const Docket__V1__LedgerIncident *b)
{
	int error;

	if ((error = put_string(e, c, "kind", b->kind, false)) < 0 ||
	    (error = put_string(e, c, "file", b->file, false)) < 0 ||
	    (error = put_string(e, c, "entry", b->entry, false)) < 0)
		return error;
	return put_string(e, c, "error", b->error, false);
}

static int emit_body(emitter *e, const emit_ctx *c, const docket_event *ev)
{
	switch (ev->body_case) {
	case DOCKET__V1__EVENT__BODY_RUNTIME_STARTED:
		return body_runtime_started(e, c, ev->runtime_started);
	case DOCKET__V1__EVENT__BODY_SESSION_OPENED: return body_session_opened(e, c, ev->session_opened);
	case DOCKET__V1__EVENT__BODY_POLICY_REVISED: return body_policy_revised(e, c, ev->policy_revised);
	case DOCKET__V1__EVENT__BODY_TOOL_INTENT: return body_tool_intent(e, c, ev->tool_intent);
	case DOCKET__V1__EVENT__BODY_APPROVAL_REQUESTED:
		return body_approval_requested(e, c, ev->approval_requested);
	case DOCKET__V1__EVENT__BODY_APPROVAL_SETTLED: return body_approval_settled(e, c, ev->approval_settled);
	case DOCKET__V1__EVENT__BODY_TOOL_DISPATCHED: return body_tool_dispatched(e, c, ev->tool_dispatched);
	case DOCKET__V1__EVENT__BODY_TOOL_COMPLETED: return body_tool_completed(e, c, ev->tool_completed);
	case DOCKET__V1__EVENT__BODY_SESSION_CLOSED:
		return put_string(e, c, "reason", ev->session_closed->reason, false);
	case DOCKET__V1__EVENT__BODY_RECOVERY_ACTION: return body_recovery_action(e, c, ev->recovery_action);
	case DOCKET__V1__EVENT__BODY_LEDGER_INCIDENT: return body_ledger_incident(e, c, ev->ledger_incident);
	default:
		break;
	}
	return docket_error_set(DOCKET_ECORRUPT, "event has no body");
}

/*
 * The event in the order of DESIGN §4; with a frame (a stored event), "seq"
 * first, "epoch" after "time" even when it is 0, "hash" last: the reader's
 * shape (read.c), which wrote them around the event's own keys.
 */
static int emit_event(emitter *e, const docket_event *ev, const docket_event_frame *f)
{
	emit_ctx c = { NULL, NULL };
	const char *type;
	int error;

	if (!ev)
		return docket_error_set(DOCKET_EINVALID, "no event");
	/* The oneof pointers share storage: any member tells whether the body is there. */
	type = docket_event_type(ev);
	if (strcmp(type, "unknown") == 0 || !ev->runtime_started)
		return docket_error_set(DOCKET_ECORRUPT, "event has no body");
	c.type = type;
	if ((error = e->ops->open(e, NULL)) < 0 ||
	    (f && (error = e->ops->integer(e, "seq", (json_int_t)f->seq)) < 0) ||
	    (error = e->ops->string(e, "type", type, strlen(type))) < 0 ||
	    (error = put_string(e, &c, "time", ev->time, false)) < 0 ||
	    ((ev->epoch || (f && ev->time && *ev->time)) && (error = put_uint(e, &c, "epoch", ev->epoch)) < 0) ||
	    (error = put_string(e, &c, "session", ev->session, false)) < 0 ||
	    (error = put_string(e, &c, "invocation", ev->invocation, false)) < 0 ||
	    (error = put_string(e, &c, "turn", ev->turn, false)) < 0 ||
	    (error = emit_body(e, &c, ev)) < 0 ||
	    (error = put_provenance(e, &c, "provenance", ev->provenance)) < 0 ||
	    (f && (error = put_string(e, &c, "hash", f->hash, true)) < 0))
		return error;
	return e->ops->close(e);
}

int docket_event_to_json_framed(json_t **out, const docket_event *ev, const docket_event_frame *frame)
{
	tree_emitter t = { { &tree_ops }, NULL, { NULL }, 0 };
	int error;

	*out = NULL;
	if ((error = emit_event(&t.base, ev, frame)) < 0) {
		json_decref(t.root);
		return error;
	}
	*out = t.root;
	return 0;
}

int docket_event_to_json(json_t **out, const docket_event *ev)
{
	return docket_event_to_json_framed(out, ev, NULL);
}

int docket_event_write_json(docket_buf *out, const docket_event *ev, const docket_event_frame *frame)
{
	text_emitter t = { { &text_ops }, out, true };
	size_t start = out->len;
	int error;

	if ((error = emit_event(&t.base, ev, frame)) < 0 && out->ptr) {
		out->len = start;
		out->ptr[start] = '\0';
	}
	return error;
}
