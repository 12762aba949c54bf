/* SPDX-License-Identifier: Apache-2.0 */
/*
 * segment.c: the event log of formats 2 and 3. `events` holds one value per segment,
 * keyed by the seq of its first event (8 bytes big-endian, written with
 * MDB_APPEND); a segment holds the events of one commit (up to
 * SEG_TARGET_EVENTS; a bulk append writes several):
 *
 *   size   field
 *   1      segment version (2)
 *   1      codec: 0 raw, 1 zstd, 2 zstd with dictionary
 *   1      dictionary id (0 unless codec 2)
 *   1      flags (bit 0 reserved for a 32-byte Merkle root after the hash)
 *   2      event count n, big-endian (1 .. 65535)
 *   32     chain hash h[first + n - 1] of its last event
 *   n x    per event: body case (1 byte: the Event's body field number)
 *          and payload length (unsigned LEB128)
 *   rest   the n payloads concatenated, compressed by the codec as ONE zstd
 *          frame (no content size, dictionary id or checksum fields)
 *
 * The index is uncompressed so a reader can skip kinds it does not want
 * without decompressing, and the chain is the same as format 1's
 * (h[n] = SHA-256(h[n-1] || be64(n) || payload[n])): only its last value is
 * stored, the others are recomputed from the previous segment's. A bulk
 * segment (SEG_SMALL payload bytes or more) is compressed at level 1, a
 * small one (a serve commit) with the ledger's dictionary when it has one.
 * Format 3 (docs/file-format.md "Segments (format 3)") keeps all of this
 * and stores the payloads in two parts compressed on their own, so a reader
 * decompresses only the part holding what it asks for:
 *
 *   n x    per event: P|kind (bit 7: the payload is in part B) and length
 *   1      codec of part B (the header's codec byte is part A's)
 *   LEB128 size of part A as stored
 *   ...    part A: the payloads with P = 0, in seq order (the decisions)
 *   rest   part B: the payloads with P = 1, in seq order (the outcomes)
 *
 * Payloads are whole in either part, so the chain and the Merkle leaves
 * hash the same bytes in both formats.
 * `docket compact` and `migrate` write history: segments of
 * SEG_REWRITE_EVENTS events at SEG_REWRITE_LEVEL (issue 12: the events of
 * bench_format2's compacted small commits took 94 overflow pages so, 117 at
 * 1,024 events and level 1, 107 at 4,096 and level 1; at 4,096 level 3
 * gave 110, level 6 100, level 12 94).
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "ledger_internal.h"
#include "util/alloc.h"
#include "util/error.h"

#define SEG_FIXED 38                /* bytes before the index */
#define SEG_LEB_MAX 10              /* bytes of a 64-bit LEB128 */
#define SEG_MAX_RAW (512u << 20)    /* payload bytes a reader accepts in one segment */
#define SEG_SMALL 4096              /* below this many payload bytes: use the dictionary */
#define SEG_LEVEL_BULK 1
#define SEG_LEVEL_SMALL 3

/* ---- writer ---- */

void seg_writer_init(seg_writer *w, docket_ledger *l)
{
	memset(w, 0, sizeof(*w));
	w->l = l;
	w->version = l && l->format == SEG_VERSION_2 ? SEG_VERSION_2 : SEG_VERSION;
}

void seg_batch_dispose(seg_batch *b)
{
	docket_buf_dispose(&b->index);
	docket_buf_dispose(&b->part[0]);
	docket_buf_dispose(&b->part[1]);
}

void seg_writer_dispose(seg_writer *w)
{
	seg_stage_free(w->stage);
	w->stage = NULL;
	seg_batch_dispose(&w->b);
	docket_buf_dispose(&w->out);
	docket_buf_dispose(&w->zpart);
}

unsigned seg_kind_part(unsigned kind)
{
	return kind == DOCKET__V1__EVENT__BODY_TOOL_COMPLETED;
}

static int leb_put(docket_buf *b, uint64_t v)
{
	uint8_t tmp[SEG_LEB_MAX];
	size_t n = 0;

	do {
		tmp[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	return docket_buf_put(b, tmp, n);
}

int seg_add(seg_writer *w, uint64_t seq, unsigned kind, const uint8_t *payload, size_t len,
	    const uint8_t hash[LEDGER_HASH_LEN])
{
	seg_batch *b = &w->b;
	int error;

	if (b->count && seq != b->first + b->count)
		return docket_error_set(DOCKET_ERROR, "segment writer: seq %llu after %llu",
					(unsigned long long)seq, (unsigned long long)(b->first + b->count - 1));
	if (b->count >= SEG_MAX_EVENTS || len > UINT32_MAX || kind >= SEG_PART_B)
		return docket_error_set(DOCKET_ERROR, "segment writer: event does not fit");
	if (w->version != SEG_VERSION_2 && seg_kind_part(kind))
		kind |= SEG_PART_B;
	if ((error = docket_buf_putc(&b->index, (char)kind)) < 0 ||
	    (error = leb_put(&b->index, (uint32_t)len)) < 0 ||
	    (error = docket_buf_put(&b->part[kind & SEG_PART_B ? 1 : 0], payload, len)) < 0)
		return error;
	if (!b->count)
		b->first = seq;
	b->count++;
	memcpy(b->last, hash, LEDGER_HASH_LEN);
	return 0;
}

int seg_full(const seg_writer *w)
{
	return w->b.count >= (w->target ? w->target : SEG_TARGET_EVENTS) ||
	       w->b.part[0].len + w->b.part[1].len >= SEG_TARGET_BYTES;
}

/* One entry of a segment index at *p (kind, LEB128 length), bounds-checked
 * against `end`: 0 and *p past it, or -1. */
static int index_entry(const uint8_t **p, const uint8_t *end, uint8_t *kind, uint64_t *len)
{
	uint64_t v = 0;

	if (*p >= end)
		return -1;
	*kind = *(*p)++;
	for (int shift = 0; *p < end && shift <= 28; shift += 7) {
		uint8_t b = *(*p)++;

		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*len = v;
			return 0;
		}
	}
	return -1;
}

/* Walks a batch's payloads in seq order: each in its part. */
typedef struct batch_walk {
	const seg_batch *b;
	const uint8_t *ix, *end;
	size_t off[2];
} batch_walk;

static void walk_init(batch_walk *k, const seg_batch *b)
{
	k->b = b;
	k->ix = (const uint8_t *)b->index.ptr;
	k->end = k->ix + b->index.len;
	k->off[0] = k->off[1] = 0;
}

static int walk_next(batch_walk *k, const uint8_t **p, size_t *len)
{
	unsigned part;
	uint64_t n;
	uint8_t kind;

	if (index_entry(&k->ix, k->end, &kind, &n) < 0)
		return docket_error_set(DOCKET_ERROR, "segment writer: index damaged");
	part = kind & SEG_PART_B ? 1 : 0;
	if (n > k->b->part[part].len - k->off[part])
		return docket_error_set(DOCKET_ERROR, "segment writer: index damaged");
	*p = (const uint8_t *)k->b->part[part].ptr + k->off[part];
	*len = (size_t)n;
	k->off[part] += (size_t)n;
	return 0;
}

int seg_batch_payload(const seg_batch *b, uint64_t seq, const uint8_t **p, size_t *len)
{
	batch_walk k;
	int error;

	if (!b->count || seq < b->first || seq - b->first >= b->count)
		return DOCKET_ENOTFOUND;
	walk_init(&k, b);
	for (uint64_t s = b->first; s <= seq; s++)
		if ((error = walk_next(&k, p, len)) < 0)
			return error;
	return 0;
}

int seg_writer_payload(const seg_writer *w, uint64_t seq, const uint8_t **p, size_t *len)
{
	int error = seg_batch_payload(&w->b, seq, p, len);

	if (error == DOCKET_ENOTFOUND && w->stage)
		error = seg_stage_payload(w->stage, seq, p, len);
	return error;
}

int seg_batch_each(const seg_batch *b, int (*fn)(void *ctx, const uint8_t *p, size_t len), void *ctx)
{
	batch_walk k;
	const uint8_t *p;
	size_t n;
	int error;

	walk_init(&k, b);
	for (uint32_t i = 0; i < b->count; i++)
		if ((error = walk_next(&k, &p, &n)) < 0 || (error = fn(ctx, p, n)) < 0)
			return error;
	return 0;
}

void seg_mark_get(const seg_writer *w, seg_mark *m)
{
	m->first = w->b.first;
	m->count = w->b.count;
	m->index_len = w->b.index.len;
	m->part_len[0] = w->b.part[0].len;
	m->part_len[1] = w->b.part[1].len;
	memcpy(m->last, w->b.last, LEDGER_HASH_LEN);
}

void seg_rollback(seg_writer *w, const seg_mark *m)
{
	w->b.first = m->first;
	w->b.count = m->count;
	w->b.index.len = m->index_len;
	w->b.part[0].len = m->part_len[0];
	w->b.part[1].len = m->part_len[1];
	memcpy(w->b.last, m->last, LEDGER_HASH_LEN);
}

static int add_stored(docket_ledger *l, MDB_txn *txn, uint64_t n)
{
	uint64_t total;
	int error;

	if ((error = store_meta_get_u64(txn, l, "frame_bytes", &total)) < 0)
		return error;
	return store_meta_put_u64(txn, l, "frame_bytes", total + n);
}

int seg_batch_wants_dict(const seg_batch *b)
{
	return (b->part[0].len && b->part[0].len < SEG_SMALL) || (b->part[1].len && b->part[1].len < SEG_SMALL);
}

/* Append one part's payloads to `dst` as stored: compressed (at level 1,
 * or 3 with the ledger's dictionary when the part is small), or as they
 * are when that does not shrink them. *codec is its codec; *dict_id the
 * dictionary it used (left alone when none). */
static int part_put(const seg_coder *c, docket_buf *dst, const docket_buf *src, uint8_t *codec, uint32_t *dict_id)
{
	size_t bound = ZSTD_compressBound(src->len);
	uint32_t id = 0;
	int n, bulk = src->len >= SEG_SMALL, level = bulk ? (c->level ? c->level : SEG_LEVEL_BULK) : SEG_LEVEL_SMALL;
	int error;

	*codec = 0;
	if ((error = docket_buf_reserve(dst, bound > src->len ? bound : src->len)) < 0)
		return error;
	if (c->cc) {
		n = codec_compress_cc(c->cc, (uint8_t *)dst->ptr + dst->len, bound, (const uint8_t *)src->ptr,
				      src->len, bulk ? NULL : c->cdict, level);
		id = n > 0 && !bulk && c->cdict ? c->dict_id : 0;
	} else {
		n = codec_compress(c->l, c->txn, (uint8_t *)dst->ptr + dst->len, bound, (const uint8_t *)src->ptr,
				   src->len, !bulk, level, &id);
	}
	if (n < 0)
		return n;
	if (n == 0) {
		if (src->len)
			memcpy(dst->ptr + dst->len, src->ptr, src->len);
		dst->len += src->len;
		return 0;
	}
	dst->len += (size_t)n;
	*codec = id ? 2 : 1;
	if (id)
		*dict_id = id;
	return 0;
}

/* Encode a batch into `out`: the header and index, then one part (format
 * 2) or two (format 3: part B's codec and part A's stored size, part A,
 * part B). */
int seg_encode(const seg_coder *c, const seg_batch *b, docket_buf *out, docket_buf *zpart)
{
	uint8_t hdr[SEG_FIXED], codec_a = 0, codec_b = 0;
	uint32_t dict_id = 0;
	int error;

	docket_buf_clear(out);
	hdr[0] = c->version;
	hdr[3] = 0;
	hdr[4] = (uint8_t)(b->count >> 8);
	hdr[5] = (uint8_t)b->count;
	memcpy(hdr + 6, b->last, LEDGER_HASH_LEN);
	if ((error = docket_buf_put(out, hdr, sizeof(hdr))) < 0 ||
	    (error = docket_buf_put(out, b->index.ptr, b->index.len)) < 0)
		return error;
	if (c->version == SEG_VERSION_2) {
		if ((error = part_put(c, out, &b->part[0], &codec_a, &dict_id)) < 0)
			return error;
	} else {
		size_t at_codec_b = out->len;

		docket_buf_clear(zpart);
		if ((error = part_put(c, zpart, &b->part[0], &codec_a, &dict_id)) < 0 ||
		    (error = docket_buf_putc(out, 0)) < 0 ||
		    (error = leb_put(out, zpart->len)) < 0 ||
		    (error = docket_buf_put(out, zpart->ptr, zpart->len)) < 0 ||
		    (error = part_put(c, out, &b->part[1], &codec_b, &dict_id)) < 0)
			return error;
		out->ptr[at_codec_b] = (char)codec_b;
	}
	out->ptr[1] = (char)codec_a;
	out->ptr[2] = (char)(codec_a == 2 || codec_b == 2 ? dict_id : 0);
	return 0;
}

int seg_put(seg_writer *w, MDB_txn *txn, uint64_t first, const docket_buf *out)
{
	uint8_t key[8];
	MDB_val k = { sizeof(key), key }, v = { out->len, out->ptr };
	int rc, error;

	docket_be64_put(key, first);
	if ((rc = mdb_put(txn, w->l->dbi.events, &k, &v, MDB_APPEND)) != 0)
		return store_error(rc, "write events");
	if ((error = add_stored(w->l, txn, out->len)) < 0)
		return error;
	w->stored += out->len;
	return 0;
}

/* The buffered batch is written: the writer starts the next at its end. */
static void batch_restart(seg_batch *b)
{
	b->first += b->count;
	b->count = 0;
	docket_buf_clear(&b->index);
	docket_buf_clear(&b->part[0]);
	docket_buf_clear(&b->part[1]);
}

int seg_flush(seg_writer *w, MDB_txn *txn)
{
	seg_coder c = { w->l, txn, NULL, NULL, 0, w->level, w->version };
	int error;

	if (w->stage && (error = seg_stage_drain(w, txn)) < 0)
		return error;
	if (!w->b.count)
		return 0;
	if ((error = merkle_extend(w, txn)) < 0 || (error = seg_encode(&c, &w->b, &w->out, &w->zpart)) < 0 ||
	    (error = seg_put(w, txn, w->b.first, &w->out)) < 0)
		return error;
	batch_restart(&w->b);
	return 0;
}

int seg_close(seg_writer *w, MDB_txn *txn)
{
	if (w->parallel && w->b.count)
		return seg_stage_submit(w, txn);
	return seg_flush(w, txn);
}

/* ---- reader ---- */

atomic_ulong reader_part_decodes[2];

void reader_init(ledger_reader *r, docket_ledger *l, MDB_txn *txn)
{
	memset(r, 0, sizeof(*r));
	r->l = l;
	r->txn = txn;
}

void reader_set_txn(ledger_reader *r, MDB_txn *txn)
{
	r->txn = txn;
}

void reader_dispose(ledger_reader *r)
{
	docket_free(r->kinds);
	docket_free(r->parts);
	docket_free(r->lens);
	docket_free(r->offs);
	docket_free(r->hashes);
	docket_buf_dispose(&r->seg);
	docket_buf_dispose(&r->body[0]);
	docket_buf_dispose(&r->body[1]);
	memset(r, 0, sizeof(*r));
}

static int reader_reserve(ledger_reader *r, uint32_t n)
{
	uint8_t *kinds, *parts;
	uint32_t *lens;
	size_t *offs;
	uint8_t (*hashes)[LEDGER_HASH_LEN];

	if (n <= r->cap)
		return 0;
	kinds = docket_realloc(r->kinds, n);
	if (kinds)
		r->kinds = kinds;
	parts = docket_realloc(r->parts, n);
	if (parts)
		r->parts = parts;
	lens = docket_realloc(r->lens, (size_t)n * sizeof(*lens));
	if (lens)
		r->lens = lens;
	offs = docket_realloc(r->offs, ((size_t)n + 1) * sizeof(*offs));
	if (offs)
		r->offs = offs;
	hashes = docket_realloc(r->hashes, (size_t)n * sizeof(*hashes));
	if (hashes)
		r->hashes = hashes;
	if (!kinds || !parts || !lens || !offs || !hashes)
		return docket_error_set_oom();
	r->cap = n;
	return 0;
}

/* An unsigned LEB128 of at most 64 bits at seg[*pos], inside `len`. */
static int leb_get(const uint8_t *seg, size_t len, size_t *pos, uint64_t *out)
{
	uint64_t v = 0;

	for (int shift = 0; *pos < len && shift < 64; shift += 7) {
		uint8_t b = seg[(*pos)++];

		if (shift == 63 && b > 1)
			return -1;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*out = v;
			return 0;
		}
	}
	return -1;
}

/* The index: each event's kind, part, length and offset in its part. */
static int index_parse(ledger_reader *r, const uint8_t *seg, size_t len, size_t *pos, uint32_t n)
{
	size_t total = 0;

	r->raw[0] = r->raw[1] = 0;
	for (uint32_t i = 0; i < n; i++) {
		const uint8_t *at = seg + *pos;
		uint64_t v;
		uint8_t kind;

		if (index_entry(&at, seg + len, &kind, &v) < 0)
			return docket_error_set(DOCKET_ECORRUPT, "segment index cut short or damaged");
		*pos = (size_t)(at - seg);
		if (v > SEG_MAX_RAW || total + v > SEG_MAX_RAW)
			return docket_error_set(DOCKET_ECORRUPT, "segment claims too many bytes");
		r->parts[i] = r->version != SEG_VERSION_2 && (kind & SEG_PART_B) ? 1 : 0;
		r->kinds[i] = r->version != SEG_VERSION_2 ? kind & (uint8_t)~SEG_PART_B : kind;
		r->lens[i] = (uint32_t)v;
		r->offs[i] = r->raw[r->parts[i]];
		r->raw[r->parts[i]] += v;
		total += v;
	}
	return 0;
}

/* Where each part lies in the value (after the index at *pos), checked. */
static int parts_locate(ledger_reader *r, const uint8_t *seg, size_t len, size_t pos)
{
	uint64_t size_a;

	if (r->version == SEG_VERSION_2) {
		r->codec[1] = 0;
		r->part_off[0] = pos;
		r->part_len[0] = len - pos;
		r->part_off[1] = len;
		r->part_len[1] = 0;
	} else {
		if (pos >= len || seg[pos] > 2)
			return docket_error_set(DOCKET_ECORRUPT, "bad codec of part B (%s)",
						pos >= len ? "missing" : "unknown");
		r->codec[1] = seg[pos++];
		if (leb_get(seg, len, &pos, &size_a) < 0 || size_a > len - pos)
			return docket_error_set(DOCKET_ECORRUPT, "the size of part A is damaged or outside the segment");
		r->part_off[0] = pos;
		r->part_len[0] = (size_t)size_a;
		r->part_off[1] = pos + (size_t)size_a;
		r->part_len[1] = len - r->part_off[1];
	}
	for (int p = 0; p < 2; p++) {
		if (r->codec[p] == 0 && r->part_len[p] != r->raw[p])
			return docket_error_set(DOCKET_ECORRUPT, "raw %s holds %zu bytes, its index says %zu",
						r->version == SEG_VERSION_2 ? "segment" : p ? "part B" : "part A",
						r->part_len[p], r->raw[p]);
		if (r->version != SEG_VERSION_2 && r->raw[p] == 0 && r->codec[p] != 0)
			return docket_error_set(DOCKET_ECORRUPT, "empty part %c is not stored raw", p ? 'B' : 'A');
	}
	return 0;
}

int seg_parse(ledger_reader *r, const uint8_t *seg, size_t len)
{
	size_t pos = SEG_FIXED;
	uint32_t n;
	int error, uses_dict;

	r->first = 0;
	if (len < SEG_FIXED)
		return docket_error_set(DOCKET_ECORRUPT, "segment too short (%zu bytes)", len);
	if (seg[0] != SEG_VERSION && seg[0] != SEG_VERSION_2)
		return docket_error_set(DOCKET_ECORRUPT, "unknown segment version %u", seg[0]);
	if (seg[1] > 2)
		return docket_error_set(DOCKET_ECORRUPT, "bad segment codec %u (dictionary %u)", seg[1], seg[2]);
	if (seg[3] & ~SEG_FLAG_MERKLE)
		return docket_error_set(DOCKET_ECORRUPT, "unknown segment flags 0x%02x", seg[3]);
	n = (uint32_t)seg[4] << 8 | seg[5];
	if (n == 0)
		return docket_error_set(DOCKET_ECORRUPT, "empty segment");
	if (seg[3] & SEG_FLAG_MERKLE)
		pos += LEDGER_HASH_LEN;
	r->version = seg[0];
	r->codec[0] = seg[1];
	if ((error = reader_reserve(r, n)) < 0 || (error = index_parse(r, seg, len, &pos, n)) < 0 ||
	    (error = parts_locate(r, seg, len, pos)) < 0)
		return error;
	uses_dict = r->codec[0] == 2 || r->codec[1] == 2;
	if (uses_dict != (seg[2] != 0))
		return docket_error_set(DOCKET_ECORRUPT, "bad segment codec %u/%u (dictionary %u)", r->codec[0],
					r->codec[1], seg[2]);
	r->dict_id = seg[2];
	r->count = n;
	memcpy(r->last, seg + 6, LEDGER_HASH_LEN);
	return 0;
}

/* Release the mapped pages of a value a long scan has copied out. */
static void drop_mapped(const MDB_val *v)
{
	long page = sysconf(_SC_PAGESIZE);
	uintptr_t a = (uintptr_t)v->mv_data, b = a + v->mv_size;

	if (page <= 0)
		return;
	a = (a + (uintptr_t)page - 1) & ~((uintptr_t)page - 1);
	b &= ~((uintptr_t)page - 1);
	if (b > a)
		madvise((void *)a, b - a, MADV_DONTNEED);
}

/* Find the read-only shared mappings of the ledger's data file (by device
 * and inode) in /proc/self/maps: LMDB does not say where its map is
 * (mdb_env_info's address is that of a fixed map only). */
static void map_ranges_read(docket_ledger *l)
{
	char line[4096 + 256];
	struct stat st;
	FILE *maps;
	int fd;

	l->map_ranges_size = 0;
	l->map_nranges = 0;
	if (mdb_env_get_fd(l->env, &fd) != 0 || fstat(fd, &st) != 0 || !(maps = fopen("/proc/self/maps", "re")))
		return;
	while (fgets(line, sizeof(line), maps)) {
		unsigned long lo, hi, ino;
		unsigned maj, min;
		char perms[5];

		if (sscanf(line, "%lx-%lx %4s %*s %x:%x %lu", &lo, &hi, perms, &maj, &min, &ino) != 6 ||
		    ino != (unsigned long)st.st_ino || maj != major(st.st_dev) || min != minor(st.st_dev) ||
		    perms[1] != '-' || perms[3] != 's' || hi <= lo)
			continue;
		if (l->map_nranges == LEDGER_MAP_RANGES) {
			l->map_nranges = 0;   /* more than expected: not kept */
			break;
		}
		l->map_ranges[l->map_nranges][0] = lo;
		l->map_ranges[l->map_nranges][1] = hi;
		l->map_nranges++;
	}
	fclose(maps);
	if (l->map_nranges)
		l->map_ranges_size = l->map_size;
}

void ledger_map_release(docket_ledger *l)
{
	if (!l || !l->env)
		return;
	/* read once per map: re-reading /proc/self/maps on every release was
	 * a few percent of verify */
	if (!l->map_ranges_size || l->map_ranges_size != l->map_size)
		map_ranges_read(l);
	for (size_t i = 0; i < l->map_nranges; i++)
		madvise((void *)l->map_ranges[i][0], l->map_ranges[i][1] - l->map_ranges[i][0], MADV_DONTNEED);
}

/* Position on the segment holding `seq`: 0 and its key and value, and the
 * key of the segment after it (0: none). */
static int locate(ledger_reader *r, uint64_t seq, uint64_t *first, MDB_val *v, uint64_t *next)
{
	MDB_cursor *cur = NULL;
	uint8_t key[8];
	MDB_val k = { sizeof(key), key }, nk, nv;
	int rc;

	if ((rc = mdb_cursor_open(r->txn, r->l->dbi.events, &cur)) != 0)
		return store_error(rc, "read events");
	docket_be64_put(key, seq);
	rc = mdb_cursor_get(cur, &k, v, MDB_SET_RANGE);
	if (rc == 0 && (k.mv_size != 8 || docket_be64_get(k.mv_data) != seq))
		rc = mdb_cursor_get(cur, &k, v, MDB_PREV);
	else if (rc == MDB_NOTFOUND)
		rc = mdb_cursor_get(cur, &k, v, MDB_LAST);
	*next = 0;
	if (rc == 0 && mdb_cursor_get(cur, &nk, &nv, MDB_NEXT) == 0 && nk.mv_size == 8)
		*next = docket_be64_get(nk.mv_data);
	mdb_cursor_close(cur);
	if (rc == MDB_NOTFOUND)
		return DOCKET_ENOTFOUND;
	if (rc != 0)
		return store_error(rc, "read events");
	if (k.mv_size != 8)
		return docket_error_set(DOCKET_ECORRUPT, "bad key in the events table");
	*first = docket_be64_get(k.mv_data);
	return *first <= seq ? 0 : DOCKET_ENOTFOUND;
}

/* Whether a later segment exists (then a seq before it is a gap). */
static int gap_or_end(ledger_reader *r, uint64_t seq)
{
	uint64_t last;
	int error;

	if ((error = reader_last_seq(r, &last)) < 0)
		return error;
	if (seq > last)
		return DOCKET_ENOTFOUND;
	return docket_error_set(DOCKET_ECORRUPT, "seq %llu is missing from the log", (unsigned long long)seq);
}

int reader_adopt(ledger_reader *r, uint64_t first, const void *seg, size_t len)
{
	int error;

	r->first = 0;
	r->decoded = 0;
	r->hashed = 0;
	docket_buf_clear(&r->seg);
	if ((error = docket_buf_put(&r->seg, seg, len)) < 0)
		return error;
	if ((error = seg_parse(r, (const uint8_t *)r->seg.ptr, r->seg.len)) < 0) {
		docket_error_prefix("segment at seq %llu: ", (unsigned long long)first);
		return error;
	}
	r->first = first;
	r->stored = len;
	return 0;
}

int reader_seek(ledger_reader *r, uint64_t seq)
{
	uint64_t first = 0, next = 0, prev_end = r->first ? r->first + r->count : 0;
	MDB_val v;
	int error;

	if (r->first && seq >= r->first && seq - r->first < r->count)
		return 0;
	if (seq == 0)
		return docket_error_set(DOCKET_EINVALID, "seq 0 does not exist");
	if ((error = locate(r, seq, &first, &v, &next)) == DOCKET_ENOTFOUND)
		return gap_or_end(r, seq);
	if (error < 0)
		return error;
	if (r->first && prev_end == first) {
		memcpy(r->prev, r->last, LEDGER_HASH_LEN);
		r->prev_ok = 1;
	} else {
		r->prev_ok = first == 1;
		memset(r->prev, 0, LEDGER_HASH_LEN);
	}
	error = reader_adopt(r, first, v.mv_data, v.mv_size);
	if (r->scan) {
		drop_mapped(&v);
		if (++r->since_release >= READER_RELEASE_SEGMENTS) {
			ledger_map_release(r->l);
			r->since_release = 0;
		}
	}
	if (error < 0)
		return error;
	if (next && next < first + r->count) {
		r->first = 0;
		return docket_error_set(DOCKET_ECORRUPT, "the segments at seq %llu and %llu overlap",
					(unsigned long long)first, (unsigned long long)next);
	}
	if (seq - first >= r->count) {
		r->first = 0;
		return gap_or_end(r, seq);
	}
	return 0;
}

int reader_kind(ledger_reader *r, uint64_t seq, unsigned *kind)
{
	int error;

	if ((error = reader_seek(r, seq)) < 0)
		return error;
	*kind = r->kinds[seq - r->first];
	return 0;
}

/* Decompress part `p` of the loaded segment (once). */
static int reader_decode(ledger_reader *r, unsigned p)
{
	const uint8_t *src = (const uint8_t *)r->seg.ptr + r->part_off[p];
	size_t raw = r->raw[p];
	docket_buf *body = &r->body[p];
	int error;

	if (r->decoded & (1u << p))
		return 0;
	docket_buf_clear(body);
	if ((error = docket_buf_reserve(body, raw + 1)) < 0)
		return error;
	if (r->codec[p] == 0) {
		if (raw)
			memcpy(body->ptr, src, raw);
	} else if ((error = codec_decompress(r->l, r->txn, r->codec[p] == 2 ? r->dict_id : 0,
					     (uint8_t *)body->ptr, raw, src, r->part_len[p])) < 0) {
		docket_error_prefix("segment at seq %llu%s ", (unsigned long long)r->first,
				    r->version == SEG_VERSION_2 ? "" : p ? ", part B," : ", part A,");
		return error;
	}
	body->len = raw;
	body->ptr[raw] = '\0';
	r->decoded |= 1u << p;
	if (raw)
		atomic_fetch_add_explicit(&reader_part_decodes[p], 1, memory_order_relaxed);
	return 0;
}

int reader_decode_parts(ledger_reader *r)
{
	int error = reader_decode(r, 0);

	return error < 0 ? error : reader_decode(r, 1);
}

const uint8_t *reader_payload_at(const ledger_reader *r, uint32_t i)
{
	return (const uint8_t *)r->body[r->parts[i]].ptr + r->offs[i];
}

int reader_payload(ledger_reader *r, uint64_t seq, const uint8_t **p, size_t *len)
{
	size_t i;
	int error;

	if ((error = reader_seek(r, seq)) < 0)
		return error;
	i = (size_t)(seq - r->first);
	if ((error = reader_decode(r, r->parts[i])) < 0)
		return error;
	*p = reader_payload_at(r, (uint32_t)i);
	*len = r->lens[i];
	return 0;
}

/* The stored chain hash of the segment before the loaded one. */
static int load_prev(ledger_reader *r)
{
	MDB_cursor *cur = NULL;
	uint8_t key[8];
	MDB_val k = { sizeof(key), key }, v;
	int rc;

	if (r->prev_ok)
		return 0;
	if ((rc = mdb_cursor_open(r->txn, r->l->dbi.events, &cur)) != 0)
		return store_error(rc, "read events");
	docket_be64_put(key, r->first);
	if ((rc = mdb_cursor_get(cur, &k, &v, MDB_SET_KEY)) == 0)
		rc = mdb_cursor_get(cur, &k, &v, MDB_PREV);
	mdb_cursor_close(cur);
	if (rc == MDB_NOTFOUND)
		return docket_error_set(DOCKET_ECORRUPT, "seq %llu is missing from the log",
					(unsigned long long)(r->first - 1));
	if (rc != 0)
		return store_error(rc, "read events");
	if (k.mv_size != 8 || v.mv_size < SEG_FIXED ||
	    (((const uint8_t *)v.mv_data)[0] != SEG_VERSION && ((const uint8_t *)v.mv_data)[0] != SEG_VERSION_2))
		return docket_error_set(DOCKET_ECORRUPT, "segment before seq %llu is damaged",
					(unsigned long long)r->first);
	memcpy(r->prev, (const uint8_t *)v.mv_data + 6, LEDGER_HASH_LEN);
	r->prev_ok = 1;
	return 0;
}

int reader_chain_prev(ledger_reader *r, uint64_t seq, const uint8_t **prev)
{
	int error;

	if ((error = reader_seek(r, seq)) < 0 || (error = reader_decode_parts(r)) < 0 ||
	    (error = load_prev(r)) < 0)
		return error;
	*prev = r->prev;
	return 0;
}

int reader_chain_joint(const ledger_reader *r, const uint8_t end[LEDGER_HASH_LEN])
{
	if (memcmp(end, r->last, LEDGER_HASH_LEN) == 0)
		return 0;
	return docket_error_set(DOCKET_ECORRUPT, "the chain hash of seqs %llu-%llu does not match their events",
				(unsigned long long)r->first, (unsigned long long)(r->first + r->count - 1));
}

int reader_hash(ledger_reader *r, uint64_t seq, uint8_t out[LEDGER_HASH_LEN])
{
	int error;

	if ((error = reader_seek(r, seq)) < 0)
		return error;
	if (!r->hashed) {
		const uint8_t *prev;

		if ((error = reader_chain_prev(r, seq, &prev)) < 0)
			return error;
		for (uint32_t i = 0; i < r->count; i++) {
			if ((error = chain_next(r->hashes[i], prev, r->first + i, reader_payload_at(r, i), r->lens[i])) < 0)
				return error;
			prev = r->hashes[i];
		}
		if ((error = reader_chain_joint(r, prev)) < 0)
			return error;
		r->hashed = 1;
	}
	memcpy(out, r->hashes[seq - r->first], LEDGER_HASH_LEN);
	return 0;
}

/*
 * Check stored event `seq` (read through `r`) against the chain that ends
 * in `head` (updated), and the segment's stored hash at its last event.
 * Returns the payload in *p, *len.
 */
int reader_check(ledger_reader *r, uint64_t seq, uint8_t head[LEDGER_HASH_LEN],
		       const uint8_t **p, size_t *len)
{
	int error;

	if ((error = reader_payload(r, seq, p, len)) == DOCKET_ENOTFOUND)
		return docket_error_set(DOCKET_ECORRUPT, "seq %llu is missing from the log",
					(unsigned long long)seq);
	if (error < 0)
		return error;
	if ((error = chain_next(head, head, seq, *p, *len)) < 0)
		return error;
	if (seq == r->first + r->count - 1 && memcmp(head, r->last, LEDGER_HASH_LEN) != 0)
		return docket_error_set(DOCKET_ECORRUPT, "chain hash does not match the events of seqs %llu-%llu",
					(unsigned long long)r->first, (unsigned long long)seq);
	return 0;
}

int reader_check_kind(const ledger_reader *r, uint64_t seq, unsigned body_case)
{
	uint32_t i = (uint32_t)(seq - r->first);
	unsigned part = r->version != SEG_VERSION_2 ? seg_kind_part(body_case) : 0;

	if (r->kinds[i] == body_case && r->parts[i] == part)
		return 0;
	return docket_error_set(DOCKET_ECORRUPT,
				"seq %llu: the segment index says kind %u in part %u, the event is kind %u in part %u",
				(unsigned long long)seq, (unsigned)r->kinds[i], (unsigned)r->parts[i], body_case, part);
}

int reader_last_seq(ledger_reader *r, uint64_t *out)
{
	MDB_cursor *cur = NULL;
	MDB_val k, v;
	int rc;

	*out = 0;
	if ((rc = mdb_cursor_open(r->txn, r->l->dbi.events, &cur)) != 0)
		return store_error(rc, "read events");
	rc = mdb_cursor_get(cur, &k, &v, MDB_LAST);
	mdb_cursor_close(cur);
	if (rc == MDB_NOTFOUND)
		return 0;
	if (rc != 0)
		return store_error(rc, "read events");
	if (k.mv_size != 8 || v.mv_size < SEG_FIXED)
		return docket_error_set(DOCKET_ECORRUPT, "the last segment is damaged");
	*out = docket_be64_get(k.mv_data) +
	       ((uint64_t)((const uint8_t *)v.mv_data)[4] << 8 | ((const uint8_t *)v.mv_data)[5]) - 1;
	return 0;
}

/* ---- tests ---- */

int seg_truncate(docket_ledger *l, MDB_txn *txn, uint64_t keep)
{
	ledger_reader r;
	seg_writer w;
	MDB_cursor *cur = NULL;
	uint8_t key[8];
	MDB_val k = { sizeof(key), key }, v;
	uint64_t first = 0;
	int rc, error = 0;

	reader_init(&r, l, txn);
	seg_writer_init(&w, l);
	/* the tree goes too (reindex rebuilds it) */
	error = merkle_drop(l, txn);
	/* the events of the segment holding `keep` that stay */
	if (error == 0 && keep && (error = reader_seek(&r, keep)) == 0 && keep < r.first + r.count - 1) {
		first = r.first;
		for (uint64_t seq = first; seq <= keep && error == 0; seq++) {
			const uint8_t *p;
			uint8_t h[LEDGER_HASH_LEN];
			size_t n;

			if ((error = reader_payload(&r, seq, &p, &n)) == 0 &&
			    (error = reader_hash(&r, seq, h)) == 0)
				error = seg_add(&w, seq, r.kinds[seq - first], p, n, h);
		}
	}
	if (error == DOCKET_ENOTFOUND)
		error = 0;
	if (error == 0 && (rc = mdb_cursor_open(txn, l->dbi.events, &cur)) != 0)
		error = store_error(rc, "read events");
	while (error == 0) {
		docket_be64_put(key, first ? first : keep + 1);
		k.mv_data = key;
		k.mv_size = sizeof(key);
		if (mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE) != 0)
			break;
		if ((rc = mdb_cursor_del(cur, 0)) != 0)
			error = store_error(rc, "delete events");
	}
	if (cur)
		mdb_cursor_close(cur);
	if (error == 0) {
		int off = l->merkle_off;

		l->merkle_off = 1;
		error = seg_flush(&w, txn);
		l->merkle_off = off;
	}
	seg_writer_dispose(&w);
	reader_dispose(&r);
	return error;
}
