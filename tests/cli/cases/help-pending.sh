docket pending --help
