docket init
ls -ld ledger | cut -c1-10
