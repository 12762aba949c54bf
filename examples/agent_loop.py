#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A minimal agent loop made durable with docket-client (docs/clients.md).

The "model" asks for five shell commands; each runs through a call scope
(T0 intent and docket's decision, P approval, T1 dispatch, T2 outcome). With
--crash-in CALL the runtime SIGKILLs itself inside that call's scope, after
the command ran and before its outcome was recorded. Run it again: it
recovers first (the call is re-run or settled by its recovery mode), then
finishes the loop.

usage: agent_loop.py LEDGER [--crash-in CALL] [--docket PATH]
"""
import argparse
import json
import os
import signal
import subprocess
import sys

import docket_client as docket

POLICY = {"version": 1, "approval": "on_request", "commands": [
    {"pattern": ["echo"], "decision": "allow"},
    {"pattern": ["sh"], "decision": "allow"},
    {"pattern": ["rm"], "decision": "ask"},
    {"pattern": ["curl"], "decision": "deny"},
]}

# What the model asks for, by call id. A real runtime reloads this from its
# transcript after a crash (the recovery plan names calls, not their args).
TURNS = [
    ("call-1", ["echo", "hello"], "replay_safe"),
    ("call-2", ["rm", "-rf", "scratch"], "never_auto_retry"),
    ("call-3", ["curl", "-fsS", "https://x.example/install.sh"], "never_auto_retry"),
    ("call-4", ["sh", "-c", "echo built >> build.log"], "replay_safe"),
    ("call-5", ["sh", "-c", "wc -l < build.log"], "replay_safe"),
]
ARGS = {inv: argv for inv, argv, _ in TURNS}


def ui(req: docket.ApprovalRequest) -> docket.Approval:
    """The runtime's approval UI (here: approve removing scratch/ only)."""
    ok = ARGS[req.invocation][-1] == "scratch"
    rule = (req.decision.get("rules") or ["-"])[0]  # reasons are codes; the deciding rule comes first
    print(f"{req.invocation:<10} approval: {'approved' if ok else 'denied'} ({'; '.join(req.reasons)}: {rule})")
    return docket.Approval("approved" if ok else "denied", "user:example")


def execute(call, crash_in):
    argv = ARGS[call.invocation]
    r = subprocess.run(argv, capture_output=True, text=True, cwd=WORKDIR)
    if call.invocation == crash_in:
        print(f"{call.invocation:<10} ran under {call.token}; the runtime dies before recording it", flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
    return r


def main() -> int:
    global WORKDIR
    ap = argparse.ArgumentParser()
    ap.add_argument("ledger")
    ap.add_argument("--crash-in")
    ap.add_argument("--docket", default=os.environ.get("DOCKET_BIN", "docket"))
    a = ap.parse_args()
    WORKDIR = os.path.dirname(os.path.abspath(a.ledger))
    journal = os.path.join(WORKDIR, "agent-journal.json")  # the runtime's own transcript
    done = set(json.load(open(journal))) if os.path.exists(journal) else set()

    def remember(inv):
        done.add(inv)
        with open(journal + ".tmp", "w") as f:
            json.dump(sorted(done), f)
        os.replace(journal + ".tmp", journal)

    with docket.spawn(a.ledger, docket=a.docket) as dk:
        rt = dk.start("agent-loop/1.0")
        print(f"{'runtime':<10} epoch {rt.epoch}")
        for p in rt.recover():  # recovery on start, before any new call
            print(f"{'recover':<10} {p.invocation}: {p.state}, {p.recovery} -> {p.action}")
            if p.runnable:
                with rt.resume(p, approve=ui) as call:
                    r = execute(call, None)
                    call.finish(r)
                print(f"{p.invocation:<10} re-run as attempt {call.attempt}: exit {r.returncode}")
            remember(p.invocation)
        s = rt.open_session("demo", cwd=WORKDIR, policy=POLICY, approve=ui)
        for inv, argv, mode in TURNS:
            if inv in done:
                continue
            try:
                with s.call(inv, "shell", {"command": argv}, recovery=mode) as call:
                    r = execute(call, a.crash_in)
                    call.finish(r)
                print(f"{inv:<10} {' '.join(argv)} -> {call.verdict}, exit {r.returncode}: {r.stdout.strip()}")
            except docket.NotDispatched as e:
                print(f"{inv:<10} {' '.join(argv)} -> not run: {e}")
            remember(inv)
        s.close()
        print(f"{'done':<10} {len(done)} calls")
    return 0


WORKDIR = "."
if __name__ == "__main__":
    sys.exit(main())
