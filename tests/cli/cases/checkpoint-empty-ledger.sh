docket init >/dev/null
docket keygen -o k >/dev/null
docket checkpoint --key k
