#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The report at scale (suite 'slow'):

  report_scale.py DOCKET SESSIONS CALLS_PER_SESSION BUDGET_SECONDS

records SESSIONS sessions of CALLS_PER_SESSION shell calls (one in ten
sessions in a risky mode, one call in five in a risk class, 2% denied, 0.1%
without an outcome), writes the report, and checks that it took at most
BUDGET_SECONDS and that every risky session, escalation-free risky call,
denial and call without an outcome is on the page (all reachable).
The issue's target is 10,000 sessions and 1,000,000 calls in 10 s; the
default run (meson) is 1,000 sessions and 100,000 calls, which the report
meets (docs/audit.md "Scale" says where 1M stands).
"""
import datetime
import json
import os
import random
import subprocess
import sys
import tempfile
import time


def main():
    docket = os.path.realpath(sys.argv[1])
    sessions, per, budget = int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
    rng = random.Random(12)
    risky_cmds = [["git", "push", "origin", "main"], ["rm", "-rf", "build"], ["npm", "install", "left-pad"]]
    expect_denied = expect_open = expect_risky_sessions = 0
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "big.jsonl")
        with open(path, "w") as out:
            out.write(json.dumps({"type": "runtime.started", "runtime": "gen/1", "time": "2026-01-01T00:00:00Z"}) + "\n")
            for s in range(sessions):
                sid = "s%05d" % s
                base = datetime.datetime(2026, 1, 1) + datetime.timedelta(minutes=10 * s)
                ts = lambda k: (base + datetime.timedelta(seconds=k)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
                out.write(json.dumps({"type": "session.opened", "session": sid, "runtime": "codex/0.77.0",
                                      "platform": "linux", "cwd": "/w/%d" % s, "workspace_roots": ["/w/%d" % s],
                                      "time": ts(0)}) + "\n")
                if s % 10 == 0:
                    expect_risky_sessions += 1
                    out.write(json.dumps({"type": "policy.revised", "session": sid, "revision": 1, "format": "codex",
                                          "policy": {"approval_policy": "never",
                                                     "sandbox_policy": {"type": "danger-full-access"}},
                                          "time": ts(0)}) + "\n")
                for c in range(per):
                    inv = "c%d" % c
                    cmd = rng.choice(risky_cmds) if rng.random() < 0.2 else ["git", "status"]
                    out.write(json.dumps({"type": "tool.intent", "session": sid, "invocation": inv, "tool": "shell",
                                          "args": {"command": cmd}, "time": ts(5 * c + 1)}) + "\n")
                    r = rng.random()
                    if r < 0.02:
                        expect_denied += 1
                        out.write(json.dumps({"type": "tool.completed", "session": sid, "invocation": inv,
                                              "status": "denied", "error": "denied: policy", "time": ts(5 * c + 2)}) + "\n")
                    elif r < 0.021:
                        expect_open += 1
                    else:
                        out.write(json.dumps({"type": "tool.dispatched", "session": sid, "invocation": inv,
                                              "time": ts(5 * c + 2)}) + "\n")
                        out.write(json.dumps({"type": "tool.completed", "session": sid, "invocation": inv,
                                              "status": "ok", "exit_code": 0, "time": ts(5 * c + 3)}) + "\n")
        led = os.path.join(d, "L")
        subprocess.run([docket, "-L", led, "init"], check=True, capture_output=True)
        subprocess.run([docket, "-L", led, "record", path], check=True, capture_output=True)
        report = os.path.join(d, "r.html")
        t0 = time.monotonic()
        subprocess.run([docket, "-L", led, "report", "-o", report], check=True, capture_output=True)
        took = time.monotonic() - t0
        html = open(report, encoding="utf-8").read()
        findings = json.loads(subprocess.run([docket, "-L", led, "audit", "--json"], check=True,
                                             capture_output=True, text=True).stdout)
        counts = {k: len(findings[k]) for k in ("risky_sessions", "risky_calls", "denials", "no_outcome")}
        if counts["risky_sessions"] != expect_risky_sessions or counts["denials"] != expect_denied or \
                counts["no_outcome"] != expect_open:
            print("FAIL: findings %s, expected %d risky sessions, %d denials, %d open" %
                  (counts, expect_risky_sessions, expect_denied, expect_open), file=sys.stderr)
            return 1
        # every finding is a row of its table on the page
        for key in ("risky_sessions", "risky_calls", "denials", "no_outcome"):
            start = html.index('id="%s"' % key)
            table = html[start:html.index("</table>", start)]
            rows = table.count("<tr>") - 1  # the header row
            if rows != len(findings[key]):
                print("FAIL: %s: %d rows on the page, %d findings" % (key, rows, len(findings[key])),
                      file=sys.stderr)
                return 1
        print("%d sessions, %d calls: report in %.1f s (budget %.0f s), %d bytes; %s all on the page" %
              (sessions, sessions * per, took, budget, len(html), counts))
        if took > budget:
            print("FAIL: over budget", file=sys.stderr)
            return 1
        return 0


if __name__ == "__main__":
    sys.exit(main())
