# the socket is 0600; clients on it are answered; SIGTERM stops cleanly
docket init >/dev/null
docket serve --socket "$PWD/d.sock" 2>serve.err &
pid=$!
wait_for serve.err "serving on"
stat -c '%a' d.sock
python3 - "$PWD/d.sock" <<'PY'
import socket, sys, json
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); f = s.makefile('rw')
for req in [{"jsonrpc":"2.0","id":1,"method":"runtime.start","params":{"runtime":"a"}},
            {"jsonrpc":"2.0","id":2,"method":"session.open","params":{"session":"s"}}]:
    f.write(json.dumps(req) + "\n"); f.flush()
    print(f.readline().strip())
PY
kill -TERM $pid
wait $pid
echo "exit $?"
grep -c "stopped after 2 requests" serve.err
test -e d.sock && echo "socket left behind" || echo "socket removed"
