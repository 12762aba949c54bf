#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A scripted stand-in for the OpenAI Responses API (loopback only), for Codex.

Usage:
    python3 openai_stub.py --script SCRIPT.json --port-file PORTFILE \
        [--log REQUESTS.jsonl] [--idle SECONDS]

    # $CODEX_HOME/config.toml
    model_provider = "stub"
    [model_providers.stub]
    name = "stub"
    base_url = "http://127.0.0.1:PORT/v1"
    wire_api = "responses"

The script is a JSON list; each request that offers tools gets the next
element:

    {"shell": "ls -la"}                  a shell call, in whatever form the
                                         request offers (exec_command,
                                         shell_command or shell)
    {"name": "X", "arguments": {...}}    a function call as it is
    {"namespace": "mcp__S", "name": "T", "arguments": {...}}
                                         a tool of an offered namespace
                                         (Codex 0.171 offers MCP server S so)
    [ ... ]                              several calls at once (parallel)
    "Done."                              a final message

Call ids are call_stub_<step>_<index>. Answers stream as server-sent events
(response.created, response.output_item.done per item, response.completed).
"""
import json
import time
from http.server import BaseHTTPRequestHandler

import stub_common


def tool_names(body):
    names = set()
    for t in body.get("tools") or []:
        names.add(t.get("name") or (t.get("function") or {}).get("name"))
    return names


def shell_call(script, offered):
    if "exec_command" in offered:
        return "exec_command", {"cmd": script}
    if "shell_command" in offered:
        return "shell_command", {"command": script}
    return "shell", {"command": ["bash", "-lc", script]}


def items_for(step, element, offered):
    if isinstance(element, str):
        return [{"type": "message", "role": "assistant", "id": "msg_stub_%d" % step,
                 "status": "completed",
                 "content": [{"type": "output_text", "text": element, "annotations": []}]}]
    calls = element if isinstance(element, list) else [element]
    items = []
    for i, c in enumerate(calls, 1):
        if "shell" in c:
            name, args = shell_call(c["shell"], offered)
        else:
            name, args = c["name"], c.get("arguments", {})
        item = {"type": "function_call", "id": "fc_stub_%d_%d" % (step, i),
                "call_id": "call_stub_%d_%d" % (step, i), "name": name,
                "arguments": json.dumps(args), "status": "completed"}
        if "namespace" in c:  # a tool of a namespace the request offers (Codex: MCP servers)
            item["namespace"] = c["namespace"]
        items.append(item)
    return items


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def do_GET(self):
        self.server.touch()
        data = json.dumps({"object": "list", "data": [], "models": []}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        self.server.touch()
        n = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(n) if n else b"{}"
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        self.server.log_body(self.path, body)
        offered = tool_names(body)
        step, element = (self.server.next_step() if offered else (0, "ok"))
        items = items_for(step, element, offered)
        rid = "resp_stub_%d_%d" % (step, int(time.time() * 1000))
        resp = {"id": rid, "object": "response", "created_at": int(time.time()), "status": "completed",
                "model": body.get("model", "stub"), "output": items,
                "usage": {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
                          "output_tokens": 10, "output_tokens_details": {"reasoning_tokens": 0},
                          "total_tokens": 20}}
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()
        events = [("response.created", {"type": "response.created",
                                        "response": dict(resp, status="in_progress", output=[])})]
        for i, it in enumerate(items):
            events.append(("response.output_item.added", {"type": "response.output_item.added",
                                                          "output_index": i, "item": it}))
            events.append(("response.output_item.done", {"type": "response.output_item.done",
                                                         "output_index": i, "item": it}))
        events.append(("response.completed", {"type": "response.completed", "response": resp}))
        for name, data in events:
            self.wfile.write(("event: %s\ndata: %s\n\n" % (name, json.dumps(data))).encode())
        self.wfile.flush()
        self.close_connection = True


if __name__ == "__main__":
    stub_common.main(__doc__, Handler)
