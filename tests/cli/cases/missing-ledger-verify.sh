docket -L does/not/exist verify
