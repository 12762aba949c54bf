/* SPDX-License-Identifier: Apache-2.0 */
/*
 * check.c: is docket's capture on? (`docket integrate CLIENT --check`,
 * docs/integrations.md "Is it on?").
 *
 * Both clients let a tool call proceed when a hook is missing, cannot be
 * spawned, times out, or is switched off; none of them says so. Every check
 * here names one way that happens, for one client and one settings file:
 *
 *   present    each event docket installs has a docket handler
 *   executable each handler's program (its command's first word) is an
 *              executable file (docket-hook-fast: docket-hook too, beside
 *              it); the ledger it names (-L) exists
 *   timeout    each handler's timeout (the client's default when absent)
 *              is above docket's hook budget
 *   enabled    Claude Code: no settings file it merges has
 *              "disableAllHooks": true, and managed settings with
 *              "allowManagedHooksOnly": true only matter outside the
 *              managed scope; Codex: requirements.toml's
 *              allow_managed_hooks_only outside the managed scope
 *   trusted    Codex (not managed): config.toml holds the trust entries of
 *              exactly these handlers (an untrusted or changed hook is
 *              skipped)
 *
 * A check that cannot read what it needs fails (fail closed): "cannot tell"
 * is not "on".
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "integrations_internal.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/error.h"
#include "util/json.h"

#define CLAUDE_DEFAULT_TIMEOUT 60   /* seconds, when a handler names none */
#define CODEX_DEFAULT_TIMEOUT 600

/* One finding: {"ok": bool, "check": what, "fix": how (failures only)}. */
static int add(json_t *list, int ok, const char *fix, const char *fmt, ...) DOCKET_PRINTF(4, 5);

static int add(json_t *list, int ok, const char *fix, const char *fmt, ...)
{
	char what[2048];
	json_t *item;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	item = json_pack("{sb ss}", "ok", ok, "check", what);
	if (!item || (!ok && fix && json_object_set_new(item, "fix", json_string(fix)) < 0) ||
	    json_array_append_new(list, item) < 0)
		return docket_error_set_oom();
	return 0;
}

/*
 * The `n`th word (0-based) of a shell command as sh would read it: '...'
 * and "..." quoting and backslashes; enough for what integrate writes and
 * what people write by hand. 1 and *out, 0 when there is no such word.
 */
static int shell_word(docket_buf *out, const char *s, int n)
{
	int word = -1;

	docket_buf_clear(out);
	while (*s) {
		while (*s == ' ' || *s == '\t')
			s++;
		if (!*s)
			break;
		word++;
		docket_buf_clear(out);
		while (*s && *s != ' ' && *s != '\t') {
			if (*s == '\'') {
				for (s++; *s && *s != '\''; s++)
					if (docket_buf_putc(out, *s) < 0)
						return docket_error_set_oom();
				if (*s)
					s++;
			} else if (*s == '"') {
				for (s++; *s && *s != '"'; s++) {
					if (*s == '\\' && s[1])
						s++;
					if (docket_buf_putc(out, *s) < 0)
						return docket_error_set_oom();
				}
				if (*s)
					s++;
			} else {
				if (*s == '\\' && s[1])
					s++;
				if (docket_buf_putc(out, *s++) < 0)
					return docket_error_set_oom();
			}
		}
		if (word == n)
			return out->ptr ? 1 : 0;
	}
	return 0;
}

/* The word after `-L` in a command, or nothing. */
static int ledger_of(docket_buf *out, const char *cmd)
{
	docket_buf w = DOCKET_BUF_INIT;
	int i, rc = 0;

	for (i = 1; rc == 0; i++) {
		int got = shell_word(&w, cmd, i);

		if (got <= 0) {
			rc = got;
			break;
		}
		if (strcmp(w.ptr, "-L") == 0) {
			rc = shell_word(out, cmd, i + 1);
			break;
		}
	}
	docket_buf_dispose(&w);
	return rc;
}

static int is_executable(const char *path)
{
	struct stat st;

	return path && path[0] == '/' && stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

int docket_hook_fallback_ok(const char *prog)
{
	const char *slash = prog ? strrchr(prog, '/') : NULL;
	docket_buf beside = DOCKET_BUF_INIT;
	int ok;

	if (!slash || strcmp(slash + 1, "docket-hook-fast") != 0)
		return 1;
	ok = docket_buf_printf(&beside, "%.*s/docket-hook", (int)(slash - prog), prog) == 0 &&
	     is_executable(beside.ptr);
	docket_error_clear();
	docket_buf_dispose(&beside);
	return ok;
}

static int is_dir(const char *path)
{
	struct stat st;

	return path && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

typedef struct check_in {
	const char *file;          /* the settings or hooks file */
	const char *const *events;
	docket_client client;
	int default_timeout;       /* seconds */
	int budget_ms;
	const char *fix;           /* the command that reinstalls */
} check_in;

/* What the handlers that pass have in common, for one summary line. */
typedef struct handler_sum {
	size_t ok;
	json_int_t tmin, tmax;
	docket_buf prog, ledger;
} handler_sum;

/* One docket handler: its program, its ledger, its timeout. 1: it failed (reported). */
static int check_handler(json_t *list, const check_in *in, const char *event, const json_t *handler,
			 handler_sum *sum)
{
	const char *cmd = json_string_value(json_object_get(handler, "command"));
	const json_t *t = json_object_get(handler, "timeout");
	docket_buf prog = DOCKET_BUF_INIT, ledger = DOCKET_BUF_INIT;
	json_int_t timeout = json_is_integer(t) ? json_integer_value(t) : in->default_timeout;
	int error, fail;

	if ((error = shell_word(&prog, cmd ? cmd : "", 0)) < 0 || (error = ledger_of(&ledger, cmd ? cmd : "")) < 0)
		goto done;
	error = 0;
	fail = 1;
	if (!is_executable(prog.ptr))
		error = add(list, 0, in->fix, "%s: hooks.%s runs %s, which is not an executable file: the client skips the hook and runs the call",
			    in->file, event, prog.ptr ? prog.ptr : "(nothing)");
	else if (!docket_hook_fallback_ok(prog.ptr))
		error = add(list, 0, in->fix, "%s: hooks.%s runs %s, but docket-hook, which it runs for every event "
			    "its server does not answer, is not an executable file beside it: those events are not recorded",
			    in->file, event, prog.ptr);
	else if (!ledger.ptr || !is_dir(ledger.ptr))
		error = add(list, 0, in->fix, "%s: hooks.%s records into %s, which is not a ledger directory",
			    in->file, event, ledger.ptr ? ledger.ptr : "(no -L)");
	else if (timeout * 1000 <= in->budget_ms)
		error = add(list, 0, in->fix, "%s: hooks.%s has a timeout of %lld s, not above docket's budget of %d ms: the client may kill the hook and run the call",
			    in->file, event, (long long)timeout, in->budget_ms);
	else
		fail = 0;
	if (error < 0)
		goto done;
	if (fail) {
		error = 1;  /* reported: a failed check */
		goto done;
	}
	if (sum->ok++ == 0) {
		sum->tmin = sum->tmax = timeout;
		if (docket_buf_puts(&sum->prog, prog.ptr) < 0 || docket_buf_puts(&sum->ledger, ledger.ptr) < 0)
			error = docket_error_set_oom();
	}
	sum->tmin = timeout < sum->tmin ? timeout : sum->tmin;
	sum->tmax = timeout > sum->tmax ? timeout : sum->tmax;
done:
	docket_buf_dispose(&prog);
	docket_buf_dispose(&ledger);
	return error;
}

/* Every event docket installs has a handler of docket's, and each passes check_handler. */
static int check_handlers(json_t *list, const check_in *in, const json_t *doc)
{
	const json_t *hooks = json_object_get(doc, "hooks");
	handler_sum sum = { 0, 0, 0, DOCKET_BUF_INIT, DOCKET_BUF_INIT };
	size_t e, g, h, events = 0;
	int error = 0, failed = 0;

	for (e = 0; in->events[e] && error >= 0; e++) {
		const json_t *groups = json_object_get(hooks, in->events[e]);
		int found = 0;

		events++;
		for (g = 0; g < json_array_size(groups) && error >= 0; g++) {
			const json_t *list_h = json_object_get(json_array_get(groups, g), "hooks");

			for (h = 0; h < json_array_size(list_h) && error >= 0; h++) {
				const json_t *handler = json_array_get(list_h, h);

				if (!hook_is_ours(handler, in->client))
					continue;
				found = 1;
				if ((error = check_handler(list, in, in->events[e], handler, &sum)) > 0)
					failed = 1;
			}
		}
		if (!found && error >= 0) {
			failed = 1;
			error = add(list, 0, in->fix, "%s: hooks.%s has no docket hook: those events are not recorded",
				    in->file, in->events[e]);
		}
	}
	if (error >= 0 && !failed)
		error = add(list, 1, NULL, "%s: docket's hooks for all %zu events run %s (timeout %lld-%lld s) into %s",
			    in->file, events, sum.prog.ptr, (long long)sum.tmin, (long long)sum.tmax, sum.ledger.ptr);
	docket_buf_dispose(&sum.prog);
	docket_buf_dispose(&sum.ledger);
	return error < 0 ? error : 0;
}

/* The JSON document of `path`: 0 and *out, or a failed check (1). */
static int load(json_t **out, json_t *list, const char *path, const char *fix, int missing_fails)
{
	docket_buf text = DOCKET_BUF_INIT;
	int error = docket_buf_read_path(&text, path);

	*out = NULL;
	if (error == DOCKET_ENOTFOUND && !missing_fails) {
		docket_error_clear();
		docket_buf_dispose(&text);
		return 1;
	}
	if (error == 0 && docket_json_parse(out, text.ptr, text.len) == 0 && json_is_object(*out)) {
		docket_buf_dispose(&text);
		return 0;
	}
	json_decref(*out);
	*out = NULL;
	error = add(list, 0, fix, "%s: %s", path, error == DOCKET_ENOTFOUND ? "no such file: docket's hooks are not installed"
									      : "cannot be read as a JSON object");
	docket_error_clear();
	docket_buf_dispose(&text);
	return error < 0 ? error : 1;
}

/* ---- Claude Code ---- */

/* "disableAllHooks": true in a settings file Claude Code merges. */
static int claude_disabled(json_t *list, const char *path, const char *scope)
{
	json_t *doc = NULL;
	int rc, error = 0;

	if ((rc = load(&doc, list, path, NULL, 0)) != 0) {
		docket_error_clear();
		/* unreadable files were reported by load(); absent ones do not matter */
		return rc < 0 ? rc : 0;
	}
	if (json_is_true(json_object_get(doc, "disableAllHooks")))
		error = add(list, 0, "remove \"disableAllHooks\" from that file (Claude Code then runs no hook at all, docket's included)",
			    "%s: \"disableAllHooks\": true: Claude Code runs no hook", path);
	else if (json_is_true(json_object_get(doc, "allowManagedHooksOnly")) && strcmp(scope, "managed") != 0)
		error = add(list, 0, "install docket's hooks in the managed settings: docket integrate claude --scope managed",
			    "%s: \"allowManagedHooksOnly\": true: Claude Code runs only managed hooks, and docket's are in the %s scope",
			    path, scope);
	json_decref(doc);
	return error;
}

static int claude_files(docket_buf *user, docket_buf *project, docket_buf *local, docket_buf *managed)
{
	const char *home = getenv("HOME"), *cfg = getenv("CLAUDE_CONFIG_DIR"), *pd = getenv("CLAUDE_PROJECT_DIR");
	const char *mg = getenv("DOCKET_CLAUDE_MANAGED_SETTINGS");
	char cwd[4096];
	int error;

	if (!pd || !*pd)
		pd = getcwd(cwd, sizeof(cwd)) ? cwd : ".";
	if (cfg && *cfg)
		error = docket_buf_printf(user, "%s/settings.json", cfg);
	else
		error = docket_buf_printf(user, "%s/.claude/settings.json", home ? home : "");
	if (error == 0)
		error = docket_buf_printf(project, "%s/.claude/settings.json", pd);
	if (error == 0)
		error = docket_buf_printf(local, "%s/.claude/settings.local.json", pd);
	if (error == 0)
		error = docket_buf_puts(managed, mg && *mg ? mg : "/etc/claude-code/managed-settings.json");
	return error;
}

static int check_claude(json_t *list, const check_in *in, const char *scope)
{
	docket_buf f[4] = { DOCKET_BUF_INIT, DOCKET_BUF_INIT, DOCKET_BUF_INIT, DOCKET_BUF_INIT };
	json_t *doc = NULL;
	size_t i;
	int rc, error;

	if ((rc = load(&doc, list, in->file, in->fix, 1)) == 0)
		rc = check_handlers(list, in, doc);
	error = rc < 0 ? rc : 0;
	if (error == 0)
		error = claude_files(&f[0], &f[1], &f[2], &f[3]);
	for (i = 0; i < 4 && error == 0; i++)
		error = claude_disabled(list, f[i].ptr, scope);
	for (i = 0; i < 4; i++)
		docket_buf_dispose(&f[i]);
	json_decref(doc);
	return error;
}

/* ---- Codex ---- */

static int check_codex(json_t *list, const check_in *in, const char *config, const char *scope)
{
	const char *mdir = getenv("DOCKET_CODEX_MANAGED_DIR");
	docket_buf text = DOCKET_BUF_INIT, req = DOCKET_BUF_INIT;
	json_t *doc = NULL;
	char *block = NULL;
	int rc, error;

	if ((rc = load(&doc, list, in->file, in->fix, 1)) == 0)
		rc = check_handlers(list, in, doc);
	error = rc < 0 ? rc : 0;
	if (error == 0 && doc && config) {
		if ((error = docket_codex_trust_block(&block, doc, in->file)) < 0)
			goto done;
		if (docket_buf_read_path(&text, config) < 0) {
			docket_error_clear();
			error = add(list, 0, in->fix, "%s: cannot be read: Codex trusts no docket hook and skips them all", config);
		} else if (!*block || !strstr(text.ptr, block)) {
			error = add(list, 0, in->fix,
				    "%s: docket's hooks in %s are not trusted as they are now: Codex skips an untrusted or changed hook",
				    config, in->file);
		} else {
			error = add(list, 1, NULL, "%s: docket's hooks are trusted", config);
		}
	}
	if (error == 0 && strcmp(scope, "managed") != 0 &&
	    docket_buf_printf(&req, "%s/requirements.toml", mdir && *mdir ? mdir : "/etc/codex") == 0) {
		docket_buf_clear(&text);
		if (docket_buf_read_path(&text, req.ptr) == 0 && strstr(text.ptr, "allow_managed_hooks_only") &&
		    strstr(strstr(text.ptr, "allow_managed_hooks_only"), "true"))
			error = add(list, 0, "install docket's hooks as managed hooks: docket integrate codex --scope managed",
				    "%s: allow_managed_hooks_only: Codex runs only managed hooks, and docket's are in the %s scope",
				    req.ptr, scope);
		docket_error_clear();
	}
done:
	docket_free(block);
	json_decref(doc);
	docket_buf_dispose(&text);
	docket_buf_dispose(&req);
	return error;
}

int docket_integrate_check(json_t **out, docket_client client, const char *file, const char *config,
			   const char *scope, int budget_ms)
{
	docket_buf fix = DOCKET_BUF_INIT;
	json_t *list = json_array();
	check_in in;
	int error;

	*out = NULL;
	if (!list)
		return docket_error_set_oom();
	if (!scope)
		scope = "user";
	memset(&in, 0, sizeof(in));
	in.file = file;
	in.client = client;
	in.budget_ms = budget_ms > 0 ? budget_ms : DOCKET_HOOK_BUDGET_MS;
	in.events = client == DOCKET_CLIENT_CODEX ? hook_codex_events : hook_claude_events;
	in.default_timeout = client == DOCKET_CLIENT_CODEX ? CODEX_DEFAULT_TIMEOUT : CLAUDE_DEFAULT_TIMEOUT;
	if ((error = docket_buf_printf(&fix, "run: docket integrate %s --scope %s", docket_client_name(client),
				       scope)) < 0)
		goto done;
	in.fix = fix.ptr;
	error = client == DOCKET_CLIENT_CODEX ? check_codex(list, &in, config, scope) : check_claude(list, &in, scope);
done:
	docket_buf_dispose(&fix);
	if (error < 0) {
		json_decref(list);
		return error;
	}
	*out = list;
	return 0;
}
