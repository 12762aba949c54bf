#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Seeded generator for the redaction property test (cases/redact-property.sh).

  redact_property.py gen SEED EVENTS.jsonl SECRETS.txt
      sessions whose env maps, nested tool args, prompts and JSON outputs hold
      secrets under secret key names in every spelling (DB_PASSWORD, apiKey,
      X-Auth-Token, Client-Secret ...), at any depth, as values of any type,
      and secrets used as object keys; SECRETS.txt lists the secret parts.
  redact_property.py scan SECRETS.txt FILE...
      prints, per file, how many of the secrets occur in it ("none", "all", "K of N").
"""
import json
import random
import sys

NAMES = ["password", "passwd", "passphrase", "api_key", "token", "access_token", "refresh_token",
         "id_token", "auth_token", "secret", "client_secret", "secret_key", "secret_access_key",
         "private_key", "authorization", "cookie", "credential", "credentials"]
PREFIXES = ["", "", "db", "github", "x", "my", "openai", "proxy"]
PLAIN = ["path", "mode", "count", "name", "url", "items", "region", "max_tokens", "token_count",
         "secret_name", "key_id", "tokenizer"]
ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


class Gen:
    def __init__(self, seed):
        self.rng = random.Random(seed)
        self.secrets = []

    def secret(self):
        # a value no pattern knows: only its key can give it away
        s = "zq%016x" % self.rng.getrandbits(64)
        self.secrets.append(s)
        return s

    def token_key(self):
        # a secret the patterns know, used as an object key
        r = self.rng
        body = "".join(r.choice(ALNUM) for _ in range(36))
        key = r.choice(["ghp_", "gho_"]) + body
        self.secrets.append(body)
        return key

    def spelling(self, name):
        r = self.rng
        words = ([r.choice(PREFIXES)] if r.random() < 0.5 else []) + name.split("_")
        words = [w for w in words if w]
        style = r.randrange(6)
        if style == 0:
            return "_".join(words)
        if style == 1:
            return "_".join(words).upper()
        if style == 2:
            return "-".join(w.capitalize() for w in words)
        if style == 3:
            return words[0] + "".join(w.capitalize() for w in words[1:])
        if style == 4:
            return "".join(w.capitalize() for w in words)
        return "-".join(words)

    def secret_value(self, depth):
        r = self.rng
        kind = r.randrange(5)
        if kind == 0:
            return self.secret()
        if kind == 1:
            return int(self.secret()[2:10], 16)   # numeric: its digits are the secret
        if kind == 2:
            return {"value": self.secret(), "note": "rotated"}
        if kind == 3:
            return [self.secret(), self.secret()]
        return "Bearer " + self.secret()

    def tree(self, depth):
        r = self.rng
        obj = {}
        for _ in range(r.randrange(1, 5)):
            roll = r.random()
            if roll < 0.35:
                obj[self.spelling(r.choice(NAMES))] = self.secret_value(depth)
            elif roll < 0.45:
                obj[self.token_key()] = r.choice(["1", "on", "x"])
            elif roll < 0.7 and depth < 4:
                obj[r.choice(PLAIN) + str(r.randrange(9))] = self.tree(depth + 1)
            elif roll < 0.85 and depth < 4:
                obj[r.choice(PLAIN)] = [self.tree(depth + 1) for _ in range(r.randrange(1, 3))]
            else:
                obj[r.choice(PLAIN) + str(r.randrange(99))] = r.choice(["a", 7, True, None, "/tmp"])
        return obj


def forms(s):
    """The ways a secret can appear: itself, and numeric ones as their decimal digits."""
    return [s] + ([str(int(s[2:10], 16))] if s.startswith("zq") else [])


def gen(seed, events_path, secrets_path):
    g = Gen(seed)
    out = []
    for s in range(3):
        sess = "prop-%d-%d" % (seed, s)
        env = {"PATH": "/usr/bin", "HOME": "/home/ana"}
        for _ in range(3):
            env[g.spelling(g.rng.choice(NAMES)).upper().replace("-", "_")] = g.secret()
        env[g.token_key()] = "1"
        out.append({"type": "session.opened", "session": sess, "runtime": "prop/1", "env": env})
        for i in range(8):
            inv = "call_%d" % i
            tool = g.rng.choice(["deploy", "http_request", "mcp"])
            args = g.tree(0)
            if tool == "mcp":
                args = {"server": "vault", "tool": "read", "arguments": args}
            ask = g.rng.random() < 0.4
            out.append({"type": "tool.intent", "session": sess, "invocation": inv, "tool": tool,
                        "args": args, "decision": {"verdict": "approval_required" if ask else "allowed",
                                                    "source": "runtime"}})
            if ask:
                out.append({"type": "approval.requested", "session": sess, "invocation": inv,
                            "request": "r" + inv, "reviewer": "user",
                            "prompt": "Allow with token %s?" % g.token_key()})
                out.append({"type": "approval.settled", "session": sess, "invocation": inv,
                            "request": "r" + inv, "result": "approved", "actor": "user:ana"})
            out.append({"type": "tool.dispatched", "session": sess, "invocation": inv})
            output = json.dumps(g.tree(0), indent=g.rng.choice([None, 2]))
            out.append({"type": "tool.completed", "session": sess, "invocation": inv, "status": "ok",
                        "exit_code": 0, "output": output})
        out.append({"type": "session.closed", "session": sess})
    text = "".join(json.dumps(e) + "\n" for e in out)
    with open(events_path, "w") as f:
        f.write(text)
    # a key drawn twice keeps its last value: list only the secrets the events hold
    with open(secrets_path, "w") as f:
        for s in g.secrets:
            if any(n in text for n in forms(s)):
                f.write(s + "\n")


def scan(secrets_path, files):
    secrets = [s for s in open(secrets_path).read().split("\n") if s]
    needles = [forms(s) for s in secrets]
    for path in files:
        data = open(path, encoding="utf-8", errors="replace").read()
        found = sum(1 for f in needles if any(n in data for n in f))
        what = "none" if found == 0 else "all" if found == len(secrets) else "%d of %d" % (found, len(secrets))
        print("%s: %s of the secrets" % (path, what))


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "gen":
        gen(int(sys.argv[2]), sys.argv[3], sys.argv[4])
    elif len(sys.argv) >= 4 and sys.argv[1] == "scan":
        scan(sys.argv[2], sys.argv[3:])
    else:
        sys.exit(__doc__)
