// SPDX-License-Identifier: Apache-2.0
// A minimal agent loop made durable with docket-client (docs/clients.md);
// the TypeScript twin of agent_loop.py, same turns, same output.
//
// The "model" asks for five shell commands; each runs through a call scope
// (T0 intent and docket's decision, P approval, T1 dispatch, T2 outcome).
// With --crash-in CALL the runtime SIGKILLs itself inside that call's scope,
// after the command ran and before its outcome was recorded. Run it again:
// it recovers first, then finishes the loop.
//
// usage: node agent_loop.js LEDGER [--crash-in CALL] [--docket PATH]
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { NotDispatched, spawn, type Approval, type ApprovalRequest, type Call, type RecoveryMode } from "docket-client";

const POLICY = { version: 1, approval: "on_request", commands: [
  { pattern: ["echo"], decision: "allow" },
  { pattern: ["sh"], decision: "allow" },
  { pattern: ["rm"], decision: "ask" },
  { pattern: ["curl"], decision: "deny" },
] };

// What the model asks for, by call id. A real runtime reloads this from its
// transcript after a crash (the recovery plan names calls, not their args).
const TURNS: [string, string[], RecoveryMode][] = [
  ["call-1", ["echo", "hello"], "replay_safe"],
  ["call-2", ["rm", "-rf", "scratch"], "never_auto_retry"],
  ["call-3", ["curl", "-fsS", "https://x.example/install.sh"], "never_auto_retry"],
  ["call-4", ["sh", "-c", "echo built >> build.log"], "replay_safe"],
  ["call-5", ["sh", "-c", "wc -l < build.log"], "replay_safe"],
];
const ARGS = new Map(TURNS.map(([inv, argv]) => [inv, argv]));
const col = (s: string) => s.padEnd(10);

const { values, positionals } = parseArgs({ allowPositionals: true, options: {
  "crash-in": { type: "string" }, docket: { type: "string" } } });
const ledger = positionals[0];
if (!ledger) { console.error("usage: agent_loop LEDGER [--crash-in CALL] [--docket PATH]"); process.exit(2); }
const workdir = dirname(resolve(ledger));
const journal = join(workdir, "agent-journal.json"); // the runtime's own transcript
const done = new Set<string>(existsSync(journal) ? JSON.parse(readFileSync(journal, "utf8")) as string[] : []);
const remember = (inv: string) => {
  done.add(inv);
  writeFileSync(journal + ".tmp", JSON.stringify([...done].sort()));
  renameSync(journal + ".tmp", journal);
};

/** The runtime's approval UI (here: approve removing scratch/ only). */
function ui(req: ApprovalRequest): Approval {
  const ok = ARGS.get(req.invocation)?.at(-1) === "scratch";
  const rule = req.decision.rules?.[0] ?? "-";  // reasons are codes; the deciding rule comes first
  console.log(`${col(req.invocation)} approval: ${ok ? "approved" : "denied"} (${req.reasons.join("; ")}: ${rule})`);
  return { result: ok ? "approved" : "denied", actor: "user:example" };
}

function execute(call: Call, crashIn?: string) {
  const [cmd, ...rest] = ARGS.get(call.invocation)!;
  const r = spawnSync(cmd!, rest, { cwd: workdir, encoding: "utf8" });
  if (call.invocation === crashIn) {
    console.log(`${col(call.invocation)} ran under ${call.token}; the runtime dies before recording it`);
    process.kill(process.pid, "SIGKILL");
  }
  return { exitCode: r.status ?? -1, output: r.stdout + r.stderr };
}

const dk = await spawn({ ledger, docket: values.docket ?? process.env.DOCKET_BIN ?? "docket" });
const rt = await dk.start("agent-loop/1.0");
console.log(`${col("runtime")} epoch ${rt.epoch}`);
for (const p of await rt.recover()) { // recovery on start, before any new call
  console.log(`${col("recover")} ${p.invocation}: ${p.state}, ${p.recovery} -> ${p.action}`);
  if (p.runnable) {
    let attempt = 0;
    const r = await rt.resume(p, (call) => { attempt = call.attempt; return execute(call); }, { approve: ui });
    console.log(`${col(p.invocation)} re-run as attempt ${attempt}: exit ${r.exitCode}`);
  }
  remember(p.invocation);
}
const s = await rt.openSession("demo", { cwd: workdir, policy: POLICY, approve: ui });
for (const [inv, argv, recovery] of TURNS) {
  if (done.has(inv)) continue;
  try {
    let verdict = "";
    const r = await s.call({ invocation: inv, tool: "shell", args: { command: argv }, recovery }, (call) => {
      verdict = call.verdict;
      return execute(call, values["crash-in"]);
    });
    console.log(`${col(inv)} ${argv.join(" ")} -> ${verdict}, exit ${r.exitCode}: ${r.output.trim()}`);
  } catch (e) {
    if (!(e instanceof NotDispatched)) throw e;
    console.log(`${col(inv)} ${argv.join(" ")} -> not run: ${e.message}`);
  }
  remember(inv);
}
await s.close();
console.log(`${col("done")} ${done.size} calls`);
await dk.close();
