docket --version
