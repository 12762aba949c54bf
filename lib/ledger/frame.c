/* SPDX-License-Identifier: Apache-2.0 */
/*
 * frame.c: compression, dictionaries and the hash chain, and format 1's
 * frames (read only: `docket migrate` converts them; segment.c writes
 * format 2).
 *
 * A format-1 frame was what `events` stored for one seq:
 *
 *   size    field
 *   1       version (high 4 bits, 1) and codec (low 4 bits: 0 raw, 1 zstd,
 *           2 zstd with dictionary)
 *   1       dictionary id (0: none)
 *   1..5    payload length before compression, unsigned LEB128
 *   32      chain hash h[seq]
 *   ...     body: the payload (protobuf docket.v1.Event), compressed or not
 *
 * The chain covers the uncompressed payload, so recompressing a ledger never
 * changes a hash: h[n] = SHA-256(h[n-1] || be64(n) || payload), h[0] = 32
 * zero bytes. Both formats share it.
 *
 * Small segments compress poorly on their own; once a ledger holds enough
 * events, a zstd dictionary is trained from them and kept (table `dicts`)
 * if it beats plain zstd on the samples by a margin. Dictionaries are
 * primary data: a segment names the one it needs, and none is ever deleted.
 */
#define OPENSSL_SUPPRESS_DEPRECATED  /* SHA256_Init & co. (below, ledger_sha256_v) */
#include <openssl/sha.h>
#include <string.h>
#define ZDICT_STATIC_LINKING_ONLY /* ZDICT_trainFromBuffer_fastCover */
#include <zdict.h>
/* ZSTD_compress_advanced (compress_oneshot, below): deprecated in favour
 * of ZSTD_compress2, which has no way to load a dictionary without
 * building a CDict */
#define ZSTD_STATIC_LINKING_ONLY
#define ZSTD_DISABLE_DEPRECATE_WARNINGS
#include <zstd.h>

#include "ledger_internal.h"
#include "util/alloc.h"
#include "util/error.h"

#define COMPRESS_LEVEL 3
#define COMPRESS_MIN 48           /* below this a payload is stored raw */
#define DICT_TRAIN_AT 512         /* events before the first training */
/*
 * A ledger handle's first small parts compress with the dictionary in one
 * shot (compress_oneshot) instead of building its CDict: ZSTD_createCDict
 * loads every position of the dictionary into level 3's full-size tables,
 * 1.05M of a hook event's 1.43M instructions and a hundred page faults
 * (callgrind, issue 27), for the one or two parts a hook process writes.
 * A one-shot load inserts fewer positions into tables of 2^12 entries
 * (enough for a 16 KB dictionary and a small part). After this many, the
 * handle writes on and the CDict pays for itself.
 */
#define DICT_ONESHOT_MAX 8
#define ONESHOT_TABLE_LOG 12
#define DICT_SAMPLES 2048
#define DICT_CAPACITY (16 * 1024)
#define DICT_MIN_GAIN_PCT 10      /* keep a dictionary only if it saves this much */
/* fastCover with fixed parameters: ZDICT_trainFromBuffer searches k (four
 * steps, each a full training and a trial compression of a held-out quarter)
 * and takes 20-40 ms on 512 payloads; one pass with k=256, d=8 and a 2^18
 * frequency table takes 3-5 ms, and its dictionaries compressed the later
 * events of the benchmark mix (tests/bench, two seeds) as well or slightly
 * better (217 vs 220 bytes per body). Training runs inside an append
 * transaction, so its time is a latency spike of that append. */
#define DICT_TRAIN_K 256
#define DICT_TRAIN_D 8
#define DICT_TRAIN_F 18
#define MAX_PAYLOAD (256u << 20)

/* The contexts are made at first use (codec_compress, codec_decompress): a
 * handle that compresses or decompresses nothing (a hook's, that spools)
 * does not pay for their allocation and the pages it touches. */
int codec_init(ledger_codec *c)
{
	memset(c, 0, sizeof(*c));
	pthread_mutex_init(&c->lock, NULL);
	return 0;
}

/* *ctx made when still NULL; 0, or DOCKET_ENOMEM. Under c->lock. */
static int cctx_ready(ledger_codec *c)
{
	if (!c->cc.cctx && !(c->cc.cctx = ZSTD_createCCtx()))
		return docket_error_set(DOCKET_ENOMEM, "cannot create a zstd compression context");
	return 0;
}

static int dctx_ready(ledger_codec *c)
{
	if (!c->dctx && !(c->dctx = ZSTD_createDCtx()))
		return docket_error_set(DOCKET_ENOMEM, "cannot create a zstd decompression context");
	return 0;
}

/* Forget how a context is configured: it must not reference a CDict about
 * to be freed. The next compress_body() configures it again. */
static void cctx_unconfigure(codec_cctx *cc)
{
	if (cc->mode != 0)
		ZSTD_CCtx_reset(cc->cctx, ZSTD_reset_session_and_parameters);
	cc->mode = 0;
	cc->cdict = NULL;
}

void codec_cctx_dispose(codec_cctx *cc)
{
	ZSTD_freeCCtx(cc->cctx);
	memset(cc, 0, sizeof(*cc));
}

void codec_forget(ledger_codec *c)
{
	cctx_unconfigure(&c->cc);
	ZSTD_freeCDict(c->cdict);
	c->cdict = NULL;
	c->cdict_id = 0;
	for (uint32_t i = 0; i < c->ddict_count; i++)
		ZSTD_freeDDict(c->ddicts[i]);
	c->ddict_count = 0;
}

void codec_dispose(ledger_codec *c)
{
	codec_cctx_dispose(&c->cc);
	ZSTD_freeDCtx(c->dctx);
	ZSTD_freeCDict(c->cdict);
	for (uint32_t i = 0; i < c->ddict_count; i++)
		ZSTD_freeDDict(c->ddicts[i]);
	pthread_mutex_destroy(&c->lock);
	memset(c, 0, sizeof(*c));
}

/*
 * SHA-256 through libcrypto's SHA256_* functions: the code OpenSSL's
 * default provider wraps, without EVP. An EVP digest costs an
 * EVP_DigestInit/Update/Final dispatch per hash (the chain and the Merkle
 * tree hash every event twice, mostly a few hundred bytes), and a
 * process's first EVP fetch builds the name map of every algorithm the
 * default provider offers: 245,000 of the 880,000 instructions of a hook
 * event (callgrind, issue 27), for one digest. These functions are
 * deprecated in OpenSSL 3 in favour of EVP, not removed, and compute the
 * same bytes (test_ledger's known answers; every chain a ledger written
 * before this verifies).
 */
int ledger_sha256_v(uint8_t out[LEDGER_HASH_LEN], const docket_slice *v, size_t n)
{
	SHA256_CTX c;
	int ok = SHA256_Init(&c) == 1;

	for (size_t i = 0; ok && i < n; i++)
		ok = !v[i].len || SHA256_Update(&c, v[i].ptr, v[i].len) == 1;
	if (ok && SHA256_Final(out, &c) == 1)
		return 0;
	memset(out, 0, LEDGER_HASH_LEN);
	return docket_error_set(DOCKET_ERROR, "SHA-256 failed");
}

int ledger_sha256(uint8_t out[LEDGER_HASH_LEN], const void *data, size_t len)
{
	docket_slice v = { data, len };

	return ledger_sha256_v(out, &v, 1);
}

int chain_next(uint8_t out[LEDGER_HASH_LEN], const uint8_t prev[LEDGER_HASH_LEN],
	       uint64_t seq, const uint8_t *payload, size_t len)
{
	uint8_t be[8];
	docket_slice v[3] = { { prev, LEDGER_HASH_LEN }, { be, sizeof(be) }, { payload, len } };

	docket_be64_put(be, seq);
	return ledger_sha256_v(out, v, 3);
}

static int dict_load(MDB_txn *txn, docket_ledger *l, uint32_t id, MDB_val *out)
{
	uint8_t key[4];
	MDB_val k = { sizeof(key), key };
	int rc;

	docket_be32_put(key, id);
	rc = mdb_get(txn, l->dbi.dicts, &k, out);
	if (rc == MDB_NOTFOUND)
		return docket_error_set(DOCKET_ECORRUPT, "dictionary %u is missing", id);
	return rc == 0 ? 0 : store_error(rc, "read dictionary");
}

/*
 * The CDict of the dictionary active in `txn` (NULL if none). With `raw`,
 * a CDict this handle has not built yet is not built: *raw gets the
 * dictionary's bytes instead (valid while `txn` is), *out stays NULL.
 * Lock held.
 */
static int active_cdict(ZSTD_CDict **out, uint32_t *id_out, docket_ledger *l, MDB_txn *txn, MDB_val *raw)
{
	ledger_codec *c = &l->codec;
	uint64_t active;
	MDB_val dict;
	int error;

	*out = NULL;
	*id_out = 0;
	if ((error = store_meta_get_u64(txn, l, "dict_active", &active)) < 0)
		return error;
	if (active == 0)
		return 0;
	if (c->cdict_id != active) {
		if ((error = dict_load(txn, l, (uint32_t)active, &dict)) < 0)
			return error;
		if (raw) {
			*raw = dict;
			*id_out = (uint32_t)active;
			return 0;
		}
		if (c->cdict && c->cc.cdict == c->cdict)
			cctx_unconfigure(&c->cc);
		ZSTD_freeCDict(c->cdict);
		c->cdict = ZSTD_createCDict(dict.mv_data, dict.mv_size, COMPRESS_LEVEL);
		c->cdict_id = c->cdict ? (uint32_t)active : 0;
		if (!c->cdict)
			return docket_error_set(DOCKET_ENOMEM, "cannot load dictionary %u", (unsigned)active);
	}
	*out = c->cdict;
	*id_out = c->cdict_id;
	return 0;
}

/*
 * The dictionary a small part compresses with: the active one's CDict when
 * this handle built it (*cdict), else its bytes for a one-shot compression
 * (*raw) while the handle has made fewer than DICT_ONESHOT_MAX, else the
 * CDict, built now. Neither when the ledger has no dictionary. Lock held.
 */
static int small_dict(ZSTD_CDict **cdict, MDB_val *raw, uint32_t *id_out, docket_ledger *l, MDB_txn *txn)
{
	ledger_codec *c = &l->codec;
	int error;

	raw->mv_data = NULL;
	raw->mv_size = 0;
	error = active_cdict(cdict, id_out, l, txn, c->oneshots < DICT_ONESHOT_MAX ? raw : NULL);
	if (error == 0 && raw->mv_data)
		c->oneshots++;
	return error;
}

static int ddict_get(ZSTD_DDict **out, docket_ledger *l, MDB_txn *txn, uint32_t id)
{
	ledger_codec *c = &l->codec;
	MDB_val dict;
	int error;

	for (uint32_t i = 0; i < c->ddict_count; i++) {
		if (c->ddict_ids[i] == id) {
			*out = c->ddicts[i];
			return 0;
		}
	}
	if ((error = dict_load(txn, l, id, &dict)) < 0)
		return error;
	if (c->ddict_count == sizeof(c->ddicts) / sizeof(c->ddicts[0])) {
		ZSTD_freeDDict(c->ddicts[0]);
		memmove(c->ddicts, c->ddicts + 1, sizeof(c->ddicts[0]) * (c->ddict_count - 1));
		memmove(c->ddict_ids, c->ddict_ids + 1, sizeof(c->ddict_ids[0]) * (c->ddict_count - 1));
		c->ddict_count--;
	}
	if (!(*out = ZSTD_createDDict(dict.mv_data, dict.mv_size)))
		return docket_error_set(DOCKET_ENOMEM, "cannot load dictionary %u", id);
	c->ddicts[c->ddict_count] = *out;
	c->ddict_ids[c->ddict_count++] = id;
	return 0;
}

/*
 * zstd with the frame parameters above, with or without a dictionary. The
 * context is configured only when what it is configured for changes:
 * ZSTD_compress2 resets the session alone and keeps the parameters and the
 * referenced CDict for the next frame. Lock held.
 */
static size_t compress_body(codec_cctx *c, uint8_t *dst, size_t cap, const uint8_t *src, size_t len,
			    const ZSTD_CDict *cdict, int level)
{
	int mode = cdict ? -1 : level;
	size_t rc;

	if (c->mode != mode || c->cdict != cdict) {
		ZSTD_CCtx_reset(c->cctx, ZSTD_reset_session_and_parameters);
		c->mode = 0;
		c->cdict = NULL;
		rc = ZSTD_CCtx_setParameter(c->cctx, ZSTD_c_contentSizeFlag, 0);
		if (!ZSTD_isError(rc))
			rc = ZSTD_CCtx_setParameter(c->cctx, ZSTD_c_dictIDFlag, 0);
		if (!ZSTD_isError(rc))
			rc = cdict ? ZSTD_CCtx_refCDict(c->cctx, cdict)
				   : ZSTD_CCtx_setParameter(c->cctx, ZSTD_c_compressionLevel, level);
		if (ZSTD_isError(rc)) {
			ZSTD_CCtx_reset(c->cctx, ZSTD_reset_session_and_parameters);
			return rc;
		}
		c->mode = mode;
		c->cdict = cdict;
	}
	return ZSTD_compress2(c->cctx, dst, cap, src, len);
}

/*
 * One part with the dictionary `dict` (its bytes, a zstd dictionary),
 * without a CDict (DICT_ONESHOT_MAX): level `level`'s parameters for this
 * size, the tables capped at 2^ONESHOT_TABLE_LOG, the frame parameters of
 * compress_body. Decodes with the dictionary's DDict like any other part
 * (test_ledger). Lock held.
 */
static size_t compress_oneshot(codec_cctx *c, uint8_t *dst, size_t cap, const uint8_t *src, size_t len,
			       const MDB_val *dict, int level)
{
	ZSTD_parameters p = ZSTD_getParams(level, len, dict->mv_size);

	if (p.cParams.hashLog > ONESHOT_TABLE_LOG)
		p.cParams.hashLog = ONESHOT_TABLE_LOG;
	if (p.cParams.chainLog > ONESHOT_TABLE_LOG)
		p.cParams.chainLog = ONESHOT_TABLE_LOG;
	p.fParams.contentSizeFlag = 0;
	p.fParams.checksumFlag = 0;
	p.fParams.noDictIDFlag = 1;
	cctx_unconfigure(c);
	return ZSTD_compress_advanced(c->cctx, dst, cap, src, len, dict->mv_data, dict->mv_size, p);
}

/* What compress_body gave as codec_compress answers: its size, or 0 when
 * the input is too small to try or does not shrink. */
static int compressed_size(size_t n, size_t len)
{
	return ZSTD_isError(n) || n >= len ? 0 : (int)n;
}

int codec_compress_cc(codec_cctx *cc, uint8_t *dst, size_t cap, const uint8_t *src, size_t len,
		      const ZSTD_CDict *cdict, int level)
{
	if (len < COMPRESS_MIN)
		return 0;
	return compressed_size(compress_body(cc, dst, cap, src, len, cdict, level), len);
}

int codec_active_dict(docket_ledger *l, MDB_txn *txn, const ZSTD_CDict **cdict, uint32_t *dict_id)
{
	ZSTD_CDict *d = NULL;
	int error;

	pthread_mutex_lock(&l->codec.lock);
	error = active_cdict(&d, dict_id, l, txn, NULL);
	pthread_mutex_unlock(&l->codec.lock);
	*cdict = d;
	return error;
}

int codec_compress(docket_ledger *l, MDB_txn *txn, uint8_t *dst, size_t cap, const uint8_t *src,
		   size_t len, int use_dict, int level, uint32_t *dict_id)
{
	ledger_codec *c = &l->codec;
	ZSTD_CDict *cdict = NULL;
	MDB_val raw = { 0, NULL };
	uint32_t id = 0;
	size_t n = 0;
	int error = 0;

	*dict_id = 0;
	if (len < COMPRESS_MIN)
		return 0;
	pthread_mutex_lock(&c->lock);
	if ((error = cctx_ready(c)) == 0 && use_dict)
		error = small_dict(&cdict, &raw, &id, l, txn);
	if (error == 0)
		n = raw.mv_data ? compress_oneshot(&c->cc, dst, cap, src, len, &raw, COMPRESS_LEVEL)
				: compress_body(&c->cc, dst, cap, src, len, cdict, level);
	pthread_mutex_unlock(&c->lock);
	if (error < 0)
		return error;
	if (compressed_size(n, len) == 0)
		return 0;
	*dict_id = cdict || raw.mv_data ? id : 0;
	return (int)n;
}

int codec_decompress(docket_ledger *l, MDB_txn *txn, uint32_t dict_id, uint8_t *dst, size_t raw_len,
		     const uint8_t *src, size_t len)
{
	ledger_codec *c = &l->codec;
	ZSTD_DDict *ddict = NULL;
	size_t n = 0;
	int error;

	pthread_mutex_lock(&c->lock);
	if ((error = dctx_ready(c)) == 0 && dict_id)
		error = ddict_get(&ddict, l, txn, dict_id);
	if (error == 0)
		n = ddict ? ZSTD_decompress_usingDDict(c->dctx, dst, raw_len, src, len, ddict)
			  : ZSTD_decompressDCtx(c->dctx, dst, raw_len, src, len);
	pthread_mutex_unlock(&c->lock);
	if (error < 0)
		return error;
	if (ZSTD_isError(n))
		return docket_error_set(DOCKET_ECORRUPT, "does not decompress: %s", ZSTD_getErrorName(n));
	if (n != raw_len)
		return docket_error_set(DOCKET_ECORRUPT, "decompressed to %zu bytes, its header says %zu",
					n, raw_len);
	return 0;
}

int frame_header_parse(frame_header *out, const uint8_t *frame, size_t len)
{
	uint64_t raw = 0;
	size_t n = 2;
	int shift = 0;

	if (len < 3 + LEDGER_HASH_LEN)
		return docket_error_set(DOCKET_ECORRUPT, "frame too short (%zu bytes)", len);
	out->version = frame[0] >> 4;
	out->codec = frame[0] & 0x0f;
	out->dict_id = frame[1];
	for (;;) {
		if (n >= len || shift > 28)
			return docket_error_set(DOCKET_ECORRUPT, "bad frame length field");
		raw |= (uint64_t)(frame[n] & 0x7f) << shift;
		shift += 7;
		if (!(frame[n++] & 0x80))
			break;
	}
	if (len - n < LEDGER_HASH_LEN)
		return docket_error_set(DOCKET_ECORRUPT, "frame too short (%zu bytes)", len);
	memcpy(out->hash, frame + n, LEDGER_HASH_LEN);
	out->header_len = n + LEDGER_HASH_LEN;
	out->raw_len = (uint32_t)raw;
	if (out->version != FRAME_VERSION)
		return docket_error_set(DOCKET_ECORRUPT, "unknown frame version %u", out->version);
	if (out->codec > FRAME_ZSTD_DICT)
		return docket_error_set(DOCKET_ECORRUPT, "unknown frame codec %u", out->codec);
	if ((out->codec == FRAME_ZSTD_DICT) != (out->dict_id != 0))
		return docket_error_set(DOCKET_ECORRUPT, "frame dictionary id %u does not match codec %u",
					out->dict_id, out->codec);
	if (raw > MAX_PAYLOAD)
		return docket_error_set(DOCKET_ECORRUPT, "frame claims %llu bytes", (unsigned long long)raw);
	if (out->codec == FRAME_RAW && len - out->header_len != out->raw_len)
		return docket_error_set(DOCKET_ECORRUPT, "raw frame length %zu, header says %u",
					len - out->header_len, out->raw_len);
	return 0;
}

int frame_decode(docket_buf *out, frame_header *hdr, docket_ledger *l, MDB_txn *txn,
		 const uint8_t *frame, size_t len)
{
	const uint8_t *body;
	size_t body_len;
	int error;

	if ((error = frame_header_parse(hdr, frame, len)) < 0)
		return error;
	body = frame + hdr->header_len;
	body_len = len - hdr->header_len;
	docket_buf_clear(out);
	if ((error = docket_buf_reserve(out, hdr->raw_len)) < 0)
		return error;
	if (hdr->codec == FRAME_RAW) {
		memcpy(out->ptr, body, body_len);
		out->len = body_len;
		return 0;
	}
	if ((error = codec_decompress(l, txn, hdr->codec == FRAME_ZSTD_DICT ? hdr->dict_id : 0,
				      (uint8_t *)out->ptr, hdr->raw_len, body, body_len)) < 0) {
		docket_error_prefix("frame ");
		return error;
	}
	out->len = hdr->raw_len;
	out->ptr[out->len] = '\0';
	return 0;
}

/* Collect up to DICT_SAMPLES recent payloads (events `events` and before)
 * into one buffer + sizes. */
static int collect_samples(docket_buf *samples, size_t *sizes, unsigned *count,
			   docket_ledger *l, MDB_txn *txn, uint64_t events)
{
	ledger_reader r;
	int error = 0;

	*count = 0;
	reader_init(&r, l, txn);
	for (uint64_t seq = events; seq >= 1 && *count < DICT_SAMPLES; seq--) {
		const uint8_t *p;
		size_t n;

		if ((error = reader_payload(&r, seq, &p, &n)) < 0 ||
		    (error = docket_buf_put(samples, p, n)) < 0)
			break;
		sizes[(*count)++] = n;
	}
	reader_dispose(&r);
	return error;
}

/* Total compressed size of the samples, with `cdict` or plain zstd. */
static size_t sample_cost(ledger_codec *c, const docket_buf *samples, const size_t *sizes,
			  unsigned count, ZSTD_CDict *cdict)
{
	uint8_t dst[4096];
	size_t total = 0, off = 0;

	for (unsigned i = 0; i < count; i++) {
		size_t n = sizes[i];

		if (sizes[i] >= COMPRESS_MIN && ZSTD_compressBound(sizes[i]) <= sizeof(dst)) {
			size_t z = compress_body(&c->cc, dst, sizeof(dst),
						 (const uint8_t *)samples->ptr + off, sizes[i], cdict,
						 COMPRESS_LEVEL);
			if (!ZSTD_isError(z) && z < sizes[i])
				n = z;
		}
		total += n;
		off += sizes[i];
	}
	return total;
}

int frame_maybe_train(docket_ledger *l, MDB_txn *txn, uint64_t events)
{
	docket_buf samples = DOCKET_BUF_INIT;
	size_t *sizes = NULL;
	uint8_t *dict = NULL;
	uint64_t next_try, active;
	unsigned count = 0;
	ZSTD_CDict *cdict = NULL;
	ZDICT_fastCover_params_t params;
	size_t dict_len, plain, with_dict;
	int error;

	if ((error = store_meta_get_u64(txn, l, "dict_active", &active)) < 0 ||
	    (error = store_meta_get_u64(txn, l, "dict_next_try", &next_try)) < 0)
		return error;
	if (active != 0 || events < (next_try ? next_try : DICT_TRAIN_AT))
		return 0;
	/* Whatever happens, do not try again before the ledger has grown 4x. */
	if ((error = store_meta_put_u64(txn, l, "dict_next_try", events * 4)) < 0)
		return error;
	if (!(sizes = docket_calloc(DICT_SAMPLES, sizeof(*sizes))) ||
	    !(dict = docket_malloc(DICT_CAPACITY))) {
		error = docket_error_set_oom();
		goto cleanup;
	}
	if ((error = collect_samples(&samples, sizes, &count, l, txn, events)) < 0 || count < 64)
		goto cleanup;
	memset(&params, 0, sizeof(params));
	params.k = DICT_TRAIN_K;
	params.d = DICT_TRAIN_D;
	params.f = DICT_TRAIN_F;
	params.accel = 1;
	params.splitPoint = 1.0;
	params.zParams.compressionLevel = COMPRESS_LEVEL;
	dict_len = ZDICT_trainFromBuffer_fastCover(dict, DICT_CAPACITY, samples.ptr, sizes, count, params);
	if (ZDICT_isError(dict_len))
		goto cleanup; /* not enough material: stay without a dictionary */
	pthread_mutex_lock(&l->codec.lock);
	if ((error = cctx_ready(&l->codec)) < 0) {
		pthread_mutex_unlock(&l->codec.lock);
		goto cleanup;
	}
	cdict = ZSTD_createCDict(dict, dict_len, COMPRESS_LEVEL);
	plain = sample_cost(&l->codec, &samples, sizes, count, NULL);
	with_dict = cdict ? sample_cost(&l->codec, &samples, sizes, count, cdict) : plain;
	/* the context must not keep referencing the trial CDict */
	cctx_unconfigure(&l->codec.cc);
	pthread_mutex_unlock(&l->codec.lock);
	if (cdict && with_dict * 100 <= plain * (100 - DICT_MIN_GAIN_PCT)) {
		uint8_t key[4];
		MDB_val k = { sizeof(key), key }, v = { dict_len, dict };
		int rc;

		docket_be32_put(key, 1);
		/* A dictionary trained in a transaction that is later aborted
		 * must not survive in the caches under the same id. */
		pthread_mutex_lock(&l->codec.lock);
		codec_forget(&l->codec);
		pthread_mutex_unlock(&l->codec.lock);
		if ((rc = mdb_put(txn, l->dbi.dicts, &k, &v, 0)) != 0)
			error = store_error(rc, "store dictionary");
		else
			error = store_meta_put_u64(txn, l, "dict_active", 1);
	}
cleanup:
	ZSTD_freeCDict(cdict);
	docket_free(dict);
	docket_free(sizes);
	docket_buf_dispose(&samples);
	return error;
}
