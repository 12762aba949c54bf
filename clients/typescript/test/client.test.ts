// SPDX-License-Identifier: Apache-2.0
// The TypeScript client against the real `docket serve`.
import assert from "node:assert/strict";
import { spawn as spawnChild } from "node:child_process";
import { createServer } from "node:net";
import { join, dirname } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import {
  AlreadyDispatched, ApprovalRefused, BadRequest, Busy, Client, Conflict, ConnectionLost, Denied,
  DocketError, Forbidden, InvalidTransition, NotFound, ProtocolError, RequestTimeout, ServerError,
  StaleEpoch, Undecided, connect, spawn, type ApprovalRequest, type Runtime, type Session,
} from "../src/index.js";
import { DOCKET, Executor, Ledger, POLICY } from "./support.js";

const skip = DOCKET ? false : "no docket binary (set DOCKET_BIN)";
const HERE = dirname(fileURLToPath(import.meta.url));

describe("call scope", { skip }, () => {
  let L: Ledger, dk: Client, rt: Runtime, s: Session;
  const asked: ApprovalRequest[] = [];
  before(async () => {
    L = new Ledger();
    dk = await spawn({ ledger: L.path, docket: DOCKET });
    rt = await dk.start("test-ts/1.0");
    s = await rt.openSession("s1", { cwd: "/tmp", policy: POLICY, approve: (req) => { asked.push(req); return true; } });
  });
  after(async () => { await dk.close(); await L.dispose(); });

  test("allowed: the body runs after T1, T2 from the return value", async () => {
    const out = await s.call({ invocation: "c1", tool: "shell", args: { command: ["echo", "hi"] }, recovery: "replay_safe" },
      (call) => {
        assert.equal(L.events("c1", "tool.dispatched").length, 1);
        assert.equal(L.events("c1", "tool.completed").length, 0);
        assert.equal(call.verdict, "allowed");
        assert.equal(call.attempt, 1);
        assert.match(call.token, /^dt-/);
        return { exitCode: 0, output: "hi\n" };
      });
    assert.deepEqual(out, { exitCode: 0, output: "hi\n" });
    const o = L.outcome("c1");
    assert.deepEqual([o.status, o.exit_code, o.output], ["ok", 0, "hi\n"]);
  });

  test("asked then approved", async () => {
    let ran = 0;
    await s.call({ invocation: "c2", tool: "shell", args: { command: ["rm", "-rf", "build"] }, prompt: "Remove build?" },
      () => { ran++; });
    assert.equal(ran, 1);
    assert.equal(asked.at(-1)?.invocation, "c2");
    assert.deepEqual(asked.at(-1)!.reasons, ["rule"]);  // a code; the rule that decided comes first
    assert.match(asked.at(-1)!.decision.rules![0]!, /rm/);
    assert.equal(L.events("c2", "approval.settled")[0]!.result, "approved");
    assert.equal(L.events("c2", "approval.requested")[0]!.prompt, "Remove build?");
    assert.equal(L.outcome("c2").status, "ok");
  });

  test("asked then denied: the body never runs", async () => {
    await assert.rejects(s.call({ invocation: "c3", tool: "shell", args: { command: ["rm", "x"] },
      approve: () => ({ result: "denied", actor: "user:ana", reason: "no" }) }, () => assert.fail("the body ran")),
    (e: unknown) => e instanceof ApprovalRefused && e.settlement === "denied");
    assert.equal(L.events("c3", "tool.dispatched").length, 0);
    assert.equal(L.outcome("c3").status, "denied");
  });

  test("denied by policy", async () => {
    await assert.rejects(s.call({ invocation: "c4", tool: "shell", args: { command: ["curl", "x"] } },
      () => assert.fail("the body ran")),
    (e: unknown) => e instanceof Denied && e.verdict === "denied" && e.reasons[0] === "rule" &&
      /curl/.test(e.decision.rules![0]!));
    assert.equal(L.events("c4", "tool.dispatched").length, 0);
    assert.equal(L.outcome("c4").status, "denied");
  });

  test("exceptions are outcomes, and are rethrown", async () => {
    await assert.rejects(s.call({ invocation: "e1", tool: "shell", args: { command: ["echo"] } },
      () => { throw new RangeError("out of range"); }), RangeError);
    const o = L.outcome("e1");
    assert.equal(o.status, "error");
    assert.match(String(o.error), /RangeError: out of range/);
    await assert.rejects(s.call({ invocation: "e2", tool: "shell", args: { command: ["echo"] } },
      () => { throw Object.assign(new Error("exit 7"), { status: 7 }); }));
    assert.deepEqual([L.outcome("e2").status, L.outcome("e2").exit_code], ["error", 7]);
    await assert.rejects(s.call({ invocation: "e3", tool: "shell", args: { command: ["echo"] } },
      () => { throw new DOMException("took too long", "TimeoutError"); }));
    assert.equal(L.outcome("e3").status, "timeout");
    await assert.rejects(s.call({ invocation: "e4", tool: "shell", args: { command: ["echo"] } },
      () => ({ status: "great" }) as never), TypeError);
    assert.equal(L.outcome("e4").status, "error");
  });

  test("approval: timeout settles expired, an aborted signal settles aborted, no approver denies", async () => {
    await assert.rejects(s.call({ invocation: "a1", tool: "shell", args: { command: ["rm", "a"] },
      approve: (_req, signal) => new Promise((resolve) => signal.addEventListener("abort", () => resolve(true))),
      approvalTimeoutMs: 100 }, () => assert.fail("the body ran")),
    (e: unknown) => e instanceof ApprovalRefused && e.settlement === "expired");
    assert.equal(L.events("a1", "approval.settled")[0]!.result, "expired");

    const ctl = new AbortController();
    const waiting = s.call({ invocation: "a2", tool: "shell", args: { command: ["rm", "b"] }, signal: ctl.signal,
      approve: () => new Promise<boolean>(() => {}) }, () => assert.fail("the body ran"));
    setTimeout(() => ctl.abort(new Error("user closed the dialog")), 50);
    await assert.rejects(waiting, (e: unknown) => e instanceof ApprovalRefused && e.settlement === "aborted");
    assert.equal(L.events("a2", "approval.settled")[0]!.result, "aborted");
    assert.equal(L.outcome("a2").status, "denied");

    await assert.rejects(rt.session("s1").call({ invocation: "a3", tool: "shell", args: { command: ["rm", "c"] } },
      () => assert.fail("the body ran")),
    (e: unknown) => e instanceof ApprovalRefused && e.settlement === undefined);
    assert.equal(L.events("a3", "approval.requested").length, 0);

    await assert.rejects(s.call({ invocation: "a4", tool: "shell", args: { command: ["rm", "d"] },
      approve: () => { throw new Error("UI crashed"); } }, () => assert.fail("the body ran")),
    (e: unknown) => e instanceof ApprovalRefused && e.settlement === "denied");
  });

  test("a dispatched call is never entered again", async () => {
    await s.call({ invocation: "d1", tool: "shell", args: { command: ["echo"] }, recovery: "replay_safe" }, () => 0);
    await assert.rejects(s.call({ invocation: "d1", tool: "shell", args: { command: ["echo"] }, recovery: "replay_safe" },
      () => assert.fail("ran twice")), AlreadyDispatched);
    assert.equal(L.events("d1", "tool.dispatched").length, 1);
  });

  test("batch: intents in one write, a refused one fails alone", async () => {
    const before = L.events(undefined, "tool.intent").length;
    const enters = await s.calls([0, 1, 2].map((i) => ({ invocation: `b${i}`, tool: "shell", args: { command: ["echo", `${i}`] } })));
    assert.equal(L.events(undefined, "tool.intent").length, before + 3);
    await Promise.all(enters.map((enter, i) => enter(() => `out ${i}`)));
    assert.equal(L.outcome("b2").output, "out 2");
    const again = await s.calls([{ invocation: "b0", tool: "shell", args: { command: ["echo", "other"] } },
                                 { invocation: "b5", tool: "shell", args: { command: ["echo", "5"] } }]);
    await assert.rejects(again[0]!(() => assert.fail("the body ran")), Conflict);
    await again[1]!(() => undefined);
    assert.equal(L.outcome("b5").status, "ok");
  });

  test("record mode needs the runtime's decision", async () => {
    const rec = await rt.openSession("s-rec", { cwd: "/tmp" });
    await rec.call({ invocation: "r1", tool: "shell", args: { command: ["echo"] }, verdict: "allowed" }, () => 0);
    await assert.rejects(rec.call({ invocation: "r2", tool: "shell", args: { command: ["echo"] } },
      () => assert.fail("an undecided call ran")), Undecided);
    assert.equal(L.events("r2", "tool.dispatched").length, 0);
    assert.equal(L.outcome("r2").status, "denied");
  });

  test("bad input", async () => {
    await assert.rejects(s.call({ invocation: "x1", tool: "shell", recovery: "sometimes" as never }, () => 0), TypeError);
    await assert.rejects(dk.request("tool.intent", { session: "s1", invocation: "x2", tool: "shell",
      args: { command: ["echo"] }, bogus: 1 }),
    (e: unknown) => e instanceof BadRequest && /bogus/.test(e.serverMessage) && e.code === -32602);
    await assert.rejects(dk.request("no.such.method"), NotFound);
    await assert.rejects(dk.request("tool.dispatch", { session: "s1", invocation: "nope" }), InvalidTransition);
    await assert.rejects(s.call({ invocation: "x4", tool: "shell", args: { command: ["rm", "x"] },
      approve: () => "maybe" as never }, () => assert.fail("the body ran")), TypeError);
    assert.equal(L.events("x4", "tool.dispatched").length, 0);
    assert.equal(L.events("x4", "approval.settled")[0]!.result, "denied");
    assert.equal(L.outcome("x4").status, "denied");
    assert.ok(L.verify());
  });
});

describe("fencing and recovery", { skip }, () => {
  test("stale epoch fences the older runtime", async () => {
    const L = new Ledger();
    try {
      const sock = await L.serve();
      const a = await connect(sock), b = await connect(sock);
      const ra = await a.start("agent/1.0");
      const sa = await ra.openSession("s1", { cwd: "/tmp", policy: POLICY });
      const rb = await b.start("agent/1.0");
      assert.ok(rb.epoch > ra.epoch);
      await assert.rejects(sa.call({ invocation: "c1", tool: "shell", args: { command: ["echo"] } },
        () => assert.fail("a fenced runtime ran a call")), StaleEpoch);
      assert.equal(L.events("c1").length, 0);
      await rb.session("s1").call({ invocation: "c1", tool: "shell", args: { command: ["echo"] } }, () => 0);
      assert.equal(L.outcome("c1").status, "ok");
      await a.close(); await b.close();
    } finally { await L.dispose(); }
  });

  test("busy server", async () => {
    const L = new Ledger();
    try {
      const sock = await L.serve("--max-clients", "1");
      let a = await connect(sock);
      for (let i = 0; i < 100; i++) { // until serve has seen serve()'s readiness probe go
        try { await a.start("agent/1.0"); break; } catch (e) {
          if (!(e instanceof Busy)) throw e;
          await a.close();
          await new Promise((r) => setTimeout(r, 20));
          a = await connect(sock);
        }
      }
      const b = await connect(sock);
      await new Promise((r) => setTimeout(r, 200));
      await assert.rejects(b.start("agent/1.0"), (e: unknown) => e instanceof Busy && /busy/.test(e.serverMessage));
      await a.close(); await b.close();
    } finally { await L.dispose(); }
  });

  test("SIGKILL inside the scope, then recovery by a second runtime: no double dispatch", async () => {
    const L = new Ledger();
    try {
      const sock = await L.serve();
      const receipts = join(L.dir, "receipts");
      const child = spawnChild(process.execPath, [join(HERE, "crash_runtime.js"), sock, receipts],
        { stdio: ["ignore", "pipe", "inherit"] });
      const line = await new Promise<string>((resolve) => child.stdout!.once("data", (d) => resolve(String(d))));
      assert.equal(line.trim(), "inside");
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGKILL");
      await exited;
      const ex = new Executor(receipts);
      const first = new Map(ex.receipts());
      assert.equal(first.size, 4);
      const ran = new Set(first.values());

      const dk = await connect(sock);
      const rt = await dk.start("crashy/1.0");
      const items = await rt.recover({ reconcile: (p) => (ran.has(p.token!) ? { status: "ok", exitCode: 0 } : undefined) });
      assert.deepEqual(items.map((p) => p.invocation).sort(), [...first.keys()].sort());
      for (const p of items) {
        assert.ok(p.applied, p.error);
        if (!p.runnable) continue;
        assert.equal(p.next, "redispatch");
        await rt.resume(p, (call) => {
          assert.equal(call.attempt, 2);
          return ex.run(call.invocation, call.token, p.recovery === "idempotent");
        });
      }
      assert.deepEqual(items.filter((p) => p.runnable).map((p) => p.invocation).sort(), ["call-idempotent", "call-replay_safe"]);
      const none = items.find((p) => p.recovery === "never_auto_retry")!;
      await assert.rejects(rt.resume(none, () => assert.fail("ran")), DocketError);
      assert.deepEqual(await rt.recover(), []);
      await dk.close();

      const runs = ex.receipts();
      const tokens = runs.map(([, t]) => t);
      assert.equal(new Set(tokens).size, tokens.length, "a token ran twice");
      const per = Object.fromEntries([...first.keys()].map((inv) => [inv, runs.filter(([i]) => i === inv).length]));
      assert.deepEqual(per, { "call-replay_safe": 2, "call-idempotent": 1, "call-reconcile": 1, "call-never_auto_retry": 1 });
      assert.equal(L.outcome("call-never_auto_retry").status, "indeterminate");
      assert.equal(L.outcome("call-reconcile").status, "ok");
      assert.deepEqual(L.events("call-idempotent", "tool.dispatched").map((e) => e.attempt), [1, 2]);
      assert.ok(L.verify());
    } finally { await L.dispose(); }
  });
});

describe("replies docket never sends", () => {
  async function fake(replies: (string | null)[]): Promise<{ client: Client; close: () => void }> {
    const server = createServer((conn) => {
      let i = 0;
      conn.on("data", () => { const r = replies[i++]; if (r) conn.write(r); });
    });
    const path = join(new Ledger().dir, "fake.sock");
    await new Promise<void>((r) => server.listen(path, r));
    const client = await connect(path, { timeoutMs: 2000 });
    return { client, close: () => { void client.close(); server.close(); } };
  }

  test("garbage is a protocol error", async () => {
    const f = await fake(["{nope\n"]);
    await assert.rejects(f.client.request("runtime.start", { runtime: "x" }), ProtocolError);
    f.close();
  });

  test("unknown kinds are generic ServerErrors, forbidden is typed", async () => {
    const f = await fake([
      '{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"m1","data":{"kind":"brand_new"}}}\n',
      '{"jsonrpc":"2.0","id":2,"error":{"code":-32000,"message":"not yours","data":{"kind":"forbidden"}}}\n']);
    await assert.rejects(f.client.request("tool.dispatch", {}),
      (e: unknown) => e instanceof ServerError && e.constructor === ServerError && e.kind === "brand_new" && e.serverMessage === "m1");
    await assert.rejects(f.client.request("tool.dispatch", {}),
      (e: unknown) => e instanceof Forbidden && e.serverMessage === "not yours");
    f.close();
  });

  test("silence is a timeout", async () => {
    const f = await fake([null]);
    await assert.rejects(f.client.request("runtime.start", { runtime: "x" }, 100), RequestTimeout);
    f.close();
  });

  test("a child that cannot serve is a lost connection", { skip }, async () => {
    const c = await spawn({ ledger: "/nonexistent/ledger", docket: DOCKET, init: false, stderr: "ignore" });
    await assert.rejects(c.start("x"), ConnectionLost);
    await c.close();
  });
});
