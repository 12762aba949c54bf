docket log
