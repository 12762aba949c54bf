# SPDX-License-Identifier: Apache-2.0
"""The call scope's steps, written once as generators that yield what they
need (a request, an approval answer) and are driven by the sync and the
asyncio front ends. Nothing here does I/O, so the two APIs cannot disagree
on the order of T0, P, T1 and T2.

    enter:  tool.intent (T0, + T1 when allowed)
            -> approval_required: approval.request (P), wait, approval.settle,
               then tool.dispatch (T1, docket revalidates) or the outcome
            -> denied/unsupported/undecided: the outcome, then raise
    resume: (recovery) tool.dispatch, or the approval steps first
    leave:  tool.complete (T2) from the return value or the exception
"""
import secrets
from dataclasses import dataclass
from typing import Any, Dict, Generator, Optional, Union

from . import errors
from ._model import (GRANTS, Approval, ApprovalRequest, Outcome, Pending, approval_of,
                     refusal)


@dataclass
class Rpc:
    method: str
    params: Dict[str, Any]


@dataclass
class Ask:
    request: ApprovalRequest


@dataclass
class Dispatched:
    attempt: int
    token: str
    verdict: str
    decision: Dict[str, Any]


Step = Union[Rpc, Ask]
Flow = Generator[Step, Any, Dispatched]


def _key(session: str, invocation: str) -> Dict[str, Any]:
    return {"session": session, "invocation": invocation}


def _dispatched(r: Dict[str, Any], verdict: str, decision: Dict[str, Any]) -> Dispatched:
    attempt, token = r.get("attempt"), r.get("token")
    if not isinstance(attempt, int) or not isinstance(token, str):
        raise errors.ProtocolError(f"dispatch result without attempt and token: {r!r}")
    return Dispatched(attempt, token, verdict, decision)


def enter(intent: Dict[str, Any], has_approver: bool, prompt: Optional[str],
          intent_result: Optional[Dict[str, Any]] = None) -> Flow:
    """T0 (and T1 when allowed) for a new call. `intent_result` is the reply
    of an intent already sent in a batch (Session.calls)."""
    r = intent_result if intent_result is not None else (yield Rpc("tool.intent", intent))
    verdict = r.get("verdict") if isinstance(r.get("verdict"), str) else ""
    decision = r.get("decision") if isinstance(r.get("decision"), dict) else {}
    session, invocation = intent["session"], intent["invocation"]
    if r.get("dispatched") is True:
        if r.get("duplicate") is True and intent_result is None:
            # the same intent was dispatched before: running the body again
            # would dispatch twice; only recovery may re-run it
            raise errors.AlreadyDispatched(
                f"invocation {invocation!r} of session {session!r} was already dispatched "
                f"(attempt {r.get('attempt')}); after a crash, use Runtime.recover()", verdict, decision)
        return _dispatched(r, verdict, decision)
    if verdict == "approval_required":
        req = ApprovalRequest(session, invocation, "r1", intent["tool"], intent.get("args"), decision)
        return (yield from _approval(req, has_approver, prompt, True))
    cls, outcome = refusal(verdict, decision, invocation)
    yield Rpc("tool.complete", {**_key(session, invocation), **outcome.params()})
    raise cls(f"{invocation}: {outcome.error}", verdict, decision)


def _approval(req: ApprovalRequest, has_approver: bool, prompt: Optional[str], ask: bool) -> Flow:
    """P: request (unless re-prompting an open request), wait, settle; then
    T1 or the outcome `denied`. Without an approver nobody can grant it, so
    the call is refused (fail closed) and no request is left open."""
    key = _key(req.session, req.invocation)
    if not has_approver:
        yield Rpc("tool.complete", {**key, "status": "denied",
                                    "error": "approval required and the runtime has no approver"})
        raise errors.ApprovalRefused(f"{req.invocation}: approval required and no approver is configured",
                                     "approval_required", req.decision, None)
    if ask:
        p = {**key, "request": req.request}
        if prompt is not None:
            p["prompt"] = prompt
        yield Rpc("approval.request", p)
    invalid: Optional[Exception] = None
    try:
        answer: Approval = approval_of((yield Ask(req)))
    except (TypeError, ValueError) as e:  # a bad answer denies, then is raised
        answer, invalid = Approval("denied", "docket-client", f"invalid approver answer: {e}"), e
    settle = {**key, "request": req.request, "result": answer.result, "actor": answer.actor}
    if answer.reason is not None:
        settle["reason"] = answer.reason
    yield Rpc("approval.settle", settle)
    if answer.result in GRANTS:
        d = yield Rpc("tool.dispatch", key)
        return _dispatched(d, "approval_required", req.decision)
    yield Rpc("tool.complete", {**key, "status": "denied", "error": f"approval {answer.result}"})
    if invalid is not None:
        raise invalid
    raise errors.ApprovalRefused(f"{req.invocation}: approval {answer.result}", "approval_required",
                                 req.decision, answer.result)


def resume(p: Pending, has_approver: bool, prompt: Optional[str]) -> Flow:
    """Re-enter a recovered call through the same scope (after recover.apply);
    refused at once when the item has nothing for the runtime to run."""
    if not p.runnable:
        raise errors.DocketError(
            f"{p.invocation}: nothing to run (recovery next step {p.next!r}"
            f"{', not applied: ' + (p.error or '') if not p.applied else ''})")
    return _resume(p, has_approver, prompt)


def _resume(p: Pending, has_approver: bool, prompt: Optional[str]) -> Flow:
    key = _key(p.session, p.invocation)
    if p.next in ("dispatch", "redispatch"):
        d = yield Rpc("tool.dispatch", key)
        return _dispatched(d, "allowed", {})
    reprompt = p.next == "reprompt" and p.request is not None
    rid = p.request if reprompt and p.request else f"r-{secrets.token_hex(6)}"
    req = ApprovalRequest(p.session, p.invocation, rid, p.tool, None, {})
    return (yield from _approval(req, has_approver, prompt, not reprompt))


def leave(session: str, invocation: str, outcome: Outcome) -> Generator[Step, Any, Any]:
    """T2: committed before the result goes back to the model."""
    return (yield Rpc("tool.complete", {**_key(session, invocation), **outcome.params()}))
