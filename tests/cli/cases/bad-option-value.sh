seed
docket log --since=ten
