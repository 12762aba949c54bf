# `docket policy` alone: the usage on stderr, exit 2
docket policy
