// SPDX-License-Identifier: Apache-2.0
// Typed errors: one class per documented data.kind, plus the client's own.
// A kind this client does not know maps to ServerError itself.

export class DocketError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

export interface ErrorData {
  kind?: string;
  invariant?: number;
  [key: string]: unknown;
}

/** The server refused a request (a JSON-RPC error object). */
export class ServerError extends DocketError {
  static readonly kind: string = "";
  readonly code: number;
  readonly kind: string;
  readonly invariant?: number;
  readonly data: ErrorData;
  readonly method: string;
  readonly serverMessage: string;

  constructor(message: string, code = -32000, data: ErrorData = {}, method = "") {
    super(`${method ? method + ": " : ""}${message} (${data.kind || "unknown"}, ${code})`);
    this.serverMessage = message;
    this.code = code;
    this.kind = typeof data.kind === "string" ? data.kind : "";
    this.invariant = typeof data.invariant === "number" ? data.invariant : undefined;
    this.data = data;
    this.method = method;
  }
}

/** The ledger refused an illegal step. */
export class InvalidTransition extends ServerError { static override readonly kind = "invalid_transition"; }
/** A newer runtime took over: this one is fenced. */
export class StaleEpoch extends ServerError { static override readonly kind = "stale_epoch"; }
/** Same id, other content; or a second outcome. */
export class Conflict extends ServerError { static override readonly kind = "conflict"; }
/** Unknown session, invocation or method. */
export class NotFound extends ServerError { static override readonly kind = "not_found"; }
/** Malformed params, unknown fields, limits. */
export class BadRequest extends ServerError { static override readonly kind = "bad_request"; }
/** The ledger could not commit. */
export class StorageError extends ServerError { static override readonly kind = "storage"; }
/** The server is full or out of descriptors: retry later. */
export class Busy extends ServerError { static override readonly kind = "busy"; }
/** The connection's role may not do this. */
export class Forbidden extends ServerError { static override readonly kind = "forbidden"; }

const KINDS: Record<string, typeof ServerError> = Object.fromEntries(
  [InvalidTransition, StaleEpoch, Conflict, NotFound, BadRequest, StorageError, Busy, Forbidden]
    .map((c) => [c.kind, c]));

/** The typed error for a JSON-RPC error object (of any shape). */
export function serverError(error: unknown, method = ""): ServerError {
  if (typeof error !== "object" || error === null) {
    return new ServerError(`malformed error object: ${JSON.stringify(error)}`, -32000, {}, method);
  }
  const e = error as { code?: unknown; message?: unknown; data?: unknown };
  const data = (typeof e.data === "object" && e.data !== null ? e.data : {}) as ErrorData;
  const code = typeof e.code === "number" ? e.code : -32000;
  const message = typeof e.message === "string" ? e.message : "(no message)";
  const cls = (typeof data.kind === "string" && Object.hasOwn(KINDS, data.kind) ? KINDS[data.kind] : undefined) ?? ServerError;
  return new cls(message, code, data, method);
}

/** The server sent something that is not a JSON-RPC reply. */
export class ProtocolError extends DocketError {}
/** The connection closed (or the child server exited) before the reply. */
export class ConnectionLost extends DocketError {}
/** No reply in time. The request may still commit: re-sending it is safe. */
export class RequestTimeout extends DocketError {}

export interface Decision {
  verdict?: string;
  source?: string;
  reasons?: string[];
  rules?: string[];
  policy_revision?: number;
  [key: string]: unknown;
}

/** The call may not run: thrown by call() before the body. The outcome
 * (denied/unsupported) is already recorded. */
export class NotDispatched extends DocketError {
  readonly verdict: string;
  readonly decision: Decision;
  readonly settlement?: string;
  constructor(message: string, verdict: string, decision: Decision = {}, settlement?: string,
              options?: { cause?: unknown }) {
    super(message, options);
    this.verdict = verdict;
    this.decision = decision;
    this.settlement = settlement;
  }
  get reasons(): string[] {
    return Array.isArray(this.decision.reasons) ? this.decision.reasons : [];
  }
}
/** docket's policy (or the runtime's decision) denied the call. */
export class Denied extends NotDispatched {}
/** The call is of a kind the policy never allows to run. */
export class Unsupported extends NotDispatched {}
/** The approval wait ended without a grant: settlement denied, aborted, expired or closed. */
export class ApprovalRefused extends NotDispatched {}
/** Record mode without the runtime's decision: refused (fail closed), recorded denied. */
export class Undecided extends NotDispatched {}
/** A fresh call for an invocation dispatched before: running it again would
 * dispatch twice. After a crash use recover(). */
export class AlreadyDispatched extends NotDispatched {}
