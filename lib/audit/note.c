/* SPDX-License-Identifier: Apache-2.0 */
/*
 * note.c: C2SP signed-note, tlog-checkpoint and tlog-cosignature/v1
 * (c2sp.org/signed-note, c2sp.org/tlog-checkpoint, c2sp.org/tlog-cosignature;
 * the formats are summed up in note.h and docs/audit.md).
 *
 * Parsing follows golang.org/x/mod/sumdb/note's Open: the whole note is
 * UTF-8 with no control character but "\n"; the text ends at the LAST blank
 * line; every line after it is a signature line. Where Go is lenient, this
 * is stricter (canonical base64 only, bounded line length), never looser.
 */
#include "note.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/evp.h>

#include "util/error.h"
#include "util/utf8.h"

#define SIG_PREFIX "\xe2\x80\x94 " /* U+2014 EM DASH, space */
#define SIG_PREFIX_LEN 4
#define ED25519_SIG_LEN 64
#define ED25519_KEY_LEN 32
#define COSIG_HEADER "cosignature/v1\n"

/* ---- base64 ------------------------------------------------------------ */

static int b64_char(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '+' || c == '/';
}

int note_b64_put(docket_buf *out, const uint8_t *data, size_t len)
{
	size_t need = 4 * ((len + 2) / 3);
	int error;

	if (len > (size_t)INT32_MAX / 2)
		return docket_error_set(DOCKET_EINVALID, "base64: input too long");
	if ((error = docket_buf_reserve(out, need + 1)) < 0)
		return error;
	EVP_EncodeBlock((unsigned char *)out->ptr + out->len, data, (int)len);
	out->len += need;
	out->ptr[out->len] = '\0';
	return 0;
}

int note_b64_decode(uint8_t *out, size_t cap, size_t *out_len, const char *in, size_t len)
{
	docket_buf again = DOCKET_BUF_INIT;
	uint8_t last[3];
	size_t pad = 0, n, body;
	int error = 0;

	*out_len = 0;
	if (len == 0 || len % 4 != 0 || len > (size_t)INT32_MAX / 2)
		return docket_error_set(DOCKET_EINVALID, "bad base64: length %zu is not a positive "
					"multiple of 4", len);
	while (pad < 2 && in[len - 1 - pad] == '=')
		pad++;
	for (size_t i = 0; i < len - pad; i++)
		if (!b64_char((unsigned char)in[i]))
			return docket_error_set(DOCKET_EINVALID, "bad base64: unexpected character at "
						"offset %zu", i);
	n = len / 4 * 3 - pad;
	if (n > cap)
		return docket_error_set(DOCKET_EINVALID, "bad base64: %zu bytes where at most %zu fit", n,
					cap);
	/* EVP_DecodeBlock writes whole 3-byte groups, padding included: the
	 * last group goes through `last` so exactly n bytes reach `out` */
	body = len - 4;
	if ((body && EVP_DecodeBlock(out, (const unsigned char *)in, (int)body) != (int)(body / 4 * 3)) ||
	    EVP_DecodeBlock(last, (const unsigned char *)in + body, 4) != 3)
		return docket_error_set(DOCKET_EINVALID, "bad base64");
	memcpy(out + body / 4 * 3, last, 3 - pad);
	/* canonical only: the bits after the last byte must be zero */
	if ((error = note_b64_put(&again, out, n)) == 0 &&
	    (again.len != len || memcmp(again.ptr, in, len) != 0))
		error = docket_error_set(DOCKET_EINVALID, "bad base64: not the canonical encoding");
	docket_buf_dispose(&again);
	if (error == 0)
		*out_len = n;
	return error;
}

int note_read_file(docket_buf *out, const char *path)
{
	FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
	size_t got;
	int error;

	docket_buf_clear(out);
	if (!f)
		return docket_error_set(errno == ENOENT ? DOCKET_ENOTFOUND : DOCKET_ESTORAGE, "%s: %s", path,
					strerror(errno));
	if ((error = docket_buf_reserve(out, NOTE_MAX_LEN + 1)) == 0) {
		got = fread(out->ptr, 1, NOTE_MAX_LEN + 1, f);
		out->len = got;
		out->ptr[got] = '\0';
		if (ferror(f))
			error = docket_error_set(DOCKET_ESTORAGE, "%s: cannot read", path);
		else if (got > NOTE_MAX_LEN)
			error = docket_error_set(DOCKET_EINVALID, "%s: larger than %zu bytes: not a signed note",
						 path, NOTE_MAX_LEN);
	}
	if (f != stdin)
		fclose(f);
	return error;
}

/* ---- names --------------------------------------------------------------- */

/* The code point at s[*i] (valid UTF-8 already), advancing *i. */
static uint32_t next_cp(const unsigned char *s, size_t *i)
{
	unsigned char c = s[*i];
	size_t n = c < 0x80 ? 0 : c < 0xe0 ? 1 : c < 0xf0 ? 2 : 3;
	uint32_t cp = n == 0 ? c : n == 1 ? (c & 0x1fu) : n == 2 ? (c & 0x0fu) : (c & 0x07u);

	for (size_t k = 1; k <= n; k++)
		cp = (cp << 6) | (s[*i + k] & 0x3fu);
	*i += n + 1;
	return cp;
}

/* Go's unicode.IsSpace: ASCII white space, U+0085, U+00A0 and category Zs/Zl/Zp. */
static int unicode_space(uint32_t cp)
{
	return cp == ' ' || (cp >= 0x09 && cp <= 0x0d) || cp == 0x85 || cp == 0xa0 ||
	       cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200a) || cp == 0x2028 || cp == 0x2029 ||
	       cp == 0x202f || cp == 0x205f || cp == 0x3000;
}

int note_name_valid(const char *name, size_t len)
{
	const unsigned char *s = (const unsigned char *)name;

	if (len == 0 || docket_utf8_check(name, len) != len)
		return 0;
	for (size_t i = 0; i < len;) {
		uint32_t cp = next_cp(s, &i);

		if (cp < 0x20 || cp == 0x7f || cp == '+' || unicode_space(cp))
			return 0;
	}
	return 1;
}

/* ---- signed notes -------------------------------------------------------- */

/* UTF-8, no control character but "\n", no line longer than NOTE_MAX_LINE. */
static int check_bytes(const char *msg, size_t len)
{
	size_t bad = docket_utf8_check(msg, len), line = 0;

	if (bad != len)
		return docket_error_set(DOCKET_EINVALID, "not valid UTF-8 (byte %zu)", bad);
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)msg[i];

		if (c == '\r')
			return docket_error_set(DOCKET_EINVALID, "a carriage return at byte %zu "
						"(lines end in \"\\n\" alone)", i);
		if ((c < 0x20 && c != '\n') || c == 0x7f)
			return docket_error_set(DOCKET_EINVALID, "control character 0x%02x at byte %zu",
						c, i);
		line = c == '\n' ? 0 : line + 1;
		if (line > NOTE_MAX_LINE)
			return docket_error_set(DOCKET_EINVALID, "a line longer than %zu bytes (byte %zu)",
						NOTE_MAX_LINE, i);
	}
	return 0;
}

/* The last "\n\n" in msg[0..len): its offset, or len when there is none. */
static size_t last_blank(const char *msg, size_t len)
{
	for (size_t i = len; i >= 2; i--)
		if (msg[i - 1] == '\n' && msg[i - 2] == '\n')
			return i - 2;
	return len;
}

static int parse_sig_line(note_sig *out, const char *line, size_t len, size_t lineno)
{
	uint8_t raw[NOTE_MAX_LINE];
	const char *sp;
	size_t raw_len;
	int error;

	if (len < SIG_PREFIX_LEN || memcmp(line, SIG_PREFIX, SIG_PREFIX_LEN) != 0)
		return docket_error_set(DOCKET_EINVALID, "signature line %zu does not start with "
					"\"\xe2\x80\x94 \"", lineno);
	line += SIG_PREFIX_LEN;
	len -= SIG_PREFIX_LEN;
	if (!(sp = memchr(line, ' ', len)))
		return docket_error_set(DOCKET_EINVALID, "signature line %zu: no space between the key "
					"name and the signature", lineno);
	out->name.ptr = (const uint8_t *)line;
	out->name.len = (size_t)(sp - line);
	out->b64.ptr = (const uint8_t *)sp + 1;
	out->b64.len = len - out->name.len - 1;
	if (!note_name_valid(line, out->name.len))
		return docket_error_set(DOCKET_EINVALID, "signature line %zu: bad key name", lineno);
	if ((error = note_b64_decode(raw, sizeof(raw), &raw_len, (const char *)out->b64.ptr, out->b64.len)) < 0) {
		docket_error_prefix("signature line %zu: ", lineno);
		return error;
	}
	if (raw_len < 5)
		return docket_error_set(DOCKET_EINVALID, "signature line %zu: signature too short",
					lineno);
	out->key_id = docket_be32_get(raw);
	return 0;
}

int note_parse(note_msg *out, const char *msg, size_t len)
{
	size_t split, pos, lineno = 0;
	int error;

	memset(out, 0, sizeof(*out));
	if (len == 0)
		return docket_error_set(DOCKET_EINVALID, "empty note");
	if (len > NOTE_MAX_LEN)
		return docket_error_set(DOCKET_EINVALID, "note larger than %zu bytes", NOTE_MAX_LEN);
	if ((error = check_bytes(msg, len)) < 0)
		return error;
	if ((split = last_blank(msg, len)) == len)
		return docket_error_set(DOCKET_EINVALID, "no blank line between the text and the "
					"signatures");
	if (msg[len - 1] != '\n')
		return docket_error_set(DOCKET_EINVALID, "the last signature line does not end in a "
					"newline");
	if (split + 2 == len)
		return docket_error_set(DOCKET_EINVALID, "no signature line after the blank line");
	out->text.ptr = (const uint8_t *)msg;
	out->text.len = split + 1;
	for (pos = split + 2; pos < len;) {
		const char *nl = memchr(msg + pos, '\n', len - pos);
		size_t n = (size_t)(nl - (msg + pos));

		if (out->nsigs == NOTE_MAX_SIGS)
			return docket_error_set(DOCKET_EINVALID, "more than %d signature lines",
						NOTE_MAX_SIGS);
		if ((error = parse_sig_line(&out->sig[out->nsigs], msg + pos, n, ++lineno)) < 0)
			return error;
		out->nsigs++;
		pos += n + 1;
	}
	return 0;
}

/* ---- checkpoint bodies ----------------------------------------------------- */

static int parse_size(uint64_t *out, const char *s, size_t len)
{
	uint64_t v = 0;

	if (len == 0 || len > 20 || (len > 1 && s[0] == '0'))
		return docket_error_set(DOCKET_EINVALID, "checkpoint: the tree size is not a decimal "
					"number without leading zeros");
	for (size_t i = 0; i < len; i++) {
		unsigned d = (unsigned)(unsigned char)s[i] - '0';

		if (d > 9 || v > (UINT64_MAX - d) / 10)
			return docket_error_set(DOCKET_EINVALID, "checkpoint: bad tree size");
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

int note_checkpoint_parse(docket_note_checkpoint *out, size_t *extensions, const char *text,
			  size_t len)
{
	uint8_t root[NOTE_MAX_LINE];
	const char *line[3];
	size_t line_len[3], nlines = 0, root_len, bad;
	int error;

	memset(out, 0, sizeof(*out));
	if (extensions)
		*extensions = 0;
	if (len == 0 || text[len - 1] != '\n')
		return docket_error_set(DOCKET_EINVALID, "checkpoint: the text does not end in a newline");
	if ((bad = docket_utf8_check(text, len)) != len)
		return docket_error_set(DOCKET_EINVALID, "checkpoint: not valid UTF-8 (byte %zu)", bad);
	for (size_t pos = 0; pos < len; nlines++) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t n = (size_t)(nl - (text + pos));

		if (n == 0)
			return docket_error_set(DOCKET_EINVALID, "checkpoint: line %zu is empty", nlines + 1);
		if (n > NOTE_MAX_LINE)
			return docket_error_set(DOCKET_EINVALID, "checkpoint: line %zu is too long",
						nlines + 1);
		for (size_t i = 0; i < n; i++)
			if ((unsigned char)text[pos + i] < 0x20 || text[pos + i] == 0x7f)
				return docket_error_set(DOCKET_EINVALID, "checkpoint: control character "
							"on line %zu", nlines + 1);
		if (nlines < 3) {
			line[nlines] = text + pos;
			line_len[nlines] = n;
		}
		pos += n + 1;
	}
	if (nlines < 3)
		return docket_error_set(DOCKET_EINVALID, "checkpoint: %zu line%s, not origin, size and "
					"root", nlines, nlines == 1 ? "" : "s");
	if (line_len[0] >= sizeof(out->origin))
		return docket_error_set(DOCKET_EINVALID, "checkpoint: origin longer than %zu bytes",
					sizeof(out->origin) - 1);
	memcpy(out->origin, line[0], line_len[0]);
	out->origin[line_len[0]] = '\0';
	if ((error = parse_size(&out->size, line[1], line_len[1])) < 0)
		return error;
	if ((error = note_b64_decode(root, sizeof(root), &root_len, line[2], line_len[2])) < 0) {
		docket_error_prefix("checkpoint: root hash: ");
		return error;
	}
	if (root_len != DOCKET_TLOG_HASH_LEN)
		return docket_error_set(DOCKET_EINVALID, "checkpoint: the root hash has %zu bytes, not %d",
					root_len, DOCKET_TLOG_HASH_LEN);
	memcpy(out->root, root, DOCKET_TLOG_HASH_LEN);
	if (extensions)
		*extensions = nlines - 3;
	return 0;
}

int note_checkpoint_body(docket_buf *out, const docket_note_checkpoint *c)
{
	int error;

	if (!note_name_valid(c->origin, strnlen(c->origin, sizeof(c->origin))))
		return docket_error_set(DOCKET_EINVALID, "checkpoint: bad origin");
	if ((error = docket_buf_printf(out, "%s\n%" PRIu64 "\n", c->origin, c->size)) < 0 ||
	    (error = note_b64_put(out, c->root, sizeof(c->root))) < 0)
		return error;
	return docket_buf_putc(out, '\n');
}

/* ---- consistency proof files (tlog-witness add-checkpoint bodies) ---------- */

int note_proof_parse(note_proof *out, const char *msg, size_t len)
{
	uint8_t raw[NOTE_MAX_LINE];
	size_t pos, raw_len;
	int error;

	memset(out, 0, sizeof(*out));
	if (len > NOTE_MAX_LEN)
		return docket_error_set(DOCKET_EINVALID, "proof larger than %zu bytes", NOTE_MAX_LEN);
	if ((error = check_bytes(msg, len)) < 0) {
		docket_error_prefix("proof: ");
		return error;
	}
	if (len < 4 || memcmp(msg, "old ", 4) != 0)
		return docket_error_set(DOCKET_EINVALID, "proof: the first line is not \"old <size>\"");
	for (pos = 0;;) {
		const char *nl = memchr(msg + pos, '\n', len - pos);
		size_t n;

		if (!nl)
			return docket_error_set(DOCKET_EINVALID, "proof: no blank line before the checkpoint");
		n = (size_t)(nl - (msg + pos));
		if (pos == 0) {
			if ((error = parse_size(&out->old_size, msg + 4, n - 4)) < 0) {
				docket_error_prefix("proof: old size: ");
				return error;
			}
		} else if (n == 0) {
			pos++;
			break;
		} else {
			if (out->len == NOTE_MAX_PROOF)
				return docket_error_set(DOCKET_EINVALID, "proof: more than %d hashes",
							NOTE_MAX_PROOF);
			if ((error = note_b64_decode(raw, sizeof(raw), &raw_len, msg + pos, n)) < 0) {
				docket_error_prefix("proof: hash %zu: ", out->len + 1);
				return error;
			}
			if (raw_len != DOCKET_TLOG_HASH_LEN)
				return docket_error_set(DOCKET_EINVALID, "proof: hash %zu has %zu bytes",
							out->len + 1, raw_len);
			memcpy(out->hash[out->len++], raw, DOCKET_TLOG_HASH_LEN);
		}
		pos += n + 1;
	}
	if (out->old_size == 0 && out->len != 0)
		return docket_error_set(DOCKET_EINVALID, "proof: a proof from size 0 must be empty");
	out->checkpoint.ptr = (const uint8_t *)msg + pos;
	out->checkpoint.len = len - pos;
	return 0;
}

int note_proof_put(docket_buf *out, uint64_t old_size, const uint8_t (*hash)[DOCKET_TLOG_HASH_LEN],
		   size_t n, const char *signed_note, size_t note_len)
{
	int error;

	if (n > NOTE_MAX_PROOF)
		return docket_error_set(DOCKET_EINVALID, "proof: more than %d hashes", NOTE_MAX_PROOF);
	if ((error = docket_buf_printf(out, "old %" PRIu64 "\n", old_size)) < 0)
		return error;
	for (size_t i = 0; i < n; i++)
		if ((error = note_b64_put(out, hash[i], DOCKET_TLOG_HASH_LEN)) < 0 ||
		    (error = docket_buf_putc(out, '\n')) < 0)
			return error;
	if ((error = docket_buf_putc(out, '\n')) < 0)
		return error;
	return docket_buf_put(out, signed_note, note_len);
}

/* ---- keys and signatures ---------------------------------------------------- */

static int raw_public(uint8_t out[ED25519_KEY_LEN], EVP_PKEY *key)
{
	size_t len = ED25519_KEY_LEN;

	if (EVP_PKEY_get_id(key) != EVP_PKEY_ED25519 ||
	    EVP_PKEY_get_raw_public_key(key, out, &len) != 1 || len != ED25519_KEY_LEN) {
		ERR_clear_error();
		return docket_error_set(DOCKET_EINVALID, "not an Ed25519 key");
	}
	return 0;
}

static int key_id_of(uint32_t *out, const char *name, size_t name_len, uint8_t type, EVP_PKEY *key)
{
	uint8_t pub[ED25519_KEY_LEN], md[32], sep[2] = { '\n', type };
	EVP_MD_CTX *ctx;
	int ok, error;

	if ((error = raw_public(pub, key)) < 0)
		return error;
	ctx = EVP_MD_CTX_new();
	ok = ctx && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) == 1 &&
	     EVP_DigestUpdate(ctx, name, name_len) == 1 && EVP_DigestUpdate(ctx, sep, 2) == 1 &&
	     EVP_DigestUpdate(ctx, pub, sizeof(pub)) == 1 && EVP_DigestFinal_ex(ctx, md, NULL) == 1;
	EVP_MD_CTX_free(ctx);
	if (!ok) {
		ERR_clear_error();
		return docket_error_set(DOCKET_ERROR, "SHA-256 failed");
	}
	*out = docket_be32_get(md);
	return 0;
}

int note_key_id(uint32_t *out, const char *name, uint8_t type, EVP_PKEY *key)
{
	return key_id_of(out, name, strlen(name), type, key);
}

static int ed25519_sign(uint8_t sig[ED25519_SIG_LEN], EVP_PKEY *key, const docket_buf *msg)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	size_t len = ED25519_SIG_LEN;
	int ok = ctx && EVP_DigestSignInit(ctx, NULL, NULL, NULL, key) == 1 &&
		 EVP_DigestSign(ctx, sig, &len, (const uint8_t *)msg->ptr, msg->len) == 1 &&
		 len == ED25519_SIG_LEN;

	EVP_MD_CTX_free(ctx);
	ERR_clear_error();
	return ok ? 0 : docket_error_set(DOCKET_ERROR, "Ed25519 signing failed");
}

static int ed25519_ok(EVP_PKEY *key, const uint8_t *sig, const docket_buf *msg)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	int ok = ctx && EVP_DigestVerifyInit(ctx, NULL, NULL, NULL, key) == 1 &&
		 EVP_DigestVerify(ctx, sig, ED25519_SIG_LEN, (const uint8_t *)msg->ptr, msg->len) == 1;

	EVP_MD_CTX_free(ctx);
	ERR_clear_error();
	return ok;
}

/* The message a signature of `type` signs: the text, or the cosignature/v1 form. */
static int signed_message(docket_buf *out, uint8_t type, uint64_t time, const char *text, size_t len)
{
	int error;

	if (type == NOTE_TYPE_COSIG_V1 &&
	    (error = docket_buf_printf(out, COSIG_HEADER "time %" PRIu64 "\n", time)) < 0)
		return error;
	return docket_buf_put(out, text, len);
}

static int sign_line(docket_buf *out, const char *name, EVP_PKEY *key, uint8_t type, uint64_t time,
		     const char *text, size_t len)
{
	docket_buf msg = DOCKET_BUF_INIT;
	uint8_t raw[4 + 8 + ED25519_SIG_LEN];
	size_t off = 4;
	uint32_t id;
	int error;

	if (!note_name_valid(name, strlen(name)))
		return docket_error_set(DOCKET_EINVALID, "'%s' is not a valid key name (no spaces, "
					"no '+')", name);
	if (time > (uint64_t)INT64_MAX)
		return docket_error_set(DOCKET_EINVALID, "cosignature time out of range");
	if ((error = note_key_id(&id, name, type, key)) < 0 ||
	    (error = signed_message(&msg, type, time, text, len)) < 0)
		goto cleanup;
	docket_be32_put(raw, id);
	if (type == NOTE_TYPE_COSIG_V1) {
		docket_be64_put(raw + off, time);
		off += 8;
	}
	if ((error = ed25519_sign(raw + off, key, &msg)) < 0 ||
	    (error = docket_buf_printf(out, SIG_PREFIX "%s ", name)) < 0 ||
	    (error = note_b64_put(out, raw, off + ED25519_SIG_LEN)) < 0)
		goto cleanup;
	error = docket_buf_putc(out, '\n');
cleanup:
	docket_buf_dispose(&msg);
	return error;
}

int note_sign(docket_buf *out, const char *name, EVP_PKEY *key, const char *text, size_t len)
{
	return sign_line(out, name, key, NOTE_TYPE_ED25519, 0, text, len);
}

int note_cosign(docket_buf *out, const char *name, EVP_PKEY *key, uint64_t time, const char *text,
		size_t len)
{
	return sign_line(out, name, key, NOTE_TYPE_COSIG_V1, time, text, len);
}

/* 1: line `s` is by (name, key, type); 0: it is not; <0 error. */
static int line_is_by(const note_sig *s, const char *name, EVP_PKEY *key, uint8_t type)
{
	uint32_t id;
	int error;

	if (name && (s->name.len != strlen(name) || memcmp(s->name.ptr, name, s->name.len) != 0))
		return 0;
	if ((error = key_id_of(&id, (const char *)s->name.ptr, s->name.len, type, key)) < 0)
		return error;
	return id == s->key_id;
}

/* 1 verified, 0 did not verify, <0 error; *time the cosignature's time. */
static int check_line(const note_msg *n, const note_sig *s, EVP_PKEY *key, uint8_t type, uint64_t *time)
{
	docket_buf msg = DOCKET_BUF_INIT;
	uint8_t raw[NOTE_MAX_LINE];
	size_t raw_len, off = 4;
	int error;

	*time = 0;
	if ((error = note_b64_decode(raw, sizeof(raw), &raw_len, (const char *)s->b64.ptr, s->b64.len)) < 0)
		return error;
	if (type == NOTE_TYPE_COSIG_V1) {
		if (raw_len != 4 + 8 + ED25519_SIG_LEN)
			return 0;
		*time = docket_be64_get(raw + 4);
		off += 8;
		if (*time > (uint64_t)INT64_MAX)
			return 0;
	} else if (raw_len != 4 + ED25519_SIG_LEN) {
		return 0;
	}
	if ((error = signed_message(&msg, type, *time, (const char *)n->text.ptr, n->text.len)) < 0)
		return error;
	error = ed25519_ok(key, raw + off, &msg);
	docket_buf_dispose(&msg);
	return error;
}

static int verify_type(const note_msg *n, const char *name, EVP_PKEY *key, uint8_t type, uint64_t *time)
{
	int found = 0, rc;
	uint64_t t, newest = 0;

	for (size_t i = 0; i < n->nsigs; i++) {
		const note_sig *s = &n->sig[i];

		if ((rc = line_is_by(s, name, key, type)) < 0)
			return rc;
		if (rc == 0)
			continue;
		if ((rc = check_line(n, s, key, type, &t)) < 0)
			return rc;
		if (rc == 0)
			return docket_error_set(DOCKET_ECORRUPT, "the %s by %.*s does not verify",
						type == NOTE_TYPE_COSIG_V1 ? "cosignature" : "signature",
						(int)s->name.len, (const char *)s->name.ptr);
		found = 1;
		newest = t > newest ? t : newest;
	}
	if (!found)
		return docket_error_set(DOCKET_ENOTFOUND, "no %s by %s%s", type == NOTE_TYPE_COSIG_V1
					? "cosignature" : "signature", name ? name : "this key",
					name ? " with this key" : "");
	if (time)
		*time = newest;
	return 0;
}

int note_verify_sig(const note_msg *n, const char *name, EVP_PKEY *key)
{
	return verify_type(n, name, key, NOTE_TYPE_ED25519, NULL);
}

int note_verify_cosig(const note_msg *n, const char *name, EVP_PKEY *key, uint64_t *time)
{
	return verify_type(n, name, key, NOTE_TYPE_COSIG_V1, time);
}
