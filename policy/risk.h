/* SPDX-License-Identifier: Apache-2.0 */
/*
 * risk.h: the risk classes of one tool call, from the policy engine's own
 * analysis of the call (the shell analysis of policy/shparse.c for shell
 * commands). The audit report and `policy check` use it; nothing here
 * decides a verdict.
 */
#ifndef DOCKET_POLICY_RISK_H
#define DOCKET_POLICY_RISK_H

#include <stddef.h>

#include <jansson.h>

/* Risk classes of one call (bit set), from the policy engine's call analysis. */
typedef enum docket_risk {
	DOCKET_RISK_NETWORK = 1u << 0,        /* network fetch (curl, wget, WebFetch, network tool) */
	DOCKET_RISK_PIPE_SHELL = 1u << 1,     /* download or text piped into a shell (curl ... | sh) */
	DOCKET_RISK_PUSH = 1u << 2,           /* git push */
	DOCKET_RISK_FORCE_PUSH = 1u << 3,     /* git push --force / -f / +ref */
	DOCKET_RISK_DELETE = 1u << 4,         /* rm -r/-f, git clean, deletes in patches */
	DOCKET_RISK_SECRET_READ = 1u << 5,    /* reads of secret-looking paths (.env, .ssh, *.pem, credentials ...) */
	DOCKET_RISK_WRITE_OUTSIDE = 1u << 6,  /* writes outside the workspace roots */
	DOCKET_RISK_INSTALL = 1u << 7,        /* package installs (pip, npm, apt, cargo ...), install_packages */
	DOCKET_RISK_ESCALATION = 1u << 8,     /* sandbox escalation: require_escalated, dangerouslyDisableSandbox */
	DOCKET_RISK_CODE_EXEC = 1u << 9       /* interpreter one-liners, eval, run_code, unknown command names ($X) */
} docket_risk;

typedef struct docket_risk_call {
	const char *tool;
	json_t *args;
	const char *cwd;
	const char *const *roots;
	size_t nroots;
	const char *home;
} docket_risk_call;

/* The risk classes of `call` (0: none found). Pure: nothing read from the filesystem. */
unsigned docket_call_risk(const docket_risk_call *call);
/* Stable lowercase name of one class ("network", "pipe_shell", "push", "force_push", "delete", "secret_read", "write_outside", "install", "escalation", "code_exec"); NULL for anything else. */
const char *docket_risk_name(unsigned one_class);

#endif
