docket show --help
