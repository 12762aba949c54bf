docket reindex --help
