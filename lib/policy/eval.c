/* SPDX-License-Identifier: Apache-2.0 */
/*
 * eval.c: the evaluator. Pure: it reads the policy, the call and the
 * context, and writes only the result (whose buffers it reuses, so a warm
 * result evaluates without allocating).
 *
 * Order of decisions for one call:
 *   1. every rule that matches (per shell segment) contributes its decision;
 *      the strictest wins (allow < ask < deny < unsupported);
 *   2. a segment no rule matched gets the heuristics' decision (known safe,
 *      dangerous, then the approval and sandbox modes);
 *   3. a session grant turns an `ask` into `allow`, never a deny;
 *   4. an `ask` the approval mode cannot show becomes `deny` (Codex);
 *   5. a call that relies on a sandbox the platform cannot enforce is
 *      `unsupported`, whatever its approval.
 */
#include <stdarg.h>
#include <string.h>

#include "eval.h"

#include "util/alloc.h"
#include "util/error.h"
#include "util/reason.h"
#include "util/tool.h"

#define PROMPT_CONFLICT_REASON "approval required by policy, but AskForApproval is set to Never"
#define REJECT_SANDBOX_REASON "approval required by policy, but AskForApproval::Granular.sandbox_approval is false"
#define REJECT_RULES_REASON "approval required by policy rule, but AskForApproval::Granular.rules is false"

/* ---- result building ---- */

int ev_grow(void **v, size_t *cap, size_t need, size_t elem)
{
	size_t ncap;
	void *nv;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 32;
	while (ncap < need)
		ncap *= 2;
	if (ncap > SIZE_MAX / elem || !(nv = docket_realloc(*v, ncap * elem)))
		return docket_error_set_oom();
	*v = nv;
	*cap = ncap;
	return 0;
}

int ev_push_words(docket_policy_result *r, const char *const *w, size_t n, size_t *off)
{
	int error;

	if ((error = ev_grow((void **)&r->wv, &r->capwv, r->nwv + n, sizeof(*r->wv))) < 0)
		return error;
	*off = r->nwv;
	memcpy(r->wv + r->nwv, w, n * sizeof(*w));
	r->nwv += n;
	return 0;
}

int ev_add_segment(docket_policy_result *r, const char *const *w, size_t n)
{
	pol_segment *s;
	int error;

	if ((error = ev_grow((void **)&r->segs, &r->capsegs, r->nsegs + 1, sizeof(*r->segs))) < 0)
		return error;
	s = &r->segs[r->nsegs];
	memset(s, 0, sizeof(*s));
	if ((error = ev_push_words(r, w, n, &s->word_off)) < 0)
		return error;
	s->nwords = n;
	r->nsegs++;
	return 0;
}

void ev_add_match(docket_policy_result *r, int rule, int decision, size_t seg, size_t plen,
		      bool resolved)
{
	pol_match *m;

	if (r->nmatches >= POL_MAX_MATCHES)
		return;
	m = &r->matches[r->nmatches++];
	m->rule = rule;
	m->decision = decision;
	m->segment = (uint16_t)(seg > 0xFFFF ? 0xFFFF : seg);
	m->prefix_len = (uint16_t)(plen > 0xFFFF ? 0xFFFF : plen);
	m->resolved = resolved;
}

static int add_reason_text(docket_policy_result *r, const char *code, const char *text)
{
	int error;

	if (r->nreasons >= POL_MAX_REASONS)
		return 0;
	r->reasons[r->nreasons].code = code;
	r->reasons[r->nreasons].text_off = r->text.len;
	if ((error = docket_buf_puts(&r->text, text)) < 0 || (error = docket_buf_putc(&r->text, '\0')) < 0)
		return error;
	r->nreasons++;
	return 0;
}

int ev_add_reason(docket_policy_result *r, const char *code, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	if (r->nreasons >= POL_MAX_REASONS)
		return 0;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	return add_reason_text(r, code, line);
}

int ev_add_why(docket_policy_result *r, const char *why)
{
	return add_reason_text(r, why, ev_why_text(why));
}

/* ---- the common end of every evaluator ---- */

bool ev_tool_kind_applies(const pol_tool_rule *t, int kind, const char *name)
{
	if (t->kind == TK_ANY)
		return true;
	if (t->kind != kind)
		return false;
	if (kind == TK_MCP || kind == TK_NAME) {
		size_t n = strlen(t->name);

		if (kind == TK_MCP) {
			/* mcp__server matches every tool of the server; mcp__* every server */
			if (str_glob_match(t->name, n, name, strlen(name)))
				return true;
			return strncmp(name, t->name, n) == 0 && name[n] == '_' && name[n + 1] == '_';
		}
		return str_glob_match(t->name, n, name, strlen(name));
	}
	return true;
}

int ev_mode_default(ev *e, bool read_only, const char **why)
{
	switch (e->mode) {
	case MODE_BYPASS:
		*why = "bypass_permissions";
		return POL_ALLOW;
	case MODE_DONT_ASK:
		*why = read_only ? "read_only" : "dont_ask";
		return read_only ? POL_ALLOW : POL_DENY;
	case MODE_PLAN:
		/* plan mode asks (the user may leave plan mode), it does not refuse */
		*why = read_only ? "read_only" : "plan_mode";
		return read_only ? POL_ALLOW : POL_ASK;
	default:
		*why = read_only ? "read_only" : "no_rule";
		return read_only ? POL_ALLOW : POL_ASK;
	}
}

bool ev_any_policy_match(const docket_policy_result *r, int decision)
{
	for (size_t i = 0; i < r->nmatches; i++)
		if (r->matches[i].rule != -1 && (decision < 0 || r->matches[i].decision == decision))
			return true;
	return false;
}

int ev_tool_rule_reason(ev *e, int decision)
{
	docket_policy_result *r = e->res;

	for (size_t i = 0; i < r->nmatches; i++) {
		const pol_match *m = &r->matches[i];

		if (m->rule <= -2 && m->rule > -100000 && m->decision == decision) {
			const pol_tool_rule *t = &e->p->tools[-2 - m->rule];

			return ev_add_reason(r, "rule", "%s by rule %s",
					  decision == POL_DENY ? "denied" : decision == POL_ASK ? "approval required" : "allowed",
					  t->text);
		}
	}
	return 0;
}

const char *ev_allowed_why(const ev *e)
{
	return e->fs_kind == FS_UNRESTRICTED ? "unrestricted" : "sandboxed";
}

const char *ev_why_text(const char *why)
{
	const char *text = docket_reason_sentence(why);

	return text ? text : "no rule matched";
}

/* Approval post-processing (Codex prompt_is_rejected_by_policy). */
int ev_approval_gate(ev *e, int *dec)
{
	bool prompt_is_rule;

	if (*dec != POL_ASK)
		return 0;
	if (e->mode == MODE_DONT_ASK) {
		*dec = POL_DENY;
		return ev_add_reason(e->res, "approval_mode", "approval required, but the permission mode is dontAsk");
	}
	prompt_is_rule = ev_any_policy_match(e->res, POL_ASK);
	if (e->approval == AP_NEVER) {
		*dec = POL_DENY;
		return ev_add_reason(e->res, "approval_mode", PROMPT_CONFLICT_REASON);
	}
	if (e->approval == AP_GRANULAR) {
		if (prompt_is_rule && !e->grules) {
			*dec = POL_DENY;
			return ev_add_reason(e->res, "approval_mode", REJECT_RULES_REASON);
		}
		if (!prompt_is_rule && !e->gsandbox) {
			*dec = POL_DENY;
			return ev_add_reason(e->res, "approval_mode", REJECT_SANDBOX_REASON);
		}
	}
	return 0;
}

/* The common end of the tool evaluators: the tool rule's reason, the
 * fallback reason `why` (may be NULL), the approval gate, the verdict. */
int ev_conclude(ev *e, int dec, const char *why)
{
	int error;

	if ((error = ev_tool_rule_reason(e, dec)) < 0)
		return error;
	if (why && (error = ev_add_why(e->res, why)) < 0)
		return error;
	if ((error = ev_approval_gate(e, &dec)) < 0)
		return error;
	e->res->verdict = dec;
	return 0;
}

static bool sandbox_unenforceable(const ev *e)
{
	return (e->sandbox == SB_READ_ONLY || e->sandbox == SB_WORKSPACE_WRITE) &&
	       (e->p->unsupported[e->platform] & CAP_SANDBOX);
}

int ev_unsupported_gate(ev *e, int *dec, bool escalated)
{
	if (*dec >= POL_DENY || e->res->sandbox != 1 || escalated || !sandbox_unenforceable(e))
		return 0;
	*dec = POL_UNSUPPORTED;
	/* nothing to approve, so no rule to propose: an allow rule would run it unsandboxed */
	e->res->has_amendment = false;
	e->res->amend_off = e->res->amend_n = 0;
	return ev_add_reason(e->res, "unsupported", "the sandbox this call relies on cannot be enforced on this platform");
}

/* ---- paths ---- */

const char *ev_project_root(const ev *e)
{
	if (e->ctx && e->ctx->roots.n)
		return e->ctx->roots.v[0];
	return e->cwd;
}

/* The rule's base directory (its anchor), or NULL when unknown. */
static const char *rule_base(ev *e, const pol_tool_rule *t)
{
	switch (t->anchor) {
	case ANCHOR_ROOT: return "";
	case ANCHOR_HOME: return e->home;
	case ANCHOR_PROJECT: return ev_project_root(e);
	default: return e->cwd;
	}
}

bool ev_path_rule_glob(ev *e, const pol_tool_rule *t, docket_buf *b)
{
	const char *base = rule_base(e, t);

	docket_buf_clear(b);
	if (!base || docket_buf_puts(b, base) < 0)
		return false;
	if (b->len > 0 && b->ptr[b->len - 1] == '/')
		b->len--;
	if (t->anchor == ANCHOR_NONE && docket_buf_puts(b, "/**") < 0)
		return false;
	return docket_buf_putc(b, '/') == 0 && docket_buf_put(b, t->spec, t->spec_len) == 0;
}

bool ev_path_rule_matches(ev *e, const pol_tool_rule *t, const char *path)
{
	docket_buf *b = &e->res->tmp2;
	const char *base;

	if (t->spec_kind == SPEC_NONE)
		return true;
	if (t->spec_kind != SPEC_PATH)
		return false;
	if (!(base = rule_base(e, t)))
		return false;
	{
		/* cheap rejection: the path must start with the base and the literal spec */
		size_t bl = strlen(base);

		while (bl > 0 && base[bl - 1] == '/')
			bl--;
		if (strncmp(path, base, bl) != 0 || (path[bl] != '/' && !(bl == 0 && path[0] == '/')))
			return false;
		if (t->anchor != ANCHOR_NONE && t->lit_len > 0 &&
		    strncmp(path + bl + 1, t->spec, t->lit_len) != 0 &&
		    !(strlen(path + bl + 1) < t->lit_len && strncmp(path + bl + 1, t->spec, strlen(path + bl + 1)) == 0))
			return false;
	}
	if (!ev_path_rule_glob(e, t, b))
		return false;
	return path_glob_match(b->ptr, b->len, path);
}

bool ev_in_workspace(const ev *e, const char *path)
{
	if (e->cwd && path_is_under(path, e->cwd))
		return true;
	if (e->ctx)
		for (size_t i = 0; i < e->ctx->roots.n; i++)
			if (path_is_under(path, e->ctx->roots.v[i]))
				return true;
	for (size_t i = 0; i < e->p->additional_dirs.n; i++) {
		const char *d = e->p->additional_dirs.v[i];

		/* Claude Code takes `~/x` from HOME and `../x` from the project (issue 33) */
		if (d[0] != '/') {
			if (path_normalize(&e->res->claude_dir, d, ev_project_root(e), e->home) < 0) {
				docket_error_clear();
				continue;
			}
			d = e->res->claude_dir.ptr;
		}
		if (path_is_under(path, d))
			return true;
	}
	return false;
}

static bool protected_under(const ev *e, const char *path, const char *root)
{
	static const char *const defaults[] = { ".git", ".codex", ".agents" };
	size_t rl = strlen(root);
	const char *rest;

	if (!path_is_under(path, root))
		return false;
	rest = path + rl;
	if (rl == 1)
		rest = path;
	if (*rest == '/')
		rest++;
	if (e->p->protected_set) {
		for (size_t i = 0; i < e->p->protected_paths.n; i++) {
			const char *pp = e->p->protected_paths.v[i];
			size_t n = strlen(pp);

			if (strncmp(rest, pp, n) == 0 && (rest[n] == '\0' || rest[n] == '/'))
				return true;
		}
		return false;
	}
	for (size_t i = 0; i < 3; i++) {
		size_t n = strlen(defaults[i]);

		if (strncmp(rest, defaults[i], n) == 0 && (rest[n] == '\0' || rest[n] == '/'))
			return true;
	}
	return false;
}

/* Is `path` writable under the sandbox? Sets *why when not. */
static bool sandbox_writable(ev *e, const char *path, const char **why)
{
	const char *roots[4];
	size_t nr = 0;

	if (e->sandbox == SB_FULL_ACCESS || e->sandbox == SB_EXTERNAL)
		return true;
	*why = "outside_writable_roots";
	if (e->sandbox != SB_WORKSPACE_WRITE)
		return false;
	if (e->cwd)
		roots[nr++] = e->cwd;
	if (e->ctx && !e->ctx->exclude_slash_tmp)
		roots[nr++] = "/tmp";
	if (e->ctx && !e->ctx->exclude_tmpdir && e->ctx->tmpdir)
		roots[nr++] = e->ctx->tmpdir;
	for (size_t i = 0; i < nr; i++)
		if (path_is_under(path, roots[i])) {
			if (protected_under(e, path, roots[i])) {
				*why = "protected_path";
				return false;
			}
			return true;
		}
	if (e->ctx) {
		for (size_t i = 0; i < e->ctx->roots.n; i++)
			if (path_is_under(path, e->ctx->roots.v[i])) {
				if (protected_under(e, path, e->ctx->roots.v[i])) {
					*why = "protected_path";
					return false;
				}
				return true;
			}
		for (size_t i = 0; i < e->ctx->writable.n; i++)
			if (path_is_under(path, e->ctx->writable.v[i])) {
				if (protected_under(e, path, e->ctx->writable.v[i])) {
					*why = "protected_path";
					return false;
				}
				return true;
			}
	}
	for (size_t i = 0; i < e->p->writable.n; i++)
		if (path_is_under(path, e->p->writable.v[i])) {
			if (protected_under(e, path, e->p->writable.v[i])) {
				*why = "protected_path";
				return false;
			}
			return true;
		}
	return false;
}

static bool path_granted(const ev *e, const char *path)
{
	if (!e->ctx)
		return false;
	for (size_t i = 0; i < e->ctx->ngrants; i++)
		if (e->ctx->grants[i].path && e->ctx->grants[i].path[0] == '/' &&
		    strcmp(path, e->ctx->grants[i].path) == 0)
			return true;   /* exactly that path (issue 26), never what lies under it */
	return false;
}

int ev_ask_or_deny(const ev *e)
{
	return e->approval == AP_NEVER ? POL_DENY : POL_ASK;
}

/*
 * Tool-name rules Claude Code does not apply to this call: Write(path)
 * rules (it ignores them, allow and deny alike: Edit(path) covers writes),
 * and a bare Edit rule for the Write tool. Only for Claude's heuristics:
 * other docket YAML keeps its own reading of the same grammar.
 */
static bool claude_rule_inert(const ev *e, const pol_tool_rule *t)
{
	if (e->p->heuristics != HEUR_CLAUDE || t->kind != TK_EDIT)
		return false;
	if (strcmp(t->name, DOCKET_TOOL_CLAUDE_WRITE) == 0 && t->spec_kind != SPEC_NONE)
		return true;
	/* MultiEdit and NotebookEdit rules name their own tools only (2.1.332) */
	if ((strcmp(t->name, DOCKET_TOOL_CLAUDE_MULTI_EDIT) == 0 ||
	     strcmp(t->name, DOCKET_TOOL_CLAUDE_NOTEBOOK_EDIT) == 0) &&
	    !(e->call->name && strcmp(e->call->name, t->name) == 0))
		return true;
	return t->spec_kind == SPEC_NONE && strcmp(t->name, DOCKET_TOOL_CLAUDE_EDIT) == 0 && e->call->name &&
	       strcmp(e->call->name, DOCKET_TOOL_CLAUDE_WRITE) == 0;
}

static bool claude_sensitive(const ev *e, const char *path)
{
	const char *root = e->ctx && e->ctx->roots.n ? e->ctx->roots.v[0] : e->cwd;

	return (root && claude_sensitive_path(path, root)) || (e->cwd && claude_sensitive_path(path, e->cwd));
}

static int eval_paths(ev *e, bool write)
{
	docket_policy_result *r = e->res;
	const docket_policy_call *c = e->call;
	int dec = POL_ALLOW, error;
	int kind = write ? TK_EDIT : TK_READ;
	const pol_rule_list *l = pol_tools_of(e->p, kind);
	const char *why_all = NULL;
	bool all_rule_allow = c->npaths > 0;

	if (c->npaths == 0) {
		r->verdict = POL_DENY;
		return ev_add_reason(r, "bad_call", "no path");
	}
	for (size_t i = 0; i < c->npaths; i++) {
		const char *path;
		int d = -1;
		const char *why = NULL;
		bool rule_allow = false;

		if (path_normalize(&r->tmp, c->paths[i], e->cwd, e->home) < 0) {
			docket_error_clear();
			r->verdict = POL_DENY;
			return ev_add_reason(r, "bad_path", "cannot resolve path %s (relative, with no cwd)", c->paths[i]);
		}
		/* keep the normalised path for the rest of this loop */
		if ((error = docket_buf_puts(&r->text, r->tmp.ptr)) < 0 || (error = docket_buf_putc(&r->text, '\0')) < 0)
			return error;
		path = r->text.ptr + r->text.len - r->tmp.len - 1;
		for (size_t j = 0; j < l->n; j++) {
			uint32_t k = l->v[j];
			const pol_tool_rule *t = &e->p->tools[k];

			if (claude_rule_inert(e, t))
				continue;
			if (!ev_path_rule_matches(e, t, path))
				continue;
			ev_add_match(r, -2 - (int)k, t->decision, i, 0, false);
			d = ev_max(d, t->decision);
			if (t->decision == POL_ALLOW)
				rule_allow = true;
		}
		if (d < 0) {
			rule_allow = false;
			if (e->p->heuristics == HEUR_CLAUDE) {
				bool inside = ev_in_workspace(e, path);

				if (!write)
					d = ev_mode_default(e, inside, &why);
				else if (e->mode == MODE_ACCEPT_EDITS && inside && claude_sensitive(e, path))
					d = POL_ASK, why = "sensitive_path";
				else if (e->mode == MODE_ACCEPT_EDITS && inside)
					d = POL_ALLOW, why = "accept_edits";
				else
					d = ev_mode_default(e, false, &why);
				if (!inside && d == POL_ASK && !write)
					why = "outside_workspace";
			} else if (write) {
				if (sandbox_writable(e, path, &why))
					d = e->approval == AP_UNTRUSTED ? POL_ASK : POL_ALLOW, why = d ? "not_known_safe" : ev_allowed_why(e);
				else
					d = ev_ask_or_deny(e);
			} else if (e->p->readable.n) {
				bool ok = false;

				for (size_t k = 0; k < e->p->readable.n && !ok; k++)
					ok = path_is_under(path, e->p->readable.v[k]);
				d = ok ? POL_ALLOW : ev_ask_or_deny(e);
				why = ok ? "read_only" : "outside_workspace";
			} else {
				d = POL_ALLOW;
				why = "read_only";
			}
			ev_add_match(r, -1, d, i, 0, false);
		} else if (write && d == POL_ALLOW && e->p->heuristics != HEUR_CLAUDE &&
			   !sandbox_writable(e, path, &why)) {
			/* an allow rule does not widen the sandbox's protected paths */
			if (strcmp(why, "protected_path") == 0)
				d = ev_ask_or_deny(e);
		}
		if (d == POL_ASK && path_granted(e, path)) {
			d = POL_ALLOW;
			why = "session_grant";
		}
		if (why && !why_all)
			why_all = why;
		if (d > dec && why)
			why_all = why;
		all_rule_allow = all_rule_allow && rule_allow;
		dec = ev_max(dec, d);
	}
	r->sandbox = all_rule_allow ? 2 : (e->sandbox == SB_READ_ONLY || e->sandbox == SB_WORKSPACE_WRITE) ? 1 : 0;
	return ev_conclude(e, dec, why_all);
}

/* ---- network ---- */

static bool host_matches(const char *rule, const char *host)
{
	if (rule[0] == '*' && rule[1] == '.') {
		size_t rl = strlen(rule + 1), hl = strlen(host);

		return hl > rl && strcmp(host + hl - rl, rule + 1) == 0;
	}
	return strcmp(rule, host) == 0;
}

static int eval_network(ev *e)
{
	docket_policy_result *r = e->res;
	const docket_policy_call *c = e->call;
	int d = -1, error;
	const char *why = NULL;
	bool host_rule = false;

	for (size_t i = 0; i < e->p->nnet; i++) {
		const pol_net_rule *n = &e->p->net[i];

		if (!host_matches(n->host, c->host))
			continue;
		if (n->protocol != PROTO_ANY && c->protocol != PROTO_ANY && n->protocol != c->protocol)
			continue;
		if (n->port && c->port && n->port != c->port)
			continue;
		ev_add_match(r, -100000 - (int)i, n->decision, 0, 0, false);
		d = ev_max(d, n->decision);
		host_rule = true;
	}
	for (size_t j = 0; j < pol_tools_of(e->p, TK_WEBFETCH)->n; j++) {
		uint32_t k = pol_tools_of(e->p, TK_WEBFETCH)->v[j];
		const pol_tool_rule *t = &e->p->tools[k];

		if (t->spec_kind == SPEC_DOMAIN) {
			char lowered[256];
			size_t n = t->spec_len < sizeof(lowered) - 1 ? t->spec_len : sizeof(lowered) - 1;

			for (size_t i = 0; i < n; i++)
				lowered[i] = (char)((t->spec[i] >= 'A' && t->spec[i] <= 'Z') ? t->spec[i] - 'A' + 'a' : t->spec[i]);
			lowered[n] = '\0';
			if (!host_matches(lowered, c->host))
				continue;
		} else if (t->spec_kind != SPEC_NONE) {
			continue;
		}
		ev_add_match(r, -2 - (int)k, t->decision, 0, 0, false);
		d = ev_max(d, t->decision);
	}
	if (d < 0) {
		if (e->p->heuristics == HEUR_CLAUDE && claude_preapproved_url(c->host, c->url_path)) {
			d = POL_ALLOW;
			why = "preapproved_host";
		} else if (e->p->heuristics == HEUR_CLAUDE) {
			d = ev_mode_default(e, false, &why);
		} else if (e->network_on) {
			d = POL_ALLOW;
			why = "network_enabled";
		} else {
			d = ev_ask_or_deny(e);
			why = "network_disabled";
		}
		ev_add_match(r, -1, d, 0, 0, false);
	}
	if ((error = ev_tool_rule_reason(e, d)) < 0)
		return error;
	for (size_t i = 0; i < r->nmatches; i++)
		if (r->matches[i].rule <= -100000 && r->matches[i].decision == d) {
			const pol_net_rule *n = &e->p->net[-100000 - r->matches[i].rule];

			if ((error = ev_add_reason(r, "rule", "%s by rule %s%s%s",
						d == POL_DENY ? "denied" : d == POL_ASK ? "approval required" : "allowed",
						n->text,
						n->justification ? ": " : "",
						n->justification ? n->justification : "")) < 0)
				return error;
			break;
		}
	if (why && (error = ev_add_why(r, why)) < 0)
		return error;
	if ((error = ev_approval_gate(e, &d)) < 0)
		return error;
	if (host_rule && d == POL_ALLOW && (e->p->unsupported[e->platform] & CAP_NETWORK_FILTER)) {
		d = POL_UNSUPPORTED;
		if ((error = ev_add_reason(r, "unsupported", "host filtering cannot be enforced on this platform")) < 0)
			return error;
	}
	r->verdict = d;
	return 0;
}

/* ---- run_code, install_packages, other tools ---- */

static int name_rules(ev *e, int kind, const char *name, bool *matched)
{
	const pol_rule_list *l = pol_tools_of(e->p, kind);
	int d = -1;

	*matched = false;
	for (size_t j = 0; j < l->n; j++) {
		uint32_t k = l->v[j];
		const pol_tool_rule *t = &e->p->tools[k];

		if (!ev_tool_kind_applies(t, kind, name))
			continue;
		if (t->spec_kind != SPEC_NONE)
			continue;
		ev_add_match(e->res, -2 - (int)k, t->decision, 0, 0, false);
		d = ev_max(d, t->decision);
		*matched = true;
	}
	return d;
}

static int eval_run_code(ev *e)
{
	docket_policy_result *r = e->res;
	bool matched;
	int d = name_rules(e, TK_NAME, DOCKET_TOOL_RUN_CODE, &matched), error;
	const char *why = NULL;

	if (e->p->languages_set) {
		bool ok = false;

		for (size_t i = 0; i < e->p->languages.n && !ok; i++)
			ok = strcmp(e->p->languages.v[i], e->call->language) == 0;
		if (!ok) {
			d = ev_max(d, ev_ask_or_deny(e));
			why = "language_not_allowed";
		} else if (d < 0) {
			d = POL_ALLOW;
			why = ev_allowed_why(e);
		}
	}
	if (d < 0) {
		if (e->p->heuristics == HEUR_CLAUDE)
			d = ev_mode_default(e, false, &why);
		else
			d = e->approval == AP_UNTRUSTED ? POL_ASK : POL_ALLOW, why = d ? "not_known_safe" : ev_allowed_why(e);
	}
	r->sandbox = (e->sandbox == SB_READ_ONLY || e->sandbox == SB_WORKSPACE_WRITE) ? 1 : 0;
	if ((error = ev_tool_rule_reason(e, d)) < 0)
		return error;
	if (why && (error = ev_add_why(r, why)) < 0)
		return error;
	if ((error = ev_approval_gate(e, &d)) < 0 || (error = ev_unsupported_gate(e, &d, false)) < 0)
		return error;
	r->verdict = d;
	return 0;
}

/* Reject options, URLs, paths, VCS specs and shell metacharacters. */
static bool package_spec_ok(const char *eco, const char *spec)
{
	size_t n = strlen(spec);

	if (n == 0 || n > 214 || spec[0] == '-' || spec[0] == '.' || spec[0] == '/' || spec[0] == '~')
		return false;
	if (strstr(spec, "://") || strncmp(spec, "git+", 4) == 0 || strncmp(spec, "git@", 4) == 0 ||
	    strncmp(spec, "hg+", 3) == 0 || strncmp(spec, "svn+", 4) == 0 || strncmp(spec, "bzr+", 4) == 0 ||
	    strncmp(spec, "file:", 5) == 0 || strncmp(spec, "link:", 5) == 0 ||
	    strncmp(spec, "github:", 7) == 0 || strncmp(spec, "gitlab:", 7) == 0 ||
	    strncmp(spec, "bitbucket:", 10) == 0 || strncmp(spec, "http:", 5) == 0 ||
	    strncmp(spec, "https:", 6) == 0 || strncmp(spec, "npm:", 4) == 0 ||
	    strncmp(spec, "workspace:", 10) == 0)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)spec[i];

		if (ch <= ' ' || ch >= 0x7F || strchr(";&|$`<>(){}*?!'\"\\#%", ch))
			return false;
		if (ch == '/') {
			/* only npm scopes: @scope/name */
			if (!(strcmp(eco, "npm") == 0 && spec[0] == '@' && !strchr(spec + i + 1, '/')))
				return false;
		}
		if (ch == ':' && strcmp(eco, "maven") != 0)
			return false;
	}
	if ((n > 4 && strcmp(spec + n - 4, ".tgz") == 0) || (n > 4 && strcmp(spec + n - 4, ".whl") == 0) ||
	    (n > 7 && strcmp(spec + n - 7, ".tar.gz") == 0) || (n > 4 && strcmp(spec + n - 4, ".zip") == 0))
		return false;
	return true;
}

/* The package name of a spec: strip versions and extras. */
static size_t package_name_len(const char *spec)
{
	size_t i = spec[0] == '@' ? 1 : 0;

	for (; spec[i]; i++)
		if (strchr("@=<>~![,", spec[i]))
			break;
	return i;
}

static int eval_install(ev *e)
{
	docket_policy_result *r = e->res;
	const docket_policy_call *c = e->call;
	const pol_pkg_eco *eco = NULL;
	bool matched;
	int d = name_rules(e, TK_NAME, DOCKET_TOOL_INSTALL_PACKAGES, &matched), error;
	const char *why = NULL;

	if (c->npackages == 0) {
		r->verdict = POL_DENY;
		return ev_add_reason(r, "bad_call", "no packages");
	}
	for (size_t i = 0; i < e->p->npkgs; i++)
		if (strcmp(e->p->pkgs[i].ecosystem, c->ecosystem) == 0)
			eco = &e->p->pkgs[i];
	for (size_t i = 0; i < c->npackages; i++) {
		const char *spec = c->packages[i];
		size_t nl;
		bool ok = false;

		if (!package_spec_ok(c->ecosystem, spec)) {
			d = POL_DENY;
			if ((error = ev_add_reason(r, "invalid_package_spec", "package spec %s rejected (options, URLs, paths, VCS specs and shell metacharacters are not allowed)", spec)) < 0)
				return error;
			continue;
		}
		nl = package_name_len(spec);
		if (eco) {
			for (size_t k = 0; k < eco->n && !ok; k++)
				ok = strcmp(eco->allow[k], "*") == 0 ||
				     (strlen(eco->allow[k]) == nl && strncmp(eco->allow[k], spec, nl) == 0);
			if (ok) {
				d = ev_max(d, POL_ALLOW);
			} else {
				d = ev_max(d, eco->decision);
				why = "not_in_allowlist";
			}
		} else if (!matched) {
			if (e->p->heuristics == HEUR_CLAUDE)
				d = ev_max(d, ev_mode_default(e, false, &why));
			else
				d = ev_max(d, ev_ask_or_deny(e)), why = "not_in_allowlist";
		}
	}
	if (d < 0)
		d = POL_ALLOW;
	return ev_conclude(e, d, why);
}

static bool claude_read_only_tool(const char *name)
{
	static const char *const ro[] = {
		"Glob", "Grep", "LS", "TodoWrite", "TodoRead", "NotebookRead", "ExitPlanMode",
		"Task", "Agent", "BashOutput", "KillShell", "ListMcpResourcesTool",
		"ReadMcpResourceTool", "update_plan", "view_image", "write_stdin", NULL
	};

	for (size_t i = 0; ro[i]; i++)
		if (strcmp(ro[i], name) == 0)
			return true;
	return false;
}

static int eval_other(ev *e)
{
	docket_policy_result *r = e->res;
	const docket_policy_call *c = e->call;
	bool matched;
	int kind = c->tool == CT_MCP ? TK_MCP : TK_NAME;
	int d = name_rules(e, kind, c->name, &matched);
	const char *why = NULL;

	if (d < 0) {
		if (e->p->heuristics == HEUR_CLAUDE)
			d = ev_mode_default(e, kind == TK_NAME && claude_read_only_tool(c->name), &why);
		else if (e->approval == AP_UNTRUSTED && kind == TK_MCP)
			d = POL_ASK, why = "not_known_safe";
		else
			d = POL_ALLOW, why = "no_rule";
		ev_add_match(r, -1, d, 0, 0, false);
	}
	return ev_conclude(e, d, why);
}

/* ---- entry ---- */

static void result_reset(docket_policy_result *r, const docket_policy *p)
{
	r->verdict = POL_ALLOW;
	r->sandbox = 0;
	r->policy = p;
	r->nreasons = 0;
	r->nmatches = 0;
	r->nsegs = 0;
	r->nwv = 0;
	r->has_amendment = false;
	r->amend_off = r->amend_n = 0;
	r->unsplit_reason = NULL;
	r->enforced = false;
	docket_buf_clear(&r->text);
}

void ev_setup(ev *ep, docket_policy_result *res, const docket_policy *p, const docket_policy_call *call,
	      const docket_policy_context *ctx)
{
	ev e;

	memset(&e, 0, sizeof(e));
	e.res = res;
	e.p = p;
	e.call = call;
	e.ctx = ctx;
	e.approval = ctx && ctx->approval ? ctx->approval : p->approval;
	if (!e.approval)
		e.approval = p->format == DOCKET_POLICY_CLAUDE ? AP_UNSET : AP_ON_REQUEST;
	e.gsandbox = ctx && ctx->approval ? ctx->granular_sandbox : true;
	e.grules = ctx && ctx->approval ? ctx->granular_rules : true;
	e.sandbox = ctx && ctx->sandbox ? ctx->sandbox : p->sandbox;
	if (!e.sandbox)
		e.sandbox = p->format == DOCKET_POLICY_CLAUDE ? SB_FULL_ACCESS :
			    p->format == DOCKET_POLICY_CODEX ? SB_READ_ONLY : SB_WORKSPACE_WRITE;
	if (ctx && ctx->fs_kind >= 0)
		e.fs_kind = ctx->fs_kind;
	else
		e.fs_kind = e.sandbox == SB_FULL_ACCESS ? FS_UNRESTRICTED :
			    e.sandbox == SB_EXTERNAL ? FS_EXTERNAL : FS_RESTRICTED;
	e.claude_version = ctx ? ctx->claude_version : 0;
	e.codex_version = ctx ? ctx->codex_version : 0;
	/* a version docket did not measure is decided as the nearest one it did */
	e.legacy = e.claude_version && claude_model_version(e.claude_version) <= POL_CLAUDE_LEGACY_MAX;
	e.mode = p->format == DOCKET_POLICY_CLAUDE ? pol_claude_mode(p, e.legacy) : p->mode;
	if (!e.mode)
		e.mode = MODE_DEFAULT;
	e.platform = ctx ? ctx->platform : PLAT_ANY;
	e.cwd = call->cwd && call->cwd[0] == '/' ? call->cwd : ctx ? ctx->cwd : NULL;
	e.home = ctx ? ctx->home : NULL;
	e.network_on = e.sandbox == SB_FULL_ACCESS || e.sandbox == SB_EXTERNAL ||
		       (ctx && ctx->network_access == 1) ||
		       ((!ctx || ctx->network_access < 0) && p->network_set && p->network_enabled);
	if (ctx && ctx->network_access == 0 && e.sandbox != SB_FULL_ACCESS)
		e.network_on = false;
	*ep = e;
}

int docket_policy_eval(docket_policy_result *res, const docket_policy *p,
		       const docket_policy_call *call, const docket_policy_context *ctx)
{
	ev e;
	int error;

	result_reset(res, p);
	if (!pol_finalized(p))
		return docket_error_set(DOCKET_EINVALID, "policy %s is not finalized", p->source);
	ev_setup(&e, res, p, call, ctx);
	switch (call->tool) {
	case CT_SHELL: error = ev_eval_shell(&e); break;
	case CT_READ: error = eval_paths(&e, false); break;
	case CT_WRITE:
	case CT_APPLY_PATCH: error = eval_paths(&e, true); break;
	case CT_NETWORK: error = eval_network(&e); break;
	case CT_RUN_CODE: error = eval_run_code(&e); break;
	case CT_INSTALL: error = eval_install(&e); break;
	default: error = eval_other(&e); break;
	}
	return error;
}
