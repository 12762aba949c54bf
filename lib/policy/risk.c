/* SPDX-License-Identifier: Apache-2.0 */
/*
 * risk.c: the risk classes of a call (risk.h). Shell commands go through
 * the same analysis as the enforced verdict (shparse.c), so a risk hidden
 * behind a wrapper, a substitution or `sh -c` is still found; an analysis
 * that cannot finish counts as code execution (docket cannot say what runs).
 */
#include <string.h>

#include "risk.h"
#include "policy.h"
#include "shcmd.h"
#include "shparse.h"

#include "util/buf.h"
#include "util/error.h"
#include "util/tool.h"

const char *docket_risk_name(unsigned one_class)
{
	switch (one_class) {
	case DOCKET_RISK_NETWORK: return "network";
	case DOCKET_RISK_PIPE_SHELL: return "pipe_shell";
	case DOCKET_RISK_PUSH: return "push";
	case DOCKET_RISK_FORCE_PUSH: return "force_push";
	case DOCKET_RISK_DELETE: return "delete";
	case DOCKET_RISK_SECRET_READ: return "secret_read";
	case DOCKET_RISK_WRITE_OUTSIDE: return "write_outside";
	case DOCKET_RISK_INSTALL: return "install";
	case DOCKET_RISK_ESCALATION: return "escalation";
	case DOCKET_RISK_CODE_EXEC: return "code_exec";
	default: return NULL;
	}
}

typedef struct risk_ctx {
	const docket_risk_call *call;
	const char *cwd;          /* the call's working directory (args.workdir/cwd, else call->cwd) */
	docket_buf path;
} risk_ctx;

static bool is_one_of(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (strcmp(s, *list) == 0)
			return true;
	return false;
}

/* Is `p` (relative to cwd) outside every workspace root? Undecidable: no. */
static bool outside(risk_ctx *r, const char *p, const char *cwd)
{
	const docket_risk_call *c = r->call;
	bool inside = false;

	if (strncmp(p, "/dev/", 5) == 0)
		return false;
	if (path_normalize(&r->path, p, cwd ? cwd : r->cwd, c->home) < 0) {
		docket_error_clear();
		return false;
	}
	if (c->nroots == 0)
		return r->cwd && r->cwd[0] == '/' && !path_is_under(r->path.ptr, r->cwd);
	for (size_t i = 0; i < c->nroots && !inside; i++)
		inside = c->roots[i] && path_is_under(r->path.ptr, c->roots[i]);
	return !inside;
}

static bool opt_has(const char *w, char letter, const char *long_name)
{
	if (w[0] == '-' && w[1] == '-')
		return long_name && strcmp(w, long_name) == 0;
	return w[0] == '-' && strchr(w + 1, letter) != NULL;
}

static unsigned git_risk(const sh_analysis *a, const sh_cmd *c)
{
	size_t sub = sh_git_subcommand(a, c);
	const char *s;
	unsigned risk = 0;

	if (!sub)
		return 0;
	s = sh_word(a, c->word0 + sub);
	if (strcmp(s, "clone") == 0 || strcmp(s, "fetch") == 0 || strcmp(s, "pull") == 0 ||
	    strcmp(s, "ls-remote") == 0)
		return DOCKET_RISK_NETWORK;
	if (strcmp(s, "clean") == 0)
		return DOCKET_RISK_DELETE;
	if (strcmp(s, "push") != 0)
		return 0;
	risk = DOCKET_RISK_PUSH;
	for (size_t i = sub + 1; i < c->nwords; i++) {
		const char *w = sh_word(a, c->word0 + i);

		if (opt_has(w, 'f', "--force") || strncmp(w, "--force-with-lease", 18) == 0 ||
		    strcmp(w, "--mirror") == 0 || strcmp(w, "--delete") == 0 || opt_has(w, 'd', NULL) ||
		    (w[0] == '+' && w[1]) || (w[0] == ':' && w[1]))
			risk |= DOCKET_RISK_FORCE_PUSH;
	}
	return risk;
}

static unsigned delete_risk(const sh_analysis *a, const sh_cmd *c, const char *base)
{
	if (strcmp(base, "shred") == 0)
		return DOCKET_RISK_DELETE;
	if (strcmp(base, "find") == 0) {
		for (size_t i = 1; i < c->nwords; i++)
			if (strcmp(sh_word(a, c->word0 + i), "-delete") == 0)
				return DOCKET_RISK_DELETE;
		return 0;
	}
	if (strcmp(base, "rm") != 0)
		return 0;
	for (size_t i = 1; i < c->nwords; i++) {
		const char *w = sh_word(a, c->word0 + i);

		if (strcmp(w, "--") == 0)
			break;
		if (opt_has(w, 'r', "--recursive") || opt_has(w, 'R', NULL) || opt_has(w, 'f', "--force"))
			return DOCKET_RISK_DELETE;
	}
	return 0;
}

/* Operands a command writes: tee's, cp/mv's last, touch/mkdir/rm's. */
static unsigned write_risk(risk_ctx *r, const sh_analysis *a, const sh_cmd *c, const char *base, const char *cwd)
{
	static const char *const all_ops[] = { "tee", "touch", "mkdir", "rm", "rmdir", "truncate", "shred", NULL };
	static const char *const last_op[] = { "cp", "mv", "install", "ln", "rsync", NULL };
	bool all = is_one_of(base, all_ops);

	if (!all && !is_one_of(base, last_op) && strcmp(base, "dd") != 0)
		return 0;
	for (size_t i = 1; i < c->nwords; i++) {
		const char *w = sh_word(a, c->word0 + i);

		if (a->word_flags[c->word0 + i] & SHW_DYNAMIC)
			continue;
		if (strcmp(base, "dd") == 0) {
			if (strncmp(w, "of=", 3) == 0 && w[3] && outside(r, w + 3, cwd))
				return DOCKET_RISK_WRITE_OUTSIDE;
			continue;
		}
		if (w[0] == '-' || (!all && i + 1 != c->nwords))
			continue;
		if (outside(r, w, cwd))
			return DOCKET_RISK_WRITE_OUTSIDE;
	}
	return 0;
}

static unsigned secret_risk(const sh_analysis *a, const sh_cmd *c, const char *base)
{
	static const char *const not_reads[] = { "ls", "rm", "touch", "mkdir", "chmod", "chown", "stat",
						 "test", "[", "mv", "rmdir", "echo", "printf", "cd", NULL };
	bool git = strcmp(base, "git") == 0;

	if (is_one_of(base, not_reads))
		return 0;
	for (size_t i = 1; i < c->nwords; i++) {
		const char *p = sh_operand_path(sh_word(a, c->word0 + i), git);

		if (p && sh_secret_path(p))
			return DOCKET_RISK_SECRET_READ;
	}
	return 0;
}

static unsigned redir_risk(risk_ctx *r, const sh_analysis *a, const sh_cmd *c, const char *cwd)
{
	unsigned risk = 0;

	for (size_t k = 0; k < c->nredir; k++) {
		const sh_redir *rd = &a->redirs[c->redir0 + k];
		const char *w;

		if (rd->word == (size_t)-1 || (a->word_flags[rd->word] & SHW_DYNAMIC))
			continue;
		w = sh_word(a, rd->word);
		if (rd->kind == SHR_READ && sh_secret_path(w))
			risk |= DOCKET_RISK_SECRET_READ;
		if ((rd->kind == SHR_WRITE || rd->kind == SHR_APPEND) && outside(r, w, cwd))
			risk |= DOCKET_RISK_WRITE_OUTSIDE;
	}
	return risk;
}

static unsigned cmd_risk(risk_ctx *r, const sh_analysis *a, const sh_cmd *c)
{
	const char *cwd = c->cwd == (size_t)-1 ? NULL : a->text.ptr + c->cwd;
	unsigned risk = redir_risk(r, a, c, cwd);
	const sh_look *l;
	const char *base;
	sh_install inst;

	if (c->flags & (SHC_DYNAMIC_NAME | SHC_CODE | SHC_SCRIPT_FILE | SHC_STDIN_SCRIPT | SHC_DYNAMIC_SCRIPT))
		risk |= DOCKET_RISK_CODE_EXEC;
	if ((c->flags & SHC_PIPE_IN) && (c->flags & SHC_STDIN_SCRIPT))
		risk |= DOCKET_RISK_PIPE_SHELL;
	if (c->nwords == 0 || (c->flags & SHC_DYNAMIC_NAME))
		return risk;
	base = shell_basename(sh_word(a, c->word0));
	if ((l = sh_lookup(base)) && l->kind == SHL_EVAL)
		risk |= DOCKET_RISK_CODE_EXEC;
	if (c->flags & (SHC_NESTED | SHC_WRAPPER))
		return risk;   /* its arguments are a script or a command: judged in their own entries */
	if (sh_network_program(base))
		risk |= DOCKET_RISK_NETWORK;
	if (sh_install_of(a, c, &inst))
		risk |= DOCKET_RISK_INSTALL;
	risk |= git_risk(a, c) | delete_risk(a, c, base) | secret_risk(a, c, base) | write_risk(r, a, c, base, cwd);
	return risk;
}

static unsigned shell_risk(risk_ctx *r, const json_t *args)
{
	const json_t *cmd = json_object_get(args, "command");
	sh_analysis a;
	unsigned risk = 0;
	int error;

	if (!cmd)
		cmd = json_object_get(args, "cmd");
	sh_init(&a);
	if (json_is_string(cmd)) {
		error = sh_analyze(&a, json_string_value(cmd), json_string_length(cmd), r->cwd, r->call->home);
	} else if (json_is_array(cmd) && json_array_size(cmd) > 0 && json_array_size(cmd) < 4096) {
		const char *argv[4096];
		size_t n = json_array_size(cmd);

		for (size_t i = 0; i < n; i++)
			if (!(argv[i] = json_string_value(json_array_get(cmd, i))))
				argv[i] = "";
		error = sh_analyze_argv(&a, argv, n, r->cwd, r->call->home);
	} else {
		sh_dispose(&a);
		return DOCKET_RISK_CODE_EXEC;   /* no command docket can read */
	}
	if (error < 0 || a.incomplete)
		risk |= DOCKET_RISK_CODE_EXEC;
	for (size_t i = 0; error == 0 && i < a.ncmds; i++)
		risk |= cmd_risk(r, &a, &a.cmds[i]);
	docket_error_clear();
	sh_dispose(&a);
	return risk;
}

static unsigned path_risk(risk_ctx *r, const json_t *args, bool write)
{
	static const char *const keys[] = { "path", "file_path", "notebook_path", NULL };
	unsigned risk = 0;

	for (size_t k = 0; keys[k]; k++) {
		const char *p = json_string_value(json_object_get(args, keys[k]));

		if (!p || !*p)
			continue;
		if (!write && sh_secret_path(p))
			risk |= DOCKET_RISK_SECRET_READ;
		if (write && outside(r, p, NULL))
			risk |= DOCKET_RISK_WRITE_OUTSIDE;
	}
	return risk;
}

static unsigned patch_risk(risk_ctx *r, const json_t *args)
{
	const json_t *changes = json_object_get(args, "changes"), *ch;
	const char *text = json_string_value(json_object_get(args, "input"));
	unsigned risk = 0;
	size_t i;

	json_array_foreach(changes, i, ch) {
		const char *p = json_string_value(json_object_get(ch, "path"));
		const char *op = json_string_value(json_object_get(ch, "op"));
		const char *to = json_string_value(json_object_get(ch, "to"));

		if (op && strcmp(op, "delete") == 0)
			risk |= DOCKET_RISK_DELETE;
		if ((p && *p && outside(r, p, NULL)) || (to && *to && outside(r, to, NULL)))
			risk |= DOCKET_RISK_WRITE_OUTSIDE;
	}
	if (!text)
		text = json_string_value(json_object_get(args, "patch"));
	if (text && strstr(text, "*** Delete File:"))
		risk |= DOCKET_RISK_DELETE;
	return risk;
}

static unsigned escalation_risk(const json_t *args)
{
	const char *sp = json_string_value(json_object_get(args, "sandbox_permissions"));

	if ((sp && strcmp(sp, "require_escalated") == 0) ||
	    json_is_true(json_object_get(args, "with_escalated_permissions")) ||
	    json_is_true(json_object_get(args, "dangerouslyDisableSandbox")) ||
	    json_is_true(json_object_get(args, "dangerously_disable_sandbox")))
		return DOCKET_RISK_ESCALATION;
	return 0;
}

unsigned docket_call_risk(const docket_risk_call *call)
{
	static const char *const shells[] = { DOCKET_TOOL_SHELL, DOCKET_TOOL_CODEX_LOCAL_SHELL, DOCKET_TOOL_CODEX_SHELL_COMMAND,
		DOCKET_TOOL_CODEX_EXEC_COMMAND, DOCKET_TOOL_CLAUDE_BASH, NULL };
	static const char *const reads[] = { DOCKET_TOOL_READ_FILE, DOCKET_TOOL_CLAUDE_READ, DOCKET_TOOL_CLAUDE_GREP,
		DOCKET_TOOL_CLAUDE_GLOB, DOCKET_TOOL_CLAUDE_LS, NULL };
	static const char *const writes[] = { DOCKET_TOOL_WRITE_FILE, DOCKET_TOOL_CLAUDE_WRITE, DOCKET_TOOL_CLAUDE_EDIT,
		DOCKET_TOOL_CLAUDE_MULTI_EDIT, DOCKET_TOOL_CLAUDE_NOTEBOOK_EDIT, NULL };
	static const char *const nets[] = { DOCKET_TOOL_NETWORK, DOCKET_TOOL_CLAUDE_WEB_FETCH, DOCKET_TOOL_CLAUDE_WEB_SEARCH,
		DOCKET_TOOL_CODEX_WEB_SEARCH, NULL };
	const json_t *args;
	const char *t, *wd;
	risk_ctx r;
	unsigned risk;

	if (!call || !call->tool)
		return 0;
	t = call->tool;
	args = call->args;
	memset(&r, 0, sizeof(r));
	r.call = call;
	wd = json_string_value(json_object_get(args, "workdir"));
	if (!wd)
		wd = json_string_value(json_object_get(args, "cwd"));
	r.cwd = wd && wd[0] == '/' ? wd : call->cwd;
	risk = escalation_risk(args);
	if (is_one_of(t, shells))
		risk |= shell_risk(&r, args);
	else if (is_one_of(t, reads))
		risk |= path_risk(&r, args, false);
	else if (is_one_of(t, writes))
		risk |= path_risk(&r, args, true);
	else if (strcmp(t, DOCKET_TOOL_APPLY_PATCH) == 0)
		risk |= patch_risk(&r, args);
	else if (is_one_of(t, nets))
		risk |= DOCKET_RISK_NETWORK;
	else if (strcmp(t, DOCKET_TOOL_RUN_CODE) == 0)
		risk |= DOCKET_RISK_CODE_EXEC;
	else if (strcmp(t, DOCKET_TOOL_INSTALL_PACKAGES) == 0)
		risk |= DOCKET_RISK_INSTALL;
	docket_buf_dispose(&r.path);
	return risk;
}
