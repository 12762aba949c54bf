// SPDX-License-Identifier: Apache-2.0
// Test support: the real docket binary (DOCKET_BIN), fresh ledgers, a socket
// server, the ledger's events, and a receipt-keeping executor.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { appendFileSync, closeSync, existsSync, fsyncSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { connect as netConnect } from "node:net";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

export const DOCKET = process.env.DOCKET_BIN ?? "";

export const POLICY = {
  version: 1, approval: "on_request", commands: [
    { pattern: ["echo"], decision: "allow" },
    { pattern: ["true"], decision: "allow" },
    { pattern: ["rm"], decision: "ask" },
    { pattern: ["curl"], decision: "deny" },
  ],
};

export type Event = Record<string, unknown> & { type: string; invocation?: string };

export class Ledger {
  readonly dir = mkdtempSync(join(tmpdir(), "docket-client-ts-"));
  readonly path = join(this.dir, "ledger");
  readonly sock = join(this.dir, "docket.sock");
  private server?: ChildProcess;

  constructor() {
    const r = spawnSync(DOCKET, ["-L", this.path, "init"], { stdio: "ignore" });
    if (r.status !== 0) throw new Error("docket init failed");
  }

  async serve(...extra: string[]): Promise<string> {
    this.server = spawn(DOCKET, ["-L", this.path, "serve", "--socket", this.sock, ...extra], { stdio: "inherit" });
    // the socket file appears before listen(): wait until a connection is accepted
    for (let i = 0; i < 1000; i++) {
      const ok = await new Promise<boolean>((resolve) => {
        const probe = netConnect(this.sock);
        probe.once("connect", () => { probe.destroy(); resolve(true); });
        probe.once("error", () => resolve(false));
      });
      if (ok) return this.sock;
      await sleep(10);
    }
    throw new Error("docket serve does not accept connections");
  }

  events(invocation?: string, type?: string): Event[] {
    const r = spawnSync(DOCKET, ["-L", this.path, "log", "--json"], { encoding: "utf8" });
    if (r.status !== 0) throw new Error(`docket log failed: ${r.stderr}`);
    return r.stdout.split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l) as Event)
      .filter((e) => (invocation === undefined || e.invocation === invocation) && (type === undefined || e.type === type));
  }

  /** The one outcome of an invocation (throws unless there is exactly one). */
  outcome(invocation: string): Event {
    const done = this.events(invocation, "tool.completed");
    if (done.length !== 1) throw new Error(`${invocation}: ${done.length} outcomes`);
    return done[0]!;
  }

  verify(): boolean {
    return spawnSync(DOCKET, ["-L", this.path, "verify"], { stdio: "ignore" }).status === 0;
  }

  async dispose(): Promise<void> {
    if (this.server && this.server.exitCode === null) {
      const exited = new Promise((r) => this.server!.once("exit", r));
      this.server.kill("SIGTERM");
      await exited;
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Runs 'tools' by appending a fsynced receipt per execution; dedups on the token when asked. */
export class Executor {
  constructor(readonly path: string) {}
  receipts(): [string, string][] {
    if (!existsSync(this.path)) return [];
    return readFileSync(this.path, "utf8").split("\n").filter((l) => l.trim())
      .map((l) => l.split(" ") as [string, string]);
  }
  run(invocation: string, token: string, dedup = false): string {
    if (dedup && this.receipts().some(([, t]) => t === token)) return `${invocation}: already ran under ${token}`;
    appendFileSync(this.path, `${invocation} ${token}\n`);
    const fd = openSync(this.path, "r+");
    fsyncSync(fd);
    closeSync(fd);
    return `${invocation}: ran under ${token}`;
  }
}
