# a client that floods requests and never reads its replies is not read
# beyond --max-queued bytes of pending replies (backpressure), then dropped
# after --client-timeout with a logged reason; serve's memory stays small
# and other clients are served throughout (replies once queued unbounded)
docket init >/dev/null
docket serve --socket "$PWD/d.sock" --max-queued 65536 --client-timeout 1 2>serve.err &
pid=$!
wait_for serve.err "serving on" || exit 1
python3 - "$PWD/d.sock" "$pid" <<'PY'
import json, socket, sys
path, pid = sys.argv[1], sys.argv[2]
flood = socket.socket(socket.AF_UNIX); flood.connect(path)
flood.settimeout(20)
sent, cut = 0, False
chunk = b'x\n' * 32768          # each line earns a ~110-byte parse error reply
try:
    while sent < (256 << 20):
        sent += flood.send(chunk)
except (BrokenPipeError, ConnectionResetError):
    cut = True
except socket.timeout:
    pass
print('flooder cut off before 256 MiB:', cut)
b = socket.socket(socket.AF_UNIX); b.connect(path); fb = b.makefile('rb')
b.sendall(b'{"jsonrpc":"2.0","id":1,"method":"runtime.start","params":{"runtime":"b"}}\n')
print('other client:', 'result' in json.loads(fb.readline()))
peak = [int(l.split()[1]) for l in open('/proc/%s/status' % pid) if l.startswith('VmHWM')][0]
print('peak RSS under 64 MiB:', peak < 65536)
PY
kill -TERM $pid
wait $pid
echo "exit $?"
grep -c "dropped client 1: .* bytes of replies unread for 1000 ms" serve.err
grep "clients refused" serve.err
