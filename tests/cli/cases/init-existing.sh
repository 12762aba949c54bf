docket init >/dev/null
docket init
