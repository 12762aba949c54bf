# SPDX-License-Identifier: Apache-2.0
"""A runtime that enters four call scopes (one per recovery mode), runs each
body (a receipt), reports 'inside' and waits to be SIGKILLed before any T2."""
import contextlib
import sys
import time

import support
import docket_client as docket

sock, receipts = sys.argv[1], sys.argv[2]
ex = support.Executor(receipts)
with docket.connect(sock) as dk:
    rt = dk.start("crashy/1.0")
    s = rt.open_session("s-crash", cwd="/tmp", policy=support.POLICY)
    specs = [{"invocation": f"call-{m}", "tool": "shell", "args": {"command": ["echo", m]},
              "recovery": m} for m in docket.RECOVERY_MODES]
    with contextlib.ExitStack() as stack:
        for call in s.calls(specs):
            c = stack.enter_context(call)
            ex.run(c.invocation, c.token)
        print("inside", flush=True)
        time.sleep(60)
