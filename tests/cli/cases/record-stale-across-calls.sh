# a zombie runtime that still carries epoch 1 after a new runtime started
seed sessions/demo-basic.jsonl
echo "{\"type\":\"runtime.started\",\"runtime\":\"maka/0.9.2\",\"time\":\"2025-03-14T10:00:00Z\"}" | docket record
echo "{\"type\":\"session.opened\",\"session\":\"late\",\"epoch\":1,\"time\":\"2025-03-14T10:00:01Z\"}" > zombie.jsonl
docket record zombie.jsonl
