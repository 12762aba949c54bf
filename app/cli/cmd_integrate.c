/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_integrate.c: `docket integrate claude|codex ...`: install docket's
 * hooks in a client's configuration (or remove them), so that every session
 * of that client is recorded live (docs/integrations.md).
 *
 * The hook command names this binary and the ledger by absolute paths, so
 * it works from any working directory. The ledger is created when missing.
 * A file is rewritten only when it changes (atomically: a temporary file in
 * the same directory, then rename, keeping the file's mode); --dry-run
 * prints the change as a unified diff (diff -u) and writes nothing.
 */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "integrations/integrations.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/error.h"
#include "util/file.h"
#include "util/json.h"

extern char **environ;

typedef struct integrate_args {
	const char *client;
	const char *settings;
	const char *scope;
	const char *policy;
	int enforce, uninstall, dry_run, check;
} integrate_args;

/* `path` made absolute against the working directory (not resolved). */
static int absolute(docket_buf *out, const char *path)
{
	char cwd[PATH_MAX], *real = realpath(path, NULL);
	int error;

	docket_buf_clear(out);
	if (real) {
		error = docket_buf_puts(out, real);
		free(real);
		return error;
	}
	if (path[0] == '/')
		return docket_buf_puts(out, path);
	if (!getcwd(cwd, sizeof(cwd)))
		return docket_error_set(DOCKET_ESTORAGE, "cannot read the working directory: %s", strerror(errno));
	return docket_buf_printf(out, "%s/%s", cwd, strncmp(path, "./", 2) == 0 ? path + 2 : path);
}

/* A policy source with its file part made absolute (git: sources stay). */
static int absolute_source(docket_buf *out, const char *src)
{
	const char *prefix = "", *rest = src;
	docket_buf p = DOCKET_BUF_INIT;
	int error;

	if (strncmp(src, "claude:", 7) == 0 || strncmp(src, "codex:", 6) == 0) {
		prefix = src[1] == 'l' ? "claude:" : "codex:";
		rest = src + strlen(prefix);
	}
	if (strncmp(rest, "git:", 4) == 0) {
		docket_buf_clear(out);
		return docket_buf_puts(out, src);
	}
	if ((error = absolute(&p, rest)) == 0) {
		docket_buf_clear(out);
		error = docket_buf_printf(out, "%s%s", prefix, p.ptr);
	}
	docket_buf_dispose(&p);
	return error;
}

/* The binary the hook command runs: docket-hook-fast beside this docket
 * when docket-hook is there too (its fallback: cli/hook_fast.c), else
 * docket-hook (the lean build, cli/hook_main.c), else this docket itself. */
static int self_path(docket_buf *out)
{
	static const char *const names[] = { "docket-hook-fast", "docket-hook" };
	char *real = realpath("/proc/self/exe", NULL), *slash;
	int error = 0, found = 0;

	if (!real)
		return docket_error_set(DOCKET_ESTORAGE, "cannot find the docket binary: %s", strerror(errno));
	slash = strrchr(real, '/');
	for (size_t i = 0; i < 2 && error == 0 && !found; i++) {
		docket_buf_clear(out);
		error = docket_buf_printf(out, "%.*s/%s", (int)(slash - real), real, names[i]);
		found = error == 0 && access(out->ptr, X_OK) == 0 && (i > 0 || docket_hook_fallback_ok(out->ptr));
	}
	if (error == 0 && !found) {
		docket_buf_clear(out);
		error = docket_buf_puts(out, real);
	}
	free(real);
	return error;
}

/* The settings file Claude Code reads for a scope. */
static int claude_scope_file(docket_buf *out, const char *scope)
{
	const char *home = getenv("HOME"), *cfg = getenv("CLAUDE_CONFIG_DIR");

	docket_buf_clear(out);
	if (!scope || strcmp(scope, "user") == 0) {
		if (cfg && *cfg)
			return docket_buf_printf(out, "%s/settings.json", cfg);
		if (!home || !*home)
			return docket_error_set(DOCKET_EINVALID, "HOME is not set: name the file with --settings");
		return docket_buf_printf(out, "%s/.claude/settings.json", home);
	}
	if (strcmp(scope, "project") == 0)
		return absolute(out, ".claude/settings.json");
	if (strcmp(scope, "local") == 0)
		return absolute(out, ".claude/settings.local.json");
	if (strcmp(scope, "managed") == 0)
		return docket_buf_puts(out, "/etc/claude-code/managed-settings.json");
	return docket_error_set(DOCKET_EINVALID, "unknown scope \"%s\" (user, project, local or managed)", scope);
}

/* mkdir -p of the directory that holds `path`. */
static int make_parent(const char *path)
{
	docket_buf d = DOCKET_BUF_INIT;
	size_t i;
	int error = docket_buf_puts(&d, path);

	for (i = 1; error == 0 && i < d.len; i++) {
		if (d.ptr[i] != '/')
			continue;
		d.ptr[i] = '\0';
		if (mkdir(d.ptr, 0755) != 0 && errno != EEXIST)
			error = docket_error_set(DOCKET_ESTORAGE, "cannot create %s: %s", d.ptr, strerror(errno));
		d.ptr[i] = '/';
	}
	docket_buf_dispose(&d);
	return error;
}

/* Replace `path` with `text` atomically, keeping its mode (new: 0644). */
static int write_file_atomic(const char *path, const char *text, size_t len)
{
	struct stat st;
	mode_t mode = stat(path, &st) == 0 ? (st.st_mode & 07777) : 0644;
	int error;

	if ((error = make_parent(path)) < 0)
		return error;
	return docket_file_replace(path, NULL, text, len, mode, 0);
}

/* `diff -u` of the old and new text, labelled with the file's name. */
static int print_diff(const char *path, const char *before, size_t blen, const char *after, size_t alen)
{
	char a[] = "/tmp/docket-diff-a.XXXXXX", b[] = "/tmp/docket-diff-b.XXXXXX";
	docket_buf la = DOCKET_BUF_INIT, lb = DOCKET_BUF_INIT;
	int fa = mkstemp(a), fb = mkstemp(b), status = 0, error = 0;
	pid_t pid;

	if (fa < 0 || fb < 0 || docket_write_all(fa, before, blen) != 0 || docket_write_all(fb, after, alen) != 0) {
		error = docket_error_set(DOCKET_ESTORAGE, "cannot write a temporary file: %s", strerror(errno));
		goto done;
	}
	fflush(stdout);
	if ((error = docket_buf_printf(&la, "%s (now)", path)) == 0 &&
	    (error = docket_buf_printf(&lb, "%s (with docket)", path)) == 0) {
		char *argv[] = { "diff", "-u", "--label", la.ptr, "--label", lb.ptr, a, b, NULL };

		if (posix_spawnp(&pid, "diff", NULL, NULL, argv, environ) != 0 ||
		    waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) > 1)
			error = docket_error_set(DOCKET_ERROR, "diff(1) failed; the new file would be:\n%.*s",
						 (int)alen, after);
	}
done:
	if (fa >= 0) { close(fa); unlink(a); }
	if (fb >= 0) { close(fb); unlink(b); }
	docket_buf_dispose(&la);
	docket_buf_dispose(&lb);
	return error;
}

static int dump_pretty(docket_buf *out, const json_t *doc)
{
	char *s = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	int error;

	if (!s)
		return docket_error_set_oom();
	error = docket_buf_puts(out, s);
	free(s);
	return error ? error : docket_buf_putc(out, '\n');
}

typedef int (*merge_fn)(json_t **out, json_t *doc, const docket_integrate_options *opts);

/*
 * Read, change, show or write one JSON settings file. Returns an exit code;
 * *result (may be NULL) gets the document as it is (or would be) now.
 */
static int update_json(const char *path, const docket_integrate_options *io, int dry_run,
		       merge_fn merge, json_t **result)
{
	docket_buf before = DOCKET_BUF_INIT, after = DOCKET_BUF_INIT;
	json_t *doc = NULL, *out = NULL, *orig = NULL;
	int error = docket_buf_read_path(&before, path), rc = CLI_EXIT_OK;

	if (error == DOCKET_ENOTFOUND) {
		docket_error_clear();
		error = 0;
		doc = json_object();
	} else if (error == 0) {
		error = docket_json_parse(&doc, before.ptr, before.len);
		if (error < 0)
			docket_error_prefix("%s: ", path);
	}
	if (error == 0 && !doc)
		error = docket_error_set_oom();
	if (error == 0 && !(orig = json_deep_copy(doc)))
		error = docket_error_set_oom();
	if (error == 0) {
		error = merge(&out, doc, io);
		doc = NULL;
		if (error < 0)
			docket_error_prefix("%s: ", path);
	}
	if (error == 0)
		error = dump_pretty(&after, out);
	if (error < 0) {
		rc = cli_fail(error, "cannot update the settings");
		goto done;
	}
	/* the same document (however the user formatted it) is left alone */
	if (json_equal(orig, out) && (before.len || json_object_size(out) == 0)) {
		printf("%s: unchanged\n", path);
	} else if (dry_run) {
		if ((error = print_diff(path, before.ptr ? before.ptr : "", before.len, after.ptr,
					    after.len)) < 0)
			rc = cli_fail(error, "cannot show the change");
	} else if ((error = write_file_atomic(path, after.ptr, after.len)) < 0) {
		rc = cli_fail(error, "cannot write the settings");
	} else {
		printf("%s: %s\n", path, io->uninstall ? "docket's hooks removed" : "docket's hooks written");
	}
done:
	if (rc == CLI_EXIT_OK && result)
		*result = json_incref(out);
	json_decref(doc);
	json_decref(out);
	json_decref(orig);
	docket_buf_dispose(&before);
	docket_buf_dispose(&after);
	return rc;
}

/* Replace docket's trust block in config.toml; verify what was written. */
static int update_trust(const char *config, const char *hooks_path, const json_t *hooks_doc, int dry_run)
{
	docket_buf before = DOCKET_BUF_INIT, check = DOCKET_BUF_INIT;
	char *block = NULL, *after = NULL;
	int error = docket_buf_read_path(&before, config), rc = CLI_EXIT_OK;

	if (error == DOCKET_ENOTFOUND) {
		docket_error_clear();
		error = 0;
	}
	if (error == 0 && (error = docket_codex_trust_block(&block, hooks_doc, hooks_path)) == 0)
		error = docket_codex_config_with_block(&after, before.ptr ? before.ptr : "", block);
	if (error < 0) {
		rc = cli_fail(error, "cannot update config.toml");
		goto done;
	}
	if (strcmp(before.ptr ? before.ptr : "", after) == 0) {
		printf("%s: unchanged\n", config);
	} else if (dry_run) {
		if ((error = print_diff(config, before.ptr ? before.ptr : "", before.len, after, strlen(after))) < 0)
			rc = cli_fail(error, "cannot show the change");
	} else if ((error = write_file_atomic(config, after, strlen(after))) < 0) {
		rc = cli_fail(error, "cannot write config.toml");
	} else if ((error = docket_buf_read_path(&check, config)) < 0 || !strstr(check.ptr, block)) {
		cli_error("%s: the trust entries did not read back as written", config);
		rc = CLI_EXIT_SYSTEM;
	} else {
		printf("%s: %s\n", config, *block ? "hook trust entries written and verified" : "hook trust entries removed");
	}
done:
	docket_free(block);
	docket_free(after);
	docket_buf_dispose(&before);
	docket_buf_dispose(&check);
	return rc;
}

/* The hooks file and the config.toml that trusts it, for a Codex scope. */
static int codex_scope_files(docket_buf *hooks, docket_buf *config, const char *scope)
{
	const char *home = getenv("CODEX_HOME"), *h = getenv("HOME"), *managed = getenv("DOCKET_CODEX_MANAGED_DIR");
	docket_buf dir = DOCKET_BUF_INIT;
	int error;

	if (home && *home)
		error = absolute(&dir, home);
	else if (h && *h)
		error = docket_buf_printf(&dir, "%s/.codex", h);
	else
		error = docket_error_set(DOCKET_EINVALID, "neither CODEX_HOME nor HOME is set");
	docket_buf_clear(hooks);
	docket_buf_clear(config);
	if (error == 0 && (!scope || strcmp(scope, "user") == 0))
		error = docket_buf_printf(hooks, "%s/hooks.json", dir.ptr);
	else if (error == 0 && strcmp(scope, "project") == 0)
		error = absolute(hooks, ".codex/hooks.json");
	else if (error == 0 && strcmp(scope, "managed") == 0)
		error = docket_buf_printf(hooks, "%s/hooks.json", managed && *managed ? managed : "/etc/codex");
	else if (error == 0)
		error = docket_error_set(DOCKET_EINVALID, "unknown scope \"%s\" (user, project or managed)", scope);
	/* managed hooks need no trust */
	if (error == 0 && !(scope && strcmp(scope, "managed") == 0))
		error = docket_buf_printf(config, "%s/config.toml", dir.ptr);
	docket_buf_dispose(&dir);
	return error;
}

/*
 * User scope: every session of every project records into one ledger, so a
 * default ./.docket (which would be the directory integrate ran in) becomes
 * $XDG_DATA_HOME/docket, else ~/.docket. -L or $DOCKET_LEDGER choose
 * another.
 */
static int user_ledger(docket_buf *out, const cli_global *g, const integrate_args *a)
{
	const char *xdg = getenv("XDG_DATA_HOME"), *home = getenv("HOME"), *env = getenv("DOCKET_LEDGER");
	int user = !a->settings && (!a->scope || strcmp(a->scope, "user") == 0);

	if (!user || (env && *env) || strcmp(g->ledger_path, "./.docket") != 0)
		return absolute(out, g->ledger_path);
	docket_buf_clear(out);
	if (xdg && xdg[0] == '/')
		return docket_buf_printf(out, "%s/docket", xdg);
	if (home && home[0] == '/')
		return docket_buf_printf(out, "%s/.docket", home);
	return docket_error_set(DOCKET_EINVALID, "neither XDG_DATA_HOME nor HOME is set: give the ledger with -L");
}

/* Print the findings of docket_integrate_check; CLI_EXIT_FOUND when one failed. */
static int run_check(docket_client client, const char *file, const char *config, const char *scope)
{
	json_t *list = NULL, *item;
	size_t i;
	int error = docket_integrate_check(&list, client, file, config, scope, 0), failed = 0;

	if (error < 0)
		return cli_fail(error, "cannot check the hooks");
	json_array_foreach(list, i, item) {
		int ok = json_is_true(json_object_get(item, "ok"));

		printf("%-5s %s\n", ok ? "ok" : "FAIL", json_string_value(json_object_get(item, "check")));
		if (!ok && json_string_value(json_object_get(item, "fix")))
			printf("      fix: %s\n", json_string_value(json_object_get(item, "fix")));
		failed |= !ok;
	}
	json_decref(list);
	if (failed)
		cli_error("docket's capture is not on for %s: calls would run unrecorded (see FAIL above)",
			  docket_client_name(client));
	return failed ? CLI_EXIT_FOUND : CLI_EXIT_OK;
}

static int ensure_ledger(const char *path)
{
	docket_open_options oo = DOCKET_OPEN_OPTIONS_INIT;
	docket_ledger *l = NULL;
	int error;

	oo.flags = DOCKET_OPEN_CREATE;
	error = docket_ledger_open(&l, path, &oo);
	docket_ledger_free(l);
	return error;
}

int cmd_integrate(const cli_command *cmd, const cli_global *g, int argc, char **argv)
{
	integrate_args a;
	const cli_opt opts[] = {
		{ CLI_OPT_ARG, "CLIENT", 0, &a.client, NULL, "claude or codex", CLI_OPT_REQUIRED },
		{ CLI_OPT_STRING, "settings", 0, &a.settings, "FILE", "the settings file to change", 0 },
		{ CLI_OPT_STRING, "scope", 0, &a.scope, "SCOPE",
		  "the file the client reads for user (default), project, local or managed settings", 0 },
		{ CLI_OPT_SWITCH, "enforce", 0, &a.enforce, NULL, "deny or ask what --policy denies or asks about", 0 },
		{ CLI_OPT_STRING, "policy", 0, &a.policy, "SRC", "the policy to enforce (any source replay takes)", 0 },
		{ CLI_OPT_SWITCH, "uninstall", 0, &a.uninstall, NULL, "remove exactly the hooks docket added", 0 },
		{ CLI_OPT_SWITCH, "dry-run", 0, &a.dry_run, NULL, "print the change as a diff, write nothing", 0 },
		{ CLI_OPT_SWITCH, "check", 0, &a.check, NULL,
		  "only check that docket's hooks are present, runnable, enabled and trusted", 0 },
		{ CLI_OPT_END, NULL, 0, NULL, NULL, NULL, 0 }
	};
	docket_integrate_options io = DOCKET_INTEGRATE_OPTIONS_INIT;
	docket_buf self = DOCKET_BUF_INIT, ledger = DOCKET_BUF_INIT, src = DOCKET_BUF_INIT, file = DOCKET_BUF_INIT;
	docket_buf config = DOCKET_BUF_INIT;
	json_t *result = NULL;
	int rc, error = 0, codex;

	memset(&a, 0, sizeof(a));
	if ((rc = cli_parse(cmd, opts,
			    "Installs `docket hook CLIENT` as the client's hook for every tool call and\n"
			    "session event, keeping every other setting; a second run changes nothing.\n"
			    "Then checks, as --check does alone, that the client will run them: present,\n"
			    "pointing at an executable and an existing ledger, a timeout above docket's\n"
			    "2 s budget, not disabled (disableAllHooks, managed-only hooks) and, for\n"
			    "Codex, trusted; exit 1 with the fix when one is not. User scope records\n"
			    "into one ledger, $XDG_DATA_HOME/docket or ~/.docket (-L to choose).",
			    argc, argv)) != CLI_PARSE_OK)
		return CLI_PARSE_EXIT(rc);
	if (strcmp(a.client, "claude") != 0 && strcmp(a.client, "codex") != 0) {
		cli_error("unknown client '%s' (expected claude or codex)", a.client);
		return CLI_EXIT_USAGE;
	}
	codex = strcmp(a.client, "codex") == 0;
	if (codex && a.settings) {
		cli_error("--settings is for claude; Codex's files follow from --scope and $CODEX_HOME");
		return CLI_EXIT_USAGE;
	}
	if (a.enforce != (a.policy != NULL)) {
		cli_error(a.enforce ? "--enforce needs --policy SRC" : "--policy is for --enforce");
		return CLI_EXIT_USAGE;
	}
	if (a.settings && a.scope) {
		cli_error("--settings and --scope name the same thing: give one");
		return CLI_EXIT_USAGE;
	}
	if (a.check && (a.uninstall || a.dry_run || a.enforce)) {
		cli_error("--check only reads: it takes --scope or --settings, nothing else");
		return CLI_EXIT_USAGE;
	}
	if ((error = self_path(&self)) < 0 || (error = user_ledger(&ledger, g, &a)) < 0 ||
	    (a.policy && (error = absolute_source(&src, a.policy)) < 0) ||
	    (codex ? (error = codex_scope_files(&file, &config, a.scope))
		   : a.settings ? (error = absolute(&file, a.settings)) : (error = claude_scope_file(&file, a.scope))) < 0) {
		rc = cli_fail(error, "cannot resolve the paths");
		goto done;
	}
	if (a.check) {
		rc = run_check(codex ? DOCKET_CLIENT_CODEX : DOCKET_CLIENT_CLAUDE, file.ptr,
			       config.len ? config.ptr : NULL, a.scope);
		goto done;
	}
	io.docket_path = self.ptr;
	io.ledger_path = ledger.ptr;
	io.policy = a.policy ? src.ptr : NULL;
	io.uninstall = a.uninstall;
	if (!a.uninstall && !a.dry_run && (error = ensure_ledger(ledger.ptr)) < 0) {
		rc = cli_fail(error, "cannot create the ledger");
		goto done;
	}
	rc = update_json(file.ptr, &io, a.dry_run, codex ? docket_integrate_codex : docket_integrate_claude,
			 &result);
	if (rc == CLI_EXIT_OK && codex && config.len)
		rc = update_trust(config.ptr, file.ptr, result, a.dry_run);
	if (rc == CLI_EXIT_OK && !a.uninstall && !a.dry_run) {
		printf("ledger: %s\n", ledger.ptr);
		rc = run_check(codex ? DOCKET_CLIENT_CODEX : DOCKET_CLIENT_CLAUDE, file.ptr,
			       config.len ? config.ptr : NULL, a.scope);
	}
done:
	json_decref(result);
	docket_buf_dispose(&config);
	docket_buf_dispose(&self);
	docket_buf_dispose(&ledger);
	docket_buf_dispose(&src);
	docket_buf_dispose(&file);
	return rc;
}
