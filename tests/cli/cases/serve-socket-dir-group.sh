# issue 28: a socket directory writable by its group is refused unless the
# operator names that group with --socket-group (then its members are trusted
# with the socket anyway); naming another group does not do; a sticky
# directory keeps writers to their own files and is fine
# (each refusal under `timeout 10`: a serve that wrongly starts fails the case)
docket init >/dev/null
g=$(id -gn)
mkdir grp && chmod 0770 grp
timeout 10 docket serve --socket "$PWD/grp/x.sock" 2>&1 | sed -E "s|$PWD|PWD|; s/gid [0-9]+/gid N/"; echo "exit ${PIPESTATUS[0]}"
timeout 10 docket serve --socket "$PWD/grp/x.sock" --socket-group nogroup 2>&1 | sed -E "s|$PWD|PWD|; s/gid [0-9]+/gid N/"
echo "another group named: exit ${PIPESTATUS[0]}"
docket serve --socket "$PWD/grp/x.sock" --socket-group "$g" 2>serve.err &
pid=$!
wait_for serve.err "serving on"
test -S grp/x.sock && echo "its own group named: serving"
kill -TERM $pid
wait $pid
mkdir sticky && chmod 1770 sticky
docket serve --socket "$PWD/sticky/x.sock" 2>serve2.err &
pid=$!
wait_for serve2.err "serving on"
test -S sticky/x.sock && echo "sticky group-writable directory: serving"
kill -TERM $pid
wait $pid
