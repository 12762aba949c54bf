/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sessions.c: what replay keeps per open session: the recorded context
 * (platform, cwd, workspace roots, env), the grants recorded so far, the
 * Codex settings of a recorded Codex policy, and the evaluation contexts
 * built from them. A session is dropped at its session.closed, so memory is
 * bounded by the sessions open at once, not by the events.
 *
 * Invariant: two contexts with the same `ctx_id` are equal (the same
 * recorded context, grants and Codex settings), so (ctx_id, policy, call)
 * keys an evaluation (memo.c). A context gets its id by content: sessions of
 * the same workspace, platform and runtime share one, and so share the
 * memo's entries (an agent fleet runs `git status` in every session). The
 * ids are interned in a direct-mapped table of CTX_SLOTS canonical texts of
 * at most CTX_MAX_KEY bytes each; a context that does not fit, or whose slot
 * was taken by another, gets a fresh id (never one given before), which
 * costs memo hits and nothing else. The canonical text is not JSON: each
 * value is a type byte, then its length or size, then its bytes or members
 * (context_key), so equal texts are equal contexts without a JSON dump.
 */
#include <string.h>

#include "replay_internal.h"
#include "policy/policy.h"
#include "util/alloc.h"
#include "util/error.h"
#include "util/json.h"

#define MIN_BUCKETS 64
#define CTX_SLOTS 1024u
#define CTX_MAX_KEY 16384u
#define REV_SLOTS 64u
#define REV_MAX_TEXT 65536u

/* What replay takes from the policy texts seen last (sessions of one fleet
 * record the same few): a revision with a known format and text is not
 * parsed again. */
typedef struct rev_slot {
	uint64_t hash;
	int format;
	char *text;
	size_t len;
	json_t *codex;       /* a Codex revision: its settings */
	int sandbox;         /* a Claude Code one: sandbox.enabled (0/1), -1 when it does not parse */
} rev_slot;

struct rev_cache {
	rev_slot slots[REV_SLOTS];
};

typedef struct ctx_slot {
	uint64_t hash;
	char *key;
	size_t len;
	uint32_t id;
} ctx_slot;

struct ctx_intern {
	ctx_slot slots[CTX_SLOTS];
};

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	while (*s)
		h = (h ^ (uint8_t)*s++) * 1099511628211ull;
	return h;
}

static void session_free(rsession *s)
{
	docket_free(s->id);
	json_decref(s->context);
	json_decref(s->codex);
	docket_policy_context_free(s->ctx[0]);
	docket_policy_context_free(s->ctx[1]);
	docket_free(s);
}

void rsessions_dispose(rsessions *t)
{
	for (size_t i = 0; i < t->nbuckets; i++) {
		rsession *s = t->buckets[i], *next;

		for (; s; s = next) {
			next = s->next;
			session_free(s);
		}
	}
	docket_free(t->buckets);
	for (size_t i = 0; t->intern && i < CTX_SLOTS; i++)
		docket_free(t->intern->slots[i].key);
	docket_free(t->intern);
	for (size_t i = 0; t->revs && i < REV_SLOTS; i++) {
		docket_free(t->revs->slots[i].text);
		json_decref(t->revs->slots[i].codex);
	}
	docket_free(t->revs);
	memset(t, 0, sizeof(*t));
}

static rsession **slot_of(rsessions *t, const char *id)
{
	rsession **p = &t->buckets[hash_str(id) & (t->nbuckets - 1)];

	while (*p && strcmp((*p)->id, id) != 0)
		p = &(*p)->next;
	return p;
}

rsession *rsessions_get(rsessions *t, const char *id)
{
	return t->nbuckets ? *slot_of(t, id) : NULL;
}

static int grow(rsessions *t)
{
	size_t n = t->nbuckets ? t->nbuckets * 2 : MIN_BUCKETS;
	rsession **b = docket_calloc(n, sizeof(*b));

	if (!b)
		return docket_error_set_oom();
	for (size_t i = 0; i < t->nbuckets; i++) {
		rsession *s = t->buckets[i], *next;

		for (; s; s = next) {
			size_t k = hash_str(s->id) & (n - 1);

			next = s->next;
			s->next = b[k];
			b[k] = s;
		}
	}
	docket_free(t->buckets);
	t->buckets = b;
	t->nbuckets = n;
	return 0;
}

/* --assume-sandbox in the session's context (NULL: none assumed): it
 * overrides the policy's sandbox and a Codex session's recorded one. */
static int assume_in(json_t *c, const char *assume)
{
	return !assume || json_object_set_new(c, "sandbox_policy", json_string(assume)) == 0 ? 0
		: docket_error_set_oom();
}

/* The recorded context of a session.opened event, with no grants yet. */
static json_t *context_of(const docket_event *ev)
{
	const Docket__V1__SessionOpened *o = ev->session_opened;
	const char *platform = docket_platform_name(o->platform);
	json_t *c = json_object(), *roots = json_array(), *env = json_object(), *grants = json_array();
	int bad = !c || !roots || !env || !grants;

	for (size_t i = 0; !bad && i < o->n_workspace_roots; i++)
		bad = json_array_append_new(roots, json_string(o->workspace_roots[i])) < 0;
	for (size_t i = 0; !bad && i < o->n_env; i++)
		bad = json_object_set_new(env, o->env[i]->key, json_string(o->env[i]->value)) < 0;
	if (!bad && platform && o->platform)
		bad = json_object_set_new(c, "platform", json_string(platform)) < 0;
	if (!bad && *o->cwd)
		bad = json_object_set_new(c, "cwd", json_string(o->cwd)) < 0;
	/* "claude-code/2.1.197": the policy engine applies that version's rules */
	if (!bad && o->runtime && *o->runtime)
		bad = json_object_set_new(c, "runtime", json_string(o->runtime)) < 0;
	if (!bad) {
		/* each set_new takes its value, even when it fails */
		bad |= json_object_set_new(c, "workspace_roots", roots) < 0;
		bad |= json_object_set_new(c, "env", env) < 0;
		bad |= json_object_set_new(c, "grants", grants) < 0;
	} else {
		json_decref(roots);
		json_decref(env);
		json_decref(grants);
	}
	if (bad) {
		json_decref(c);
		return NULL;
	}
	return c;
}

static int key_size(docket_buf *out, char type, size_t n)
{
	uint64_t v = n;
	int error;

	if ((error = docket_buf_putc(out, type)) < 0)
		return error;
	return docket_buf_put(out, &v, sizeof(v));
}

/* A value's part of the canonical text: type, size, bytes or members. */
static int key_put(docket_buf *out, const json_t *v)
{
	const char *k;
	const json_t *m;
	size_t i;
	int error = 0;

	switch (json_typeof(v)) {
	case JSON_OBJECT:
		error = key_size(out, 'o', json_object_size(v));
		json_object_foreach((json_t *)v, k, m) {
			if (error == 0 && (error = key_size(out, 'k', strlen(k))) == 0)
				error = docket_buf_put(out, k, strlen(k));
			if (error == 0)
				error = key_put(out, m);
		}
		return error;
	case JSON_ARRAY:
		error = key_size(out, 'a', json_array_size(v));
		json_array_foreach(v, i, m)
			if (error == 0)
				error = key_put(out, m);
		return error;
	case JSON_STRING:
		if ((error = key_size(out, 's', json_string_length(v))) < 0)
			return error;
		return docket_buf_put(out, json_string_value(v), json_string_length(v));
	case JSON_INTEGER:
		return key_size(out, 'i', (size_t)json_integer_value(v));
	case JSON_REAL: {
		double d = json_real_value(v);

		return (error = docket_buf_putc(out, 'r')) < 0 ? error : docket_buf_put(out, &d, sizeof(d));
	}
	case JSON_TRUE: return docket_buf_putc(out, 't');
	case JSON_FALSE: return docket_buf_putc(out, 'f');
	default: return docket_buf_putc(out, 'n');
	}
}

/* The canonical text of a session's context: the context, the Codex settings (or null). */
static int context_key(docket_buf *out, const rsession *s)
{
	int error;

	docket_buf_clear(out);
	if ((error = key_put(out, s->context)) < 0)
		return error;
	return s->codex ? key_put(out, s->codex) : docket_buf_putc(out, 'n');
}

/* The id of the session's context: the interned one when it is known. */
static uint32_t context_id(rsessions *t, const rsession *s)
{
	docket_buf key = DOCKET_BUF_INIT;
	uint32_t id = ++t->next_id;
	ctx_slot *e;
	uint64_t h;

	if (!t->intern && !(t->intern = docket_calloc(1, sizeof(*t->intern))))
		return id;
	if (context_key(&key, s) < 0 || key.len > CTX_MAX_KEY)
		goto cleanup;
	h = memo_hash(key.ptr, key.len);
	e = &t->intern->slots[h & (CTX_SLOTS - 1)];
	if (e->key && e->hash == h && e->len == key.len && memcmp(e->key, key.ptr, key.len) == 0) {
		id = e->id;
		goto cleanup;
	}
	docket_free(e->key);
	e->key = key.ptr;   /* the slot owns the text now */
	e->len = key.len;
	e->hash = h;
	e->id = id;
	return id;
cleanup:
	docket_buf_dispose(&key);
	return id;
}

/* The context changed: drop the built contexts, take the id of the new one. */
static void touch(rsessions *t, rsession *s)
{
	docket_policy_context_free(s->ctx[0]);
	docket_policy_context_free(s->ctx[1]);
	s->ctx[0] = s->ctx[1] = NULL;
	s->ctx_id = context_id(t, s);
}

int rsessions_open(rsession **out, rsessions *t, const char *id, const docket_event *ev)
{
	rsession **p, *s;
	json_t *c = ev ? context_of(ev) : json_pack("{s:[]}", "grants");
	int error;

	*out = NULL;
	if (!c)
		return docket_error_set_oom();
	if (t->n >= t->nbuckets && (error = grow(t)) < 0) {
		json_decref(c);
		return error;
	}
	if (assume_in(c, t->assume) < 0) {
		json_decref(c);
		return DOCKET_ENOMEM;
	}
	p = slot_of(t, id);
	if (!(s = *p)) {
		if (!(s = docket_calloc(1, sizeof(*s))) || !(s->id = docket_malloc(strlen(id) + 1))) {
			docket_free(s);
			json_decref(c);
			return docket_error_set_oom();
		}
		memcpy(s->id, id, strlen(id) + 1);
		*p = s;
		t->n++;
	}
	json_decref(s->context);
	s->context = c;
	s->assume = t->assume;
	s->imported |= ev && ev->provenance;
	touch(t, s);
	*out = s;
	return 0;
}

/* The sandbox mode of Codex settings (`sandbox_policy`), or NULL. */
static const char *codex_sandbox(const json_t *codex)
{
	const json_t *v = codex ? json_object_get(codex, "sandbox_policy") : NULL, *writable;
	int sandbox = SB_UNSET, network = -1;
	bool ex_tmpdir, ex_slash_tmp;

	if (!v || pol_parse_sandbox(v, &sandbox, &network, &ex_tmpdir, &ex_slash_tmp, &writable) < 0) {
		docket_error_clear();
		return NULL;
	}
	return replay_sandbox_name(sandbox);
}

const char *replay_sandbox_name(int sandbox)
{
	switch (sandbox) {
	case SB_READ_ONLY: return "read_only";
	case SB_WORKSPACE_WRITE: return "workspace_write";
	case SB_FULL_ACCESS: return "full_access";
	case SB_EXTERNAL: return "external";
	default: return NULL;
	}
}

const char *rsession_recorded_sandbox(const rsession *s)
{
	const char *runtime = json_string_value(json_object_get(s->context, "runtime"));
	const char *codex = codex_sandbox(s->codex);

	if (codex)
		return codex;
	/* Claude Code runs tools without a sandbox unless its settings enable
	 * one (recorded settings with sandbox.enabled: its Bash tool writes in
	 * the working directory only) */
	if (runtime && (strncmp(runtime, "claude-code/", 12) == 0 || strcmp(runtime, "claude-code") == 0))
		return s->claude_sandbox ? "workspace_write" : "none";
	return NULL;
}

const char *rsession_assumed_sandbox(const rsession *s, int format, int sandbox, const char **from)
{
	const char *recorded = format == DOCKET_POLICY_CODEX ? codex_sandbox(s->codex) : NULL;

	if (recorded) {
		*from = "recorded";
		return recorded;
	}
	*from = format == DOCKET_POLICY_CODEX ? "default" : "policy";
	return replay_sandbox_name(sandbox) ? replay_sandbox_name(sandbox) : "full_access";
}

void rsessions_close(rsessions *t, const char *id)
{
	rsession **p, *s;

	if (!t->nbuckets || !(s = *(p = slot_of(t, id))))
		return;
	*p = s->next;
	t->n--;
	session_free(s);
}

int rsession_grant(rsessions *t, rsession *s, const docket_event *intent)
{
	json_t *obj = NULL, *args = NULL;
	const char *text = intent->tool_intent->args_json;
	int error;

	if ((error = docket_json_parse(&args, text, strlen(text))) < 0)
		return error;
	if (!(obj = json_pack("{s:s?, s:o}", "tool", intent->tool_intent->tool, "args", args)))
		return docket_error_set_oom();
	error = docket_policy_grant_from_intent(json_object_get(s->context, "grants"), obj);
	json_decref(obj);
	if (error == 0)
		touch(t, s);
	return error;
}

/* The cache slot of a policy text of `format`; *hit when it holds that text. */
static rev_slot *rev_slot_of(rsessions *t, int format, const char *text, size_t len, int *hit)
{
	uint64_t h = memo_hash(text, len) ^ (uint64_t)format;
	rev_slot *e;

	*hit = 0;
	if (!t->revs && !(t->revs = docket_calloc(1, sizeof(*t->revs))))
		return NULL;
	e = &t->revs->slots[h & (REV_SLOTS - 1)];
	*hit = e->text && e->hash == h && e->format == format && e->len == len && memcmp(e->text, text, len) == 0;
	if (!*hit && len <= REV_MAX_TEXT) {
		docket_free(e->text);
		json_decref(e->codex);
		memset(e, 0, sizeof(*e));
		e->hash = h;
		e->format = format;
	}
	return *hit || len <= REV_MAX_TEXT ? e : NULL;
}

/* Remember what the slot's text gave (a failure only costs a parse). */
static void rev_slot_fill(rev_slot *e, const char *text, size_t len, json_t *codex, int sandbox)
{
	if (!e || !(e->text = docket_malloc(len ? len : 1)))
		return;
	memcpy(e->text, text, len);
	e->len = len;
	e->codex = json_incref(codex);
	e->sandbox = sandbox;
}

/* Claude Code settings with "sandbox": {"enabled": true}: its Bash tool
 * ran in a sandbox that lets it write in the working directory. The
 * settings are the document (format claude), or its claude layer when a
 * hook recorded them under docket's enforced policy (an all_of, format
 * docket: hook.c). A text that does not parse says nothing (-1: it was
 * checked when recorded). */
static int claude_sandbox(const char *text, size_t len, int layered)
{
	json_t *doc = NULL, *settings, *layer, *sb;
	size_t i;
	int on;

	if (docket_json_parse(&doc, text, len) < 0) {
		docket_error_clear();
		return -1;
	}
	settings = layered ? NULL : doc;
	json_array_foreach(layered ? json_object_get(doc, "all_of") : NULL, i, layer) {
		const char *f = json_string_value(json_object_get(layer, "format"));

		if (f && strcmp(f, "claude") == 0)
			settings = json_object_get(layer, "policy");
	}
	sb = json_object_get(settings, "sandbox");
	on = json_is_object(sb) && json_is_true(json_object_get(sb, "enabled"));
	json_decref(doc);
	return on;
}

/* The Codex settings of a Codex policy text (approval and sandbox), in *out. */
static int codex_settings(json_t **out, const char *text, size_t len)
{
	json_t *doc = NULL, *codex;
	int error;

	*out = NULL;
	if ((error = docket_json_parse(&doc, text, len)) < 0)
		return error;
	codex = json_object();
	for (size_t i = 0; codex && error == 0 && i < 2; i++) {
		const char *key = i ? "sandbox_policy" : "approval_policy";
		json_t *v = json_object_get(doc, key);

		if (v && !json_is_null(v) && json_object_set(codex, key, v) < 0)
			error = docket_error_set_oom();
	}
	json_decref(doc);
	if (!codex)
		return docket_error_set_oom();
	if (error < 0)
		json_decref(codex);
	else
		*out = codex;
	return error;
}

/* A revision the hooks recorded live (provenance "hook:<client>/<event>"). */
static int from_hook(const docket_event *ev)
{
	return ev->provenance && ev->provenance->file && strncmp(ev->provenance->file, "hook:", 5) == 0;
}

/* What a revision's text says, from the cache or parsed (and cached):
 * *codex the Codex settings (a Codex policy), *sandbox the Claude Code
 * sandbox (0/1; -1 when not Claude Code settings or when they do not parse). */
static int revision_of(rsessions *t, const Docket__V1__PolicyRevised *p, json_t **codex, int *sandbox)
{
	size_t len = strlen(p->policy_json);
	int codex_fmt = p->format == DOCKET__V1__POLICY_FORMAT__POLICY_FORMAT_CODEX;
	int layered = p->format == DOCKET__V1__POLICY_FORMAT__POLICY_FORMAT_DOCKET && p->policy_json[0] == '{';
	int claude = p->format == DOCKET__V1__POLICY_FORMAT__POLICY_FORMAT_CLAUDE || layered;
	rev_slot *slot;
	int error = 0, hit = 0;

	*codex = NULL;
	*sandbox = -1;
	if (!codex_fmt && !claude)
		return 0;
	if ((slot = rev_slot_of(t, (int)p->format, p->policy_json, len, &hit)) && hit) {
		*codex = json_incref(slot->codex);
		*sandbox = slot->sandbox;
		return 0;
	}
	t->revs_parsed++;
	if (claude)
		*sandbox = claude_sandbox(p->policy_json, len, layered);
	else
		error = codex_settings(codex, p->policy_json, len);
	if (error == 0)
		rev_slot_fill(slot, p->policy_json, len, *codex, *sandbox);
	return error;
}

int rsession_policy(rsessions *t, rsession *s, const docket_event *ev)
{
	json_t *codex = NULL;
	int error, sandbox;

	/* a revision imported from a transcript is not the settings in force;
	 * one a hook recorded is */
	s->live_settings |= !ev->provenance || from_hook(ev);
	s->imported |= ev->provenance && !from_hook(ev);
	if ((error = revision_of(t, ev->policy_revised, &codex, &sandbox)) < 0)
		return error;
	if (sandbox >= 0)
		s->claude_sandbox = sandbox;
	if (codex ? s->codex && json_equal(codex, s->codex) : !s->codex) {
		/* the same settings (a Claude Code policy has none): the context,
		 * its id and the contexts built from it stay */
		json_decref(codex);
		return 0;
	}
	json_decref(s->codex);
	s->codex = codex;
	touch(t, s);
	return 0;
}

int rsession_context(const docket_policy_context **out, rsession *s, int codex)
{
	json_t *c = s->context;
	int error = 0;

	codex = codex && s->codex;
	if (!s->ctx[codex]) {
		if (codex && !(c = json_deep_copy(s->context)))
			return docket_error_set_oom();
		if (codex && json_object_update(c, s->codex) < 0)
			error = docket_error_set_oom();
		if (codex && error == 0)   /* the assumption wins over the recorded sandbox */
			error = assume_in(c, s->assume);
		if (error == 0)
			error = docket_policy_context_from_json(&s->ctx[codex], c);
		if (codex)
			json_decref(c);
	}
	*out = s->ctx[codex];
	return error;
}
