/* SPDX-License-Identifier: Apache-2.0 */
/*
 * enforce.c: the enforced verdict (docs/policy.md "Two verdicts").
 *
 * The engine verdict (docket_policy_eval) says what Codex or Claude Code
 * would decide. The enforced verdict starts from it and may only be
 * stricter:
 *
 *   engine ──> shell analysis (shparse.c) ──> every command, at any depth:
 *                 rules (prefix, Bash) on it ── deny/ask hold wherever it appears
 *                 unknown name / one-liner / script ── ask unless a rule names it
 *                 install spelled in shell ── packages: as install_packages
 *                 paths it is given ── Read/Edit deny rules, cwd followed
 *          ──> paths of Read/Write/patch calls with the call's own cwd, directories
 *          ──> "runs in the sandbox" only where the client sandboxes
 *
 * Invariants:
 *   1. enforced >= engine (the strictest decision wins; nothing lowers it
 *      except an exact session grant of the whole call, which lowers an
 *      ask the enforcement added, never a deny).
 *   2. An analysis that cannot finish (shparse invariant 2) gives at least
 *      approval_required.
 *   3. Pure: nothing is read from the file system or the environment.
 */
#include <string.h>

#include "eval.h"
#include "shcmd.h"
#include "shparse.h"

#include "util/alloc.h"
#include "util/error.h"
#include "util/tool.h"

typedef struct ef {
	ev e;                     /* rule matching (anchors from the session's cwd) */
	docket_policy_result *res;
	const docket_policy *p;
	const docket_policy_call *call;
	const docket_policy_context *ctx;
	const char *cwd;          /* the call's own working directory (absolute) or NULL */
	int dec;
	const char *code;         /* the reason of the strictest step so far */
	docket_buf *why;          /* res->ewhy */
} ef;

/* Raise the decision with a reason (pre, arg, post joined); the first reason of the strictest step is kept. */
static int raise_to(ef *f, int d, const char *code, const char *pre, const char *arg, const char *post)
{
	int error;

	if (d <= f->dec)
		return 0;
	f->dec = d;
	f->code = code;
	docket_buf_clear(f->why);
	if ((error = docket_buf_puts(f->why, pre)) < 0 || (error = docket_buf_puts(f->why, arg ? arg : "")) < 0)
		return error;
	return docket_buf_puts(f->why, post);
}

static bool has_reason(const docket_policy_result *r, const char *code)
{
	for (size_t i = 0; i < r->nreasons; i++)
		if (strcmp(r->reasons[i].code, code) == 0)
			return true;
	return false;
}

/* Put a reason first (the hooks show reason 0); the last one drops when full. */
static int reason_first(docket_policy_result *r, const char *code, const char *text)
{
	int error;

	if (r->nreasons == POL_MAX_REASONS)
		r->nreasons--;
	if ((error = ev_add_reason(r, code, "%s", text)) < 0)
		return error;
	if (r->nreasons > 1) {
		pol_reason last = r->reasons[r->nreasons - 1];

		memmove(&r->reasons[1], &r->reasons[0], (r->nreasons - 1) * sizeof(r->reasons[0]));
		r->reasons[0] = last;
	}
	return 0;
}

/* A rule the enforcement matched, once (the engine may have recorded it already). */
static void add_match(docket_policy_result *r, int rule, int decision, size_t plen, bool resolved)
{
	for (size_t i = 0; i < r->nmatches; i++)
		if (r->matches[i].rule == rule)
			return;
	ev_add_match(r, rule, decision, 0xFFFF, plen, resolved);
}

/* Drop the matches from `start` on that repeat an earlier one's rule. */
static void dedupe_matches(docket_policy_result *r, size_t start)
{
	size_t w = start;

	for (size_t i = start; i < r->nmatches; i++) {
		bool seen = false;

		for (size_t k = 0; k < w && !seen; k++)
			seen = r->matches[k].rule == r->matches[i].rule;
		if (!seen)
			r->matches[w++] = r->matches[i];
	}
	r->nmatches = w;
}

/* Bash rules on `text`, recorded once. */
static int bash_rules_once(ef *f, const char *text, size_t len, bool *allow)
{
	size_t start = f->res->nmatches;
	int d = ev_bash_rules(&f->e, text, len, allow);

	dedupe_matches(f->res, start);
	return d;
}

/* ---- paths ---- */

/* A path rule of the call: its index, and its absolute glob in res->eglobs (SIZE_MAX: none, SPEC_NONE). */
struct pol_epath {
	uint32_t rule;
	size_t off, len, lit;     /* lit: the glob's bytes before its first wildcard */
};

/* What the path globs are built from besides the policy: the anchors of ev_path_rule_glob. */
static int path_rules_key(const ef *f, docket_buf *key)
{
	const char *anchors[3] = { f->e.cwd, f->e.home, ev_project_root(&f->e) };
	int error = 0;

	docket_buf_clear(key);
	for (size_t i = 0; i < 3 && error == 0; i++)
		if ((error = docket_buf_putc(key, anchors[i] ? '+' : '-')) == 0 && anchors[i])
			error = docket_buf_put(key, anchors[i], strlen(anchors[i]) + 1);
	return error;
}

/*
 * The Read (list 0) and Edit (list 1) deny/ask rules on paths, with their
 * globs built once per call instead of once per operand and rule (res->epath:
 * Read's, then Edit's; grown once, so a warm result does not allocate), and
 * kept for the next call of the same policy and anchors.
 */
static int find_path_rules(ef *f)
{
	docket_policy_result *r = f->res;
	docket_buf *g = &r->etmp2;
	bool skipped = false;
	int error;

	if (!f->p->read_rules && !f->p->edit_rules) {
		r->nepath[0] = r->nepath[1] = 0;
		r->epath_serial = 0;
		return 0;
	}
	if ((error = path_rules_key(f, &r->epath_key2)) < 0)
		return error;
	if (r->epath_serial == f->p->serial && r->epath_key2.len == r->epath_key.len &&
	    memcmp(r->epath_key2.ptr, r->epath_key.ptr, r->epath_key.len) == 0)
		return 0;   /* the previous call's policy and anchors: its globs hold */
	r->epath_serial = 0;
	r->nepath[0] = r->nepath[1] = 0;
	docket_buf_clear(&r->eglobs);
	if ((error = ev_grow((void **)&r->epath, &r->capepath, 2 * f->p->ntools + 1, sizeof(*r->epath))) < 0)
		return error;
	for (int list = 0; list < 2; list++) {
		const pol_rule_list *l = pol_tools_of(f->p, list ? TK_EDIT : TK_READ);

		for (size_t j = 0; j < l->n; j++) {
			uint32_t k = l->v[j];
			const pol_tool_rule *t = &f->p->tools[k];
			struct pol_epath *e = &r->epath[r->nepath[0] + r->nepath[1]];

			if (t->decision <= POL_ALLOW || t->kind == TK_ANY)
				continue;
			if (t->spec_kind != SPEC_PATH && t->spec_kind != SPEC_NONE)
				continue;
			e->rule = (uint32_t)k;
			e->off = SIZE_MAX;
			if (t->spec_kind == SPEC_PATH) {
				if (!ev_path_rule_glob(&f->e, t, g)) {
					skipped = true;   /* not kept: out of memory is no reason to skip it next time */
					continue;   /* no base (no HOME): the rule matches nothing, as in the engine */
				}
				e->off = r->eglobs.len;
				e->len = g->len;
				e->lit = strcspn(g->ptr, "*?[");
				if ((error = docket_buf_put(&r->eglobs, g->ptr, g->len)) < 0 ||
				    (error = docket_buf_putc(&r->eglobs, '\0')) < 0)
					return error;
			}
			r->nepath[list]++;
		}
	}
	docket_buf_clear(&r->epath_key);
	if (skipped || (error = docket_buf_put(&r->epath_key, r->epath_key2.ptr, r->epath_key2.len)) < 0)
		return 0;   /* not kept: built again next call */
	r->epath_serial = f->p->serial;
	return 0;
}

/* The path rules of `kind` (TK_READ or TK_EDIT): *n of them. */
static const struct pol_epath *path_rule_list(const ef *f, int kind, size_t *n)
{
	*n = f->res->nepath[kind != TK_READ];
	return f->res->epath + (kind == TK_READ ? 0 : f->res->nepath[0]);
}

static const char *epath_glob(const ef *f, const struct pol_epath *e)
{
	return f->res->eglobs.ptr + e->off;
}

static bool has_path_rules(const ef *f, int kind)
{
	size_t n;
	const struct pol_epath *l = path_rule_list(f, kind, &n);

	for (size_t i = 0; i < n; i++)
		if (l[i].off != SIZE_MAX)
			return true;
	return false;
}

/*
 * Does the rule's glob match `path` (or an ancestor of it), or something
 * directly under it? Whatever matches starts with the glob's literal part,
 * so most rules are rejected by one comparison.
 */
static bool epath_matches(const ef *f, const struct pol_epath *e, const char *path, size_t plen, const char *child)
{
	const char *g;

	if (e->off == SIZE_MAX)
		return true;   /* a rule on the whole tool (Read) */
	g = epath_glob(f, e);
	if (plen >= e->lit)   /* child (path/-) starts with path: one comparison for both */
		return strncmp(path, g, e->lit) == 0 &&
		       (path_glob_match(g, e->len, path) || path_glob_match(g, e->len, child));
	/* path is shorter than the literal part: only the child may match */
	return strncmp(child, g, plen + 2 < e->lit ? plen + 2 : e->lit) == 0 && path_glob_match(g, e->len, child);
}

/*
 * The strictest Read (or Edit) deny/ask rule on the normalised path or on
 * what is under it (a directory given to Grep, Glob, ls or grep -r); -1: none.
 */
static int path_rules(ef *f, const char *path, int kind)
{
	docket_buf *child = &f->res->etmp2;
	size_t n, plen = strlen(path);
	const struct pol_epath *l = path_rule_list(f, kind, &n);
	int d = -1;

	if (n == 0)
		return -1;
	docket_buf_clear(child);
	if (docket_buf_put(child, path, plen) < 0 || docket_buf_puts(child, "/-") < 0)
		return POL_DENY;   /* out of memory: fail closed */
	for (size_t i = 0; i < n; i++) {
		size_t k = l[i].rule;
		const pol_tool_rule *t = &f->p->tools[k];

		if (epath_matches(f, &l[i], path, plen, child->ptr)) {
			add_match(f->res, -2 - (int)k, t->decision, 0, false);
			d = ev_max(d, t->decision);
		}
	}
	return d;
}

/*
 * A search of directory `dir` (normalised): the strictest Read deny/ask
 * rule whose files may lie under it (Grep in `.` with a Read deny of `secrets`),
 * as an ask: docket cannot prove the search skips them. -1: none.
 */
static int search_rules(ef *f, const char *dir)
{
	size_t n;
	const struct pol_epath *l = path_rule_list(f, TK_READ, &n);

	for (size_t i = 0; i < n; i++) {
		size_t k = l[i].rule;
		const pol_tool_rule *t = &f->p->tools[k];

		if (l[i].off == SIZE_MAX)
			continue;   /* a rule on the whole tool: the engine denies the call */
		if (path_glob_reaches(epath_glob(f, &l[i]), l[i].len, dir)) {
			add_match(f->res, -2 - (int)k, t->decision, 0, false);
			return POL_ASK;
		}
	}
	return -1;
}

/* A search of `dir` as the client resolves it (against `cwd`). */
static int judge_search(ef *f, const char *dir, const char *cwd)
{
	docket_buf *b = &f->res->etmp;

	if (path_normalize(b, dir, cwd ? cwd : f->cwd, f->e.home) < 0) {
		docket_error_clear();
		return POL_ASK;
	}
	return search_rules(f, b->ptr);
}

/* A path as the client resolves it: against `cwd`, then the rules. -2: cannot resolve. */
static int judge_path(ef *f, const char *path, const char *cwd, int kind)
{
	docket_buf *b = &f->res->etmp;

	if (path_normalize(b, path, cwd ? cwd : f->cwd, f->e.home) < 0) {
		docket_error_clear();
		return -2;
	}
	return path_rules(f, b->ptr, kind);
}

/* ---- one command of a shell script ---- */

static bool named_by_allow(ef *f, const char *const *argv, size_t n, int *dec)
{
	pol_match m[32];
	size_t k = pol_codex_matches(f->p, argv, n, true, m, 32, 0xFFFF);
	bool allow = false;
	int d = -1;

	for (size_t i = 0; i < k; i++) {
		add_match(f->res, m[i].rule, m[i].decision, m[i].prefix_len, m[i].resolved);
		d = ev_max(d, m[i].decision);
		allow = allow || m[i].decision == POL_ALLOW;
	}
	if (k == 32)
		d = ev_max(d, POL_ASK);   /* past the cap: never allow */
	*dec = d;
	return allow;
}

/* Prefix and Bash rules on argv, and on argv with its program's basename. */
static int command_rules(ef *f, const char **argv, size_t n, bool *named)
{
	const char *base = shell_basename(argv[0]);
	docket_buf *t = &f->res->etmp;
	int d = -1, d2 = -1;

	*named = named_by_allow(f, argv, n, &d);
	if (base != argv[0] && *base) {
		const char *v0 = argv[0];

		/* the program by its name (invariant 3 of shparse.h: no file system) */
		argv[0] = base;
		*named = named_by_allow(f, argv, n, &d2) || *named;
		d = ev_max(d, d2);
		if (f->p->bash_rules) {
			bool a = false;

			docket_buf_clear(t);
			for (size_t i = 0; i < n; i++)
				if ((i && docket_buf_putc(t, ' ') < 0) || docket_buf_puts(t, argv[i]) < 0)
					return POL_DENY;
			d = ev_max(d, bash_rules_once(f, t->ptr ? t->ptr : "", t->len, &a));
			*named = *named || a;
		}
		argv[0] = v0;
	}
	if (f->p->bash_rules) {
		bool a = false;

		docket_buf_clear(t);
		for (size_t i = 0; i < n; i++)
			if ((i && docket_buf_putc(t, ' ') < 0) || docket_buf_puts(t, argv[i]) < 0)
				return POL_DENY;
		d = ev_max(d, bash_rules_once(f, t->ptr ? t->ptr : "", t->len, &a));
		*named = *named || a;
	}
	return d;
}

static int sub_result(ef *f, docket_policy_result **out)
{
	int error;

	if (!f->res->sub && (error = docket_policy_result_new(&f->res->sub)) < 0)
		return error;
	*out = f->res->sub;
	return 0;
}

/* run_code of `lang`, judged as the run_code tool is. */
static int judge_code(ef *f, const char *lang, int *out)
{
	docket_policy_call c;
	docket_policy_result *r;
	int error;

	memset(&c, 0, sizeof(c));
	c.tool = CT_RUN_CODE;
	c.name = DOCKET_TOOL_RUN_CODE;
	c.language = lang;
	if ((error = sub_result(f, &r)) < 0 || (error = docket_policy_eval(r, f->p, &c, f->ctx)) < 0)
		return error;
	*out = r->verdict;
	return 0;
}

static bool policy_gates_installs(const docket_policy *p)
{
	if (p->npkgs)
		return true;
	for (size_t j = 0; j < pol_tools_of(p, TK_NAME)->n; j++) {
		const pol_tool_rule *t = &p->tools[pol_tools_of(p, TK_NAME)->v[j]];

		if (t->kind == TK_NAME && t->name && strcmp(t->name, DOCKET_TOOL_INSTALL_PACKAGES) == 0)
			return true;
	}
	return false;
}

/* A shell-spelled install, judged as install_packages is (spec validation included). */
static int judge_install(ef *f, const sh_analysis *a, const sh_install *in, int *out)
{
	docket_policy_call c;
	docket_policy_result *r;
	const char *pk[sizeof(in->pkgs) / sizeof(in->pkgs[0]) + 1];
	int error;

	*out = -1;
	if (!policy_gates_installs(f->p))
		return 0;
	if (in->npkgs == 0 || in->truncated) {
		*out = POL_ASK;   /* from a lock file, or more than docket reads: ask */
		return 0;
	}
	for (size_t i = 0; i < in->npkgs; i++)
		pk[i] = (a->word_flags[in->pkgs[i]] & SHW_DYNAMIC) ? "$" : sh_word(a, in->pkgs[i]);
	memset(&c, 0, sizeof(c));
	c.tool = CT_INSTALL;
	c.name = DOCKET_TOOL_INSTALL_PACKAGES;
	c.ecosystem = in->ecosystem;
	c.packages = pk;
	c.npackages = in->npkgs;
	if ((error = sub_result(f, &r)) < 0 || (error = docket_policy_eval(r, f->p, &c, f->ctx)) < 0)
		return error;
	*out = r->verdict;
	return 0;
}

/* The files a command is given: Read deny rules hold for readers, anything else asks. */
/* A command that reads whole trees (grep -r, rg, tar, cp -r, find -exec): its directories are searches. */
static int judge_tree_reader(ef *f, const sh_analysis *a, const sh_cmd *c, const char *cwd)
{
	bool cwd_too = false;
	int error;

	if (!sh_tree_reader(a, c, &cwd_too))
		return 0;
	if (cwd_too && (c->flags & SHC_CWD_UNKNOWN))
		return raise_to(f, POL_ASK, "cwd_unknown", "`", sh_word(a, c->word0),
				"` searches a directory docket cannot know (cd to an expansion)");
	if (cwd_too && search_rules(f, cwd ? cwd : f->cwd ? f->cwd : "/") > POL_ALLOW)
		return raise_to(f, POL_ASK, "search", "`", sh_word(a, c->word0),
				"` searches its working directory, which holds files a Read rule denies");
	for (size_t i = 1; i < c->nwords; i++) {
		const char *w = sh_word(a, c->word0 + i);

		if (w[0] == '-' || (a->word_flags[c->word0 + i] & SHW_DYNAMIC))
			continue;
		if (judge_search(f, w, cwd) > POL_ALLOW &&
		    (error = raise_to(f, POL_ASK, "search", "a command searches `", w,
				      "`, which holds files a Read rule denies")) < 0)
			return error;
	}
	return 0;
}

static int judge_operands(ef *f, const sh_analysis *a, const sh_cmd *c, const char *cwd, bool reader)
{
	bool git = sh_git_subcommand(a, c) != 0;
	int error;

	if ((error = judge_tree_reader(f, a, c, cwd)) < 0)
		return error;

	for (size_t i = 1; i < c->nwords; i++) {
		const char *w = sh_word(a, c->word0 + i), *p;
		int d;

		if (a->word_flags[c->word0 + i] & SHW_DYNAMIC)
			continue;
		if (!(p = sh_operand_path(w, git)) || !*p)
			continue;
		if ((c->flags & SHC_CWD_UNKNOWN) && p[0] != '/' && p[0] != '~') {
			if ((error = raise_to(f, POL_ASK, "cwd_unknown",
					      "`", p, "` is relative to a directory docket cannot know (cd to an expansion)")) < 0)
				return error;
			continue;
		}
		d = judge_path(f, p, cwd, TK_READ);
		if (d == POL_DENY && !reader)
			d = POL_ASK;
		if (d > POL_ALLOW && (error = raise_to(f, d, "denied_path",
						       "a command is given `", p, "`, which a Read rule denies")) < 0)
			return error;
	}
	return 0;
}

static int judge_redirs(ef *f, const sh_analysis *a, const sh_cmd *c, const char *cwd)
{
	int error;

	for (size_t k = 0; k < c->nredir; k++) {
		const sh_redir *r = &a->redirs[c->redir0 + k];
		const char *w;
		int d, kind;

		if (r->word == (size_t)-1 || r->kind == SHR_HEREDOC || r->kind == SHR_HERESTRING || r->kind == SHR_DUP)
			continue;
		w = sh_word(a, r->word);
		kind = r->kind == SHR_READ ? TK_READ : TK_EDIT;
		if (!(kind == TK_READ ? f->p->read_rules : f->p->edit_rules))
			continue;
		if (a->word_flags[r->word] & SHW_DYNAMIC) {
			if (has_path_rules(f, kind) &&
			    (error = raise_to(f, POL_ASK, "redirection", "a redirection to `", w, "` docket cannot resolve")) < 0)
				return error;
			continue;
		}
		d = judge_path(f, w, cwd, kind);
		if (d > POL_ALLOW &&
		    (error = raise_to(f, d, "denied_path", "a redirection names `", w, "`, which a rule denies")) < 0)
			return error;
	}
	return 0;
}

static int judge_cmd(ef *f, const sh_analysis *a, const sh_cmd *c)
{
	const char *cwd = c->cwd == (size_t)-1 ? NULL : a->text.ptr + c->cwd;
	const char **argv = NULL;
	const sh_look *l;
	sh_install in;
	bool named = false;
	int d, error = 0;

	if ((error = judge_redirs(f, a, c, cwd)) < 0 || c->nwords == 0)
		return error;
	if (c->flags & SHC_DYNAMIC_NAME)
		return raise_to(f, POL_ASK, "unknown_command", "`", sh_word(a, c->word0),
				"` is a command name docket cannot know");
	if ((error = ev_grow((void **)&f->res->eargv, &f->res->capeargv, c->nwords + 1, sizeof(*argv))) < 0)
		return error;
	argv = f->res->eargv;
	for (size_t i = 0; i < c->nwords; i++)
		argv[i] = sh_word(a, c->word0 + i);
	d = command_rules(f, argv, c->nwords, &named);
	if (d > POL_ALLOW && (error = raise_to(f, d, "rule", "a rule names `", argv[0], "`, which this script runs")) < 0)
		goto done;
	l = sh_lookup(argv[0]);
	if (sh_install_of(a, c, &in)) {
		if ((error = judge_install(f, a, &in, &d)) < 0)
			goto done;
		if (d > POL_ALLOW &&
		    (error = raise_to(f, d, "install", "`", argv[0], "` installs packages the policy does not allow")) < 0)
			goto done;
	} else if (c->flags & (SHC_CODE | SHC_SCRIPT_FILE | SHC_STDIN_SCRIPT | SHC_DYNAMIC_SCRIPT)) {
		bool shell = c->lang && strcmp(c->lang, "shell") == 0;

		d = named && !(c->flags & SHC_DYNAMIC_SCRIPT) ? -1 : POL_ASK;
		if (c->lang && !shell && f->p->languages_set) {
			int rc;

			if ((error = judge_code(f, c->lang, &rc)) < 0)
				goto done;
			d = named ? rc : ev_max(rc, d == POL_ASK && rc == POL_ALLOW ? -1 : d);
		}
		if (d > POL_ALLOW &&
		    (error = raise_to(f, d, "code", "`", argv[0],
				      (c->flags & SHC_PIPE_IN) ? "` runs what is piped into it" :
				      (c->flags & SHC_SCRIPT_FILE) ? "` runs a script file docket cannot read" :
				      "` runs code docket cannot see into")) < 0)
			goto done;
	}
	if (f->p->read_rules && !(c->flags & (SHC_WRAPPER | SHC_NESTED)))
		error = judge_operands(f, a, c, cwd, (l && l->kind == SHL_READER) || (c->flags & SHC_SCRIPT_FILE));
done:
	return error;
}

static int enforce_shell(ef *f)
{
	const docket_policy_call *c = f->call;
	sh_analysis *a = f->res->sh;
	int error;

	if (!a) {
		if (!(a = docket_calloc(1, sizeof(*a))))
			return docket_error_set_oom();
		sh_init(a);
		f->res->sh = a;
	}
	if (c->argc == 0)
		return 0;   /* the engine denies it */
	if ((error = sh_analyze_argv(a, c->argv, c->argc, f->cwd, f->e.home)) < 0)
		return error;
	if (a->incomplete &&
	    (error = raise_to(f, POL_ASK, "not_analysed", "docket cannot analyse this script (", a->why, ")")) < 0)
		return error;
	for (size_t i = 0; i < a->ncmds; i++)
		if ((error = judge_cmd(f, a, &a->cmds[i])) < 0)
			return error;
	/* an exact grant of the whole call lowers what enforcement asked, never a deny */
	if (f->dec == POL_ASK && f->res->engine_verdict == POL_ALLOW && ev_command_granted(&f->e, c->argv, c->argc))
		f->dec = POL_ALLOW;
	return 0;
}

/* Read, Write, Edit, apply_patch: the paths with the call's own cwd; directories. */
static int enforce_paths(ef *f, int kind)
{
	int error;

	if (!(kind == TK_READ ? f->p->read_rules : f->p->edit_rules))
		return 0;
	for (size_t i = 0; i < f->call->npaths; i++) {
		const char *p = f->call->paths[i];
		int d = judge_path(f, p, NULL, kind);

		if (d == -2 && p[0] != '/')
			d = POL_ASK;   /* relative with no cwd: cannot tell */
		if (d > POL_ALLOW &&
		    (error = raise_to(f, d, "denied_path", "`", p, "` is covered by a rule")) < 0)
			return error;
		/* Grep/Glob over a parent of a denied tree */
		if (kind == TK_READ && f->call->search && d < POL_ASK && judge_search(f, p, NULL) > POL_ALLOW &&
		    (error = raise_to(f, POL_ASK, "search", "a search of `", p,
				      "` reaches files a Read rule denies")) < 0)
			return error;
	}
	return 0;
}

/*
 * A host left non-ASCII after url.c's mapping may still map onto an ASCII
 * name under full UTS 46 (U+212F is `e`): docket cannot match rules on it.
 * And a deny or ask host rule that docket cannot compare with the host
 * (a Unicode label against an xn-- one: no Punycode codec) asks.
 */
static int enforce_host(ef *f)
{
	const char *h = f->call->host;

	if (!h)
		return 0;
	for (const char *c = h; *c; c++)
		if ((unsigned char)*c >= 0x80)
			return raise_to(f, POL_ASK, "host", "`", h,
					"` is an internationalised host docket does not map to ASCII");
	for (size_t i = 0; i < f->p->nnet; i++) {
		const pol_net_rule *n = &f->p->net[i];

		if (n->decision > POL_ALLOW && pol_host_equivalence(n->host, strlen(n->host), h) == POL_HOST_UNKNOWN)
			return raise_to(f, POL_ASK, "host", "`", h,
					"` may be the internationalised host of a rule docket cannot compare it with");
	}
	for (size_t j = 0; j < pol_tools_of(f->p, TK_WEBFETCH)->n; j++) {
		const pol_tool_rule *t = &f->p->tools[pol_tools_of(f->p, TK_WEBFETCH)->v[j]];

		if (t->decision > POL_ALLOW && t->spec_kind == SPEC_DOMAIN &&
		    pol_host_equivalence(t->spec, t->spec_len, h) == POL_HOST_UNKNOWN)
			return raise_to(f, POL_ASK, "host", "`", h,
					"` may be the internationalised host of a rule docket cannot compare it with");
	}
	return 0;
}

/* Does the client really sandbox what the engine allows "in the sandbox"? */
static bool client_sandboxes(const ef *f)
{
	const docket_policy_context *x = f->ctx;
	/* no client named: the one whose format the policy is in (docket's: Codex's sandbox model) */
	const char *client = x && x->client ? x->client : f->p->format == DOCKET_POLICY_CLAUDE ? "claude" : "codex";

	if (x && x->client_sandbox >= 0)
		return x->client_sandbox == 1;
	if (f->e.sandbox == SB_EXTERNAL)
		return true;    /* the operator's policy declares a sandbox outside the client */
	if (strcmp(client, "codex") == 0)
		return f->e.sandbox == SB_READ_ONLY || f->e.sandbox == SB_WORKSPACE_WRITE;
	if (strcmp(client, "claude") == 0)
		return f->p->format == DOCKET_POLICY_CLAUDE && f->p->claude_sandbox;
	return false;   /* mcp, serve's runtimes, anything else: no sandbox docket knows of */
}

int docket_policy_eval_enforced(docket_policy_result *res, const docket_policy *p,
				const docket_policy_call *call, const docket_policy_context *ctx)
{
	int error;

	if ((error = docket_policy_eval(res, p, call, ctx)) < 0)
		return error;
	return pol_enforce(res, p, call, ctx);
}

int pol_enforce(docket_policy_result *res, const docket_policy *p, const docket_policy_call *call,
		const docket_policy_context *ctx)
{
	ef f;
	int error;

	res->enforced = true;
	res->engine_verdict = res->verdict;
	if (res->verdict >= POL_DENY)
		return 0;
	memset(&f, 0, sizeof(f));
	ev_setup(&f.e, res, p, call, ctx);
	/* rule anchors (./x) are the session's; the call's own cwd resolves its paths */
	f.e.cwd = ctx && ctx->cwd ? ctx->cwd : f.e.cwd;
	f.res = res;
	f.p = p;
	f.call = call;
	f.ctx = ctx;
	f.dec = res->verdict;
	f.why = &res->ewhy;
	docket_buf_clear(f.why);
	if (call->cwd && *call->cwd) {
		/* a relative workdir is relative to the session's cwd */
		if (path_normalize(&res->ecwd, call->cwd, f.e.cwd, f.e.home) == 0)
			f.cwd = res->ecwd.ptr;
		else
			docket_error_clear();
	} else {
		f.cwd = f.e.cwd;
	}
	if ((error = find_path_rules(&f)) < 0)
		return error;
	switch (call->tool) {
	case CT_SHELL: error = enforce_shell(&f); break;
	case CT_READ: error = enforce_paths(&f, TK_READ); break;
	case CT_WRITE:
	case CT_APPLY_PATCH: error = enforce_paths(&f, TK_EDIT); break;
	case CT_NETWORK: error = enforce_host(&f); break;
	default: error = 0; break;
	}
	if (error < 0)
		goto done;
	if (f.dec == POL_ALLOW && has_reason(res, "sandboxed") && !client_sandboxes(&f))
		error = raise_to(&f, POL_ASK, "no_sandbox", "", "",
				 "the engine would run this in a sandbox; this client does not sandbox it");
	/* an ask the approval mode cannot show is a deny, as in the engine */
	if (error == 0 && f.dec == POL_ASK && f.dec > res->verdict && ev_ask_or_deny(&f.e) == POL_DENY)
		f.dec = POL_DENY;
	if (error == 0 && f.dec > res->verdict) {
		res->verdict = f.dec;
		error = reason_first(res, f.code, f.why->ptr ? f.why->ptr : "");
	}
done:
	return error;
}

docket_verdict docket_policy_result_engine_verdict(const docket_policy_result *res)
{
	return (docket_verdict)(res->enforced ? res->engine_verdict : res->verdict);
}

/* Does `word` (up to a space, ':' or the end) name a shell, eval or an interpreter? */
static bool names_code(const char *word, size_t n)
{
	char name[64];
	const sh_look *l;

	if (n == 0 || n >= sizeof(name))
		return false;
	memcpy(name, word, n);
	name[n] = '\0';
	l = sh_lookup(name);
	return l && (l->kind == SHL_SHELL || l->kind == SHL_EVAL || l->kind == SHL_SOURCE || l->kind == SHL_INTERP);
}

const char *docket_policy_code_allow(const docket_policy *p, size_t i)
{
	for (size_t k = 0; k < p->nprefix; k++) {
		const pol_prefix_rule *r = &p->prefix[k];

		if (r->decision == POL_ALLOW && names_code(r->program, strlen(r->program)) && i-- == 0)
			return r->text;
	}
	for (size_t k = 0; k < p->ntools; k++) {
		const pol_tool_rule *t = &p->tools[k];

		if (t->decision != POL_ALLOW || t->kind != TK_BASH || !t->spec)
			continue;
		if (names_code(t->spec, strcspn(t->spec, " :*")) && i-- == 0)
			return t->text;
	}
	return NULL;
}
