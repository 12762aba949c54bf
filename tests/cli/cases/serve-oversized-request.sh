# a request line over --max-request is answered with an error (id null, in
# its place among the replies) and skipped to its newline, unparsed: the
# connection stays usable, other clients are served while it streams in,
# and serve's memory stays small (a 30 MiB line once cost 1.2 GiB); a line
# with more JSON values than one per 16 bytes of the limit is refused too
docket init >/dev/null
docket serve --socket "$PWD/d.sock" --max-request 65536 2>serve.err &
pid=$!
wait_for serve.err "serving on" || exit 1
python3 - "$PWD/d.sock" "$pid" <<'PY'
import json, socket, sys
path, pid = sys.argv[1], sys.argv[2]
def client():
    s = socket.socket(socket.AF_UNIX); s.connect(path); return s, s.makefile('rb')
def show(f):
    r = json.loads(f.readline())
    print(r.get('id'), r['error']['code'], r['error']['message']) if 'error' in r else print(r['id'], 'ok')
req = lambda i, rt: (json.dumps({"jsonrpc": "2.0", "id": i, "method": "runtime.start",
                                 "params": {"runtime": rt}}) + "\n").encode()
a, fa = client()
b, fb = client()
a.sendall(req(1, "a") + req(2, "x" * 100000) + req(3, "a"))
for _ in range(3): show(fa)
# 30 MiB without its newline yet: b is served meanwhile
a.sendall(b'{"jsonrpc":"2.0","id":4,"method":"runtime.start","params":{"runtime":"' + b'y' * (30 << 20))
b.sendall(req(5, "b")); show(fb)
a.sendall(b'"}}\n' + req(6, "a")); show(fa); show(fa)
# 8,192 values in a 40 KiB line: over 65536 / 16
a.sendall(b'{"jsonrpc":"2.0","id":7,"method":"runtime.start","params":{"runtime":"a","x":[' +
          b','.join([b'0'] * 8192) + b']}}\n'); show(fa)
peak = [int(l.split()[1]) for l in open('/proc/%s/status' % pid) if l.startswith('VmHWM')][0]
print('peak RSS under 64 MiB:', peak < 65536)
PY
kill -TERM $pid
wait $pid
echo "exit $?"
grep "oversized requests" serve.err
