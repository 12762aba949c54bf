/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_checkpoint.c: `docket checkpoint`: sign the chain head; list checkpoints. */
#include "cli.h"

#include <errno.h>
#include <string.h>

#include "docket/audit.h"
#include "util/alloc.h"
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
			: docket_error_set(DOCKET_ENOMEM, "out of memory");
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
		return cli_fail(DOCKET_ENOMEM, "out of memory");
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

/* Save the last checkpoint's record to `path` (a witness to keep elsewhere). */
static int save_witness(docket_ledger *ledger, const char *path)
{
	char *record = NULL;
	FILE *f;
	int error, bad;

	docket_error_clear();
	if ((error = docket_checkpoint_record(&record, ledger, 0)) < 0)
		return cli_fail(error, "cannot read the checkpoint");
	if (!(f = fopen(path, "w"))) {
		cli_error("cannot write %s: %s", path, strerror(errno));
		docket_free(record);
		return CLI_EXIT_SYSTEM;
	}
	bad = fprintf(f, "%s\n", record) < 0;
	bad |= fclose(f) != 0;
	docket_free(record);
	if (bad) {
		cli_error("cannot write %s", path);
		return CLI_EXIT_SYSTEM;
	}
	return CLI_EXIT_OK;
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
		"Signs the ledger's chain head (seq and hash) with the Ed25519 key made by\n"
		"`docket keygen` and stores the checkpoint in the ledger. Each checkpoint\n"
		"names the previous one's digest, so the checkpoints form their own chain.\n"
		"-o saves the checkpoint to a file as well: keep that witness away from the\n"
		"ledger and `docket verify --pubkey KEY.pub --witness FILE` detects even a\n"
		"ledger cut off before its last checkpoints. See docs/audit.md.\n";
	const char *key = NULL, *out = NULL;
	int list = 0, json = 0;
	const cli_opt opts[] = {
		{ CLI_OPT_STRING, "key", 'k', &key, "FILE", "the private key to sign with", 0 },
		{ CLI_OPT_STRING, "output", 'o', &out, "FILE", "also save the checkpoint to FILE (a witness)", 0 },
		{ CLI_OPT_SWITCH, "list", 0, &list, NULL, "list the stored checkpoints", 0 },
		CLI_OPT_JSON(&json),
		{ CLI_OPT_END, NULL, 0, NULL, NULL, NULL, 0 }
	};
	docket_ledger *ledger = NULL;
	docket_checkpoint cp;
	int rc, error, created = 0;

	if ((rc = cli_parse(cmd, opts, description, argc, argv)) != CLI_PARSE_OK)
		return CLI_PARSE_EXIT(rc);
	if (!list && !key) {
		cli_error("checkpoint needs --key FILE (or --list)");
		cli_usage_line(stderr, cmd, opts);
		return CLI_EXIT_USAGE;
	}
	if ((rc = cli_open_ledger(&ledger, g, list ? CLI_OPEN_READ : 0)) != CLI_EXIT_OK)
		return rc;
	if (list) {
		rc = list_checkpoints(ledger, g, json);
		goto cleanup;
	}
	docket_error_clear();
	if ((error = docket_checkpoint_create(&cp, &created, ledger, key)) < 0) {
		rc = cli_fail(error, "cannot make a checkpoint");
		goto cleanup;
	}
	if (out && (rc = save_witness(ledger, out)) != CLI_EXIT_OK)
		goto cleanup;
	rc = print_checkpoint(&cp, created, json);
	if (rc == CLI_EXIT_OK && out && !json)
		printf("saved to %s\n", out);
cleanup:
	docket_ledger_free(ledger);
	return rc;
}
