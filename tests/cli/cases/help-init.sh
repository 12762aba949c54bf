docket init --help
