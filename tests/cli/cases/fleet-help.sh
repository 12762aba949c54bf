docket fleet --help
