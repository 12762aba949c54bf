/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_witness.c: `docket witness`: a tiny transparency-log witness that
 * co-signs checkpoints which extend what it saw (audit/witness.c). */
#include "cli.h"

#include <errno.h>
#include <string.h>

#include "docket/tlog.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/error.h"
#include "audit/note.h"

/* Read a note or proof file (bounded: NOTE_MAX_LEN). */
static int read_input(docket_buf *out, const char *path)
{
	int error;

	docket_error_clear();
	if ((error = note_read_file(out, path)) == 0)
		return CLI_EXIT_OK;
	if (error == DOCKET_EINVALID) {
		cli_error("refused: %s", docket_error_last()->message);
		return CLI_EXIT_FOUND;
	}
	return cli_fail(error, "cannot read the note");
}

static int write_output(const char *path, const char *text, size_t len)
{
	FILE *f = path ? fopen(path, "w") : stdout;
	int bad;

	if (!f) {
		cli_error("cannot write %s: %s", path, strerror(errno));
		return CLI_EXIT_SYSTEM;
	}
	bad = fwrite(text, 1, len, f) != len;
	bad |= path ? fclose(f) != 0 : fflush(f) != 0;
	if (bad) {
		cli_error("cannot write %s", path ? path : "stdout");
		return CLI_EXIT_SYSTEM;
	}
	return CLI_EXIT_OK;
}

static void say_accepted(const docket_witness_result *r, const char *key)
{
	const docket_note_checkpoint *c = &r->checkpoint;

	if (r->first_seen)
		fprintf(stderr, "docket: first checkpoint of %s seen (size %llu): trusted on first use\n",
			c->origin, (unsigned long long)c->size);
	else if (r->old_size == c->size)
		fprintf(stderr, "docket: %s: the same checkpoint as before (size %llu)\n", c->origin,
			(unsigned long long)c->size);
	else
		fprintf(stderr, "docket: %s: consistent: size %llu extends size %llu\n", c->origin,
			(unsigned long long)c->size, (unsigned long long)r->old_size);
	if (key)
		fprintf(stderr, "docket: co-signed as %s\n", r->name);
}

int cmd_witness(const cli_command *cmd, const cli_global *g, int argc, char **argv)
{
	static const char description[] =
		"Checks the signed checkpoint NOTE (`docket checkpoint -o`) of a log whose\n"
		"Ed25519 public key is LOGKEY and, when it extends the last checkpoint of the\n"
		"same origin this witness saw, records it in DIR and co-signs it with\n"
		"WITNESSKEY (a C2SP tlog-cosignature/v1 line appended to the note, written to\n"
		"stdout or -o FILE). A checkpoint of a larger size needs the consistency proof\n"
		"from the size the witness saw (--proof FILE, from `docket checkpoint\n"
		"--consistency`; NOTE may also be that proof file itself). The first\n"
		"checkpoint of an origin is trusted on first use. Exit 1, nothing co-signed\n"
		"and nothing recorded, for a fork (same size, another root), a rollback\n"
		"(smaller size), a bad proof or a bad signature, with the reason. DIR (0700)\n"
		"holds one file per origin (0600), replaced atomically; a state file the\n"
		"witness cannot parse stops it (exit 3). See docs/audit.md.\n";
	const char *state = NULL, *pubkey = NULL, *proof = NULL, *key = NULL, *name = NULL;
	const char *out = NULL, *note_path = NULL;
	const cli_opt opts[] = {
		{ CLI_OPT_STRING, "state", 0, &state, "DIR", "where the witness keeps what it saw", 0 },
		{ CLI_OPT_STRING, "pubkey", 0, &pubkey, "LOGKEY", "the log's public key", 0 },
		{ CLI_OPT_STRING, "proof", 0, &proof, "FILE", "the consistency proof to NOTE", 0 },
		{ CLI_OPT_STRING, "key", 'k', &key, "WITNESSKEY", "co-sign with this private key", 0 },
		{ CLI_OPT_STRING, "name", 0, &name, "NAME", "the witness's key name (default: from its key)", 0 },
		{ CLI_OPT_STRING, "output", 'o', &out, "FILE", "write the co-signed note to FILE", 0 },
		{ CLI_OPT_ARG, "NOTE", 0, &note_path, NULL, "the signed checkpoint (or proof file); - for stdin",
		  CLI_OPT_REQUIRED },
		{ CLI_OPT_END, NULL, 0, NULL, NULL, NULL, 0 }
	};
	docket_witness_options o = DOCKET_WITNESS_OPTIONS_INIT;
	docket_witness_result *res = NULL;
	docket_buf note_text = DOCKET_BUF_INIT, proof_text = DOCKET_BUF_INIT;
	char *cosigned = NULL;
	size_t len = 0;
	int rc, error;

	(void)g;
	if ((rc = cli_parse(cmd, opts, description, argc, argv)) != CLI_PARSE_OK)
		return CLI_PARSE_EXIT(rc);
	if (!state || !pubkey) {
		cli_error("witness needs --state DIR and --pubkey LOGKEY");
		cli_usage_line(stderr, cmd, opts);
		return CLI_EXIT_USAGE;
	}
	if ((rc = read_input(&note_text, note_path)) != CLI_EXIT_OK ||
	    (proof && (rc = read_input(&proof_text, proof)) != CLI_EXIT_OK))
		goto cleanup;
	if (!(res = docket_calloc(1, sizeof(*res)))) {
		rc = cli_fail_oom();
		goto cleanup;
	}
	o.state_dir = state;
	o.log_pubkey = pubkey;
	o.key = key;
	o.name = name;
	o.proof = proof ? (proof_text.ptr ? proof_text.ptr : "") : NULL;
	o.proof_len = proof_text.len;
	docket_error_clear();
	if ((error = docket_witness_add(&cosigned, &len, res, note_text.ptr ? note_text.ptr : "",
					note_text.len, &o)) < 0) {
		rc = cli_fail(error, "the witness could not run");
		goto cleanup;
	}
	if (!res->accepted) {
		cli_error("refused: %s", res->problem);
		rc = CLI_EXIT_FOUND;
		goto cleanup;
	}
	say_accepted(res, key);
	rc = key || out ? write_output(out, cosigned, len) : CLI_EXIT_OK;
cleanup:
	docket_free(cosigned);
	docket_free(res);
	docket_buf_dispose(&note_text);
	docket_buf_dispose(&proof_text);
	return rc;
}
