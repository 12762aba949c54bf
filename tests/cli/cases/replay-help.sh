docket replay --help
