# SPDX-License-Identifier: Apache-2.0
"""Test support: the real docket binary (DOCKET_BIN), a socket server on a
fresh ledger, the ledger's events, and a receipt-keeping executor."""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "src"))

DOCKET = os.environ.get("DOCKET_BIN") or shutil.which("docket") or ""

POLICY = {"version": 1, "approval": "on_request", "commands": [
    {"pattern": ["echo"], "decision": "allow"},
    {"pattern": ["true"], "decision": "allow"},
    {"pattern": ["rm"], "decision": "ask"},
    {"pattern": ["curl"], "decision": "deny"},
]}


class LedgerCase(unittest.TestCase):
    """A fresh ledger per test, and optionally a `docket serve --socket`."""

    def setUp(self) -> None:
        if not DOCKET or not os.access(DOCKET, os.X_OK):
            self.skipTest("no docket binary (set DOCKET_BIN)")
        self.dir = tempfile.mkdtemp(prefix="docket-client-")
        self.ledger = os.path.join(self.dir, "ledger")
        self.sock = os.path.join(self.dir, "docket.sock")
        self.server = None
        subprocess.run([DOCKET, "-L", self.ledger, "init"], check=True, stdout=subprocess.DEVNULL)

    def tearDown(self) -> None:
        if self.server is not None:
            self.server.terminate()
            self.server.wait(timeout=10)
        shutil.rmtree(self.dir, ignore_errors=True)

    def serve(self, *extra: str) -> str:
        self.server = subprocess.Popen([DOCKET, "-L", self.ledger, "serve", "--socket", self.sock, *extra])
        for _ in range(1000):  # the socket file appears before listen(): wait for a connection
            with socket.socket(socket.AF_UNIX) as probe:
                try:
                    probe.connect(self.sock)
                    return self.sock
                except OSError:
                    time.sleep(0.01)
        self.fail("docket serve does not accept connections")

    def events(self, invocation=None, type_=None):
        out = subprocess.run([DOCKET, "-L", self.ledger, "log", "--json"], check=True,
                             stdout=subprocess.PIPE, text=True).stdout
        evs = [json.loads(line) for line in out.splitlines() if line.strip()]
        return [e for e in evs if (invocation is None or e.get("invocation") == invocation)
                and (type_ is None or e["type"] == type_)]

    def outcome(self, invocation):
        done = self.events(invocation, "tool.completed")
        self.assertEqual(len(done), 1, f"{invocation}: exactly one outcome, got {done}")
        return done[0]

    def verify(self):
        r = subprocess.run([DOCKET, "-L", self.ledger, "verify"], stdout=subprocess.PIPE, text=True)
        self.assertEqual(r.returncode, 0, r.stdout)


class Executor:
    """Runs 'tools' by appending a fsynced receipt per execution (the
    torture's executor in miniature); dedups on the token when asked."""

    def __init__(self, path):
        self.path = path

    def receipts(self):
        if not os.path.exists(self.path):
            return []
        with open(self.path) as f:
            return [tuple(line.split()) for line in f if line.strip()]

    def run(self, invocation, token, dedup=False):
        if dedup and any(t == token for _, t in self.receipts()):
            return f"{invocation}: already ran under {token}"
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            os.write(fd, f"{invocation} {token}\n".encode())
            os.fsync(fd)
        finally:
            os.close(fd)
        return f"{invocation}: ran under {token}"
