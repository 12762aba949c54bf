/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_replay.c: `docket replay`: re-evaluate recorded calls against a new
 * policy (or two policies, or every commit of a policy's history) and show
 * what would change (DESIGN §8, docs/replay.md).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cli.h"

#include "docket/replay.h"
#include "fleet/fleet.h"
#include "util/error.h"

typedef struct replay_args {
	const char *policy, *compare, *compare_b, *history, *range, *repo;
	const char *session, *since, *until, *approvals, *fail_on, *format;
	const char *from, *ledger_id, *host;   /* the fleet database and its filters */
	const char *assume_sandbox;
	int json;
	int ran_despite_deny;   /* list the calls that ran although a deny rule names them */
} replay_args;

/* Everything the run owns. */
typedef struct replay_run {
	docket_policy *policy, *base;
	docket_replay_history *history;
	const docket_policy *const *policies;
	size_t n;
	const docket_policy *baseline;
	const char *label, *base_label;
} replay_run;

static int parse_fail_on(const char *s, unsigned *out)
{
	*out = 0;
	while (s && *s) {
		size_t n = strcspn(s, ",");

		if (n == 8 && strncmp(s, "loosened", n) == 0)
			*out |= DOCKET_REPLAY_FAIL_LOOSENED;
		else if (n == 9 && strncmp(s, "tightened", n) == 0)
			*out |= DOCKET_REPLAY_FAIL_TIGHTENED;
		else if (n == 7 && strncmp(s, "changed", n) == 0)
			*out |= DOCKET_REPLAY_FAIL_CHANGED;
		else
			return -1;
		s += n + (s[n] == ',');
	}
	return 0;
}

static int parse_format(const replay_args *a, docket_replay_format *out)
{
	static const char *const names[] = { "table", "json", "junit", "markdown" };

	*out = a->json ? DOCKET_REPLAY_JSON : DOCKET_REPLAY_TABLE;
	if (!a->format)
		return 0;
	for (int i = 0; i < 4; i++)
		if (strcmp(a->format, names[i]) == 0) {
			*out = (docket_replay_format)i;
			return a->json && i != DOCKET_REPLAY_JSON ? -1 : 0;
		}
	return -1;
}

static int parse_time(const char *what, const char *s, int *has, int64_t *ms)
{
	if (!s)
		return 0;
	docket_timespec when;
	char option[16];

	/* the one --since/--until syntax (util/timespec.h); replay selects calls by time */
	snprintf(option, sizeof(option), "--%s", what);
	if (cli_timespec_arg(option, s, &when) != CLI_EXIT_OK)
		return -1;
	if (when.kind != DOCKET_TIMESPEC_TIME) {
		cli_error("--%s: replay selects calls by time, not by seq ('%s')", what, s);
		return -1;
	}
	*ms = when.ms;
	*has = 1;
	return 0;
}

/* DOCKET_REPLAY_THREADS: 1 or 2 (unset or empty: replay chooses). */
static int parse_threads(int *out)
{
	const char *env = getenv("DOCKET_REPLAY_THREADS");

	*out = 0;
	if (!env || !*env)
		return 0;
	if (strcmp(env, "1") != 0 && strcmp(env, "2") != 0) {
		cli_error("DOCKET_REPLAY_THREADS: \"%s\" is not 1 or 2", env);
		return -1;
	}
	*out = env[0] - '0';
	return 0;
}

/* Usage checks; prints the problem and returns -1. */
static int check_args(const replay_args *a, docket_replay_options *o, unsigned *fail_on,
		      docket_replay_format *format)
{
	int modes = !!a->policy + !!a->compare + !!a->history;

	if (modes != 1) {
		cli_error("give exactly one of --policy SRC, --compare SRC_A SRC_B, --policy-history PATH --range A..B");
		return -1;
	}
	if (a->ran_despite_deny && (!a->policy || a->fail_on ||
				    (a->format && strcmp(a->format, "table") != 0 && strcmp(a->format, "json") != 0))) {
		cli_error("--ran-despite-deny takes --policy SRC (not --compare or --policy-history), "
			  "a table or --json, and no --fail-on (it exits 1 when it finds a call)");
		return -1;
	}
	if (a->compare && !a->compare_b) {
		cli_error("--compare needs two sources: --compare SRC_A SRC_B");
		return -1;
	}
	if (!a->compare && a->compare_b) {
		cli_error("unexpected argument \"%s\"", a->compare_b);
		return -1;
	}
	if (!!a->history != !!a->range) {
		cli_error("--policy-history PATH needs --range A..B (and --range needs --policy-history)");
		return -1;
	}
	if (a->approvals && strcmp(a->approvals, "recorded") != 0 && strcmp(a->approvals, "none") != 0) {
		cli_error("--approvals: \"%s\" is not recorded or none", a->approvals);
		return -1;
	}
	o->approvals = a->approvals && strcmp(a->approvals, "none") == 0 ? DOCKET_REPLAY_APPROVALS_NONE
									  : DOCKET_REPLAY_APPROVALS_RECORDED;
	if (parse_fail_on(a->fail_on, fail_on) < 0) {
		cli_error("--fail-on: \"%s\" is not loosened, tightened or changed", a->fail_on);
		return -1;
	}
	if (parse_format(a, format) < 0) {
		cli_error("--format: \"%s\" is not table, json, junit or markdown%s", a->format,
			  a->json ? " (or conflicts with --json)" : "");
		return -1;
	}
	if (a->assume_sandbox && !docket_replay_sandbox_valid(a->assume_sandbox)) {
		cli_error("--assume-sandbox: \"%s\" is not read_only, workspace_write, full_access or none",
			  a->assume_sandbox);
		return -1;
	}
	o->assume_sandbox = a->assume_sandbox;
	o->session = a->session;
	if (parse_threads(&o->threads) < 0)
		return -1;
	return parse_time("since", a->since, &o->has_since, &o->since_ms) < 0 ||
	       parse_time("until", a->until, &o->has_until, &o->until_ms) < 0 ? -1 : 0;
}

static int is_git_source(const char *s)
{
	if (strncmp(s, "codex:", 6) == 0)
		s += 6;
	else if (strncmp(s, "claude:", 7) == 0)
		s += 7;
	return strncmp(s, "git:", 4) == 0;
}

static int load_source(docket_policy **out, const char *src, const char *repo)
{
	int error;

	if (is_git_source(src) && !docket_replay_has_git()) {
		cli_error("%s: git policy sources need libgit2, and this docket was built without it", src);
		return CLI_EXIT_USAGE;
	}
	if ((error = docket_replay_source_load(out, src, repo)) < 0)
		return cli_fail(error, "cannot load the policy");
	return CLI_EXIT_OK;
}

/* Load the policies of the chosen mode; returns an exit code. */
static int load_policies(replay_run *run, const replay_args *a)
{
	int rc, error;

	if (a->history) {
		if (!docket_replay_has_git()) {
			cli_error("--policy-history needs libgit2, and this docket was built without it");
			return CLI_EXIT_USAGE;
		}
		if ((error = docket_replay_history_load(&run->history, a->repo, a->history, a->range)) < 0)
			return cli_fail(error, "cannot read the policy's history");
		run->policies = docket_replay_history_policies(run->history);
		run->n = docket_replay_history_count(run->history);
		run->baseline = docket_replay_history_base(run->history);
		run->label = a->history;
		run->base_label = run->baseline ? a->range : NULL;
		return CLI_EXIT_OK;
	}
	if (a->compare && (rc = load_source(&run->base, a->compare, a->repo)) != CLI_EXIT_OK)
		return rc;
	if ((rc = load_source(&run->policy, a->compare ? a->compare_b : a->policy, a->repo)) != CLI_EXIT_OK)
		return rc;
	run->policies = (const docket_policy *const *)&run->policy;
	run->n = 1;
	run->baseline = run->base;
	run->label = a->compare ? a->compare_b : a->policy;
	run->base_label = a->compare;
	return CLI_EXIT_OK;
}

static void run_dispose(replay_run *run)
{
	docket_policy_free(run->policy);
	docket_policy_free(run->base);
	docket_replay_history_free(run->history);
}

/* The width a table fits: $COLUMNS when it is a number, else the width of
 * the terminal standard output is, else 0 (no limit: a pipe or a file gets
 * every cell whole). */
static unsigned table_width(void)
{
	const char *env = getenv("COLUMNS");
	struct winsize ws;
	char *end;

	if (env && *env) {
		unsigned long n = strtoul(env, &end, 10);

		if (*end == '\0' && n > 0 && n <= 100000)
			return (unsigned)n;
	}
	if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	return 0;
}

/* ---- --ran-despite-deny ---- */

typedef struct deny_findings {
	json_t *list;           /* the findings, in seq order */
	uint64_t calls;         /* calls replayed */
} deny_findings;

static int finding_add(void *ctx, const docket_replay_call *c)
{
	deny_findings *f = ctx;
	json_t *o = NULL;
	int error;

	f->calls++;
	if (!docket_replay_ran_despite_deny(c))
		return 0;
	if ((error = docket_replay_finding_json(&o, c)) < 0)
		return error;
	if (json_array_append_new(f->list, o) != 0)
		return docket_error_set_oom();
	return 0;
}

static void finding_row(cli_table *t, const json_t *o)
{
	const json_t *line = json_object_get(o, "rule_line");

	cli_table_cell(t, json_string_value(json_object_get(o, "session")));
	cli_table_cell(t, json_string_value(json_object_get(o, "invocation")));
	cli_table_cell(t, json_string_value(json_object_get(o, "tool")));
	cli_table_cell(t, json_string_value(json_object_get(o, "target")));
	cli_table_cell(t, json_string_value(json_object_get(o, "engine")));
	if (json_is_integer(line))
		cli_table_cellf(t, "%s (line %lld)", json_string_value(json_object_get(o, "rule")),
				(long long)json_integer_value(line));
	else
		cli_table_cell(t, json_string_value(json_object_get(o, "rule")));
}

/* Write the findings; exit 1 when there are any. */
static int findings_write(const deny_findings *f, const replay_run *run, const replay_args *a, const cli_global *g)
{
	static const char *const header[] = { "SESSION", "INVOCATION", "TOOL", "COMMAND OR TARGET", "ENGINE", "DENY RULE" };
	size_t n = json_array_size(f->list);
	cli_table *t = NULL;
	int rc;

	if (a->json || (a->format && strcmp(a->format, "json") == 0)) {
		json_t *o = json_pack("{s:s,s:s,s:I,s:O}", "schema", "docket.replay.ran_despite_deny/v1", "policy",
				      run->label, "calls", (json_int_t)f->calls, "findings", f->list);

		rc = cli_print_json(o);
		return rc != CLI_EXIT_OK ? rc : n ? CLI_EXIT_FOUND : CLI_EXIT_OK;
	}
	printf("%zu of %llu calls ran although a deny rule of %s names them\n", n, (unsigned long long)f->calls,
	       run->label);
	if (n == 0)
		return CLI_EXIT_OK;
	if (cli_table_new(&t, 6) < 0)
		return cli_fail_oom();
	for (size_t i = 0; i < 6; i++)
		cli_table_cell(t, header[i]);
	for (size_t i = 0; i < n; i++)
		finding_row(t, json_array_get(f->list, i));
	putchar('\n');
	cli_table_print(t, stdout, g->color_out, 1);
	cli_table_free(t);
	return CLI_EXIT_FOUND;
}

/* Replay and list the calls that ran although a deny rule names them; returns an exit code. */
static int replay_findings(docket_ledger *ledger, docket_fleet *fleet, const replay_run *run, const replay_args *a,
			   const docket_replay_options *o, const cli_global *g)
{
	deny_findings f = { json_array(), 0 };
	int error, rc;

	if (!f.list)
		return cli_fail_oom();
	if (fleet) {
		docket_fleet_filter filter = { a->ledger_id, a->host };

		error = docket_fleet_replay(fleet, &filter, NULL, run->policies, run->n, o, NULL, finding_add, &f);
	} else {
		error = docket_replay_run(ledger, NULL, run->policies, run->n, o, finding_add, &f);
	}
	rc = error < 0 ? cli_fail(error, "replay failed") : findings_write(&f, run, a, g);
	json_decref(f.list);
	return rc;
}

/* Replay into a report and write it; returns an exit code. */
static int replay_and_report(docket_ledger *ledger, docket_fleet *fleet, const replay_run *run,
			     const replay_args *a,
			     const docket_replay_options *o, unsigned fail_on, docket_replay_format format,
			     const cli_global *g)
{
	docket_replay_report_info info = DOCKET_REPLAY_REPORT_INFO_INIT;
	docket_replay_report *report = NULL;
	char range_label[512];
	int error, rc;

	if (a->history) {
		/* the baseline is the policy at the range's start, A of A..B */
		const char *dots = strstr(a->range, "..");

		snprintf(range_label, sizeof(range_label), "%s at %.*s", a->history,
			 (int)(dots ? (size_t)(dots - a->range) : strlen(a->range)), a->range);
		info.baseline = run->baseline ? range_label : NULL;
	} else {
		info.baseline = run->base_label;
	}
	info.format = format;
	info.policy = run->label;
	info.approvals = o->approvals == DOCKET_REPLAY_APPROVALS_NONE ? "none" : "recorded";
	info.session = a->session;
	info.since = a->since;
	info.until = a->until;
	info.fail_on = fail_on;
	info.color = format == DOCKET_REPLAY_TABLE && g->color_out;
	info.history = run->history;
	info.width = format == DOCKET_REPLAY_TABLE ? table_width() : 0;
	if ((error = docket_replay_report_new(&report, &info)) < 0)
		return cli_fail(error, "cannot start the report");
	if (fleet) {
		docket_fleet_filter filter = { a->ledger_id, a->host };

		error = docket_fleet_replay(fleet, &filter, run->baseline, run->policies, run->n, o, NULL,
					    docket_replay_report_add, report);
	} else {
		error = docket_replay_run(ledger, run->baseline, run->policies, run->n, o,
					  docket_replay_report_add, report);
	}
	if (error == 0)
		error = docket_replay_report_finish(report, stdout);
	if (error < 0)
		rc = cli_fail(error, "replay failed");
	else
		rc = docket_replay_report_failed(report, fail_on) ? CLI_EXIT_FOUND : CLI_EXIT_OK;
	docket_replay_report_free(report);
	return rc;
}

int cmd_replay(const cli_command *cmd, const cli_global *g, int argc, char **argv)
{
	static const char description[] =
		"Re-evaluates every recorded tool call, in seq order, with its session's\n"
		"recorded context (platform, cwd, workspace roots, env) and the session\n"
		"grants recorded before it, and compares the verdict with the recorded one\n"
		"(or the one the history implies). Each call is unchanged, tightened or\n"
		"loosened (allowed < approval_required < denied = unsupported); a loosened\n"
		"call a human had denied is flagged. SRC is PATH, codex:PATH, claude:PATH,\n"
		"or git:REV:PATH, codex:git:REV:PATH, claude:git:REV:PATH (read from the\n"
		"repository, no checkout). Exit 1 when a call of a --fail-on class changed.\n"
		"--from CONNINFO replays every ledger held in the fleet database instead\n"
		"(docs/fleet.md): the union of the machines' own replays. A large ledger\n"
		"is replayed on two threads (DOCKET_REPLAY_THREADS=1 or 2 sets the count);\n"
		"the output is the same byte for byte. Each session is named with the\n"
		"sandbox the policy assumed, the one its runtime had (a warning when\n"
		"they differ) and its baseline. A call whose enforced verdict (what\n"
		"docket's hooks decide) is stricter than the engine's shows both.\n"
		"--ran-despite-deny lists instead the calls that ran (were dispatched)\n"
		"although a deny rule of the policy names them, and exits 1 if any.\n"
		"See docs/replay.md for the JSON schema and a CI workflow.\n";
	replay_args a = { 0 };
	const cli_opt opts[] = {
		{ CLI_OPT_STRING, "policy", 'p', &a.policy, "SRC", "replay against this policy", 0 },
		{ CLI_OPT_STRING, "compare", 0, &a.compare, "SRC_A", "compare SRC_A (the baseline) with SRC_B", 0 },
		{ CLI_OPT_STRING, "policy-history", 0, &a.history, "PATH", "every commit of --range that changed PATH", 0 },
		{ CLI_OPT_STRING, "range", 0, &a.range, "A..B", "the commits for --policy-history", 0 },
		{ CLI_OPT_STRING, "repo", 0, &a.repo, "DIR", "git repository of git: sources (default: around .)", 0 },
		{ CLI_OPT_STRING, "session", 's', &a.session, "ID", "only this session", 0 },
		{ CLI_OPT_STRING, "since", 0, &a.since, "TIME", "only calls at or after TIME (RFC 3339)", 0 },
		{ CLI_OPT_STRING, "until", 0, &a.until, "TIME", "only calls before TIME (RFC 3339)", 0 },
		{ CLI_OPT_STRING, "approvals", 0, &a.approvals, "MODE", "recorded (default): apply session grants; none", 0 },
		{ CLI_OPT_STRING, "assume-sandbox", 0, &a.assume_sandbox, "MODE",
		  "replay as if every runtime had this sandbox: read_only, workspace_write, full_access, none", 0 },
		{ CLI_OPT_STRING, "fail-on", 0, &a.fail_on, "CLASSES", "exit 1 on loosened, tightened or changed (a,b)", 0 },
		{ CLI_OPT_SWITCH, "ran-despite-deny", 0, &a.ran_despite_deny, NULL,
		  "with --policy: list the calls that ran although a deny rule names them (exit 1: some)", 0 },
		{ CLI_OPT_STRING, "format", 'f', &a.format, "FMT", "table (default), json, junit or markdown", 0 },
		{ CLI_OPT_STRING, "from", 0, &a.from, "CONNINFO", "replay the fleet database (postgresql://...)", 0 },
		{ CLI_OPT_STRING, "ledger-id", 0, &a.ledger_id, "ID", "with --from: only ledger ID", 0 },
		{ CLI_OPT_STRING, "host", 0, &a.host, "NAME", "with --from: only ledgers of host NAME", 0 },
		CLI_OPT_JSON(&a.json),
		{ CLI_OPT_ARG, "SRC_B", 0, &a.compare_b, NULL, "the second source of --compare", 0 },
		{ CLI_OPT_END, NULL, 0, NULL, NULL, NULL, 0 }
	};
	docket_replay_options o = DOCKET_REPLAY_OPTIONS_INIT;
	docket_replay_format format;
	replay_run run = { 0 };
	docket_ledger *ledger = NULL;
	docket_fleet *fleet = NULL;
	unsigned fail_on = 0;
	int rc, error;

	if ((rc = cli_parse(cmd, opts, description, argc, argv)) != CLI_PARSE_OK)
		return CLI_PARSE_EXIT(rc);
	if (check_args(&a, &o, &fail_on, &format) < 0)
		return CLI_EXIT_USAGE;
	if ((rc = load_policies(&run, &a)) != CLI_EXIT_OK)
		goto cleanup;
	if ((a.ledger_id || a.host) && !a.from) {
		cli_error("--ledger-id and --host need --from");
		rc = CLI_EXIT_USAGE;
		goto cleanup;
	}
	docket_error_clear();
	if (a.from) {
		if ((error = docket_fleet_connect(&fleet, a.from)) < 0) {
			rc = cli_fail(error, "cannot connect to the fleet database");
			goto cleanup;
		}
	} else if ((rc = cli_open_ledger(&ledger, g, CLI_OPEN_READ)) != CLI_EXIT_OK) {
		goto cleanup;
	}
	rc = a.ran_despite_deny ? replay_findings(ledger, fleet, &run, &a, &o, g)
				: replay_and_report(ledger, fleet, &run, &a, &o, fail_on, format, g);
cleanup:
	docket_fleet_free(fleet);
	docket_ledger_free(ledger);
	run_dispose(&run);
	return rc;
}
