seed
docket log --frobnicate
