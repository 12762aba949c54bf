# issue 10: serve --socket refuses a non-socket at PATH (never deletes it),
# a live server on PATH, and a socket directory writable by others
# (each refusal under `timeout 10`: a serve that wrongly starts fails the case, not hangs it)
docket init >/dev/null
echo keep >file.txt
timeout 10 docket serve --socket "$PWD/file.txt" 2>&1 | sed "s|$PWD|PWD|"; echo "exit ${PIPESTATUS[0]}"
cat file.txt
docket serve --socket "$PWD/d.sock" 2>serve.err &
pid=$!
wait_for serve.err "serving on"
timeout 10 docket serve --socket "$PWD/d.sock" 2>&1 | sed "s|$PWD|PWD|"; echo "exit ${PIPESTATUS[0]}"
test -S d.sock && echo "first server keeps its socket"
kill -TERM $pid
wait $pid
mkdir open && chmod 0777 open
timeout 10 docket serve --socket "$PWD/open/x.sock" 2>&1 | sed "s|$PWD|PWD|"; echo "exit ${PIPESTATUS[0]}"
