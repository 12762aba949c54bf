#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`docket export --format otel --endpoint URL` against a local OTLP/HTTP
receiver (python3 http.server in a thread), and the shape of the traces:

  otlp_check.py DOCKET SOURCE_ROOT

- every request is a POST of application/json to the URL's path, and the
  requests are exactly the lines `export -f otel` writes;
- one trace per top-level session: an invoke_agent root span, every
  execute_tool span a child of its session span, a subagent's session span
  in its parent's trace, a child of (and linked to) the parent's Task call;
- a receiver that answers 500 fails the export (exit 3, the status named),
  so does one that is not there; a URL that is not http(s) is a usage error.
"""
import http.server
import json
import os
import subprocess
import sys
import tempfile
import threading

received = []


class Receiver(http.server.BaseHTTPRequestHandler):
    status = 200

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        received.append((self.path, self.headers.get("Content-Type"), body.decode()))
        self.send_response(self.status)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args):
        pass


def serve(status):
    handler = type("R%d" % status, (Receiver,), {"status": status})
    srv = http.server.HTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


SUB = [
    {"type": "session.opened", "session": "main", "runtime": "claude-code/2.1", "platform": "linux",
     "cwd": "/w", "time": "2026-01-01T00:00:00.000Z"},
    {"type": "tool.intent", "session": "main", "invocation": "t1", "tool": "Task",
     "args": {"prompt": "look around"}, "time": "2026-01-01T00:00:01.000Z"},
    {"type": "tool.dispatched", "session": "main", "invocation": "t1", "time": "2026-01-01T00:00:01.100Z"},
    {"type": "session.opened", "session": "main/agent-a1", "parent": "main", "runtime": "claude-code/2.1",
     "platform": "linux", "cwd": "/w", "time": "2026-01-01T00:00:02.000Z"},
    {"type": "tool.intent", "session": "main/agent-a1", "invocation": "r1", "tool": "read_file",
     "args": {"path": "/w/README"}, "time": "2026-01-01T00:00:03.000Z"},
    {"type": "tool.dispatched", "session": "main/agent-a1", "invocation": "r1", "time": "2026-01-01T00:00:03.100Z"},
    {"type": "tool.completed", "session": "main/agent-a1", "invocation": "r1", "status": "ok",
     "time": "2026-01-01T00:00:03.200Z"},
    {"type": "tool.completed", "session": "main", "invocation": "t1", "status": "ok", "time": "2026-01-01T00:00:09.000Z"},
]


def spans_of(lines):
    out = []
    for line in lines:
        for rs in json.loads(line)["resourceSpans"]:
            for ss in rs["scopeSpans"]:
                out.extend(ss["spans"])
    return out


def attr(span, key):
    for a in span["attributes"]:
        if a["key"] == key:
            return a["value"].get("stringValue")
    return None


def main():
    docket, root = os.path.realpath(sys.argv[1]), sys.argv[2]
    with tempfile.TemporaryDirectory() as d:
        led = os.path.join(d, "L")
        subprocess.run([docket, "-L", led, "init"], check=True, capture_output=True)
        for f in ("demo-basic", "audit-risky"):
            subprocess.run([docket, "-L", led, "record", os.path.join(root, "fixtures/sessions/%s.jsonl" % f)],
                           check=True, capture_output=True)
        with open(os.path.join(d, "sub.jsonl"), "w") as f:
            f.write("".join(json.dumps(e) + "\n" for e in SUB))
        subprocess.run([docket, "-L", led, "record", os.path.join(d, "sub.jsonl")], check=True, capture_output=True)
        lines = subprocess.run([docket, "-L", led, "export", "-f", "otel"], check=True,
                               capture_output=True, text=True).stdout.splitlines()

        srv = serve(200)
        url = "http://127.0.0.1:%d/v1/traces" % srv.server_port
        p = subprocess.run([docket, "-L", led, "export", "-f", "otel", "--endpoint", url],
                           capture_output=True, text=True)
        srv.shutdown()
        if p.returncode != 0:
            fail("export to the receiver: exit %d: %s" % (p.returncode, p.stderr))
        if sorted(b for _, _, b in received) != sorted(lines):
            fail("the receiver got %d requests, not the %d lines of the export" % (len(received), len(lines)))
        if any(path != "/v1/traces" or ctype != "application/json" for path, ctype, _ in received):
            fail("a request was not a JSON POST to /v1/traces: %s" % [(a, b) for a, b, _ in received])
        print(p.stdout.strip())

        spans = spans_of(lines)
        by_id = {s["spanId"]: s for s in spans}
        for s in spans:
            if s["name"].startswith("execute_tool"):
                parent = by_id.get(s.get("parentSpanId"))
                if not parent or not parent["name"].startswith("invoke_agent") or parent["traceId"] != s["traceId"]:
                    fail("tool span %s is not a child of its session span" % s["name"])
                if attr(s, "gen_ai.operation.name") != "execute_tool" or not attr(s, "gen_ai.tool.call.id"):
                    fail("tool span %s lacks the GenAI attributes" % s["name"])
        sessions = {attr(s, "gen_ai.conversation.id"): s for s in spans if s["name"].startswith("invoke_agent")}
        if set(sessions) != {"demo-basic", "risky-codex", "careful-claude", "main", "main/agent-a1"}:
            fail("session spans: %s" % sorted(sessions))
        top = [k for k, s in sessions.items() if "parentSpanId" not in s]
        if sorted(top) != ["careful-claude", "demo-basic", "main", "risky-codex"]:
            fail("root spans: %s" % top)
        if len({s["traceId"] for s in sessions.values()}) != 4:
            fail("not one trace per top-level session")
        sub, task = sessions["main/agent-a1"], [s for s in spans if attr(s, "gen_ai.tool.call.id") == "t1"][0]
        if sub["traceId"] != sessions["main"]["traceId"] or sub["parentSpanId"] != task["spanId"]:
            fail("the subagent's session span is not in its parent's trace under the Task call")
        if [l["spanId"] for l in sub["links"]] != [task["spanId"]]:
            fail("the subagent's session span does not link to the Task call")
        print("%d spans: one trace per top-level session, tools under sessions, the subagent under its Task call"
              % len(spans))

        srv = serve(500)
        url = "http://127.0.0.1:%d/v1/traces" % srv.server_port
        p = subprocess.run([docket, "-L", led, "export", "-f", "otel", "--endpoint", url],
                           capture_output=True, text=True)
        srv.shutdown()
        if p.returncode != 3 or "HTTP 500" not in p.stderr:
            fail("a 500 answer: exit %d, %s" % (p.returncode, p.stderr))
        port = srv.server_port
        srv.server_close()
        p = subprocess.run([docket, "-L", led, "export", "-f", "otel", "--endpoint",
                            "http://127.0.0.1:%d/v1/traces" % port], capture_output=True, text=True)
        if p.returncode != 3:
            fail("no receiver: exit %d, %s" % (p.returncode, p.stderr))
        p = subprocess.run([docket, "-L", led, "export", "-f", "otel", "--endpoint", "file:///etc/passwd"],
                           capture_output=True, text=True)
        if p.returncode != 2:
            fail("a file:// endpoint: exit %d, %s" % (p.returncode, p.stderr))
        p = subprocess.run([docket, "-L", led, "export", "-f", "csv", "--endpoint", "http://127.0.0.1:1/"],
                           capture_output=True, text=True)
        if p.returncode != 2:
            fail("--endpoint with csv: exit %d" % p.returncode)
        print("a 500 answer, no receiver: exit 3; file:// and csv: exit 2")


if __name__ == "__main__":
    main()
