seed sessions/demo-basic.jsonl
docket export -f ocsf | jq -c "[.class_uid, .activity_id, .type_uid, .action_id, .disposition_id, .unmapped.invocation // .unmapped.event_type]"
