docket ship --help
