# --follow prints new events as they are appended and stops on SIGINT
seed sessions/open-pending.jsonl
docket log --follow --since "#9" > out.txt &
pid=$!
wait_for out.txt toolu_05 || { kill $pid; exit 98; }
echo "{\"type\":\"tool.completed\",\"session\":\"build-42\",\"invocation\":\"toolu_04\",\"status\":\"denied\",\"time\":\"2025-06-02T14:00:07.100Z\"}" | docket record >/dev/null
wait_for out.txt "tool.completed" || { kill $pid; exit 98; }
kill -INT $pid
wait $pid
rc=$?
cat out.txt
exit $rc
