docket frobnicate
