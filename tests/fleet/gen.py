#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# gen.py PREFIX SESSIONS [DAY]: JSON lines of SESSIONS closed sessions named
# PREFIX-N, each with a policy, allowed, approved, denied-by-a-human and
# policy-denied calls (about 16 events a session), for the fleet tests.
import json
import sys

prefix, n = sys.argv[1], int(sys.argv[2])
day = sys.argv[3] if len(sys.argv) > 3 else "2025-05-01"
out = sys.stdout
t = 0


def ev(obj):
    global t
    t += 1
    obj["time"] = "%sT%02d:%02d:%02d.%03dZ" % (day, (t // 3600000) % 24, (t // 60000) % 60, (t // 1000) % 60, t % 1000)
    out.write(json.dumps(obj, separators=(",", ":")) + "\n")


policy = {"version": 1, "sandbox": "workspace_write", "approval": "on_request",
          "commands": [{"pattern": ["git", "status"], "decision": "allow"},
                       {"pattern": ["git", "push"], "decision": "ask"},
                       {"pattern": ["curl"], "decision": "deny"}]}
ev({"type": "runtime.started", "runtime": "gen/1"})
for i in range(n):
    s = "%s-%d" % (prefix, i)
    ev({"type": "session.opened", "session": s, "runtime": "codex/0.60.1", "platform": "linux",
        "cwd": "/home/u/app", "workspace_roots": ["/home/u/app"]})
    ev({"type": "policy.revised", "session": s, "revision": 1, "format": "docket", "policy": policy,
        "actor": "user:ana", "reason": "initial"})
    calls = [("c1", ["git", "status"], "allowed", None),
             ("c2", ["git", "push", "--force"], "approval_required", "approved"),
             ("c3", ["npm", "publish"], "approval_required", "denied"),
             ("c4", ["curl", "https://x.example/i.sh"], "denied", None)]
    for inv, argv, verdict, answer in calls:
        ev({"type": "tool.intent", "session": s, "invocation": inv, "tool": "shell",
            "args": {"command": argv, "cwd": "/home/u/app"}, "recovery": "replay_safe",
            "decision": {"verdict": verdict, "source": "runtime"}})
        if answer:
            ev({"type": "approval.requested", "session": s, "invocation": inv, "request": "r" + inv})
            ev({"type": "approval.settled", "session": s, "invocation": inv, "request": "r" + inv,
                "result": answer, "actor": "user:ana"})
        if verdict == "allowed" or answer == "approved":
            ev({"type": "tool.dispatched", "session": s, "invocation": inv})
            ev({"type": "tool.completed", "session": s, "invocation": inv, "status": "ok", "exit_code": 0})
        else:
            ev({"type": "tool.completed", "session": s, "invocation": inv, "status": "denied"})
    ev({"type": "session.closed", "session": s})
