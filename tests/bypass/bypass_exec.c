/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bypass_exec: the bypass property through the BINARIES. COUNT scripts from
 * the grammar (bypass_gen.c) each go through `docket policy eval --calls`
 * under each of the three policy formats, and once through a hook with
 * --enforce (one of the six client x format combinations, in turn, half of
 * them through the lean `docket-hook`, half through `docket hook`). No eval
 * may answer `allowed`; no hook may let the call through (it must answer
 * deny or ask, or block with exit 2). The hooks run two at a time (two
 * workers). Prints the counts; exit 1 on any bypass (each is printed).
 *
 *   bypass_exec DOCKET DOCKET_HOOK [--count N] [--seed S]
 *
 * The eval side is eval_all(): every script under each of the three formats
 * through `policy eval --calls` (one batch per format).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "bypass_gen.h"
#include "util/buf.h"

static const char *const eval_ctx =
	"{\"cwd\":\"/w\",\"workspace_roots\":[\"/w\"],\"approval_policy\":\"never\",\"client_sandbox\":true}";

typedef struct counts {
	unsigned long evals, hooks, bypasses, errors;
	unsigned long per_combo[6];
} counts;

static const char *policy_src(size_t k, const bypass_policy *bp);

/* Run argv with `in` on stdin; its stdout into out (cleared). Returns the exit status, -1: not run. */
static int run(char *const *argv, const char *in, size_t inlen, docket_buf *out)
{
	int pin[2], pout[2], status = -1;
	pid_t pid;
	char buf[4096];
	ssize_t n;

	docket_buf_clear(out);
	if (pipe(pin) < 0)
		return -1;
	if (pipe(pout) < 0) {
		close(pin[0]);
		close(pin[1]);
		return -1;
	}
	if ((pid = fork()) < 0)
		return -1;
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(pin[0], 0);
		dup2(pout[1], 1);
		if (null >= 0)
			dup2(null, 2);
		close(pin[0]);
		close(pin[1]);
		close(pout[0]);
		close(pout[1]);
		execv(argv[0], argv);
		_exit(127);
	}
	close(pin[0]);
	close(pout[1]);
	/* the hooks read all of stdin before they answer: write, then read */
	for (size_t off = 0; off < inlen;) {
		n = write(pin[1], in + off, inlen - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	close(pin[1]);
	while ((n = read(pout[0], buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || docket_buf_put(out, buf, (size_t)n) < 0)
			break;
	}
	close(pout[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (docket_buf_putc(out, '\0') < 0)
		return -1;
	out->len--;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static char *dumps(json_t *v)
{
	char *s = v ? json_dumps(v, JSON_COMPACT) : NULL;

	json_decref(v);
	return s;
}

/*
 * Every script through `docket policy eval --calls` under policy `src` (one
 * process, one verdict line per call, as a CI job evaluates a batch): the
 * count of calls answered `allowed` (each printed) or with no verdict
 * (errors). `calls` holds the calls, one JSON line each, in script order.
 */
static void eval_batch(const char *docket, const char *src, const docket_buf *calls, char *const *scripts,
		       unsigned long n, docket_buf *out, counts *c)
{
	char *argv[] = { (char *)docket, "policy", "eval", (char *)src, "--calls", "calls.jsonl", "--context",
			 (char *)eval_ctx, NULL };
	unsigned long i = 0;
	FILE *f = fopen("calls.jsonl", "w");
	int rc = -1;

	/* a file, not stdin: run() writes all of its input before it reads */
	if (f) {
		int ok = fwrite(calls->ptr ? calls->ptr : "", 1, calls->len, f) == calls->len;

		if (fclose(f) == 0 && ok)
			rc = run(argv, "", 0, out);
	}

	for (char *line = out->ptr, *nl; line && *line && i < n; line = nl ? nl + 1 : NULL, i++) {
		json_t *r;
		const char *v;

		if ((nl = strchr(line, '\n')))
			*nl = '\0';
		r = json_loads(line, 0, NULL);
		v = json_string_value(json_object_get(r, "verdict"));
		c->evals++;
		if (!v) {
			fprintf(stderr, "bypass_exec: policy eval %s gave no verdict: %s\n  answer: %s\n", src,
				scripts[i], line);
			c->errors++;
		} else if (strcmp(v, "allowed") == 0) {
			printf("BYPASS via policy eval (%s): %s\n  answer: %s\n", src, scripts[i], line);
			c->bypasses++;
		}
		json_decref(r);
	}
	if (rc != 0 || i != n) {
		fprintf(stderr, "bypass_exec: policy eval --calls %s exited %d after %lu of %lu verdicts\n", src, rc,
			i, n);
		c->errors++;
	}
}

/* The eval side: every script under each of the three policy formats. */
static void eval_all(const char *docket, unsigned long count, unsigned long long seed, counts *c)
{
	size_t np;
	const bypass_policy *bp = bypass_policies(&np);
	docket_buf script = DOCKET_BUF_INIT, calls = DOCKET_BUF_INIT, out = DOCKET_BUF_INIT;
	char **scripts = calloc(count ? count : 1, sizeof(*scripts));
	bypass_gen g;
	int error = 0;

	bypass_gen_seed(&g, seed);
	for (unsigned long i = 0; scripts && i < count && error == 0; i++) {
		char *call;

		if ((error = bypass_script(&g, &script)) < 0 || !(scripts[i] = strdup(script.ptr))) {
			error = -1;
			break;
		}
		call = dumps(json_pack("{s:s,s:{s:[sss]}}", "tool", "shell", "args", "command", "bash", "-lc",
				       script.ptr));
		if (!call || docket_buf_puts(&calls, call) < 0 || docket_buf_putc(&calls, '\n') < 0)
			error = -1;
		free(call);
	}
	if (!scripts || error < 0) {
		c->errors++;
	} else {
		for (size_t k = 0; k < np; k++)
			eval_batch(docket, policy_src(k, bp), &calls, scripts, count, &out, c);
	}
	for (unsigned long i = 0; scripts && i < count; i++)
		free(scripts[i]);
	free(scripts);
	docket_buf_dispose(&script);
	docket_buf_dispose(&calls);
	docket_buf_dispose(&out);
}

/* One script through a hook (`combo`: client * 3 + format): 1 when it let the call through. */
static int hook_one(const char *docket, const char *lean, unsigned combo, bool use_lean, const char *src,
		    const char *script, unsigned long id, docket_buf *out, counts *c)
{
	static const char *const clients[] = { "claude", "codex" };
	char tid[48];
	char *ev, *argv_full[] = { (char *)docket, "hook", (char *)clients[combo / 3], "--enforce", "--policy",
				   (char *)src, NULL };
	char *argv_lean[] = { (char *)lean, "hook", (char *)clients[combo / 3], "--enforce", "--policy", (char *)src,
			      NULL };
	int rc;

	snprintf(tid, sizeof(tid), "t%lu-%u", id, combo);
	ev = dumps(json_pack("{s:s,s:s,s:s,s:s,s:s,s:{s:s},s:s}", "session_id", "bypass", "transcript_path",
			     "/nonexistent/t.jsonl", "cwd", "/w", "hook_event_name", "PreToolUse", "tool_name", "Bash",
			     "tool_input", "command", script, "tool_use_id", tid));
	if (!ev)
		return c->errors++, 0;
	rc = run(use_lean ? argv_lean : argv_full, ev, strlen(ev), out);
	free(ev);
	c->hooks++;
	c->per_combo[combo]++;
	if (strstr(out->ptr, "\"permissionDecision\":\"deny\"") || strstr(out->ptr, "\"permissionDecision\":\"ask\""))
		return 0;
	if (rc < 0 || rc == 127) {
		fprintf(stderr, "bypass_exec: the hook did not run (exit %d): %s\n", rc, script);
		return c->errors++, 0;
	}
	return rc != 2;   /* exit 2: the hook blocked the call; anything else let it through */
}

static const char *policy_src(size_t k, const bypass_policy *bp)
{
	static char src[3][64];

	snprintf(src[k], sizeof(src[k]), "%s%s", strcmp(bp[k].format, "docket") == 0 ? "" :
		 strcmp(bp[k].format, "codex") == 0 ? "codex:" : "claude:", bp[k].file_name);
	return src[k];
}

/* Worker `w` of 2: scripts i with i % 2 == w. Writes its counts to fd. */
static int worker(unsigned w, const char *docket, const char *lean, unsigned long count, unsigned long long seed,
		  int fd)
{
	size_t np;
	const bypass_policy *bp = bypass_policies(&np);
	docket_buf script = DOCKET_BUF_INIT, out = DOCKET_BUF_INIT;
	counts c;
	bypass_gen g;

	memset(&c, 0, sizeof(c));
	bypass_gen_seed(&g, seed);
	for (unsigned long i = 0; i < count; i++) {
		unsigned combo = (unsigned)(i % 6);

		/* both workers generate every script: the sequence is the seed's */
		if (bypass_script(&g, &script) < 0) {
			c.errors++;
			break;
		}
		if (i % 2 != w)
			continue;
		if (hook_one(docket, lean, combo, (i / 6) % 2 == 0, policy_src(combo % 3, bp), script.ptr, i, &out,
			     &c)) {
			c.bypasses++;
			printf("BYPASS via %s hook %s (%s): %s\n  answer: %s\n", (i / 6) % 2 == 0 ? "docket-hook" : "docket",
			       combo / 3 ? "codex" : "claude", policy_src(combo % 3, bp), script.ptr, out.ptr);
		}
	}
	fflush(stdout);
	docket_buf_dispose(&script);
	docket_buf_dispose(&out);
	return write(fd, &c, sizeof(c)) == (ssize_t)sizeof(c) ? 0 : 1;
}

static int write_policies(void)
{
	size_t np;
	const bypass_policy *bp = bypass_policies(&np);

	for (size_t k = 0; k < np; k++) {
		FILE *f = fopen(bp[k].file_name, "w");

		if (!f || fputs(bp[k].text, f) < 0 || fclose(f) != 0)
			return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long count = 5000;
	unsigned long long seed = 2626;
	char dir[] = "/tmp/bypass-exec.XXXXXX", docket[4096], lean[4096], env[4200];
	counts total;
	int fds[2], rc = 0;
	pid_t pids[2];

	if (argc < 3) {
		fprintf(stderr, "usage: bypass_exec DOCKET DOCKET_HOOK [--count N] [--seed S]\n");
		return 2;
	}
	for (int i = 3; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--count") == 0)
			count = strtoul(argv[i + 1], NULL, 10);
		else if (strcmp(argv[i], "--seed") == 0)
			seed = strtoull(argv[i + 1], NULL, 10);
	}
	if (!realpath(argv[1], docket) || !realpath(argv[2], lean) || !mkdtemp(dir) || chdir(dir) != 0 ||
	    write_policies() < 0 || pipe(fds) < 0) {
		perror("bypass_exec: setup");
		return 99;
	}
	/* the hooks' own environment: HOME, a ledger, no managed settings */
	snprintf(env, sizeof(env), "%s/home", dir);
	if (mkdir(env, 0700) < 0)
		return 99;
	setenv("HOME", env, 1);
	snprintf(env, sizeof(env), "%s/ledger", dir);
	setenv("DOCKET_LEDGER", env, 1);
	snprintf(env, sizeof(env), "%s/none", dir);
	setenv("DOCKET_CLAUDE_MANAGED_SETTINGS", env, 1);
	setenv("NO_COLOR", "1", 1);
	setenv("LC_ALL", "C", 1);
	fflush(stdout);
	for (unsigned w = 0; w < 2; w++) {
		if ((pids[w] = fork()) < 0)
			return 99;
		if (pids[w] == 0)
			_exit(worker(w, docket, lean, count, seed, fds[1]));
	}
	close(fds[1]);
	memset(&total, 0, sizeof(total));
	eval_all(docket, count, seed, &total);
	for (unsigned w = 0; w < 2; w++) {
		counts c;

		if (read(fds[0], &c, sizeof(c)) != (ssize_t)sizeof(c)) {
			rc = 99;
			continue;
		}
		total.evals += c.evals;
		total.hooks += c.hooks;
		total.bypasses += c.bypasses;
		total.errors += c.errors;
		for (unsigned k = 0; k < 6; k++)
			total.per_combo[k] += c.per_combo[k];
	}
	for (unsigned w = 0; w < 2; w++) {
		int status;

		if (waitpid(pids[w], &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
			rc = 99;
	}
	printf("bypass_exec: %lu scripts; %lu verdicts of `docket policy eval --calls` (every script under each of "
	       "the 3 formats), %lu hook runs "
	       "(claude x docket/codex/claude: %lu/%lu/%lu, codex x docket/codex/claude: %lu/%lu/%lu; "
	       "half docket-hook, half docket hook); bypasses: %lu, errors: %lu\n",
	       count, total.evals, total.hooks, total.per_combo[0], total.per_combo[1], total.per_combo[2],
	       total.per_combo[3], total.per_combo[4], total.per_combo[5], total.bypasses, total.errors);
	if (rc == 0 && (total.bypasses || total.errors || total.evals != 3 * count || total.hooks != count))
		rc = 1;
	{
		char *rm[] = { "/bin/rm", "-rf", dir, NULL };
		docket_buf out = DOCKET_BUF_INIT;

		if (chdir("/") == 0)
			run(rm, "", 0, &out);
		docket_buf_dispose(&out);
	}
	return rc;
}
