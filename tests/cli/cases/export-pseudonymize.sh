seed sessions/demo-basic.jsonl
docket keygen --hmac -o h >/dev/null
docket export --pseudonymize h > a.jsonl
docket export --pseudonymize h > b.jsonl
cmp a.jsonl b.jsonl && echo same pseudonyms
grep -c -e demo-basic -e user:ana -e /home/ana a.jsonl
