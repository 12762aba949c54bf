docket init >/dev/null
printf "\n  \n" | docket record
