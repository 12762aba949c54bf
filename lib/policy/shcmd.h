/* SPDX-License-Identifier: Apache-2.0 */
/*
 * shcmd.h: what docket knows about single commands found by the shell
 * analysis (shparse.h): package installs spelled as shell commands, git
 * subcommands, secret-looking paths, network programs. The one owner of
 * these tables; the enforced verdict (enforce.c) and the risk classifier
 * (risk.c) both use them.
 */
#ifndef DOCKET_POLICY_SHCMD_H
#define DOCKET_POLICY_SHCMD_H

#include <stdbool.h>
#include <stddef.h>

#include "shparse.h"

/* A package install spelled as a shell command. */
typedef struct sh_install {
	const char *ecosystem;    /* "npm", "pypi", "cargo", "go", "rubygems", "apt", "brew", "conda" */
	size_t npkgs;
	/* words of the package specs (and of options that change the source:
	 * --index-url URL ...; they fail spec validation as they would in
	 * install_packages) */
	size_t pkgs[32];
	bool truncated;           /* more specs than pkgs[] holds: judge as invalid */
} sh_install;

/* Does command c install packages? Fills *out. */
bool sh_install_of(const sh_analysis *a, const sh_cmd *c, sh_install *out);
/* The index (within c's words) of git's subcommand, 0 when c is not git or has none. */
size_t sh_git_subcommand(const sh_analysis *a, const sh_cmd *c);
/* A secret-looking path (.env, .ssh/, *.pem, id_rsa, credentials, .netrc ...). */
bool sh_secret_path(const char *path);
/* A program that fetches from the network (curl, wget, nc, ssh, scp ...). */
bool sh_network_program(const char *base);
/* The path a word names when it is an operand: `git show REV:path` gives path,
 * `if=path` and `--file=path` give path; NULL when the word is an option. */
const char *sh_operand_path(const char *word, bool git_rev);
/*
 * Does c read whole directory trees given to it (grep -r, rg, cp -r, tar,
 * zip -r, rsync, find with -exec)? *cwd_too: with no path operand it
 * searches its working directory (rg PATTERN, grep -r PATTERN).
 */
bool sh_tree_reader(const sh_analysis *a, const sh_cmd *c, bool *cwd_too);

#endif
