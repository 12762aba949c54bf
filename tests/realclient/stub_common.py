# SPDX-License-Identifier: Apache-2.0
"""What the scripted model stand-ins (anthropic_stub.py, openai_stub.py) share:
the script (a JSON list, one element per request that offers tools, the last
text repeated when it runs out), the request log, the port file and the idle
watchdog. Loopback only.

    python3 STUB.py --script SCRIPT.json --port-file PORTFILE [--log REQUESTS.jsonl] [--idle SECONDS]

The port is written to PORTFILE (atomically) once the server listens; the
server stops by itself after --idle seconds (default 300) without a request.
"""
import argparse
import json
import os
import sys
import threading
import time
from http.server import ThreadingHTTPServer


class ScriptServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, handler, steps, log_path):
        super().__init__(("127.0.0.1", 0), handler)
        self.steps, self.pos, self.lock = list(steps), 0, threading.Lock()
        finals = [s for s in self.steps if isinstance(s, str)]
        self.fallback = finals[-1] if finals else "ok"
        self.log_path, self.last = log_path, time.monotonic()

    def touch(self):
        self.last = time.monotonic()

    def next_step(self):
        """(step number, element) or (0, final text) when the script is used up."""
        with self.lock:
            if self.pos >= len(self.steps):
                return 0, self.fallback
            self.pos += 1
            return self.pos, self.steps[self.pos - 1]

    def log_body(self, path, body):
        if self.log_path:
            with self.lock, open(self.log_path, "a") as f:
                f.write(json.dumps({"path": path, "body": body}) + "\n")


def main(doc, handler):
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--script", required=True)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--log")
    ap.add_argument("--idle", type=float, default=300.0)
    a = ap.parse_args()
    with open(a.script) as f:
        steps = json.load(f)
    if not isinstance(steps, list):
        sys.exit("%s: the script must be a JSON list" % os.path.basename(sys.argv[0]))
    srv = ScriptServer(handler, steps, a.log)
    with open(a.port_file + ".tmp", "w") as f:
        f.write(str(srv.server_address[1]))
    os.replace(a.port_file + ".tmp", a.port_file)

    def watchdog():
        while time.monotonic() - srv.last < a.idle:
            time.sleep(0.5)
        srv.shutdown()
    threading.Thread(target=watchdog, daemon=True).start()
    srv.serve_forever()
