# SPDX-License-Identifier: Apache-2.0
"""What the sync and asyncio APIs share: no I/O here, only the protocol's
shapes (request params, outcomes from return values and exceptions, the
approval answer, recovery items) so the two front ends cannot drift."""
import json
import os
import subprocess
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple, Union

from . import errors

RECOVERY_MODES = ("replay_safe", "idempotent", "reconcile", "never_auto_retry")
STATUSES = ("ok", "error", "timeout", "cancelled", "denied", "unsupported", "indeterminate")
SETTLEMENTS = ("approved", "approved_for_session", "denied", "aborted", "expired", "closed")
GRANTS = ("approved", "approved_for_session")
OUTPUT_LIMIT = 64 * 1024  # bytes of output kept in the ledger per call


@dataclass
class Outcome:
    """A call's T2: what happened when the tool ran."""
    status: str = "ok"
    exit_code: Optional[int] = None
    output: Optional[str] = None
    error: Optional[str] = None
    duration_ms: Optional[int] = None

    def params(self) -> Dict[str, Any]:
        if self.status not in STATUSES:
            raise ValueError(f"outcome status {self.status!r} is not one of {', '.join(STATUSES)}")
        p: Dict[str, Any] = {"status": self.status}
        for k in ("exit_code", "output", "error", "duration_ms"):
            v = getattr(self, k)
            if v is not None:
                p[k] = v
        return p


@dataclass
class Approval:
    """The runtime UI's answer to an approval request."""
    result: str = "approved"
    actor: str = "user"
    reason: Optional[str] = None


@dataclass
class ApprovalRequest:
    """What an approver callback is shown."""
    session: str
    invocation: str
    request: str
    tool: str
    args: Any
    decision: Dict[str, Any] = field(default_factory=dict)

    @property
    def reasons(self) -> List[str]:
        r = self.decision.get("reasons")
        return list(r) if isinstance(r, list) else []


@dataclass
class Pending:
    """One item of a recovery plan, after it was applied.

    ``next`` is what the runtime must do: ``dispatch``/``redispatch`` (re-run
    it through :meth:`resume`), ``ask_approval``/``reprompt`` (ask, then
    run), ``decide`` (record mode: give a verdict), ``wait`` (parked: the
    executor could not tell), ``none`` (docket settled it)."""
    session: str
    invocation: str
    tool: str
    state: str
    recovery: str
    action: str
    next: str
    token: Optional[str]
    attempts: int
    applied: bool
    error: Optional[str]
    request: Optional[str]
    raw: Dict[str, Any]

    @property
    def runnable(self) -> bool:
        return self.applied and self.next in ("dispatch", "redispatch", "ask_approval", "reprompt")


def pending_from(item: Dict[str, Any]) -> Pending:
    def s(k: str) -> str:
        v = item.get(k)
        return v if isinstance(v, str) else ""
    err = item.get("error")
    return Pending(session=s("session"), invocation=s("invocation"), tool=s("tool"),
                   state=s("state"), recovery=s("recovery"), action=s("action"), next=s("runtime"),
                   token=item.get("token") if isinstance(item.get("token"), str) else None,
                   attempts=item.get("attempts") if isinstance(item.get("attempts"), int) else 0,
                   applied=item.get("applied") is True,
                   error=err if isinstance(err, str) else (json.dumps(err) if err else None),
                   request=item.get("request") if isinstance(item.get("request"), str) else None,
                   raw=item)


def clip(text: Optional[str]) -> Optional[str]:
    if text is None or len(text.encode("utf-8", "replace")) <= OUTPUT_LIMIT:
        return text
    return text.encode("utf-8", "replace")[:OUTPUT_LIMIT].decode("utf-8", "ignore") + "\n[truncated]"


def _text(v: Any) -> Optional[str]:
    if v is None:
        return None
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    return str(v)


def outcome_of(value: Any) -> Outcome:
    """T2 from a body's return value: an Outcome, None (ok), a str (output),
    an int (exit code), a CompletedProcess, or a dict of Outcome's fields."""
    if isinstance(value, Outcome):
        return value
    if value is None:
        return Outcome()
    if isinstance(value, bool):
        return Outcome(status="ok" if value else "error", exit_code=0 if value else 1)
    if isinstance(value, int):
        return Outcome(status="ok" if value == 0 else "error", exit_code=value)
    if isinstance(value, (str, bytes)):
        return Outcome(output=clip(_text(value)), exit_code=0)
    if isinstance(value, subprocess.CompletedProcess):
        out = (_text(value.stdout) or "") + (_text(value.stderr) or "")
        rc = value.returncode
        return Outcome(status="ok" if rc == 0 else "error", exit_code=rc, output=clip(out) if out else None)
    if isinstance(value, dict):
        unknown = set(value) - {"status", "exit_code", "output", "error", "duration_ms"}
        if unknown:
            raise ValueError(f"outcome has unknown fields: {sorted(unknown)}")
        return Outcome(**value)
    return Outcome(output=clip(repr(value)))


def outcome_of_exception(exc: BaseException) -> Outcome:
    """T2 from the exception that left a call scope."""
    msg = clip(f"{type(exc).__name__}: {exc}")
    if isinstance(exc, subprocess.TimeoutExpired) or isinstance(exc, TimeoutError):
        return Outcome(status="timeout", error=msg)
    if isinstance(exc, (KeyboardInterrupt, SystemExit)) or type(exc).__name__ == "CancelledError":
        return Outcome(status="cancelled", error=msg)
    if isinstance(exc, subprocess.CalledProcessError):
        out = _text(exc.output)
        return Outcome(status="error", exit_code=exc.returncode, error=msg, output=clip(out) if out else None)
    return Outcome(status="error", error=msg)


def approval_of(answer: Any) -> Approval:
    """The approver's answer: an Approval, a bool, or a settlement string."""
    if isinstance(answer, Approval):
        a = answer
    elif answer is True:
        a = Approval("approved")
    elif answer is False or answer is None:
        a = Approval("denied")
    elif isinstance(answer, str):
        a = Approval(answer)
    else:
        raise TypeError(f"an approver returns bool, str or Approval, not {type(answer).__name__}")
    if a.result not in SETTLEMENTS:
        raise ValueError(f"approval result {a.result!r} is not one of {', '.join(SETTLEMENTS)}")
    return a


def intent_params(session: str, invocation: str, tool: str, args: Any, recovery: str,
                  verdict: Optional[str], turn: Optional[str]) -> Dict[str, Any]:
    if recovery not in RECOVERY_MODES:
        raise ValueError(f"recovery {recovery!r} is not one of {', '.join(RECOVERY_MODES)}")
    p: Dict[str, Any] = {"session": session, "invocation": invocation, "tool": tool,
                         "args": args if args is not None else {}, "recovery": recovery,
                         "dispatch_if_allowed": True}
    if verdict is not None:
        p["decision"] = {"verdict": verdict, "source": "runtime"}
    if turn is not None:
        p["turn"] = turn
    return p


def refusal(verdict: str, decision: Dict[str, Any], invocation: str) -> Tuple[type, Outcome]:
    """The error and the outcome for an intent that may not be dispatched."""
    # reasons are codes ("rule", "known_safe", ...); the deciding rule comes first in rules
    reasons = "; ".join(r for r in decision.get("reasons", []) if isinstance(r, str)) if decision else ""
    rules = decision.get("rules") if decision else None
    rule = rules[0] if isinstance(rules, list) and rules and isinstance(rules[0], str) else ""
    why = (f": {reasons}" if reasons else "") + (f"; rule {rule}" if rule else "")
    if verdict == "unsupported":
        return errors.Unsupported, Outcome(status="unsupported", error=f"unsupported{why}")
    if verdict == "denied":
        return errors.Denied, Outcome(status="denied", error=f"denied{why}")
    return errors.Undecided, Outcome(status="denied",
                                     error=f"verdict {verdict or 'undecided'}: no decision to dispatch on (fail closed)")


def request_line(rid: int, method: str, params: Optional[Dict[str, Any]]) -> bytes:
    msg: Dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        msg["params"] = params
    return (json.dumps(msg, separators=(",", ":")) + "\n").encode()


def parse_reply(line: bytes) -> Tuple[Any, Dict[str, Any]]:
    """(id, reply) from one line; ProtocolError when it is not a reply."""
    try:
        msg = json.loads(line)
    except ValueError as e:
        raise errors.ProtocolError(f"reply is not JSON: {e}: {line[:200]!r}") from None
    if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0" or ("result" in msg) == ("error" in msg):
        raise errors.ProtocolError(f"not a JSON-RPC 2.0 reply: {line[:200]!r}")
    return msg.get("id"), msg


def result_of(msg: Dict[str, Any], method: str) -> Any:
    if "error" in msg:
        raise errors.server_error(msg["error"], method)
    return msg["result"]


def serve_argv(docket: str, ledger: Optional[str], extra: List[str]) -> List[str]:
    argv = [docket]
    if ledger is not None:
        argv += ["-L", ledger]
    return argv + ["serve", "--stdio"] + list(extra)


def init_argv(docket: str, ledger: str) -> Optional[List[str]]:
    """The `docket init` to run first, or None when the ledger exists."""
    return None if os.path.exists(ledger) else [docket, "-L", ledger, "init"]
