/* SPDX-License-Identifier: Apache-2.0 */
/*
 * authority.c: docket deciding (authority mode, DESIGN §3).
 *
 * When a session has a docket-evaluable policy (its latest policy.revised is
 * docket YAML/JSON, Claude Code settings, Codex settings with rules, or an
 * `all_of` composition of those) and an intent carries no decision, docket
 * evaluates the intent under that policy with the session's recorded
 * context (platform, cwd, roots, env) and the grants recorded so far
 * (approved_for_session answers). The result is recorded in the intent as
 * a decision with source "docket", reason codes, the deciding rule first and
 * the policy revision (ledger/decision.c, the builder the hooks use too).
 *
 * Compositions: {"all_of":[{"format":F,"policy":P}, ...]} evaluates every
 * layer and keeps the strictest verdict (allowed < approval_required <
 * denied < unsupported). `docket serve` records a client's narrowing policy
 * as a layer on top of the operator's, so a client can never widen.
 *
 * Evaluation is pure: nothing is read from the live filesystem or clock.
 */
#include "authority.h"

#include <string.h>

#include "docket/policy.h"
#include "ledger/decision.h"
#include "ledger/ledger_sys.h"
#include "util/alloc.h"
#include "util/error.h"
#include "util/json.h"

#define CACHE_SLOTS 512
#define PROBE 8
#define MAX_LAYERS AUTHORITY_MAX_LAYERS

typedef authority_layer layer;

typedef struct session_slot {
	char session[STATE_ID_MAX + 1];
	uint8_t policy_hash[LEDGER_HASH_LEN];
	uint32_t revision;
	size_t nlayers;
	layer layers[MAX_LAYERS];
	json_t *context;          /* platform, cwd, workspace_roots, env */
	json_t *grants;           /* array of {command:[...]} / {path:...} */
	uint64_t grants_seq;      /* session events read for grants up to here */
	uint64_t grants_count;    /* the session's approved_for_session count then */
	uint64_t used;
} session_slot;

struct authority {
	docket_ledger *ledger;
	session_slot slots[CACHE_SLOTS];
	uint64_t clock;
};

static void slot_clear(session_slot *s)
{
	for (size_t i = 0; i < s->nlayers; i++) {
		docket_policy_free(s->layers[i].policy);
		json_decref(s->layers[i].codex_settings);
	}
	json_decref(s->context);
	json_decref(s->grants);
	memset(s, 0, sizeof(*s));
}

int authority_new(authority **out, docket_ledger *l)
{
	*out = docket_calloc(1, sizeof(**out));
	if (!*out)
		return docket_error_set_oom();
	(*out)->ledger = l;
	return 0;
}

void authority_free(authority *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < CACHE_SLOTS; i++)
		slot_clear(&a->slots[i]);
	docket_free(a);
}

/* ---- policies: one format, or an all_of composition (policy/policy_doc.c) ---- */

int authority_load_layers(authority_layers *out, const char *format, const char *policy_json)
{
	return policy_doc_load(out, format, policy_json);
}

void authority_layers_dispose(authority_layers *ls)
{
	policy_doc_dispose(ls);
}

/* ---- session context and grants ---- */

static int load_context(session_slot *s, docket_ledger *l, uint64_t opened_seq)
{
	static const char *const keys[] = { "platform", "cwd", "workspace_roots", "env" };
	json_t *ev = NULL;
	int error;

	if ((error = ledger_event_json(l, opened_seq, &ev)) < 0)
		return error;
	s->context = json_object();
	for (size_t i = 0; s->context && i < sizeof(keys) / sizeof(keys[0]); i++) {
		json_t *v = json_object_get(ev, keys[i]);

		if (v && json_object_set(s->context, keys[i], v) < 0) {
			json_decref(s->context);
			s->context = NULL;
		}
	}
	json_decref(ev);
	return s->context ? 0 : docket_error_set_oom();
}

typedef struct grant_scan {
	docket_ledger *ledger;
	json_t *grants;
	const char *session;
	int error;
} grant_scan;

static int grant_event(void *ctx, uint64_t seq, json_t *ev)
{
	grant_scan *g = ctx;
	const char *type = json_string_value(json_object_get(ev, "type"));
	const char *result = json_string_value(json_object_get(ev, "result"));
	const char *inv = json_string_value(json_object_get(ev, "invocation"));
	json_t *intent = NULL;
	inv_state st;
	int error;

	(void)seq;
	if (!type || strcmp(type, "approval.settled") != 0 || !result ||
	    strcmp(result, "approved_for_session") != 0 || !inv)
		return 0;
	if ((error = ledger_invocation_get(g->ledger, g->session, inv, &st)) < 0 ||
	    (error = ledger_event_json(g->ledger, st.intent_seq, &intent)) < 0)
		return error;
	error = docket_policy_grant_from_intent(g->grants, intent);
	json_decref(intent);
	return error;
}

static int refresh_grants(session_slot *s, docket_ledger *l, uint64_t grants)
{
	docket_read_options ro = DOCKET_READ_OPTIONS_INIT;
	docket_ledger_info info;
	grant_scan g = { l, NULL, s->session, 0 };
	int error;

	if (!s->grants && !(s->grants = json_array()))
		return docket_error_set_oom();
	if (grants == s->grants_count)
		return 0; /* no approved_for_session since the last look */
	if ((error = docket_ledger_info_get(l, &info)) < 0)
		return error;
	if (info.events <= s->grants_seq)
		return 0;
	g.grants = s->grants;
	ro.session = s->session;
	ro.since = s->grants_seq + 1;
	if ((error = docket_ledger_read_json(l, &ro, grant_event, &g)) < 0)
		return error;
	s->grants_seq = info.events;
	s->grants_count = grants;
	return 0;
}

/* ---- the cache ---- */

/* Load the slot for `session` under its current policy (none: 0 layers). */
static int slot_load(session_slot *s, authority *a, const char *session, const sess_state *ss)
{
	char *policy = NULL;
	authority_layers ls;
	int error;

	slot_clear(s);
	if (ss->policy_revision) {
		sess_state again;

		if ((error = ledger_session_get(a->ledger, session, &again, &policy)) < 0)
			return error;
		error = authority_load_layers(&ls, docket_policy_format_name(again.policy_format), policy);
		docket_free(policy);
		if (error < 0)
			return error;
		memcpy(s->layers, ls.layers, sizeof(ls.layers[0]) * ls.n);
		s->nlayers = ls.n;
	}
	memcpy(s->session, session, strlen(session) + 1);
	memcpy(s->policy_hash, ss->policy_hash, LEDGER_HASH_LEN);
	s->revision = ss->policy_revision;
	if ((error = load_context(s, a->ledger, ss->opened_seq)) < 0)
		slot_clear(s);
	return error;
}

static size_t slot_hash(const char *session)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */

	for (; *session; session++)
		h = (h ^ (unsigned char)*session) * 1099511628211ull;
	return (size_t)h;
}

/*
 * The slot of `session`, loaded and current. A session without a policy
 * (record mode) gets no slot (*out NULL) unless `always`: nothing is
 * decided there, so its context and grants are not even read.
 */
static int slot_get(session_slot **out, authority *a, const char *session, int always)
{
	session_slot *s = NULL, *victim = &a->slots[0];
	sess_state ss;
	int error;

	*out = NULL;
	if (strlen(session) > STATE_ID_MAX)
		return docket_error_set(DOCKET_EINVALID, "session id too long");
	if ((error = ledger_session_get(a->ledger, session, &ss, NULL)) < 0)
		return error;
	if (!ss.policy_revision && !always)
		return 0;
	/* open addressing: a session lives in one of PROBE slots from its hash */
	size_t h = slot_hash(session);

	victim = &a->slots[h % CACHE_SLOTS];
	for (size_t i = 0; i < PROBE; i++) {
		session_slot *cand = &a->slots[(h + i) % CACHE_SLOTS];

		if (strcmp(cand->session, session) == 0) {
			s = cand;
			break;
		}
		if (cand->used < victim->used)
			victim = cand;
	}
	if (!s || memcmp(s->policy_hash, ss.policy_hash, LEDGER_HASH_LEN) != 0 ||
	    s->revision != ss.policy_revision) {
		s = s ? s : victim;
		if ((error = slot_load(s, a, session, &ss)) < 0)
			return error;
	}
	s->used = ++a->clock;
	if ((error = refresh_grants(s, a->ledger, ss.grants)) < 0)
		return error;
	*out = s;
	return 0;
}

/* ---- deciding ---- */

static int eval_layer(docket_policy_result *res, const layer *ly, const json_t *intent,
		      const json_t *context)
{
	docket_policy_call *call = NULL;
	docket_policy_context *ctx = NULL;
	json_t *c = json_deep_copy(context);
	int error;

	if (!c)
		return docket_error_set_oom();
	if (ly->codex_settings)
		json_object_update(c, ly->codex_settings);
	if ((error = docket_policy_call_from_json(&call, intent)) == 0 &&
	    (error = docket_policy_context_from_json(&ctx, c)) == 0)
		error = docket_policy_eval_enforced(res, ly->policy, call, ctx);
	docket_policy_call_free(call);
	docket_policy_context_free(ctx);
	json_decref(c);
	return error;
}

/* The strictest decision of `layers` for `intent` in the slot's context. */
static int decide_layers(session_slot *s, const authority_layer *layers, size_t n, uint32_t revision,
			 const json_t *intent, json_t **decision)
{
	docket_policy_result *best = NULL, *res = NULL;
	json_t *context = NULL;
	int error = 0;

	*decision = NULL;
	if (n == 0)
		return 0;
	if (!(context = json_deep_copy(s->context)) ||
	    json_object_set(context, "grants", s->grants) < 0) {
		json_decref(context);
		return docket_error_set_oom();
	}
	for (size_t i = 0; i < n && error == 0; i++) {
		if ((error = docket_policy_result_new(&res)) < 0 ||
		    (error = eval_layer(res, &layers[i], intent, context)) < 0)
			break;
		/* strictest layer wins; on a tie the first keeps its reasons */
		if (!best || docket_policy_result_verdict(res) > docket_policy_result_verdict(best)) {
			docket_policy_result_free(best);
			best = res;
		} else {
			docket_policy_result_free(res);
		}
		res = NULL;
	}
	if (error == 0 && best)
		error = decision_build(decision, best, revision);
	docket_policy_result_free(res);
	docket_policy_result_free(best);
	json_decref(context);
	return error;
}

int authority_decide(authority *a, const char *session, const json_t *intent, json_t **decision)
{
	session_slot *s;
	int error;

	*decision = NULL;
	if ((error = slot_get(&s, a, session, 0)) < 0 || !s)
		return error;
	return decide_layers(s, s->layers, s->nlayers, s->revision, intent, decision);
}

int authority_decide_under(authority *a, const char *session, const authority_layers *ls,
			   uint32_t revision, const json_t *intent, json_t **decision)
{
	session_slot *s;
	int error;

	*decision = NULL;
	if ((error = slot_get(&s, a, session, 1)) < 0)
		return error;
	return decide_layers(s, ls->layers, ls->n, revision, intent, decision);
}

int authority_is_active(authority *a, const char *session)
{
	session_slot *s;
	int error = slot_get(&s, a, session, 0);

	return error < 0 ? error : s && s->nlayers > 0;
}

static int verdict_rank(const char *v)
{
	static const char *const order[] = { "allowed", "approval_required", "denied", "unsupported" };

	for (int i = 0; v && i < 4; i++)
		if (strcmp(v, order[i]) == 0)
			return i;
	return -1;
}

const char *authority_stricter(const char *a, const char *b)
{
	return verdict_rank(a) >= verdict_rank(b) ? a : b;
}
