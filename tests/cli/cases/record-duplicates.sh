# re-sending events that are already recorded is idempotent
seed sessions/open-pending.jsonl
{
	sed -n "2p;4p" "$FIXTURES/sessions/open-pending.jsonl"
	echo "{\"type\":\"tool.completed\",\"session\":\"build-42\",\"invocation\":\"toolu_04\",\"status\":\"denied\",\"time\":\"2025-06-02T14:00:07.100Z\"}"
} | docket record
