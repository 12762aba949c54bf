# SRC is required; exit 2 with the subcommand's usage
docket policy eval --call '{"tool":"shell","args":{"command":["ls"]}}'
