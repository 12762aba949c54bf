# -L wins over $DOCKET_LEDGER
seed sessions/demo-basic.jsonl
mkdir empty
DOCKET_LEDGER=nowhere docket -L ledger sessions
