// SPDX-License-Identifier: Apache-2.0
// A runtime that enters four call scopes (one per recovery mode), runs each
// body (a receipt), prints "inside" and waits to be SIGKILLed before any T2.
import { connect, RECOVERY_MODES } from "../src/index.js";
import { Executor, POLICY } from "./support.js";

const [sock, receipts] = process.argv.slice(2) as [string, string];
const ex = new Executor(receipts);
const dk = await connect(sock);
const rt = await dk.start("crashy/1.0");
const s = await rt.openSession("s-crash", { cwd: "/tmp", policy: POLICY });
const enters = await s.calls(RECOVERY_MODES.map((m) => ({
  invocation: `call-${m}`, tool: "shell", args: { command: ["echo", m] }, recovery: m })));
let inside = 0;
await Promise.all(enters.map((enter) => enter(async (call) => {
  ex.run(call.invocation, call.token);
  if (++inside === enters.length) process.stdout.write("inside\n");
  await new Promise((resolve) => setTimeout(resolve, 60_000));
})));
