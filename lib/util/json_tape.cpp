// SPDX-License-Identifier: Apache-2.0
//
// json_tape.cpp: the one C++ translation unit: simdjson's DOM parser for C
// callers (json_tape.h). No exception leaves it: simdjson's parse reports
// through error codes and the parser itself is allocated with nothrow.
#include <new>

#include <simdjson.h>

#include "json_tape.h"

struct docket_json_tape {
	simdjson::dom::parser parser;
};

docket_json_tape *docket_json_tape_new(void)
{
	return new (std::nothrow) docket_json_tape;
}

void docket_json_tape_free(docket_json_tape *p)
{
	delete p;
}

int docket_json_tape_parse(docket_json_tape *p, const char *text, size_t len, docket_tape_doc *doc)
{
	simdjson::dom::element root;

	if (p->parser.parse(text, len, true).get(root) != simdjson::SUCCESS)
		return -1;
	doc->tape = p->parser.doc.tape.get();
	doc->strings = p->parser.doc.string_buf.get();
	return 0;
}
