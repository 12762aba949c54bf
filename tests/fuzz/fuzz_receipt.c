/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_receipt.c: a receipt is outside input (`docket verify-receipt FILE`).
 * Check arbitrary bytes as a receipt against a fixed public key (the seeds in
 * corpus/receipt were proved against a checkpoint signed by its private
 * key, so mutations reach the proofs and the event decoding): it must never
 * crash, and what verifies must tell its story.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "audit/receipt.h"
#include "util/buf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char pubkey_pem[] =
	"-----BEGIN PUBLIC KEY-----\n"
	"MCowBQYDK2VwAyEA2a4hG8AKZ3mdKh0dhLQENXKkanYAoFylbxxtY1O1cZ0=\n"
	"-----END PUBLIC KEY-----\n";

static char key_path[64];

static void remove_key(void)
{
	unlink(key_path);
}

/* The key, written once to a private temporary file. */
static const char *key_file(void)
{
	FILE *f;
	int fd;

	if (*key_path)
		return key_path;
	snprintf(key_path, sizeof(key_path), "/tmp/fuzz-receipt-XXXXXX");
	if ((fd = mkstemp(key_path)) < 0 || !(f = fdopen(fd, "w")) || fputs(pubkey_pem, f) < 0 || fclose(f) != 0)
		abort();
	atexit(remove_key);
	return key_path;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	docket_buf story_text = DOCKET_BUF_INIT;
	receipt_report rep;
	json_t *story = NULL;

	if (receipt_verify(&rep, &story, (const char *)data, size, key_file()) < 0)
		abort();   /* the key is fine: anything else is a verdict, not an error */
	if (rep.ok != (story != NULL) || (!rep.ok && !*rep.problem))
		abort();
	if (story && (receipt_story_text(&story_text, story, &rep) < 0 || story_text.len == 0))
		abort();
	json_decref(story);
	docket_buf_dispose(&story_text);
	return 0;
}
