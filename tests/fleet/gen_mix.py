#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# gen_mix.py SEED EVENTS [MONTH]: about EVENTS JSON lines of one machine's
# ledger with a realistic mix, for the fleet scale test (issue 35): sessions
# of 3 to 40 calls over the month MONTH (YYYY-MM, default 2025-01), most
# calls allowed, some asking for approval (approved, for the session,
# denied, expired), a few denied by the policy or unsupported, some asking
# to leave the sandbox (escalations), some failing; outputs mostly short, a
# few of tens of kilobytes. The same SEED gives the same ledger.
import json
import random
import sys

seed, want = int(sys.argv[1]), int(sys.argv[2])
month = sys.argv[3] if len(sys.argv) > 3 else "2025-01"
rng = random.Random(seed)
out = sys.stdout
t = 0.0
n = 0
actors = ["user:%s" % a for a in rng.sample(["ana", "bo", "chen", "dara", "eli", "fay", "gus", "hana"], 3)]
commands = [["git", "status"], ["git", "diff"], ["npm", "test"], ["make", "-j2"], ["ls", "-la"],
            ["git", "push", "--force"], ["npm", "publish"], ["curl", "https://x.example/i.sh"],
            ["rm", "-rf", "build"], ["pytest", "-q"], ["cargo", "build"], ["docker", "compose", "up"]]
tools = ["shell"] * 12 + ["apply_patch"] * 3 + ["read_file"] * 3 + ["network", "mcp"]


def call_args(tool, cwd):
    if tool == "shell":
        return {"command": rng.choice(commands), "cwd": cwd}
    if tool == "apply_patch":
        return {"changes": [{"path": "src/f%d.c" % rng.randint(0, 99), "op": "update"}]}
    if tool == "read_file":
        return {"path": "%s/src/f%d.c" % (cwd, rng.randint(0, 99))}
    if tool == "network":
        return {"url": "https://pkg.example/%d" % rng.randint(0, 99)}
    return {"server": "github", "tool": "create_pr", "arguments": {"title": "fix %d" % rng.randint(0, 999)}}


def ev(obj):
    global t, n
    t += rng.uniform(0.05, 20.0)
    s = int(t)
    obj["time"] = "%s-%02dT%02d:%02d:%02d.%03dZ" % (month, 1 + (s // 86400) % 28, (s // 3600) % 24,
                                                   (s // 60) % 60, s % 60, int((t - s) * 1000))
    out.write(json.dumps(obj, separators=(",", ":")) + "\n")
    n += 1


def output():
    r = rng.random()
    size = rng.randint(0, 200) if r < 0.7 else rng.randint(1000, 2000) if r < 0.97 else rng.randint(16000, 48000)
    return ("line of output %d\n" % rng.randint(0, 9999)) * (size // 20)


policy = {"version": 1, "sandbox": "workspace_write", "approval": "on_request",
          "commands": [{"pattern": ["git", "push"], "decision": "ask"}, {"pattern": ["curl"], "decision": "deny"}]}
ev({"type": "runtime.started", "runtime": "codex/0.77.0"})
k = 0
while n < want:
    s = "s-%d" % k
    k += 1
    ev({"type": "session.opened", "session": s, "runtime": rng.choice(["codex/0.77.0", "claude-code/2.1.80"]),
        "platform": "linux", "cwd": "/home/u/repo%d" % (k % 5), "workspace_roots": ["/home/u/repo%d" % (k % 5)]})
    ev({"type": "policy.revised", "session": s, "revision": 1, "format": "docket", "policy": policy,
        "actor": actors[0], "reason": "initial"})
    for c in range(rng.randint(3, 40)):
        inv = "c%d" % c
        tool = rng.choice(tools)
        args = call_args(tool, "/home/u/repo%d" % (k % 5))
        escalated = tool == "shell" and rng.random() < 0.05
        if escalated:
            args["sandbox_permissions"] = "require_escalated"
            args["justification"] = "needs the network"
        r = rng.random()
        verdict = ("approval_required" if escalated or r < 0.11 else "denied" if r < 0.14 else
                   "unsupported" if r < 0.15 else "allowed")
        ev({"type": "tool.intent", "session": s, "invocation": inv, "tool": tool, "args": args,
            "recovery": "replay_safe", "decision": {"verdict": verdict, "source": "runtime"}})
        answer = None
        if verdict == "approval_required":
            ev({"type": "approval.requested", "session": s, "invocation": inv, "request": "r" + inv,
                "reviewer": "user"})
            answer = rng.choices(["approved", "approved_for_session", "denied", "expired"], [70, 10, 15, 5])[0]
            ev({"type": "approval.settled", "session": s, "invocation": inv, "request": "r" + inv,
                "result": answer, "actor": rng.choice(actors), "reason": "reviewed"})
        if verdict == "allowed" or answer in ("approved", "approved_for_session"):
            ev({"type": "tool.dispatched", "session": s, "invocation": inv})
            failed = rng.random() < 0.08
            ev({"type": "tool.completed", "session": s, "invocation": inv, "status": "error" if failed else "ok",
                "exit_code": 1 if failed else 0, "output": output()})
        else:
            ev({"type": "tool.completed", "session": s, "invocation": inv,
                "status": "unsupported" if verdict == "unsupported" else "denied"})
    ev({"type": "session.closed", "session": s})
