# with RLIMIT_NOFILE at 40, serve caps its clients below the limit and
# tells the ones beyond it that it is busy; when descriptors run out anyway
# (the limit lowered under it) it refuses politely and backs off
# instead of spinning on EMFILE (it once burnt 4.5 s of CPU in 5 s and
# left new clients hanging); a client served before still is
docket init >/dev/null
prlimit --nofile=40 docket serve --socket "$PWD/d.sock" 2>serve.err &
pid=$!
wait_for serve.err "serving on" || exit 1
python3 - "$PWD/d.sock" "$pid" <<'PY'
import json, os, socket, subprocess, sys, time
path, pid = sys.argv[1], sys.argv[2]
def cpu():  # utime + stime of serve, in clock ticks
    f = open('/proc/%s/stat' % pid).read().rsplit(')', 1)[1].split()
    return int(f[11]) + int(f[12])
def connect():
    s = socket.socket(socket.AF_UNIX); s.connect(path); s.settimeout(10); return s
def answer(s):
    try:
        r = json.loads(s.makefile('rb').readline() or b'null')
    except socket.timeout:
        return 'no answer'
    return r['error']['message'] if r and 'error' in r else r and 'served'
first = connect()
first.sendall(b'{"jsonrpc":"2.0","id":1,"method":"runtime.start","params":{"runtime":"a"}}\n')
print('first:', answer(first))
idle = [connect() for _ in range(30)]
print('idle clients told busy:', sum(answer(s).startswith('server busy: 24 clients') for s in idle[23:]))
for s in idle[5:]:
    s.close()
time.sleep(0.5)
# descriptors run out: one more than serve has open now
fds = len(os.listdir('/proc/%s/fd' % pid))
subprocess.run(['prlimit', '--pid', pid, '--nofile=%d' % (fds + 1)], check=True)
more = [connect() for _ in range(8)]
for s in more:
    try:  # a refused client may be closed before it sends: its answer is still readable
        s.sendall(b'{"jsonrpc":"2.0","id":3,"method":"runtime.start","params":{"runtime":"m"}}\n')
    except (BrokenPipeError, ConnectionResetError):
        pass
c0 = cpu()
time.sleep(2)
print('CPU over 2 s under 0.5 s:', cpu() - c0 < 50)
for a in sorted(set(answer(s) for s in more)):
    print('clients arriving then:', a)
first.sendall(b'{"jsonrpc":"2.0","id":2,"method":"runtime.start","params":{"runtime":"a"}}\n')
print('first again:', answer(first))
PY
kill -TERM $pid
wait $pid
echo "exit $?"
grep -o "at most [0-9]* clients (RLIMIT_NOFILE is 40)" serve.err
grep -c "out of file descriptors with" serve.err
