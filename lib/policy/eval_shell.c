/* SPDX-License-Identifier: Apache-2.0 */
/*
 * eval_shell.c: the shell family of the evaluator (eval.h). A script is
 * split into segments; each segment gets the decisions of the Codex prefix
 * rules and the Bash tool rules that match it (Claude Code's wrappers,
 * substitutions and file arguments included), else the heuristics'; the
 * strictest segment wins, then the whole script meets the deny and ask
 * rules, the session grants, the approval gate and the sandbox gate.
 */
#include <string.h>

#include "eval.h"

#include "util/alloc.h"
#include "util/error.h"
#include "util/tool.h"

/* ---- Codex prefix rules ---- */

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

	if (!pol_program_rules(p, prog, &lo, &hi))
		return 0;
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

/*
 * Codex's program name of a path (Rust Path::file_name): the last component,
 * trailing slashes dropped; NULL for none (`/`, `.`, `..`, `dir/..`).
 */
static const char *codex_file_name(const char *prog, size_t *len)
{
	size_t end = strlen(prog), start;

	while (end > 0 && prog[end - 1] == '/')
		end--;
	start = end;
	while (start > 0 && prog[start - 1] != '/')
		start--;
	*len = end - start;
	if (*len == 0 || (*len == 1 && prog[start] == '.') || (*len == 2 && memcmp(prog + start, "..", 2) == 0))
		return NULL;
	return prog + start;
}

bool pol_codex_resolve(char *out, size_t cap, const char *prog, const char *cwd)
{
	size_t n = 0;
	const char *parts[2] = { prog[0] == '/' ? NULL : cwd, prog };

	if (!parts[0] && prog[0] != '/')
		return false;
	/* lexical: `.` dropped, `..` pops a component, as Codex's absolute paths */
	for (int k = 0; k < 2; k++) {
		const char *s = parts[k];

		if (!s)
			continue;
		while (*s) {
			const char *e;
			size_t len;

			while (*s == '/')
				s++;
			e = s;
			while (*e && *e != '/')
				e++;
			len = (size_t)(e - s);
			if (len == 0 || (len == 1 && s[0] == '.')) {
				/* nothing */
			} else if (len == 2 && s[0] == '.' && s[1] == '.') {
				while (n > 0 && out[n - 1] != '/')
					n--;
				if (n > 0)
					n--;
			} else {
				if (n + 1 + len + 1 > cap)
					return false;
				out[n++] = '/';
				memcpy(out + n, s, len);
				n += len;
			}
			s = e;
		}
	}
	if (n == 0) {
		if (cap < 2)
			return false;
		out[n++] = '/';
	}
	out[n] = '\0';
	return true;
}

size_t pol_codex_matches_at(const docket_policy *p, const char *const *argv, size_t argc, bool resolve,
			    const char *cwd, pol_match *m, size_t cap, uint16_t seg)
{
	size_t n, blen;
	char base[256];
	const char *b;
	const pol_host_exe *he;

	if (argc == 0)
		return 0;
	n = match_program(p, argv[0], argv, argc, false, m, cap, seg);
	/* Codex resolves any program spelled as a path, relative ones against the cwd */
	if (n > 0 || !resolve || !strchr(argv[0], '/'))
		return n;
	if (!(b = codex_file_name(argv[0], &blen)) || blen >= sizeof(base))
		return 0;
	memcpy(base, b, blen);
	base[blen] = '\0';
	if ((he = pol_find_hostexe(p, base))) {
		char abs[4096];
		bool listed = false;

		if (!pol_codex_resolve(abs, sizeof(abs), argv[0], cwd))
			return 0;
		for (size_t i = 0; i < he->n && !listed; i++)
			listed = strcmp(he->paths[i], abs) == 0;
		if (!listed)
			return 0;
	}
	return match_program(p, base, argv, argc, true, m, cap, seg);
}

size_t pol_codex_matches(const docket_policy *p, const char *const *argv, size_t argc, bool resolve,
			 pol_match *m, size_t cap, uint16_t seg)
{
	return pol_codex_matches_at(p, argv, argc, resolve, NULL, m, cap, seg);
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
		*why = ev_allowed_why(e);
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

static int claude_accept_edits_shell(ev *e, const char *const *argv, size_t argc, const char **why);

static int shell_unmatched(ev *e, const char *const *argv, size_t argc, const char **why)
{
	switch (e->p->heuristics) {
	case HEUR_CLAUDE: {
		bool safe = !e->unsplit && claude_read_only(argv, argc);

		if (!safe && !e->unsplit && e->mode == MODE_ACCEPT_EDITS && claude_file_changing(argv, argc))
			return claude_accept_edits_shell(e, argv, argc, why);
		return ev_mode_default(e, safe, why);
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
	const pol_rule_list *l = pol_tools_of(p, TK_BASH);
	bool whole_only = which == RULES_WHOLE;
	int dec = -1;

	for (size_t j = 0; j < l->n; j++) {
		uint32_t i = l->v[j];
		const pol_tool_rule *t = &p->tools[i];

		/* the first byte rejects most rules before anything else is read */
		if (l->lead[j] && (len == 0 || (unsigned char)text[0] != l->lead[j]))
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
		ev_add_match(e->res, -2 - (int)i, t->decision, seg, 0, false);
		dec = ev_max(dec, t->decision);
		if (t->decision == POL_ALLOW && allow_rule)
			*allow_rule = true;
	}
	return dec;
}

int ev_bash_rules(ev *e, const char *text, size_t len, bool *allow_rule)
{
	return bash_rules(e, text, len, 0xFFFF, RULES_ALL, allow_rule);
}

bool ev_command_granted(const ev *e, const char *const *argv, size_t argc)
{
	return command_granted(e, argv, argc);
}

/* ---- Claude Code's own rules around Bash (claude_eval.c has the tables) ---- */

bool ev_in_workspace(const ev *e, const char *path);
bool ev_path_rule_matches(ev *e, const pol_tool_rule *t, const char *path);

/* Bash rules on `words` joined, into r->tmp2 (text may live in r->tmp). */
static int words_rules(ev *e, const char *const *w, size_t n, size_t seg, int which, bool *allow_rule,
		       int *dec)
{
	int error;

	if ((error = seg_text(&e->res->tmp2, w, n)) < 0)
		return error;
	*dec = ev_max(*dec, bash_rules(e, e->res->tmp2.ptr, e->res->tmp2.len, seg, which, allow_rule));
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
		dec = ev_max(dec, bash_rules(e, bare, strlen(bare), seg, RULES_DENY, NULL));
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
		dec = ev_max(dec, bash_rules(e, bare, strlen(bare), seg, RULES_DENY, NULL));
	}
	*out = dec;
	return 0;
}

/* A Read (kind TK_READ) or Edit (TK_EDIT) deny rule with a path that matches the
 * normalised path, or what is under it when it is a directory (`ls secrets`
 * with a Read deny of secrets/ and all below); -1: none. */
static int path_deny(ev *e, const char *path, size_t seg, int kind)
{
	docket_buf *child = &e->res->tmp;

	docket_buf_clear(child);
	if (docket_buf_puts(child, path) < 0 || docket_buf_puts(child, "/-") < 0)
		return -1;
	const pol_rule_list *l = pol_tools_of(e->p, kind);

	for (size_t j = 0; j < l->n; j++) {
		uint32_t k = l->v[j];
		const pol_tool_rule *t = &e->p->tools[k];

		if (t->decision == POL_DENY && t->kind != TK_ANY &&
		    (kind == TK_READ || (t->spec_kind == SPEC_PATH && strcmp(t->name, DOCKET_TOOL_CLAUDE_EDIT) == 0)) &&
		    (ev_path_rule_matches(e, t, path) || ev_path_rule_matches(e, t, child->ptr))) {
			ev_add_match(e->res, -2 - (int)k, POL_DENY, seg, 0, false);
			return POL_DENY;
		}
	}
	return -1;
}

/*
 * The files a read-only command reads are checked as Read calls: a Read
 * deny rule denies the command, and a file outside the working directories
 * asks (unless a rule allowed the command, or the mode is bypassPermissions).
 * The operands of a file-changing command (touch, mkdir, rm ...) meet the
 * Edit(path) deny rules (Claude Code 2.1.332).
 */
static int claude_file_args(ev *e, const char *const *w, size_t n, size_t seg, bool heuristic,
			    const char **why)
{
	docket_buf *b = &e->res->tmp3;
	bool changing = claude_file_changing(w, n);
	int dec = -1;

	if (!changing && !claude_file_reader(w, n))
		return dec;   /* no operand of it is a file it reads */
	for (size_t i = 1; i < n; i++) {
		if (changing ? w[i][0] == '-' : !claude_file_arg(w, n, i))
			continue;
		if (path_normalize(b, w[i], e->cwd, e->home) < 0) {
			docket_error_clear();
			continue;
		}
		if (path_deny(e, b->ptr, seg, changing ? TK_EDIT : TK_READ) == POL_DENY) {
			*why = "rule";
			return POL_DENY;
		}
		if (heuristic && !changing && e->mode != MODE_BYPASS && !ev_in_workspace(e, b->ptr)) {
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
		if (claude_path_climbs(argv[i])) {
			*why = "cd_climbs";
			return POL_ASK;
		}
		if (path_normalize(b, argv[i], e->cwd, e->home) < 0) {
			docket_error_clear();
			*why = "no_rule";
			return POL_ASK;
		}
		if (!ev_in_workspace(e, b->ptr)) {
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

	n = pol_codex_matches_at(e->p, w, s->nwords, true, e->cwd, r->matches + r->nmatches,
				 POL_MAX_MATCHES - r->nmatches, (uint16_t)g);
	r->nmatches += n;
	for (size_t i = first; i < r->nmatches; i++) {
		dec = ev_max(dec, r->matches[i].decision);
		if (r->matches[i].decision == POL_ALLOW)
			allow_rule = true;
	}
	if (e->p->ntools) {
		const char *text;
		size_t len;
		int d;

		if (e->unsplit && e->call->argc == 3 && shell_script_of(e->call->argv, 3, NULL)) {
			text = e->p->heuristics == HEUR_CLAUDE ? r->claude_script.ptr : e->call->argv[2];
			len = strlen(text);
		} else {
			if ((error = seg_text(&r->tmp, w, s->nwords)) < 0)
				return error;
			text = r->tmp.ptr;
			len = r->tmp.len;
		}
		d = bash_rules(e, text, len, g, RULES_ALL, &allow_rule);
		dec = ev_max(dec, d);
		if (e->p->heuristics == HEUR_CLAUDE) {
			if ((error = claude_bash_rules(e, w, s->nwords, text, g, &d, &allow_rule)) < 0)
				return error;
			dec = ev_max(dec, d);
		}
	}
	s->policy_allow = allow_rule && dec == POL_ALLOW;
	if (dec < 0) {
		dec = shell_unmatched(e, w, s->nwords, &s->why);
		s->heuristic = true;
		ev_add_match(r, -1, dec, g, 0, false);
	} else {
		s->why = "rule";
	}
	if (e->p->heuristics == HEUR_CLAUDE && !e->unsplit && dec < POL_DENY)
		dec = ev_max(dec, claude_file_args(e, w, s->nwords, g, s->heuristic, &s->why));
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

static int set_amendment_words(docket_policy_result *r, const char *const *w, size_t n)
{
	int error;

	if ((error = ev_push_words(r, w, n, &r->amend_off)) < 0)
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
	    !ev_any_policy_match(r, -1) && prefix_would_allow_all(e, c->prefix_rule, c->nprefix_rule)) {
		if (decision == POL_ASK)
			return set_amendment_words(r, c->prefix_rule, c->nprefix_rule);
	}
	if (!auto_ok)
		return 0;
	if (decision == POL_ASK) {
		if (ev_any_policy_match(r, POL_ASK))
			return 0;
		return first_heuristic(r, POL_ASK);
	}
	if (ev_any_policy_match(r, -1))
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
			return ev_add_reason(r, "rule", "`%s` rejected: %s", r->tmp.ptr,
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
			return ev_add_reason(r, "rule", "`%s` rejected: policy forbids commands starting with `%s`",
					  r->tmp.ptr, r->tmp2.ptr ? r->tmp2.ptr : "");
		}
		/* a tool rule (Claude grammar) denied it: tool_rule_reason says which */
		for (size_t i = 0; i < r->nmatches; i++)
			if (r->matches[i].rule <= -2 && r->matches[i].rule > -100000 &&
			    r->matches[i].decision == POL_DENY)
				return 0;
		return ev_add_reason(r, "heuristics", "`%s` rejected: blocked by policy", r->tmp.ptr);
	}
	if (decision == POL_ASK && best) {
		if (e->p->prefix[best->rule].justification)
			return ev_add_reason(r, "rule", "`%s` requires approval: %s", r->tmp.ptr,
					  e->p->prefix[best->rule].justification);
		return ev_add_reason(r, "rule", "`%s` requires approval by policy", r->tmp.ptr);
	}
	return 0;
}

/*
 * Does Codex split this script as docket's splitter (shell.c) did? Codex
 * splits with tree-sitter-bash (parse_shell_lc_plain_commands) and gives up
 * on more spellings than shell.c: a command name that is quoted or glued to
 * a quote (`"git" push`, `g"it"`), a backslash anywhere outside single quotes
 * (`\echo`, `a\ b`, `"a\"b"`; a line continuation is fine), a word holding
 * `~ { } [ ] ^ # ? *` or starting with `=`. Measured against codex-cli 0.169.0 and 0.171.0
 * (tests/realclient/codex_diff_shell.py); such a script is left whole.
 */
static const char *codex_unsplit_reason(const char *s)
{
	bool in_word = false, name = false, at_cmd = true;
	char q = 0;

	for (; *s; s++) {
		char c = *s;

		if (q == '\'') {
			q = c == '\'' ? 0 : q;
			continue;
		}
		if (q == '"') {
			if (c == '\\')
				return "escape";
			q = c == '"' ? 0 : q;
			continue;
		}
		if (c == '\\' && s[1] == '\n') {  /* a line continuation */
			s++;
			continue;
		}
		if (c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '&' || c == '|') {
			if (in_word && name)
				at_cmd = false;
			if (c != ' ' && c != '\t')
				at_cmd = true;
			in_word = name = false;
			continue;
		}
		if (!in_word) {
			in_word = true;
			name = at_cmd;
			if (c == '=')
				return "word";
		}
		if (c == '\\')
			return "escape";
		if (strchr("~{}[]^#?*", c))
			return "word";
		if (c == '\'' || c == '"') {
			if (name)
				return "quoted_name";
			q = c;
		}
	}
	return NULL;
}

/*
 * A Codex version docket did not measure is decided as the nearest one it
 * did (0.169.0 and 0.171.0 decide alike on every family measured), and the
 * result says so.
 */
static int codex_version_reason(ev *e)
{
	uint32_t v = e->codex_version, near;

	if (!v || e->p->format != DOCKET_POLICY_CODEX || v == POL_CODEX_MEASURED_OLD || v == POL_CODEX_MEASURED_NEW)
		return 0;
	if (v <= POL_CODEX_MEASURED_OLD)
		near = POL_CODEX_MEASURED_OLD;
	else if (v >= POL_CODEX_MEASURED_NEW)
		near = POL_CODEX_MEASURED_NEW;
	else
		near = v - POL_CODEX_MEASURED_OLD <= POL_CODEX_MEASURED_NEW - v ? POL_CODEX_MEASURED_OLD : POL_CODEX_MEASURED_NEW;
	return ev_add_reason(e->res, "engine_version",
			     "Codex %u.%u.%u not measured: decided as Codex %u.%u.%u, the nearest measured version",
			     v / 1000000u, v / 1000u % 1000u, v % 1000u, near / 1000000u, near / 1000u % 1000u,
			     near % 1000u);
}

int ev_eval_shell(ev *e)
{
	docket_policy_result *r = e->res;
	const docket_policy_call *c = e->call;
	const char *flag, *script;
	int dec = POL_ALLOW, error;
	bool all_allow = true;

	if (c->argc == 0) {
		r->verdict = POL_DENY;
		return ev_add_reason(r, "bad_call", "empty command");
	}
	script = shell_script_of(c->argv, c->argc, &flag);
	if (script && e->p->heuristics == HEUR_CLAUDE) {
		/* as Claude Code matches it: no `time`, no safe redirections or env prefixes */
		if ((error = claude_bash_normalize(&r->claude_script, claude_skip_time(script))) < 0)
			return error;
		script = r->claude_script.ptr;
	}
	if (script) {
		r->split.codex_words = e->p->format == DOCKET_POLICY_CODEX;
		error = shell_split_script(&r->split, script, strlen(script));
		r->split.codex_words = false;
		if (error < 0)
			return error;
		if (r->split.status == SHELL_PLAIN && e->p->format == DOCKET_POLICY_CODEX &&
		    (r->unsplit_reason = codex_unsplit_reason(script))) {
			e->unsplit = true;
		} else if (r->split.status == SHELL_PLAIN ||
			   (r->split.status == SHELL_HEREDOC && e->p->heredoc_prefix)) {
			e->used_complex = r->split.status == SHELL_HEREDOC;
			for (size_t g = 0; g < r->split.nsegs; g++) {
				size_t a = r->split.seg_start[g], b = r->split.seg_start[g + 1];
				pol_segment *s;

				if ((error = ev_grow((void **)&r->segs, &r->capsegs, r->nsegs + 1, sizeof(*r->segs))) < 0 ||
				    (error = ev_grow((void **)&r->wv, &r->capwv, r->nwv + (b - a), sizeof(*r->wv))) < 0)
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
	if (r->nsegs == 0 && (error = ev_add_segment(r, c->argv, c->argc)) < 0)
		return error;

	for (size_t g = 0; g < r->nsegs; g++) {
		if ((error = eval_segment(e, g)) < 0)
			return error;
		dec = ev_max(dec, r->segs[g].decision);
		all_allow = all_allow && r->segs[g].policy_allow;
	}
	if (e->p->heuristics == HEUR_CLAUDE && !e->unsplit && dec < POL_DENY) {
		const char *why = NULL;
		int d = claude_cd_check(e, &why);

		if (d > dec && (error = ev_add_why(r, why)) < 0)
			return error;
		dec = ev_max(dec, d);
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
				dec = ev_max(dec, r->segs[g].decision);
			all_allow = true;
		} else if (d > POL_ALLOW) {
			dec = ev_max(dec, d);
		}
	}
	if (dec == POL_ASK && command_granted(e, c->argv, c->argc)) {
		bool only_asks = true;

		for (size_t g = 0; g < r->nsegs; g++)
			only_asks = only_asks && r->segs[g].decision <= POL_ASK;
		if (only_asks) {
			dec = POL_ALLOW;
			if ((error = ev_add_reason(r, "session_grant", "approved for this session")) < 0)
				return error;
		}
	}
	r->sandbox = all_allow ? 2 : (e->sandbox == SB_READ_ONLY || e->sandbox == SB_WORKSPACE_WRITE) ? 1 : 0;
	if (dec == POL_ASK || dec == POL_DENY) {
		if ((error = codex_reasons(e, dec)) < 0 || (error = ev_tool_rule_reason(e, dec)) < 0)
			return error;
	}
	if (r->unsplit_reason &&
	    (error = ev_add_reason(r, "not_split", "script not split into segments (%s)", r->unsplit_reason)) < 0)
		return error;
	/* one summary reason per distinct heuristic */
	for (size_t g = 0; g < r->nsegs; g++) {
		const pol_segment *s = &r->segs[g];
		bool seen = false;

		if (!s->heuristic && !s->granted)
			continue;
		for (size_t k = 0; k < g; k++)
			seen = seen || (r->segs[k].why && s->why && strcmp(r->segs[k].why, s->why) == 0);
		if (!seen && (error = ev_add_why(r, s->why)) < 0)
			return error;
	}
	if (e->p->format == DOCKET_POLICY_CODEX || e->p->heuristics == HEUR_CODEX)
		if ((error = codex_amendment(e, dec)) < 0)
			return error;
	if ((error = ev_approval_gate(e, &dec)) < 0 || (error = codex_version_reason(e)) < 0)
		return error;
	if ((error = ev_unsupported_gate(e, &dec, c->sbperm != SBP_DEFAULT)) < 0)
		return error;
	r->verdict = dec;
	return 0;
}
