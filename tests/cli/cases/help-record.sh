docket record --help
