# SPDX-License-Identifier: Apache-2.0
"""The blocking client against the real `docket serve`."""
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import unittest

import support
from support import DOCKET, POLICY, Executor, LedgerCase

import docket_client as docket


class Scope(LedgerCase):
    def setUp(self) -> None:
        super().setUp()
        self.dk = docket.spawn(self.ledger, docket=DOCKET)
        self.rt = self.dk.start("test/1.0")
        self.asked = []

        def approve(req):
            self.asked.append(req)
            return self.answer
        self.answer = True
        self.s = self.rt.open_session("s1", cwd="/tmp", policy=POLICY, approve=approve)

    def tearDown(self) -> None:
        self.dk.close()
        super().tearDown()

    def test_allowed_runs_after_dispatch_and_records_the_outcome(self):
        with self.s.call("c1", "shell", {"command": ["echo", "hi"]}, recovery="replay_safe") as call:
            # T1 is durable before the body: the ledger already has it
            self.assertEqual(len(self.events("c1", "tool.dispatched")), 1)
            self.assertEqual(self.events("c1", "tool.completed"), [])
            self.assertEqual(call.verdict, "allowed")
            self.assertEqual(call.attempt, 1)
            self.assertTrue(call.token.startswith("dt-"))
            call.finish(subprocess.run(["echo", "hi"], capture_output=True, text=True))
        out = self.outcome("c1")
        self.assertEqual((out["status"], out["exit_code"], out["output"]), ("ok", 0, "hi\n"))
        self.assertEqual(self.asked, [])

    def test_run_records_the_return_value(self):
        self.assertEqual(self.s.run("c1", "shell", {"command": ["true"]}, lambda c: 3), 3)
        out = self.outcome("c1")
        self.assertEqual((out["status"], out["exit_code"]), ("error", 3))

    def test_asked_then_approved(self):
        ran = []
        with self.s.call("c2", "shell", {"command": ["rm", "-rf", "build"]}, prompt="Remove build?") as call:
            ran.append(call.token)
        self.assertEqual(len(self.asked), 1)
        self.assertEqual(self.asked[0].invocation, "c2")
        self.assertEqual(self.asked[0].reasons, ["rule"])  # a code; the rule that decided comes first
        self.assertIn("rm", self.asked[0].decision["rules"][0])
        self.assertEqual(len(ran), 1)
        settled = self.events("c2", "approval.settled")
        self.assertEqual([e["result"] for e in settled], ["approved"])
        self.assertEqual(self.events("c2", "approval.requested")[0]["prompt"], "Remove build?")
        self.assertEqual(self.outcome("c2")["status"], "ok")

    def test_asked_then_denied_never_runs_the_body(self):
        self.answer = docket.Approval("denied", "user:ana", "not today")
        with self.assertRaises(docket.ApprovalRefused) as cm:
            with self.s.call("c2", "shell", {"command": ["rm", "x"]}):
                self.fail("the body ran")
        self.assertEqual(cm.exception.settlement, "denied")
        self.assertEqual(self.events("c2", "tool.dispatched"), [])
        self.assertEqual(self.events("c2", "approval.settled")[0]["result"], "denied")
        self.assertEqual(self.outcome("c2")["status"], "denied")

    def test_approver_failure_or_no_approver_denies(self):
        def broken(req):
            raise RuntimeError("UI crashed")
        for inv, timeout in (("c2", 5), ("c2b", None)):
            with self.assertRaises(docket.ApprovalRefused):
                with self.s.call(inv, "shell", {"command": ["rm", "x"]}, approve=broken, approval_timeout=timeout):
                    self.fail("the body ran")
            self.assertEqual(self.events(inv, "approval.settled")[0]["result"], "denied")
            self.assertEqual(self.outcome(inv)["status"], "denied")
        bare = self.rt.session("s1")
        with self.assertRaises(docket.ApprovalRefused) as cm:
            with bare.call("c3", "shell", {"command": ["rm", "y"]}):
                self.fail("the body ran")
        self.assertIsNone(cm.exception.settlement)
        self.assertEqual(self.events("c3", "approval.requested"), [])
        self.assertEqual(self.outcome("c3")["status"], "denied")

    def test_approval_timeout_settles_expired(self):
        gate = threading.Event()
        t0 = time.monotonic()
        with self.assertRaises(docket.ApprovalRefused) as cm:
            with self.s.call("c2", "shell", {"command": ["rm", "x"]},
                             approve=lambda r: gate.wait(30), approval_timeout=0.3):
                self.fail("the body ran")
        gate.set()
        self.assertLess(time.monotonic() - t0, 10)
        self.assertEqual(cm.exception.settlement, "expired")
        self.assertEqual(self.events("c2", "approval.settled")[0]["result"], "expired")
        self.assertEqual(self.events("c2", "tool.dispatched"), [])

    def test_denied_by_policy_raises_before_the_body(self):
        with self.assertRaises(docket.Denied) as cm:
            with self.s.call("c3", "shell", {"command": ["curl", "https://x.example"]}):
                self.fail("the body ran")
        self.assertEqual(cm.exception.verdict, "denied")
        self.assertEqual(cm.exception.reasons, ["rule"])
        self.assertIn("curl", cm.exception.decision["rules"][0])
        self.assertIn("; rule ", self.outcome("c3")["error"])
        self.assertEqual(self.outcome("c3")["status"], "denied")
        self.assertEqual(self.events("c3", "tool.dispatched"), [])

    def test_exceptions_are_outcomes(self):
        with self.assertRaises(ZeroDivisionError):
            with self.s.call("e1", "shell", {"command": ["echo", "1"]}):
                1 / 0
        out = self.outcome("e1")
        self.assertEqual(out["status"], "error")
        self.assertIn("ZeroDivisionError", out["error"])
        with self.assertRaises(subprocess.CalledProcessError):
            with self.s.call("e2", "shell", {"command": ["echo", "2"]}):
                subprocess.run(["sh", "-c", "echo oops; exit 7"], check=True, capture_output=True, text=True)
        out = self.outcome("e2")
        self.assertEqual((out["status"], out["exit_code"], out["output"]), ("error", 7, "oops\n"))
        with self.assertRaises(subprocess.TimeoutExpired):
            with self.s.call("e3", "shell", {"command": ["echo", "3"]}):
                subprocess.run(["sleep", "5"], timeout=0.05)
        self.assertEqual(self.outcome("e3")["status"], "timeout")

    def test_a_dispatched_call_is_never_entered_again(self):
        with self.s.call("c1", "shell", {"command": ["echo", "hi"]}, recovery="replay_safe"):
            pass
        with self.assertRaises(docket.AlreadyDispatched):
            with self.s.call("c1", "shell", {"command": ["echo", "hi"]}, recovery="replay_safe"):
                self.fail("the body ran twice")
        self.assertEqual(len(self.events("c1", "tool.dispatched")), 1)
        self.outcome("c1")

    def test_misuse_of_the_scope(self):
        call = self.s.call("c1", "shell", {"command": ["echo"]})
        with self.assertRaises(docket.DocketError):
            call.finish("too early")
        with call:
            pass
        with self.assertRaises(docket.DocketError):
            with call:
                self.fail("entered twice")

    def test_batch_sends_intents_together(self):
        specs = [{"invocation": f"b{i}", "tool": "shell", "args": {"command": ["echo", str(i)]}}
                 for i in range(3)]
        specs.append({"invocation": "b9", "tool": "shell", "args": {"command": ["curl", "x"]}})
        calls = self.s.calls(specs)
        self.assertEqual(len(self.events(type_="tool.intent")), 4)  # all T0s before any scope
        for c in calls[:3]:
            with c as call:
                call.finish(call.invocation)
        with self.assertRaises(docket.Denied):
            with calls[3]:
                self.fail("the body ran")
        self.assertEqual(self.outcome("b1")["output"], "b1")
        # a refused intent in the batch fails only its own call
        again = self.s.calls([{"invocation": "b0", "tool": "shell", "args": {"command": ["echo", "other"]}},
                              {"invocation": "b5", "tool": "shell", "args": {"command": ["echo", "5"]}}])
        with self.assertRaises(docket.Conflict):
            with again[0]:
                self.fail("the body ran")
        with again[1]:
            pass
        self.outcome("b5")

    def test_record_mode_needs_the_runtimes_decision(self):
        s = self.rt.open_session("s-rec", cwd="/tmp")
        with s.call("r1", "shell", {"command": ["echo"]}, verdict="allowed") as call:
            self.assertEqual(call.verdict, "allowed")
        with self.assertRaises(docket.Undecided):
            with s.call("r2", "shell", {"command": ["echo"]}):
                self.fail("an undecided call ran")
        self.assertEqual(self.events("r2", "tool.dispatched"), [])
        self.assertEqual(self.outcome("r2")["status"], "denied")

    def test_bad_input(self):
        with self.assertRaises(ValueError):
            self.s.call("x1", "shell", {}, recovery="sometimes")
        with self.assertRaises(docket.BadRequest) as cm:
            self.dk.request("tool.intent", {"session": "s1", "invocation": "x2", "tool": "shell",
                                                "args": {"command": ["echo"]}, "bogus": 1})
        self.assertIn("bogus", cm.exception.message)
        self.assertEqual(cm.exception.code, -32602)
        with self.assertRaises(docket.NotFound):
            self.dk.request("no.such.method", {})
        with self.assertRaises(docket.InvalidTransition) as cm:
            self.dk.request("tool.dispatch", {"session": "s1", "invocation": "nope"})
        with self.assertRaises(ValueError):
            with self.s.call("x3", "shell", {"command": ["echo"]}) as call:
                call.finish(status="great")
        self.assertEqual(self.outcome("x3")["status"], "error")  # the ValueError is the outcome
        with self.assertRaises(ValueError):
            with self.s.call("x4", "shell", {"command": ["rm", "x"]}, approve=lambda r: "maybe"):
                self.fail("the body ran")
        # a bad answer denies (the request is not left open) before it is raised
        self.assertEqual(self.events("x4", "approval.settled")[0]["result"], "denied")
        self.assertEqual(self.outcome("x4")["status"], "denied")
        self.verify()


class Fencing(LedgerCase):
    def test_stale_epoch_fences_the_older_runtime(self):
        sock = self.serve()
        with docket.connect(sock) as a, docket.connect(sock) as b:
            ra = a.start("agent/1.0")
            sa = ra.open_session("s1", cwd="/tmp", policy=POLICY)
            rb = b.start("agent/1.0")
            self.assertGreater(rb.epoch, ra.epoch)
            with self.assertRaises(docket.StaleEpoch) as cm:
                with sa.call("c1", "shell", {"command": ["echo", "zombie"]}):
                    self.fail("a fenced runtime ran a call")
            self.assertEqual(cm.exception.kind, "stale_epoch")
            self.assertEqual(self.events("c1"), [])
            with rb.session("s1").call("c1", "shell", {"command": ["echo", "hi"]}):
                pass
            self.outcome("c1")

    def test_busy_server(self):
        sock = self.serve("--max-clients", "1")
        for _ in range(100):  # until serve has seen serve()'s readiness probe go
            a = docket.connect(sock)
            try:
                a.start("agent/1.0")
                break
            except docket.Busy:
                a.close()
                time.sleep(0.02)
        with a:
            with docket.connect(sock) as b:
                with self.assertRaises(docket.Busy) as cm:
                    b.start("agent/1.0")
                self.assertIn("busy", cm.exception.message)


class Crash(LedgerCase):
    def test_sigkill_inside_the_scope_then_recovery_without_double_dispatch(self):
        sock = self.serve()
        receipts = os.path.join(self.dir, "receipts")
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
        child = subprocess.Popen([sys.executable, os.path.join(support.HERE, "crash_runtime.py"), sock, receipts],
                                 stdout=subprocess.PIPE, text=True, env=env)
        self.assertEqual(child.stdout.readline().strip(), "inside")
        child.send_signal(signal.SIGKILL)
        child.wait()
        child.stdout.close()
        ex = Executor(receipts)
        first = dict(ex.receipts())
        self.assertEqual(len(first), 4)

        def reconcile(p):  # what the executor knows about the token
            return {"status": "ok", "exit_code": 0} if p.token in first.values() else None
        with docket.connect(sock) as dk:
            rt = dk.start("crashy/1.0")
            items = {p.invocation: p for p in rt.recover(reconcile=reconcile)}
            self.assertEqual(set(items), set(first))
            self.assertEqual(items["call-never_auto_retry"].next, "none")
            self.assertEqual(items["call-reconcile"].action, "reconcile")
            for p in items.values():
                self.assertTrue(p.applied, p.error)
                if p.runnable:
                    self.assertEqual(p.next, "redispatch")
                    with rt.resume(p) as call:
                        self.assertEqual(call.attempt, 2)
                        call.finish(ex.run(call.invocation, call.token, dedup=p.recovery == "idempotent"))
            self.assertEqual(sorted(p.invocation for p in items.values() if p.runnable),
                             ["call-idempotent", "call-replay_safe"])
            self.assertEqual(rt.recover(), [])  # nothing pending
        runs = ex.receipts()
        tokens = [t for _, t in runs]
        self.assertEqual(len(tokens), len(set(tokens)), "a token ran twice")
        per = {inv: sum(1 for i, _ in runs if i == inv) for inv in first}
        self.assertEqual(per, {"call-replay_safe": 2, "call-idempotent": 1,
                               "call-reconcile": 1, "call-never_auto_retry": 1})
        self.assertEqual(self.outcome("call-never_auto_retry")["status"], "indeterminate")
        self.assertEqual(self.outcome("call-reconcile")["status"], "ok")
        d = self.events("call-idempotent", "tool.dispatched")
        self.assertEqual([e["attempt"] for e in d], [1, 2])
        self.verify()


class FakeServer(unittest.TestCase):
    """Replies docket never sends: the client must not take them as success."""

    def client(self, replies):
        a, b = socket.socketpair()
        self.addCleanup(a.close)

        def serve():
            with b:
                f = b.makefile("rb")
                for reply in replies:
                    if f.readline() and reply is not None:
                        b.sendall(reply)
                time.sleep(0.5)
        threading.Thread(target=serve, daemon=True).start()
        return docket.Client(a.fileno(), a.fileno(), sock=a, timeout=2)

    def test_garbage_reply_is_a_protocol_error(self):
        with self.assertRaises(docket.ProtocolError):
            self.client([b"{nope\n"]).request("runtime.start", {"runtime": "x"})
        with self.assertRaises(docket.ProtocolError):
            self.client([b'{"jsonrpc":"2.0","id":1}\n']).request("runtime.start", {"runtime": "x"})

    def test_unknown_and_new_kinds_are_typed(self):
        c = self.client([b'{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"m1","data":{"kind":"brand_new"}}}\n',
                         b'{"jsonrpc":"2.0","id":2,"error":{"code":-32000,"message":"not yours","data":{"kind":"forbidden"}}}\n'])
        with self.assertRaises(docket.ServerError) as cm:
            c.request("tool.dispatch", {})
        self.assertIs(type(cm.exception), docket.ServerError)
        self.assertEqual((cm.exception.kind, cm.exception.message), ("brand_new", "m1"))
        with self.assertRaises(docket.Forbidden) as cm:
            c.request("tool.dispatch", {})
        self.assertEqual(cm.exception.message, "not yours")

    def test_silence_is_a_timeout_and_eof_a_lost_connection(self):
        c = self.client([None])
        c.timeout = 0.2
        with self.assertRaises(docket.RequestTimeout):
            c.request("runtime.start", {"runtime": "x"})
        with self.assertRaises(docket.ConnectionLost):
            c.request("runtime.start", {"runtime": "x"}, timeout=5)

    def test_spawn_of_a_missing_ledger_without_init(self):
        if not DOCKET:
            self.skipTest("no docket binary")
        c = docket.spawn("/nonexistent/ledger", docket=DOCKET, init=False, stderr=subprocess.DEVNULL)
        with self.assertRaises(docket.ConnectionLost) as cm:
            c.start("x")
        self.assertIn("docket serve", str(cm.exception))
        c.close()


if __name__ == "__main__":
    unittest.main()
