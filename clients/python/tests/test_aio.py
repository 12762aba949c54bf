# SPDX-License-Identifier: Apache-2.0
"""The asyncio client against the real `docket serve`."""
import asyncio
import os
import signal
import subprocess
import sys
import unittest

import support
from support import DOCKET, POLICY, Executor, LedgerCase

import docket_client as docket
from docket_client import aio


class AsyncScope(LedgerCase, unittest.IsolatedAsyncioTestCase):
    async def asyncSetUp(self) -> None:
        self.dk = await aio.spawn(self.ledger, docket=DOCKET)
        self.rt = await self.dk.start("test-aio/1.0")
        self.s = await self.rt.open_session("s1", cwd="/tmp", policy=POLICY)

    async def asyncTearDown(self) -> None:
        await self.dk.close()

    async def test_allowed(self):
        async with self.s.call("c1", "shell", {"command": ["echo", "hi"]}, recovery="idempotent") as call:
            self.assertEqual((call.verdict, call.attempt), ("allowed", 1))
            self.assertEqual(len(self.events("c1", "tool.dispatched")), 1)
            call.finish(output="hi\n", exit_code=0)
        out = self.outcome("c1")
        self.assertEqual((out["status"], out["output"]), ("ok", "hi\n"))

    async def test_async_approver_approves(self):
        async def approve(req):
            await asyncio.sleep(0.01)
            return docket.Approval("approved", "user:ana")
        ran = await self.s.run("c2", "shell", {"command": ["rm", "x"]},
                               lambda call: asyncio.sleep(0, result="done"), approve=approve)
        self.assertEqual(ran, "done")
        self.assertEqual(self.events("c2", "approval.settled")[0]["result"], "approved")
        self.assertEqual(self.outcome("c2")["output"], "done")

    async def test_asked_then_denied(self):
        with self.assertRaises(docket.ApprovalRefused) as cm:
            async with self.s.call("c2", "shell", {"command": ["rm", "x"]}, approve=lambda r: False):
                self.fail("the body ran")
        self.assertEqual(cm.exception.settlement, "denied")
        self.assertEqual(self.outcome("c2")["status"], "denied")

    async def test_denied_by_policy(self):
        with self.assertRaises(docket.Denied):
            async with self.s.call("c3", "shell", {"command": ["curl", "x"]}):
                self.fail("the body ran")
        self.assertEqual(self.events("c3", "tool.dispatched"), [])

    async def test_exception_is_the_outcome(self):
        with self.assertRaises(KeyError):
            async with self.s.call("e1", "shell", {"command": ["echo"]}):
                raise KeyError("gone")
        self.assertEqual(self.outcome("e1")["status"], "error")

    async def test_cancelling_the_approval_wait_aborts_it(self):
        waiting = asyncio.Event()

        async def approve(req):
            waiting.set()
            await asyncio.sleep(60)
            return True

        async def agent():
            async with self.s.call("c4", "shell", {"command": ["rm", "y"]}, approve=approve):
                self.fail("the body ran")
        task = asyncio.ensure_future(agent())
        await waiting.wait()
        task.cancel()
        with self.assertRaises(asyncio.CancelledError):
            await task
        self.assertEqual(self.events("c4", "approval.settled")[0]["result"], "aborted")
        self.assertEqual(self.outcome("c4")["status"], "denied")
        self.assertEqual(self.events("c4", "tool.dispatched"), [])
        # the connection is still usable
        async with self.s.call("c5", "shell", {"command": ["echo"]}):
            pass

    async def test_approval_timeout(self):
        with self.assertRaises(docket.ApprovalRefused) as cm:
            async with self.s.call("c6", "shell", {"command": ["rm", "z"]},
                                   approve=lambda r: asyncio.sleep(30, True), approval_timeout=0.2):
                self.fail("the body ran")
        self.assertEqual(cm.exception.settlement, "expired")

    async def test_batch_and_request_timeout(self):
        calls = await self.s.calls([{"invocation": f"b{i}", "tool": "shell", "args": {"command": ["echo"]}}
                                    for i in range(5)])
        self.assertEqual(len(self.events(type_="tool.intent")), 5)
        for c in calls:
            async with c:
                pass
        with self.assertRaises(docket.BadRequest):
            await self.dk.request("tool.complete", {"session": "s1", "invocation": "b0", "status": "ok", "x": 1})
        with self.assertRaises(docket.RequestTimeout):
            await self.dk.request("recover.plan", {}, timeout=0)
        self.assertEqual(await self.rt.recover(), [])


class AsyncRecovery(LedgerCase, unittest.IsolatedAsyncioTestCase):
    async def test_stale_epoch_then_recovery_after_sigkill(self):
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
        async with await aio.connect(sock) as old, await aio.connect(sock) as new:
            zombie = await old.start("crashy/1.0")
            rt = await new.start("crashy/1.0")
            with self.assertRaises(docket.StaleEpoch):
                async with zombie.session("s-crash").call("z1", "shell", {"command": ["echo"]}):
                    self.fail("a fenced runtime ran a call")

            async def reconcile(p):
                await asyncio.sleep(0)
                return None  # the executor cannot tell: parked
            items = await rt.recover(reconcile=reconcile)
            parked = [p for p in items if p.recovery == "reconcile"]
            self.assertEqual([p.next for p in parked], ["wait"])
            for p in items:
                if p.runnable:
                    async with rt.resume(p) as call:
                        call.finish(ex.run(call.invocation, call.token, dedup=p.recovery == "idempotent"))
            with self.assertRaises(docket.DocketError):
                rt.resume(parked[0])  # nothing to run: it stays in doubt
            again = await rt.recover(reconcile=lambda p: docket.Outcome("ok", 0) if p.token in first.values() else None)
            self.assertEqual([(p.invocation, p.action) for p in again], [("call-reconcile", "reconcile")])
            self.assertEqual(await rt.recover(), [])
        tokens = [t for _, t in ex.receipts()]
        self.assertEqual(len(tokens), len(set(tokens)))
        self.assertEqual(len(tokens), 5)  # four first runs + the replay_safe re-run
        self.verify()


if __name__ == "__main__":
    unittest.main()
