# SPDX-License-Identifier: Apache-2.0
"""The blocking API: Client (a connection), Runtime, Session, Call."""
import os
import select
import socket
import subprocess
import threading
import time
from typing import (Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence,
                    Tuple, Union)

from . import _flow, errors
from ._model import (Approval, ApprovalRequest, Outcome, Pending, init_argv, intent_params,
                     outcome_of, outcome_of_exception, parse_reply, pending_from,
                     request_line, result_of, serve_argv)

Approver = Callable[[ApprovalRequest], Union[bool, str, Approval]]
Reconciler = Callable[[Pending], Optional[Union[Outcome, Mapping[str, Any]]]]
_DEFAULT: Any = object()


class Client:
    """One connection to `docket serve` (a socket, or a child on stdio)."""

    def __init__(self, rfd: int, wfd: int, *, sock: Optional[socket.socket] = None,
                 proc: Optional[subprocess.Popen] = None, timeout: Optional[float] = 30.0):
        self._rfd, self._wfd, self._sock, self._proc = rfd, wfd, sock, proc
        self.timeout = timeout
        self._buf = b""
        self._next_id = 1
        self._early: Dict[Any, Dict[str, Any]] = {}
        self._closed = False

    # -- transport ---------------------------------------------------------
    def _write(self, data: bytes) -> None:
        if self._closed:
            raise errors.ConnectionLost("the connection is closed")
        try:
            if self._sock is not None:
                self._sock.sendall(data)
                return
            view = memoryview(data)
            while view:
                view = view[os.write(self._wfd, view):]
        except OSError as e:
            raise errors.ConnectionLost(f"write to docket serve failed: {e}{self._exit_note()}") from None

    def _exit_note(self) -> str:
        if self._proc is not None and self._proc.poll() is not None:
            return f" (docket serve exited with status {self._proc.returncode})"
        return ""

    def _line(self, deadline: Optional[float]) -> bytes:
        while b"\n" not in self._buf:
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([self._rfd], [], [], wait)
            if not ready:
                raise errors.RequestTimeout("no reply from docket serve in time; re-sending is safe")
            try:
                chunk = os.read(self._rfd, 1 << 16)
            except OSError as e:
                raise errors.ConnectionLost(f"read from docket serve failed: {e}") from None
            if not chunk:
                raise errors.ConnectionLost("docket serve closed the connection" + self._exit_note())
            self._buf += chunk
        line, _, self._buf = self._buf.partition(b"\n")
        return line

    def _reply(self, rid: int, deadline: Optional[float]) -> Dict[str, Any]:
        while rid not in self._early:
            got, msg = parse_reply(self._line(deadline))
            if got is None and "error" in msg:
                return msg  # a line the server could not read: the one in flight
            self._early[got] = msg  # replies to abandoned (timed out) requests are dropped below
        msg = self._early.pop(rid)
        self._early = {k: v for k, v in self._early.items() if isinstance(k, int) and k > rid}
        return msg

    def _deadline(self, timeout: Any) -> Optional[float]:
        t = self.timeout if timeout is _DEFAULT else timeout
        return None if t is None else time.monotonic() + t

    # -- requests ----------------------------------------------------------
    def request(self, method: str, params: Optional[Dict[str, Any]] = None,
                timeout: Any = _DEFAULT) -> Any:
        """One JSON-RPC request; the result, or a typed ServerError."""
        rid, self._next_id = self._next_id, self._next_id + 1
        try:
            self._write(request_line(rid, method, params))
        except errors.ConnectionLost as lost:
            # the server may have said why before closing (busy)
            try:
                msg = self._reply(rid, time.monotonic() + 1.0)
            except errors.DocketError:
                raise lost from None
            return result_of(msg, method)
        return result_of(self._reply(rid, self._deadline(timeout)), method)

    def request_many(self, calls: Sequence[Tuple[str, Optional[Dict[str, Any]]]],
                     timeout: Any = _DEFAULT) -> List[Union[Any, errors.ServerError]]:
        """Pipeline several requests in one write: serve commits requests
        that arrive together in one transaction (one fsync), each atomic and
        isolated. Returns each result, or its ServerError, in order."""
        first = self._next_id
        self._next_id += len(calls)
        self._write(b"".join(request_line(first + i, m, p) for i, (m, p) in enumerate(calls)))
        deadline = self._deadline(timeout)
        out: List[Any] = []
        for i, (m, _) in enumerate(calls):
            try:
                out.append(result_of(self._reply(first + i, deadline), m))
            except errors.ServerError as e:
                out.append(e)
        return out

    def start(self, runtime: str) -> "Runtime":
        """runtime.start: raise the epoch; this connection now carries it."""
        r = self.request("runtime.start", {"runtime": runtime})
        return Runtime(self, runtime, int(r["epoch"]))

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._sock is not None:
            self._sock.close()
        if self._proc is not None:
            for f in (self._proc.stdin, self._proc.stdout):
                if f is not None:
                    f.close()
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def connect(path: str, timeout: Optional[float] = 30.0) -> Client:
    """Connect to `docket serve --socket PATH`."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(path)
    except OSError as e:
        sock.close()
        raise errors.ConnectionLost(f"cannot connect to {path}: {e}") from None
    return Client(sock.fileno(), sock.fileno(), sock=sock, timeout=timeout)


def spawn(ledger: Optional[str] = None, docket: str = "docket", args: Iterable[str] = (),
          timeout: Optional[float] = 30.0, init: bool = True, stderr: Any = None) -> Client:
    """Start `docket [-L LEDGER] serve --stdio` as a child (creating the
    ledger first unless init=False). The child ends when the client closes.
    Its log goes to `stderr` (inherited; subprocess.DEVNULL to silence)."""
    if init and ledger is not None:
        argv = init_argv(docket, ledger)
        if argv is not None:
            subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
    proc = subprocess.Popen(serve_argv(docket, ledger, list(args)), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=stderr, bufsize=0)
    assert proc.stdin is not None and proc.stdout is not None
    return Client(proc.stdout.fileno(), proc.stdin.fileno(), proc=proc, timeout=timeout)


def _ask(approve: Optional[Approver], req: ApprovalRequest, timeout: Optional[float]) -> Any:
    """Wait for the approver; past `timeout` the request is settled expired
    (the approver thread's late answer is ignored)."""
    assert approve is not None

    def answer() -> Any:
        try:
            return approve(req)
        except Exception as e:  # the approver's failure denies, never allows
            return Approval("denied", "docket-client", f"approver failed: {type(e).__name__}: {e}")
    if timeout is None:
        return answer()
    box: List[Any] = []

    def run() -> None:
        box.append(answer())
    t = threading.Thread(target=run, daemon=True, name=f"docket-approval-{req.invocation}")
    t.start()
    t.join(timeout)
    if not box:
        return Approval("expired", "docket-client", f"no answer within {timeout:g} s")
    return box[0]


def _drive(client: Client, flow: Any, approve: Optional[Approver], timeout: Optional[float]) -> Any:
    value: Any = None
    while True:
        try:
            step = flow.send(value)
        except StopIteration as stop:
            return stop.value
        if isinstance(step, _flow.Rpc):
            value = client.request(step.method, step.params)
        else:
            value = _ask(approve, step.request, timeout)


class Runtime:
    """A started runtime: its epoch fences every older instance."""

    def __init__(self, client: Client, name: str, epoch: int):
        self.client, self.name, self.epoch = client, name, epoch

    def open_session(self, session: str, *, cwd: Optional[str] = None,
                     policy: Optional[Any] = None, policy_format: str = "docket",
                     approve: Optional[Approver] = None, approval_timeout: Optional[float] = None,
                     **fields: Any) -> "Session":
        """session.open (+ policy.set): `fields` are session.opened's other
        fields (platform, workspace_roots, env, parent, labels)."""
        p: Dict[str, Any] = {"session": session, "runtime": self.name, **fields}
        if cwd is not None:
            p["cwd"] = cwd
        self.client.request("session.open", p)
        if policy is not None:
            self.client.request("policy.set", {"session": session, "format": policy_format,
                                               "policy": policy})
        return self.session(session, approve=approve, approval_timeout=approval_timeout)

    def session(self, session: str, *, approve: Optional[Approver] = None,
                approval_timeout: Optional[float] = None) -> "Session":
        """A handle on a session already open (e.g. after a restart)."""
        return Session(self, session, approve, approval_timeout)

    def recover(self, reconcile: Optional[Reconciler] = None,
                approvals: str = "reprompt") -> List[Pending]:
        """Recovery on start, in the order that does not fence this runtime:
        the plan, your executor's answers for `reconcile` calls, then
        recover.apply on this connection (it carries this runtime's epoch;
        never run `docket recover --apply` beside a live runtime). Returns
        the items; re-run the runnable ones with `resume()`."""
        params: Dict[str, Any] = {"approvals": approvals}
        if reconcile is not None:
            answers: Dict[str, Any] = {}
            for p in map(pending_from, self.client.request("recover.plan", params).get("items", [])):
                if p.state == "in_doubt" and p.recovery == "reconcile" and p.token:
                    got = reconcile(p)
                    if got is not None:
                        answers[p.token] = outcome_of(got).params()
            params["reconcile"] = answers
        plan = self.client.request("recover.apply", params)
        return [pending_from(i) for i in plan.get("items", [])]

    def resume(self, pending: Pending, *, approve: Optional[Approver] = None,
               approval_timeout: Optional[float] = None, prompt: Optional[str] = None) -> "Call":
        """The call scope for a recovered call: entering dispatches it again
        (attempt + 1; a new token for replay_safe, the same for idempotent)."""
        return Call(self.client, pending.session, pending.invocation, pending.tool, None,
                    _flow.resume(pending, approve is not None, prompt), approve, approval_timeout)


class Session:
    def __init__(self, runtime: Runtime, session: str, approve: Optional[Approver],
                 approval_timeout: Optional[float]):
        self.runtime, self.id = runtime, session
        self.approve, self.approval_timeout = approve, approval_timeout

    def call(self, invocation: str, tool: str, args: Any = None, *,
             recovery: str = "never_auto_retry", verdict: Optional[str] = None,
             turn: Optional[str] = None, approve: Optional[Approver] = None,
             approval_timeout: Any = _DEFAULT, prompt: Optional[str] = None,
             _intent_result: Optional[Dict[str, Any]] = None) -> "Call":
        """The call scope. `with session.call(...) as call:` records T0 and
        gets docket's decision, waits for an approval when one is needed,
        and enters the body only after T1 is durable (call.token is the
        idempotency key for your executor); leaving records T2 from
        call.finish(...) or from the exception. A call that may not run
        raises NotDispatched (Denied, Unsupported, ApprovalRefused,
        Undecided) before the body."""
        intent = intent_params(self.id, invocation, tool, args, recovery, verdict, turn)
        ap = approve if approve is not None else self.approve
        t = self.approval_timeout if approval_timeout is _DEFAULT else approval_timeout
        return Call(self.runtime.client, self.id, invocation, tool, args,
                    _flow.enter(intent, ap is not None, prompt, _intent_result), ap, t)

    def run(self, invocation: str, tool: str, args: Any, fn: Callable[["Call"], Any],
            **kw: Any) -> Any:
        """The scope as a function: T2 is recorded from fn(call)'s return value
        (an Outcome, None, a str, an int, a CompletedProcess or a dict)."""
        with self.call(invocation, tool, args, **kw) as call:
            value = fn(call)
            call.finish(value)
            return value

    def calls(self, specs: Sequence[Mapping[str, Any]]) -> List["Call"]:
        """Batch: send the intents of several calls in one write (one commit
        on the server), then enter each scope without another round trip.
        Each spec has call()'s arguments (invocation, tool, args, recovery,
        verdict, turn, approve, approval_timeout, prompt)."""
        specs = [dict(s) for s in specs]
        intents = [intent_params(self.id, s["invocation"], s["tool"], s.get("args"),
                                 s.get("recovery", "never_auto_retry"), s.get("verdict"), s.get("turn"))
                   for s in specs]
        replies = self.runtime.client.request_many([("tool.intent", i) for i in intents])
        out = []
        for s, r in zip(specs, replies):
            if isinstance(r, errors.ServerError):
                out.append(_Failed(r))
                continue
            kw = {k: v for k, v in s.items() if k not in ("invocation", "tool", "args")}
            out.append(self.call(s["invocation"], s["tool"], s.get("args"), _intent_result=r, **kw))
        return out

    def close(self) -> None:
        self.runtime.client.request("session.close", {"session": self.id})


class Call:
    """One tool call's scope (see Session.call). Use it once, with `with`."""

    def __init__(self, client: Client, session: str, invocation: str, tool: str, args: Any,
                 flow: Any, approve: Optional[Approver], approval_timeout: Optional[float]):
        self._client, self._flow = client, flow
        self._approve, self._timeout = approve, approval_timeout
        self.session, self.invocation, self.tool, self.args = session, invocation, tool, args
        self.verdict = ""
        self.decision: Dict[str, Any] = {}
        self.attempt = 0
        self.token = ""
        self._state = "new"
        self._outcome: Optional[Outcome] = None

    def finish(self, value: Any = None, **fields: Any) -> None:
        """Set the outcome recorded when the scope ends: a return value (see
        Session.run) or Outcome's fields (status, exit_code, output, error)."""
        if self._state != "running":
            raise errors.DocketError(f"{self.invocation}: finish() belongs inside the call scope")
        outcome = outcome_of(fields if value is None and fields else value)
        outcome.params()  # a bad outcome fails here, inside the scope, and becomes an error outcome
        self._outcome = outcome

    def __enter__(self) -> "Call":
        if self._state != "new":
            raise errors.DocketError(f"{self.invocation}: a call scope is entered once")
        self._state = "entering"
        d: _flow.Dispatched = _drive(self._client, self._flow, self._approve, self._timeout)
        self.verdict, self.decision, self.attempt, self.token = d.verdict, d.decision, d.attempt, d.token
        self._state = "running"
        return self

    def __exit__(self, et: Any, exc: Optional[BaseException], tb: Any) -> None:
        outcome = outcome_of_exception(exc) if exc is not None else (self._outcome or Outcome())
        self._state = "done"
        _drive(self._client, _flow.leave(self.session, self.invocation, outcome), None, None)


class _Failed:
    """A batched intent the server refused: entering raises its error."""

    def __init__(self, error: errors.ServerError):
        self.error = error

    def __enter__(self) -> Call:
        raise self.error

    def __exit__(self, *exc: Any) -> None:
        return None
