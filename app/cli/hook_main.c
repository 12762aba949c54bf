/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hook_main.c: `docket-hook`, the lean build of `docket hook` that
 * `docket integrate` installs when it sits next to docket. Claude Code and
 * Codex start a process for every hook event, and most of its cost is the
 * dynamic loader (bench_hook): this binary links only what recording needs
 * (no libgit2 and its libraries). It takes the same arguments,
 * `docket-hook [-L PATH] hook claude|codex [--enforce --policy SRC]`;
 * git: policy sources need the full docket.
 */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <openssl/crypto.h>

#include "cli.h"
#include "util/alloc.h"
#include "util/json_tape.h"

/*
 * simdjson's tape parser (util/json_tape.cpp) is the one C++ object of
 * libdocket, and linking it brings libsimdjson and libstdc++, whose
 * relocations were the largest part of docket-hook's start-up left (perf,
 * tests/bench/bench_hook.c). A hook event is one small object parsed with
 * jansson: docket-hook defines the parser as "unavailable", which every
 * caller already handles by taking jansson's path (docket_jv_parse,
 * docket_event_from_text), so the linker leaves json_tape.o, simdjson and
 * libstdc++ out.
 */
docket_json_tape *docket_json_tape_new(void)
{
	return NULL;
}

void docket_json_tape_free(docket_json_tape *p)
{
	(void)p;
}

int docket_json_tape_parse(docket_json_tape *p, const char *text, size_t len, docket_tape_doc *doc)
{
	(void)p;
	(void)text;
	(void)len;
	(void)doc;
	return -1;
}

int main(int argc, char **argv)
{
	static const cli_command hook = { "hook", cmd_hook, "record one hook event", CLI_IN_PROCESS };
	cli_global g;
	const char *env;
	int i = 1;

	/*
	 * The ledger only hashes (SHA-256, fetched from the default provider):
	 * OpenSSL's default start-up, which registers every legacy cipher and
	 * digest name and reads openssl.cnf, was the largest user-space cost of
	 * a hook event (perf, see tests/bench/bench_hook.c). A configuration
	 * that selects other providers does not apply to docket-hook. Nor does
	 * OpenSSL's clean-up at exit run (8% of an event's instructions,
	 * callgrind): the process ends, and with it everything it holds.
	 */
	OPENSSL_init_crypto(OPENSSL_INIT_NO_ADD_ALL_CIPHERS | OPENSSL_INIT_NO_ADD_ALL_DIGESTS |
			    OPENSSL_INIT_NO_LOAD_CONFIG | OPENSSL_INIT_NO_ATEXIT, NULL);
	docket_alloc_install_json();
	memset(&g, 0, sizeof(g));
	if (i + 1 < argc && strcmp(argv[i], "-L") == 0) {
		g.ledger_path = argv[i + 1];
		i += 2;
	}
	if (i >= argc || strcmp(argv[i], "hook") != 0) {
		cli_error("usage: docket-hook [-L PATH] hook claude|codex [--enforce --policy SRC]");
		return 2;
	}
	if (!g.ledger_path) {
		env = getenv("DOCKET_LEDGER");
		g.ledger_path = env && *env ? env : "./.docket";
	}
	return cmd_hook(&hook, &g, argc - i, argv + i);
}
