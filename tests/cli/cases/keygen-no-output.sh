docket keygen
