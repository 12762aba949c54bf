/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_policy.h: what the `docket policy` subcommands share (cmd_policy.c:
 * check, explain, convert, schema and the dispatch; cmd_policy_eval.c:
 * eval; cmd_policy_test.c: test).
 */
#ifndef DOCKET_CLI_CMD_POLICY_H
#define DOCKET_CLI_CMD_POLICY_H

#include "cli.h"

#include "docket/policy.h"

/* claude:FILE's settings scope; claude:DIR merges a project's scopes */
#define POLICY_SCOPE_OPT(var) { CLI_OPT_STRING, "scope", 0, (var), "SCOPE", \
	"settings scope of a claude:FILE: user, project, local, managed or flag (default: from its place)", 0 }
#define POLICY_SRC_HELP "PATH, codex:PATH, claude:PATH, or one at a git revision (git:REV:PATH)"

/*
 * Per-verdict exit codes of `policy eval --exit-code` (docs/policy.md): 0, 1,
 * 2 and 3 keep their DESIGN §9 meaning, so the others sit above them.
 */
enum {
	POLICY_EXIT_ALLOWED = 0,
	POLICY_EXIT_APPROVAL = 10,
	POLICY_EXIT_DENIED = 11,
	POLICY_EXIT_UNSUPPORTED = 12
};
int policy_verdict_exit(docket_verdict v);

/* Load SRC (a git: source through libgit2); an exit code, the error printed. */
int policy_load(docket_policy **p, const char *src, const char *scope);
/* JSON from text, or from a file with "@PATH"; an exit code. */
int policy_json_arg(json_t **out, const char *what, const char *arg);
/*
 * A call object {"tool","args"} checked against the published call schema
 * (docs/call.schema.json): 0, or DOCKET_EINVALID with the message set.
 */
int policy_call_check(const char *where, const json_t *call);

int policy_sub_eval(const cli_command *cmd, const cli_global *g, int argc, char **argv);
int policy_sub_test(const cli_command *cmd, const cli_global *g, int argc, char **argv);

#endif
