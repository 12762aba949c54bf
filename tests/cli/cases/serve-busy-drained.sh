# A client serve turns away (--max-clients) hears why even when it wrote its
# first request before serve got to it: serve writes the busy line, shuts its
# side and reads and drops the client's input until the client closes or a
# second passes (closing a socket with unread input resets it, and the
# client then got ECONNRESET or EPIPE instead of the line: 500 of 500 such
# clients before this). At most 16 are drained at once; none is kept open
# past its second; a client served before still is.
docket init >/dev/null
docket serve --socket "$PWD/d.sock" --max-clients 1 2>serve.err &
pid=$!
wait_for serve.err "serving on" || exit 1
python3 - "$PWD/d.sock" "$pid" <<'PY'
import json, os, socket, sys, time
path, pid = sys.argv[1], sys.argv[2]
START = b'{"jsonrpc":"2.0","id":1,"method":"runtime.start","params":{"runtime":"%s"}}\n'
def connect():
    s = socket.socket(socket.AF_UNIX); s.connect(path); s.settimeout(10); return s
def read_all(s):
    data = b''
    while True:
        d = s.recv(65536)
        if not d:
            return data
        data += d
def fds():
    return len(os.listdir('/proc/%s/fd' % pid))
first = connect()
first.sendall(START % b'a')
print('first:', 'result' in json.loads(first.makefile('rb').readline()))
base = fds()
heard = {'busy': 0, 'other': 0, 'reset': 0, 'broken pipe': 0}
for i in range(300):
    b = connect()
    try:
        b.sendall(START % b'b' + b'x' * (i * 211 % 70000))   # up to 70 KB before serve reads
        line = read_all(b).split(b'\n')[0]
        heard['busy' if json.loads(line)['error']['data']['kind'] == 'busy' else 'other'] += 1
    except ConnectionResetError:
        heard['reset'] += 1
    except BrokenPipeError:
        heard['broken pipe'] += 1
    b.close()
print('told busy, having written first:', heard)
# clients that never close: each hears the line and then the end at once;
# serve lets go of every one within about a second
held = [connect() for _ in range(40)]
t0 = time.monotonic()
lines = [read_all(s).split(b'\n')[0] for s in held]
print('held clients told busy:', sum(b'"busy"' in l for l in lines), 'of', len(held),
      '| the end came at once:', time.monotonic() - t0 < 2)
time.sleep(3)
print('descriptors back to what they were:', fds() == base)
for s in held:
    s.close()
first.sendall(START.replace(b'"id":1', b'"id":2') % b'a')
print('first again:', 'result' in json.loads(first.makefile('rb').readline()))
PY
kill -TERM $pid
wait $pid
echo "exit $?"
grep -o "clients refused [0-9]*" serve.err
