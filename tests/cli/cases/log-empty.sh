docket init >/dev/null
docket log
