docket stats --help
