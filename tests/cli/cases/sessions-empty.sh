docket init >/dev/null
docket sessions
