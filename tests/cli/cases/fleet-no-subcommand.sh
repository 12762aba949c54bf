docket fleet
