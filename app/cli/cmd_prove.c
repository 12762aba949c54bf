/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_prove.c: `docket prove SESSION INVOCATION` writes a receipt (one
 * invocation's events with inclusion proofs and the signed checkpoint they
 * are proved against); `docket verify-receipt FILE --pubkey KEY` checks one
 * with no ledger (audit/receipt.c, docs/audit.md "## Receipts").
 */
#include "cli.h"

#include <errno.h>
#include <string.h>

#include "docket/audit.h"
#include "audit/checkpoint.h"
#include "audit/receipt.h"
#include "util/alloc.h"
#include "util/error.h"
#include "util/json.h"

/* verify-receipt: every check held, but some events are redacted (shown only
 * as redacted; their content is not proved). Not 0, so that `verify-receipt
 * && deploy` fails closed; not 1, so that a script that accepts redacted
 * receipts can tell them from forged ones (docs/audit.md "Receipts"). */
#define EXIT_VERIFIED_REDACTED 4

typedef struct prove_args {
	const char *session, *invocation, *out;
	const char *pseudo_key;
	int redact;
} prove_args;

static int write_text(const char *path, const docket_buf *text)
{
	FILE *f = path ? fopen(path, "w") : stdout;
	int bad;

	if (!f) {
		cli_error("cannot write %s: %s", path, strerror(errno));
		return CLI_EXIT_SYSTEM;
	}
	bad = fwrite(text->ptr, 1, text->len, f) != text->len || fputc('\n', f) == EOF;
	if (path)
		bad |= fclose(f) != 0;
	if (bad) {
		cli_error("cannot write %s", path ? path : "the receipt");
		return CLI_EXIT_SYSTEM;
	}
	return CLI_EXIT_OK;
}

static int prove(docket_ledger *ledger, const prove_args *a)
{
	docket_redactor *redactor = NULL;
	docket_pseudonymizer *pseudo = NULL;
	docket_buf text = DOCKET_BUF_INIT;
	json_t *receipt = NULL;
	char *note_text = NULL;
	size_t note_len = 0;
	int error, rc = CLI_EXIT_OK;

	if (a->redact && (error = docket_redactor_new(&redactor, NULL, 0)) < 0)
		return cli_fail(error, "cannot set up redaction");
	if (a->pseudo_key && (error = docket_pseudonymizer_load(&pseudo, a->pseudo_key)) < 0) {
		rc = cli_fail(error, "cannot load the pseudonymisation key");
		goto cleanup;
	}
	if ((error = docket_checkpoint_note(&note_text, &note_len, ledger, 0)) == DOCKET_ENOTFOUND) {
		cli_error("%s; a receipt is proved against a signed checkpoint: run `docket checkpoint --key KEY` "
			  "first", docket_error_last()->message);
		rc = CLI_EXIT_USAGE;
		goto cleanup;
	}
	if (error < 0 ||
	    (error = receipt_build(&receipt, ledger, a->session, a->invocation, note_text, note_len, redactor, pseudo)) < 0 ||
	    (error = docket_json_dump(&text, receipt)) < 0) {
		rc = cli_fail(error, "cannot build the receipt");
		goto cleanup;
	}
	if ((rc = write_text(a->out, &text)) == CLI_EXIT_OK && a->out)
		fprintf(stderr, "receipt: %zu events, %zu bytes, proved against the checkpoint of %lld events%s\n",
			json_array_size(json_object_get(receipt, "events")), text.len + 1,
			(long long)json_integer_value(json_object_get(receipt, "tree_size")),
			json_is_true(json_object_get(receipt, "redacted")) ? " (redacted events: leaf hashes only)" : "");
cleanup:
	json_decref(receipt);
	docket_buf_dispose(&text);
	docket_free(note_text);
	docket_redactor_free(redactor);
	docket_pseudonymizer_free(pseudo);
	return rc;
}

int cmd_prove(const cli_command *cmd, const cli_global *g, int argc, char **argv)
{
	static const char description[] =
		"Write a receipt for one tool call: its events (intent, approval request and\n"
		"settlement, dispatch, outcome, the policy revision the intent cites), each as\n"
		"its stored bytes with an inclusion proof in the Merkle tree of the newest signed\n"
		"checkpoint, and that checkpoint (a C2SP signed note). Anyone with the log's\n"
		"public key checks it with `docket verify-receipt`, without the ledger.\n"
		"The checkpoint must cover the call's events: sign one first with\n"
		"`docket checkpoint --key KEY`.\n"
		"--redact and --pseudonymize show each event that they change redacted and\n"
		"carry the hash of the stored event instead of its bytes: its place in the\n"
		"log is proved, its text is not (verify-receipt shows it only as redacted).";
	docket_ledger *ledger = NULL;
	prove_args a = { NULL, NULL, NULL, NULL, 0 };
	const cli_opt opts[] = {
		{ CLI_OPT_ARG, "SESSION", 0, &a.session, NULL, "the session", CLI_OPT_REQUIRED },
		{ CLI_OPT_ARG, "INVOCATION", 0, &a.invocation, NULL, "the tool call (invocation id)", CLI_OPT_REQUIRED },
		{ CLI_OPT_STRING, "output", 'o', &a.out, "FILE", "write the receipt to FILE (default: stdout)", 0 },
		{ CLI_OPT_SWITCH, "redact", 0, &a.redact, NULL, "redact secrets; prove leaf hashes only", 0 },
		{ CLI_OPT_STRING, "pseudonymize", 0, &a.pseudo_key, "KEYFILE",
		  "replace identifiers by keyed hashes; prove leaf hashes only", 0 },
		{ CLI_OPT_END, NULL, 0, NULL, NULL, NULL, 0 },
	};
	int rc = cli_parse(cmd, opts, description, argc, argv);

	if (rc != CLI_PARSE_OK)
		return CLI_PARSE_EXIT(rc);
	if ((rc = cli_open_ledger(&ledger, g, CLI_OPEN_READ)) != CLI_EXIT_OK)
		return rc;
	rc = prove(ledger, &a);
	docket_ledger_free(ledger);
	return rc;
}

int cmd_verify_receipt(const cli_command *cmd, const cli_global *g, int argc, char **argv)
{
	static const char description[] =
		"Check a receipt written by `docket prove`, offline: the checkpoint's signature\n"
		"by KEY (the log's public key), that it names the ledger the receipt claims,\n"
		"every event's leaf hash and inclusion proof, that each event shown is the\n"
		"decoding of its bytes, and that the events are one tool call's. Prints who\n"
		"asked and who approved what, when, under which policy revision (strings with\n"
		"control characters are shown escaped).\n"
		"Exit 0: verified, every event shown as its stored bytes decode. Exit 4:\n"
		"verified with redacted events: those are proved in the log by leaf hash\n"
		"only and shown only as redacted (no result, verdict or status is drawn from\n"
		"them). Exit 1: a check failed (named on stderr). Exit 2: usage, or a key\n"
		"that cannot be read.";
	const char *file = NULL, *pubkey = NULL;
	const cli_opt opts[] = {
		{ CLI_OPT_ARG, "FILE", 0, &file, NULL, "the receipt", CLI_OPT_REQUIRED },
		{ CLI_OPT_STRING, "pubkey", 0, &pubkey, "KEY", "the log's public key (PEM, from docket keygen)", 0 },
		{ CLI_OPT_END, NULL, 0, NULL, NULL, NULL, 0 },
	};
	docket_buf text = DOCKET_BUF_INIT, out = DOCKET_BUF_INIT;
	receipt_report rep;
	json_t *story = NULL;
	int error, rc = cli_parse(cmd, opts, description, argc, argv);

	(void)g;
	if (rc != CLI_PARSE_OK)
		return CLI_PARSE_EXIT(rc);
	if (!pubkey) {
		cli_error("verify-receipt needs --pubkey KEY (the log's public key)");
		return CLI_EXIT_USAGE;
	}
	if ((error = audit_read_file(&text, file, RECEIPT_MAX_LEN)) < 0)
		return cli_fail(DOCKET_EINVALID, "cannot read the receipt");
	if ((error = receipt_verify(&rep, &story, text.ptr, text.len, pubkey)) < 0) {
		rc = cli_fail(error, "cannot check the receipt");
		goto cleanup;
	}
	if (!rep.ok) {
		cli_error("receipt FAILED: %s", rep.problem);
		rc = CLI_EXIT_FOUND;
		goto cleanup;
	}
	if ((error = receipt_story_text(&out, story, &rep)) < 0) {
		rc = cli_fail(error, "out of memory");
		goto cleanup;
	}
	fwrite(out.ptr, 1, out.len, stdout);
	rc = rep.redacted ? EXIT_VERIFIED_REDACTED : CLI_EXIT_OK;
cleanup:
	json_decref(story);
	docket_buf_dispose(&text);
	docket_buf_dispose(&out);
	return rc;
}
