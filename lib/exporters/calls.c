/* SPDX-License-Identifier: Apache-2.0 */
/*
 * calls.c: the compact fold of a ledger (calls.h) for the risk view and the
 * report. Each stored event updates one fixed-size record; texts go to one
 * string arena; calls and sessions are found by open-addressing tables of
 * indexes. The args of an intent are parsed once, for its summary and its
 * risk (audit_call_facts), and not kept.
 */
#include <string.h>

#include "calls.h"
#include "ledger/decision.h"
#include "ledger/ledger_sys.h"
#include "util/alloc.h"
#include "util/error.h"
#include "util/summary.h"

#define DENIAL_MESSAGE_MAX 300 /* what the source said when it refused, cut on a UTF-8 boundary */

int calls_init(call_fold *c, int64_t since_ms)
{
	memset(c, 0, sizeof(*c));
	c->since_ms = since_ms;
	/* offset 0 is the empty text */
	return docket_buf_putc(&c->strings, '\0');
}

void calls_dispose(call_fold *c)
{
	for (size_t i = 0; i < c->nsessions; i++)
		docket_free(c->session[i].roots);
	docket_buf_dispose(&c->strings);
	docket_free(c->call);
	docket_free(c->session);
	docket_free(c->policy);
	docket_free(c->incident);
	docket_free(c->call_slot);
	docket_free(c->session_slot);
	docket_free(c->memo);
	docket_free(c->memo_slot);
	memset(c, 0, sizeof(*c));
}

/* ---- texts ------------------------------------------------------------- */

static int put_n(call_fold *c, cstr *out, const char *s, size_t n)
{
	size_t at = c->strings.len;
	int error;

	*out = 0;
	if (!s || n == 0)
		return 0;
	if (at + n + 1 > UINT32_MAX)
		return docket_error_set(DOCKET_ENOMEM, "the report's texts exceed 4 GiB");
	if ((error = docket_buf_put(&c->strings, s, n)) < 0 || (error = docket_buf_putc(&c->strings, '\0')) < 0)
		return error;
	*out = (cstr)at;
	return 0;
}

int calls_put(call_fold *c, cstr *out, const char *s)
{
	return put_n(c, out, s, s ? strlen(s) : 0);
}

/* ---- lookup ------------------------------------------------------------ */

static uint64_t hash_text(uint64_t h, const char *s)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

/* Double `*slots` (at least 64) and put back every index `key_of` hashes. */
static int rehash(uint32_t **slot, size_t *slots, size_t n, const call_fold *c,
		  uint64_t (*key_of)(const call_fold *c, size_t i))
{
	size_t want = *slots ? *slots * 2 : 64;
	uint32_t *s = docket_calloc(want, sizeof(*s));

	if (!s)
		return docket_error_set_oom();
	for (size_t i = 0; i < n; i++) {
		size_t k = (size_t)key_of(c, i) & (want - 1);

		while (s[k])
			k = (k + 1) & (want - 1);
		s[k] = (uint32_t)(i + 1);
	}
	docket_free(*slot);
	*slot = s;
	*slots = want;
	return 0;
}

static uint64_t session_hash(const call_fold *c, size_t i)
{
	return hash_text(14695981039346656037ULL, calls_str(c, c->session[i].id));
}

static uint64_t call_key(uint32_t session, const char *invocation)
{
	return hash_text(14695981039346656037ULL ^ ((uint64_t)session * 0x9e3779b97f4a7c15ULL), invocation);
}

static uint64_t call_hash(const call_fold *c, size_t i)
{
	return call_key(c->call[i].session, calls_str(c, c->call[i].invocation));
}

/* The index of session `id`, or -1. */
static long find_session(const call_fold *c, const char *id)
{
	size_t k;

	if (!c->session_slots)
		return -1;
	for (k = (size_t)hash_text(14695981039346656037ULL, id) & (c->session_slots - 1); c->session_slot[k];
	     k = (k + 1) & (c->session_slots - 1))
		if (strcmp(calls_str(c, c->session[c->session_slot[k] - 1].id), id) == 0)
			return (long)c->session_slot[k] - 1;
	return -1;
}

static call_rec *find_call(call_fold *c, const char *session, const char *invocation)
{
	long s;
	size_t k;

	if (!invocation)
		return NULL;
	/* the events of a call mostly follow each other */
	if (c->last_call && strcmp(calls_str(c, c->call[c->last_call - 1].invocation), invocation) == 0 &&
	    strcmp(calls_str(c, c->session[c->call[c->last_call - 1].session].id), session) == 0)
		return &c->call[c->last_call - 1];
	if ((s = find_session(c, session)) < 0 || !c->call_slots)
		return NULL;
	for (k = (size_t)call_key((uint32_t)s, invocation) & (c->call_slots - 1); c->call_slot[k];
	     k = (k + 1) & (c->call_slots - 1)) {
		call_rec *r = &c->call[c->call_slot[k] - 1];

		if (r->session == (uint32_t)s && strcmp(calls_str(c, r->invocation), invocation) == 0) {
			c->last_call = c->call_slot[k];
			return r;
		}
	}
	return NULL;
}

/* The session `id`, added (not opened) when it is new. */
static int session_of(call_fold *c, const char *id, uint32_t *out)
{
	long found = find_session(c, id);
	session_rec *s;
	size_t k;
	int error;

	if (found >= 0) {
		*out = (uint32_t)found;
		return 0;
	}
	if ((c->nsessions + 1) * 2 > c->session_slots &&
	    (error = rehash(&c->session_slot, &c->session_slots, c->nsessions, c, session_hash)) < 0)
		return error;
	if (c->nsessions == c->session_cap &&
	    !(c->session = docket_array_grow(c->session, &c->session_cap, sizeof(*c->session), 64)))
		return docket_error_set_oom();
	s = &c->session[c->nsessions];
	memset(s, 0, sizeof(*s));
	if ((error = calls_put(c, &s->id, id)) < 0)
		return error;
	for (k = (size_t)session_hash(c, c->nsessions) & (c->session_slots - 1); c->session_slot[k];
	     k = (k + 1) & (c->session_slots - 1))
		;
	c->session_slot[k] = (uint32_t)++c->nsessions;
	*out = (uint32_t)(c->nsessions - 1);
	return 0;
}

/* ---- events ------------------------------------------------------------ */

static const char *env_value(const Docket__V1__SessionOpened *b, const char *key)
{
	for (size_t i = 0; i < b->n_env; i++)
		if (b->env[i]->key && strcmp(b->env[i]->key, key) == 0)
			return b->env[i]->value;
	return NULL;
}

static int on_session(call_fold *c, const docket_event *ev)
{
	const Docket__V1__SessionOpened *b = ev->session_opened;
	session_rec *s;
	uint32_t i;
	int error;

	if ((error = session_of(c, ev->session, &i)) < 0)
		return error;
	if (c->session[i].flags & CS_OPENED)
		return 0;
	s = &c->session[i];
	s->flags |= CS_OPENED;
	if ((error = calls_put(c, &s->runtime, b->runtime)) < 0 ||
	    (error = calls_put(c, &s->cwd, b->cwd)) < 0 || (error = calls_put(c, &s->opened_time, ev->time)) < 0 ||
	    (error = calls_put(c, &s->parent, b->parent)) < 0 || (error = calls_put(c, &s->home, env_value(b, "HOME"))) < 0)
		return error;
	if (b->n_workspace_roots && !(s->roots = docket_calloc(b->n_workspace_roots, sizeof(*s->roots))))
		return docket_error_set_oom();
	for (size_t k = 0; k < b->n_workspace_roots; k++)
		if ((error = calls_put(c, &s->roots[s->nroots++], b->workspace_roots[k])) < 0)
			return error;
	return 0;
}

static int on_policy(call_fold *c, const docket_event *ev)
{
	const Docket__V1__PolicyRevised *b = ev->policy_revised;
	const char *format = docket_policy_format_name(b->format);
	docket_buf why = DOCKET_BUF_INIT;
	json_t *rec;
	policy_rec *p;
	int error;

	if (c->npolicies == c->policy_cap &&
	    !(c->policy = docket_array_grow(c->policy, &c->policy_cap, sizeof(*c->policy), 16)))
		return docket_error_set_oom();
	p = &c->policy[c->npolicies];
	memset(p, 0, sizeof(*p));
	p->revision = b->revision;
	format = format && strcmp(format, "unspecified") != 0 ? format : "";
	if (!(rec = json_pack("{s:s, s:o?}", "format", format,
			      "policy", b->policy_json ? json_loads(b->policy_json, 0, NULL) : NULL)))
		return docket_error_set_oom();
	error = audit_risky_settings(&why, rec);
	json_decref(rec);
	if (error == 0 && (error = session_of(c, ev->session ? ev->session : "", &p->session)) == 0 &&
	    (error = calls_put(c, &p->format, format)) == 0 && (error = calls_put(c, &p->actor, b->actor)) == 0 &&
	    (error = calls_put(c, &p->reason, b->reason)) == 0 && (error = calls_put(c, &p->time, ev->time)) == 0 &&
	    (error = calls_put(c, &p->settings, why.ptr)) == 0)
		c->npolicies++;
	docket_buf_dispose(&why);
	return error;
}

static int on_incident(call_fold *c, uint64_t seq, const docket_event *ev)
{
	const Docket__V1__LedgerIncident *b = ev->ledger_incident;
	incident_rec *r;
	int64_t ms = -1;
	int error;

	/* one before --since is left out, as a call before it is */
	if (c->since_ms > 0 && (docket_time_to_ms(ev->time, &ms) < 0 || ms < c->since_ms))
		return 0;
	if (c->nincidents == c->incident_cap &&
	    !(c->incident = docket_array_grow(c->incident, &c->incident_cap, sizeof(*c->incident), 16)))
		return docket_error_set_oom();
	r = &c->incident[c->nincidents];
	memset(r, 0, sizeof(*r));
	r->seq = seq;
	if ((error = calls_put(c, &r->time, ev->time)) < 0 || (error = calls_put(c, &r->kind, b->kind)) < 0 ||
	    (error = calls_put(c, &r->file, b->file)) < 0 || (error = calls_put(c, &r->error, b->error)) < 0)
		return error;
	c->nincidents++;
	return 0;
}

/* Join `text` to the "; "-list `*list` unless it is there already. */
static int add_text(call_fold *c, cstr *list, const char *text)
{
	docket_buf joined = DOCKET_BUF_INIT;
	int error;

	if ((error = docket_buf_puts(&joined, calls_str(c, *list))) == 0 &&
	    (error = audit_reason_add(&joined, text)) == 0 && joined.len != strlen(calls_str(c, *list)))
		error = calls_put(c, list, joined.ptr);
	docket_buf_dispose(&joined);
	return error;
}

static int put_decision(call_fold *c, call_rec *r, const Docket__V1__Decision *d)
{
	docket_buf text = DOCKET_BUF_INIT;
	int error = 0;

	if (!d)
		return 0;
	r->verdict = (uint8_t)d->verdict;
	if ((error = calls_put(c, &r->source, d->source)) < 0 ||
	    (error = calls_put(c, &r->rule, d->n_rules ? d->rules[0] : NULL)) < 0)
		return error;
	/* stored as codes (older ledgers: texts): the report and audit read text */
	for (size_t i = 0; i < d->n_reasons && error == 0; i++) {
		docket_buf_clear(&text);
		if ((error = decision_reason_text(&text, d->reasons[i], docket_verdict_name(d->verdict),
						  d->n_rules ? d->rules[0] : NULL, d->policy_revision)) == 0)
			error = add_text(c, &r->reasons, text.ptr);
	}
	docket_buf_dispose(&text);
	return error;
}

static int new_call(call_fold *c, const docket_event *ev, call_rec **out)
{
	uint32_t s;
	size_t k;
	int error;

	*out = NULL;
	if ((error = session_of(c, ev->session ? ev->session : "", &s)) < 0)
		return error;
	if (find_call(c, ev->session ? ev->session : "", ev->invocation))
		return 0;
	if ((c->ncalls + 1) * 2 > c->call_slots &&
	    (error = rehash(&c->call_slot, &c->call_slots, c->ncalls, c, call_hash)) < 0)
		return error;
	if (c->ncalls == c->call_cap && !(c->call = docket_array_grow(c->call, &c->call_cap, sizeof(*c->call), 1024)))
		return docket_error_set_oom();
	*out = &c->call[c->ncalls];
	memset(*out, 0, sizeof(**out));
	(*out)->session = s;
	if ((error = calls_put(c, &(*out)->invocation, ev->invocation)) < 0)
		return error;
	for (k = (size_t)call_hash(c, c->ncalls) & (c->call_slots - 1); c->call_slot[k];
	     k = (k + 1) & (c->call_slots - 1))
		;
	c->call_slot[k] = (uint32_t)++c->ncalls;
	return 0;
}

/*
 * The facts of an intent (summary, escalation, risk, hosts) depend only on
 * its session, tool and args: a call that repeats those of an earlier one
 * (agents run `git status` many times) takes its facts instead of parsing
 * and analysing the args again. Args of up to MEMO_ARGS_MAX bytes are kept
 * for the comparison.
 */
#define MEMO_ARGS_MAX 256

static uint64_t memo_key(uint32_t session, const char *tool, const char *args)
{
	return hash_text(hash_text(call_key(session, tool), "\x1f"), args);
}

static uint64_t memo_hash(const call_fold *c, size_t i)
{
	const call_rec *r = &c->call[c->memo[i]];

	return memo_key(r->session, calls_str(c, r->tool), calls_str(c, r->args));
}

static const call_rec *memo_find(const call_fold *c, uint32_t session, const char *tool, const char *args)
{
	if (!c->memo_slots)
		return NULL;
	for (size_t k = (size_t)memo_key(session, tool, args) & (c->memo_slots - 1); c->memo_slot[k];
	     k = (k + 1) & (c->memo_slots - 1)) {
		const call_rec *r = &c->call[c->memo[c->memo_slot[k] - 1]];

		if (r->session == session && strcmp(calls_str(c, r->tool), tool) == 0 &&
		    strcmp(calls_str(c, r->args), args) == 0)
			return r;
	}
	return NULL;
}

static int memo_add(call_fold *c, call_rec *r, const char *args)
{
	size_t k;
	int error;

	if (strlen(args) > MEMO_ARGS_MAX)
		return 0;
	if ((c->nmemo + 1) * 2 > c->memo_slots &&
	    (error = rehash(&c->memo_slot, &c->memo_slots, c->nmemo, c, memo_hash)) < 0)
		return error;
	if (c->nmemo == c->memo_cap && !(c->memo = docket_array_grow(c->memo, &c->memo_cap, sizeof(*c->memo), 256)))
		return docket_error_set_oom();
	if ((error = calls_put(c, &r->args, args)) < 0)
		return error;
	c->memo[c->nmemo] = (uint32_t)(r - c->call);
	for (k = (size_t)memo_hash(c, c->nmemo) & (c->memo_slots - 1); c->memo_slot[k]; k = (k + 1) & (c->memo_slots - 1))
		;
	c->memo_slot[k] = (uint32_t)++c->nmemo;
	return 0;
}

/* The facts of a call from its args (parsed here). */
static int intent_facts(call_fold *c, call_rec *r, const char *tool, const char *args_text)
{
	docket_buf summary = DOCKET_BUF_INIT;
	json_t *args = json_loads(args_text, 0, NULL);
	int error;

	if (!args && !(args = json_object()))
		return docket_error_set_oom();
	if ((error = docket_call_summary(&summary, tool, args, 0)) == 0 && (error = calls_put(c, &r->tool, tool)) == 0 &&
	    (error = calls_put(c, &r->summary, summary.ptr)) == 0 && (error = audit_call_facts(c, r, args)) == 0)
		error = memo_add(c, r, args_text);
	json_decref(args);
	docket_buf_dispose(&summary);
	return error;
}

static int on_intent(call_fold *c, uint64_t seq, const docket_event *ev)
{
	const Docket__V1__ToolIntent *b = ev->tool_intent;
	const char *tool = b->tool ? b->tool : "", *args = b->args_json ? b->args_json : "{}";
	const call_rec *same;
	call_rec *r;
	int64_t ms = -1;
	int error;

	if ((error = new_call(c, ev, &r)) < 0 || !r)
		return error;
	r->intent_seq = seq;
	r->intent_line = ev->provenance ? (int64_t)ev->provenance->line : -1;
	r->intent_ms = docket_time_to_ms(ev->time, &ms) == 0 ? ms : -1;
	if (c->since_ms <= 0 || (r->intent_ms >= 0 && ms >= c->since_ms))
		r->flags |= CF_SINCE;
	if ((error = calls_put(c, &r->intent_time, ev->time)) < 0 || (error = put_decision(c, r, b->decision)) < 0)
		return error;
	if (!(same = memo_find(c, r->session, tool, args)))
		return intent_facts(c, r, tool, args);
	r->tool = same->tool;
	r->summary = same->summary;
	r->flags |= same->flags & CF_ESCALATED;
	r->justification = same->justification;
	r->risk = same->risk;
	r->hosts = same->hosts;
	return 0;
}

static int on_requested(call_fold *c, call_rec *r, const docket_event *ev)
{
	const Docket__V1__ApprovalRequested *b = ev->approval_requested;
	int error;

	r->flags |= CF_REQUESTED;
	r->flags &= ~(uint32_t)(CF_REQ_IMPORTED | CF_REQ_STAMPED);
	if (ev->provenance) {
		r->flags |= CF_REQ_IMPORTED;
		/* the import stamped the request with its intent's time and line */
		if (ev->time && strcmp(ev->time, calls_str(c, r->intent_time)) == 0 && r->intent_line >= 0 &&
		    (int64_t)ev->provenance->line == r->intent_line)
			r->flags |= CF_REQ_STAMPED;
	}
	if ((error = calls_put(c, &r->requested_time, ev->time)) < 0 || (error = calls_put(c, &r->reviewer, b->reviewer)) < 0)
		return error;
	if (!r->verdict)
		r->verdict = DOCKET__V1__VERDICT__VERDICT_APPROVAL_REQUIRED;
	return 0;
}

static int on_settled(call_fold *c, call_rec *r, const docket_event *ev)
{
	const Docket__V1__ApprovalSettled *b = ev->approval_settled;
	int64_t asked = -1, done = -1;
	int error;

	r->result = (uint8_t)b->result;
	if ((error = calls_put(c, &r->actor, b->actor)) < 0 || (error = calls_put(c, &r->settle_reason, b->reason)) < 0)
		return error;
	r->flags &= ~(uint32_t)(CF_WAIT_KNOWN | CF_WAIT_UNKNOWN);
	if (docket_time_to_ms(ev->time, &done) < 0 ||
	    docket_time_to_ms(calls_str(c, r->requested_time), &asked) < 0)
		return 0;
	if (docket_wait_known(asked, done, (r->flags & CF_REQ_IMPORTED) != 0, (r->flags & CF_REQ_STAMPED) != 0)) {
		r->flags |= CF_WAIT_KNOWN;
		r->wait_ms = done - asked;
	} else {
		r->flags |= CF_WAIT_UNKNOWN;
	}
	return 0;
}

static int on_dispatched(call_rec *r)
{
	if (!r->verdict && !r->result)
		r->verdict = DOCKET__V1__VERDICT__VERDICT_ALLOWED;
	r->dispatches++;
	return 0;
}

static int is_refusal(int status)
{
	return status == DOCKET__V1__OUTCOME_STATUS__OUTCOME_STATUS_DENIED ||
	       status == DOCKET__V1__OUTCOME_STATUS__OUTCOME_STATUS_UNSUPPORTED;
}

/* The call's status; a refusal without a verdict, a dispatch or an
 * approval result says what the verdict was. */
static void put_status(call_rec *r, int status)
{
	r->status = (uint8_t)status;
	if (is_refusal(status) && !r->verdict && !r->dispatches && !r->result)
		r->verdict = status == DOCKET__V1__OUTCOME_STATUS__OUTCOME_STATUS_DENIED
				     ? DOCKET__V1__VERDICT__VERDICT_DENIED : DOCKET__V1__VERDICT__VERDICT_UNSUPPORTED;
}

static int on_completed(call_fold *c, call_rec *r, const docket_event *ev)
{
	const Docket__V1__ToolCompleted *b = ev->tool_completed;
	int refused = is_refusal(b->status);
	int error;

	if ((error = calls_put(c, &r->error, b->error)) < 0)
		return error;
	if (refused && b->output && *b->output) {
		size_t n = strlen(b->output);

		if (n > DENIAL_MESSAGE_MAX) {
			n = DENIAL_MESSAGE_MAX;
			while (n > 0 && ((unsigned char)b->output[n] & 0xc0) == 0x80)
				n--;
		}
		if ((error = put_n(c, &r->denial, b->output, n)) < 0)
			return error;
	}
	put_status(r, b->status);
	return 0;
}

static int on_recovery(call_fold *c, call_rec *r, const docket_event *ev)
{
	const char *action = docket_recovery_action_name(ev->recovery_action->action);
	const char *old = calls_str(c, r->recovery);
	docket_buf list = DOCKET_BUF_INIT;
	int error;

	r->flags |= CF_RECOVERY;
	if ((error = docket_buf_printf(&list, "%s%s%s", old, *old ? ", " : "", action ? action : "")) == 0)
		error = calls_put(c, &r->recovery, list.ptr);
	docket_buf_dispose(&list);
	return error;
}

static int on_closed(call_fold *c, const docket_event *ev)
{
	long s = find_session(c, ev->session ? ev->session : "");

	if (s < 0)
		return 0;
	c->session[s].flags |= CS_CLOSED;
	return calls_put(c, &c->session[s].closed_time, ev->time);
}

int calls_add(call_fold *c, uint64_t seq, const docket_event *ev)
{
	call_rec *r;

	switch (ev->body_case) {
	case DOCKET__V1__EVENT__BODY_SESSION_OPENED: return on_session(c, ev);
	case DOCKET__V1__EVENT__BODY_SESSION_CLOSED: return on_closed(c, ev);
	case DOCKET__V1__EVENT__BODY_POLICY_REVISED: return on_policy(c, ev);
	case DOCKET__V1__EVENT__BODY_LEDGER_INCIDENT: return on_incident(c, seq, ev);
	case DOCKET__V1__EVENT__BODY_TOOL_INTENT: return on_intent(c, seq, ev);
	default: break;
	}
	if (!(r = find_call(c, ev->session ? ev->session : "", ev->invocation)))
		return 0;
	switch (ev->body_case) {
	case DOCKET__V1__EVENT__BODY_APPROVAL_REQUESTED: return on_requested(c, r, ev);
	case DOCKET__V1__EVENT__BODY_APPROVAL_SETTLED: return on_settled(c, r, ev);
	case DOCKET__V1__EVENT__BODY_TOOL_DISPATCHED: return on_dispatched(r);
	case DOCKET__V1__EVENT__BODY_TOOL_COMPLETED: return on_completed(c, r, ev);
	case DOCKET__V1__EVENT__BODY_RECOVERY_ACTION: return on_recovery(c, r, ev);
	default: return 0;
	}
}

/* calls_outcomes for call `r`: its status from the record, its outcome
 * event only when the call is denied. */
static int call_outcome(call_fold *c, call_rec *r, ledger_outcomes *o, uint64_t upto)
{
	const docket_event *ev;
	uint64_t seq;
	int status, error;

	error = ledger_outcome_of(o, calls_str(c, c->session[r->session].id), calls_str(c, r->invocation), &status,
				  &seq);
	if (error < 0 || !seq || seq > upto)
		return error;
	put_status(r, status);
	if (!calls_denied(r))
		return 0;
	if ((error = ledger_outcome_event(o, seq, &ev)) < 0)
		return error;
	return on_completed(c, r, ev);
}

int calls_outcomes(call_fold *c, docket_ledger *l, uint64_t upto)
{
	ledger_outcomes *o = NULL;
	int error;

	if ((error = ledger_outcomes_begin(&o, l)) < 0)
		return error;
	for (size_t i = 0; i < c->ncalls && error == 0; i++)
		error = call_outcome(c, &c->call[i], o, upto);
	ledger_outcomes_end(o);
	return error;
}

int calls_add_json(call_fold *c, const json_t *ev)
{
	static const char *const added[] = { "seq", "hash", "epoch", "host", "ledger", "redacted" };
	json_t *copy = json_copy((json_t *)ev);
	docket_event *e = NULL;
	int error;

	if (!copy)
		return docket_error_set_oom();
	for (size_t i = 0; i < sizeof(added) / sizeof(added[0]); i++)
		json_object_del(copy, added[i]);
	if ((error = docket_event_from_json(&e, copy)) == 0)
		error = calls_add(c, (uint64_t)json_integer_value(json_object_get(ev, "seq")), e);
	docket_event_free(e);
	json_decref(copy);
	return error;
}

/* ---- classes ----------------------------------------------------------- */

int calls_granted(const call_rec *r)
{
	return r->result == DOCKET__V1__APPROVAL_RESULT__APPROVAL_RESULT_APPROVED ||
	       r->result == DOCKET__V1__APPROVAL_RESULT__APPROVAL_RESULT_APPROVED_FOR_SESSION;
}

int calls_decision(const call_rec *r)
{
	return call_class(r->result != 0, calls_granted(r),
			  r->result == DOCKET__V1__APPROVAL_RESULT__APPROVAL_RESULT_SUPERSEDED, r->dispatches > 0,
			  r->status == DOCKET__V1__OUTCOME_STATUS__OUTCOME_STATUS_DENIED ||
				  r->status == DOCKET__V1__OUTCOME_STATUS__OUTCOME_STATUS_UNSUPPORTED,
			  r->status != 0);
}

int calls_denied(const call_rec *r)
{
	int d = calls_decision(r);

	return d == D_DENIED || d == D_REJECTED;
}

static const char *name_or_empty(const char *name)
{
	return name && strcmp(name, "unspecified") != 0 ? name : "";
}

const char *calls_verdict(const call_rec *r)
{
	return name_or_empty(docket_verdict_name((Docket__V1__Verdict)r->verdict));
}

const char *calls_result(const call_rec *r)
{
	return name_or_empty(docket_approval_result_name((Docket__V1__ApprovalResult)r->result));
}

const char *calls_status(const call_rec *r)
{
	return name_or_empty(docket_outcome_status_name((Docket__V1__OutcomeStatus)r->status));
}

/* ---- the sink ---------------------------------------------------------- */

static int sink_stored(export_sink *s, uint64_t seq, const Docket__V1__Event *ev, const char *hash, int emit)
{
	(void)hash;
	(void)emit;
	return calls_add(&((calls_sink *)s)->c, seq, ev);
}

int calls_sink_event(export_sink *s, const json_t *ev, int emit)
{
	(void)emit;
	return calls_add_json(&((calls_sink *)s)->c, ev);
}

/* The outcomes the read passed over, then the report's or audit's finish. */
static int sink_finish(export_sink *s)
{
	calls_sink *o = (calls_sink *)s;
	uint64_t upto = s->info.events > s->stats->head_seq ? s->info.events : s->stats->head_seq;
	int error;

	if (s->outcomes_skipped && (error = calls_outcomes(&o->c, s->ledger, upto)) < 0)
		return error;
	return o->finish(s);
}

int calls_sink_make(export_sink **out, size_t size, int64_t since_ms, int (*finish)(export_sink *s),
		    void (*free_fn)(export_sink *s))
{
	calls_sink *o = docket_calloc(1, size);
	int error;

	*out = NULL;
	if (!o)
		return docket_error_set_oom();
	if ((error = calls_init(&o->c, since_ms)) < 0) {
		docket_free(o);
		return error;
	}
	o->base.event = calls_sink_event;
	o->base.stored = sink_stored;
	/* the fold needs no hash, and of an outcome only what calls_outcomes reads */
	o->base.read_flags = DOCKET_READ_NO_HASH | DOCKET_READ_NO_OUTCOMES;
	o->base.finish = sink_finish;
	o->finish = finish;
	o->base.free = free_fn;
	*out = &o->base;
	return 0;
}

void calls_sink_free(export_sink *s)
{
	calls_dispose(&((calls_sink *)s)->c);
	docket_free(s);
}
