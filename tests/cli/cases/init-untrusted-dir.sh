# A ledger someone else could change or replace is refused, with the reason,
# by init, by every open and by hooks (the hook denies under --enforce):
# a directory anyone can write (no sticky bit) above it, a symbolic link
# through such a directory, a dangling link, a group-writable ledger, a
# world-writable data file, a link inside the ledger. (Another user's
# directories and links: tests/unit/test_ledger.c, test_trust_*.)
export HOME=$PWD/home DOCKET_CLAUDE_MANAGED_SETTINGS=$PWD/none
mkdir shared && chmod 0777 shared
docket -L shared/ledger init; echo "init in a world-writable directory: exit $?"
ls shared
mkdir mine && ln -s ../shared/ledger mine/link
docket -L mine/link init; echo "init through a dangling link: exit $?"
mkdir shared/ledger && chmod 700 shared/ledger
docket -L mine/link init; echo "init through a link into it: exit $?"
docket -L mine/link log; echo "log through the link: exit $?"
P='{"session_id":"u1","cwd":"/home/dev/app","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"git status"},"tool_use_id":"toolu_u"}'
echo "$P" | docket -L mine/link hook claude --enforce --policy "$FIXTURES/policies/team.yaml"
echo "hook into it, enforce: exit $?"
docket init >/dev/null
chmod 0770 ledger
docket log; echo "group-writable ledger: exit $?"
echo "$P" | docket hook claude --enforce --policy "$FIXTURES/policies/team.yaml" >/dev/null 2>&1
echo "hook, group-writable ledger, enforce: exit $?"
chmod 0700 ledger && chmod 0666 ledger/data.mdb
docket verify >/dev/null; echo "world-writable data file: exit $?"
chmod 0600 ledger/data.mdb && ln -s /etc/passwd ledger/extra
docket log >/dev/null; echo "a link inside the ledger: exit $?"
rm ledger/extra
docket log | head -1; echo "fixed: exit ${PIPESTATUS[0]}"
ln -s ledger mylink
docket -L mylink log | head -1; echo "my own link to my own ledger: exit ${PIPESTATUS[0]}"
