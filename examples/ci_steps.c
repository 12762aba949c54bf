/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ci_steps.c: the `run:` steps of one job of a GitHub Actions workflow,
 * read with libfyaml, for examples/ci_recipe_test.sh to run verbatim.
 *
 *   ci_steps WORKFLOW JOB OUTDIR
 *
 * writes OUTDIR/env (the job's env: as `export KEY='VALUE'` lines) and, for
 * the Nth step (from 01), OUTDIR/NN.sh (its run: text as written),
 * OUTDIR/NN.env (the step's env:), OUTDIR/NN.if (its if:, empty when none)
 * and OUTDIR/NN.name; a `uses:` step gets OUTDIR/NN.uses (the action) and no
 * .sh. It refuses (exit 1, saying why) what a test cannot run as GitHub
 * would: an expression `${{ ... }}` in a run: or an env: value (GitHub
 * substitutes those before the shell sees them), a shell other than bash, a
 * step with neither run: nor uses:, a job without steps. Exit 2: usage.
 */
#include <libfyaml.h>
#include <stdio.h>
#include <string.h>

static int fail(const char *what, const char *detail)
{
	fprintf(stderr, "ci_steps: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
	return 1;
}

/* The scalar at `key` of mapping `map` (NUL-terminated in `out`), or NULL. */
static const char *scalar_at(struct fy_node *map, const char *key, char *out, size_t cap)
{
	struct fy_node *n = map ? fy_node_mapping_lookup_by_string(map, key, FY_NT) : NULL;
	const char *s;
	size_t len;

	if (!n || !fy_node_is_scalar(n) || !(s = fy_node_get_scalar(n, &len)) || len >= cap)
		return NULL;
	memcpy(out, s, len);
	out[len] = '\0';
	return out;
}

static int has_expression(const char *s, size_t len)
{
	for (size_t i = 0; i + 2 < len; i++)
		if (s[i] == '$' && s[i + 1] == '{' && s[i + 2] == '{')
			return 1;
	return 0;
}

/* Write `len` bytes of `s` to DIR/NAME. */
static int write_file(const char *dir, const char *name, const char *s, size_t len)
{
	char path[4096];
	FILE *f;
	int ok;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path))
		return fail("path too long", name);
	if (!(f = fopen(path, "w")))
		return fail("cannot write", path);
	ok = fwrite(s, 1, len, f) == len;
	ok = (fclose(f) == 0) && ok;
	return ok ? 0 : fail("cannot write", path);
}

/* An env: mapping as `export KEY='VALUE'` lines into DIR/NAME. */
static int write_env(const char *dir, const char *name, struct fy_node *env)
{
	char path[4096];
	void *it = NULL;
	struct fy_node_pair *p;
	FILE *f;
	int rc = 0;

	if (env && !fy_node_is_mapping(env))
		return fail("env: is not a mapping", name);
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path))
		return fail("path too long", name);
	if (!(f = fopen(path, "w")))
		return fail("cannot write", path);
	while (env && rc == 0 && (p = fy_node_mapping_iterate(env, &it))) {
		struct fy_node *k = fy_node_pair_key(p), *v = fy_node_pair_value(p);
		const char *ks, *vs;
		size_t kl, vl;

		if (!fy_node_is_scalar(k) || !fy_node_is_scalar(v) || !(ks = fy_node_get_scalar(k, &kl)) ||
		    !(vs = fy_node_get_scalar(v, &vl))) {
			rc = fail("env: holds something other than KEY: VALUE", name);
			break;
		}
		if (has_expression(vs, vl) || memchr(vs, '\'', vl)) {
			rc = fail("an env: value holds ${{ or a quote", name);
			break;
		}
		fprintf(f, "export %.*s='%.*s'\n", (int)kl, ks, (int)vl, vs);
	}
	if (fclose(f) != 0 && rc == 0)
		rc = fail("cannot write", path);
	return rc;
}

static int step_shell_ok(struct fy_node *step, const char *job_shell)
{
	char shell[64];
	const char *s = scalar_at(step, "shell", shell, sizeof(shell));

	if (!s)
		s = job_shell;
	return s && strcmp(s, "bash") == 0;
}

static int write_step(const char *dir, int n, struct fy_node *step, const char *job_shell)
{
	struct fy_node *run = fy_node_mapping_lookup_by_string(step, "run", FY_NT);
	char name[32], text[1024];
	const char *s;
	size_t len;
	int rc;

	if (!fy_node_is_mapping(step))
		return fail("a step is not a mapping", NULL);
	snprintf(name, sizeof(name), "%02d.name", n);
	s = scalar_at(step, "name", text, sizeof(text));
	if ((rc = write_file(dir, name, s ? s : "", s ? strlen(s) : 0)) != 0)
		return rc;
	snprintf(name, sizeof(name), "%02d.if", n);
	s = scalar_at(step, "if", text, sizeof(text));
	if ((rc = write_file(dir, name, s ? s : "", s ? strlen(s) : 0)) != 0)
		return rc;
	if (!run) {
		if (!(s = scalar_at(step, "uses", text, sizeof(text))))
			return fail("a step has neither run: nor uses:", NULL);
		snprintf(name, sizeof(name), "%02d.uses", n);
		return write_file(dir, name, s, strlen(s));
	}
	if (!fy_node_is_scalar(run) || !(s = fy_node_get_scalar(run, &len)))
		return fail("a run: is not text", NULL);
	if (has_expression(s, len))
		return fail("a run: holds an expression ${{ ... }} that only GitHub can substitute", NULL);
	if (!step_shell_ok(step, job_shell))
		return fail("a run: step's shell is not bash (defaults: run: shell: bash)", NULL);
	snprintf(name, sizeof(name), "%02d.sh", n);
	if ((rc = write_file(dir, name, s, len)) != 0)
		return rc;
	snprintf(name, sizeof(name), "%02d.env", n);
	return write_env(dir, name, fy_node_mapping_lookup_by_string(step, "env", FY_NT));
}

static int write_job(struct fy_node *job, const char *dir)
{
	struct fy_node *steps = fy_node_mapping_lookup_by_string(job, "steps", FY_NT);
	struct fy_node *defaults = fy_node_mapping_lookup_by_string(job, "defaults", FY_NT);
	struct fy_node *run = defaults ? fy_node_mapping_lookup_by_string(defaults, "run", FY_NT) : NULL;
	char shell[64];
	const char *job_shell = scalar_at(run, "shell", shell, sizeof(shell));
	struct fy_node *step;
	void *it = NULL;
	int n = 0, rc;

	if (!steps || !fy_node_is_sequence(steps) || fy_node_sequence_item_count(steps) == 0)
		return fail("the job has no steps", NULL);
	if ((rc = write_env(dir, "env", fy_node_mapping_lookup_by_string(job, "env", FY_NT))) != 0)
		return rc;
	while ((step = fy_node_sequence_iterate(steps, &it)))
		if (++n > 99 || (rc = write_step(dir, n, step, job_shell)) != 0)
			return n > 99 ? fail("more than 99 steps", NULL) : rc;
	return 0;
}

int main(int argc, char **argv)
{
	struct fy_document *doc;
	struct fy_node *root, *jobs, *job;
	int rc;

	if (argc != 4) {
		fputs("usage: ci_steps WORKFLOW JOB OUTDIR\n", stderr);
		return 2;
	}
	if (!(doc = fy_document_build_from_file(NULL, argv[1])))
		return fail("cannot parse", argv[1]);
	root = fy_document_root(doc);
	jobs = root && fy_node_is_mapping(root) ? fy_node_mapping_lookup_by_string(root, "jobs", FY_NT) : NULL;
	job = jobs ? fy_node_mapping_lookup_by_string(jobs, argv[2], FY_NT) : NULL;
	rc = jobs && job && fy_node_is_mapping(job) ? write_job(job, argv[3]) : fail("no such job", argv[2]);
	fy_document_destroy(doc);
	return rc;
}
