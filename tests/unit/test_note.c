/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_note.c: C2SP signed notes, checkpoints and cosignatures (audit/note.c).
 *
 * The expected values come from outside docket: the signed note of
 * golang.org/x/mod/sumdb/note's documentation (key PeterNeumann, whose
 * private seed Go publishes, so the signature must come out byte for byte),
 * a real checkpoint of the arche2025h1 CT log with the cosignature of the
 * remora.n621.de witness (their public keys as published verifier keys),
 * and RFC 4648's base64 vectors. Every positive case has negative twins.
 */
#include "testutil.h"

#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>

#include "util/buf.h"
#include "audit/note.h"

#define EM "\xe2\x80\x94"

/* golang.org/x/mod/sumdb/note: "Here is a well-formed signed note". */
static const char go_text[] =
	"If you think cryptography is the answer to your problem,\n"
	"then you don't know what your problem is.\n";
static const char go_sig_line[] =
	EM " PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n";
/* PRIVATE+KEY+PeterNeumann+c74f20a3+<base64(0x01 || seed)> */
static const char go_skey_b64[] = "AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz";
/* PeterNeumann+c74f20a3+<base64(0x01 || public key)> */
static const char go_vkey_b64[] = "ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW";

/* A checkpoint of arche2025h1.staging.ct.transparency.dev with cosignatures
 * (a Python C2SP implementation's test data). */
static const char arche_body[] =
	"arche2025h1.staging.ct.transparency.dev\n"
	"1432088532\n"
	"U7WM79jrzyhGZ5/GUBTpM7NzwdyfFx61t3RovgcC4Ro=\n";
static const char arche_sigs[] =
	EM " arche2025h1.staging.ct.transparency.dev zTM8sQAAAZ5W0WdjBAMARjBEAiBjW5IQf9pvsYLfQFX6hoGREPMHbdQ3urbllzalApkptQIgIpwtEroeW2BXaHAI4kJXFbon5Ch9MNL5zRNZ55lvGt0=\n"
	EM " arche2025h1.staging.ct.transparency.dev ui8GwCF1+kWqZrxGdhj4aX3gcw7XUlXQQabg/27lefwhUkzbC3NygNI75MdhL1bfTW9g8Ei59RA23oHP7Ry1k3ZFWwQ=\n"
	EM " transparency.dev/DEV:witness-little-garden 2AQqhwAAAABqEiEgzgFIqqhbUoDwjMWE6UP8nd8/KYTzwZ2rhIgcqoXHAwVkjZr4AscylP3v7sEodkRAErumC2q44vdgJY096st5BQ==\n"
	EM " witness1.smartit.nu/witness1 pIyCDwAAAABqEiEghIp82KWebrw7/oHQwlTAm3g2RKS4+eebl8eO0WH+/iEcxZ75W3u5hNI7TOQtmJbqmNWVuE0tgh0XwzdZsDsUAQ==\n"
	EM " remora.n621.de 2net5wAAAABqEiEgPlfF3V06o0Y+fHM+J5J9s27wgxxcOVSpZ/2g/KSiXCg9DEZI+aVCIobWX9sXTynk5XeU/zZ0WBxtqB0DrAWfBw==\n"
	EM " witness.stagemole.eu Z/euoAAAAABqEiEgw0i+7g2ENfDAWHmtRzCfKTHSDwYDJA2NmKeGi9Y8FtEyOUvVr+AJmIY/2TUFucgKi7lI7cUiOvKFYe/TmN9DAg==\n";
/* remora.n621.de+da77ade7+... (the log's own key ID is not the signed-note
 * derivation, so only the cosignature is checked here) */
static const char remora_vkey_b64[] = "BOvN63jn/bLvkieywe8R6UYAtVtNbZpXh34x7onlmtw2";

/* A key from base64(type || 32 bytes), as in a verifier or signer key. */
static EVP_PKEY *key_from_b64(const char *b64, uint8_t type, int private_key)
{
	uint8_t raw[64];
	size_t len = 0;
	EVP_PKEY *k;

	assert_int_equal(note_b64_decode(raw, sizeof(raw), &len, b64, strlen(b64)), 0);
	assert_int_equal(len, 33);
	assert_int_equal(raw[0], type);
	k = private_key ? EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, raw + 1, 32)
			: EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, raw + 1, 32);
	assert_non_null(k);
	return k;
}

static char *cat(const char *a, const char *b, const char *c)
{
	docket_buf out = DOCKET_BUF_INIT;

	assert_int_equal(docket_buf_printf(&out, "%s%s%s", a, b, c), 0);
	return out.ptr;
}

static int parse_str(note_msg *n, const char *s)
{
	return note_parse(n, s, strlen(s));
}

/* ---- base64 ------------------------------------------------------------ */

static void test_base64_rfc4648(void **state)
{
	static const char *const vec[][2] = { { "f", "Zg==" }, { "fo", "Zm8=" }, { "foo", "Zm9v" },
					      { "foob", "Zm9vYg==" }, { "fooba", "Zm9vYmE=" },
					      { "foobar", "Zm9vYmFy" } };
	(void)state;
	for (size_t i = 0; i < sizeof(vec) / sizeof(vec[0]); i++) {
		docket_buf b = DOCKET_BUF_INIT;
		uint8_t raw[16];
		size_t len;

		assert_int_equal(note_b64_put(&b, (const uint8_t *)vec[i][0], strlen(vec[i][0])), 0);
		assert_string_equal(b.ptr, vec[i][1]);
		assert_int_equal(note_b64_decode(raw, sizeof(raw), &len, vec[i][1], strlen(vec[i][1])), 0);
		assert_int_equal(len, strlen(vec[i][0]));
		assert_memory_equal(raw, vec[i][0], len);
		docket_buf_dispose(&b);
	}
}

static void test_base64_strict(void **state)
{
	static const char *const bad[] = { "Zg=", "Zg", "Z===", "Zh==", "Zm9=", "Zm 9", "Zm9v\n",
					   "Zm-v", "=Zm9", "Zg==Zg==" };
	uint8_t raw[16];
	size_t len;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(note_b64_decode(raw, sizeof(raw), &len, bad[i], strlen(bad[i])), DOCKET_EINVALID);
	assert_int_equal(note_b64_decode(raw, sizeof(raw), &len, "", 0), DOCKET_EINVALID);
	/* the room is exact: "foob" needs 4 bytes, not the 6 of its two groups */
	memset(raw, 0xAA, sizeof(raw));
	assert_int_equal(note_b64_decode(raw, 3, &len, "Zm9vYg==", 8), DOCKET_EINVALID);
	assert_int_equal(note_b64_decode(raw, 4, &len, "Zm9vYg==", 8), 0);
	assert_int_equal(len, 4);
	assert_memory_equal(raw, "foob", 4);
	assert_int_equal(raw[4], 0xAA);
}

/* ---- the Go vector ------------------------------------------------------ */

static void test_go_vector_sign(void **state)
{
	EVP_PKEY *k = key_from_b64(go_skey_b64, 0x01, 1);
	docket_buf line = DOCKET_BUF_INIT;
	uint32_t id;

	(void)state;
	assert_int_equal(note_key_id(&id, "PeterNeumann", NOTE_TYPE_ED25519, k), 0);
	assert_int_equal(id, 0xc74f20a3u);
	assert_int_equal(note_sign(&line, "PeterNeumann", k, go_text, strlen(go_text)), 0);
	assert_string_equal(line.ptr, go_sig_line);
	/* a bad key name is refused, not signed */
	docket_buf_clear(&line);
	assert_int_equal(note_sign(&line, "Peter Neumann", k, go_text, strlen(go_text)), DOCKET_EINVALID);
	assert_int_equal(note_sign(&line, "a+b", k, go_text, strlen(go_text)), DOCKET_EINVALID);
	assert_int_equal(note_sign(&line, "", k, go_text, strlen(go_text)), DOCKET_EINVALID);
	docket_buf_dispose(&line);
	EVP_PKEY_free(k);
}

static void test_go_vector_verify(void **state)
{
	EVP_PKEY *k = key_from_b64(go_vkey_b64, 0x01, 0), *other = key_from_b64(remora_vkey_b64, 0x04, 0);
	char *msg = cat(go_text, "\n", go_sig_line);
	note_msg n;

	(void)state;
	assert_int_equal(parse_str(&n, msg), 0);
	assert_int_equal(n.nsigs, 1);
	assert_int_equal(n.sig[0].key_id, 0xc74f20a3u);
	assert_int_equal(n.text.len, strlen(go_text));
	assert_int_equal(note_verify_sig(&n, "PeterNeumann", k), 0);
	/* another name, another key: not a signature by that key */
	assert_int_equal(note_verify_sig(&n, "PeterNeumanN", k), DOCKET_ENOTFOUND);
	assert_int_equal(note_verify_sig(&n, "PeterNeumann", other), DOCKET_ENOTFOUND);
	/* one changed letter in the text */
	msg[10] = 'C';
	assert_int_equal(parse_str(&n, msg), 0);
	assert_int_equal(note_verify_sig(&n, "PeterNeumann", k), DOCKET_ECORRUPT);
	free(msg);
	EVP_PKEY_free(k);
	EVP_PKEY_free(other);
}

/* ---- a real cosigned checkpoint ----------------------------------------- */

static void test_real_checkpoint(void **state)
{
	EVP_PKEY *w = key_from_b64(remora_vkey_b64, 0x04, 0);
	char *msg = cat(arche_body, "\n", arche_sigs);
	docket_note_checkpoint c;
	uint8_t want_root[32];
	size_t len, ext = 9;
	uint64_t t = 0;
	uint32_t id;
	note_msg n;

	(void)state;
	assert_int_equal(parse_str(&n, msg), 0);
	assert_int_equal(n.nsigs, 6);
	assert_int_equal(note_checkpoint_parse(&c, &ext, (const char *)n.text.ptr, n.text.len), 0);
	assert_string_equal(c.origin, "arche2025h1.staging.ct.transparency.dev");
	assert_int_equal(c.size, 1432088532u);
	assert_int_equal(ext, 0);
	assert_int_equal(note_b64_decode(want_root, sizeof(want_root), &len, "U7WM79jrzyhGZ5/GUBTpM7NzwdyfFx61t3RovgcC4Ro=", 44), 0);
	assert_memory_equal(c.root, want_root, 32);
	assert_int_equal(note_key_id(&id, "remora.n621.de", NOTE_TYPE_COSIG_V1, w), 0);
	assert_int_equal(id, 0xda77ade7u);
	assert_int_equal(note_verify_cosig(&n, "remora.n621.de", w, &t), 0);
	/* the timestamp: bytes 4..11 of the signature "2net5wAAAABqEiEg..." */
	assert_int_equal(t, 0x6a122120u);
	/* by key alone (the name taken from the line) */
	assert_int_equal(note_verify_cosig(&n, NULL, w, &t), 0);
	/* a cosignature key is no log key; the name must be the line's */
	assert_int_equal(note_verify_sig(&n, "remora.n621.de", w), DOCKET_ENOTFOUND);
	assert_int_equal(note_verify_cosig(&n, "remora.n621.de.", w, NULL), DOCKET_ENOTFOUND);
	/* the size clobbered: the cosignature fails */
	free(msg);
	msg = cat("arche2025h1.staging.ct.transparency.dev\n42\nU7WM79jrzyhGZ5/GUBTpM7NzwdyfFx61t3RovgcC4Ro=\n",
		  "\n", arche_sigs);
	assert_int_equal(parse_str(&n, msg), 0);
	assert_int_equal(note_verify_cosig(&n, "remora.n621.de", w, NULL), DOCKET_ECORRUPT);
	free(msg);
	EVP_PKEY_free(w);
}

/* ---- round trips with fresh keys ------------------------------------------ */

static void test_sign_cosign_round_trip(void **state)
{
	EVP_PKEY *log = EVP_PKEY_Q_keygen(NULL, NULL, "ED25519"), *w = EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
	EVP_PKEY *w2 = EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
	docket_note_checkpoint c, back;
	docket_buf msg = DOCKET_BUF_INIT;
	size_t text_len;
	uint64_t t = 0;
	note_msg n;

	(void)state;
	memset(&c, 0, sizeof(c));
	snprintf(c.origin, sizeof(c.origin), "docket.dev/ledger/0123456789abcdef0123456789abcdef");
	c.size = 7;
	for (int i = 0; i < 32; i++)
		c.root[i] = (uint8_t)(i * 7);
	assert_int_equal(note_checkpoint_body(&msg, &c), 0);
	text_len = msg.len;
	assert_int_equal(note_checkpoint_parse(&back, NULL, msg.ptr, msg.len), 0);
	assert_memory_equal(&back, &c, sizeof(c));
	assert_int_equal(docket_buf_putc(&msg, '\n'), 0);
	assert_int_equal(note_sign(&msg, c.origin, log, msg.ptr, text_len), 0);
	assert_int_equal(note_cosign(&msg, "witness.example/w1", w, 1700000000u, msg.ptr, text_len), 0);
	assert_int_equal(note_parse(&n, msg.ptr, msg.len), 0);
	assert_int_equal(n.nsigs, 2);
	assert_int_equal(note_verify_sig(&n, c.origin, log), 0);
	assert_int_equal(note_verify_cosig(&n, "witness.example/w1", w, &t), 0);
	assert_int_equal(t, 1700000000u);
	assert_int_equal(note_verify_cosig(&n, NULL, w2, NULL), DOCKET_ENOTFOUND);
	assert_int_equal(note_verify_sig(&n, c.origin, w), DOCKET_ENOTFOUND);
	/* out-of-range time is refused */
	assert_int_equal(note_cosign(&msg, "w", w, (uint64_t)INT64_MAX + 1, msg.ptr, text_len), DOCKET_EINVALID);
	docket_buf_dispose(&msg);
	EVP_PKEY_free(log);
	EVP_PKEY_free(w);
	EVP_PKEY_free(w2);
}

/* ---- malformed notes -------------------------------------------------------- */

static void expect_bad_note(const char *msg, size_t len, const char *why)
{
	note_msg n;

	assert_int_equal(note_parse(&n, msg, len), DOCKET_EINVALID);
	if (!strstr(docket_error_last()->message, why))
		fail_msg("note %.40s: '%s' does not say '%s'", msg, docket_error_last()->message, why);
}

static void test_malformed_notes(void **state)
{
	static const struct { const char *msg; const char *why; } cases[] = {
		{ "", "empty" },
		{ "a\n1\nroot\n" EM " n AAAAAAA=\n", "no blank line" },
		{ "a\n\n" EM " n AAAAAAA=", "newline" },
		{ "a\n\n", "no signature line" },
		{ "a\r\n\n" EM " n AAAAAAA=\n", "carriage return" },
		{ "a\n\n" EM " n AAAAAAA=\r\n", "carriage return" },
		{ "a\tb\n\n" EM " n AAAAAAA=\n", "control character 0x09" },
		{ "a\xff\n\n" EM " n AAAAAAA=\n", "UTF-8" },
		{ "a\xc0\xaf\n\n" EM " n AAAAAAA=\n", "UTF-8" },
		{ "a\n\n- n AAAAAAA=\n", "does not start with" },
		{ "a\n\n" EM "n AAAAAAA=\n", "does not start with" },
		{ "a\n\n" EM " nAAAAAAA=\n", "no space" },
		{ "a\n\n" EM "  AAAAAAA=\n", "bad key name" },
		{ "a\n\n" EM " n+1 AAAAAAA=\n", "bad key name" },
		{ "a\n\n" EM " n\xc2\xa0x AAAAAAA=\n", "bad key name" },
		{ "a\n\n" EM " n AAAAAAA\n", "base64" },
		{ "a\n\n" EM " n AAAAAA*=\n", "base64" },
		{ "a\n\n" EM " n AAAAAAB=\n", "canonical" },
		{ "a\n\n" EM " n AAAA AAA=\n", "base64" },
		{ "a\n\n" EM " n \n", "base64" },
		{ "a\n\n" EM " n AAAAAA==\n", "too short" },
		{ "a\n\n" EM " n AAAAAAA=\n\n", "no signature line" },
	};
	docket_buf big = DOCKET_BUF_INIT;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		expect_bad_note(cases[i].msg, strlen(cases[i].msg), cases[i].why);
	/* a NUL byte inside */
	{
		static const char nul[] = "a\0b\n\n" EM " n AAAAAAA=\n";

		expect_bad_note(nul, sizeof(nul) - 1, "control character 0x00");
	}
	/* a line longer than the limit */
	for (size_t i = 0; i <= NOTE_MAX_LINE; i++)
		assert_int_equal(docket_buf_putc(&big, 'x'), 0);
	assert_int_equal(docket_buf_puts(&big, "\n\n" EM " n AAAAAAA=\n"), 0);
	expect_bad_note(big.ptr, big.len, "longer than");
	/* too many signature lines */
	docket_buf_clear(&big);
	assert_int_equal(docket_buf_puts(&big, "a\n\n"), 0);
	for (int i = 0; i <= NOTE_MAX_SIGS; i++)
		assert_int_equal(docket_buf_puts(&big, EM " n AAAAAAA=\n"), 0);
	expect_bad_note(big.ptr, big.len, "signature lines");
	/* ... but exactly the limit is fine */
	big.len -= strlen(EM " n AAAAAAA=\n");
	{
		note_msg n;

		assert_int_equal(note_parse(&n, big.ptr, big.len), 0);
		assert_int_equal(n.nsigs, NOTE_MAX_SIGS);
		assert_int_equal(n.sig[0].key_id, 0);
	}
	docket_buf_dispose(&big);
}

static void test_text_ends_at_last_blank_line(void **state)
{
	note_msg n;
	const char *msg = "a\n\nb\n\n" EM " n AAAAAAA=\n";

	(void)state;
	assert_int_equal(parse_str(&n, msg), 0);
	assert_int_equal(n.text.len, 5);
	assert_int_equal(n.nsigs, 1);
}

/* ---- checkpoint bodies ---------------------------------------------------------- */

static void expect_bad_body(const char *text, const char *why)
{
	docket_note_checkpoint c;

	assert_int_equal(note_checkpoint_parse(&c, NULL, text, strlen(text)), DOCKET_EINVALID);
	if (!strstr(docket_error_last()->message, why))
		fail_msg("body %s: '%s' does not say '%s'", text, docket_error_last()->message, why);
}

static void test_checkpoint_bodies(void **state)
{
	static const char root[] = "U7WM79jrzyhGZ5/GUBTpM7NzwdyfFx61t3RovgcC4Ro=";
	docket_note_checkpoint c;
	docket_buf b = DOCKET_BUF_INIT;
	size_t ext = 0;

	(void)state;
	assert_int_equal(docket_buf_printf(&b, "o\n0\n%s\next one\next two\n", root), 0);
	assert_int_equal(note_checkpoint_parse(&c, &ext, b.ptr, b.len), 0);
	assert_int_equal(c.size, 0);
	assert_int_equal(ext, 2);
	docket_buf_clear(&b);
	assert_int_equal(docket_buf_printf(&b, "o\n18446744073709551615\n%s\n", root), 0);
	assert_int_equal(note_checkpoint_parse(&c, NULL, b.ptr, b.len), 0);
	assert_true(c.size == UINT64_MAX);
	docket_buf_dispose(&b);

	expect_bad_body("o\n1\n", "2 lines");
	expect_bad_body("o\n1\nU7WM79jrzyhGZ5/GUBTpM7NzwdyfFx61t3RovgcC4Ro=", "newline");
	expect_bad_body("o\n01\nU7WM79jrzyhGZ5/GUBTpM7NzwdyfFx61t3RovgcC4Ro=\n", "leading zeros");
	expect_bad_body("o\n\nU7WM79jrzyhGZ5/GUBTpM7NzwdyfFx61t3RovgcC4Ro=\n", "line 2 is empty");
	expect_bad_body("o\n-1\nU7WM79jrzyhGZ5/GUBTpM7NzwdyfFx61t3RovgcC4Ro=\n", "tree size");
	expect_bad_body("o\n18446744073709551616\nU7WM79jrzyhGZ5/GUBTpM7NzwdyfFx61t3RovgcC4Ro=\n", "tree size");
	expect_bad_body("o\n1 \nU7WM79jrzyhGZ5/GUBTpM7NzwdyfFx61t3RovgcC4Ro=\n", "tree size");
	expect_bad_body("o\n1\nU7WM79jrzyhGZ5/GUBTpM7NzwdyfFx61t3RovgcC4R=\n", "root hash");
	expect_bad_body("o\n1\nZm9vYmFy\n", "6 bytes");
	expect_bad_body("o\n1\nU7WM79jrzyhGZ5/GUBTpM7NzwdyfFx61t3RovgcC4Ro=\n\n", "line 4 is empty");
	expect_bad_body("\n1\nU7WM79jrzyhGZ5/GUBTpM7NzwdyfFx61t3RovgcC4Ro=\n", "line 1 is empty");
	expect_bad_body("o\r\n1\nU7WM79jrzyhGZ5/GUBTpM7NzwdyfFx61t3RovgcC4Ro=\n", "control character");
	{
		char origin[320];

		memset(origin, 'o', 256);
		snprintf(origin + 256, sizeof(origin) - 256, "\n1\n%s\n", root);
		expect_bad_body(origin, "origin longer");
	}
}

/* ---- consistency proof files ------------------------------------------------------ */

/* The example request body of c2sp.org/tlog-witness (add-checkpoint). */
static const char witness_example[] =
	"old 20852014\n"
	"PlRNCrwHpqhGrupue0L7gxbjbMiKA9temvuZZDDpkaw=\n"
	"jrJZDmY8Y7SyJE0MWLpLozkIVMSMZcD5kvuKxPC3swk=\n"
	"5+pKlUdi2LeF/BcMHBn+Ku6yhPGNCswZZD1X/6QgPd8=\n"
	"/6WVhPs2CwSsb5rYBH5cjHV/wSmA79abXAwhXw3Kj/0=\n"
	"\n"
	"example.com/behind-the-sofa\n"
	"20852163\n"
	"CsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n"
	"\n"
	EM " example.com/behind-the-sofa Az3grlgtzPICa5OS8npVmf1Myq/5IZniMp+ZJurmRDeOoRDe4URYN7u5/Zhcyv2q1gGzGku9nTo+zyWE+xeMcTOAYQ8=\n"
	EM " example.com/behind-the-sofa opLqBQsREYCgu6xQkYQwJr9fo45a62DN9EdmHXnZdXNqlcVGlCum2Wks+49/V6267UEjw6QUXTS5Rovnzv++qbSzm9Q=\n";

static void test_proof_file(void **state)
{
	note_proof p;
	note_msg n;
	docket_note_checkpoint c;
	docket_buf again = DOCKET_BUF_INIT;
	uint8_t h0[32];
	size_t len;

	(void)state;
	assert_int_equal(note_proof_parse(&p, witness_example, strlen(witness_example)), 0);
	assert_int_equal(p.old_size, 20852014u);
	assert_int_equal(p.len, 4);
	assert_int_equal(note_b64_decode(h0, sizeof(h0), &len, "PlRNCrwHpqhGrupue0L7gxbjbMiKA9temvuZZDDpkaw=", 44), 0);
	assert_memory_equal(p.hash[0], h0, 32);
	assert_int_equal(note_parse(&n, (const char *)p.checkpoint.ptr, p.checkpoint.len), 0);
	assert_int_equal(n.nsigs, 2);
	assert_int_equal(note_checkpoint_parse(&c, NULL, (const char *)n.text.ptr, n.text.len), 0);
	assert_int_equal(c.size, 20852163u);
	assert_int_equal(note_proof_put(&again, p.old_size, (const uint8_t (*)[32])p.hash, p.len,
					(const char *)p.checkpoint.ptr, p.checkpoint.len), 0);
	assert_string_equal(again.ptr, witness_example);
	docket_buf_dispose(&again);
}

static void expect_bad_proof(const char *msg, const char *why)
{
	note_proof p;

	assert_int_equal(note_proof_parse(&p, msg, strlen(msg)), DOCKET_EINVALID);
	if (!strstr(docket_error_last()->message, why))
		fail_msg("proof %s: '%s' does not say '%s'", msg, docket_error_last()->message, why);
}

static void test_malformed_proofs(void **state)
{
	docket_buf big = DOCKET_BUF_INIT;

	(void)state;
	expect_bad_proof("", "old <size>");
	expect_bad_proof("new 1\n\nx", "old <size>");
	expect_bad_proof("old 01\n\nx", "leading zeros");
	expect_bad_proof("old \n\nx", "old size");
	expect_bad_proof("old 1\nPlRNCrwHpqhGrupue0L7gxbjbMiKA9temvuZZDDpkaw=\n", "no blank line");
	expect_bad_proof("old 1\nZm9vYmFy\n\nx", "6 bytes");
	expect_bad_proof("old 1\nPlRNCrwHpqhGrupue0L7gxbjbMiKA9temvuZZDDpkaw\n\nx", "base64");
	expect_bad_proof("old 0\nPlRNCrwHpqhGrupue0L7gxbjbMiKA9temvuZZDDpkaw=\n\nx", "must be empty");
	expect_bad_proof("old 1\r\n\nx", "carriage return");
	assert_int_equal(docket_buf_puts(&big, "old 1\n"), 0);
	for (int i = 0; i <= NOTE_MAX_PROOF; i++)
		assert_int_equal(docket_buf_puts(&big, "PlRNCrwHpqhGrupue0L7gxbjbMiKA9temvuZZDDpkaw=\n"), 0);
	assert_int_equal(docket_buf_puts(&big, "\nx"), 0);
	expect_bad_proof(big.ptr, "more than 63");
	docket_buf_dispose(&big);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_base64_rfc4648),
		cmocka_unit_test(test_base64_strict),
		cmocka_unit_test(test_go_vector_sign),
		cmocka_unit_test(test_go_vector_verify),
		cmocka_unit_test(test_real_checkpoint),
		cmocka_unit_test(test_sign_cosign_round_trip),
		cmocka_unit_test(test_malformed_notes),
		cmocka_unit_test(test_text_ends_at_last_blank_line),
		cmocka_unit_test(test_checkpoint_bodies),
		cmocka_unit_test(test_proof_file),
		cmocka_unit_test(test_malformed_proofs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
