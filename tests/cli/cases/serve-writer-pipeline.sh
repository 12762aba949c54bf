# The writer thread (docs/write-path.md §4): while one batch commits, the
# next is prepared from the clients with nothing in flight. Six runtimes on
# their own sessions, two connections taking turns on one shared session
# (one sends the intent, the other completes it the moment the intent is
# acknowledged; then one sends the intent and the other its dispatch at
# once), and an operator sending barriers (recover.plan, a
# session-less call, and policy.set) and opening sessions throughout: every call is
# answered, none wrongly refused, none lost, and the ledger verifies.
docket init >/dev/null
docket serve --socket "$PWD/d.sock" 2>serve.err &
pid=$!
wait_for serve.err "serving on" || exit 1
timeout 120 python3 - "$PWD/d.sock" <<'PY'
import json, socket, sys, threading
path = sys.argv[1]
POLICY = {"version": 1, "commands": [{"pattern": ["echo"], "decision": "allow"}]}
ARGS = {"command": ["echo", "hi"]}
N = 40
errors, lock = [], threading.Lock()

class Conn:
    def __init__(self):
        self.s = socket.socket(socket.AF_UNIX); self.s.connect(path); self.buf = b""; self.id = 0
    def send(self, method, params):
        self.id += 1
        self.s.sendall((json.dumps({"jsonrpc": "2.0", "id": self.id, "method": method, "params": params}) + "\n").encode())
    def rpc(self, method, params):
        self.send(method, params)
        return self.recv(method, params)
    def recv(self, method, params):
        while b"\n" not in self.buf:
            chunk = self.s.recv(65536)
            if not chunk:
                raise RuntimeError("connection closed")
            self.buf += chunk
        line, _, self.buf = self.buf.partition(b"\n")
        reply = json.loads(line)
        if reply.get("id") != self.id:
            with lock: errors.append("%s: reply %r out of order" % (method, reply.get("id")))
        if "error" in reply:
            with lock: errors.append("%s %s: %s" % (method, params.get("session"), reply["error"]["message"]))
            return None
        return reply["result"]

def open_session(c, name, session):
    epoch = c.rpc("runtime.start", {"runtime": name})["epoch"]
    c.rpc("session.open", {"session": session, "runtime": name, "cwd": "/tmp"})
    c.rpc("policy.set", {"session": session, "format": "docket", "policy": POLICY})
    return epoch

def call(c, session, inv, finisher=None):
    r = c.rpc("tool.intent", {"session": session, "invocation": inv, "tool": "shell", "args": ARGS,
                             "recovery": "replay_safe", "dispatch_if_allowed": True})
    if r is not None and not r.get("dispatched"):
        with lock: errors.append("%s %s not dispatched" % (session, inv))
    (finisher or c).rpc("tool.complete", {"session": session, "invocation": inv, "status": "ok",
                                          "exit_code": 0, "output": "hi\n"})

def runtime(i):
    c = Conn(); open_session(c, "rt%d" % i, "s%d" % i)
    for k in range(N):
        call(c, "s%d" % i, "i%d" % k)

# set up before the threads: runtime.attach binds to the epoch started last
a, b = Conn(), Conn()
b.rpc("runtime.attach", {"epoch": open_session(a, "shared", "shared")})
op = Conn()
op.rpc("runtime.start", {"runtime": "op"})

def shared():
    for k in range(N):
        call(a, "shared", "x%d" % k, finisher=b)
    # the intent sent on one connection and its dispatch on the other at
    # once: the dispatch lands in the intent's batch, or in the next one
    # (prepared only once the intent is committed), never refused
    for k in range(N):
        inv = {"session": "shared", "invocation": "y%d" % k}
        a.send("tool.intent", dict(inv, tool="shell", args=ARGS, recovery="replay_safe"))
        b.rpc("tool.dispatch", inv)
        a.recv("tool.intent", inv)
        b.rpc("tool.complete", dict(inv, status="ok", exit_code=0, output="hi\n"))

def operator():
    c = op
    for k in range(N // 2):
        c.rpc("recover.plan", {})
        c.rpc("session.open", {"session": "op%d" % k, "runtime": "op", "cwd": "/tmp"})
        c.rpc("policy.set", {"session": "op%d" % k, "format": "docket", "policy": POLICY})

threads = [threading.Thread(target=runtime, args=(i,)) for i in range(6)]
threads += [threading.Thread(target=shared), threading.Thread(target=operator)]
for t in threads: t.start()
for t in threads: t.join()
print("errors:", len(errors))
for e in errors[:5]: print(" ", e)
PY
kill -TERM $pid
wait $pid
echo "exit $?"
docket log --json | python3 -c '
import json, sys, collections
n = collections.Counter(json.loads(l)["type"] for l in sys.stdin)
print("intents", n["tool.intent"], "dispatched", n["tool.dispatched"], "completed", n["tool.completed"])'
docket pending
docket verify >/dev/null && echo verified

# A runtime (not the operator: --runtimes) opens sessions on one
# connection while a second connection of the same runtime sends an intent
# about each the moment its open is sent: the intent is in the open's
# batch, or waits until the open is committed (the ownership check reads
# the session's owner), never refused as another runtime's
docket serve --socket "$PWD/r.sock" --runtimes "$(id -u)" 2>serve2.err &
pid=$!
wait_for serve2.err "serving on" || exit 1
timeout 120 python3 - "$PWD/r.sock" <<'PY'
import json, socket, sys
path = sys.argv[1]
def conn():
    s = socket.socket(socket.AF_UNIX); s.connect(path); return s, s.makefile("rw")
def send(f, i, method, params):
    f.write(json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}) + "\n"); f.flush()
def recv(f):
    return json.loads(f.readline())
(sa, a), (sb, b) = conn(), conn()
send(a, 0, "runtime.start", {"runtime": "rt"}); epoch = recv(a)["result"]["epoch"]
send(b, 0, "runtime.attach", {"epoch": epoch}); recv(b)
bad = 0
for k in range(60):
    send(a, k + 1, "session.open", {"session": "o%d" % k, "runtime": "rt", "cwd": "/tmp"})
    send(b, k + 1, "tool.intent", {"session": "o%d" % k, "invocation": "i", "tool": "shell",
                                   "args": {"command": ["echo", "hi"]}, "recovery": "replay_safe"})
    for f in (a, b):
        r = recv(f)
        if "error" in r:
            bad += 1
            if bad == 1: print(" ", r["error"]["message"])
print("refused:", bad)
PY
kill -TERM $pid
wait $pid
echo "exit $?"
