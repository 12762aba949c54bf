seed
docket log --since
