docket -L other/place init
docket --ledger=other/place sessions
