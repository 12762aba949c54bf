# SPDX-License-Identifier: Apache-2.0
# The ten-line example of docs/clients.md: one durable tool call.
import os, subprocess, sys
import docket_client as docket

policy = {"version": 1, "commands": [{"pattern": ["echo"], "decision": "allow"}]}
with docket.spawn(sys.argv[1]) as dk:                     # or docket.connect("/run/docket.sock")
    rt = dk.start("my-agent/1.0")                          # raises the epoch: older instances are fenced
    s = rt.open_session("s-1", cwd=os.getcwd(), policy=policy)
    with s.call("call-1", "shell", {"command": ["echo", "hi"]}, recovery="replay_safe") as call:
        r = subprocess.run(call.args["command"], capture_output=True, text=True)
        call.finish(r)                                     # T2 is durable before we use the result
    print(call.verdict, call.token, r.stdout.strip())
