docket --frob log
