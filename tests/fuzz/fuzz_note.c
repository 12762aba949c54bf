/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_note.c: signed notes, checkpoint bodies and consistency proof files
 * are outside input (`docket witness NOTE --proof FILE`, `docket verify
 * --witness FILE`, `docket checkpoint --consistency OLD.note`). Parse
 * arbitrary bytes as each; what parses must serialise back to the same
 * bytes, and checking its signatures against a fixed key must not crash.
 */
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "audit/note.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* An arbitrary fixed public key: only the code paths matter here. */
static const uint8_t fixed_key[32] = { 0x1a, 0x5c, 0xd9, 0x07, 0x14, 0x3c, 0x38, 0x4c, 0x41, 0xe8, 0x30,
				       0xc5, 0xbc, 0xe1, 0x2a, 0xa8, 0x81, 0x7e, 0xc5, 0x64, 0x9a, 0xaa,
				       0xbf, 0x2c, 0x31, 0x38, 0x8b, 0x35, 0xb2, 0xd7, 0x44, 0xd6 };

static void check_note(const char *msg, size_t len, EVP_PKEY *key)
{
	static note_msg n;
	docket_note_checkpoint c;
	docket_buf body = DOCKET_BUF_INIT;
	size_t ext = 0;
	int rc;

	if (note_parse(&n, msg, len) != 0)
		return;
	if (n.text.len == 0 || n.text.len > len || n.nsigs == 0)
		abort();
	rc = note_verify_sig(&n, "x", key);
	rc = note_verify_cosig(&n, NULL, key, NULL);
	(void)rc;
	if (note_checkpoint_parse(&c, &ext, (const char *)n.text.ptr, n.text.len) != 0)
		return;
	if (note_checkpoint_body(&body, &c) == 0 && ext == 0 &&
	    (body.len != n.text.len || memcmp(body.ptr, n.text.ptr, body.len) != 0))
		abort();  /* a body without extensions must round-trip exactly */
	docket_buf_dispose(&body);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static note_proof p;
	EVP_PKEY *key = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, fixed_key, sizeof(fixed_key));
	docket_buf again = DOCKET_BUF_INIT;

	if (!key)
		abort();
	check_note((const char *)data, size, key);
	if (note_proof_parse(&p, (const char *)data, size) == 0) {
		if (note_proof_put(&again, p.old_size, (const uint8_t (*)[DOCKET_TLOG_HASH_LEN])p.hash, p.len,
				   (const char *)p.checkpoint.ptr, p.checkpoint.len) != 0 ||
		    again.len != size || memcmp(again.ptr, data, size) != 0)
			abort();  /* the proof file must round-trip exactly */
		check_note((const char *)p.checkpoint.ptr, p.checkpoint.len, key);
	}
	docket_buf_dispose(&again);
	EVP_PKEY_free(key);
	return 0;
}
