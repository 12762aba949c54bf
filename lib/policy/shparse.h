/* SPDX-License-Identifier: Apache-2.0 */
/*
 * shparse.h: the shell analysis behind the enforced verdict and the risk
 * classifier. A script is parsed once into every command that can run, at
 * any depth: behind wrappers and assignments, inside substitutions,
 * subshells, groups and control flow, inside `sh -c`, `eval`, heredocs and
 * here-strings fed to a shell, and after `find -exec`, `xargs`, `watch` ...
 * (the look-through table, `sh_lookthrough`, documented in docs/policy.md).
 *
 * Invariants:
 *   1. Every word that bash would run as a command name appears as the
 *      first word of some sh_cmd (over-approximation is allowed: a word
 *      may appear as a command that bash would not run, never the reverse).
 *   2. When the parser cannot be sure of invariant 1 (syntax it does not
 *      model, a cap reached), `incomplete` is set with a reason: callers
 *      must then ask or deny, never allow.
 *   3. Nothing is read from the file system; program paths are mapped by
 *      their basename.
 */
#ifndef DOCKET_POLICY_SHPARSE_H
#define DOCKET_POLICY_SHPARSE_H

#include <stdbool.h>
#include <stddef.h>

#include "util/buf.h"

/* Caps; past any of them the analysis is incomplete (ask or deny). */
#define SH_MAX_DEPTH 12
#define SH_MAX_CMDS 8192
#define SH_MAX_WORDS 262144
#define SH_MAX_SCRIPT (1u << 20)

/* Flags of one word. */
enum {
	SHW_DYNAMIC = 1u << 0,  /* not statically known: expansion, substitution, glob */
	SHW_ASSIGN = 1u << 1    /* NAME=VALUE as the shell saw it (unquoted name) */
};

/* Flags of one command. */
enum {
	SHC_WRAPPER = 1u << 0,       /* a look-through wrapper; its command follows as its own entry */
	SHC_DYNAMIC_NAME = 1u << 1,  /* the command name is not statically known ($X, ${X:-curl}, *) */
	SHC_PIPE_IN = 1u << 2,       /* stdin comes from a pipe */
	SHC_STDIN_SCRIPT = 1u << 3,  /* a shell or interpreter that reads its program from stdin */
	SHC_SCRIPT_FILE = 1u << 4,   /* runs a script file (bash f.sh, python3 f.py, source f) */
	SHC_CODE = 1u << 5,          /* an interpreter one-liner (python3 -c, node -e, perl -e) */
	SHC_NESTED = 1u << 6,        /* runs a nested script (sh -c, eval, watch): analysed below it */
	SHC_DYNAMIC_SCRIPT = 1u << 7,/* a nested script that is not statically known (sh -c "$X") */
	SHC_BACKGROUND = 1u << 8,    /* ends with & */
	SHC_CWD_UNKNOWN = 1u << 9,   /* after a cd whose target is not statically known */
	SHC_FUNCDEF = 1u << 10       /* a function of this name is defined in the script */
};

/* Redirection kinds. */
enum { SHR_READ = 1, SHR_WRITE, SHR_APPEND, SHR_HEREDOC, SHR_HERESTRING, SHR_DUP };

typedef struct sh_redir {
	int kind;
	size_t word;              /* index into words (the target; the body for heredocs) */
} sh_redir;

typedef struct sh_cmd {
	size_t word0, nwords;     /* argv: words[word0 .. word0+nwords) */
	size_t redir0, nredir;    /* redirs[redir0 .. redir0+nredir) */
	unsigned flags;           /* SHC_* */
	unsigned depth;           /* 0: the script itself; +1 per nested script or substitution */
	const char *lang;         /* SHC_CODE, SHC_SCRIPT_FILE, SHC_STDIN_SCRIPT: "python", "javascript", "shell" ... */
	size_t cwd;               /* offset into text of the cmd's working directory; (size_t)-1: the call's */
} sh_cmd;

typedef struct sh_wordv {
	size_t *v;
	size_t n, cap;
} sh_wordv;

typedef struct sh_analysis {
	docket_buf text;          /* NUL-terminated word values */
	size_t *word_off;
	unsigned char *word_flags;
	size_t nwords, capwords, capwflags;
	sh_cmd *cmds;
	size_t ncmds, capcmds;
	sh_redir *redirs;
	size_t nredirs, capredirs;
	bool incomplete;          /* invariant 2 */
	const char *why;          /* why incomplete: "syntax", "cap", "case", "arithmetic" ... */
	const char *home;         /* for ~ and bare cd */
	const char *cwd0;         /* where the script starts (NULL: unknown) */
	size_t cwd_off;           /* the current cwd in text, (size_t)-1: cwd0 */
	bool cwd_unknown;
	docket_buf scratch;
	/* per nesting level: source copies, word buffers, a command's words */
	docket_buf src[SH_MAX_DEPTH + 2];
	docket_buf wb[SH_MAX_DEPTH + 2];
	sh_wordv cmdw[SH_MAX_DEPTH + 2];
} sh_analysis;

void sh_init(sh_analysis *a);
void sh_dispose(sh_analysis *a);

/*
 * Analyse `script` (len bytes). `cwd` (may be NULL) is where the script
 * starts; literal `cd` targets are followed from it. Fails only with
 * DOCKET_ENOMEM; anything it cannot model sets `incomplete`.
 */
int sh_analyze(sh_analysis *a, const char *script, size_t len, const char *cwd, const char *home);
/* Analyse a call's argv (not a script): `bash -lc S`, `env curl x`, ... */
int sh_analyze_argv(sh_analysis *a, const char *const *argv, size_t argc, const char *cwd, const char *home);

static inline const char *sh_word(const sh_analysis *a, size_t i)
{
	return a->text.ptr + a->word_off[i];
}

/*
 * shvia.c: programs that run commands through their options, config or
 * environment (git -c core.pager=..., sed e, awk system(), tar
 * --to-command, rsync -e, ssh HOST CMD, vim -c '!...', GIT_SSH_COMMAND=...).
 * What they run is analysed one level below `depth` when statically known;
 * otherwise `cmd` gets SHC_DYNAMIC_SCRIPT (an assignment with no command:
 * the analysis is incomplete).
 */
int sh_via_command(sh_analysis *a, unsigned depth, const size_t *w, size_t n, size_t cmd);
/* NAME=VALUE (word `word`) before or for command `cmd` ((size_t)-1: none). */
int sh_via_assignment(sh_analysis *a, unsigned depth, size_t word, size_t cmd);
/* The names of shvia.c's programs and variables by index, NULL past the end (docs/policy.md lists them). */
const char *sh_via_name(size_t i);
const char *sh_via_env_name(size_t i);

/* For shvia.c: analyse s[0..len) (copied first) as a script one level below `depth`. */
int sh_nested_script(sh_analysis *a, const char *s, size_t len, unsigned depth);
/* For shvia.c: the analysis cannot be completed (invariant 2). Returns 0. */
int sh_incomplete(sh_analysis *a, const char *why);

/* Kinds of the look-through table. */
enum sh_look_kind {
	SHL_WRAPPER = 1,  /* runs the command after its options (env, sudo, nice, timeout ...) */
	SHL_SHELL,        /* -c SCRIPT, a script file, or stdin (bash, sh, zsh, dash ...) */
	SHL_EVAL,         /* its arguments joined are a script (eval) */
	SHL_SOURCE,       /* runs a script file in this shell (source, .) */
	SHL_INTERP,       /* -c/-e CODE, a script file, or stdin (python3, node, perl ...) */
	SHL_EXEC_ARGS,    /* runs commands found in its arguments (find -exec, xargs, watch, su -c, flock -c) */
	SHL_READER        /* reads the files named by its arguments (cat, base64, sed, git show ...) */
};

typedef struct sh_look {
	const char *name;
	int kind;                 /* enum sh_look_kind */
	const char *const *optarg;/* options that take a separate argument */
	unsigned positional;      /* SHL_WRAPPER: operands before the command (timeout DURATION) */
	const char *lang;         /* SHL_INTERP: run_code language */
	const char *code_opt;     /* SHL_INTERP: the option whose argument is code ("-c", "-e") */
} sh_look;

/* The look-through entry of a program name (its basename), or NULL. */
const sh_look *sh_lookup(const char *prog);
/* The whole table, NULL-name terminated (docs/policy.md lists it; a test checks the two agree). */
const sh_look *sh_lookthrough_table(void);

#endif
