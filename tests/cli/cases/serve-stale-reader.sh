# a reader killed inside a read transaction leaves its slot in lock.mdb and
# pins the pages it could see: every later commit then grows the file (a
# long-lived serve went 3.9 -> 674 MiB). serve clears such slots
# (mdb_reader_check) every 64 commits or second: commits after the reader
# died grow the file far less than the same commits under a live reader
docket init >/dev/null
docket serve --socket "$PWD/d.sock" 2>serve.err &
pid=$!
wait_for serve.err "serving on" || exit 1
python3 - "$PWD/d.sock" "$PWD/ledger" <<'PY'
import json, os, signal, socket, subprocess, sys, time
path, ledger = sys.argv[1], sys.argv[2]
reader = r'''
import ctypes, sys, time
lmdb = ctypes.CDLL("liblmdb.so.0")
env, txn = ctypes.c_void_p(), ctypes.c_void_p()
assert lmdb.mdb_env_create(ctypes.byref(env)) == 0
assert lmdb.mdb_env_open(env, sys.argv[1].encode(), 0x20000, 0o600) == 0   # MDB_RDONLY
assert lmdb.mdb_txn_begin(env, None, 0x20000, ctypes.byref(txn)) == 0
print("reading", flush=True)
time.sleep(600)
'''
s = socket.socket(socket.AF_UNIX); s.connect(path); f = s.makefile('rb')
n = 0
def call(method, params):
    global n
    n += 1
    s.sendall((json.dumps({"jsonrpc": "2.0", "id": n, "method": method, "params": params}) + "\n").encode())
    r = json.loads(f.readline())
    assert 'result' in r, r
def commits(k):
    before = os.path.getsize(ledger + '/data.mdb')
    for _ in range(k):
        call("tool.intent", {"session": "s", "invocation": "c%d" % n, "tool": "shell",
                             "args": {"command": ["echo", "x" * 2000]},
                             "decision": {"verdict": "allowed", "source": "runtime"}})
    return os.path.getsize(ledger + '/data.mdb') - before
call("runtime.start", {"runtime": "a"})
call("session.open", {"session": "s"})
commits(100)  # the file reaches its working size
r = subprocess.Popen([sys.executable, '-c', reader, ledger], stdout=subprocess.PIPE)
assert r.stdout.readline() == b'reading\n'
live = commits(300)
r.send_signal(signal.SIGKILL); r.wait()
commits(100)  # serve notices within 64 commits
dead = commits(300)
print('growth under a live reader over 1 MiB:', live > (1 << 20))
print('growth after it died under a quarter of that:', dead < live / 4)
PY
kill -TERM $pid
wait $pid
echo "exit $?"
grep "stale reader" serve.err
