/* SPDX-License-Identifier: Apache-2.0 */
/*
 * safety.c: heuristics for shell segments no rule matched.
 *
 * "Known safe" commands only read (Codex's is_known_safe_command, including
 * its read-only git subset); "dangerous" ones destroy data (rm -f/-rf, also
 * behind sudo). Both look inside `bash -lc` scripts only when the script
 * splits into plain segments.
 */
#include <string.h>

#include "policy.h"

static bool streq(const char *a, const char *b)
{
	return strcmp(a, b) == 0;
}

static bool starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static bool in_list(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (streq(s, *list))
			return true;
	return false;
}

static bool sed_n_arg_ok(const char *s)
{
	size_t len = strlen(s), digits = 0, parts = 1;

	if (len < 2 || s[len - 1] != 'p')
		return false;
	for (size_t i = 0; i + 1 < len; i++) {
		if (s[i] == ',') {
			if (digits == 0 || ++parts > 2)
				return false;
			digits = 0;
		} else if (s[i] >= '0' && s[i] <= '9') {
			digits++;
		} else {
			return false;
		}
	}
	return digits > 0;
}

/* git: a read-only subcommand with no option that writes or redirects git. */
static bool git_is_safe(const char *const *argv, size_t argc)
{
	static const char *const branch_ok[] = {
		"--show-current", "-a", "--all", "-r", "--remotes", "-v", "-vv", "--verbose",
		"--list", "-l", "--no-color", "--color", NULL
	};
	size_t i = 1;
	const char *sub;

	while (i < argc && argv[i][0] == '-') {
		/* only -C DIR moves git, and only within what the sandbox allows */
		if (streq(argv[i], "-C") && i + 1 < argc) {
			i += 2;
			continue;
		}
		return false;
	}
	if (i >= argc)
		return false;
	sub = argv[i++];
	if (streq(sub, "status"))
		return true;
	if (streq(sub, "log") || streq(sub, "diff") || streq(sub, "show")) {
		for (; i < argc; i++)
			if (starts(argv[i], "--output") || streq(argv[i], "--ext-diff") ||
			    starts(argv[i], "--textconv"))
				return false;
		return true;
	}
	if (streq(sub, "branch")) {
		for (; i < argc; i++)
			if (!in_list(argv[i], branch_ok))
				return false;
		return true;
	}
	return false;
}

static bool safe_to_exec(const char *const *argv, size_t argc, int platform)
{
	static const char *const plain[] = {
		"cat", "cd", "cut", "echo", "expr", "false", "grep", "head", "id", "ls", "nl",
		"paste", "pwd", "rev", "seq", "stat", "tail", "tr", "true", "uname", "uniq", "wc",
		"which", "whoami", NULL
	};
	static const char *const find_bad[] = {
		"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fls", "-fprint", "-fprint0",
		"-fprintf", NULL
	};
	const char *cmd;

	if (argc == 0)
		return false;
	cmd = shell_basename(argv[0]);
	if ((platform == PLAT_LINUX || platform == PLAT_ANY) && (streq(cmd, "numfmt") || streq(cmd, "tac")))
		return true;
	if (in_list(cmd, plain))
		return true;
	if (streq(cmd, "base64")) {
		for (size_t i = 1; i < argc; i++)
			if (streq(argv[i], "-o") || streq(argv[i], "--output") ||
			    starts(argv[i], "--output=") || starts(argv[i], "-o"))
				return false;
		return true;
	}
	if (streq(cmd, "find")) {
		for (size_t i = 0; i < argc; i++)
			if (in_list(argv[i], find_bad))
				return false;
		return true;
	}
	if (streq(cmd, "rg")) {
		for (size_t i = 0; i < argc; i++) {
			const char *a = argv[i];

			if (streq(a, "--search-zip") || streq(a, "-z") || streq(a, "--pre") ||
			    starts(a, "--pre=") || streq(a, "--hostname-bin") ||
			    starts(a, "--hostname-bin="))
				return false;
		}
		return true;
	}
	if (streq(cmd, "sed"))
		return argc <= 4 && argc >= 3 && streq(argv[1], "-n") && sed_n_arg_ok(argv[2]);
	if (streq(cmd, "git"))
		return git_is_safe(argv, argc);
	return false;
}

/* Run `pred` over the plain segments of a shell script; false if it does not split. */
static bool all_segments(const char *const *argv, size_t argc, shell_split *sp, int platform,
			 bool (*pred)(const char *const *, size_t, int), bool want_all)
{
	const char *script = shell_script_of(argv, argc, NULL);
	const char *words[256];

	if (!script || !sp)
		return false;
	if (shell_split_script(sp, script, strlen(script)) < 0 || sp->status != SHELL_PLAIN)
		return false;
	for (size_t g = 0; g < sp->nsegs; g++) {
		size_t a = sp->seg_start[g], b = sp->seg_start[g + 1], n = b - a;
		bool r;

		if (n > sizeof(words) / sizeof(words[0]))
			return false;
		for (size_t k = 0; k < n; k++)
			words[k] = sp->text.ptr + sp->word_off[a + k];
		r = pred(words, n, platform);
		if (want_all && !r)
			return false;
		if (!want_all && r)
			return true;
	}
	return want_all;
}

bool safety_is_known_safe(const char *const *argv, size_t argc, int platform, shell_split *scratch)
{
	const char *mapped[3];

	if (safe_to_exec(argv, argc, platform))
		return true;
	/* Codex reads "zsh" as "bash" */
	if (argc == 3) {
		for (size_t i = 0; i < 3; i++)
			mapped[i] = streq(argv[i], "zsh") ? "bash" : argv[i];
		return all_segments(mapped, 3, scratch, platform, safe_to_exec, true);
	}
	return false;
}

static bool dangerous_exec(const char *const *argv, size_t argc, int platform)
{
	(void)platform;
	while (argc > 0 && streq(argv[0], "sudo")) {
		argv++;
		argc--;
	}
	if (argc >= 2 && streq(argv[0], "rm") && (streq(argv[1], "-f") || streq(argv[1], "-rf")))
		return true;
	return false;
}

bool safety_is_dangerous(const char *const *argv, size_t argc, shell_split *scratch)
{
	if (dangerous_exec(argv, argc, 0))
		return true;
	return all_segments(argv, argc, scratch, 0, dangerous_exec, false);
}

bool safety_prefix_suggestion_banned(const char *const *argv, size_t argc)
{
	static const char *const banned[][3] = {
		{"python3"}, {"python3", "-"}, {"python3", "-c"}, {"python"}, {"python", "-"},
		{"python", "-c"}, {"py"}, {"py", "-3"}, {"pythonw"}, {"pyw"}, {"pypy"}, {"pypy3"},
		{"git"}, {"bash"}, {"bash", "-lc"}, {"sh"}, {"sh", "-c"}, {"sh", "-lc"}, {"zsh"},
		{"zsh", "-lc"}, {"/bin/zsh"}, {"/bin/zsh", "-lc"}, {"/bin/bash"}, {"/bin/bash", "-lc"},
		{"pwsh"}, {"pwsh", "-Command"}, {"pwsh", "-c"}, {"powershell"},
		{"powershell", "-Command"}, {"powershell", "-c"}, {"powershell.exe"},
		{"powershell.exe", "-Command"}, {"powershell.exe", "-c"}, {"env"}, {"sudo"},
		{"node"}, {"node", "-e"}, {"perl"}, {"perl", "-e"}, {"ruby"}, {"ruby", "-e"},
		{"php"}, {"php", "-r"}, {"lua"}, {"lua", "-e"}, {"osascript"},
	};

	if (argc == 0)
		return true;
	for (size_t b = 0; b < sizeof(banned) / sizeof(banned[0]); b++) {
		size_t n = banned[b][1] ? 2 : 1;

		if (n != argc)
			continue;
		if (streq(banned[b][0], argv[0]) && (n == 1 || streq(banned[b][1], argv[1])))
			return true;
	}
	return false;
}
