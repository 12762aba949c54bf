docket help frobnicate
