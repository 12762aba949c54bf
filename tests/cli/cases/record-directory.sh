docket init >/dev/null
mkdir adir
docket record adir
