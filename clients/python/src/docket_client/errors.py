# SPDX-License-Identifier: Apache-2.0
"""Typed errors: one class per documented ``data.kind``, plus the client's own.

Every server error carries the server's message, the JSON-RPC code, the
``data.kind`` and, for refused transitions, the broken invariant. A kind the
client does not know maps to :class:`ServerError` itself (never to success).
"""
from typing import Any, Dict, Optional, Type


class DocketError(Exception):
    """Base of every error this package raises."""


class ServerError(DocketError):
    """The server refused a request (a JSON-RPC error object)."""

    kind: str = ""

    def __init__(self, message: str, code: int = -32000, kind: str = "",
                 invariant: Optional[int] = None, data: Optional[Dict[str, Any]] = None,
                 method: str = ""):
        super().__init__(message)
        self.message = message
        self.code = code
        self.kind = kind or type(self).kind
        self.invariant = invariant
        self.data = data or {}
        self.method = method

    def __str__(self) -> str:
        where = f"{self.method}: " if self.method else ""
        return f"{where}{self.message} ({self.kind or 'unknown'}, {self.code})"


class InvalidTransition(ServerError):
    """The ledger refused an illegal step (``invalid_transition``)."""
    kind = "invalid_transition"


class StaleEpoch(ServerError):
    """A newer runtime took over: this one is fenced (``stale_epoch``)."""
    kind = "stale_epoch"


class Conflict(ServerError):
    """Same id, other content; or a second outcome (``conflict``)."""
    kind = "conflict"


class NotFound(ServerError):
    """Unknown session, invocation or method (``not_found``)."""
    kind = "not_found"


class BadRequest(ServerError):
    """Malformed params, unknown fields, limits (``bad_request``)."""
    kind = "bad_request"


class StorageError(ServerError):
    """The ledger could not commit (``storage``)."""
    kind = "storage"


class Busy(ServerError):
    """The server is full or out of descriptors: retry later (``busy``)."""
    kind = "busy"


class Forbidden(ServerError):
    """The connection's role may not do this (``forbidden``)."""
    kind = "forbidden"


KINDS: Dict[str, Type[ServerError]] = {
    c.kind: c for c in (InvalidTransition, StaleEpoch, Conflict, NotFound,
                        BadRequest, StorageError, Busy, Forbidden)
}


def server_error(error: Any, method: str = "") -> ServerError:
    """Build the typed error for a JSON-RPC error object (any shape)."""
    if not isinstance(error, dict):
        return ServerError(f"malformed error object: {error!r}", method=method)
    data = error.get("data") if isinstance(error.get("data"), dict) else {}
    kind = data.get("kind") if isinstance(data.get("kind"), str) else ""
    code = error.get("code") if isinstance(error.get("code"), int) else -32000
    inv = data.get("invariant") if isinstance(data.get("invariant"), int) else None
    message = error.get("message") if isinstance(error.get("message"), str) else "(no message)"
    cls = KINDS.get(kind, ServerError)
    return cls(message, code=code, kind=kind, invariant=inv, data=data, method=method)


class ProtocolError(DocketError):
    """The server sent something that is not a JSON-RPC reply."""


class ConnectionLost(DocketError):
    """The connection closed (or the child server exited) before the reply."""


class RequestTimeout(DocketError, TimeoutError):
    """No reply within the timeout. The request may still commit: re-sending
    it is safe (identical re-sends are idempotent)."""


class NotDispatched(DocketError):
    """The call may not run: raised when entering a call scope, before the
    body. The outcome (``denied``/``unsupported``) is already recorded."""

    def __init__(self, message: str, verdict: str, decision: Optional[Dict[str, Any]] = None,
                 settlement: Optional[str] = None):
        super().__init__(message)
        self.verdict = verdict
        self.decision = decision or {}
        self.settlement = settlement

    @property
    def reasons(self) -> list:
        r = self.decision.get("reasons")
        return list(r) if isinstance(r, list) else []


class Denied(NotDispatched):
    """docket's policy (or the runtime's decision) denied the call."""


class Unsupported(NotDispatched):
    """The call is of a kind the policy never allows to run."""


class ApprovalRefused(NotDispatched):
    """The approval wait ended without a grant: ``settlement`` is ``denied``,
    ``aborted``, ``expired`` or ``closed``."""


class AlreadyDispatched(NotDispatched):
    """A fresh scope for an invocation that was dispatched before: running the
    body again would dispatch it twice. After a crash use ``recover()``."""


class Undecided(NotDispatched):
    """Record mode and the runtime gave no decision: docket cannot decide, so
    the call is refused (fail closed) and recorded ``denied``."""
