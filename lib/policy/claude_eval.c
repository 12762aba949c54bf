/* SPDX-License-Identifier: Apache-2.0 */
/*
 * claude_eval.c: what Claude Code decides on its own, besides the rules a
 * user writes, as measured against the real CLI (docs/policy.md, "Claude
 * Code fidelity"; fixtures/policy/claude-groundtruth.json):
 *
 *   - wrappers it looks through before matching Bash rules;
 *   - the file arguments of read-only commands, checked as Read calls;
 *   - the file-changing commands acceptEdits allows, and the sensitive
 *     directories it still asks for;
 *   - the documentation hosts WebFetch may read without a rule;
 *   - the command substitutions its deny rules look into.
 *
 * Pure functions of their arguments, used by eval.c.
 */
#include <stdio.h>
#include <string.h>

#include "policy.h"

static bool is_name_value(const char *w)
{
	const char *eq = strchr(w, '=');

	if (!eq || eq == w)
		return false;
	for (const char *c = w; c < eq; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || *c == '_' ||
		      (c > w && *c >= '0' && *c <= '9')))
			return false;
	return true;
}

/* timeout [-k D] [-s SIG] [--long[=v]] DURATION CMD... */
static size_t timeout_skip(const char *const *argv, size_t argc)
{
	size_t i = 1;

	while (i < argc && argv[i][0] == '-') {
		if (strcmp(argv[i], "-k") == 0 || strcmp(argv[i], "-s") == 0 ||
		    strcmp(argv[i], "--kill-after") == 0 || strcmp(argv[i], "--signal") == 0)
			i++;
		i++;
	}
	return i + 1 < argc ? i + 1 : 0; /* the duration, then a command */
}

size_t claude_wrapper_skip(const char *const *argv, size_t argc, bool deny)
{
	size_t skip = 0;

	for (int guard = 0; guard < 16 && skip < argc; guard++) {
		const char *const *w = argv + skip;
		size_t n = argc - skip, k = 0;

		if (strcmp(w[0], "timeout") == 0) {
			k = timeout_skip(w, n);
		} else if (strcmp(w[0], "nohup") == 0) {
			k = n > 1 ? 1 : 0;
		} else if (strcmp(w[0], "time") == 0) {
			k = n > 1 && strcmp(w[1], "-p") == 0 ? 2 : 1;
			k = k < n ? k : 0;
		} else if (deny && strcmp(w[0], "env") == 0) {
			k = 1;
			while (k < n && (is_name_value(w[k]) || strcmp(w[k], "-i") == 0 || strcmp(w[k], "-") == 0))
				k++;
			k = k < n ? k : 0;
		} else if (deny && is_name_value(w[0])) {
			while (k < n && is_name_value(w[k]))
				k++;
			k = k < n ? k : 0;
		}
		if (k == 0)
			break;
		skip += k;
	}
	return skip;
}

const char *claude_skip_time(const char *script)
{
	const char *t = script;

	while (*t == ' ' || *t == '\t')
		t++;
	if (strncmp(t, "time", 4) != 0 || (t[4] != ' ' && t[4] != '\t'))
		return script;
	for (t += 4; *t == ' ' || *t == '\t'; t++)
		;
	if (strncmp(t, "-p", 2) == 0 && (t[2] == ' ' || t[2] == '\t'))
		for (t += 2; *t == ' ' || *t == '\t'; t++)
			;
	return *t ? t : script;
}

const char *claude_skip_assignments(const char *text)
{
	const char *t = text;

	for (;;) {
		const char *w = t, *end;
		bool ok = false;

		while (*w == ' ' || *w == '\t')
			w++;
		end = w;
		while ((*end >= 'a' && *end <= 'z') || (*end >= 'A' && *end <= 'Z') || *end == '_' ||
		       (end > w && *end >= '0' && *end <= '9'))
			end++;
		if (end > w && *end == '=') {
			end++;
			/* a variable in the value too (deny rules look through any assignment) */
			while (*end && *end != ' ' && *end != '\t' && *end != '\'' && *end != '"' &&
			       !(*end == '$' && end[1] == '(') && *end != '`')
				end++;
			ok = *end == ' ' || *end == '\t';
		}
		if (!ok)
			return t;
		t = end;
		while (*t == ' ' || *t == '\t')
			t++;
	}
}

/* ---- versions ---- */

/* The Claude Code versions measured against the real CLI (docs/policy.md). */
static const struct { uint32_t v; const char *name; } modelled[] = {
	{ POL_VERSION(2, 1, 197), "2.1.197" },
	{ POL_VERSION(2, 1, 328), "2.1.328" },
	{ POL_VERSION(2, 1, 332), "2.1.332" },
};

static size_t nearest_modelled(uint32_t v)
{
	size_t best = sizeof(modelled) / sizeof(modelled[0]) - 1;
	uint32_t dbest = UINT32_MAX;

	if (v == 0)
		return best; /* unknown: the newest */
	for (size_t i = 0; i < sizeof(modelled) / sizeof(modelled[0]); i++) {
		uint32_t d = v > modelled[i].v ? v - modelled[i].v : modelled[i].v - v;

		if (d < dbest || (d == dbest && modelled[i].v > modelled[best].v))
			best = i, dbest = d;
	}
	return best;
}

uint32_t claude_model_version(uint32_t v)
{
	return modelled[nearest_modelled(v)].v;
}

const char *docket_policy_engine_version(const char *runtime, bool *exact)
{
	unsigned a, b, c;
	size_t i;

	if (exact)
		*exact = false;
	if (!runtime || sscanf(runtime, "claude-code/%u.%u.%u", &a, &b, &c) != 3 || a >= 1000 || b >= 1000 || c >= 1000)
		return NULL;
	i = nearest_modelled(POL_VERSION(a, b, c));
	if (exact)
		*exact = modelled[i].v == POL_VERSION(a, b, c);
	return modelled[i].name;
}

static bool in_list(const char *s, const char *const *list)
{
	for (size_t i = 0; list[i]; i++)
		if (strcmp(list[i], s) == 0)
			return true;
	return false;
}

static const char *const readers[] = {
	"cat", "head", "tail", "less", "more", "wc", "ls", "file", "stat", "nl", "od", "xxd",
	"hexdump", "strings", "tree", "du", "md5sum", "sha1sum", "sha256sum", "sort", "uniq",
	"cut", "diff", "cmp", "tac", "grep", "egrep", "fgrep", "rg", NULL
};

bool claude_file_reader(const char *const *argv, size_t argc)
{
	return argc > 0 && in_list(shell_basename(argv[0]), readers);
}

bool claude_file_arg(const char *const *argv, size_t argc, size_t i)
{
	static const char *const pattern_first[] = { "grep", "egrep", "fgrep", "rg", NULL };
	const char *prog;
	bool pattern_seen = false;

	if (argc == 0 || i == 0 || i >= argc)
		return false;
	prog = shell_basename(argv[0]);
	if (!in_list(prog, readers) || argv[i][0] == '-' || !argv[i][0])
		return false;
	if (!in_list(prog, pattern_first))
		return strcmp(argv[i - 1], "-n") != 0 || (strcmp(prog, "head") != 0 && strcmp(prog, "tail") != 0);
	/* grep PATTERN FILE...: the first operand is the pattern unless -e gave one */
	for (size_t k = 1; k < i; k++) {
		if (strcmp(argv[k], "-e") == 0 || strcmp(argv[k], "-f") == 0) {
			pattern_seen = true;
			k++;
		} else if (argv[k][0] != '-') {
			pattern_seen = true;
		}
	}
	return pattern_seen && strcmp(argv[i - 1], "-e") != 0;
}

bool claude_file_changing(const char *const *argv, size_t argc)
{
	static const char *const changers[] = { "touch", "mkdir", "rm", "rmdir", "mv", "cp", NULL };

	if (argc > 1 && strcmp(shell_basename(argv[0]), "sed") == 0) {
		/* sed -i (-i.bak, --in-place[=SUFFIX]) edits its files */
		for (size_t i = 1; i < argc; i++)
			if (strncmp(argv[i], "-i", 2) == 0 || strncmp(argv[i], "--in-place", 10) == 0)
				return true;
		return false;
	}
	return argc > 1 && in_list(shell_basename(argv[0]), changers);
}

bool claude_sensitive_path(const char *path, const char *root)
{
	static const char *const dirs[] = { ".git", ".claude", NULL };
	size_t rl = strlen(root);
	const char *rest;

	while (rl > 1 && root[rl - 1] == '/')
		rl--;
	if (strncmp(path, root, rl) != 0 || (path[rl] != '/' && path[rl] != '\0'))
		return false;
	for (rest = path + rl; *rest == '/'; rest++)
		;
	for (size_t i = 0; dirs[i]; i++) {
		size_t n = strlen(dirs[i]);

		if (strncmp(rest, dirs[i], n) == 0 && (rest[n] == '/' || rest[n] == '\0'))
			return true;
	}
	return false;
}

/* Claude Code 2.1.197's list: a host, or a host and a path prefix. */
static const char *const preapproved[] = {
	"platform.claude.com", "code.claude.com", "modelcontextprotocol.io", "github.com/anthropics",
	"agentskills.io", "docs.python.org", "en.cppreference.com", "docs.oracle.com",
	"learn.microsoft.com", "developer.mozilla.org", "go.dev", "pkg.go.dev", "www.php.net",
	"docs.swift.org", "kotlinlang.org", "ruby-doc.org", "doc.rust-lang.org",
	"www.typescriptlang.org", "react.dev", "angular.io", "vuejs.org", "nextjs.org",
	"expressjs.com", "nodejs.org", "bun.sh", "jquery.com", "getbootstrap.com", "tailwindcss.com",
	"d3js.org", "threejs.org", "redux.js.org", "webpack.js.org", "jestjs.io", "reactrouter.com",
	"docs.djangoproject.com", "flask.palletsprojects.com", "fastapi.tiangolo.com",
	"pandas.pydata.org", "numpy.org", "www.tensorflow.org", "pytorch.org", "scikit-learn.org",
	"matplotlib.org", "requests.readthedocs.io", "jupyter.org", "laravel.com", "symfony.com",
	"wordpress.org/documentation", "docs.spring.io", "hibernate.org", "tomcat.apache.org",
	"gradle.org", "maven.apache.org", "asp.net", "dotnet.microsoft.com", "blazor.net",
	"reactnative.dev", "docs.flutter.dev", "developer.apple.com", "developer.android.com",
	"keras.io", "spark.apache.org", "huggingface.co/docs", "www.kaggle.com/docs",
	"www.mongodb.com", "redis.io", "www.postgresql.org", "dev.mysql.com", "www.sqlite.org",
	"graphql.org", "prisma.io", "docs.getdbt.com", "docs.aws.amazon.com", "cloud.google.com",
	"learn.microsoft.com", "kubernetes.io", "www.docker.com", "www.terraform.io",
	"www.ansible.com", "vercel.com/docs", "docs.stripe.com", "docs.netlify.com",
	"devcenter.heroku.com", "dev.wix.com/docs", "cypress.io", "selenium.dev", "docs.unity.com",
	"docs.unrealengine.com", "git-scm.com", "nginx.org", "httpd.apache.org",
	NULL
};

bool claude_preapproved_url(const char *host, const char *path)
{
	size_t hl = strlen(host);

	if (!path)
		path = "";
	for (size_t i = 0; preapproved[i]; i++) {
		const char *e = preapproved[i], *slash = strchr(e, '/');
		size_t el = slash ? (size_t)(slash - e) : strlen(e), pl;

		if (el != hl || memcmp(e, host, hl) != 0)
			continue;
		if (!slash)
			return true;
		/* a path prefix: refuse encoded separators and dots that could climb out */
		for (const char *c = path; *c; c++)
			if (c[0] == '%' && (c[1] == '2' || (c[1] == '5' && (c[2] == 'c' || c[2] == 'C'))) &&
			    (c[2] == 'f' || c[2] == 'F' || c[2] == 'e' || c[2] == 'E' || c[1] == '5'))
				return false;
		pl = strlen(slash);
		if (strncmp(path, slash, pl) == 0 && (path[pl] == '\0' || path[pl] == '/'))
			return true;
	}
	return false;
}

bool claude_next_substitution(const char *text, size_t *pos, size_t *start, size_t *len)
{
	for (size_t i = *pos; text[i]; i++) {
		if (text[i] == '\\' && text[i + 1]) {
			i++;
		} else if (text[i] == '`') {
			const char *close = strchr(text + i + 1, '`');

			if (!close)
				return false;
			*start = i + 1;
			*len = (size_t)(close - text) - i - 1;
			*pos = (size_t)(close - text) + 1;
			return true;
		} else if (text[i] == '$' && text[i + 1] == '(' && text[i + 2] != '(') {
			int depth = 1;
			size_t k = i + 2;

			for (; text[k] && depth > 0; k++)
				depth += text[k] == '(' ? 1 : text[k] == ')' ? -1 : 0;
			if (depth != 0)
				return false;
			*start = i + 2;
			*len = k - 1 - (i + 2);
			*pos = i + 2; /* nested substitutions are found on the way */
			return true;
		}
	}
	return false;
}
