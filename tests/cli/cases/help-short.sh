docket -h
