#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""bench_clients (Python half): one allowed call (tool.intent with
dispatch_if_allowed, then tool.complete) through docket_client's call scope
against the same two requests over raw JSON-RPC on a socket, interleaved
call by call on the same server. Prints the medians per call, the ratio,
and the CPU time the calling process spent per call on each side.

usage: bench_clients.py SOCKET CALLS_PER_ROUND ROUNDS"""
import json
import socket
import statistics
import sys
import time

import docket_client as docket

POLICY = {"version": 1, "commands": [{"pattern": ["echo"], "decision": "allow"}]}


class Raw:
    """The hand-written client a runtime would otherwise write."""

    def __init__(self, path):
        self.s = socket.socket(socket.AF_UNIX)
        self.s.connect(path)
        self.buf = b""
        self.id = 0

    def rpc(self, method, params):
        self.id += 1
        self.s.sendall((json.dumps({"jsonrpc": "2.0", "id": self.id, "method": method,
                                    "params": params}) + "\n").encode())
        while b"\n" not in self.buf:
            self.buf += self.s.recv(65536)
        line, _, self.buf = self.buf.partition(b"\n")
        reply = json.loads(line)
        if "error" in reply:
            raise RuntimeError(reply["error"])
        return reply["result"]


def main():
    path, n, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    dk = docket.connect(path)
    rt = dk.start("bench/1")
    raw = Raw(path)  # the same runtime on a second connection (a second start would fence the first)
    raw.rpc("runtime.attach", {"epoch": rt.epoch})
    raw.rpc("session.open", {"session": "raw", "runtime": "bench/1", "cwd": "/tmp"})
    raw.rpc("policy.set", {"session": "raw", "format": "docket", "policy": POLICY})
    s = rt.open_session("client", cwd="/tmp", policy=POLICY)
    args = {"command": ["echo", "hi"]}
    t_raw, t_client = [], []
    cpu = {"raw": 0.0, "client": 0.0}

    def raw_call(inv):
        res = raw.rpc("tool.intent", {"session": "raw", "invocation": inv, "tool": "shell", "args": args,
                                      "recovery": "replay_safe", "dispatch_if_allowed": True})
        assert res["dispatched"], res
        raw.rpc("tool.complete", {"session": "raw", "invocation": inv, "status": "ok", "exit_code": 0,
                                  "output": "hi\n"})

    def client_call(inv):
        with s.call(inv, "shell", args, recovery="replay_safe") as call:
            call.finish("hi\n")
    # one of each per step, alternating which goes first, so both see the
    # same disk and the same neighbours; the medians compare like with like
    for i in range(n * rounds):
        pair = [(raw_call, t_raw), (client_call, t_client)]
        for fn, out in (pair if i % 2 == 0 else pair[::-1]):
            side = "raw" if fn is raw_call else "client"
            c0, t0 = time.process_time(), time.perf_counter()
            fn(f"{side[0]}{i}")
            out.append(time.perf_counter() - t0)
            cpu[side] += time.process_time() - c0
    assert rt.recover() == [], "calls left pending"
    mr, mc = statistics.median(t_raw), statistics.median(t_client)
    print(f"python      raw JSON-RPC {mr * 1e6:8.0f} us/call   docket_client {mc * 1e6:8.0f} us/call   "
          f"ratio {mc / mr:.3f} (median of {n * rounds} calls each, interleaved); "
          f"client CPU {cpu['raw'] / len(t_raw) * 1e6:.0f} vs {cpu['client'] / len(t_client) * 1e6:.0f} us/call")


if __name__ == "__main__":
    main()
