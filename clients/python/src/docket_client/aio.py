# SPDX-License-Identifier: Apache-2.0
"""The asyncio API: the same model as docket_client.sync, with awaitables.

Approval waits are awaited with an optional timeout (settled ``expired``)
and follow asyncio cancellation: cancelling the task that waits settles the
request ``aborted``, records the outcome ``denied``, then re-raises
CancelledError."""
import asyncio
import inspect
from typing import (Any, Awaitable, Callable, Dict, Iterable, List, Mapping, Optional,
                    Sequence, Tuple, Union)

from . import _flow, errors
from ._model import (Approval, ApprovalRequest, Outcome, Pending, init_argv, intent_params,
                     outcome_of, outcome_of_exception, parse_reply, pending_from,
                     request_line, result_of, serve_argv)

AsyncApprover = Callable[[ApprovalRequest], Union[Awaitable[Any], bool, str, Approval]]
AsyncReconciler = Callable[[Pending], Any]
_DEFAULT: Any = object()
_LIMIT = 64 * 1024 * 1024


class Client:
    """One asyncio connection to `docket serve`."""

    def __init__(self, reader: asyncio.StreamReader, writer: Any,
                 proc: Optional[asyncio.subprocess.Process] = None, timeout: Optional[float] = 30.0):
        self._reader, self._writer, self._proc = reader, writer, proc
        self.timeout = timeout
        self._next_id = 1
        self._waiting: Dict[int, "asyncio.Future[Dict[str, Any]]"] = {}
        self._failure: Optional[BaseException] = None
        self._task = asyncio.get_running_loop().create_task(self._read_loop())

    async def _read_loop(self) -> None:
        try:
            while True:
                line = await self._reader.readline()
                if not line:
                    raise errors.ConnectionLost("docket serve closed the connection")
                rid, msg = parse_reply(line)
                if rid is None and "error" in msg and self._waiting:
                    rid = min(self._waiting)  # a line the server could not read: the oldest in flight
                fut = self._waiting.pop(rid, None) if isinstance(rid, int) else None
                if fut is not None and not fut.done():
                    fut.set_result(msg)
        except (Exception, asyncio.CancelledError) as e:
            fail = e if isinstance(e, errors.DocketError) else errors.ConnectionLost(f"connection failed: {e!r}")
            self._failure = fail
            for fut in self._waiting.values():
                if not fut.done():
                    fut.set_exception(fail)
            self._waiting.clear()

    def _send(self, calls: Sequence[Tuple[str, Optional[Dict[str, Any]]]]) -> List["asyncio.Future[Any]"]:
        if self._failure is not None:
            raise self._failure
        loop = asyncio.get_running_loop()
        first = self._next_id
        self._next_id += len(calls)
        futs = []
        for i in range(len(calls)):
            fut: "asyncio.Future[Dict[str, Any]]" = loop.create_future()
            self._waiting[first + i] = fut
            futs.append(fut)
        self._writer.write(b"".join(request_line(first + i, m, p) for i, (m, p) in enumerate(calls)))
        return futs

    async def _wait(self, futs: List["asyncio.Future[Any]"], timeout: Any) -> List[Dict[str, Any]]:
        t = self.timeout if timeout is _DEFAULT else timeout
        try:
            await self._writer.drain()
            return list(await asyncio.wait_for(asyncio.gather(*futs), t))
        except asyncio.TimeoutError:
            raise errors.RequestTimeout("no reply from docket serve in time; re-sending is safe") from None
        finally:
            for k in [k for k, f in self._waiting.items() if f in futs]:
                del self._waiting[k]

    async def request(self, method: str, params: Optional[Dict[str, Any]] = None,
                      timeout: Any = _DEFAULT) -> Any:
        (msg,) = await self._wait(self._send([(method, params)]), timeout)
        return result_of(msg, method)

    async def request_many(self, calls: Sequence[Tuple[str, Optional[Dict[str, Any]]]],
                           timeout: Any = _DEFAULT) -> List[Union[Any, errors.ServerError]]:
        msgs = await self._wait(self._send(calls), timeout)
        out: List[Any] = []
        for (m, _), msg in zip(calls, msgs):
            try:
                out.append(result_of(msg, m))
            except errors.ServerError as e:
                out.append(e)
        return out

    async def start(self, runtime: str) -> "Runtime":
        r = await self.request("runtime.start", {"runtime": runtime})
        return Runtime(self, runtime, int(r["epoch"]))

    async def close(self) -> None:
        self._task.cancel()
        try:
            await self._task
        except asyncio.CancelledError:
            pass
        self._writer.close()
        if self._proc is not None:
            try:
                await asyncio.wait_for(self._proc.wait(), 10)
            except asyncio.TimeoutError:
                self._proc.kill()
                await self._proc.wait()
        else:
            try:
                await self._writer.wait_closed()
            except OSError:
                pass

    async def __aenter__(self) -> "Client":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()


async def connect(path: str, timeout: Optional[float] = 30.0) -> Client:
    try:
        reader, writer = await asyncio.open_unix_connection(path, limit=_LIMIT)
    except OSError as e:
        raise errors.ConnectionLost(f"cannot connect to {path}: {e}") from None
    return Client(reader, writer, timeout=timeout)


async def spawn(ledger: Optional[str] = None, docket: str = "docket", args: Iterable[str] = (),
                timeout: Optional[float] = 30.0, init: bool = True, stderr: Any = None) -> Client:
    if init and ledger is not None:
        argv = init_argv(docket, ledger)
        if argv is not None:
            p = await asyncio.create_subprocess_exec(*argv, stdout=asyncio.subprocess.DEVNULL)
            if await p.wait() != 0:
                raise errors.DocketError(f"{' '.join(argv)} failed with status {p.returncode}")
    proc = await asyncio.create_subprocess_exec(*serve_argv(docket, ledger, list(args)),
                                                stdin=asyncio.subprocess.PIPE,
                                                stdout=asyncio.subprocess.PIPE, stderr=stderr,
                                                limit=_LIMIT)
    assert proc.stdout is not None and proc.stdin is not None
    return Client(proc.stdout, proc.stdin, proc=proc, timeout=timeout)


async def _ask(approve: Optional[AsyncApprover], req: ApprovalRequest,
               timeout: Optional[float]) -> Any:
    assert approve is not None
    try:
        got = approve(req)
        if inspect.isawaitable(got):
            got = await asyncio.wait_for(got, timeout) if timeout is not None else await got
        return got
    except asyncio.TimeoutError:
        return Approval("expired", "docket-client", f"no answer within {timeout:g} s")
    except Exception as e:  # the approver's failure denies, never allows
        return Approval("denied", "docket-client", f"approver failed: {type(e).__name__}: {e}")


async def _drive(client: Client, flow: Any, approve: Optional[AsyncApprover],
                 timeout: Optional[float]) -> Any:
    value: Any = None
    cancelled: Optional[BaseException] = None
    while True:
        try:
            step = flow.send(value)
        except StopIteration as stop:
            if cancelled is not None:
                raise cancelled
            return stop.value
        except errors.NotDispatched:
            if cancelled is not None:
                raise cancelled from None
            raise
        if isinstance(step, _flow.Rpc):
            if cancelled is None:
                value = await client.request(step.method, step.params)
            else:  # finishing the records of a cancelled wait: not cancellable again
                value = await asyncio.shield(client.request(step.method, step.params))
        else:
            try:
                value = await _ask(approve, step.request, timeout)
            except asyncio.CancelledError as e:
                cancelled = e
                value = Approval("aborted", "docket-client", "the approval wait was cancelled")


class Runtime:
    def __init__(self, client: Client, name: str, epoch: int):
        self.client, self.name, self.epoch = client, name, epoch

    async def open_session(self, session: str, *, cwd: Optional[str] = None,
                           policy: Optional[Any] = None, policy_format: str = "docket",
                           approve: Optional[AsyncApprover] = None,
                           approval_timeout: Optional[float] = None, **fields: Any) -> "Session":
        p: Dict[str, Any] = {"session": session, "runtime": self.name, **fields}
        if cwd is not None:
            p["cwd"] = cwd
        await self.client.request("session.open", p)
        if policy is not None:
            await self.client.request("policy.set", {"session": session, "format": policy_format,
                                                     "policy": policy})
        return self.session(session, approve=approve, approval_timeout=approval_timeout)

    def session(self, session: str, *, approve: Optional[AsyncApprover] = None,
                approval_timeout: Optional[float] = None) -> "Session":
        return Session(self, session, approve, approval_timeout)

    async def recover(self, reconcile: Optional[AsyncReconciler] = None,
                      approvals: str = "reprompt") -> List[Pending]:
        """See docket_client.sync.Runtime.recover; `reconcile` may be async."""
        params: Dict[str, Any] = {"approvals": approvals}
        if reconcile is not None:
            answers: Dict[str, Any] = {}
            plan = await self.client.request("recover.plan", params)
            for p in map(pending_from, plan.get("items", [])):
                if p.state == "in_doubt" and p.recovery == "reconcile" and p.token:
                    got = reconcile(p)
                    if inspect.isawaitable(got):
                        got = await got
                    if got is not None:
                        answers[p.token] = outcome_of(got).params()
            params["reconcile"] = answers
        plan = await self.client.request("recover.apply", params)
        return [pending_from(i) for i in plan.get("items", [])]

    def resume(self, pending: Pending, *, approve: Optional[AsyncApprover] = None,
               approval_timeout: Optional[float] = None, prompt: Optional[str] = None) -> "Call":
        return Call(self.client, pending.session, pending.invocation, pending.tool, None,
                    _flow.resume(pending, approve is not None, prompt), approve, approval_timeout)


class Session:
    def __init__(self, runtime: Runtime, session: str, approve: Optional[AsyncApprover],
                 approval_timeout: Optional[float]):
        self.runtime, self.id = runtime, session
        self.approve, self.approval_timeout = approve, approval_timeout

    def call(self, invocation: str, tool: str, args: Any = None, *,
             recovery: str = "never_auto_retry", verdict: Optional[str] = None,
             turn: Optional[str] = None, approve: Optional[AsyncApprover] = None,
             approval_timeout: Any = _DEFAULT, prompt: Optional[str] = None,
             _intent_result: Optional[Dict[str, Any]] = None) -> "Call":
        """`async with session.call(...) as call:` (see the sync API)."""
        intent = intent_params(self.id, invocation, tool, args, recovery, verdict, turn)
        ap = approve if approve is not None else self.approve
        t = self.approval_timeout if approval_timeout is _DEFAULT else approval_timeout
        return Call(self.runtime.client, self.id, invocation, tool, args,
                    _flow.enter(intent, ap is not None, prompt, _intent_result), ap, t)

    async def run(self, invocation: str, tool: str, args: Any,
                  fn: Callable[["Call"], Awaitable[Any]], **kw: Any) -> Any:
        async with self.call(invocation, tool, args, **kw) as call:
            value = await fn(call)
            call.finish(value)
            return value

    async def calls(self, specs: Sequence[Mapping[str, Any]]) -> List[Any]:
        specs = [dict(s) for s in specs]
        intents = [intent_params(self.id, s["invocation"], s["tool"], s.get("args"),
                                 s.get("recovery", "never_auto_retry"), s.get("verdict"), s.get("turn"))
                   for s in specs]
        replies = await self.runtime.client.request_many([("tool.intent", i) for i in intents])
        out: List[Any] = []
        for s, r in zip(specs, replies):
            if isinstance(r, errors.ServerError):
                out.append(_Failed(r))
                continue
            kw = {k: v for k, v in s.items() if k not in ("invocation", "tool", "args")}
            out.append(self.call(s["invocation"], s["tool"], s.get("args"), _intent_result=r, **kw))
        return out

    async def close(self) -> None:
        await self.runtime.client.request("session.close", {"session": self.id})


class Call:
    def __init__(self, client: Client, session: str, invocation: str, tool: str, args: Any,
                 flow: Any, approve: Optional[AsyncApprover], approval_timeout: Optional[float]):
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
        if self._state != "running":
            raise errors.DocketError(f"{self.invocation}: finish() belongs inside the call scope")
        outcome = outcome_of(fields if value is None and fields else value)
        outcome.params()  # a bad outcome fails here, inside the scope, and becomes an error outcome
        self._outcome = outcome

    async def __aenter__(self) -> "Call":
        if self._state != "new":
            raise errors.DocketError(f"{self.invocation}: a call scope is entered once")
        self._state = "entering"
        d: _flow.Dispatched = await _drive(self._client, self._flow, self._approve, self._timeout)
        self.verdict, self.decision, self.attempt, self.token = d.verdict, d.decision, d.attempt, d.token
        self._state = "running"
        return self

    async def __aexit__(self, et: Any, exc: Optional[BaseException], tb: Any) -> None:
        outcome = outcome_of_exception(exc) if exc is not None else (self._outcome or Outcome())
        self._state = "done"
        leave = _drive(self._client, _flow.leave(self.session, self.invocation, outcome), None, None)
        await (asyncio.shield(leave) if exc is not None else leave)


class _Failed:
    def __init__(self, error: errors.ServerError):
        self.error = error

    async def __aenter__(self) -> Call:
        raise self.error

    async def __aexit__(self, *exc: Any) -> None:
        return None
