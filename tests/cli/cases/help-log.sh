docket log --help
