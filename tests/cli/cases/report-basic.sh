seed sessions/demo-basic.jsonl sessions/open-pending.jsonl
docket report -o audit.html | sed "s|$PWD|<dir>|"
grep -c "<svg" audit.html
grep -c -i -e "<script" -e "src=" -e "href=" audit.html
