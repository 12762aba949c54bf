docket import --help
