docket fleet frobnicate --db x
