#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A scripted stand-in for the Anthropic Messages API (loopback only).

Usage:
    python3 anthropic_stub.py --script SCRIPT.json --port-file PORTFILE \
        [--log REQUESTS.jsonl] [--idle SECONDS]

    export ANTHROPIC_BASE_URL=http://127.0.0.1:$(cat PORTFILE)
    export ANTHROPIC_API_KEY=stub
    claude -p "anything" ...

The script is a JSON list. Each request that offers tools (a non-empty
"tools" array) is answered with the next element:

    {"name": "Bash", "input": {"command": "ls"}}            one tool call
    [{"name": "Read", ...}, {"name": "Bash", ...}]          parallel calls
    "All done."                                             a final text

Once the list is used up (or for a request without tools: titles,
summaries, quota probes) the answer is a short text ("ok", or the script's
last string). Tool-use ids are deterministic: toolu_stub_<step>_<index>
(step and index from 1), so a test can name the calls it expects in the
ledger. Answers stream as server-sent events exactly like the real API when
the request says "stream": true, else they are one JSON message.

--log appends one JSON line per request ({"path", "body"}), so a test can
check what the client sent back (tool results, denials). The server binds
127.0.0.1 on a free port, writes the port to PORTFILE, and exits after
--idle seconds (default 300) without a request.
"""
import json
import time
from http.server import BaseHTTPRequestHandler

import stub_common


def blocks_for(step, element):
    if isinstance(element, str):
        return [{"type": "text", "text": element}], "end_turn"
    calls = element if isinstance(element, list) else [element]
    blocks = []
    for i, c in enumerate(calls, 1):
        blocks.append({"type": "tool_use", "id": "toolu_stub_%d_%d" % (step, i),
                       "name": c["name"], "input": c.get("input", {})})
    return blocks, "tool_use"


def message(blocks, stop, model):
    return {"id": "msg_stub_%d" % int(time.time() * 1000), "type": "message",
            "role": "assistant", "model": model, "content": blocks,
            "stop_reason": stop, "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 10,
                      "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}


def sse_events(msg):
    head = dict(msg, content=[], stop_reason=None)
    head["usage"] = dict(msg["usage"], output_tokens=1)
    yield "message_start", {"type": "message_start", "message": head}
    for i, b in enumerate(msg["content"]):
        if b["type"] == "text":
            yield "content_block_start", {"type": "content_block_start", "index": i,
                                          "content_block": {"type": "text", "text": ""}}
            yield "content_block_delta", {"type": "content_block_delta", "index": i,
                                          "delta": {"type": "text_delta", "text": b["text"]}}
        else:
            start = dict(b, input={})
            yield "content_block_start", {"type": "content_block_start", "index": i,
                                          "content_block": start}
            yield "content_block_delta", {"type": "content_block_delta", "index": i,
                                          "delta": {"type": "input_json_delta",
                                                    "partial_json": json.dumps(b["input"])}}
        yield "content_block_stop", {"type": "content_block_stop", "index": i}
    yield "message_delta", {"type": "message_delta",
                            "delta": {"stop_reason": msg["stop_reason"], "stop_sequence": None},
                            "usage": {"output_tokens": msg["usage"]["output_tokens"]}}
    yield "message_stop", {"type": "message_stop"}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):  # quiet
        pass

    def _json(self, code, obj):
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self.server.touch()
        self._json(404, {"type": "error", "error": {"type": "not_found_error", "message": "stub"}})

    def do_HEAD(self):
        self.server.touch()
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def do_POST(self):
        self.server.touch()
        n = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(n) if n else b"{}"
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        self.server.log_body(self.path, body)
        path = self.path.split("?")[0]
        if path.endswith("/count_tokens"):
            return self._json(200, {"input_tokens": 10})
        if not path.endswith("/v1/messages"):
            return self._json(404, {"type": "error",
                                    "error": {"type": "not_found_error", "message": path}})
        model = body.get("model", "claude-stub")
        if body.get("tools"):
            step, element = self.server.next_step()
        else:
            step, element = 0, "ok"
        blocks, stop = blocks_for(step, element)
        msg = message(blocks, stop, model)
        if not body.get("stream"):
            return self._json(200, msg)
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()
        for name, data in sse_events(msg):
            self.wfile.write(("event: %s\ndata: %s\n\n" % (name, json.dumps(data))).encode())
        self.wfile.flush()
        self.close_connection = True


if __name__ == "__main__":
    stub_common.main(__doc__, Handler)
