#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""docs/call.schema.json and serve's C check (runtime/call_schema.c) agree.

usage: call_schema_check.py DOCKET_BIN SOURCE_ROOT [N]

N seeded random calls (tool, args) go through `docket serve --stdio` as
tool.intent; each is refused for the schema ("docs/call.schema.json" in the
message) exactly when the JSON Schema validator (python3-jsonschema, an
independent implementation) says it is invalid. Skips (77) without it.
"""
import json
import os
import random
import subprocess
import sys
import tempfile

try:
    import jsonschema
except ImportError:
    sys.exit(77)

TOOLS = ["shell", "apply_patch", "read_file", "write_file", "network", "run_code", "install_packages", "mcp",
         "Bash", "other"]
FIELDS = ["command", "cwd", "timeout_ms", "sandbox_permissions", "justification", "prefix_rule", "changes",
          "path", "url", "host", "port", "protocol", "query", "language", "source", "ecosystem", "packages",
          "server", "tool", "arguments", "op", "to", "extra"]


def value(r, depth=0):
    pool = ["ls", "use_default", "require_escalated", "add", "move", "rename", "", 0, 5, -1, 65535, 70000,
            1.5, True, None, [], ["ls", "-la"], ["a", 1], {}]
    v = r.choice(pool)
    if depth < 2 and r.random() < 0.15:
        return [change(r, depth + 1) for _ in range(r.randint(0, 2))]
    return v


def change(r, depth):
    if r.random() < 0.2:
        return value(r, depth + 1)
    return {k: value(r, depth + 1) for k in r.sample(["path", "op", "to", "extra"], r.randint(0, 3))}


def call(r):
    tool = r.choice(TOOLS)
    c = {"tool": tool}
    roll = r.random()
    if roll < 0.05:
        return c
    if roll < 0.1:
        c["args"] = value(r)
        return c
    c["args"] = {k: value(r) for k in r.sample(FIELDS, r.randint(0, 4))}
    return c


def main():
    docket, root = sys.argv[1], sys.argv[2]
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 2000
    with open(os.path.join(root, "docs", "call.schema.json")) as f:
        validator = jsonschema.Draft202012Validator(json.load(f))
    r = random.Random(28)
    calls = [call(r) for _ in range(n)]
    lines = [{"jsonrpc": "2.0", "id": 0, "method": "runtime.start", "params": {"runtime": "schema"}},
             {"jsonrpc": "2.0", "id": 1, "method": "session.open", "params": {"session": "s"}}]
    for i, c in enumerate(calls):
        p = dict(c, session="s", invocation="c%d" % i)
        lines.append({"jsonrpc": "2.0", "id": i + 2, "method": "tool.intent", "params": p})
    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ, DOCKET_LEDGER=os.path.join(d, "l"))
        subprocess.run([docket, "init"], env=env, check=True, stdout=subprocess.DEVNULL)
        out = subprocess.run([docket, "serve", "--stdio"], env=env, check=True, stdout=subprocess.PIPE,
                             input="".join(json.dumps(l) + "\n" for l in lines).encode()).stdout
    replies = {}
    for line in out.decode().splitlines():
        rep = json.loads(line)
        replies[rep["id"]] = rep
    bad = 0
    for i, c in enumerate(calls):
        rep = replies[i + 2]
        c_refused = "error" in rep and "call.schema.json" in rep["error"]["message"]
        s_refused = not validator.is_valid(c)
        if c_refused != s_refused:
            bad += 1
            if bad <= 10:
                print("disagree: %s: docket %s, JSON Schema %s (%s)" % (
                    json.dumps(c), "refuses" if c_refused else "accepts", "refuses" if s_refused else "accepts",
                    rep.get("error", {}).get("message", "ok")))
    refused = sum(1 for i in range(n) if "error" in replies[i + 2])
    print("%d calls, %d refused, %d disagreements" % (n, refused, bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
