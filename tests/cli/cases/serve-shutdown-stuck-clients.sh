# SIGTERM with six clients that never read their replies: serve commits the
# batch in flight and gives the replies owed one --client-timeout in all
# (it once waited 5 s per client), then stops; what was acknowledged to the
# ledger is there and verifies
docket init >/dev/null
docket serve --socket "$PWD/d.sock" --client-timeout 2 2>serve.err &
pid=$!
wait_for serve.err "serving on" || exit 1
python3 - "$PWD/d.sock" "$pid" <<'PY'
import json, os, signal, socket, subprocess, sys, time
path, pid = sys.argv[1], int(sys.argv[2])
clients = []
for i in range(6):
    s = socket.socket(socket.AF_UNIX); s.connect(path); s.setblocking(False)
    opening = [{"jsonrpc": "2.0", "id": 1, "method": "runtime.start", "params": {"runtime": "r%d" % i}},
               {"jsonrpc": "2.0", "id": 2, "method": "session.open", "params": {"session": "s%d" % i}}]
    s.sendall(''.join(json.dumps(r) + '\n' for r in opening).encode())
    clients.append(s)
# wait until the six sessions are committed, then keep every client's
# replies piling up unread
for _ in range(200):
    out = subprocess.run(['docket', 'sessions', '--json'], capture_output=True, text=True).stdout
    if all('"s%d"' % i in out for i in range(6)):
        break
    time.sleep(0.05)
junk = b'x\n' * 65536
for _ in range(20):
    for s in clients:
        try: s.send(junk)
        except BlockingIOError: pass
def running():  # serve is bash's child: gone, or a zombie, once it stopped
    try:
        return open('/proc/%d/stat' % pid).read().rsplit(')', 1)[1].split()[0] != 'Z'
    except FileNotFoundError:
        return False
os.kill(pid, signal.SIGTERM)
t = time.monotonic()
while running() and time.monotonic() - t < 30:
    time.sleep(0.05)
print('stopped within 15 s:', time.monotonic() - t < 15)
PY
wait $pid
echo "exit $?"
grep -c "stopping: client .* bytes of replies unread" serve.err | sed 's/^[1-6]$/some clients left replies unread/'
docket sessions | grep -c '^s[0-5]'
docket verify >/dev/null && echo verified
