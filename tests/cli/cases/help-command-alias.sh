docket help show
