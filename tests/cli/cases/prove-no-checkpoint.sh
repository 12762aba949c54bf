# a receipt needs a signed checkpoint that covers the call's events
seed sessions/demo-basic.jsonl
docket prove demo-basic call_rm_build
echo "exit $?"
docket keygen -o k >/dev/null
docket checkpoint --key k >/dev/null
docket record "$FIXTURES/sessions/open-pending.jsonl" >/dev/null
docket prove build-42 toolu_01 >/dev/null
echo "exit $?"
docket prove demo-basic no_such_call >/dev/null
echo "exit $?"
