docket help
