docket
