#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The report at scale (suite 'slow'):

  report_scale.py DOCKET SESSIONS CALLS_PER_SESSION BUDGET_SECONDS [--keep DIR]

records SESSIONS sessions of CALLS_PER_SESSION shell calls (one in ten
sessions in a risky mode, one call in five in a risk class, 2% denied, 0.1%
without an outcome), times `export --format jsonl` of the ledger (the
baseline) and `report` side by side, and checks that the report took at most
BUDGET_SECONDS of CPU time (elapsed time is printed too) and that every risky session, risky call, denial and call
without an outcome is reachable from it: a row of its table on the report or
on a page the table links (each page linking back), the same (session,
invocation) pairs as `docket audit --json` lists, none missing, none twice.
--keep DIR writes the ledger (L), the report (r.html) and its pages
(r.pages/) to DIR (the browser test opens them). meson runs the issue's size: 10,000 sessions, 1,000,000 calls.
"""
import datetime
from html import unescape
import json
import os
import random
import re
import resource
import subprocess
import sys
import tempfile
import time


def main():
    docket = os.path.realpath(sys.argv[1])
    sessions, per, budget = int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
    keep = sys.argv[6] if len(sys.argv) > 6 and sys.argv[5] == "--keep" else None
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
        led = os.path.join(keep or d, "L")
        subprocess.run([docket, "-L", led, "init"], check=True, capture_output=True)
        subprocess.run([docket, "-L", led, "record", path], check=True, capture_output=True)
        os.unlink(path)
        out = keep or d
        report = os.path.join(out, "r.html")
        # the baseline, in the same run: the ledger exported as JSONL
        with open(os.path.join(d, "all.jsonl"), "wb") as sink:
            base, base_cpu = timed([docket, "-L", led, "export", "--format", "jsonl"], stdout=sink)
        os.unlink(os.path.join(d, "all.jsonl"))
        took, cpu = timed([docket, "-L", led, "report", "-o", report], capture_output=True)
        findings = json.loads(subprocess.run([docket, "-L", led, "audit", "--json"], check=True,
                                             capture_output=True, text=True).stdout)
        counts = {k: len(findings[k]) for k in ("risky_sessions", "risky_calls", "denials", "no_outcome")}
        if counts["risky_sessions"] != expect_risky_sessions or counts["denials"] != expect_denied or \
                counts["no_outcome"] != expect_open:
            print("FAIL: findings %s, expected %d risky sessions, %d denials, %d open" %
                  (counts, expect_risky_sessions, expect_denied, expect_open), file=sys.stderr)
            return 1
        html = open(report, encoding="utf-8").read()
        pages = 0
        for key in ("risky_sessions", "risky_calls", "denials", "no_outcome"):
            rows, n = reachable(report, html, key)
            pages += n
            want = [(f["session"], f.get("invocation", f.get("revision"))) for f in findings[key]]
            if key == "risky_sessions":
                rows = [(s, None) for s, _ in rows]
                want = [(s, None) for s, _ in want]
            if sorted(rows) != sorted(want):
                print("FAIL: %s: %d rows reachable from the report, %d findings (missing %s)" %
                      (key, len(rows), len(want), sorted(set(want) - set(rows))[:3]), file=sys.stderr)
                return 1
        print("%d sessions, %d calls: report %.2f s CPU (%.2f s elapsed), JSONL export (the baseline) %.2f s "
              "CPU (%.2f s elapsed): ratio %.2f CPU, %.2f elapsed; budget %.0f s CPU; %d bytes + %d linked "
              "pages; %s all reachable" % (sessions, sessions * per, cpu, took, base_cpu, base, cpu / base_cpu,
                                           took / base, budget, len(html), pages, counts))
        if cpu > budget:
            print("FAIL: over budget", file=sys.stderr)
            return 1
        return 0


def timed(args, **kw):
    """Elapsed and CPU (user + system, of docket and its children) seconds.
    The budget is checked against CPU time: on a machine shared by many
    jobs the elapsed time says more about the others than about docket."""
    r0, t0 = resource.getrusage(resource.RUSAGE_CHILDREN), time.monotonic()
    subprocess.run(args, check=True, **kw)
    r1, t1 = resource.getrusage(resource.RUSAGE_CHILDREN), time.monotonic()
    return t1 - t0, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


ROW = re.compile(r'<tr><td class="t">[^<]*</td><td class="call">([^<]*)</td><td><span class="call">.*?'
                 r'<small>[^<]*? &middot; ([^<]*)</small>')
MODE_ROW = re.compile(r'<tr><td class="call">([^<]*)</td>')
LINK = re.compile(r'<a href="([^"]+)">')


def table_rows(text, key):
    """(session, invocation) of each row of the first table in text."""
    table = text[text.index("<table>"):text.index("</table>")]
    if key == "risky_sessions":
        return [(m.group(1), None) for m in MODE_ROW.finditer(table)]
    return [(unescape(m.group(1)), unescape(m.group(2))) for m in ROW.finditer(table)]


def reachable(report, html, key):
    """The rows of list `key` on the report and on the pages it links."""
    start = html.index('id="%s"' % key)
    section = html[start:html.index("</div>", start)]
    if "<table>" not in section:
        return [], 0
    rows = table_rows(section, key)
    links = LINK.findall(section)
    for href in links:
        with open(os.path.join(os.path.dirname(report), unescape(href)), encoding="utf-8") as f:
            page = f.read()
        back = LINK.findall(page)
        if not back or not os.path.exists(os.path.join(os.path.dirname(report), os.path.dirname(href), back[0])):
            raise SystemExit("FAIL: page %s does not link back to the report" % href)
        rows += table_rows(page, key)
    return rows, len(links)


if __name__ == "__main__":
    sys.exit(main())
