#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Differential cases for docket's Claude Code engine, from the real CLI (issue 33).

    claude_diff.py --version 2.1.332 [--seed 33] [--jobs 2] [--out FILE]

A seeded generator makes settings cases (settings files in their scopes x
tool calls) across the families of issue 33: redirections, environment
prefixes, `cd dir && ...`, read-only commands, `./*.ext` path patterns,
additionalDirectories, MCP tool rules, Edit/Write rules under acceptEdits,
defaultMode bypassPermissions by scope, plus Bash rules and compound
commands. Each case is run through the real Claude Code CLI of that
version, headless (`claude -p`) against tests/realclient/anthropic_stub.py
(claude_groundtruth.py's runner: PostToolUse/PostToolUseFailure hooks and
the tool result are the evidence), and the answers are written to
fixtures/policy/claude-diff-VERSION.json, which the default suite's
test_policy_groundtruth checks docket against. The CLI is installed with
npm into $DOCKET_REALCLIENT_CACHE/claude-VERSION (default
~/.cache/docket-realclient) unless --claude names one. Same seed, same
cases. Exit 77 (skipped) when the CLI cannot be had.
"""
import argparse
import concurrent.futures
import glob
import json
import os
import random
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import claude_groundtruth as gt  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(HERE))


def bash(cmd):
    return gt.bash(cmd)


def tool(name, **inp):
    return {"tool": name, "input": inp}


def perms(**kw):
    return {"permissions": kw}


# ---- families ----

REDIRECT_BASES = ["ls", "ls -la", "cat src/a.txt", "printf a", "npm run lint", "git status", "echo hi",
                  "wc -l src/a.txt", "python3 -c pass", "rm zz", "grep -r a src", "head -1 src/a.txt",
                  "npm run lint -- --fix", "pwd"]
REDIRECTS = ["", " > /dev/null", " 2>/dev/null", " 2>&1", " >/dev/null 2>&1", " &>/dev/null",
             " < src/a.txt", " > out.txt", " >> out.txt", " 2> err.txt", " 1>&2", " | head -1",
             " 2>&1 | head -1", " >/dev/null 2>/dev/null", " 2>>/dev/null", " >&2", " > {R}/out"]
REDIRECT_RULES = perms(allow=["Bash(npm run lint:*)", "Bash(printf:*)", "Bash(echo hi)"], deny=["Bash(rm:*)"])

ENV_PREFIXES = ["NODE_ENV=test", "RUST_LOG=debug", "FOO=1", "LANG=C", "LC_ALL=C", "TZ=UTC", "CI=1",
                "PYTHONUNBUFFERED=1", "GOOS=linux", "NO_COLOR=1", "PATH=/x", "LD_PRELOAD=x.so",
                "NODE_ENV=test FOO=1", "RUST_BACKTRACE=1 RUST_LOG=info", "NODE_OPTIONS=--x", "DEBUG=1",
                "HOME=/tmp", "RUST_LOG=$X", "NODE_ENV=production", "TERM=dumb", "GIT_DIR=/x",
                "LANG=en_US.UTF-8", "COLUMNS=80", "FORCE_COLOR=1 NODE_ENV=test"]
ENV_BASES = ["npm run test", "cargo test", "ls", "git status", "printf a", "rm zz", "python3 -c pass",
             "cat src/a.txt"]
ENV_RULES = perms(allow=["Bash(npm run test:*)", "Bash(cargo test:*)", "Bash(printf:*)"], deny=["Bash(rm:*)"])

CD_TARGETS = ["src", "..", "{R}/extra", "notes", "src/../notes", "{P}/src", "~"]
CD_OPS = ["ls", "git status", "git log --oneline -1", "touch x", "mkdir d", "npm run lint", "printf a",
          "rm zz", "echo hi > f", "cat a.txt", "git commit -m x", "pwd", "git add .", "python3 -c pass"]
CD_JOIN = [" && ", "; ", " && ls && "]
CD_RULES = [perms(allow=["Bash(npm run lint:*)", "Bash(printf:*)", "Bash(git status:*)", "Bash(touch:*)",
                         "Bash(git commit:*)", "Bash(cd:*)"], deny=["Bash(rm:*)"]),
            perms(allow=["Bash(npm run lint:*)"], defaultMode="acceptEdits"),
            perms()]

READONLY = ["ls", "ls -la src", "cat src/a.txt", "head -1 src/a.txt", "tail -1 src/a.txt", "grep a src/a.txt",
            "rg a src", "find . -name a.txt", "find . -delete", "find . -exec rm {} \\;", "git status",
            "git log --oneline -1", "git diff", "git branch", "git branch -D x", "git config --get user.name",
            "git config user.name x", "sort src/a.txt", "sort -o out src/a.txt", "sed -n 1p src/a.txt",
            "sed -i s/a/b/ src/a.txt", "awk '{print $1}' src/a.txt", "wc src/a.txt", "pwd", "echo hi", "date",
            "uname -a", "which ls", "file src/a.txt", "stat src/a.txt", "du -sh src", "df -h", "tree",
            "diff src/a.txt notes/n.txt", "jq . package.json", "xargs echo", "env", "printenv HOME", "ps",
            "cut -c1 src/a.txt", "tr a b", "uniq src/a.txt", "basename /a/b", "dirname /a/b", "realpath src",
            "readlink src", "true", "false", "sleep 0", "test -f x", "[ -f x ]", "npm list", "node --version",
            "python3 --version", "base64 src/a.txt", "sha256sum src/a.txt", "md5sum src/a.txt", "tee out.txt",
            "less src/a.txt", "id", "whoami", "hostname", "cat /etc/hostname", "ls ..", "cat ../x",
            "git show HEAD", "git rev-parse HEAD", "git remote -v", "git tag", "git stash list",
            "git ls-files", "rg --files", "fd a", "column -t src/a.txt", "nl src/a.txt", "od -c src/a.txt",
            "strings src/a.txt", "cmp src/a.txt notes/n.txt", "comm src/a.txt notes/n.txt", "seq 3",
            "expr 1 + 1", "printf %s a", "type ls", "command -v ls", "lsof", "free", "uptime", "man ls",
            "git grep a", "git blame src/a.txt", "rg -l a", "grep -rn a .", "find src -type f",
            "find . -name '*.txt' -newer src/a.txt", "ls -R", "cat -n src/a.txt", "head -c 5 src/a.txt",
            "sort -u src/a.txt", "git log -p", "git diff --stat", "echo $HOME", "ls $HOME", "cat ~/other.txt",
            "echo `date`", "ls && pwd", "cat src/a.txt | grep a", "ls | wc -l", "git status | head -1",
            "npm view x", "pip list", "go version", "cargo --version", "docker ps", "kubectl get pods",
            "curl -s https://example.invalid", "wget -q x", "mv a b", "cp a b", "chmod +x a", "ln -s a b"]

PATHGLOB_RULES = [
    perms(deny=["Read(./*.env)"]),
    perms(deny=["Read(*.env)"]),
    perms(deny=["Read(./src/*.env)"]),
    perms(deny=["Read(**/*.env)"]),
    perms(deny=["Read(./**/*.env)"]),
    perms(allow=["Edit(./*.txt)"]),
    perms(allow=["Edit(*.txt)"], deny=["Edit(./notes/*.txt)"]),
    perms(deny=["Edit(./*.env)"], defaultMode="acceptEdits"),
    perms(deny=["Read(/secrets/**)"]),
    perms(deny=["Read(./secrets)"]),
]
PATHGLOB_FILES = ["{P}/a.env", "{P}/src/b.env", "{P}/src/deep/c.env", "{P}/x.txt", "{P}/src/y.txt",
                  "{P}/src/deep/z.txt", "{P}/notes/n.txt", "{P}/secrets/k", "{P}/envx", "{P}/a.env.bak"]

ADDDIR_ENTRIES = ["../extra", "~/hx", "~/", "{R}/extra", "./src", "~", "{H}/hx", "../extra/", "extra2"]
ADDDIR_CALLS = ["read:{R}/extra/e.txt", "read:{H}/hx/h.txt", "read:{H}/other.txt", "read:{R}/extra2/f.txt",
                "read:{P}/extra2/g.txt", "bash:cat {R}/extra/e.txt", "bash:cat {H}/hx/h.txt",
                "bash:ls {R}/extra", "write:{R}/extra/w.txt", "write:{H}/hx/w.txt", "bash:cat ~/other.txt",
                "read:/etc/hostname"]

MCP_RULES = [["mcp__*"], ["mcp__echo"], ["mcp__echo__*"], ["mcp__echo__echo"], ["mcp__ech*"], ["mcp__other"],
             ["mcp__echo__touch"], []]

EDIT_DENY = ["Edit", "Edit(*)", "Write", "Edit(./src/**)", "MultiEdit", "Edit(**)", "Write(*)", "Edit(/**)"]
EDIT_CALLS = ["write:{P}/w.txt", "write:{P}/src/x.txt", "bash:touch t.txt", "bash:mkdir d",
              "read:{P}/src/a.txt", "write:{P}/.claude/c.txt", "bash:touch src/t2.txt",
              "write:/tmp/docket-gt-outside.txt"]

BYPASS_CALLS = ["bash:python3 -c pass", "write:{P}/w.txt", "bash:rm zz", "read:/etc/hostname",
                "bash:touch .git/x", "write:{P}/.claude/c.txt", "bash:cat /etc/hostname", "bash:git status"]


def call_of(spec):
    kind, _, arg = spec.partition(":")
    if kind == "bash":
        return bash(arg)
    if kind == "read":
        return gt.read(arg)
    return gt.write(arg)


def chunks(items, n):
    return [items[i:i + n] for i in range(0, len(items), n)]


def gen_redirect(rng):
    cmds = sorted({b + r for b in REDIRECT_BASES for r in REDIRECTS})
    pick = rng.sample(cmds, 70)
    return [{"family": "redirect", "scopes": {"project": REDIRECT_RULES}, "calls": [bash(c) for c in ch]}
            for ch in chunks(pick, 10)]


def gen_env(rng):
    cmds = sorted({p + " " + b for p in ENV_PREFIXES for b in ENV_BASES})
    pick = rng.sample(cmds, 70)
    return [{"family": "envprefix", "scopes": {"project": ENV_RULES}, "calls": [bash(c) for c in ch]}
            for ch in chunks(pick, 10)]


def gen_cd(rng):
    cases = []
    for rules in CD_RULES:
        cmds = sorted({"cd " + t + j + o for t in CD_TARGETS for j in CD_JOIN for o in CD_OPS})
        pick = rng.sample(cmds, 30)
        cases += [{"family": "cd", "scopes": {"project": rules}, "calls": [bash(c) for c in ch]}
                  for ch in chunks(pick, 10)]
    return cases


def gen_readonly(rng):
    pick = list(READONLY)
    rng.shuffle(pick)
    return [{"family": "readonly", "scopes": {"project": perms()}, "calls": [bash(c) for c in ch]}
            for ch in chunks(pick, 12)]


def gen_pathglob(rng):
    cases = []
    for rules in PATHGLOB_RULES:
        calls = []
        for f in rng.sample(PATHGLOB_FILES, 6):
            kind = rng.choice(["read", "write", "bash"])
            if kind == "bash":
                calls.append(bash("cat " + f.replace("{P}/", "")))
            else:
                calls.append(call_of(kind + ":" + f))
        cases.append({"family": "pathglob", "scopes": {"project": rules}, "calls": calls})
    return cases


def gen_adddirs(rng):
    cases = []
    for entry in ADDDIR_ENTRIES:
        scope = rng.choice(["project", "user", "local"])
        mode = rng.choice([None, "acceptEdits"])
        p = {"additionalDirectories": [entry]}
        if mode:
            p["defaultMode"] = mode
        calls = [call_of(s) for s in rng.sample(ADDDIR_CALLS, 7)]
        cases.append({"family": "adddirs", "scopes": {scope: {"permissions": p}}, "calls": calls})
    return cases


def gen_mcp(rng):
    cases = []
    for allow in MCP_RULES:
        deny = rng.choice([[], [], ["mcp__echo__touch"]])
        calls = [tool("mcp__echo__echo", text="hi"), tool("mcp__echo__touch", path="mcp-touched"),
                 tool("mcp__echo__echo", text="again")]
        cases.append({"family": "mcp", "mcp": True, "scopes": {"project": perms(allow=allow, deny=deny)},
                      "calls": calls})
    return cases


def gen_editdeny(rng):
    cases = []
    for rule in EDIT_DENY:
        mode = rng.choice(["acceptEdits", "acceptEdits", None])
        p = {"deny": [rule]}
        if mode:
            p["defaultMode"] = mode
        else:
            p["allow"] = ["Edit"]
        calls = [call_of(s) for s in rng.sample(EDIT_CALLS, 6)]
        cases.append({"family": "editdeny", "scopes": {"project": {"permissions": p}}, "calls": calls})
    return cases


def gen_bypass(rng):
    cases = []
    for scope in ("project", "local", "user"):
        for deny in ([], ["Bash(rm:*)"], ["Edit"]):
            p = {"defaultMode": "bypassPermissions", "deny": deny}
            calls = [call_of(s) for s in rng.sample(BYPASS_CALLS, 5)]
            cases.append({"family": "bypass", "scopes": {scope: {"permissions": p}}, "calls": calls})
    return cases


def gen_regress(rng):
    cases = []
    for c in gt.CASES:
        if c["family"] in ("bash", "compound", "wrappers"):
            cases.append({"family": c["family"], "scopes": c["scopes"], "calls": c["calls"]})
    return cases


ACCEPT_CMDS = ["rm zz", "rm -rf d", "rmdir d", "mv x.txt y.txt", "cp x.txt y.txt", "sed -i s/a/b/ src/a.txt",
               "tee out.txt", "ln -s a b", "chmod +x x.txt", "rm ../x", "mv src/y.txt .git/y", "cp x.txt .claude/y",
               "mkdir -p src/new", "touch a b c", "rm {R}/extra/e.txt", "cp x.txt {R}/extra/", "rm -f src/deep/z.txt",
               "mv a.env b.env", "touch ~/t", "rm .git/HEAD", "truncate -s 0 x.txt", "unlink x.txt",
               "mkdir ../up", "touch src/../t.txt"]
ACCEPT_RULES = [perms(defaultMode="acceptEdits"), perms(defaultMode="acceptEdits", deny=["Edit(./src/**)"]),
                perms()]

SANDBOX_CMDS = ["python3 -c pass", "ls", "rm zz", "touch t", "curl -s https://example.invalid", "cat /etc/hostname",
                "npm run lint", "git status"]


def gen_accept(rng):
    cases = []
    for rules in ACCEPT_RULES:
        pick = rng.sample(ACCEPT_CMDS, 12)
        cases += [{"family": "accept", "scopes": {"project": rules}, "calls": [bash(c) for c in ch]}
                  for ch in chunks(pick, 12)]
    return cases


def gen_sandbox(rng):
    # the session's own context: a sandbox only where its settings enable one (this machine has no
    # bubblewrap, so Claude Code cannot start one: what does it decide then?)
    cases = []
    for sb in ({"enabled": True}, {"enabled": True, "autoAllowBashIfSandboxed": False}, {"enabled": False}):
        p = {"permissions": {"deny": ["Bash(rm:*)"]}, "sandbox": sb}
        cases.append({"family": "sandbox", "scopes": {"project": p},
                      "calls": [bash(c) for c in rng.sample(SANDBOX_CMDS, 6)]})
    return cases


DEEP_RULES = [perms(deny=["Read(./*.env)"]), perms(deny=["Edit(./*.txt)"], defaultMode="acceptEdits"),
              perms(allow=["Edit(./*.txt)"])]
DEEP_CALLS = ["read:{P}/a.env", "read:{P}/src/b.env", "read:{P}/src/deep/c.env", "write:{P}/x.txt",
              "write:{P}/src/y.txt", "write:{P}/src/deep/z.txt", "bash:cat src/deep/c.env", "bash:touch src/deep/n.txt"]


def gen_deepglob(rng):
    # `./*.ext` patterns at every depth (issue 33)
    return [{"family": "deepglob", "scopes": {"project": rules}, "calls": [call_of(s) for s in DEEP_CALLS]}
            for rules in DEEP_RULES]


# new families go at the end: the cases of the earlier ones stay the same for a seed
GENERATORS = [gen_redirect, gen_env, gen_cd, gen_readonly, gen_pathglob, gen_adddirs, gen_mcp,
              gen_editdeny, gen_bypass, gen_regress, gen_accept, gen_sandbox, gen_deepglob]


def generate(seed):
    rng = random.Random(seed)
    cases = []
    for g in GENERATORS:
        for i, c in enumerate(g(rng), 1):
            c["id"] = "%s-%d" % (c["family"], i)
            cases.append(c)
    return cases


# ---- running ----

def find_claude(version):
    cache = os.environ.get("DOCKET_REALCLIENT_CACHE", os.path.expanduser("~/.cache/docket-realclient"))
    prefix = os.path.join(cache, "claude-" + version)
    pattern = os.path.join(prefix, "node_modules/@anthropic-ai/claude-code/bin/claude*")
    if not glob.glob(pattern):
        try:
            subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--prefix", prefix,
                            "@anthropic-ai/claude-code@" + version], check=True, timeout=900,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        except (OSError, subprocess.SubprocessError):
            return None
    found = sorted(glob.glob(pattern))
    return found[0] if found else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--version", required=True, help="the Claude Code version (npm) to ask")
    ap.add_argument("--claude", help="the CLI binary (default: installed from npm)")
    ap.add_argument("--seed", type=int, default=33)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out")
    ap.add_argument("--only", help="run only the cases whose id starts with this")
    ap.add_argument("--list", action="store_true", help="print the generated cases, run nothing")
    a = ap.parse_args()
    cases = [c for c in generate(a.seed) if not a.only or c["id"].startswith(a.only)]
    if a.list:
        json.dump(cases, sys.stdout, indent=1)
        return 0
    claude = a.claude or find_claude(a.version)
    if not claude:
        print("the real Claude Code CLI %s is not available: skipped" % a.version)
        return 77
    version = gt.cli_version(claude)
    if version != a.version:
        sys.exit("%s is Claude Code %s, not %s" % (claude, version, a.version))
    with concurrent.futures.ThreadPoolExecutor(max(1, min(a.jobs, 2))) as pool:
        got = list(pool.map(lambda c: gt.run_case(claude, c), cases))
    for case in got:
        for c in case["calls"]:
            print(f"{case['id']:14} {c['outcome']:18} {json.dumps(c['input'])[:70]}  | {c['evidence'][:60]}")
    out = a.out or os.path.join(ROOT, "fixtures", "policy", "claude-diff-%s.json" % version)
    with open(out, "w", encoding="utf-8") as fh:
        json.dump({"claude_code": version, "seed": a.seed,
                   "regenerate": "python3 tests/realclient/claude_diff.py --version %s --seed %d" % (version, a.seed),
                   "cases": got}, fh, indent=1)
        fh.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
