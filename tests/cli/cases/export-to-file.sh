seed sessions/demo-basic.jsonl
docket export -f ocsf -o out.ndjson
wc -l < out.ndjson
