docket policy eval --help
