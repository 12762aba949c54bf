/* SPDX-License-Identifier: Apache-2.0 */
/*
 * policy/policy.h: the private policy model shared by the loaders and the
 * evaluator.
 *
 * Invariants of a loaded policy (established by pol_finalize(), relied on by
 * the evaluator):
 *   1. Every string is owned by the policy's arena and lives as long as it.
 *   2. prefix_index lists every prefix rule sorted by (program, rule order),
 *      so rules for one program are contiguous and keep their source order.
 *   3. The policy is never written after pol_finalize(): evaluation only
 *      reads it, so one policy may serve many threads.
 *   4. tools_of[k] lists, in source order, the tool rules that may apply to
 *      a call of kind k (enum pol_tool_kind): the rules of kind k and the
 *      TK_ANY rules; programs maps each prefix rule program to its run
 *      [lo, hi) of prefix_index. The evaluator walks these, never all rules,
 *      and refuses a policy with rules but without them (not finalized).
 */
#ifndef DOCKET_POLICY_PRIV_H
#define DOCKET_POLICY_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "docket/policy.h"
#include "util/buf.h"
#include "util/htab.h"
#include "util/jv.h"

/* Decisions, strictest last; they map onto docket_verdict one to one. */
enum pol_decision { POL_ALLOW = 0, POL_ASK = 1, POL_DENY = 2, POL_UNSUPPORTED = 3 };

enum pol_sandbox { SB_UNSET = 0, SB_READ_ONLY, SB_WORKSPACE_WRITE, SB_FULL_ACCESS, SB_EXTERNAL };
enum pol_approval { AP_UNSET = 0, AP_UNTRUSTED, AP_ON_REQUEST, AP_NEVER, AP_GRANULAR };
/* Claude Code permission modes (defaultMode). */
enum pol_mode { MODE_UNSET = 0, MODE_DEFAULT, MODE_ACCEPT_EDITS, MODE_PLAN, MODE_BYPASS, MODE_DONT_ASK };
enum pol_platform { PLAT_ANY = 0, PLAT_LINUX, PLAT_MACOS, PLAT_WINDOWS, PLAT_COUNT };
/* How the file system is restricted, as Codex derives it from the sandbox. */
enum pol_fs_kind { FS_RESTRICTED = 0, FS_UNRESTRICTED, FS_EXTERNAL };
/* Capabilities a platform may be unable to enforce. */
enum { CAP_SANDBOX = 1u << 0, CAP_NETWORK_FILTER = 1u << 1 };

/* Where a Claude Code settings file sits, lowest precedence first: a
 * higher scope's defaultMode overrides a lower one's, rules accumulate. */
#define POL_CLAUDE_MANAGED_PATH "/etc/claude-code/managed-settings.json"
enum pol_scope { SCOPE_USER = 0, SCOPE_PROJECT, SCOPE_LOCAL, SCOPE_FLAG, SCOPE_MANAGED, SCOPE_COUNT };

/* Unmatched-segment heuristics. */
enum pol_heuristics { HEUR_CODEX = 0, HEUR_CLAUDE, HEUR_ASK, HEUR_ALLOW, HEUR_DENY };

/* Codex's sandbox_permissions on a shell call. */
enum pol_sbperm { SBP_DEFAULT = 0, SBP_REQUIRE_ESCALATED, SBP_ADDITIONAL };

typedef struct pol_origin {
	const char *file;
	unsigned line;
	unsigned col;
} pol_origin;

typedef struct pol_pattok {
	const char **alts;
	size_t n;
} pol_pattok;

/* A command prefix rule (Codex prefix_rule). */
typedef struct pol_prefix_rule {
	const char *program;      /* the first token */
	pol_pattok *rest;
	size_t nrest;
	int decision;
	const char *justification; /* NULL if none */
	const char *text;          /* rendered source form */
	pol_origin origin;
	/* match / not_match examples as written (shell words joined), shared by
	 * the rules one source rule made; checked at load, kept by convert */
	const char **match, **not_match;
	size_t nmatch, nnot_match;
} pol_prefix_rule;

enum pol_tool_kind {
	TK_ANY = 0,     /* "*" */
	TK_BASH,        /* shell */
	TK_READ,        /* read_file (and Claude's Grep/Glob/LS) */
	TK_EDIT,        /* write_file, apply_patch (Claude's Edit/Write/MultiEdit/NotebookEdit) */
	TK_WEBFETCH,    /* network */
	TK_MCP,         /* mcp__server__tool, mcp__server, mcp__* */
	TK_NAME,        /* any other tool, matched by name */
	TK_COUNT
};

enum pol_spec_kind {
	SPEC_NONE = 0,   /* the whole tool */
	SPEC_EXACT,      /* Bash(exact command) */
	SPEC_PREFIX,     /* Bash(prefix:*) */
	SPEC_GLOB,       /* Bash(glob with *) */
	SPEC_PATH,       /* Read/Edit(gitignore-style path) */
	SPEC_DOMAIN,     /* WebFetch(domain:host) */
	SPEC_OTHER       /* any other specifier, compared verbatim */
};

enum pol_anchor { ANCHOR_NONE = 0, ANCHOR_ROOT, ANCHOR_HOME, ANCHOR_PROJECT, ANCHOR_CWD };

/* A tool rule (Claude Code permission rule grammar). */
typedef struct pol_tool_rule {
	int kind;               /* enum pol_tool_kind */
	const char *name;       /* tool name as written (TK_NAME, TK_MCP) */
	int spec_kind;          /* enum pol_spec_kind */
	const char *spec;       /* the specifier, processed (no ":*" suffix, no anchor) */
	size_t spec_len;
	size_t lit_len;         /* SPEC_GLOB, SPEC_PATH: length before the first wildcard */
	int anchor;             /* SPEC_PATH */
	int decision;
	const char *text;       /* "Bash(npm run test:*)" */
	pol_origin origin;
} pol_tool_rule;

enum pol_proto { PROTO_ANY = 0, PROTO_HTTP, PROTO_HTTPS, PROTO_SOCKS5_TCP, PROTO_SOCKS5_UDP };

typedef struct pol_net_rule {
	const char *host;        /* lower case; "*.x.com" matches subdomains of x.com */
	int protocol;            /* enum pol_proto */
	unsigned port;           /* 0: any */
	int decision;
	const char *justification;
	const char *text;
	pol_origin origin;
} pol_net_rule;

typedef struct pol_host_exe {
	const char *name;
	const char **paths;
	size_t n;
} pol_host_exe;

typedef struct pol_pkg_eco {
	const char *ecosystem;   /* npm, pypi, cargo, ... */
	const char **allow;      /* package names; "*" allows any valid spec */
	size_t n;
	int decision;            /* for packages not in the allowlist (default ask) */
} pol_pkg_eco;

typedef struct pol_strv {
	const char **v;
	size_t n;
} pol_strv;

/* Indices of rules, in source order (invariant 4). */
typedef struct pol_rule_list {
	const uint32_t *v;
	size_t n;
	/* TK_BASH only (NULL otherwise): the byte a command's text must start
	 * with for rule v[j] to match it; 0 when the rule constrains none */
	const unsigned char *lead;
} pol_rule_list;

/* A slot of docket_policy.programs: one program's run of prefix_index. */
typedef struct pol_program_run {
	const char *program;
	uint32_t lo, hi;
} pol_program_run;

typedef struct pol_arena_block {
	struct pol_arena_block *next;
	size_t used, cap;
	uint8_t data[];
} pol_arena_block;

struct docket_policy {
	int format;               /* docket_policy_format */
	uint64_t serial;          /* set by pol_finalize: unique in the process, never 0 */
	const char *source;       /* what it was loaded from */
	pol_arena_block *arena;

	/* modes: context values override these when given */
	int sandbox;              /* enum pol_sandbox */
	int approval;             /* enum pol_approval */
	int mode;                 /* enum pol_mode */
	int scope_mode[SCOPE_COUNT]; /* Claude: defaultMode per settings scope (MODE_UNSET: none) */
	bool bypass_disabled;     /* Claude: disableBypassPermissionsMode "disable" */
	bool claude_sandbox;      /* Claude: settings "sandbox": {"enabled": true} (enforce.c) */
	int heuristics;           /* enum pol_heuristics for unmatched shell segments */
	bool heredoc_prefix;      /* Codex: a one-command heredoc script is that command */
	bool network_enabled;
	bool network_set;

	pol_strv readable, writable, protected_paths, additional_dirs;
	bool protected_set;

	pol_prefix_rule *prefix;
	size_t nprefix, capprefix;
	uint32_t *prefix_index;   /* invariant 2 */
	docket_htab programs;     /* pol_program_run by program (invariant 4) */

	pol_tool_rule *tools;
	size_t ntools, captools;
	uint32_t *tool_index;     /* storage of tools_of */
	unsigned char *tool_lead; /* storage of tools_of[TK_BASH].lead */
	pol_rule_list tools_of[TK_COUNT]; /* invariant 4 */

	pol_net_rule *net;
	size_t nnet, capnet;

	pol_host_exe *hostexe;
	size_t nhostexe, caphostexe;

	pol_strv languages;
	bool languages_set;

	pol_pkg_eco *pkgs;
	size_t npkgs, cappkgs;

	unsigned unsupported[PLAT_COUNT];   /* CAP_* per platform */
	/* set by pol_finalize: any Bash rule; any Read / Edit deny or ask rule */
	bool bash_rules, read_rules, edit_rules;
};

/* ---- calls (call.c) ---- */
/*
 * docket_policy_call_from_args through either JSON view (util/jv.h): the
 * one implementation; from_args is it over jansson, replay hands it the
 * simdjson tape of the stored args. args.p == NULL: no args.
 */
int docket_policy_call_from_jv(docket_policy_call **out, const char *name, const docket_jv_ops *o,
			       docket_jv args) DOCKET_MUST_USE;

/* ---- arena and building (policy.c) ---- */
void *pol_arena_alloc(pol_arena_block **arena, size_t size);
void pol_arena_free(pol_arena_block *arena);
void *pol_alloc(docket_policy *p, size_t size);
char *pol_strndup(docket_policy *p, const char *s, size_t n);
char *pol_strdup(docket_policy *p, const char *s);
int pol_new(docket_policy **out, int format, const char *source);
int pol_add_prefix(docket_policy *p, pol_prefix_rule **out);
int pol_add_tool(docket_policy *p, pol_tool_rule **out);
int pol_add_net(docket_policy *p, pol_net_rule **out);
int pol_add_hostexe(docket_policy *p, pol_host_exe **out);
int pol_add_pkg(docket_policy *p, pol_pkg_eco **out);
int pol_strv_push(docket_policy *p, pol_strv *v, const char *s);
int pol_finalize(docket_policy *p);
const pol_host_exe *pol_find_hostexe(const docket_policy *p, const char *name);
/* The tool rules that may apply to a call of `kind` (enum pol_tool_kind), in
 * source order (invariant 4). */
static inline const pol_rule_list *pol_tools_of(const docket_policy *p, int kind)
{
	return &p->tools_of[kind];
}
/* Whether p was finalized (invariant 4); evaluation refuses it otherwise. */
bool pol_finalized(const docket_policy *p);
/* The run [lo, hi) of prefix_index for `program`: false when no rule names it. */
bool pol_program_rules(const docket_policy *p, const char *program, size_t *lo, size_t *hi);
const char *pol_decision_name(int d);
const char *pol_codex_decision_name(int d);

/* ---- loaders ---- */
int pol_load_codex_rules(docket_policy *p, const char *name, const char *text, size_t len);
int pol_load_claude_settings(docket_policy *p, const char *name, const char *text, size_t len);
/* One settings file of a scope (enum pol_scope); call once per file. */
int pol_load_claude_scoped(docket_policy *p, const char *name, const char *text, size_t len, int scope);
/* The scope a settings file's place implies (home: the user's HOME, may be NULL). */
int pol_claude_scope_of(const char *path, const char *home);
/* The permission mode Claude Code runs with: the highest scope's defaultMode;
 * `scoped_bypass` says whether project and local settings may set
 * bypassPermissions (Claude Code up to 2.1.197 honoured it there). */
int pol_claude_mode(const docket_policy *p, bool scoped_bypass);
/* What `docket policy explain` says of a rule or the mode that Claude Code
 * does not apply as written; NULL when it does. */
const char *pol_claude_rule_note(const docket_policy *p, const pol_tool_rule *t);
const char *pol_claude_mode_note(const docket_policy *p);
int pol_load_yaml(docket_policy *p, const char *name, const char *text, size_t len);
/* Parse YAML text (UTF-8 checked first) into a document with a root; errors
 * name file:line:col; `empty` says what blank text lacks. yaml.c. */
struct fy_document;
int pol_yaml_parse(struct fy_document **out, const char *name, const char *text, size_t len,
		   const char *empty) DOCKET_MUST_USE;
/* Parse one Claude Code rule string ("Bash(npm run *)") into a tool rule. */
int pol_parse_tool_rule(docket_policy *p, const char *rule, int decision, pol_origin origin);
/* Append the line Codex writes for an "always allow" answer (deduplicated). */
int pol_codex_amend_allow(docket_buf *file, const char *const *argv, size_t argc) DOCKET_MUST_USE;
int pol_codex_amend_network(docket_buf *file, const char *host, int protocol, int decision,
			    const char *justification) DOCKET_MUST_USE;
int pol_parse_network_host(docket_policy *p, pol_net_rule *r, const char *raw, bool allow_wildcard);

/* ---- tool names (claude_tools.c) ---- */
/* Is `name` a tool a permission rule may name (Claude Code's; with `docket`
 * also docket's canonical tools)? "*" and mcp__... always are. */
bool pol_tool_name_known(const char *name, bool docket);
/* The known name nearest to a misspelt one, or NULL when none is close. */
const char *pol_tool_name_nearest(const char *name, bool docket);

/* ---- shell (shell.c) ---- */
enum shell_status {
	SHELL_PLAIN = 0,    /* segments joined by && || ; | */
	SHELL_EMPTY,        /* nothing but blanks */
	SHELL_HEREDOC,      /* one literal command fed by a heredoc */
	SHELL_COMPLEX       /* not split: see reason */
};

/* Reusable split output: words are NUL-terminated strings in `text`. */
typedef struct shell_split {
	int status;
	const char *reason;       /* SHELL_COMPLEX: "expansion", "substitution", ... */
	docket_buf text;
	size_t *word_off;         /* offsets into text.ptr */
	size_t nwords, capwords;
	size_t *seg_start;        /* index of each segment's first word; plus a sentinel */
	size_t nsegs, capsegs;
	char *ops;                /* operator after segment i: '&' (&&), '|' (||), 'p' (|), ';' */
	size_t capops;
	bool codex_words;         /* set by the caller: the reserved words Codex's parser takes as
				   plain command names (time, coproc, in, then, do, fi, done, esac) split */
} shell_split;

void shell_split_init(shell_split *s);
void shell_split_dispose(shell_split *s);
/* Split `script`. Fails only with DOCKET_ENOMEM. */
int shell_split_script(shell_split *s, const char *script, size_t len) DOCKET_MUST_USE;
/* The shell script of [bash|zsh|sh -c|-lc SCRIPT], or NULL. */
const char *shell_script_of(const char *const *argv, size_t argc, const char **flag);
/* Split a string like Python's shlex.split (no expansions); -1 on bad quoting. */
int shell_shlex_split(shell_split *s, const char *str) DOCKET_MUST_USE;
/* Append the shlex-quoted join of argv to buf. */
int shell_join(docket_buf *buf, const char *const *argv, size_t argc) DOCKET_MUST_USE;
const char *shell_basename(const char *path);

/* ---- Claude Code's own rules (claude_eval.c) ---- */
/* The modelled version nearest to v (0: unknown, the newest). */
uint32_t claude_model_version(uint32_t v);
/* Leading words Claude Code looks through before matching a Bash rule:
 * timeout/nohup/time (and, for deny rules, env and NAME=VALUE). */
size_t claude_wrapper_skip(const char *const *argv, size_t argc, bool deny);
/* A script past a leading `time [-p]` (a shell keyword: the splitter would
 * not split the script otherwise). */
const char *claude_skip_time(const char *script);
/* `text` past its leading NAME=VALUE words. */
const char *claude_skip_assignments(const char *text);
/* Does the read-only command argv read files named by its operands (cat, grep ...)? */
bool claude_file_reader(const char *const *argv, size_t argc);
/* Is argv[i] a file the read-only command argv reads (checked against Read rules)? */
bool claude_file_arg(const char *const *argv, size_t argc, size_t i);
/* Does acceptEdits allow this file-changing command (touch, mkdir, ...)? */
bool claude_file_changing(const char *const *argv, size_t argc);
/* A path acceptEdits still asks for: under .git/ or .claude/ of the project. */
bool claude_sensitive_path(const char *path, const char *root);
/* WebFetch that needs no rule: Claude Code's documentation hosts. */
bool claude_preapproved_url(const char *host, const char *path);
/* The next $(...) or `...` in text from *pos: its body as [*start, *start+*len). */
bool claude_next_substitution(const char *text, size_t *pos, size_t *start, size_t *len);

/* ---- heuristics (safety.c) ---- */
bool safety_is_known_safe(const char *const *argv, size_t argc, int platform, shell_split *scratch);
bool safety_is_dangerous(const char *const *argv, size_t argc, shell_split *scratch);
/* True if the 1..n-word list is one Codex refuses to suggest as a prefix rule. */
bool safety_prefix_suggestion_banned(const char *const *argv, size_t argc);

/* ---- URLs (url.c) ---- */
typedef struct pol_url {
	char scheme[16];          /* lower case */
	docket_buf host;          /* NUL-terminated: lower case, percent-decoded, full-width mapped */
	docket_buf path;          /* NUL-terminated: without query and fragment */
	unsigned port;
	bool has_port;
} pol_url;
/* The parts of `url` as the WHATWG URL parser finds them; DOCKET_EINVALID when it fails. */
int pol_url_parse(pol_url *u, const char *url) DOCKET_MUST_USE;
void pol_url_dispose(pol_url *u);
/*
 * Could a host rule (rule[0..rlen), "*.x.com" for subdomains) name `host`
 * (lower case, as url.c gives it)? UNKNOWN when a label is non-ASCII or
 * ACE (xn--) against a Unicode one: docket has no Punycode codec (libidn2
 * is not a dependency), so enforcement fails closed on it.
 */
/*
 * The enforcement step of docket_policy_eval_enforced on a result that
 * docket_policy_eval just filled for the same call and context (replay
 * reads the engine's verdict, rule and reasons first, then this).
 */
int pol_enforce(docket_policy_result *res, const docket_policy *p, const docket_policy_call *call,
		const docket_policy_context *ctx);
enum { POL_HOST_UNEQUAL = 0, POL_HOST_EQUAL = 1, POL_HOST_UNKNOWN = 2 };
int pol_host_equivalence(const char *rule, size_t rlen, const char *host);

/* ---- paths (path.c) ---- */
/*
 * Normalise `path` against `cwd` and `home` into out: absolute, no "." or
 * "..", no "//", no trailing "/". "~" and "~/x" use home. Fails with
 * DOCKET_EINVALID if the result cannot be made absolute.
 */
int path_normalize(docket_buf *out, const char *path, const char *cwd, const char *home) DOCKET_MUST_USE;
/* True if `path` equals `root` or lies under it (both normalised). */
bool path_is_under(const char *path, const char *root);
/*
 * gitignore-style glob match of a normalised absolute path: `*` within one
 * component, `**` across components, `?` one character; a pattern also
 * matches everything under a path it matches.
 */
bool path_glob_match(const char *pattern, size_t plen, const char *path);
/* Can path pattern[0..plen) match `dir` or something under it (a search of dir would reach it)? */
bool path_glob_reaches(const char *pattern, size_t plen, const char *dir);
/* Plain glob over a string: '*' matches any run (including spaces and '/'). */
bool str_glob_match(const char *pat, size_t plen, const char *s, size_t slen);

/* ---- Codex-level check used by tests (eval.c) ---- */
typedef struct pol_match {
	int rule;          /* index into prefix[], or -1: heuristics; -2 - i: tools[i] */
	int decision;
	uint16_t segment;
	uint16_t prefix_len; /* matched prefix length (prefix rules) */
	bool resolved;       /* matched through host_executable resolution */
} pol_match;

/*
 * Codex Policy::matches_for_command: prefix rules matching argv (host
 * executables resolved when `resolve`), appended to *m (capacity cap).
 * Returns how many were appended.
 */
size_t pol_codex_matches(const docket_policy *p, const char *const *argv, size_t argc,
			 bool resolve, pol_match *m, size_t cap, uint16_t segment);
/* Does one of the prefix rules [first, first + n) match argv (host
 * executables resolved)? What a rule's match / not_match examples are
 * checked with, in both loaders (policytest.c). */
bool pol_prefix_rules_match(const docket_policy *p, size_t first, size_t n, const char *const *argv, size_t argc);
/*
 * The same with Codex's resolution of a program spelled as a path: any path
 * (`./make`, `bin/make`, `make/`, `/usr/bin/make`) matches rules for its last
 * component, and a host_executable() list must hold its absolute form (a
 * relative one resolved lexically against `cwd`; NULL cwd: never listed).
 */
size_t pol_codex_matches_at(const docket_policy *p, const char *const *argv, size_t argc, bool resolve,
			    const char *cwd, pol_match *m, size_t cap, uint16_t segment);
/* `prog` made absolute against `cwd` and normalised lexically; false when it does not fit
 * or is relative with no cwd. */
bool pol_codex_resolve(char *out, size_t cap, const char *prog, const char *cwd);


/* ---- calls, contexts, results (call.c, eval.c) ---- */
enum call_tool {
	CT_SHELL = 0, CT_APPLY_PATCH, CT_READ, CT_WRITE, CT_NETWORK, CT_RUN_CODE, CT_INSTALL,
	CT_MCP, CT_OTHER
};

struct docket_policy_call {
	pol_arena_block *arena;
	int tool;                 /* enum call_tool */
	const char *name;         /* the tool name as given; "mcp__server__tool" for mcp */
	const char **argv;        /* shell */
	size_t argc;
	const char *cwd;          /* shell args.cwd */
	int sbperm;               /* enum pol_sbperm */
	const char **prefix_rule; /* shell args.prefix_rule (Codex) */
	size_t nprefix_rule;
	const char **paths;       /* read/write/apply_patch */
	size_t npaths;
	bool search;              /* read_file with a pattern: Grep/Glob over the directory paths[0] */
	const char *host;         /* network, lower case */
	const char *url_path;     /* network: the URL's path ("" when none), or NULL */
	unsigned port;
	int protocol;             /* enum pol_proto */
	const char *language;
	const char *ecosystem;
	const char **packages;
	size_t npackages;
};

typedef struct pol_grant {
	const char **argv;        /* command grant, or NULL */
	size_t argc;
	const char *path;         /* path grant (absolute), or NULL */
} pol_grant;

/* A Claude Code version as one comparable number (2.1.197 -> 2001197). */
#define POL_VERSION(a, b, c) ((uint32_t)(a) * 1000000u + (uint32_t)(b) * 1000u + (uint32_t)(c))
/* The last Claude Code version measured with the older rules (docs/policy.md). */
#define POL_CLAUDE_LEGACY_MAX POL_VERSION(2, 1, 197)
/* The Codex versions whose engine docket measured (docs/policy.md "Fidelity: Codex") */
#define POL_CODEX_MEASURED_OLD POL_VERSION(0, 169, 0)
#define POL_CODEX_MEASURED_NEW POL_VERSION(0, 171, 0)

struct docket_policy_context {
	pol_arena_block *arena;
	int platform;
	uint32_t claude_version;  /* from "runtime": "claude-code/X.Y.Z"; 0 unknown */
	uint32_t codex_version;   /* from "runtime": "codex/X.Y.Z" (importers: cli_version); 0 unknown */
	const char *cwd, *home, *tmpdir;
	pol_strv roots;
	pol_strv writable;        /* sandbox_policy.writable_roots */
	int approval;             /* AP_UNSET: the policy's */
	bool granular_sandbox, granular_rules;
	int sandbox;              /* SB_UNSET: the policy's */
	int network_access;       /* -1 unset, 0, 1 */
	bool exclude_tmpdir, exclude_slash_tmp;
	int fs_kind;              /* -1: derived from the sandbox */
	pol_grant *grants;
	size_t ngrants;
	const char *client;       /* "codex", "claude", "mcp" ...: who runs the call (enforce.c) */
	int client_sandbox;       /* -1 unset, 0: the client runs calls unsandboxed, 1: sandboxed */
};

/* Codex's JSON forms of approval_policy and sandbox_policy (call.c). */
int pol_parse_approval(const json_t *v, int *approval, bool *gsandbox, bool *grules);
int pol_parse_sandbox(const json_t *v, int *sandbox, int *network, bool *ex_tmpdir, bool *ex_slash_tmp,
		      const json_t **writable);

#define POL_MAX_REASONS 8
#define POL_MAX_MATCHES 256

typedef struct pol_reason {
	const char *code;
	size_t text_off;          /* into res->text */
} pol_reason;

typedef struct pol_segment {
	size_t word_off, nwords;  /* into res->wv */
	int decision;
	bool policy_allow;        /* an explicit allow rule matched */
	bool granted;
	bool heuristic;
	const char *why;          /* reason code */
} pol_segment;

struct docket_policy_result {
	int verdict;
	int sandbox;              /* 0 none, 1 sandboxed, 2 bypass */
	const docket_policy *policy;
	pol_reason reasons[POL_MAX_REASONS];
	size_t nreasons;
	pol_match matches[POL_MAX_MATCHES];
	size_t nmatches;
	pol_segment *segs;
	size_t nsegs, capsegs;
	const char **wv;          /* segment words */
	size_t nwv, capwv;
	bool has_amendment;
	size_t amend_off, amend_n; /* into wv */
	const char *unsplit_reason;
	docket_buf text;
	docket_buf tmp, tmp2, tmp3;
	docket_buf claude_script, claude_dir; /* claude_bash.c: the script as Claude Code matches it; eval.c: a resolved directory */
	shell_split split, scratch;
	/* the enforced verdict (enforce.c) */
	bool enforced;            /* docket_policy_eval_enforced filled it */
	int engine_verdict;       /* what the engine (Codex, Claude Code) decides */
	struct sh_analysis *sh;   /* the shell analysis, allocated on first use */
	struct docket_policy_result *sub;  /* install_packages / run_code judged for a shell command */
	docket_buf etmp, etmp2, ewhy, ecwd;
	const char **eargv;       /* one command's argv */
	size_t capeargv;
	struct pol_epath *epath;  /* enforce.c: the policy's Read and Edit deny/ask path rules, found once a call */
	size_t nepath[2], capepath;
	docket_buf eglobs;        /* ... their absolute globs, NUL-separated */
	uint64_t epath_serial;    /* ... built for the policy of this serial (0: none) */
	docket_buf epath_key, epath_key2; /* ... and these anchors (cwd, home, project root) */
};

#endif
