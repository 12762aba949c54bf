docket verify --help
