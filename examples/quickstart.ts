// SPDX-License-Identifier: Apache-2.0
// The ten-line example of docs/clients.md: one durable tool call.
import { execFileSync } from "node:child_process";
import { spawn } from "docket-client";

const policy = { version: 1, commands: [{ pattern: ["echo"], decision: "allow" }] };
const dk = await spawn({ ledger: process.argv[2] });      // or connect("/run/docket.sock")
const rt = await dk.start("my-agent/1.0");                // raises the epoch: older instances are fenced
const s = await rt.openSession("s-1", { cwd: process.cwd(), policy });
const out = await s.call({ invocation: "call-1", tool: "shell", args: { command: ["echo", "hi"] }, recovery: "replay_safe" },
  (call) => execFileSync("echo", ["hi"], { encoding: "utf8", env: { ...process.env, DISPATCH_TOKEN: call.token } }));
console.log(out.trim());
await dk.close();
