/* SPDX-License-Identifier: Apache-2.0 */
/*
 * shcmd.c: knowledge of single commands (shcmd.h).
 */
#include <string.h>

#include "shcmd.h"
#include "policy.h"

static const char *w_at(const sh_analysis *a, const sh_cmd *c, size_t i)
{
	return sh_word(a, c->word0 + i);
}

static bool one_of(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (strcmp(s, *list) == 0)
			return true;
	return false;
}

/* Options that only change how an install runs, not what is installed. */
static const char *const harmless_opts[] = {
	"-U", "--upgrade", "--user", "-q", "--quiet", "-v", "--verbose", "--no-deps", "--pre",
	"--no-cache-dir", "--break-system-packages", "--force-reinstall", "-I", "--ignore-installed",
	"--no-input", "--disable-pip-version-check", "--require-hashes", "--system",
	"-g", "--global", "-D", "--save-dev", "-S", "--save", "-E", "--save-exact", "-O",
	"--save-optional", "--no-save", "--legacy-peer-deps", "-y", "--yes", "--silent", "-s",
	"--prefer-offline", "--no-audit", "--no-fund", "--dev", "-d", "--exact", "--locked",
	"--frozen", "--no-install-recommends", "--assume-yes", "-qq", "--force", "-f", "--quiet=2",
	NULL
};

static bool install_verb(const char *eco_prog, const char *w)
{
	static const char *const npm[] = { "install", "i", "add", "in", "ins", "inst", "insta", "instal",
					   "isnt", "isntall", "ci", "exec", "x", "dlx", NULL };
	static const char *const pip[] = { "install", "download", NULL };
	static const char *const other[] = { "install", "add", "get", "require", "reinstall", "upgrade", NULL };

	if (strcmp(eco_prog, "npm") == 0)
		return one_of(w, npm);
	if (strcmp(eco_prog, "pypi") == 0)
		return one_of(w, pip);
	return one_of(w, other);
}

/* Specs from word `from` on: operands and source-changing options. */
static void collect_specs(const sh_analysis *a, const sh_cmd *c, size_t from, sh_install *out)
{
	for (size_t i = from; i < c->nwords; i++) {
		const char *s = w_at(a, c, i);

		if (s[0] == '-' && one_of(s, harmless_opts))
			continue;
		if (out->npkgs >= sizeof(out->pkgs) / sizeof(out->pkgs[0])) {
			out->truncated = true;
			return;
		}
		out->pkgs[out->npkgs++] = c->word0 + i;
	}
}

static const char *eco_of(const char *prog)
{
	static const struct {
		const char *prog, *eco;
	} t[] = {
		{ "pip", "pypi" }, { "pip3", "pypi" }, { "pip2", "pypi" }, { "pipx", "pypi" }, { "uv", "pypi" },
		{ "npm", "npm" }, { "pnpm", "npm" }, { "yarn", "npm" }, { "bun", "npm" },
		{ "apt", "apt" }, { "apt-get", "apt" }, { "aptitude", "apt" },
		{ "cargo", "cargo" }, { "go", "go" }, { "gem", "rubygems" }, { "brew", "brew" },
		{ "conda", "conda" }, { "mamba", "conda" }, { "poetry", "pypi" },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (t[i].prog[0] == prog[0] && strcmp(prog, t[i].prog) == 0)
			return t[i].eco;
	if (strncmp(prog, "pip", 3) == 0 && prog[3] >= '0' && prog[3] <= '9')
		return "pypi";
	return NULL;
}

bool sh_install_of(const sh_analysis *a, const sh_cmd *c, sh_install *out)
{
	const char *prog, *eco;
	size_t i = 1;

	memset(out, 0, sizeof(*out));
	if (c->nwords == 0 || (c->flags & SHC_DYNAMIC_NAME))
		return false;
	prog = shell_basename(w_at(a, c, 0));
	/* npx X, bunx X, uvx X, pnpx X: fetch and run a package */
	if (strcmp(prog, "npx") == 0 || strcmp(prog, "bunx") == 0 || strcmp(prog, "pnpx") == 0 ||
	    strcmp(prog, "uvx") == 0) {
		out->ecosystem = strcmp(prog, "uvx") == 0 ? "pypi" : "npm";
		while (i < c->nwords && w_at(a, c, i)[0] == '-' && one_of(w_at(a, c, i), harmless_opts))
			i++;
		if (i < c->nwords)
			out->pkgs[out->npkgs++] = c->word0 + i;
		return true;
	}
	/* python -m pip install ... */
	if (sh_lookup(prog) && sh_lookup(prog)->lang && strcmp(sh_lookup(prog)->lang, "python") == 0) {
		if (c->nwords < 3 || strcmp(w_at(a, c, 1), "-m") != 0 || strcmp(w_at(a, c, 2), "pip") != 0)
			return false;
		eco = "pypi";
		i = 3;
	} else if (!(eco = eco_of(prog))) {
		return false;
	}
	/* skip global options to the verb */
	while (i < c->nwords && w_at(a, c, i)[0] == '-')
		i++;
	if (i >= c->nwords)
		return false;
	if (strcmp(prog, "uv") == 0 || strcmp(prog, "pipx") == 0) {
		/* uv pip install, uv add, uv tool install|run, pipx install|run */
		if (strcmp(w_at(a, c, i), "pip") == 0 || strcmp(w_at(a, c, i), "tool") == 0)
			i++;
		if (i >= c->nwords || !(install_verb("pypi", w_at(a, c, i)) || strcmp(w_at(a, c, i), "add") == 0 ||
					strcmp(w_at(a, c, i), "run") == 0))
			return false;
	} else if (strcmp(prog, "yarn") == 0 && strcmp(w_at(a, c, i), "global") == 0) {
		i++;
		if (i >= c->nwords || strcmp(w_at(a, c, i), "add") != 0)
			return false;
	} else if (strcmp(prog, "bun") == 0 && strcmp(w_at(a, c, i), "x") == 0) {
		/* bun x PKG */
	} else if (strcmp(prog, "pnpm") == 0 && strcmp(w_at(a, c, i), "dlx") == 0) {
		/* pnpm dlx PKG */
	} else if (!install_verb(strcmp(eco, "npm") == 0 ? "npm" : strcmp(eco, "pypi") == 0 ? "pypi" : "other",
				 w_at(a, c, i))) {
		return false;
	}
	out->ecosystem = eco;
	collect_specs(a, c, i + 1, out);
	return true;
}

size_t sh_git_subcommand(const sh_analysis *a, const sh_cmd *c)
{
	static const char *const with_arg[] = { "-C", "-c", "--git-dir", "--work-tree", "--namespace",
						"--exec-path", "--super-prefix", "--config-env", NULL };
	size_t i = 1;

	if (c->nwords < 2 || (c->flags & SHC_DYNAMIC_NAME) || strcmp(shell_basename(w_at(a, c, 0)), "git") != 0)
		return 0;
	while (i < c->nwords && w_at(a, c, i)[0] == '-')
		i += one_of(w_at(a, c, i), with_arg) ? 2 : 1;
	return i < c->nwords ? i : 0;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

bool sh_secret_path(const char *path)
{
	static const char *const names[] = {
		".env", ".netrc", ".npmrc", ".pypirc", ".git-credentials", "credentials", "id_rsa", "id_dsa",
		"id_ecdsa", "id_ed25519", ".pgpass", "shadow", "secrets.json", "secrets.yaml", "secrets.yml",
		".htpasswd", "kubeconfig", NULL
	};
	static const char *const dirs[] = { ".ssh", ".gnupg", ".aws", ".kube", ".docker", "secrets", NULL };
	static const char *const exts[] = { ".pem", ".key", ".p12", ".pfx", ".keystore", ".jks", NULL };
	const char *base = shell_basename(path);

	if (one_of(base, names) || strncmp(base, ".env.", 5) == 0)
		return strcmp(base, ".env.example") != 0 && strcmp(base, ".env.sample") != 0;
	for (size_t i = 0; exts[i]; i++)
		if (ends_with(base, exts[i]))
			return true;
	/* a component that is a secret directory */
	for (const char *p = path; *p;) {
		const char *e = strchr(p, '/');
		size_t n = e ? (size_t)(e - p) : strlen(p);

		for (size_t i = 0; dirs[i]; i++)
			if (strlen(dirs[i]) == n && strncmp(p, dirs[i], n) == 0)
				return true;
		if (!e)
			break;
		p = e + 1;
	}
	return false;
}

bool sh_network_program(const char *base)
{
	static const char *const progs[] = {
		"curl", "wget", "http", "https", "xh", "aria2c", "nc", "ncat", "netcat", "socat", "telnet",
		"ftp", "sftp", "scp", "ssh", "rsync", "lynx", "w3m", "links", "fetch", "axel", "httpie",
		NULL
	};

	return one_of(base, progs);
}

const char *sh_operand_path(const char *word, bool git_rev)
{
	const char *eq;

	if (git_rev) {
		const char *colon = strchr(word, ':');

		if (colon && colon[1])
			return colon + 1;
	}
	if (word[0] == '-') {
		eq = strchr(word, '=');
		return eq && eq[1] ? eq + 1 : NULL;
	}
	if ((eq = strchr(word, '=')) && eq > word) {
		const char *k = word;

		while (k < eq && *k >= 'a' && *k <= 'z')
			k++;
		if (k == eq)
			return eq[1] ? eq + 1 : NULL;   /* dd if=path */
	}
	return word;
}

/* An option word that asks for recursion: -r, -R, -a (cp), --recursive ...; clusters (-rn) count. */
static bool recursive_opt(const char *w, const char *letters)
{
	if (strcmp(w, "--recursive") == 0 || strcmp(w, "--dereference-recursive") == 0 ||
	    strcmp(w, "--archive") == 0 || strcmp(w, "--directories=recurse") == 0)
		return true;
	return w[0] == '-' && w[1] && w[1] != '-' && strpbrk(w + 1, letters) != NULL;
}

bool sh_tree_reader(const sh_analysis *a, const sh_cmd *c, bool *cwd_too)
{
	static const char *const searchers[] = { "rg", "ag", "ack", NULL };   /* recursive by default */
	static const char *const archivers[] = { "tar", "bsdtar", "rsync", NULL };
	static const char *const grep[] = { "grep", "egrep", "fgrep", NULL };
	const char *prog;
	size_t operands = 0;
	bool rec = false, search;

	*cwd_too = false;
	if (c->nwords == 0 || (c->flags & SHC_DYNAMIC_NAME))
		return false;
	prog = shell_basename(w_at(a, c, 0));
	if (one_of(prog, archivers))
		return true;
	search = one_of(prog, searchers);
	for (size_t i = 1; i < c->nwords; i++) {
		const char *w = w_at(a, c, i);

		if (w[0] != '-')
			operands++;
		else if (one_of(prog, grep))
			rec = rec || recursive_opt(w, "rR") || strcmp(w, "-d") == 0;
		else if (strcmp(prog, "cp") == 0 || strcmp(prog, "scp") == 0)
			rec = rec || recursive_opt(w, "rRa");
		else if (strcmp(prog, "zip") == 0)
			rec = rec || recursive_opt(w, "r");
		else if (strcmp(prog, "find") == 0)
			rec = rec || strcmp(w, "-exec") == 0 || strcmp(w, "-execdir") == 0 || strcmp(w, "-ok") == 0 ||
			      strcmp(w, "-okdir") == 0;
	}
	if (strcmp(prog, "find") == 0) {
		/* find with no start path (nothing before its expression) searches . */
		const char *w1 = c->nwords > 1 ? w_at(a, c, 1) : "-";

		*cwd_too = rec && (w1[0] == '-' || w1[0] == '(' || w1[0] == '!');
		return rec;
	}
	search = search || (rec && one_of(prog, grep));
	/* the first operand of a search is its pattern: none after it is the working directory */
	*cwd_too = search && operands <= 1;
	return search || rec;
}
