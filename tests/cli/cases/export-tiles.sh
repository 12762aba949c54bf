seed sessions/demo-basic.jsonl
docket keygen -o k >/dev/null
docket checkpoint --key k >/dev/null
docket export --format tlog-tiles pub
(cd pub && find . | sort)
docket export --format tlog-tiles pub
