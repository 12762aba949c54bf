/* SPDX-License-Identifier: Apache-2.0 */
/*
 * integrations.h: live capture from agents docket did not write.
 *
 * Claude Code and Codex run hooks at fixed points of every tool call; docket
 * is one of them (`docket hook claude|codex`): it reads one hook event (a
 * JSON object) and records it (docs/integrations.md has the mapping), and
 * with a policy in enforce mode it answers deny or ask at PreToolUse. It can
 * only narrow what the client allows, never widen it. `docket integrate`
 * writes the hooks into the client's configuration.
 */
#ifndef DOCKET_INTEGRATIONS_H
#define DOCKET_INTEGRATIONS_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "docket/common.h"
#include "docket/ledger.h"
#include "docket/policy.h"

typedef enum docket_client {
	DOCKET_CLIENT_CLAUDE = 1,   /* Claude Code */
	DOCKET_CLIENT_CODEX = 2     /* OpenAI Codex CLI */
} docket_client;

/* "claude" / "codex" -> the client; DOCKET_EINVALID otherwise. */
int docket_client_parse(docket_client *out, const char *name) DOCKET_MUST_USE;
const char *docket_client_name(docket_client client);

typedef struct docket_hook_options {
	unsigned int version;
	docket_client client;
	const docket_policy *policy;  /* enforce mode when non-NULL */
	/*
	 * A directory (the ledger's) where the hook may keep which permission
	 * mode each policy revision of a session has, so that checking a Claude
	 * Code event's permission_mode against the policy in force costs one
	 * small file read instead of reading the session. NULL: no cache (the
	 * same records, slower).
	 */
	const char *cache_dir;
	/*
	 * The spool (docs/write-path.md §3): the ledger's path. When an append
	 * cannot take the writer lock before `deadline_ms` (CLOCK_MONOTONIC
	 * milliseconds, ledger/spool.h; 0: wait without limit) or the ledger
	 * cannot store it, the event's records go to the spool of the ledger at
	 * `spool_path`, fsynced, and the rest of the event follows them there.
	 * NULL: no spool (an append that fails is an error).
	 */
	const char *spool_path;
	uint64_t deadline_ms;
	/*
	 * Spool first (docs/write-path.md §3): every record goes to the spool
	 * (one append + fdatasync), none to the ledger; the caller folds it
	 * after answering (docket_spool_fold_detached). State the event reads
	 * sees the spool's records. A journal left behind by an earlier event
	 * is folded first when the writer lock is free. Needs spool_path and
	 * deadline_ms.
	 */
	int spool_first;
	/*
	 * When non-NULL, set as soon as the event is parsed, before anything is
	 * recorded: 1 when an error must block it (docket_hook_event_blocks),
	 * else 0. Left alone for input that is not a hook event (it blocks).
	 * A signal handler may read it (cmd_hook.c's watchdog).
	 */
	volatile sig_atomic_t *blocks;
} docket_hook_options;

#define DOCKET_HOOK_OPTIONS_VERSION 5
#define DOCKET_HOOK_OPTIONS_INIT { DOCKET_HOOK_OPTIONS_VERSION, DOCKET_CLIENT_CLAUDE, NULL, NULL, NULL, 0, 0, NULL }

/* What the hook answers the client. */
typedef struct docket_hook_answer {
	int exit_code;  /* 0, or 2: block the call (stderr is the reason) */
	char *out;      /* text for stdout (a JSON object), or NULL */
	char *err;      /* text for stderr, or NULL */
	size_t spooled; /* records written to the spool instead of the ledger */
} docket_hook_answer;

void docket_hook_answer_dispose(docket_hook_answer *answer);

/*
 * Record one hook event (`len` bytes of JSON) and fill `answer`. Errors:
 * DOCKET_EINVALID (not a hook event), ledger errors; the caller decides
 * what an error answers (enforce mode: deny, see docket_hook_blocks).
 */
int docket_hook_handle(docket_ledger *ledger, const docket_hook_options *opts,
		       const char *input, size_t len, docket_hook_answer *answer) DOCKET_MUST_USE;

/*
 * 1 when an error while handling this input must block the call in enforce
 * mode: a PreToolUse or PermissionRequest event, or input that is not a
 * hook event at all. 0 for events where exit 2 means something else
 * (Stop: "keep going").
 */
int docket_hook_blocks(const char *input, size_t len);
/* The same for an event's hook_event_name: PreToolUse, PermissionRequest. */
int docket_hook_event_blocks(const char *name);

/*
 * 1 unless `prog` (a hook handler's program) is docket-hook-fast without
 * docket-hook, the binary it runs for every event its server does not
 * answer, executable beside it (cli/hook_fast.c).
 */
int docket_hook_fallback_ok(const char *prog);

/* ---- writing the hooks into a client's configuration ---- */

typedef struct docket_integrate_options {
	unsigned int version;
	const char *docket_path;   /* absolute path of the docket binary */
	const char *ledger_path;   /* absolute ledger path */
	const char *policy;        /* enforce: the policy source (absolute), or NULL */
	int uninstall;             /* remove what an install added */
} docket_integrate_options;

#define DOCKET_INTEGRATE_OPTIONS_VERSION 1
#define DOCKET_INTEGRATE_OPTIONS_INIT { DOCKET_INTEGRATE_OPTIONS_VERSION, NULL, NULL, NULL, 0 }

/*
 * Claude Code: `settings` (a settings.json document, stolen) with docket's
 * hooks merged in (or removed). The user's own keys, rules and hooks stay as
 * they are; applying it twice gives the same document.
 */
int docket_integrate_claude(json_t **out, json_t *settings,
			    const docket_integrate_options *opts) DOCKET_MUST_USE;

/* Codex: `hooks_doc` (a hooks.json document, stolen) with docket's hooks. */
int docket_integrate_codex(json_t **out, json_t *hooks_doc,
			   const docket_integrate_options *opts) DOCKET_MUST_USE;

/*
 * Codex's trust hash of one command handler of `group` under `event`
 * ("PreToolUse" ...): "sha256:" + 64 hex digits, NUL-terminated.
 */
int docket_codex_hook_hash(char out[72], const char *event, const json_t *group,
			   const json_t *handler) DOCKET_MUST_USE;

/* The config.toml block that trusts docket's handlers in `doc`, whose file is
 * `path` ("" when there are none); docket_free it. */
int docket_codex_trust_block(char **out, const json_t *doc, const char *path) DOCKET_MUST_USE;

/* `config` (config.toml text) with docket's block replaced by `block` (or
 * removed when it is ""); everything else unchanged. docket_free it. */
int docket_codex_config_with_block(char **out, const char *config, const char *block) DOCKET_MUST_USE;

/* The hook command line docket writes (shell-quoted); docket_free it. */
int docket_integrate_command(char **out, docket_client client,
			     const docket_integrate_options *opts) DOCKET_MUST_USE;

/* docket's hook budget when none is given: a hook answers within it. */
#define DOCKET_HOOK_BUDGET_MS 2000

/*
 * Is docket's capture on for `client` with the hooks in `file` (Claude
 * Code's settings.json, Codex's hooks.json; `config` Codex's config.toml
 * that trusts them, NULL for the managed scope)? *out: an array of findings
 * {"ok": bool, "check": text, "fix": text (failures)}; integrations/check.c
 * lists the checks. `scope` user, project, local or managed (NULL: user);
 * `budget_ms` <= 0: DOCKET_HOOK_BUDGET_MS.
 */
int docket_integrate_check(json_t **out, docket_client client, const char *file, const char *config,
			   const char *scope, int budget_ms) DOCKET_MUST_USE;

/*
 * Claude Code's effective permission settings for `cwd`: the permission
 * rules of every settings file it merges (user, project, local, managed),
 * as one settings document {"permissions":{...}}. `mode` (may be NULL) is
 * the permission mode in force. `files` (may be NULL) gets the files read.
 */
int docket_claude_effective_settings(json_t **out, const char *cwd, const char *mode,
				     json_t *files) DOCKET_MUST_USE;

#endif
