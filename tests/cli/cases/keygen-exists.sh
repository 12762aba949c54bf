docket keygen -o k >/dev/null
docket keygen -o k
