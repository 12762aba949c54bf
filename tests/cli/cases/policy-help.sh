docket policy --help
