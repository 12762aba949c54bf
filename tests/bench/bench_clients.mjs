// SPDX-License-Identifier: Apache-2.0
// bench_clients (TypeScript half): one allowed call through docket-client's
// call scope against the same two requests over raw JSON-RPC, interleaved call
// by call on the same server. Prints the medians per call, the ratio,
// and the CPU time the calling process spent per call on each side.
// usage: node bench_clients.mjs CLIENT_INDEX_JS SOCKET CALLS_PER_ROUND ROUNDS
import { connect as netConnect } from "node:net";
import { pathToFileURL } from "node:url";

const [index, path, nArg, roundsArg] = process.argv.slice(2);
const { connect } = await import(pathToFileURL(index).href);
const n = Number(nArg), rounds = Number(roundsArg);
const POLICY = { version: 1, commands: [{ pattern: ["echo"], decision: "allow" }] };

/** The hand-written client a runtime would otherwise write. */
class Raw {
  constructor(sock) {
    this.sock = sock; this.buf = ""; this.id = 0; this.waiting = new Map();
    sock.setEncoding("utf8");
    sock.on("data", (d) => {
      this.buf += d;
      let nl;
      while ((nl = this.buf.indexOf("\n")) >= 0) {
        const msg = JSON.parse(this.buf.slice(0, nl));
        this.buf = this.buf.slice(nl + 1);
        const w = this.waiting.get(msg.id);
        this.waiting.delete(msg.id);
        if (msg.error) w.reject(new Error(msg.error.message)); else w.resolve(msg.result);
      }
    });
  }
  rpc(method, params) {
    const id = ++this.id;
    this.sock.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n");
    return new Promise((resolve, reject) => this.waiting.set(id, { resolve, reject }));
  }
}

const sock = await new Promise((resolve, reject) => {
  const s = netConnect(path); s.once("connect", () => resolve(s)); s.once("error", reject);
});
const dk = await connect(path);
const rt = await dk.start("bench-ts/1");
const raw = new Raw(sock); // the same runtime on a second connection (a second start would fence the first)
await raw.rpc("runtime.attach", { epoch: rt.epoch });
await raw.rpc("session.open", { session: "raw-ts", runtime: "bench-ts/1", cwd: "/tmp" });
await raw.rpc("policy.set", { session: "raw-ts", format: "docket", policy: POLICY });
const s = await rt.openSession("client-ts", { cwd: "/tmp", policy: POLICY });
const args = { command: ["echo", "hi"] };
const tRaw = [], tClient = [];
const cpu = { r: 0, c: 0 };
async function rawCall(inv) {
  const res = await raw.rpc("tool.intent", { session: "raw-ts", invocation: inv, tool: "shell", args,
                                             recovery: "replay_safe", dispatch_if_allowed: true });
  if (!res.dispatched) throw new Error("not dispatched");
  await raw.rpc("tool.complete", { session: "raw-ts", invocation: inv, status: "ok", exit_code: 0, output: "hi\n" });
}
const clientCall = (inv) => s.call({ invocation: inv, tool: "shell", args, recovery: "replay_safe" }, () => "hi\n");
// one of each per step, alternating which goes first (see bench_clients.py)
for (let i = 0; i < n * rounds; i++) {
  const pair = [[rawCall, tRaw, "r"], [clientCall, tClient, "c"]];
  for (const [fn, out, p] of i % 2 === 0 ? pair : pair.reverse()) {
    const c0 = process.cpuUsage(), t0 = performance.now();
    await fn(`${p}${i}`);
    out.push(performance.now() - t0);
    const c = process.cpuUsage(c0);
    cpu[p] += c.user + c.system;
  }
}
if ((await rt.recover()).length !== 0) throw new Error("calls left pending");
const median = (a) => { const b = [...a].sort((x, y) => x - y); return b[b.length >> 1]; };
const mr = median(tRaw), mc = median(tClient);
console.log(`typescript  raw JSON-RPC ${(mr * 1e3).toFixed(0).padStart(8)} us/call   docket-client ${(mc * 1e3).toFixed(0).padStart(8)} us/call   ` +
  `ratio ${(mc / mr).toFixed(3)} (median of ${n * rounds} calls each, interleaved); ` +
  `client CPU ${(cpu.r / tRaw.length).toFixed(0)} vs ${(cpu.c / tClient.length).toFixed(0)} us/call`);
sock.end();
await dk.close();
