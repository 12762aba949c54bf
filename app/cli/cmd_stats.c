/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_stats.c: `docket stats`: size, compression, epoch, chain head. */
#include "cli.h"

#include "util/buf.h"
#include "util/error.h"

static void human_bytes(char *out, size_t n, uint64_t v)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double d = (double)v;
	size_t u = 0;

	while (d >= 1024.0 && u + 1 < sizeof(unit) / sizeof(unit[0])) {
		d /= 1024.0;
		u++;
	}
	if (u == 0)
		snprintf(out, n, "%llu B", (unsigned long long)v);
	else
		snprintf(out, n, "%.1f %s", d, unit[u]);
}

int cmd_stats(const cli_command *cmd, const cli_global *g, int argc, char **argv)
{
	static const char description[] =
		"Shows the ledger's facts: events, sessions, pending calls, the size of the\n"
		"data file, bytes per event, the compression ratio (protobuf payload bytes\n"
		"over stored frame bytes), the fencing epoch, the chain head, the number\n"
		"of trained compression dictionaries and the file format (an older one:\n"
		"`docket migrate` converts it).\n";
	int json = 0;
	const cli_opt opts[] = {
		CLI_OPT_JSON(&json),
		{ CLI_OPT_END, NULL, 0, NULL, NULL, NULL, 0 }
	};
	docket_ledger_info info;
	docket_ledger *ledger = NULL;
	char head[65];
	double per_event, ratio;
	int rc, error;

	if ((rc = cli_parse(cmd, opts, description, argc, argv)) != CLI_PARSE_OK)
		return CLI_PARSE_EXIT(rc);
	if ((rc = cli_open_ledger(&ledger, g, CLI_OPEN_READ)) != CLI_EXIT_OK)
		return rc;
	docket_error_clear();
	if ((error = docket_ledger_info_get(ledger, &info)) < 0) {
		rc = cli_fail(error, "cannot read the ledger facts");
		goto cleanup;
	}
	info.ledger_id[sizeof(info.ledger_id) - 1] = '\0';
	docket_hex(head, info.head, sizeof(info.head));
	per_event = info.events ? (double)info.file_bytes / (double)info.events : 0.0;
	ratio = info.frame_bytes ? (double)info.payload_bytes / (double)info.frame_bytes : 0.0;

	if (json) {
		json_t *j = json_pack("{s:s, s:s, s:I, s:I, s:I, s:I, s:s, s:I, s:f, s:I, s:I, s:f, "
				      "s:I, s:I, s:i}",
				      "ledger", g->ledger_path,
				      "ledger_id", info.ledger_id,
				      "events", (json_int_t)info.events,
				      "sessions", (json_int_t)info.sessions,
				      "pending", (json_int_t)info.pending,
				      "epoch", (json_int_t)info.epoch,
				      "chain_head", head,
				      "file_bytes", (json_int_t)info.file_bytes,
				      "bytes_per_event", per_event,
				      "payload_bytes", (json_int_t)info.payload_bytes,
				      "frame_bytes", (json_int_t)info.frame_bytes,
				      "compression_ratio", ratio,
				      "dictionaries", (json_int_t)info.dictionaries,
				      "map_size", (json_int_t)info.map_size,
				      "format", (int)info.format);

		if ((rc = cli_print_json(j)) != CLI_EXIT_OK)
			goto cleanup;
	} else {
		cli_table *t = NULL;
		char a[64], b[64];

		if ((error = cli_table_new(&t, 2)) < 0) {
			rc = cli_fail(error, "out of memory");
			goto cleanup;
		}
		human_bytes(a, sizeof(a), info.file_bytes);
		human_bytes(b, sizeof(b), info.map_size);
		error = 0;
		if (error == 0) error = cli_table_cell(t, "ledger");
		if (error == 0) error = cli_table_cell(t, g->ledger_path);
		if (error == 0) error = cli_table_cell(t, "ledger id");
		if (error == 0) error = cli_table_cell(t, info.ledger_id);
		if (error == 0) error = cli_table_cell(t, "format");
		if (error == 0) error = info.format == DOCKET_FORMAT_VERSION
			? cli_table_cellf(t, "%u", (unsigned)info.format)
			: cli_table_cellf(t, "%u (docket migrate converts it to %u)", (unsigned)info.format,
					  (unsigned)DOCKET_FORMAT_VERSION);
		if (error == 0) error = cli_table_cell(t, "events");
		if (error == 0) error = cli_table_cellf(t, "%llu", (unsigned long long)info.events);
		if (error == 0) error = cli_table_cell(t, "sessions");
		if (error == 0) error = cli_table_cellf(t, "%llu", (unsigned long long)info.sessions);
		if (error == 0) error = cli_table_cell(t, "pending");
		if (error == 0) error = cli_table_cellf(t, "%llu", (unsigned long long)info.pending);
		if (error == 0) error = cli_table_cell(t, "epoch");
		if (error == 0) error = cli_table_cellf(t, "%llu", (unsigned long long)info.epoch);
		if (error == 0) error = cli_table_cell(t, "chain head");
		if (error == 0) error = cli_table_cell(t, head);
		if (error == 0) error = cli_table_cell(t, "bytes on disk");
		if (error == 0) error = cli_table_cellf(t, "%llu (%s)",
							(unsigned long long)info.file_bytes, a);
		if (error == 0) error = cli_table_cell(t, "bytes per event");
		if (error == 0) error = cli_table_cellf(t, "%.1f", per_event);
		if (error == 0) error = cli_table_cell(t, "payload bytes");
		if (error == 0) error = cli_table_cellf(t, "%llu", (unsigned long long)info.payload_bytes);
		if (error == 0) error = cli_table_cell(t, "frame bytes");
		if (error == 0) error = cli_table_cellf(t, "%llu", (unsigned long long)info.frame_bytes);
		if (error == 0) error = cli_table_cell(t, "compression");
		if (error == 0) error = cli_table_cellf(t, "%.2fx (payload / frame bytes)", ratio);
		if (error == 0) error = cli_table_cell(t, "dictionaries");
		if (error == 0) error = cli_table_cellf(t, "%u", (unsigned)info.dictionaries);
		if (error == 0) error = cli_table_cell(t, "map size");
		if (error == 0) error = cli_table_cellf(t, "%llu (%s)",
							(unsigned long long)info.map_size, b);
		if (error < 0) {
			cli_table_free(t);
			rc = cli_fail(error, "out of memory");
			goto cleanup;
		}
		cli_table_print(t, stdout, g->color_out, 0);
		cli_table_free(t);
	}
	rc = CLI_EXIT_OK;

cleanup:
	docket_ledger_free(ledger);
	return rc;
}
