/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_export.c: `docket export`: JSONL, OCSF, OTel, CSV, a git archive or tlog-tiles. */
#include "cli.h"

#include <errno.h>
#include <string.h>

#include "docket/audit.h"
#include "docket/export.h"
#include "util/alloc.h"
#include "util/error.h"

typedef struct export_args {
	const char *format;
	const char *session;
	const char *since;
	const char *output;
	const char *rules;
	const char *pseudo_key;
	const char *repo;
	const char *dir;
	const char *endpoint;
	int redact;
} export_args;

typedef struct export_env {
	docket_redactor *redactor;
	docket_pseudonymizer *pseudo;
	docket_export_options opts;
} export_env;

static int load_rules(docket_redactor **out, const char *path)
{
	char *text = NULL;
	size_t len = 0;
	int error;

	if (!path)
		return docket_redactor_new(out, NULL, 0);
	if ((error = docket_redaction_rules_read(&text, &len, path)) < 0)
		return error;
	if ((error = docket_redactor_new(out, text, len)) < 0)
		docket_error_prefix("%s: ", path);
	docket_free(text);
	return error;
}

/* --format tlog-tiles DIR publishes every event as stored (the leaves hash
 * those bytes): no filter or rewrite applies. */
static int check_tiles(const export_args *a)
{
	if (!a->dir) {
		cli_error("--format tlog-tiles needs the directory to write: docket export --format tlog-tiles DIR");
		return CLI_EXIT_USAGE;
	}
	if (a->session || a->since || a->output || a->redact || a->rules || a->pseudo_key || a->repo) {
		cli_error("--format tlog-tiles publishes every event exactly as stored (the tree's leaves hash "
			  "those bytes): --session, --since, --output, --redact, --redact-rules, --pseudonymize "
			  "and --repo do not apply");
		return CLI_EXIT_USAGE;
	}
	return CLI_EXIT_OK;
}

/* Options -> export options; prints the problem and returns an exit code. */
static int prepare(export_env *env, const export_args *a)
{
	int error;

	if (strcmp(a->format, "tlog-tiles") == 0)
		return check_tiles(a);
	if (a->dir) {
		cli_error("only --format tlog-tiles takes a directory (got '%s'); use --output FILE", a->dir);
		return CLI_EXIT_USAGE;
	}
	if (a->endpoint && (strcmp(a->format, "otel") != 0 || a->output)) {
		cli_error("--endpoint posts OpenTelemetry traces: it goes with --format otel, without --output");
		return CLI_EXIT_USAGE;
	}
	env->opts.format = docket_export_format_parse(a->format);
	if (env->opts.format < 0 && strcmp(a->format, "git") != 0) {
		cli_error("unknown format '%s' (jsonl, ocsf, otel, csv, git or tlog-tiles)", a->format);
		return CLI_EXIT_USAGE;
	}
	if (strcmp(a->format, "git") == 0 && !a->repo) {
		cli_error("--format git needs --repo DIR");
		return CLI_EXIT_USAGE;
	}
	if (a->since) {
		docket_timespec when;
		int rc;

		if ((rc = cli_timespec_arg("--since", a->since, &when)) != CLI_EXIT_OK)
			return rc;
		if (when.kind == DOCKET_TIMESPEC_SEQ)
			env->opts.since_seq = when.seq;
		else
			env->opts.since_ms = when.ms;
	}
	env->opts.session = a->session;
	docket_error_clear();
	if ((a->redact || a->rules) && (error = load_rules(&env->redactor, a->rules)) < 0)
		return cli_fail(error, "cannot load the redaction rules");
	if (a->pseudo_key && (error = docket_pseudonymizer_load(&env->pseudo, a->pseudo_key)) < 0)
		return cli_fail(error, "cannot load the pseudonymisation key");
	env->opts.redactor = env->redactor;
	env->opts.pseudonymizer = env->pseudo;
	return CLI_EXIT_OK;
}

static int run_git(docket_ledger *ledger, const export_env *env, const char *repo)
{
	docket_export_stats stats;
	int error;

	docket_error_clear();
	if ((error = docket_export_git(ledger, &env->opts, repo, &stats)) < 0)
		return cli_fail(error, "cannot export to git");
	if (stats.records == 0)
		printf("%s is up to date (seq %llu)\n", repo, (unsigned long long)stats.head_seq);
	else
		printf("committed %llu event%s to %s (head seq %llu)\n", (unsigned long long)stats.records,
		       stats.records == 1 ? "" : "s", repo, (unsigned long long)stats.head_seq);
	return CLI_EXIT_OK;
}

static int run_tiles(docket_ledger *ledger, const char *dir)
{
	docket_tiles_stats st;
	int error;

	docket_error_clear();
	if ((error = docket_export_tiles(ledger, dir, &st)) < 0)
		return cli_fail(error, "cannot export tlog-tiles");
	if (st.old_size == st.size)
		printf("%s is up to date (tree size %llu)\n", dir, (unsigned long long)st.size);
	else if (st.old_size)
		printf("updated %s from tree size %llu to %llu (%llu tile%s, %llu entry bundle%s written)\n", dir,
		       (unsigned long long)st.old_size, (unsigned long long)st.size, (unsigned long long)st.tiles,
		       st.tiles == 1 ? "" : "s", (unsigned long long)st.bundles, st.bundles == 1 ? "" : "s");
	else
		printf("wrote tree size %llu to %s (%llu tile%s, %llu entry bundle%s)\n", (unsigned long long)st.size,
		       dir, (unsigned long long)st.tiles, st.tiles == 1 ? "" : "s", (unsigned long long)st.bundles,
		       st.bundles == 1 ? "" : "s");
	return CLI_EXIT_OK;
}

static int run_endpoint(docket_ledger *ledger, const export_env *env, const char *url)
{
	docket_export_stats stats;
	uint64_t posted = 0;
	int error;

	docket_error_clear();
	if ((error = cli_export_otlp_http(ledger, &env->opts, url, &stats, &posted)) < 0) {
		if (posted)
			cli_error("%llu request%s accepted before the failure", (unsigned long long)posted,
				  posted == 1 ? " was" : "s were");
		return cli_fail(error, "cannot post the traces");
	}
	printf("posted %llu span%s in %llu request%s to %s\n", (unsigned long long)stats.records,
	       stats.records == 1 ? "" : "s", (unsigned long long)posted, posted == 1 ? "" : "s", url);
	return CLI_EXIT_OK;
}

static int run_stream(docket_ledger *ledger, const export_env *env, const char *path)
{
	docket_export_stats stats;
	FILE *out = stdout;
	int error, bad = 0;

	if (path && !(out = fopen(path, "w"))) {
		cli_error("cannot write %s: %s", path, strerror(errno));
		return CLI_EXIT_SYSTEM;
	}
	docket_error_clear();
	error = docket_export(ledger, &env->opts, out, &stats);
	if (path)
		bad = fclose(out) != 0;
	if (error < 0)
		return cli_fail(error, "cannot export");
	if (bad) {
		cli_error("cannot write %s", path);
		return CLI_EXIT_SYSTEM;
	}
	if (path)
		printf("exported %llu event%s as %llu record%s to %s\n", (unsigned long long)stats.events,
		       stats.events == 1 ? "" : "s", (unsigned long long)stats.records,
		       stats.records == 1 ? "" : "s", path);
	return CLI_EXIT_OK;
}

int cmd_export(const cli_command *cmd, const cli_global *g, int argc, char **argv)
{
	static const char description[] =
		"Writes the ledger for other tools: jsonl (the events as `docket log --json`\n"
		"prints them), ocsf (OCSF 1.9 records, one per line), otel (OTLP/JSON spans),\n"
		"csv (one row per call, with reasons and rules) or git (an archive\n"
		"repository, one commit per export carrying the chain head; needs --repo).\n"
		"otel writes one trace per session: an invoke_agent span, the session's\n"
		"execute_tool spans its children, a subagent's session inside its parent's\n"
		"trace; --endpoint URL POSTs it as OTLP/HTTP (JSON) to a collector\n"
		"(http://HOST:4318/v1/traces) instead of writing it.\n"
		"tlog-tiles DIR writes the Merkle tree of the newest signed checkpoint as the\n"
		"C2SP tlog-tiles static layout (checkpoint, tile/<L>/<N>, tile/entries/<N>)\n"
		"for any HTTP server to publish; run it again to add what is new.\n"
		"--redact replaces secrets (cloud keys, API tokens, private keys, passwords in\n"
		"URLs, bearer headers) by [REDACTED:rule] and lists them in \"redacted\";\n"
		"--redact-rules adds your own rules. --pseudonymize replaces session ids,\n"
		"actors and home-directory names by keyed hashes (`docket keygen --hmac`).\n"
		"See docs/audit.md for the mappings.\n";
	export_args a = { "jsonl", NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0 };
	const cli_opt opts[] = {
		{ CLI_OPT_STRING, "format", 'f', &a.format, "FORMAT", "jsonl (default), ocsf, otel, csv, git or tlog-tiles", 0 },
		{ CLI_OPT_STRING, "session", 's', &a.session, "S", "only this session", 0 },
		{ CLI_OPT_STRING, "since", 0, &a.since, "WHEN",
		  "only events from this time, date, 2h/7d ago, or #seq on", 0 },
		{ CLI_OPT_STRING, "output", 'o', &a.output, "FILE", "write to FILE instead of stdout", 0 },
		{ CLI_OPT_SWITCH, "redact", 0, &a.redact, NULL, "redact secrets with the built-in rules", 0 },
		{ CLI_OPT_STRING, "redact-rules", 0, &a.rules, "FILE", "redact with the rules in FILE (JSON)", 0 },
		{ CLI_OPT_STRING, "pseudonymize", 0, &a.pseudo_key, "KEYFILE", "replace identifiers by keyed hashes", 0 },
		{ CLI_OPT_STRING, "repo", 0, &a.repo, "DIR", "the git archive (--format git)", 0 },
		{ CLI_OPT_STRING, "endpoint", 0, &a.endpoint, "URL",
		  "--format otel: POST to this OTLP/HTTP traces URL", 0 },
		{ CLI_OPT_ARG, "DIR", 0, &a.dir, NULL, "the directory to write (--format tlog-tiles)", 0 },
		{ CLI_OPT_END, NULL, 0, NULL, NULL, NULL, 0 }
	};
	export_env env = { NULL, NULL, DOCKET_EXPORT_OPTIONS_INIT };
	docket_ledger *ledger = NULL;
	char *owned = NULL;
	int rc;

	if ((rc = cli_parse(cmd, opts, description, argc, argv)) != CLI_PARSE_OK)
		return CLI_PARSE_EXIT(rc);
	if ((rc = prepare(&env, &a)) != CLI_EXIT_OK)
		goto cleanup;
	if ((rc = cli_open_ledger(&ledger, g, CLI_OPEN_READ)) != CLI_EXIT_OK)
		goto cleanup;
	if ((rc = cli_session_arg(ledger, &a.session, &owned)) != CLI_EXIT_OK)
		goto cleanup;
	env.opts.session = a.session;
	if (strcmp(a.format, "tlog-tiles") == 0)
		rc = run_tiles(ledger, a.dir);
	else
		rc = strcmp(a.format, "git") == 0 ? run_git(ledger, &env, a.repo)
		     : a.endpoint ? run_endpoint(ledger, &env, a.endpoint)
				  : run_stream(ledger, &env, a.output);
cleanup:
	docket_free(owned);
	docket_ledger_free(ledger);
	docket_redactor_free(env.redactor);
	docket_pseudonymizer_free(env.pseudo);
	return rc;
}
