/* SPDX-License-Identifier: Apache-2.0 */
/*
 * policy.c: policy lifecycle (arena, rule tables, finalisation) and loading
 * from a source string: "PATH" | "codex:PATH" | "claude:PATH".
 */
#include <dirent.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "policy.h"

#include "util/alloc.h"
#include "util/error.h"

#define POL_MAX_FILE (16u << 20)   /* no policy file is bigger than 16 MiB */
#define POL_MAX_FILES 4096

const char *docket_policy_verdict_name(docket_verdict v)
{
	switch (v) {
	case DOCKET_VERDICT_ALLOWED: return "allowed";
	case DOCKET_VERDICT_APPROVAL_REQUIRED: return "approval_required";
	case DOCKET_VERDICT_DENIED: return "denied";
	case DOCKET_VERDICT_UNSUPPORTED: return "unsupported";
	}
	return "unknown";
}

const char *docket_policy_format_str(docket_policy_format f)
{
	switch (f) {
	case DOCKET_POLICY_DOCKET: return "docket";
	case DOCKET_POLICY_CODEX: return "codex";
	case DOCKET_POLICY_CLAUDE: return "claude";
	}
	return "unknown";
}

const char *pol_decision_name(int d)
{
	switch (d) {
	case POL_ALLOW: return "allow";
	case POL_ASK: return "ask";
	case POL_DENY: return "deny";
	case POL_UNSUPPORTED: return "unsupported";
	}
	return "unknown";
}

const char *pol_codex_decision_name(int d)
{
	switch (d) {
	case POL_ALLOW: return "allow";
	case POL_ASK: return "prompt";
	case POL_DENY: return "forbidden";
	}
	return "unsupported";
}

/* ---- arena ---- */

void *pol_arena_alloc(pol_arena_block **arena, size_t size)
{
	pol_arena_block *b = *arena;
	void *ptr;

	if (size > SIZE_MAX - sizeof(*b) - 32)
		return NULL;
	size = (size + 15) & ~(size_t)15;
	if (size == 0)
		size = 16;
	if (!b || b->cap - b->used < size) {
		/* a call's first block is small: replay keeps thousands of calls
		 * in flight between its threads (and one this size is served by
		 * malloc's per-thread cache) */
		size_t cap = b ? 16384 : 1024 - sizeof(*b);

		if (size > cap)
			cap = size;

		b = docket_malloc(sizeof(*b) + cap);
		if (!b)
			return NULL;
		b->next = *arena;
		b->used = 0;
		b->cap = cap;
		*arena = b;
	}
	ptr = b->data + b->used;
	b->used += size;
	return ptr;
}

void pol_arena_free(pol_arena_block *b)
{
	while (b) {
		pol_arena_block *next = b->next;

		docket_free(b);
		b = next;
	}
}

void *pol_alloc(docket_policy *p, size_t size)
{
	return pol_arena_alloc(&p->arena, size);
}

char *pol_strndup(docket_policy *p, const char *s, size_t n)
{
	char *d;

	if (n == SIZE_MAX)
		return NULL;
	d = pol_alloc(p, n + 1);
	if (!d)
		return NULL;
	memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

char *pol_strdup(docket_policy *p, const char *s)
{
	return pol_strndup(p, s, strlen(s));
}

int pol_new(docket_policy **out, int format, const char *source)
{
	docket_policy *p = docket_calloc(1, sizeof(*p));

	*out = NULL;
	if (!p)
		return docket_error_set_oom();
	p->format = format;
	p->heuristics = format == DOCKET_POLICY_CLAUDE ? HEUR_CLAUDE : HEUR_CODEX;
	p->heredoc_prefix = false;  /* Codex 0.169 and 0.171 do not reduce a heredoc script (issue 33) */
	/* effective defaults when neither the policy nor the context says */
	p->approval = AP_ON_REQUEST;
	p->sandbox = format == DOCKET_POLICY_CLAUDE ? SB_FULL_ACCESS :
		     format == DOCKET_POLICY_CODEX ? SB_READ_ONLY : SB_WORKSPACE_WRITE;
	if (!(p->source = pol_strdup(p, source ? source : "(memory)"))) {
		docket_free(p);
		return docket_error_set_oom();
	}
	*out = p;
	return 0;
}

void docket_policy_free(docket_policy *p)
{
	if (!p)
		return;
	pol_arena_free(p->arena);
	docket_free(p->prefix);
	docket_free(p->prefix_index);
	docket_htab_dispose(&p->programs);
	docket_free(p->tools);
	docket_free(p->tool_index);
	docket_free(p->tool_lead);
	docket_free(p->net);
	docket_free(p->hostexe);
	docket_free(p->pkgs);
	docket_free(p);
}

static int vec_push(void **v, size_t *n, size_t *cap, size_t elem, void **slot)
{
	if (*n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 8;
		void *nv;

		if (ncap > SIZE_MAX / elem)
			return docket_error_set(DOCKET_ENOMEM, "too many rules");
		nv = docket_realloc(*v, ncap * elem);
		if (!nv)
			return docket_error_set_oom();
		*v = nv;
		*cap = ncap;
	}
	*slot = (char *)*v + *n * elem;
	memset(*slot, 0, elem);
	(*n)++;
	return 0;
}

int pol_add_prefix(docket_policy *p, pol_prefix_rule **out)
{
	return vec_push((void **)&p->prefix, &p->nprefix, &p->capprefix, sizeof(**out), (void **)out);
}

int pol_add_tool(docket_policy *p, pol_tool_rule **out)
{
	return vec_push((void **)&p->tools, &p->ntools, &p->captools, sizeof(**out), (void **)out);
}

int pol_add_net(docket_policy *p, pol_net_rule **out)
{
	return vec_push((void **)&p->net, &p->nnet, &p->capnet, sizeof(**out), (void **)out);
}

int pol_add_hostexe(docket_policy *p, pol_host_exe **out)
{
	return vec_push((void **)&p->hostexe, &p->nhostexe, &p->caphostexe, sizeof(**out), (void **)out);
}

int pol_add_pkg(docket_policy *p, pol_pkg_eco **out)
{
	return vec_push((void **)&p->pkgs, &p->npkgs, &p->cappkgs, sizeof(**out), (void **)out);
}

int pol_strv_push(docket_policy *p, pol_strv *v, const char *s)
{
	const char **nv;
	char *copy;

	if (!(copy = pol_strdup(p, s)))
		return docket_error_set_oom();
	/* arena vectors grow by copying; policies are small and built once */
	if (!(nv = pol_alloc(p, (v->n + 1) * sizeof(*nv))))
		return docket_error_set_oom();
	if (v->n)
		memcpy(nv, v->v, v->n * sizeof(*nv));
	nv[v->n++] = copy;
	v->v = nv;
	return 0;
}

const pol_host_exe *pol_find_hostexe(const docket_policy *p, const char *name)
{
	/* the last definition of a name wins, as in Codex's map insert */
	for (size_t i = p->nhostexe; i > 0; i--)
		if (strcmp(p->hostexe[i - 1].name, name) == 0)
			return &p->hostexe[i - 1];
	return NULL;
}

static int prefix_before(const docket_policy *p, uint32_t x, uint32_t y)
{
	int c = strcmp(p->prefix[x].program, p->prefix[y].program);

	return c < 0 || (c == 0 && x < y);
}

/* Stable merge sort of rule indices by program (invariant 2); no globals. */
static void sort_index(const docket_policy *p, uint32_t *a, uint32_t *tmp, size_t n)
{
	size_t mid = n / 2, i = 0, j = mid, k = 0;

	if (n < 2)
		return;
	sort_index(p, a, tmp, mid);
	sort_index(p, a + mid, tmp, n - mid);
	while (i < mid && j < n)
		tmp[k++] = prefix_before(p, a[j], a[i]) ? a[j++] : a[i++];
	while (i < mid)
		tmp[k++] = a[i++];
	while (j < n)
		tmp[k++] = a[j++];
	memcpy(a, tmp, n * sizeof(*a));
}

/* Which tool rules the enforced verdict must consult (enforce.c). */
static void note_rule_kinds(docket_policy *p)
{
	p->bash_rules = p->read_rules = p->edit_rules = false;
	for (size_t i = 0; i < p->ntools; i++) {
		const pol_tool_rule *t = &p->tools[i];

		p->bash_rules = p->bash_rules || t->kind == TK_BASH || t->kind == TK_ANY;
		p->read_rules = p->read_rules || (t->decision > POL_ALLOW && (t->kind == TK_READ || t->kind == TK_ANY));
		p->edit_rules = p->edit_rules || (t->decision > POL_ALLOW && (t->kind == TK_EDIT || t->kind == TK_ANY));
	}
}

/* The first byte of the command text a Bash rule can match; 0: any (eval_shell.c bash_spec_matches). */
static unsigned char bash_lead(const pol_tool_rule *t)
{
	if (t->kind != TK_BASH || !t->spec || t->spec_len == 0)
		return 0;
	if (t->spec_kind == SPEC_EXACT || t->spec_kind == SPEC_PREFIX || (t->spec_kind == SPEC_GLOB && t->lit_len))
		return (unsigned char)t->spec[0];
	return 0;
}

/* tools_of (invariant 4): per kind, its rules and the TK_ANY rules, in source order. */
static int index_tools(docket_policy *p)
{
	size_t nany = 0, total, used = 0;
	uint32_t *v;
	pol_rule_list *bash = &p->tools_of[TK_BASH];

	docket_free(p->tool_index);
	docket_free(p->tool_lead);
	p->tool_index = NULL;
	p->tool_lead = NULL;
	memset(p->tools_of, 0, sizeof(p->tools_of));
	if (p->ntools == 0)
		return 0;
	if (p->ntools > UINT32_MAX / TK_COUNT)
		return docket_error_set(DOCKET_EINVALID, "too many rules");
	for (size_t i = 0; i < p->ntools; i++)
		nany += p->tools[i].kind == TK_ANY;
	total = p->ntools + nany * (TK_COUNT - 1);
	if (!(v = p->tool_index = docket_malloc(total * sizeof(*v))))
		return docket_error_set_oom();
	for (int k = 0; k < TK_COUNT; k++) {
		p->tools_of[k].v = v + used;
		for (size_t i = 0; i < p->ntools; i++)
			if (p->tools[i].kind == k || p->tools[i].kind == TK_ANY)
				v[used++] = (uint32_t)i;
		p->tools_of[k].n = (size_t)(v + used - p->tools_of[k].v);
	}
	if (bash->n == 0)
		return 0;
	if (!(p->tool_lead = docket_malloc(bash->n)))
		return docket_error_set_oom();
	for (size_t j = 0; j < bash->n; j++)
		p->tool_lead[j] = bash_lead(&p->tools[bash->v[j]]);
	bash->lead = p->tool_lead;
	return 0;
}

static int program_eq(const void *slot, const void *key)
{
	return strcmp(((const pol_program_run *)slot)->program, key) == 0;
}

/* programs (invariant 4): each program's run of the sorted prefix_index. */
static int index_programs(docket_policy *p)
{
	int error;

	docket_htab_dispose(&p->programs);
	p->programs = (docket_htab)DOCKET_HTAB_INIT(pol_program_run);
	for (size_t lo = 0, hi; lo < p->nprefix; lo = hi) {
		const char *prog = p->prefix[p->prefix_index[lo]].program;
		uint32_t h = docket_hash(DOCKET_HASH_SEED, prog, strlen(prog));
		pol_program_run *run;

		for (hi = lo + 1; hi < p->nprefix && strcmp(p->prefix[p->prefix_index[hi]].program, prog) == 0; hi++)
			;
		if ((error = docket_htab_reserve(&p->programs)) < 0)
			return error;
		run = docket_htab_find(&p->programs, h, program_eq, prog);
		run->program = prog;
		run->lo = (uint32_t)lo;
		run->hi = (uint32_t)hi;
		docket_htab_take(&p->programs, run, h);
	}
	return 0;
}

bool pol_program_rules(const docket_policy *p, const char *program, size_t *lo, size_t *hi)
{
	const pol_program_run *run;

	if (!p->programs.n)
		return false;
	run = docket_htab_find(&p->programs, docket_hash(DOCKET_HASH_SEED, program, strlen(program)), program_eq,
			       program);
	if (docket_htab_free_at(&p->programs, run))
		return false;
	*lo = run->lo;
	*hi = run->hi;
	return true;
}

bool pol_finalized(const docket_policy *p)
{
	return (p->ntools == 0 || p->tool_index) && (p->nprefix == 0 || p->programs.n);
}

int pol_finalize(docket_policy *p)
{
	static atomic_uint_fast64_t serials;
	uint32_t *tmp;
	int error;

	/* what a result built from this policy (enforce.c's path globs) is keyed by */
	p->serial = (uint64_t)atomic_fetch_add(&serials, 1) + 1;

	docket_free(p->prefix_index);
	p->prefix_index = NULL;
	docket_htab_dispose(&p->programs);
	note_rule_kinds(p);
	if ((error = index_tools(p)) < 0)
		return error;
	if (p->nprefix > UINT32_MAX)
		return docket_error_set(DOCKET_EINVALID, "too many rules");
	if (p->nprefix) {
		p->prefix_index = docket_malloc(p->nprefix * sizeof(uint32_t));
		tmp = docket_malloc(p->nprefix * sizeof(uint32_t));
		if (!p->prefix_index || !tmp) {
			docket_free(tmp);
			return docket_error_set_oom();
		}
		for (size_t i = 0; i < p->nprefix; i++)
			p->prefix_index[i] = (uint32_t)i;
		sort_index(p, p->prefix_index, tmp, p->nprefix);
		docket_free(tmp);
	}
	return index_programs(p);
}

docket_policy_format docket_policy_get_format(const docket_policy *p)
{
	return (docket_policy_format)p->format;
}

size_t docket_policy_rule_count(const docket_policy *p)
{
	return p->nprefix + p->ntools + p->nnet;
}

/* ---- loading ---- */

static int read_file(char **out, size_t *len, const char *path)
{
	FILE *f;
	struct stat st;
	char *buf = NULL;
	size_t n;

	*out = NULL;
	if (stat(path, &st) != 0)
		return docket_error_set(errno == ENOENT ? DOCKET_ENOTFOUND : DOCKET_ESTORAGE,
					"%s: %s", path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return docket_error_set(DOCKET_EINVALID, "%s: not a regular file", path);
	if ((uint64_t)st.st_size > POL_MAX_FILE)
		return docket_error_set(DOCKET_EINVALID, "%s: policy file larger than %u bytes",
					path, POL_MAX_FILE);
	if (!(f = fopen(path, "rb")))
		return docket_error_set(DOCKET_ESTORAGE, "%s: %s", path, strerror(errno));
	buf = docket_malloc((size_t)st.st_size + 1);
	if (!buf) {
		fclose(f);
		return docket_error_set_oom();
	}
	n = fread(buf, 1, (size_t)st.st_size, f);
	fclose(f);
	if (n != (size_t)st.st_size) {
		docket_free(buf);
		return docket_error_set(DOCKET_ESTORAGE, "%s: short read", path);
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;
}

static int load_text(docket_policy *p, int format, const char *name, const char *text, size_t len)
{
	switch (format) {
	case DOCKET_POLICY_CODEX: return pol_load_codex_rules(p, name, text, len);
	case DOCKET_POLICY_CLAUDE: return pol_load_claude_settings(p, name, text, len);
	default: return pol_load_yaml(p, name, text, len);
	}
}

/* scope: enum pol_scope for a Claude settings file, else ignored */
static int load_path(docket_policy *p, int format, const char *path, int scope)
{
	char *text = NULL;
	size_t len = 0;
	const char *name;
	int error;

	if (!(name = pol_strdup(p, path)))
		return docket_error_set_oom();
	if ((error = read_file(&text, &len, path)) < 0)
		return error;
	if (format == DOCKET_POLICY_CLAUDE)
		error = pol_load_claude_scoped(p, name, text, len, scope);
	else
		error = load_text(p, format, name, text, len);
	docket_free(text);
	return error;
}

/*
 * A project directory, as Claude Code resolves it: the user's
 * ~/.claude/settings.json, the project's .claude/settings.json and
 * .claude/settings.local.json, and the managed settings (lowest precedence
 * first; absent files are skipped). $DOCKET_CLAUDE_MANAGED_SETTINGS names
 * another managed file (tests).
 */
static int load_claude_dir(docket_policy *p, const char *dir)
{
	const char *home = getenv("HOME");
	const char *managed = getenv("DOCKET_CLAUDE_MANAGED_SETTINGS");
	docket_buf path[4] = { DOCKET_BUF_INIT, DOCKET_BUF_INIT, DOCKET_BUF_INIT, DOCKET_BUF_INIT };
	static const int scopes[4] = { SCOPE_USER, SCOPE_PROJECT, SCOPE_LOCAL, SCOPE_MANAGED };
	int error = 0;

	if (home && *home)
		error = docket_buf_printf(&path[0], "%s/.claude/settings.json", home);
	if (error == 0)
		error = docket_buf_printf(&path[1], "%s/.claude/settings.json", dir);
	if (error == 0)
		error = docket_buf_printf(&path[2], "%s/.claude/settings.local.json", dir);
	if (error == 0)
		error = docket_buf_puts(&path[3], managed && *managed ? managed : POL_CLAUDE_MANAGED_PATH);
	for (size_t i = 0; i < 4 && error == 0; i++) {
		struct stat st;

		if (!path[i].ptr || (i == 1 && path[0].ptr && strcmp(path[0].ptr, path[1].ptr) == 0))
			continue;
		if (stat(path[i].ptr, &st) != 0 && errno == ENOENT)
			continue;
		error = load_path(p, DOCKET_POLICY_CLAUDE, path[i].ptr, scopes[i]);
	}
	for (size_t i = 0; i < 4; i++)
		docket_buf_dispose(&path[i]);
	return error;
}

static int scope_named(const char *name, int *out)
{
	static const char *const names[SCOPE_COUNT] = { "user", "project", "local", "flag", "managed" };

	for (int i = 0; i < SCOPE_COUNT; i++)
		if (strcmp(names[i], name) == 0) {
			*out = i;
			return 0;
		}
	return docket_error_set(DOCKET_EINVALID, "unknown settings scope '%s' (expected user, project, local, managed or flag)",
				name);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every *.rules file of a directory, in name order (as Codex reads them). */
static int load_rules_dir(docket_policy *p, const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **names = NULL;
	size_t n = 0, cap = 0;
	int error = 0;

	if (!d)
		return docket_error_set(DOCKET_ESTORAGE, "%s: %s", dir, strerror(errno));
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);
		char *full;
		docket_buf b = DOCKET_BUF_INIT;
		struct stat st;

		if (l < 7 || strcmp(de->d_name + l - 6, ".rules") != 0 || de->d_name[0] == '.')
			continue;
		if ((error = docket_buf_printf(&b, "%s/%s", dir, de->d_name)) < 0)
			goto cleanup;
		full = b.ptr;
		if (stat(full, &st) != 0 || !S_ISREG(st.st_mode)) {
			docket_buf_dispose(&b);
			continue;
		}
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 16;
			char **nn;

			if (ncap > POL_MAX_FILES) {
				docket_buf_dispose(&b);
				error = docket_error_set(DOCKET_EINVALID, "%s: too many .rules files", dir);
				goto cleanup;
			}
			if (!(nn = docket_realloc(names, ncap * sizeof(*nn)))) {
				docket_buf_dispose(&b);
				error = docket_error_set_oom();
				goto cleanup;
			}
			names = nn;
			cap = ncap;
		}
		names[n++] = full;
	}
	qsort(names, n, sizeof(*names), cmp_str);
	for (size_t i = 0; i < n && error == 0; i++)
		error = load_path(p, DOCKET_POLICY_CODEX, names[i], 0);
cleanup:
	closedir(d);
	for (size_t i = 0; i < n; i++)
		docket_free(names[i]);
	docket_free(names);
	return error;
}

int docket_policy_load(docket_policy **out, const char *source)
{
	return docket_policy_load_scoped(out, source, NULL);
}

int docket_policy_load_scoped(docket_policy **out, const char *source, const char *scope)
{
	docket_policy *p = NULL;
	int format = DOCKET_POLICY_DOCKET, sc = -1;
	const char *path = source;
	struct stat st;
	int error;

	*out = NULL;
	if (scope && (error = scope_named(scope, &sc)) < 0)
		return error;
	if (!source || !*source)
		return docket_error_set(DOCKET_EINVALID, "empty policy source");
	if (strncmp(source, "codex:", 6) == 0) {
		format = DOCKET_POLICY_CODEX;
		path = source + 6;
	} else if (strncmp(source, "claude:", 7) == 0) {
		format = DOCKET_POLICY_CLAUDE;
		path = source + 7;
	} else if (strncmp(source, "docket:", 7) == 0) {
		path = source + 7;
	} else {
		/* "name:..." that is not a file: a format prefix docket does not know
		 * (a one-letter name is a Windows drive, a '/' before ':' a path) */
		size_t n = strspn(source, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-");

		if (n >= 2 && n <= 32 && source[n] == ':' && stat(source, &st) != 0)
			return docket_error_set(DOCKET_EINVALID,
				"unknown policy format '%.*s' in %s (expected PATH, codex:PATH or claude:PATH)",
				(int)n, source, source);
	}
	if (!*path)
		return docket_error_set(DOCKET_EINVALID, "policy source %s names no file", source);
	if (scope && format != DOCKET_POLICY_CLAUDE)
		return docket_error_set(DOCKET_EINVALID, "a settings scope applies only to claude: sources");
	if ((error = pol_new(&p, format, source)) < 0)
		return error;
	if (format == DOCKET_POLICY_CODEX && stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		error = load_rules_dir(p, path);
	else if (format == DOCKET_POLICY_CLAUDE && stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		error = scope ? docket_error_set(DOCKET_EINVALID, "%s: a scope names one settings file, not a directory", path)
			      : load_claude_dir(p, path);
	else
		error = load_path(p, format, path, sc >= 0 ? sc : pol_claude_scope_of(path, getenv("HOME")));
	if (error == 0)
		error = pol_finalize(p);
	if (error < 0) {
		docket_policy_free(p);
		return error;
	}
	*out = p;
	return 0;
}

int docket_policy_load_buffer(docket_policy **out, docket_policy_format format, const char *name,
			      const char *text, size_t len)
{
	docket_policy *p = NULL;
	int error;

	*out = NULL;
	if (format != DOCKET_POLICY_DOCKET && format != DOCKET_POLICY_CODEX &&
	    format != DOCKET_POLICY_CLAUDE)
		return docket_error_set(DOCKET_EINVALID, "unknown policy format %d", (int)format);
	if ((error = pol_new(&p, format, name)) < 0)
		return error;
	if ((error = load_text(p, format, p->source, text, len)) == 0)
		error = pol_finalize(p);
	if (error < 0) {
		docket_policy_free(p);
		return error;
	}
	*out = p;
	return 0;
}

int docket_policy_never_asks(const docket_policy *policy, const json_t *settings)
{
	const json_t *v = settings ? json_object_get(settings, "approval_policy") : NULL;
	int approval = policy ? policy->approval : AP_UNSET;
	bool gsandbox, grules;

	if (v && !json_is_null(v) && pol_parse_approval(v, &approval, &gsandbox, &grules) < 0)
		approval = AP_UNSET;
	if (approval == AP_NEVER)
		return 1;
	return policy && (policy->mode == MODE_BYPASS || policy->mode == MODE_DONT_ASK);
}
