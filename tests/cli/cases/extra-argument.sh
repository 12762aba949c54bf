seed
docket sessions extra
