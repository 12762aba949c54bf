docket ship --to "postgresql:///x"
