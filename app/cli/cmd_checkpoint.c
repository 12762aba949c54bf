/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_checkpoint.c: `docket checkpoint`: sign the chain head; list checkpoints. */
#include "cli.h"

#include <errno.h>
#include <string.h>

#include "docket/audit.h"
#include "docket/tlog.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "audit/note.h"
#include "util/error.h"

static json_t *checkpoint_json(const docket_checkpoint *cp)
{
	return json_pack("{s:I, s:I, s:s, s:s, s:s, s:s, s:s}",
			 "index", (json_int_t)cp->index, "seq", (json_int_t)cp->seq,
			 "time", cp->time, "head", cp->head, "prev", cp->prev,
			 "digest", cp->digest, "key_id", cp->key_id);
}

typedef struct list_ctx {
	cli_table *t;
	json_t *arr;
} list_ctx;

static int list_one(void *ctx, const docket_checkpoint *cp)
{
	list_ctx *c = ctx;
	int error = 0;

	if (c->arr)
		return json_array_append_new(c->arr, checkpoint_json(cp)) == 0 ? 0
			: docket_error_set_oom();
	if (error == 0) error = cli_table_cellf(c->t, "%llu", (unsigned long long)cp->index);
	if (error == 0) error = cli_table_cellf(c->t, "%llu", (unsigned long long)cp->seq);
	if (error == 0) error = cli_table_cell(c->t, cp->time);
	if (error == 0) error = cli_table_cellf(c->t, "%.16s", cp->head);
	if (error == 0) error = cli_table_cellf(c->t, "%.16s", cp->key_id);
	return error;
}

static int list_checkpoints(docket_ledger *ledger, const cli_global *g, int json)
{
	list_ctx c = { NULL, NULL };
	int error, rc = CLI_EXIT_OK;

	if (json && !(c.arr = json_array()))
		return cli_fail_oom();
	if (!json) {
		if ((error = cli_table_new(&c.t, 5)) < 0)
			return cli_fail(error, "out of memory");
		cli_table_align_right(c.t, 0);
		cli_table_align_right(c.t, 1);
		error = 0;
		if (error == 0) error = cli_table_cell(c.t, "CHECKPOINT");
		if (error == 0) error = cli_table_cell(c.t, "SEQ");
		if (error == 0) error = cli_table_cell(c.t, "TIME");
		if (error == 0) error = cli_table_cell(c.t, "HEAD");
		if (error == 0) error = cli_table_cell(c.t, "KEY");
		if (error < 0) {
			cli_table_free(c.t);
			return cli_fail(error, "out of memory");
		}
	}
	docket_error_clear();
	if ((error = docket_checkpoint_list(ledger, list_one, &c)) < 0)
		rc = cli_fail(error, "cannot read the checkpoints");
	else if (json && cli_json_pretty(stdout, c.arr) < 0)
		rc = cli_fail(DOCKET_ENOMEM, "cannot write output");
	else if (!json)
		cli_table_print(c.t, stdout, g->color_out, 1);
	json_decref(c.arr);
	cli_table_free(c.t);
	return rc;
}

/* Write `len` bytes to `path` ("-": stdout). */
static int write_text(const char *path, const char *text, size_t len)
{
	FILE *f = strcmp(path, "-") == 0 ? stdout : fopen(path, "w");
	int bad;

	if (!f) {
		cli_error("cannot write %s: %s", path, strerror(errno));
		return CLI_EXIT_SYSTEM;
	}
	bad = fwrite(text, 1, len, f) != len;
	bad |= f == stdout ? fflush(f) != 0 : fclose(f) != 0;
	if (bad) {
		cli_error("cannot write %s", path);
		return CLI_EXIT_SYSTEM;
	}
	return CLI_EXIT_OK;
}

/* Save the last checkpoint's record (JSON, the pre-note witness format) or
 * its signed note to `path`. */
static int save_checkpoint(docket_ledger *ledger, const char *path, int record)
{
	char *text = NULL;
	size_t len = 0;
	int error, rc;

	docket_error_clear();
	error = record ? docket_checkpoint_record(&text, ledger, 0)
		       : docket_checkpoint_note(&text, &len, ledger, 0);
	if (error < 0)
		return cli_fail(error, "cannot read the checkpoint");
	if (record) {
		char *line = NULL;
		docket_buf b = DOCKET_BUF_INIT;

		if (docket_buf_printf(&b, "%s\n", text) < 0) {
			docket_free(text);
			return cli_fail_oom();
		}
		line = b.ptr;
		len = b.len;
		docket_free(text);
		text = line;
	}
	rc = write_text(path, text, len);
	docket_free(text);
	return rc;
}

/* The consistency proof from OLD.note to the newest checkpoint, to `path`. */
static int save_consistency(docket_ledger *ledger, const char *old_path, const char *path)
{
	docket_buf old = DOCKET_BUF_INIT;
	char *proof = NULL;
	size_t len = 0;
	int error, rc;

	docket_error_clear();
	if ((error = note_read_file(&old, old_path)) < 0) {
		docket_buf_dispose(&old);
		return cli_fail(error, "cannot read the old checkpoint");
	}
	if ((error = docket_checkpoint_consistency(&proof, &len, ledger, old.ptr ? old.ptr : "", old.len)) < 0) {
		docket_buf_dispose(&old);
		return cli_fail(error, "cannot make the consistency proof");
	}
	docket_buf_dispose(&old);
	rc = write_text(path, proof, len);
	docket_free(proof);
	return rc;
}

static int print_checkpoint(const docket_checkpoint *cp, int created, int json)
{
	json_t *j;

	if (!json) {
		if (created)
			printf("checkpoint %llu: seq %llu, head %.16s..., key %.16s...\n",
			       (unsigned long long)cp->index, (unsigned long long)cp->seq,
			       cp->head, cp->key_id);
		else
			printf("no new events since checkpoint %llu (seq %llu)\n",
			       (unsigned long long)cp->index, (unsigned long long)cp->seq);
		return CLI_EXIT_OK;
	}
	if ((j = checkpoint_json(cp)) && json_object_set_new(j, "created", json_boolean(created)) < 0)
		json_decref(j), j = NULL;
	return cli_print_json(j);
}

int cmd_checkpoint(const cli_command *cmd, const cli_global *g, int argc, char **argv)
{
	static const char description[] =
		"Signs the ledger's chain head (seq and hash) and the root of its Merkle tree\n"
		"with the Ed25519 key made by `docket keygen` and stores the checkpoint in the\n"
		"ledger. Each checkpoint names the previous one's digest, so the checkpoints\n"
		"form their own chain. Each also carries a C2SP signed note of the tree head\n"
		"(origin docket.dev/ledger/<ledger id>, size, root): -o saves that note, which\n"
		"standard transparency-log tools and `docket witness` read; keep it away from\n"
		"the ledger and `docket verify --pubkey KEY.pub --witness FILE` detects even a\n"
		"ledger cut off before its last checkpoints (--record FILE saves the JSON\n"
		"record instead, the format of docket before signed notes).\n"
		"\n"
		"--consistency OLD.note writes the RFC 6962 consistency proof from the tree of\n"
		"an older checkpoint note to the newest checkpoint (after making one, with\n"
		"--key), to -o FILE or stdout, as a C2SP tlog-witness add-checkpoint body:\n"
		"\"old <size>\", one base64 hash a line, a blank line, the newest signed note.\n"
		"Give it to `docket witness --proof`. See docs/audit.md.\n";
	const char *key = NULL, *out = NULL, *record = NULL, *old = NULL;
	int list = 0, json = 0;
	const cli_opt opts[] = {
		{ CLI_OPT_STRING, "key", 'k', &key, "FILE", "the private key to sign with", 0 },
		{ CLI_OPT_STRING, "output", 'o', &out, "FILE", "save the signed note (or the proof) to FILE", 0 },
		{ CLI_OPT_STRING, "record", 0, &record, "FILE", "save the checkpoint's JSON record to FILE", 0 },
		{ CLI_OPT_STRING, "consistency", 0, &old, "OLD", "write the consistency proof from the note OLD", 0 },
		{ CLI_OPT_SWITCH, "list", 0, &list, NULL, "list the stored checkpoints", 0 },
		CLI_OPT_JSON(&json),
		{ CLI_OPT_END, NULL, 0, NULL, NULL, NULL, 0 }
	};
	docket_ledger *ledger = NULL;
	docket_checkpoint cp;
	int rc, error, created = 0;

	if ((rc = cli_parse(cmd, opts, description, argc, argv)) != CLI_PARSE_OK)
		return CLI_PARSE_EXIT(rc);
	if (!list && !key && !old) {
		cli_error("checkpoint needs --key FILE (or --list, or --consistency OLD)");
		cli_usage_line(stderr, cmd, opts);
		return CLI_EXIT_USAGE;
	}
	if ((rc = cli_open_ledger(&ledger, g, list || !key ? CLI_OPEN_READ : 0)) != CLI_EXIT_OK)
		return rc;
	if (list) {
		rc = list_checkpoints(ledger, g, json);
		goto cleanup;
	}
	if (key) {
		docket_error_clear();
		if ((error = docket_checkpoint_create(&cp, &created, ledger, key)) < 0) {
			rc = cli_fail(error, "cannot make a checkpoint");
			goto cleanup;
		}
		if (out && !old && (rc = save_checkpoint(ledger, out, 0)) != CLI_EXIT_OK)
			goto cleanup;
		if (record && (rc = save_checkpoint(ledger, record, 1)) != CLI_EXIT_OK)
			goto cleanup;
		if (!old || out) {
			/* stdout carries the proof when there is no -o */
			rc = print_checkpoint(&cp, created, json);
			if (rc == CLI_EXIT_OK && out && !old && !json)
				printf("signed note saved to %s\n", out);
			if (rc == CLI_EXIT_OK && record && !json)
				printf("record saved to %s\n", record);
		}
	}
	if (old && (rc = save_consistency(ledger, old, out ? out : "-")) == CLI_EXIT_OK && out && !json)
		printf("consistency proof saved to %s\n", out);
cleanup:
	docket_ledger_free(ledger);
	return rc;
}
