#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Ground truth for docket's Claude Code policy engine, from the real CLI.

    claude_groundtruth.py --out fixtures/policy/claude-groundtruth.json

For each case (settings files in their scopes x tool calls) it lays out a
scratch HOME and project, starts tests/realclient/anthropic_stub.py (a
scripted stand-in for the Anthropic Messages API on loopback) with the
case's tool calls as the model's answers, runs the real Claude Code CLI
headless (`claude -p`, @anthropic-ai/claude-code from npm, in
~/.cache/docket-npm or $CLAUDE_BIN) against it, and records what the CLI
did with each call:

    allowed            its PostToolUse/PostToolUseFailure hook ran
    denied             the tool result says the permission "has been denied"
    approval_required  anything else: headless, a prompt becomes a refusal
                       ("requires approval", "haven't granted it yet" ...)

with the tool result's text as evidence. Paths in the cases are written
with {P} (the project), {H} (HOME) and {R} (the scratch directory holding
both); the fixture keeps them so. All
traffic but the stub's goes to a dead loopback proxy. Exit 77 (skipped)
when the CLI cannot be had.
"""
import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CACHE = os.path.expanduser("~/.cache/docket-npm")


def bash(cmd):
    return {"tool": "Bash", "input": {"command": cmd, "description": "ground truth"}}


def read(path):
    return {"tool": "Read", "input": {"file_path": path}}


def write(path):
    return {"tool": "Write", "input": {"file_path": path, "content": "x\n"}}


def fetch(url):
    return {"tool": "WebFetch", "input": {"url": url, "prompt": "summarise"}}


BASH_RULES = {"allow": ["Bash(echo hello)", "Bash(printf:*)", "Bash(ls *)"],
              "ask": ["Bash(printf x:*)"],
              "deny": ["Bash(rm -rf:*)", "Bash(true *)"]}

CASES = [
    {"id": "bash-rules", "family": "bash", "scopes": {"project": {"permissions": BASH_RULES}},
     "calls": [bash("echo hello"), bash("printf abc"), bash("printf x y"), bash("ls -la"),
               bash("rm -rf zz"), bash("true 1"), bash("python3 -c pass"), bash("rmdir zz")]},
    {"id": "compound", "family": "compound", "scopes": {"project": {"permissions": BASH_RULES}},
     "calls": [bash("echo hello && printf abc"), bash("printf abc && python3 -c pass"),
               bash("printf abc; rm -rf zz"), bash("ls | rm -rf zz"), bash("echo hello || true 1"),
               bash("printf a | python3 -c pass")]},
    {"id": "wrappers", "family": "wrappers",
     "scopes": {"project": {"permissions": {"allow": ["Bash(printf:*)"], "deny": ["Bash(rm:*)"]}}},
     "calls": [bash("timeout 5 printf a"), bash("nohup printf a"), bash("time printf a"),
               bash("env A=1 printf a"), bash("timeout 5 rm x"), bash("nohup rm x"),
               bash("time rm x"), bash("env A=1 rm x"), bash("A=1 rm x")]},
    {"id": "substitution", "family": "compound",
     "scopes": {"project": {"permissions": {"allow": ["Bash(echo:*)"], "deny": ["Bash(rm:*)"]}}},
     "calls": [bash("echo $(rm x)"), bash("echo `rm x`"), bash("echo $(printf a)"), bash("echo a")]},
    {"id": "file-args", "family": "paths",
     "scopes": {"project": {"permissions": {"deny": ["Read(./secrets/**)"]}}},
     "calls": [bash("cat secrets/k"), bash("cat src/a.txt"), bash("cat /etc/hostname"),
               bash("head -1 secrets/k"), bash("ls secrets"), read("{P}/secrets/k"),
               read("{P}/src/a.txt"), read("/etc/hostname")]},
    {"id": "accept-edits", "family": "modes",
     "scopes": {"project": {"permissions": {"defaultMode": "acceptEdits"}}},
     "calls": [bash("touch new.txt"), bash("mkdir -p d1"), bash("touch .git/x"),
               bash("mkdir -p .claude/x"), bash("touch /tmp/docket-gt-outside"), bash("python3 -c pass"),
               write("{P}/w.txt"), write("{P}/.claude/w.txt"), write("{P}/.git/w"),
               write("/tmp/docket-gt-outside.txt")]},
    {"id": "plan", "family": "modes", "scopes": {"user": {"permissions": {"defaultMode": "plan"}}},
     "calls": [bash("python3 -c pass"), bash("ls"), write("{P}/w.txt"), read("{P}/src/a.txt")]},
    {"id": "bypass-project", "family": "modes",
     "scopes": {"project": {"permissions": {"defaultMode": "bypassPermissions"}}},
     "calls": [bash("python3 -c pass"), write("{P}/w.txt")]},
    {"id": "bypass-local", "family": "modes",
     "scopes": {"local": {"permissions": {"defaultMode": "bypassPermissions"}}},
     "calls": [bash("python3 -c pass")]},
    {"id": "bypass-user", "family": "modes",
     "scopes": {"user": {"permissions": {"defaultMode": "bypassPermissions", "deny": ["Bash(rm:*)"]}}},
     "calls": [bash("python3 -c pass"), bash("rm x"), write("{P}/w.txt")]},
    {"id": "manual", "family": "modes", "scopes": {"project": {"permissions": {"defaultMode": "manual"}}},
     "calls": [bash("python3 -c pass"), bash("ls")]},
    {"id": "dont-ask", "family": "modes", "scopes": {"project": {"permissions": {"defaultMode": "dontAsk"}}},
     "calls": [bash("python3 -c pass"), bash("ls"), write("{P}/w.txt")]},
    {"id": "scopes-merge", "family": "precedence",
     "scopes": {"user": {"permissions": {"allow": ["Bash(python3:*)"]}},
                "project": {"permissions": {"deny": ["Bash(python3 -c 1)"]}},
                "local": {"permissions": {"ask": ["Bash(python3 -c 2)"]}}},
     "calls": [bash("python3 -c pass"), bash("python3 -c 1"), bash("python3 -c 2")]},
    {"id": "bash-glob", "family": "bash",
     "scopes": {"project": {"permissions": {"allow": ["Bash(python3 -c * z)", "Bash(python3 -W:*)"]}}},
     "calls": [bash("python3 -c 1 z"), bash("python3 -c 1 2 z"), bash("python3 -c 1 y"),
               bash("python3 -W ignore -c 1"), bash("python3 -Wx -c 1")]},
    {"id": "precedence", "family": "precedence",
     "scopes": {"project": {"permissions": {"allow": ["Bash(python3:*)"], "ask": ["Bash(python3 -c:*)"],
                                            "deny": ["Bash(python3 -c 3)"]}}},
     "calls": [bash("python3 -V"), bash("python3 -c 2"), bash("python3 -c 3")]},
    {"id": "home-and-extra", "family": "paths",
     "scopes": {"project": {"permissions": {"deny": ["Read(~/secret.txt)"],
                                            "additionalDirectories": ["{R}/extra"]}}},
     "calls": [read("{H}/secret.txt"), read("{H}/other.txt"), read("{R}/extra/e.txt"),
               bash("cat {R}/extra/e.txt")]},
    {"id": "web", "family": "web",
     "scopes": {"project": {"permissions": {"allow": ["WebFetch(domain:allowed.invalid)"],
                                            "deny": ["WebFetch(domain:denied.invalid)"]}}},
     "calls": [fetch("https://allowed.invalid/x"), fetch("https://denied.invalid/x"),
               fetch("https://other.invalid/x"), fetch("https://code.claude.com/docs/en/x"),
               fetch("https://docs.python.org/3/"), fetch("https://github.com/anthropics/x"),
               fetch("https://github.com/other/x")]},
    {"id": "tool-names", "family": "paths",
     "scopes": {"project": {"permissions": {"allow": ["Write(./src/**)", "Edit"],
                                            "deny": ["Write(./notes/**)"]}}},
     "calls": [write("{P}/src/new.txt"), write("{P}/notes/n2.txt"), write("{P}/other.txt")]},
    {"id": "bare-write", "family": "paths",
     "scopes": {"project": {"permissions": {"allow": ["Write"], "deny": ["Edit(./notes/**)"]}}},
     "calls": [write("{P}/w.txt"), write("{P}/notes/n2.txt")]},
    {"id": "edit-paths", "family": "paths",
     "scopes": {"project": {"permissions": {"allow": ["Edit(./src/**)"], "deny": ["Edit(./notes/**)"]}}},
     "calls": [write("{P}/src/new.txt"), write("{P}/notes/n2.txt"), write("{P}/other.txt")]},
]

HOOK = "cat >> {log}; echo >> {log}"
# what the CLI says when a rule or the mode denies (anything else that did not run asked)
DENIED = ("has been denied", "denied by your permission settings", "denied access to domain",
          # a deny rule naming a whole tool takes it out of the model's tool list
          "No such tool available")


def find_claude():
    env = os.environ.get("CLAUDE_BIN")
    if env:
        return env
    pattern = os.path.join(CACHE, "node_modules/@anthropic-ai/claude-code/bin/claude*")
    found = sorted(glob.glob(pattern))
    if not found:
        try:
            subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--prefix", CACHE,
                            "@anthropic-ai/claude-code"], check=True, timeout=600,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        except (OSError, subprocess.SubprocessError):
            return None
        found = sorted(glob.glob(pattern))
    return found[0] if found else None


def subst(obj, proj, home):
    """{P} the project, {H} HOME, {R} the scratch root holding both."""
    root = os.path.dirname(proj)
    text = json.dumps(obj).replace("{P}", proj).replace("{H}", home).replace("{R}", root)
    return json.loads(text)


def lay_out(root, case):
    home, proj = os.path.join(root, "home"), os.path.join(root, "proj")
    for d in ("home/.claude", "proj/.claude", "proj/src", "proj/secrets", "proj/notes", "proj/.git"):
        os.makedirs(os.path.join(root, d), exist_ok=True)
    for f, text in (("src/a.txt", "a\n"), ("secrets/k", "k\n"), ("notes/n.txt", "n\n"),
                    (".git/HEAD", "ref: refs/heads/main\n"), ("../home/secret.txt", "s\n"),
                    ("../home/other.txt", "o\n"), ("../extra/e.txt", "e\n"), ("../home/hx/h.txt", "h\n"),
                    ("../extra2/f.txt", "f\n"), ("extra2/g.txt", "g\n"), ("a.env", "A=1\n"),
                    ("src/b.env", "B=1\n"), ("src/deep/c.env", "C=1\n"), ("x.txt", "x\n"), ("src/y.txt", "y\n"),
                    ("src/deep/z.txt", "z\n"), ("envx", "e\n"), ("a.env.bak", "b\n"),
                    ("package.json", '{"name":"gt","scripts":{"lint":"true","test":"true"}}\n')):
        os.makedirs(os.path.dirname(os.path.join(proj, f)), exist_ok=True)
        with open(os.path.join(proj, f), "w") as fh:
            fh.write(text)
    log = os.path.join(root, "hooks.log")
    hook = [{"matcher": "*", "hooks": [{"type": "command", "command": HOOK.format(log=log)}]}]
    case = subst(case, proj, home)
    user = dict(case["scopes"].get("user", {}))
    user["hooks"] = {"PostToolUse": hook, "PostToolUseFailure": hook}
    user["skipWebFetchPreflight"] = True
    files = {os.path.join(home, ".claude/settings.json"): user}
    if "project" in case["scopes"]:
        files[os.path.join(proj, ".claude/settings.json")] = case["scopes"]["project"]
    if "local" in case["scopes"]:
        files[os.path.join(proj, ".claude/settings.local.json")] = case["scopes"]["local"]
    files[os.path.join(home, ".claude.json")] = {
        "hasCompletedOnboarding": True,
        "projects": {proj: {"hasTrustDialogAccepted": True}}}
    for path, obj in files.items():
        with open(path, "w") as fh:
            json.dump(obj, fh)
    return home, proj, log


def run_case(claude, case):
    root = tempfile.mkdtemp(prefix="docket-gt-")
    try:
        home, proj, log = lay_out(root, case)
        script = [{"name": c["tool"], "input": subst(c["input"], proj, home)} for c in case["calls"]]
        script.append("done")
        spath, pfile = os.path.join(root, "script.json"), os.path.join(root, "port")
        with open(spath, "w") as fh:
            json.dump(script, fh)
        stub = subprocess.Popen([sys.executable, os.path.join(HERE, "anthropic_stub.py"), "--script",
                                 spath, "--port-file", pfile, "--idle", "60"])
        try:
            for _ in range(100):
                if os.path.exists(pfile) and open(pfile).read().strip():
                    break
                time.sleep(0.05)
            port = open(pfile).read().strip()
            env = {"PATH": "/usr/bin:/bin", "HOME": home, "ANTHROPIC_API_KEY": "stub",
                   "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{port}",
                   "HTTPS_PROXY": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9",
                   "NO_PROXY": "127.0.0.1,localhost", "DISABLE_TELEMETRY": "1",
                   "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1",
                   # every command starts in the project (a `cd` does not carry over)
                   "CLAUDE_BASH_MAINTAIN_PROJECT_WORKING_DIR": "1",
                   # root may use bypassPermissions only inside a declared sandbox
                   "IS_SANDBOX": "1"}
            args = [claude, "-p", "go", "--output-format", "stream-json", "--verbose"]
            if case.get("mcp"):
                # the echo MCP server of fixtures/mcp (tools echo, fail, touch)
                mcp = os.path.join(root, "mcp.json")
                with open(mcp, "w") as fh:
                    json.dump({"mcpServers": {"echo": {"command": sys.executable, "args": [
                        os.path.join(HERE, "..", "..", "fixtures", "mcp", "echo_server.py")]}}}, fh)
                args += ["--mcp-config", mcp]
            p = subprocess.run(args,
                               cwd=proj, env=env, capture_output=True, text=True, timeout=300)
        finally:
            stub.terminate()
            stub.wait()
        results = {}
        if not p.stdout.strip():
            print(f"{case['id']}: the CLI answered nothing: {p.stderr.strip()[:300]}", file=sys.stderr)
        for line in p.stdout.splitlines():
            try:
                d = json.loads(line)
            except ValueError:
                continue
            if d.get("type") != "user":
                continue
            for c in d["message"].get("content", []):
                if isinstance(c, dict) and c.get("type") == "tool_result":
                    text = c["content"] if isinstance(c["content"], str) else json.dumps(c["content"])
                    results[c["tool_use_id"]] = text
        ran = set()
        if os.path.exists(log):
            for line in open(log):
                line = line.strip()
                if line:
                    ran.add(json.loads(line).get("tool_use_id"))
        calls = []
        for i, c in enumerate(case["calls"], 1):
            tid = f"toolu_stub_{i}_1"
            text = results.get(tid, "")
            if tid in ran:
                outcome = "allowed"
            elif any(m in text for m in DENIED):
                outcome = "denied"
            else:
                outcome = "approval_required"
            # what ran printed its own output (dates, sizes): keep only the refusals' words
            evidence = "ran (its PostToolUse hook fired)" if outcome == "allowed" else \
                text.replace(proj, "{P}").replace(home, "{H}").replace(root, "{R}")[:300]
            calls.append(dict(c, outcome=outcome, evidence=evidence))
        return dict(case, calls=calls)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def cli_version(claude):
    """The version the CLI reports ("2.1.332")."""
    return subprocess.run([claude, "--version"], capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", "HOME": tempfile.gettempdir(),
                               "DISABLE_AUTOUPDATER": "1"}).stdout.split()[0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--only")
    a = ap.parse_args()
    claude = find_claude()
    if not claude:
        print("the real Claude Code CLI (@anthropic-ai/claude-code) is not available: skipped")
        return 77
    version = cli_version(claude)
    out = []
    for case in CASES:
        if a.only and case["id"] != a.only:
            continue
        got = run_case(claude, case)
        for c in got["calls"]:
            print(f"{case['id']:15} {c['outcome']:18} {json.dumps(c['input'])[:70]}  | {c['evidence'][:80]}")
        out.append(got)
    with open(a.out, "w", encoding="utf-8") as fh:
        json.dump({"claude_code": version, "project": "/gt/proj", "home": "/gt/home",
                   "regenerate": "DOCKET_REALCLIENT=1 meson test -C build --suite realclient claude_groundtruth",
                   "cases": out}, fh, indent=1)
        fh.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
