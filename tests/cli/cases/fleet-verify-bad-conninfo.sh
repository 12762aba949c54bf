docket fleet verify --db "dbname"
