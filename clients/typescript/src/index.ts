// SPDX-License-Identifier: Apache-2.0
// docket-client: make an agent runtime durable with `docket serve`.
//
//   const dk = await spawn({ ledger: "./ledger" });
//   const rt = await dk.start("my-agent/1.0");
//   const s = await rt.openSession("s-1", { cwd: process.cwd(), policy, approve: askUser });
//   const out = await s.call({ invocation: "call-1", tool: "shell", args: { command: ["ls"] },
//                              recovery: "replay_safe" }, (call) => run(call.token));
//
// A call goes through T0 (tool.intent, with T1 when allowed), P (approval
// request, the runtime UI's answer, settlement, then T1 after docket's
// revalidation) and T2 (tool.complete from the body's return value or
// exception). The body runs only after T1 is durable.
import { spawn as spawnChild, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { connect as netConnect, type Socket } from "node:net";
import { randomBytes } from "node:crypto";
import type { Readable, Writable } from "node:stream";
import {
  AlreadyDispatched, ApprovalRefused, ConnectionLost, Denied, DocketError, NotDispatched,
  ProtocolError, RequestTimeout, ServerError, Undecided, Unsupported, serverError,
  type Decision,
} from "./errors.js";

export * from "./errors.js";

export const RECOVERY_MODES = ["replay_safe", "idempotent", "reconcile", "never_auto_retry"] as const;
export const STATUSES = ["ok", "error", "timeout", "cancelled", "denied", "unsupported", "indeterminate"] as const;
export const SETTLEMENTS = ["approved", "approved_for_session", "denied", "aborted", "expired", "closed"] as const;
export type RecoveryMode = (typeof RECOVERY_MODES)[number];
export type Status = (typeof STATUSES)[number];
export type Settlement = (typeof SETTLEMENTS)[number];
const GRANTS: readonly string[] = ["approved", "approved_for_session"];
const OUTPUT_LIMIT = 64 * 1024;

/** A call's T2. */
export interface Outcome {
  status?: Status;
  exitCode?: number;
  output?: string;
  error?: string;
  durationMs?: number;
}
/** The runtime UI's answer to an approval request. */
export interface Approval {
  result: Settlement;
  actor?: string;
  reason?: string;
}
export interface ApprovalRequest {
  session: string;
  invocation: string;
  request: string;
  tool: string;
  args: unknown;
  decision: Decision;
  reasons: string[];
}
/** Settles an approval wait. `signal` aborts when the wait is cancelled or times out. */
export type Approver = (req: ApprovalRequest, signal: AbortSignal) =>
  boolean | Settlement | Approval | Promise<boolean | Settlement | Approval>;

type Json = Record<string, unknown>;
type Pending_ = { resolve: (m: Json) => void; reject: (e: Error) => void };

/** One connection to `docket serve` (a socket, or a child on stdio). */
export class Client {
  timeoutMs: number;
  private nextId = 1;
  private buf = "";
  private waiting = new Map<number, Pending_>();
  private failure?: Error;

  constructor(private readonly input: Readable, private readonly output: Writable,
              private readonly child?: ChildProcess, timeoutMs = 30_000) {
    this.timeoutMs = timeoutMs;
    input.setEncoding("utf8");
    input.on("data", (chunk: string) => this.onData(chunk));
    const lost = (why: string) => this.fail(new ConnectionLost(why));
    input.on("end", () => lost("docket serve closed the connection"));
    input.on("error", (e: Error) => lost(`connection failed: ${e.message}`));
    output.on("error", (e: Error) => lost(`write to docket serve failed: ${e.message}`));
    child?.on("exit", (code, sig) => lost(`docket serve exited (${sig ?? `status ${code}`})`));
  }

  private onData(chunk: string): void {
    this.buf += chunk;
    let nl: number;
    while ((nl = this.buf.indexOf("\n")) >= 0) {
      const line = this.buf.slice(0, nl);
      this.buf = this.buf.slice(nl + 1);
      let msg: Json;
      try {
        msg = JSON.parse(line) as Json;
      } catch (e) {
        this.fail(new ProtocolError(`reply is not JSON: ${line.slice(0, 200)}`));
        return;
      }
      if (typeof msg !== "object" || msg === null || msg.jsonrpc !== "2.0" || ("result" in msg) === ("error" in msg)) {
        this.fail(new ProtocolError(`not a JSON-RPC 2.0 reply: ${line.slice(0, 200)}`));
        return;
      }
      let id = msg.id;
      if (id === null && "error" in msg) {
        if (!this.waiting.size) {
          // said before any request (busy, then closed): the next request gets it
          this.failure ??= serverError(msg.error);
          continue;
        }
        id = Math.min(...this.waiting.keys());
      }
      const w = typeof id === "number" ? this.waiting.get(id) : undefined;
      if (w) {
        this.waiting.delete(id as number);
        w.resolve(msg);
      }
    }
  }

  private fail(e: Error): void {
    this.failure ??= e;
    for (const w of this.waiting.values()) w.reject(e);
    this.waiting.clear();
  }

  private send(calls: [string, Json | undefined][], timeoutMs: number): Promise<Json>[] {
    if (this.failure) throw this.failure;
    const lines: string[] = [];
    const replies = calls.map(([method, params]) => {
      const id = this.nextId++;
      lines.push(JSON.stringify(params === undefined ? { jsonrpc: "2.0", id, method } :
        { jsonrpc: "2.0", id, method, params }) + "\n");
      return new Promise<Json>((resolve, reject) => {
        // a request that timed out is forgotten: its late reply is dropped
        const timer = Number.isFinite(timeoutMs) ? setTimeout(() => {
          this.waiting.delete(id);
          reject(new RequestTimeout(`no reply from docket serve in ${timeoutMs} ms; re-sending is safe`));
        }, timeoutMs) : undefined;
        const done = () => { clearTimeout(timer); this.waiting.delete(id); };
        this.waiting.set(id, { resolve: (m) => { done(); resolve(m); }, reject: (e) => { done(); reject(e); } });
      });
    });
    this.output.write(lines.join(""));
    return replies;
  }

  /** One JSON-RPC request: the result, or a typed ServerError. */
  async request<T = Json>(method: string, params?: Json, timeoutMs = this.timeoutMs): Promise<T> {
    const [reply] = this.send([[method, params]], timeoutMs);
    return resultOf(await reply!, method) as T;
  }

  /** Several requests in one write: serve commits requests that arrive
   * together in one transaction (one fsync), each atomic and isolated.
   * Each result, or its ServerError, in order. */
  async requestMany(calls: [string, Json | undefined][], timeoutMs = this.timeoutMs): Promise<(Json | ServerError)[]> {
    const msgs = await Promise.all(this.send(calls, timeoutMs));
    return msgs.map((m, i) => {
      try {
        return resultOf(m, calls[i]![0]) as Json;
      } catch (e) {
        if (e instanceof ServerError) return e;
        throw e;
      }
    });
  }

  /** runtime.start: raise the epoch; this connection now carries it. */
  async start(runtime: string): Promise<Runtime> {
    const r = await this.request<{ epoch: number }>("runtime.start", { runtime });
    return new Runtime(this, runtime, r.epoch);
  }

  async close(): Promise<void> {
    this.fail(new ConnectionLost("the connection is closed"));
    this.output.end();
    const child = this.child;
    if (child && child.exitCode === null && child.signalCode === null) {
      await new Promise<void>((resolve) => {
        const t = setTimeout(() => child.kill("SIGKILL"), 10_000);
        child.once("exit", () => { clearTimeout(t); resolve(); });
      });
    } else {
      (this.input as Socket).destroy?.();
    }
  }
}

function resultOf(msg: Json, method: string): unknown {
  if ("error" in msg) throw serverError(msg.error, method);
  return msg.result;
}

export interface ConnectOptions { timeoutMs?: number }

/** Connect to `docket serve --socket PATH`. */
export function connect(path: string, opts: ConnectOptions = {}): Promise<Client> {
  return new Promise((resolve, reject) => {
    const sock = netConnect(path);
    sock.once("connect", () => resolve(new Client(sock, sock, undefined, opts.timeoutMs)));
    sock.once("error", (e) => reject(new ConnectionLost(`cannot connect to ${path}: ${e.message}`)));
  });
}

export interface SpawnOptions extends ConnectOptions {
  ledger?: string;
  docket?: string;
  args?: string[];
  /** Create the ledger first when it does not exist (default true). */
  init?: boolean;
  /** Where the child's log goes (default "inherit"). */
  stderr?: "inherit" | "ignore";
}

/** Start `docket [-L LEDGER] serve --stdio` as a child; it ends with close(). */
export async function spawn(opts: SpawnOptions = {}): Promise<Client> {
  const docket = opts.docket ?? "docket";
  const lf = opts.ledger !== undefined ? ["-L", opts.ledger] : [];
  if (opts.ledger !== undefined && (opts.init ?? true) && !existsSync(opts.ledger)) {
    const r = spawnSync(docket, [...lf, "init"], { stdio: ["ignore", "ignore", "inherit"] });
    if (r.status !== 0) throw new DocketError(`${docket} init failed (${r.error?.message ?? `status ${r.status}`})`);
  }
  const child = spawnChild(docket, [...lf, "serve", "--stdio", ...(opts.args ?? [])],
    { stdio: ["pipe", "pipe", opts.stderr ?? "inherit"] });
  await new Promise<void>((resolve, reject) => {
    child.once("spawn", resolve);
    child.once("error", (e) => reject(new ConnectionLost(`cannot start ${docket}: ${e.message}`)));
  });
  return new Client(child.stdout!, child.stdin!, child, opts.timeoutMs);
}

/** T2 from a body's return value: an Outcome, undefined (ok), a string
 * (output), a number (exit code) or a boolean. */
export function outcomeOf(value: unknown): Outcome {
  if (value === undefined || value === null) return { status: "ok" };
  if (typeof value === "string") return { status: "ok", exitCode: 0, output: clip(value) };
  if (typeof value === "number") return { status: value === 0 ? "ok" : "error", exitCode: value };
  if (typeof value === "boolean") return { status: value ? "ok" : "error", exitCode: value ? 0 : 1 };
  if (typeof value === "object") {
    const o = value as Outcome;
    const unknown = Object.keys(o).filter((k) => !["status", "exitCode", "output", "error", "durationMs"].includes(k));
    if (unknown.length) throw new TypeError(`outcome has unknown fields: ${unknown.join(", ")}`);
    return { status: o.status ?? "ok", ...o, output: o.output === undefined ? undefined : clip(o.output) };
  }
  return { status: "ok", output: clip(String(value)) };
}

/** T2 from the exception that left the body. */
export function outcomeOfError(e: unknown): Outcome {
  const err = e instanceof Error ? e : new Error(String(e));
  const msg = clip(`${err.name}: ${err.message}`);
  if (err.name === "AbortError") return { status: "cancelled", error: msg };
  if (err.name === "TimeoutError" || err instanceof RequestTimeout) return { status: "timeout", error: msg };
  const code = (err as { status?: unknown; exitCode?: unknown }).status ?? (err as { exitCode?: unknown }).exitCode;
  return { status: "error", error: msg, exitCode: typeof code === "number" ? code : undefined };
}

function clip(s: string): string {
  const b = Buffer.from(s, "utf8");
  return b.length <= OUTPUT_LIMIT ? s : b.subarray(0, OUTPUT_LIMIT).toString("utf8") + "\n[truncated]";
}

function outcomeParams(o: Outcome): Json {
  const status = o.status ?? "ok";
  if (!(STATUSES as readonly string[]).includes(status)) {
    throw new TypeError(`outcome status ${JSON.stringify(status)} is not one of ${STATUSES.join(", ")}`);
  }
  const p: Json = { status };
  if (o.exitCode !== undefined) p.exit_code = o.exitCode;
  if (o.output !== undefined) p.output = o.output;
  if (o.error !== undefined) p.error = o.error;
  if (o.durationMs !== undefined) p.duration_ms = o.durationMs;
  return p;
}

function approvalOf(answer: unknown): Approval {
  let a: Approval;
  if (answer === true) a = { result: "approved" };
  else if (answer === false || answer === undefined || answer === null) a = { result: "denied" };
  else if (typeof answer === "string") a = { result: answer as Settlement };
  else if (typeof answer === "object") a = answer as Approval;
  else throw new TypeError(`an approver returns boolean, a settlement or an Approval, not ${typeof answer}`);
  if (!(SETTLEMENTS as readonly string[]).includes(a.result)) {
    throw new TypeError(`approval result ${JSON.stringify(a.result)} is not one of ${SETTLEMENTS.join(", ")}`);
  }
  return a;
}

/** One item of an applied recovery plan. `next` is what the runtime must do:
 * dispatch/redispatch (re-run it with resume()), ask_approval/reprompt (ask,
 * then run), decide (record mode), wait (parked), none (settled by docket). */
export interface Pending {
  session: string;
  invocation: string;
  tool: string;
  state: string;
  recovery: string;
  action: string;
  next: string;
  token?: string;
  attempts: number;
  applied: boolean;
  error?: string;
  request?: string;
  runnable: boolean;
  raw: Json;
}

function pendingOf(item: Json): Pending {
  const s = (k: string) => (typeof item[k] === "string" ? (item[k] as string) : "");
  const applied = item.applied === true;
  const next = s("runtime");
  return {
    session: s("session"), invocation: s("invocation"), tool: s("tool"), state: s("state"),
    recovery: s("recovery"), action: s("action"), next,
    token: typeof item.token === "string" ? item.token : undefined,
    attempts: typeof item.attempts === "number" ? item.attempts : 0,
    applied,
    error: item.error === undefined ? undefined : typeof item.error === "string" ? item.error : JSON.stringify(item.error),
    request: typeof item.request === "string" ? item.request : undefined,
    runnable: applied && ["dispatch", "redispatch", "ask_approval", "reprompt"].includes(next),
    raw: item,
  };
}

export interface ApprovalOptions {
  approve?: Approver;
  /** Past this, the request is settled `expired`. */
  approvalTimeoutMs?: number;
}
export interface SessionOptions extends ApprovalOptions {
  cwd?: string;
  policy?: unknown;
  policyFormat?: string;
  /** Other session.opened fields: platform, workspace_roots, env, parent, labels. */
  fields?: Json;
}
export interface CallSpec extends ApprovalOptions {
  invocation: string;
  tool: string;
  args?: unknown;
  recovery?: RecoveryMode;
  /** Record mode: the runtime's own verdict. */
  verdict?: string;
  turn?: string;
  prompt?: string;
  /** Aborting it cancels the approval wait (settled `aborted`). */
  signal?: AbortSignal;
}
export type Reconciler = (p: Pending) => Outcome | undefined | null | Promise<Outcome | undefined | null>;

/** What the body sees: the dispatch it runs under. */
export interface Call {
  readonly session: string;
  readonly invocation: string;
  readonly tool: string;
  readonly args: unknown;
  readonly verdict: string;
  readonly decision: Decision;
  readonly attempt: number;
  /** The dispatch token: the idempotency key for your executor. */
  readonly token: string;
}
export type Body<T> = (call: Call) => T | Promise<T>;

/** A started runtime: its epoch fences every older instance. */
export class Runtime {
  constructor(readonly client: Client, readonly name: string, readonly epoch: number) {}

  /** session.open (+ policy.set). */
  async openSession(session: string, opts: SessionOptions = {}): Promise<Session> {
    const p: Json = { session, runtime: this.name, ...(opts.fields ?? {}) };
    if (opts.cwd !== undefined) p.cwd = opts.cwd;
    await this.client.request("session.open", p);
    if (opts.policy !== undefined) {
      await this.client.request("policy.set", { session, format: opts.policyFormat ?? "docket", policy: opts.policy });
    }
    return this.session(session, opts);
  }

  /** A handle on a session already open (e.g. after a restart). */
  session(session: string, opts: ApprovalOptions = {}): Session {
    return new Session(this, session, opts);
  }

  /** Recovery on start, in the order that does not fence this runtime: the
   * plan, the executor's answers for `reconcile` calls, then recover.apply
   * on this connection (it carries this runtime's epoch; never run `docket
   * recover --apply` beside a live runtime). Re-run runnable items with resume(). */
  async recover(opts: { reconcile?: Reconciler; approvals?: "reprompt" | "close" } = {}): Promise<Pending[]> {
    const params: Json = { approvals: opts.approvals ?? "reprompt" };
    if (opts.reconcile) {
      const answers: Json = {};
      const plan = await this.client.request<{ items?: Json[] }>("recover.plan", params);
      for (const p of (plan.items ?? []).map(pendingOf)) {
        if (p.state !== "in_doubt" || p.recovery !== "reconcile" || !p.token) continue;
        const got = await opts.reconcile(p);
        if (got) answers[p.token] = outcomeParams(got);
      }
      params.reconcile = answers;
    }
    const applied = await this.client.request<{ items?: Json[] }>("recover.apply", params);
    return (applied.items ?? []).map(pendingOf);
  }

  /** The call scope for a recovered call: dispatched again (attempt + 1; a
   * new token for replay_safe, the same for idempotent), then the body, then T2. */
  async resume<T>(p: Pending, body: Body<T>, opts: ApprovalOptions & { prompt?: string; signal?: AbortSignal } = {}): Promise<T> {
    if (!p.runnable) {
      throw new DocketError(`${p.invocation}: nothing to run (recovery next step ${JSON.stringify(p.next)}` +
        `${p.applied ? "" : `, not applied: ${p.error ?? ""}`})`);
    }
    const scope = new Scope(this.client, p.session, p.invocation, p.tool, undefined, opts, opts.prompt, opts.signal);
    return scope.run(() => scope.resume(p), body);
  }
}

export class Session {
  constructor(readonly runtime: Runtime, readonly id: string, private readonly defaults: ApprovalOptions = {}) {}

  private intent(spec: CallSpec): Json {
    const recovery = spec.recovery ?? "never_auto_retry";
    if (!(RECOVERY_MODES as readonly string[]).includes(recovery)) {
      throw new TypeError(`recovery ${JSON.stringify(recovery)} is not one of ${RECOVERY_MODES.join(", ")}`);
    }
    const p: Json = { session: this.id, invocation: spec.invocation, tool: spec.tool, args: spec.args ?? {},
                      recovery, dispatch_if_allowed: true };
    if (spec.verdict !== undefined) p.decision = { verdict: spec.verdict, source: "runtime" };
    if (spec.turn !== undefined) p.turn = spec.turn;
    return p;
  }

  private scope(spec: CallSpec): Scope {
    const opts: ApprovalOptions = {
      approve: spec.approve ?? this.defaults.approve,
      approvalTimeoutMs: spec.approvalTimeoutMs ?? this.defaults.approvalTimeoutMs,
    };
    return new Scope(this.runtime.client, this.id, spec.invocation, spec.tool, spec.args, opts, spec.prompt, spec.signal);
  }

  /** The call scope: records T0 and gets docket's decision, waits for an
   * approval when one is needed, runs `body` only after T1 is durable, and
   * records T2 from its return value or exception (rethrown). A call that
   * may not run throws NotDispatched (Denied, Unsupported, ApprovalRefused,
   * Undecided, AlreadyDispatched) before the body. */
  async call<T>(spec: CallSpec, body: Body<T>): Promise<T> {
    const intent = this.intent(spec);
    const scope = this.scope(spec);
    return scope.run(() => scope.enter(intent), body);
  }

  /** Batch: the intents of several calls in one write (one commit on the
   * server); each returned function enters its scope without another round trip. */
  async calls(specs: CallSpec[]): Promise<(<T>(body: Body<T>) => Promise<T>)[]> {
    const intents = specs.map((s) => this.intent(s));
    const replies = await this.runtime.client.requestMany(intents.map((i) => ["tool.intent", i]));
    return specs.map((spec, i) => {
      const r = replies[i]!;
      const scope = this.scope(spec);
      return <T>(body: Body<T>): Promise<T> => {
        if (r instanceof ServerError) return Promise.reject(r);
        return scope.run(() => scope.enter(intents[i]!, r), body);
      };
    });
  }

  async close(): Promise<void> {
    await this.runtime.client.request("session.close", { session: this.id });
  }
}

interface Dispatched { attempt: number; token: string; verdict: string; decision: Decision }
interface Waited { answer: Approval; cause?: unknown; invalid?: Error }

/** One call's steps; used once. */
class Scope {
  constructor(private readonly client: Client, private readonly session: string,
              private readonly invocation: string, private readonly tool: string,
              private readonly args: unknown, private readonly opts: ApprovalOptions,
              private readonly prompt?: string, private readonly signal?: AbortSignal) {}

  private get key(): Json { return { session: this.session, invocation: this.invocation }; }

  async run<T>(enter: () => Promise<Dispatched>, body: Body<T>): Promise<T> {
    const d = await enter();
    const call: Call = Object.freeze({ session: this.session, invocation: this.invocation, tool: this.tool,
                                       args: this.args, ...d });
    let value: T;
    try {
      value = await body(call);
    } catch (e) {
      await this.complete(outcomeOfError(e));
      throw e;
    }
    let outcome: Outcome;
    try {
      outcome = outcomeOf(value);
      outcomeParams(outcome);
    } catch (e) {
      await this.complete(outcomeOfError(e));
      throw e;
    }
    await this.complete(outcome);
    return value;
  }

  private async complete(o: Outcome): Promise<void> {
    await this.client.request("tool.complete", { ...this.key, ...outcomeParams(o) });
  }

  private dispatched(r: Json, verdict: string, decision: Decision): Dispatched {
    if (typeof r.attempt !== "number" || typeof r.token !== "string") {
      throw new ProtocolError(`dispatch result without attempt and token: ${JSON.stringify(r)}`);
    }
    return { attempt: r.attempt, token: r.token, verdict, decision };
  }

  async enter(intent: Json, batched?: Json): Promise<Dispatched> {
    const r: Json = batched ?? (await this.client.request<Json>("tool.intent", intent));
    const verdict = typeof r.verdict === "string" ? r.verdict : "";
    const decision = (typeof r.decision === "object" && r.decision !== null ? r.decision : {}) as Decision;
    if (r.dispatched === true) {
      if (r.duplicate === true && batched === undefined) {
        throw new AlreadyDispatched(`invocation ${JSON.stringify(this.invocation)} of session ` +
          `${JSON.stringify(this.session)} was already dispatched (attempt ${r.attempt}); after a crash, use recover()`,
          verdict, decision);
      }
      return this.dispatched(r, verdict, decision);
    }
    if (verdict === "approval_required") return this.approval("r1", decision, true);
    // reasons are codes ("rule", "known_safe", ...); the deciding rule comes first in rules
    const reasons = (decision.reasons ?? []).join("; ");
    const first = decision.rules?.[0];
    const rule = typeof first === "string" ? first : "";
    const why = (reasons ? `: ${reasons}` : "") + (rule ? `; rule ${rule}` : "");
    if (verdict === "denied" || verdict === "unsupported") {
      await this.complete({ status: verdict, error: `${verdict}${why}` });
      const cls = verdict === "denied" ? Denied : Unsupported;
      throw new cls(`${this.invocation}: ${verdict}${why}`, verdict, decision);
    }
    await this.complete({ status: "denied", error: `verdict ${verdict || "undecided"}: no decision to dispatch on (fail closed)` });
    throw new Undecided(`${this.invocation}: verdict ${verdict || "undecided"}: no decision to dispatch on`, verdict, decision);
  }

  async resume(p: Pending): Promise<Dispatched> {
    if (p.next === "dispatch" || p.next === "redispatch") {
      return this.dispatched(await this.client.request("tool.dispatch", this.key), "allowed", {});
    }
    const reprompt = p.next === "reprompt" && p.request !== undefined;
    return this.approval(reprompt ? p.request! : `r-${randomBytes(6).toString("hex")}`, {}, !reprompt);
  }

  /** P: request, wait, settle; then T1 or the outcome `denied`. Without an
   * approver nobody can grant it: refused (fail closed), nothing left open. */
  private async approval(request: string, decision: Decision, ask: boolean): Promise<Dispatched> {
    const approve = this.opts.approve;
    if (!approve) {
      await this.complete({ status: "denied", error: "approval required and the runtime has no approver" });
      throw new ApprovalRefused(`${this.invocation}: approval required and no approver is configured`,
        "approval_required", decision);
    }
    if (ask) {
      await this.client.request("approval.request",
        { ...this.key, request, ...(this.prompt !== undefined ? { prompt: this.prompt } : {}) });
    }
    const req: ApprovalRequest = { session: this.session, invocation: this.invocation, request, tool: this.tool,
                                   args: this.args, decision, reasons: decision.reasons ?? [] };
    const { answer, cause, invalid } = await this.wait(approve, req);
    await this.client.request("approval.settle", { ...this.key, request, result: answer.result,
      actor: answer.actor ?? "user", ...(answer.reason !== undefined ? { reason: answer.reason } : {}) });
    if (GRANTS.includes(answer.result)) {
      return this.dispatched(await this.client.request("tool.dispatch", this.key), "approval_required", decision);
    }
    await this.complete({ status: "denied", error: `approval ${answer.result}` });
    if (invalid) throw invalid;
    throw new ApprovalRefused(`${this.invocation}: approval ${answer.result}`, "approval_required", decision,
      answer.result, { cause });
  }

  /** Wait for the approver, bounded by the timeout (expired) and the
   * caller's signal (aborted); an approver that throws denies. */
  private async wait(approve: Approver, req: ApprovalRequest): Promise<Waited> {
    const ctl = new AbortController();
    const stops: Promise<Waited>[] = [];
    const cleanups: (() => void)[] = [];
    if (this.opts.approvalTimeoutMs !== undefined) {
      const ms = this.opts.approvalTimeoutMs;
      stops.push(new Promise((resolve) => {
        const t = setTimeout(() => resolve({ answer: { result: "expired", actor: "docket-client",
          reason: `no answer within ${ms} ms` } }), ms);
        cleanups.push(() => clearTimeout(t));
      }));
    }
    const signal = this.signal;
    if (signal) {
      stops.push(new Promise((resolve) => {
        const onAbort = () => resolve({ answer: { result: "aborted", actor: "docket-client",
          reason: "the approval wait was cancelled" }, cause: signal.reason });
        if (signal.aborted) onAbort();
        else {
          signal.addEventListener("abort", onAbort, { once: true });
          cleanups.push(() => signal.removeEventListener("abort", onAbort));
        }
      }));
    }
    const asked = (async (): Promise<Waited> => {
      let got: unknown;
      try {
        got = await approve(req, ctl.signal);
      } catch (e) {
        return { answer: { result: "denied", actor: "docket-client", reason: `approver failed: ${String(e)}` } };
      }
      try {
        return { answer: approvalOf(got) };
      } catch (e) { // a bad answer denies, then is thrown
        return { answer: { result: "denied", actor: "docket-client", reason: `invalid approver answer: ${String(e)}` },
                 invalid: e as Error };
      }
    })();
    try {
      return await Promise.race([asked, ...stops]);
    } finally {
      ctl.abort();
      for (const c of cleanups) c();
    }
  }
}

export { NotDispatched };
