docket sessions --help
