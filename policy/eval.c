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

#include "policy.h"

#include "util/alloc.h"
#include "util/error.h"

#define PROMPT_CONFLICT_REASON "approval required by policy, but AskForApproval is set to Never"
#define REJECT_SANDBOX_REASON "approval required by policy, but AskForApproval::Granular.sandbox_approval is false"
#define REJECT_RULES_REASON "approval required by policy rule, but AskForApproval::Granular.rules is false"

typedef struct ev {
	docket_policy_result *res;
	const docket_policy *p;
	const docket_policy_call *call;
	const docket_policy_context *ctx;
	int approval;
	bool gsandbox, grules;
	int sandbox, fs_kind, mode, platform;
	const char *cwd, *home;
	bool used_complex;
	bool unsplit;
	bool network_on;
	uint32_t claude_version;  /* 0: unknown, the current rules */
	bool legacy;              /* Claude Code <= POL_CLAUDE_LEGACY_MAX */
} ev;

static int max_dec(int a, int b)
{
	return a > b ? a : b;
}

/* ---- result building ---- */

static int grow(void **v, size_t *cap, size_t need, size_t elem)
{
	size_t ncap;
	void *nv;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 32;
	while (ncap < need)
		ncap *= 2;
	if (ncap > SIZE_MAX / elem || !(nv = docket_realloc(*v, ncap * elem)))
		return docket_error_set(DOCKET_ENOMEM, "out of memory evaluating a policy");
	*v = nv;
	*cap = ncap;
	return 0;
}

static int push_words(docket_policy_result *r, const char *const *w, size_t n, size_t *off)
{
	int error;

	if ((error = grow((void **)&r->wv, &r->capwv, r->nwv + n, sizeof(*r->wv))) < 0)
		return error;
	*off = r->nwv;
	memcpy(r->wv + r->nwv, w, n * sizeof(*w));
	r->nwv += n;
	return 0;
}

static int add_segment(docket_policy_result *r, const char *const *w, size_t n)
{
	pol_segment *s;
	int error;

	if ((error = grow((void **)&r->segs, &r->capsegs, r->nsegs + 1, sizeof(*r->segs))) < 0)
		return error;
	s = &r->segs[r->nsegs];
	memset(s, 0, sizeof(*s));
	if ((error = push_words(r, w, n, &s->word_off)) < 0)
		return error;
	s->nwords = n;
	r->nsegs++;
	return 0;
}

static void add_match(docket_policy_result *r, int rule, int decision, size_t seg, size_t plen,
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

static int add_reason(docket_policy_result *r, const char *code, const char *fmt, ...) DOCKET_PRINTF(3, 4);

static int add_reason(docket_policy_result *r, const char *code, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	int error;

	if (r->nreasons >= POL_MAX_REASONS)
		return 0;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	r->reasons[r->nreasons].code = code;
	r->reasons[r->nreasons].text_off = r->text.len;
	if ((error = docket_buf_puts(&r->text, line)) < 0 || (error = docket_buf_putc(&r->text, '\0')) < 0)
		return error;
	r->nreasons++;
	return 0;
}

/* ---- Codex prefix rules ---- */

static void prefix_range(const docket_policy *p, const char *prog, size_t *lo_out, size_t *hi_out)
{
	size_t lo = 0, hi = p->nprefix;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(p->prefix[p->prefix_index[mid]].program, prog) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*lo_out = lo;
	while (lo < p->nprefix && strcmp(p->prefix[p->prefix_index[lo]].program, prog) == 0)
		lo++;
	*hi_out = lo;
}

static bool rule_rest_matches(const pol_prefix_rule *r, const char *const *argv, size_t argc)
{
	if (argc < r->nrest + 1)
		return false;
	for (size_t i = 0; i < r->nrest; i++) {
		bool ok = false;

		for (size_t k = 0; k < r->rest[i].n && !ok; k++)
			ok = strcmp(r->rest[i].alts[k], argv[i + 1]) == 0;
		if (!ok)
			return false;
	}
	return true;
}

static size_t match_program(const docket_policy *p, const char *prog, const char *const *argv,
			    size_t argc, bool resolved, pol_match *m, size_t cap, uint16_t seg)
{
	size_t lo, hi, n = 0;

	if (!p->prefix_index)
		return 0;
	prefix_range(p, prog, &lo, &hi);
	for (size_t i = lo; i < hi && n < cap; i++) {
		uint32_t ri = p->prefix_index[i];
		const pol_prefix_rule *r = &p->prefix[ri];

		if (!rule_rest_matches(r, argv, argc))
			continue;
		m[n].rule = (int)ri;
		m[n].decision = r->decision;
		m[n].segment = seg;
		m[n].prefix_len = (uint16_t)(r->nrest + 1);
		m[n].resolved = resolved;
		n++;
	}
	return n;
}

size_t pol_codex_matches(const docket_policy *p, const char *const *argv, size_t argc, bool resolve,
			 pol_match *m, size_t cap, uint16_t seg)
{
	size_t n;
	const char *base;
	const pol_host_exe *he;

	if (argc == 0)
		return 0;
	n = match_program(p, argv[0], argv, argc, false, m, cap, seg);
	if (n > 0 || !resolve || argv[0][0] != '/')
		return n;
	base = shell_basename(argv[0]);
	if (!*base)
		return 0;
	if ((he = pol_find_hostexe(p, base))) {
		bool listed = false;

		for (size_t i = 0; i < he->n && !listed; i++)
			listed = strcmp(he->paths[i], argv[0]) == 0;
		if (!listed)
			return 0;
	}
	return match_program(p, base, argv, argc, true, m, cap, seg);
}

/* ---- tool rules (Claude grammar) ---- */

static bool bash_spec_matches(const pol_tool_rule *t, const char *text, size_t len)
{
	switch (t->spec_kind) {
	case SPEC_NONE:
		return true;
	case SPEC_EXACT:
		return len == t->spec_len && memcmp(text, t->spec, len) == 0;
	case SPEC_PREFIX:
		if (len < t->spec_len || memcmp(text, t->spec, t->spec_len) != 0)
			return false;
		return len == t->spec_len || text[t->spec_len] == ' ' || t->spec_len == 0;
	case SPEC_GLOB:
		/* the literal text before the first '*' must match first */
		if (len < t->lit_len && !(t->lit_len >= 2 && len == t->lit_len - 1 &&
					   t->spec[t->lit_len - 1] == ' '))
			return false;
		if (memcmp(text, t->spec, t->lit_len < len ? t->lit_len : len) != 0)
			return false;
		if (str_glob_match(t->spec, t->spec_len, text, len))
			return true;
		/* "cmd *" also matches the bare "cmd" (as "cmd:*" does) */
		if (t->spec_len >= 2 && t->spec[t->spec_len - 1] == '*' && t->spec[t->spec_len - 2] == ' ')
			return str_glob_match(t->spec, t->spec_len - 2, text, len);
		return false;
	default:
		return false;
	}
}

static bool tool_kind_applies(const pol_tool_rule *t, int kind, const char *name)
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

/* ---- heuristics for unmatched shell segments ---- */

static int codex_unmatched(ev *e, const char *const *argv, size_t argc, const char **why)
{
	docket_policy_result *r = e->res;
	bool safe = safety_is_known_safe(argv, argc, e->platform, &r->scratch);

	if (safe && !e->used_complex && e->approval == AP_UNTRUSTED) {
		*why = "known_safe";
		return POL_ALLOW;
	}
	if (safety_is_dangerous(argv, argc, &r->scratch) && e->fs_kind != FS_EXTERNAL) {
		*why = "dangerous";
		return e->approval == AP_NEVER ? POL_DENY : POL_ASK;
	}
	switch (e->approval) {
	case AP_NEVER:
		*why = "sandboxed";
		return POL_ALLOW;
	case AP_UNTRUSTED:
		*why = "not_known_safe";
		return POL_ASK;
	default:
		if (e->fs_kind != FS_RESTRICTED) {
			*why = safe ? "known_safe" : "unrestricted";
			return POL_ALLOW;
		}
		if (e->call->sbperm != SBP_DEFAULT) {
			*why = "escalation_requested";
			return POL_ASK;
		}
		*why = safe ? "known_safe" : "sandboxed";
		return POL_ALLOW;
	}
}

static int mode_default(ev *e, bool read_only, const char **why)
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

static int claude_accept_edits_shell(ev *e, const char *const *argv, size_t argc, const char **why);

static int shell_unmatched(ev *e, const char *const *argv, size_t argc, const char **why)
{
	switch (e->p->heuristics) {
	case HEUR_CLAUDE: {
		bool safe = !e->unsplit && safety_is_known_safe(argv, argc, e->platform, &e->res->scratch);

		if (!safe && !e->unsplit && e->mode == MODE_ACCEPT_EDITS && claude_file_changing(argv, argc))
			return claude_accept_edits_shell(e, argv, argc, why);
		return mode_default(e, safe, why);
	}
	case HEUR_ASK:
		*why = "no_rule";
		return POL_ASK;
	case HEUR_ALLOW:
		*why = "no_rule";
		return POL_ALLOW;
	case HEUR_DENY:
		*why = "no_rule";
		return POL_DENY;
	default:
		return codex_unmatched(e, argv, argc, why);
	}
}

static bool argv_eq(const char *const *a, size_t an, const char *const *b, size_t bn)
{
	if (an != bn)
		return false;
	for (size_t i = 0; i < an; i++)
		if (strcmp(a[i], b[i]) != 0)
			return false;
	return true;
}

static bool command_granted(const ev *e, const char *const *argv, size_t argc)
{
	if (!e->ctx)
		return false;
	for (size_t i = 0; i < e->ctx->ngrants; i++)
		if (e->ctx->grants[i].argv &&
		    argv_eq(e->ctx->grants[i].argv, e->ctx->grants[i].argc, argv, argc))
			return true;
	return false;
}

/* Segment text for Claude's string rules: the words joined by spaces. */
static int seg_text(docket_buf *b, const char *const *w, size_t n)
{
	int error = 0;

	docket_buf_clear(b);
	for (size_t i = 0; i < n && error == 0; i++) {
		if (i)
			error = docket_buf_putc(b, ' ');
		if (error == 0)
			error = docket_buf_puts(b, w[i]);
	}
	if (error == 0 && !b->ptr)
		error = docket_buf_reserve(b, 1);
	return error;
}

enum { RULES_ALL = 0, RULES_WHOLE, RULES_DENY };

/* Apply Bash tool rules to `text` (which: RULES_WHOLE for a whole script,
 * RULES_DENY for deny rules only); returns the strictest decision or -1 if
 * none matched. */
static int bash_rules(ev *e, const char *text, size_t len, size_t seg, int which, bool *allow_rule)
{
	const docket_policy *p = e->p;
	bool whole_only = which == RULES_WHOLE;
	int dec = -1;

	for (size_t i = 0; i < p->ntools; i++) {
		const pol_tool_rule *t = &p->tools[i];

		if (!tool_kind_applies(t, TK_BASH, "Bash"))
			continue;
		if (which == RULES_DENY && t->decision != POL_DENY)
			continue;
		/* a piece-matching allow never allows an unsplit script */
		if (t->decision == POL_ALLOW && (e->unsplit || whole_only) &&
		    (t->spec_kind == SPEC_PREFIX || t->spec_kind == SPEC_GLOB))
			continue;
		if (whole_only && t->decision == POL_ALLOW && t->spec_kind != SPEC_EXACT)
			continue;
		if (!bash_spec_matches(t, text, len))
			continue;
		add_match(e->res, -2 - (int)i, t->decision, seg, 0, false);
		dec = max_dec(dec, t->decision);
		if (t->decision == POL_ALLOW && allow_rule)
			*allow_rule = true;
	}
	return dec;
}

/* ---- Claude Code's own rules around Bash (claude_eval.c has the tables) ---- */

static bool in_workspace(const ev *e, const char *path);
static bool path_rule_matches(ev *e, const pol_tool_rule *t, const char *path);

/* Bash rules on `words` joined, into r->tmp2 (text may live in r->tmp). */
static int words_rules(ev *e, const char *const *w, size_t n, size_t seg, int which, bool *allow_rule,
		       int *dec)
{
	int error;

	if ((error = seg_text(&e->res->tmp2, w, n)) < 0)
		return error;
	*dec = max_dec(*dec, bash_rules(e, e->res->tmp2.ptr, e->res->tmp2.len, seg, which, allow_rule));
	return 0;
}

/*
 * What Claude Code matches besides the segment as written: the command
 * behind timeout/nohup/time (every rule), behind env and NAME=VALUE (deny
 * rules only), and, from 2.1.198 on, the commands inside $(...) and `...`
 * (deny rules only). *out gets the strictest decision, -1 if none.
 */
static int claude_bash_rules(ev *e, const char *const *w, size_t n, const char *text, size_t seg,
			     int *out, bool *allow_rule)
{
	size_t skip = claude_wrapper_skip(w, n, false), skip_deny = claude_wrapper_skip(w, n, true);
	size_t pos = 0, start, len;
	const char *bare;
	int error, dec = -1;

	if (skip && (error = words_rules(e, w + skip, n - skip, seg, RULES_ALL, allow_rule, &dec)) < 0)
		return error;
	if (skip_deny > skip &&
	    (error = words_rules(e, w + skip_deny, n - skip_deny, seg, RULES_DENY, NULL, &dec)) < 0)
		return error;
	if (e->unsplit && (bare = claude_skip_assignments(text)) != text)
		dec = max_dec(dec, bash_rules(e, bare, strlen(bare), seg, RULES_DENY, NULL));
	while (!e->legacy && e->unsplit && claude_next_substitution(text, &pos, &start, &len)) {
		docket_buf *b = &e->res->tmp2;

		while (len && (text[start] == ' ' || text[start] == '\t'))
			start++, len--;
		while (len && (text[start + len - 1] == ' ' || text[start + len - 1] == '\t'))
			len--;
		docket_buf_clear(b);
		if ((error = docket_buf_put(b, text + start, len)) < 0 || (error = docket_buf_putc(b, '\0')) < 0)
			return error;
		bare = claude_skip_assignments(b->ptr);
		dec = max_dec(dec, bash_rules(e, bare, strlen(bare), seg, RULES_DENY, NULL));
	}
	*out = dec;
	return 0;
}

/* A Read deny rule that matches the normalised path, or what is under it
 * when it is a directory (`ls secrets` with a Read deny of secrets/ and all below); -1: none. */
static int read_deny(ev *e, const char *path, size_t seg)
{
	docket_buf *child = &e->res->tmp;

	docket_buf_clear(child);
	if (docket_buf_puts(child, path) < 0 || docket_buf_puts(child, "/-") < 0)
		return -1;
	for (size_t k = 0; k < e->p->ntools; k++) {
		const pol_tool_rule *t = &e->p->tools[k];

		if (t->decision == POL_DENY && tool_kind_applies(t, TK_READ, NULL) && t->kind != TK_ANY &&
		    (path_rule_matches(e, t, path) || path_rule_matches(e, t, child->ptr))) {
			add_match(e->res, -2 - (int)k, POL_DENY, seg, 0, false);
			return POL_DENY;
		}
	}
	return -1;
}

/*
 * The files a read-only command reads are checked as Read calls: a Read
 * deny rule denies the command, and a file outside the working directories
 * asks (unless a rule allowed the command).
 */
static int claude_file_args(ev *e, const char *const *w, size_t n, size_t seg, bool heuristic,
			    const char **why)
{
	docket_buf *b = &e->res->tmp3;
	int dec = -1;

	for (size_t i = 1; i < n; i++) {
		if (!claude_file_arg(w, n, i))
			continue;
		if (path_normalize(b, w[i], e->cwd, e->home) < 0) {
			docket_error_clear();
			continue;
		}
		if (read_deny(e, b->ptr, seg) == POL_DENY) {
			*why = "rule";
			return POL_DENY;
		}
		if (heuristic && !in_workspace(e, b->ptr)) {
			dec = POL_ASK;
			*why = "outside_workspace";
		}
	}
	return dec;
}

/* acceptEdits: touch/mkdir inside the project run, sensitive or outside paths ask. */
static int claude_accept_edits_shell(ev *e, const char *const *argv, size_t argc, const char **why)
{
	docket_buf *b = &e->res->tmp3;
	const char *root = e->ctx && e->ctx->roots.n ? e->ctx->roots.v[0] : e->cwd;

	for (size_t i = 1; i < argc; i++) {
		if (argv[i][0] == '-')
			continue;
		if (path_normalize(b, argv[i], e->cwd, e->home) < 0) {
			docket_error_clear();
			*why = "no_rule";
			return POL_ASK;
		}
		if (!in_workspace(e, b->ptr)) {
			*why = "outside_workspace";
			return POL_ASK;
		}
		if (root && claude_sensitive_path(b->ptr, root)) {
			*why = "sensitive_path";
			return POL_ASK;
		}
	}
	*why = "accept_edits";
	return POL_ALLOW;
}

static int eval_segment(ev *e, size_t g)
{
	docket_policy_result *r = e->res;
	pol_segment *s = &r->segs[g];
	const char *const *w = r->wv + s->word_off;
	size_t first = r->nmatches, n;
	int dec = -1;
	bool allow_rule = false;
	int error;

	n = pol_codex_matches(e->p, w, s->nwords, true, r->matches + r->nmatches,
			      POL_MAX_MATCHES - r->nmatches, (uint16_t)g);
	r->nmatches += n;
	for (size_t i = first; i < r->nmatches; i++) {
		dec = max_dec(dec, r->matches[i].decision);
		if (r->matches[i].decision == POL_ALLOW)
			allow_rule = true;
	}
	if (e->p->ntools) {
		const char *text;
		size_t len;
		int d;

		if (e->unsplit && e->call->argc == 3 && shell_script_of(e->call->argv, 3, NULL)) {
			text = e->call->argv[2];
			if (e->p->heuristics == HEUR_CLAUDE)
				text = claude_skip_time(text);
			len = strlen(text);
		} else {
			if ((error = seg_text(&r->tmp, w, s->nwords)) < 0)
				return error;
			text = r->tmp.ptr;
			len = r->tmp.len;
		}
		d = bash_rules(e, text, len, g, RULES_ALL, &allow_rule);
		dec = max_dec(dec, d);
		if (e->p->heuristics == HEUR_CLAUDE) {
			if ((error = claude_bash_rules(e, w, s->nwords, text, g, &d, &allow_rule)) < 0)
				return error;
			dec = max_dec(dec, d);
		}
	}
	s->policy_allow = allow_rule && dec == POL_ALLOW;
	if (dec < 0) {
		dec = shell_unmatched(e, w, s->nwords, &s->why);
		s->heuristic = true;
		add_match(r, -1, dec, g, 0, false);
	} else {
		s->why = "rule";
	}
	if (e->p->heuristics == HEUR_CLAUDE && !e->unsplit && dec < POL_DENY)
		dec = max_dec(dec, claude_file_args(e, w, s->nwords, g, s->heuristic, &s->why));
	if (dec == POL_ASK && command_granted(e, w, s->nwords)) {
		dec = POL_ALLOW;
		s->granted = true;
		s->why = "session_grant";
	}
	s->decision = dec;
	return 0;
}

/* Would adding allow-prefix `pr` make every segment allowed? (Codex) */
static bool prefix_would_allow_all(ev *e, const char *const *pr, size_t pn)
{
	docket_policy_result *r = e->res;

	for (size_t g = 0; g < r->nsegs; g++) {
		const pol_segment *s = &r->segs[g];
		const char *const *w = r->wv + s->word_off;
		bool hit = false;

		if (s->nwords >= pn) {
			const char *prog = w[0];

			hit = true;
			if (strcmp(prog, pr[0]) != 0) {
				const pol_host_exe *he;

				hit = prog[0] == '/' && strcmp(shell_basename(prog), pr[0]) == 0;
				if (hit && (he = pol_find_hostexe(e->p, pr[0]))) {
					bool listed = false;

					for (size_t i = 0; i < he->n; i++)
						listed = listed || strcmp(he->paths[i], prog) == 0;
					hit = listed;
				}
			}
			for (size_t i = 1; hit && i < pn; i++)
				hit = strcmp(w[i], pr[i]) == 0;
		}
		if (!hit && s->decision != POL_ALLOW)
			return false;
	}
	return true;
}

static bool any_policy_match(const docket_policy_result *r, int decision)
{
	for (size_t i = 0; i < r->nmatches; i++)
		if (r->matches[i].rule != -1 && (decision < 0 || r->matches[i].decision == decision))
			return true;
	return false;
}

static int set_amendment_words(docket_policy_result *r, const char *const *w, size_t n)
{
	int error;

	if ((error = push_words(r, w, n, &r->amend_off)) < 0)
		return error;
	r->amend_n = n;
	r->has_amendment = true;
	return 0;
}

static int first_heuristic(docket_policy_result *r, int decision)
{
	for (size_t i = 0; i < r->nmatches; i++)
		if (r->matches[i].rule == -1 && r->matches[i].decision == decision) {
			const pol_segment *s = &r->segs[r->matches[i].segment];

			/* the words are already in wv: refer to them (push_words may move wv) */
			r->amend_off = s->word_off;
			r->amend_n = s->nwords;
			r->has_amendment = true;
			return 0;
		}
	return 0;
}

static int codex_amendment(ev *e, int decision)
{
	docket_policy_result *r = e->res;
	const docket_policy_call *c = e->call;
	bool auto_ok = !e->used_complex;

	if (decision == POL_DENY)
		return 0;
	if (auto_ok && c->prefix_rule && c->nprefix_rule > 0 &&
	    !safety_prefix_suggestion_banned(c->prefix_rule, c->nprefix_rule) &&
	    !any_policy_match(r, -1) && prefix_would_allow_all(e, c->prefix_rule, c->nprefix_rule)) {
		if (decision == POL_ASK)
			return set_amendment_words(r, c->prefix_rule, c->nprefix_rule);
	}
	if (!auto_ok)
		return 0;
	if (decision == POL_ASK) {
		if (any_policy_match(r, POL_ASK))
			return 0;
		return first_heuristic(r, POL_ASK);
	}
	if (any_policy_match(r, -1))
		return 0;
	return first_heuristic(r, POL_ALLOW);
}

/* Codex's derive_forbidden_reason / derive_prompt_reason. */
static int codex_reasons(ev *e, int decision)
{
	docket_policy_result *r = e->res;
	const pol_match *best = NULL;
	int error;

	for (size_t i = 0; i < r->nmatches; i++) {
		const pol_match *m = &r->matches[i];

		if (m->rule < 0 || m->decision != decision)
			continue;
		if (!best || m->prefix_len > best->prefix_len)
			best = m;
	}
	docket_buf_clear(&r->tmp);
	if ((error = shell_join(&r->tmp, e->call->argv, e->call->argc)) < 0)
		return error;
	if (!r->tmp.ptr && (error = docket_buf_reserve(&r->tmp, 1)) < 0)
		return error;
	if (decision == POL_DENY) {
		if (best && e->p->prefix[best->rule].justification)
			return add_reason(r, "rule", "`%s` rejected: %s", r->tmp.ptr,
					  e->p->prefix[best->rule].justification);
		if (best) {
			const pol_segment *s = &r->segs[best->segment];

			docket_buf_clear(&r->tmp2);
			if ((error = shell_join(&r->tmp2, r->wv + s->word_off, best->prefix_len)) < 0)
				return error;
			if (best->resolved) {
				/* the rule's own program, not the resolved path */
				docket_buf_clear(&r->tmp2);
				if ((error = docket_buf_puts(&r->tmp2, e->p->prefix[best->rule].program)) < 0)
					return error;
				if (best->prefix_len > 1) {
					if ((error = docket_buf_putc(&r->tmp2, ' ')) < 0 ||
					    (error = shell_join(&r->tmp2, r->wv + s->word_off + 1, best->prefix_len - 1u)) < 0)
						return error;
				}
			}
			return add_reason(r, "rule", "`%s` rejected: policy forbids commands starting with `%s`",
					  r->tmp.ptr, r->tmp2.ptr ? r->tmp2.ptr : "");
		}
		/* a tool rule (Claude grammar) denied it: tool_rule_reason says which */
		for (size_t i = 0; i < r->nmatches; i++)
			if (r->matches[i].rule <= -2 && r->matches[i].rule > -100000 &&
			    r->matches[i].decision == POL_DENY)
				return 0;
		return add_reason(r, "heuristics", "`%s` rejected: blocked by policy", r->tmp.ptr);
	}
	if (decision == POL_ASK && best) {
		if (e->p->prefix[best->rule].justification)
			return add_reason(r, "rule", "`%s` requires approval: %s", r->tmp.ptr,
					  e->p->prefix[best->rule].justification);
		return add_reason(r, "rule", "`%s` requires approval by policy", r->tmp.ptr);
	}
	return 0;
}

static int tool_rule_reason(ev *e, int decision)
{
	docket_policy_result *r = e->res;

	for (size_t i = 0; i < r->nmatches; i++) {
		const pol_match *m = &r->matches[i];

		if (m->rule <= -2 && m->rule > -100000 && m->decision == decision) {
			const pol_tool_rule *t = &e->p->tools[-2 - m->rule];

			return add_reason(r, "rule", "%s by rule %s",
					  decision == POL_DENY ? "denied" : decision == POL_ASK ? "approval required" : "allowed",
					  t->text);
		}
	}
	return 0;
}

static const char *why_text(const char *why)
{
	if (!why)
		return "no rule matched";
	if (strcmp(why, "known_safe") == 0) return "known safe (read-only) command";
	if (strcmp(why, "dangerous") == 0) return "dangerous command";
	if (strcmp(why, "sandboxed") == 0) return "runs inside the sandbox";
	if (strcmp(why, "not_known_safe") == 0) return "not known to be safe and the approval mode is untrusted";
	if (strcmp(why, "unrestricted") == 0) return "no rule matched and the sandbox is unrestricted";
	if (strcmp(why, "escalation_requested") == 0) return "asks to run outside the sandbox";
	if (strcmp(why, "session_grant") == 0) return "approved for this session";
	if (strcmp(why, "bypass_permissions") == 0) return "permission mode bypassPermissions";
	if (strcmp(why, "dont_ask") == 0) return "permission mode dontAsk denies what is not allowed";
	if (strcmp(why, "plan_mode") == 0) return "plan mode: only read-only actions run without asking";
	if (strcmp(why, "read_only") == 0) return "read-only action";
	if (strcmp(why, "accept_edits") == 0) return "permission mode acceptEdits allows edits in the project";
	if (strcmp(why, "sensitive_path") == 0) return "writes under .git/ or .claude/ always ask";
	if (strcmp(why, "preapproved_host") == 0) return "a documentation host Claude Code's WebFetch reads without a rule";
	if (strcmp(why, "outside_writable_roots") == 0) return "writes outside the writable roots";
	if (strcmp(why, "protected_path") == 0) return "writes a protected path";
	if (strcmp(why, "outside_workspace") == 0) return "outside the workspace";
	if (strcmp(why, "network_disabled") == 0) return "network access is disabled";
	if (strcmp(why, "invalid_package_spec") == 0) return "package spec rejected";
	if (strcmp(why, "not_in_allowlist") == 0) return "not in the allowlist";
	if (strcmp(why, "language_not_allowed") == 0) return "language not allowed";
	return "no rule matched";
}

/* Approval post-processing (Codex prompt_is_rejected_by_policy). */
static int approval_gate(ev *e, int *dec)
{
	bool prompt_is_rule;

	if (*dec != POL_ASK)
		return 0;
	if (e->mode == MODE_DONT_ASK) {
		*dec = POL_DENY;
		return add_reason(e->res, "approval_mode", "approval required, but the permission mode is dontAsk");
	}
	prompt_is_rule = any_policy_match(e->res, POL_ASK);
	if (e->approval == AP_NEVER) {
		*dec = POL_DENY;
		return add_reason(e->res, "approval_mode", PROMPT_CONFLICT_REASON);
	}
	if (e->approval == AP_GRANULAR) {
		if (prompt_is_rule && !e->grules) {
			*dec = POL_DENY;
			return add_reason(e->res, "approval_mode", REJECT_RULES_REASON);
		}
		if (!prompt_is_rule && !e->gsandbox) {
			*dec = POL_DENY;
			return add_reason(e->res, "approval_mode", REJECT_SANDBOX_REASON);
		}
	}
	return 0;
}

/* The common end of the tool evaluators: the tool rule's reason, the
 * fallback reason `why` (may be NULL), the approval gate, the verdict. */
static int conclude(ev *e, int dec, const char *why)
{
	int error;

	if ((error = tool_rule_reason(e, dec)) < 0)
		return error;
	if (why && (error = add_reason(e->res, why, "%s", why_text(why))) < 0)
		return error;
	if ((error = approval_gate(e, &dec)) < 0)
		return error;
	e->res->verdict = dec;
	return 0;
}

static bool sandbox_unenforceable(const ev *e)
{
	return (e->sandbox == SB_READ_ONLY || e->sandbox == SB_WORKSPACE_WRITE) &&
	       (e->p->unsupported[e->platform] & CAP_SANDBOX);
}

static int unsupported_gate(ev *e, int *dec, bool escalated)
{
	if (*dec >= POL_DENY || e->res->sandbox != 1 || escalated || !sandbox_unenforceable(e))
		return 0;
	*dec = POL_UNSUPPORTED;
	/* nothing to approve, so no rule to propose: an allow rule would run it unsandboxed */
	e->res->has_amendment = false;
	e->res->amend_off = e->res->amend_n = 0;
	return add_reason(e->res, "unsupported", "the sandbox this call relies on cannot be enforced on this platform");
}

static int eval_shell(ev *e)
{
	docket_policy_result *r = e->res;
	const docket_policy_call *c = e->call;
	const char *flag, *script;
	int dec = POL_ALLOW, error;
	bool all_allow = true;

	if (c->argc == 0) {
		r->verdict = POL_DENY;
		return add_reason(r, "bad_call", "empty command");
	}
	script = shell_script_of(c->argv, c->argc, &flag);
	if (script && e->p->heuristics == HEUR_CLAUDE)
		script = claude_skip_time(script);
	if (script) {
		if ((error = shell_split_script(&r->split, script, strlen(script))) < 0)
			return error;
		if (r->split.status == SHELL_PLAIN ||
		    (r->split.status == SHELL_HEREDOC && e->p->heredoc_prefix)) {
			e->used_complex = r->split.status == SHELL_HEREDOC;
			for (size_t g = 0; g < r->split.nsegs; g++) {
				size_t a = r->split.seg_start[g], b = r->split.seg_start[g + 1];
				pol_segment *s;

				if ((error = grow((void **)&r->segs, &r->capsegs, r->nsegs + 1, sizeof(*r->segs))) < 0 ||
				    (error = grow((void **)&r->wv, &r->capwv, r->nwv + (b - a), sizeof(*r->wv))) < 0)
					return error;
				s = &r->segs[r->nsegs++];
				memset(s, 0, sizeof(*s));
				s->word_off = r->nwv;
				s->nwords = b - a;
				for (size_t k = a; k < b; k++)
					r->wv[r->nwv++] = r->split.text.ptr + r->split.word_off[k];
			}
		} else if (r->split.status == SHELL_COMPLEX || r->split.status == SHELL_HEREDOC) {
			e->unsplit = true;
			r->unsplit_reason = r->split.status == SHELL_HEREDOC ? "heredoc" : r->split.reason;
		}
	}
	if (r->nsegs == 0 && (error = add_segment(r, c->argv, c->argc)) < 0)
		return error;

	for (size_t g = 0; g < r->nsegs; g++) {
		if ((error = eval_segment(e, g)) < 0)
			return error;
		dec = max_dec(dec, r->segs[g].decision);
		all_allow = all_allow && r->segs[g].policy_allow;
	}
	/* deny/ask rules (and exact allows) also see the whole script */
	if (script && e->p->ntools && r->nsegs > 1) {
		bool whole_allow = false;
		int d = bash_rules(e, script, strlen(script), 0xFFFF, RULES_WHOLE, &whole_allow);

		if (d == POL_ALLOW && whole_allow) {
			for (size_t g = 0; g < r->nsegs; g++)
				if (r->segs[g].decision == POL_ASK && r->segs[g].heuristic)
					r->segs[g].decision = POL_ALLOW;
			dec = POL_ALLOW;
			for (size_t g = 0; g < r->nsegs; g++)
				dec = max_dec(dec, r->segs[g].decision);
			all_allow = true;
		} else if (d > POL_ALLOW) {
			dec = max_dec(dec, d);
		}
	}
	if (dec == POL_ASK && command_granted(e, c->argv, c->argc)) {
		bool only_asks = true;

		for (size_t g = 0; g < r->nsegs; g++)
			only_asks = only_asks && r->segs[g].decision <= POL_ASK;
		if (only_asks) {
			dec = POL_ALLOW;
			if ((error = add_reason(r, "session_grant", "approved for this session")) < 0)
				return error;
		}
	}
	r->sandbox = all_allow ? 2 : (e->sandbox == SB_READ_ONLY || e->sandbox == SB_WORKSPACE_WRITE) ? 1 : 0;
	if (dec == POL_ASK || dec == POL_DENY) {
		if ((error = codex_reasons(e, dec)) < 0 || (error = tool_rule_reason(e, dec)) < 0)
			return error;
	}
	if (r->unsplit_reason &&
	    (error = add_reason(r, "not_split", "script not split into segments (%s)", r->unsplit_reason)) < 0)
		return error;
	/* one summary reason per distinct heuristic */
	for (size_t g = 0; g < r->nsegs; g++) {
		const pol_segment *s = &r->segs[g];
		bool seen = false;

		if (!s->heuristic && !s->granted)
			continue;
		for (size_t k = 0; k < g; k++)
			seen = seen || (r->segs[k].why && s->why && strcmp(r->segs[k].why, s->why) == 0);
		if (!seen && (error = add_reason(r, s->why, "%s", why_text(s->why))) < 0)
			return error;
	}
	if (e->p->format == DOCKET_POLICY_CODEX || e->p->heuristics == HEUR_CODEX)
		if ((error = codex_amendment(e, dec)) < 0)
			return error;
	if ((error = approval_gate(e, &dec)) < 0)
		return error;
	if ((error = unsupported_gate(e, &dec, c->sbperm != SBP_DEFAULT)) < 0)
		return error;
	r->verdict = dec;
	return 0;
}

/* ---- paths ---- */

static const char *project_root(const ev *e)
{
	if (e->ctx && e->ctx->roots.n)
		return e->ctx->roots.v[0];
	return e->cwd;
}

static bool path_rule_matches(ev *e, const pol_tool_rule *t, const char *path)
{
	docket_buf *b = &e->res->tmp2;
	const char *base = NULL;

	if (t->spec_kind == SPEC_NONE)
		return true;
	if (t->spec_kind != SPEC_PATH)
		return false;
	docket_buf_clear(b);
	switch (t->anchor) {
	case ANCHOR_ROOT: base = ""; break;
	case ANCHOR_HOME: base = e->home; break;
	case ANCHOR_PROJECT: base = project_root(e); break;
	default: base = e->cwd; break;
	}
	if (!base)
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
	if (docket_buf_puts(b, base) < 0)
		return false;
	if (b->len > 0 && b->ptr[b->len - 1] == '/')
		b->len--;
	if (t->anchor == ANCHOR_NONE && docket_buf_puts(b, "/**") < 0)
		return false;
	if (docket_buf_putc(b, '/') < 0 || docket_buf_put(b, t->spec, t->spec_len) < 0)
		return false;
	return path_glob_match(b->ptr, b->len, path);
}

static bool in_workspace(const ev *e, const char *path)
{
	if (e->cwd && path_is_under(path, e->cwd))
		return true;
	if (e->ctx)
		for (size_t i = 0; i < e->ctx->roots.n; i++)
			if (path_is_under(path, e->ctx->roots.v[i]))
				return true;
	for (size_t i = 0; i < e->p->additional_dirs.n; i++)
		if (path_is_under(path, e->p->additional_dirs.v[i]))
			return true;
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
		if (e->ctx->grants[i].path && path_is_under(path, e->ctx->grants[i].path))
			return true;
	return false;
}

static int ask_or_deny(const ev *e)
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
	if (strcmp(t->name, "Write") == 0 && t->spec_kind != SPEC_NONE)
		return true;
	return t->spec_kind == SPEC_NONE && strcmp(t->name, "Edit") == 0 && e->call->name &&
	       strcmp(e->call->name, "Write") == 0;
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
	const char *why_all = NULL;
	bool all_rule_allow = c->npaths > 0;

	if (c->npaths == 0) {
		r->verdict = POL_DENY;
		return add_reason(r, "bad_call", "no path");
	}
	for (size_t i = 0; i < c->npaths; i++) {
		const char *path;
		int d = -1;
		const char *why = NULL;
		bool rule_allow = false;

		if (path_normalize(&r->tmp, c->paths[i], e->cwd, e->home) < 0) {
			docket_error_clear();
			r->verdict = POL_DENY;
			return add_reason(r, "bad_path", "cannot resolve path %s (relative, with no cwd)", c->paths[i]);
		}
		/* keep the normalised path for the rest of this loop */
		if ((error = docket_buf_puts(&r->text, r->tmp.ptr)) < 0 || (error = docket_buf_putc(&r->text, '\0')) < 0)
			return error;
		path = r->text.ptr + r->text.len - r->tmp.len - 1;
		for (size_t k = 0; k < e->p->ntools; k++) {
			const pol_tool_rule *t = &e->p->tools[k];

			if (!tool_kind_applies(t, kind, NULL) || claude_rule_inert(e, t))
				continue;
			if (!path_rule_matches(e, t, path))
				continue;
			add_match(r, -2 - (int)k, t->decision, i, 0, false);
			d = max_dec(d, t->decision);
			if (t->decision == POL_ALLOW)
				rule_allow = true;
		}
		if (d < 0) {
			rule_allow = false;
			if (e->p->heuristics == HEUR_CLAUDE) {
				bool inside = in_workspace(e, path);

				if (!write)
					d = mode_default(e, inside, &why);
				else if (e->mode == MODE_ACCEPT_EDITS && inside && claude_sensitive(e, path))
					d = POL_ASK, why = "sensitive_path";
				else if (e->mode == MODE_ACCEPT_EDITS && inside)
					d = POL_ALLOW, why = "accept_edits";
				else
					d = mode_default(e, false, &why);
				if (!inside && d == POL_ASK && !write)
					why = "outside_workspace";
			} else if (write) {
				if (sandbox_writable(e, path, &why))
					d = e->approval == AP_UNTRUSTED ? POL_ASK : POL_ALLOW, why = d ? "not_known_safe" : "sandboxed";
				else
					d = ask_or_deny(e);
			} else if (e->p->readable.n) {
				bool ok = false;

				for (size_t k = 0; k < e->p->readable.n && !ok; k++)
					ok = path_is_under(path, e->p->readable.v[k]);
				d = ok ? POL_ALLOW : ask_or_deny(e);
				why = ok ? "read_only" : "outside_workspace";
			} else {
				d = POL_ALLOW;
				why = "read_only";
			}
			add_match(r, -1, d, i, 0, false);
		} else if (write && d == POL_ALLOW && e->p->heuristics != HEUR_CLAUDE &&
			   !sandbox_writable(e, path, &why)) {
			/* an allow rule does not widen the sandbox's protected paths */
			if (strcmp(why, "protected_path") == 0)
				d = ask_or_deny(e);
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
		dec = max_dec(dec, d);
	}
	r->sandbox = all_rule_allow ? 2 : (e->sandbox == SB_READ_ONLY || e->sandbox == SB_WORKSPACE_WRITE) ? 1 : 0;
	return conclude(e, dec, why_all);
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
		add_match(r, -100000 - (int)i, n->decision, 0, 0, false);
		d = max_dec(d, n->decision);
		host_rule = true;
	}
	for (size_t k = 0; k < e->p->ntools; k++) {
		const pol_tool_rule *t = &e->p->tools[k];

		if (!tool_kind_applies(t, TK_WEBFETCH, NULL))
			continue;
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
		add_match(r, -2 - (int)k, t->decision, 0, 0, false);
		d = max_dec(d, t->decision);
	}
	if (d < 0) {
		if (e->p->heuristics == HEUR_CLAUDE && claude_preapproved_url(c->host, c->url_path)) {
			d = POL_ALLOW;
			why = "preapproved_host";
		} else if (e->p->heuristics == HEUR_CLAUDE) {
			d = mode_default(e, false, &why);
		} else if (e->network_on) {
			d = POL_ALLOW;
			why = "network_enabled";
		} else {
			d = ask_or_deny(e);
			why = "network_disabled";
		}
		add_match(r, -1, d, 0, 0, false);
	}
	if ((error = tool_rule_reason(e, d)) < 0)
		return error;
	for (size_t i = 0; i < r->nmatches; i++)
		if (r->matches[i].rule <= -100000 && r->matches[i].decision == d) {
			const pol_net_rule *n = &e->p->net[-100000 - r->matches[i].rule];

			if ((error = add_reason(r, "rule", "%s by rule %s%s%s",
						d == POL_DENY ? "denied" : d == POL_ASK ? "approval required" : "allowed",
						n->text,
						n->justification ? ": " : "",
						n->justification ? n->justification : "")) < 0)
				return error;
			break;
		}
	if (why && (error = add_reason(r, why, "%s", why_text(why))) < 0)
		return error;
	if ((error = approval_gate(e, &d)) < 0)
		return error;
	if (host_rule && d == POL_ALLOW && (e->p->unsupported[e->platform] & CAP_NETWORK_FILTER)) {
		d = POL_UNSUPPORTED;
		if ((error = add_reason(r, "unsupported", "host filtering cannot be enforced on this platform")) < 0)
			return error;
	}
	r->verdict = d;
	return 0;
}

/* ---- run_code, install_packages, other tools ---- */

static int name_rules(ev *e, int kind, const char *name, bool *matched)
{
	int d = -1;

	*matched = false;
	for (size_t k = 0; k < e->p->ntools; k++) {
		const pol_tool_rule *t = &e->p->tools[k];

		if (!tool_kind_applies(t, kind, name))
			continue;
		if (t->spec_kind != SPEC_NONE)
			continue;
		add_match(e->res, -2 - (int)k, t->decision, 0, 0, false);
		d = max_dec(d, t->decision);
		*matched = true;
	}
	return d;
}

static int eval_run_code(ev *e)
{
	docket_policy_result *r = e->res;
	bool matched;
	int d = name_rules(e, TK_NAME, "run_code", &matched), error;
	const char *why = NULL;

	if (e->p->languages_set) {
		bool ok = false;

		for (size_t i = 0; i < e->p->languages.n && !ok; i++)
			ok = strcmp(e->p->languages.v[i], e->call->language) == 0;
		if (!ok) {
			d = max_dec(d, ask_or_deny(e));
			why = "language_not_allowed";
		} else if (d < 0) {
			d = POL_ALLOW;
			why = "sandboxed";
		}
	}
	if (d < 0) {
		if (e->p->heuristics == HEUR_CLAUDE)
			d = mode_default(e, false, &why);
		else
			d = e->approval == AP_UNTRUSTED ? POL_ASK : POL_ALLOW, why = d ? "not_known_safe" : "sandboxed";
	}
	r->sandbox = (e->sandbox == SB_READ_ONLY || e->sandbox == SB_WORKSPACE_WRITE) ? 1 : 0;
	if ((error = tool_rule_reason(e, d)) < 0)
		return error;
	if (why && (error = add_reason(r, why, "%s", why_text(why))) < 0)
		return error;
	if ((error = approval_gate(e, &d)) < 0 || (error = unsupported_gate(e, &d, false)) < 0)
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
	int d = name_rules(e, TK_NAME, "install_packages", &matched), error;
	const char *why = NULL;

	if (c->npackages == 0) {
		r->verdict = POL_DENY;
		return add_reason(r, "bad_call", "no packages");
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
			if ((error = add_reason(r, "invalid_package_spec", "package spec %s rejected (options, URLs, paths, VCS specs and shell metacharacters are not allowed)", spec)) < 0)
				return error;
			continue;
		}
		nl = package_name_len(spec);
		if (eco) {
			for (size_t k = 0; k < eco->n && !ok; k++)
				ok = strcmp(eco->allow[k], "*") == 0 ||
				     (strlen(eco->allow[k]) == nl && strncmp(eco->allow[k], spec, nl) == 0);
			if (ok) {
				d = max_dec(d, POL_ALLOW);
			} else {
				d = max_dec(d, eco->decision);
				why = "not_in_allowlist";
			}
		} else if (!matched) {
			if (e->p->heuristics == HEUR_CLAUDE)
				d = max_dec(d, mode_default(e, false, &why));
			else
				d = max_dec(d, ask_or_deny(e)), why = "not_in_allowlist";
		}
	}
	if (d < 0)
		d = POL_ALLOW;
	return conclude(e, d, why);
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
			d = mode_default(e, kind == TK_NAME && claude_read_only_tool(c->name), &why);
		else if (e->approval == AP_UNTRUSTED && kind == TK_MCP)
			d = POL_ASK, why = "not_known_safe";
		else
			d = POL_ALLOW, why = "no_rule";
		add_match(r, -1, d, 0, 0, false);
	}
	return conclude(e, d, why);
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
	docket_buf_clear(&r->text);
}

int docket_policy_eval(docket_policy_result *res, const docket_policy *p,
		       const docket_policy_call *call, const docket_policy_context *ctx)
{
	ev e;
	int error;

	memset(&e, 0, sizeof(e));
	result_reset(res, p);
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
	e.legacy = e.claude_version && e.claude_version <= POL_CLAUDE_LEGACY_MAX;
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

	switch (call->tool) {
	case CT_SHELL: error = eval_shell(&e); break;
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
