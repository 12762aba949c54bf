# SPDX-License-Identifier: Apache-2.0
"""docket-client: make an agent runtime durable with `docket serve`.

    import docket_client as docket
    with docket.spawn("./ledger") as dk:
        rt = dk.start("my-agent/1.0")
        s = rt.open_session("s-1", cwd=".", policy=POLICY, approve=ask_user)
        with s.call("call-1", "shell", {"command": ["ls"]}, recovery="replay_safe") as call:
            call.finish(run(call.args, token=call.token))

The asyncio API is docket_client.aio (the same names, awaitable)."""
from . import aio, errors
from ._model import (RECOVERY_MODES, SETTLEMENTS, STATUSES, Approval, ApprovalRequest, Outcome,
                     Pending)
from .errors import (AlreadyDispatched, ApprovalRefused, BadRequest, Busy, Conflict,
                     ConnectionLost, Denied, DocketError, Forbidden, InvalidTransition,
                     NotDispatched, NotFound, ProtocolError, RequestTimeout, ServerError,
                     StaleEpoch, StorageError, Undecided, Unsupported)
from .sync import Call, Client, Runtime, Session, connect, spawn

__version__ = "0.1.0"
__all__ = [
    "aio", "errors", "connect", "spawn", "Client", "Runtime", "Session", "Call",
    "Outcome", "Approval", "ApprovalRequest", "Pending",
    "RECOVERY_MODES", "STATUSES", "SETTLEMENTS",
    "DocketError", "ServerError", "InvalidTransition", "StaleEpoch", "Conflict", "NotFound",
    "BadRequest", "StorageError", "Busy", "Forbidden", "ProtocolError", "ConnectionLost",
    "RequestTimeout", "NotDispatched", "Denied", "Unsupported", "ApprovalRefused", "Undecided",
    "AlreadyDispatched",
]
