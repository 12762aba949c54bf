# a connection string libpq cannot parse is bad input (2), before any connection
seed sessions/demo-basic.jsonl
docket ship --to "host=/tmp port"
