docket --help
