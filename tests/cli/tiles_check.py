# SPDX-License-Identifier: Apache-2.0
"""tiles_check: `docket export --format tlog-tiles DIR` read by an independent
tlog-tiles client (python3-cryptography and hashlib, written from the C2SP
tlog-tiles, tlog-checkpoint and signed-note texts and RFC 6962).

    tiles_check.py DOCKET SOURCE_ROOT

The client gets ONLY the exported directory and the log's public key: it
reads `checkpoint`, verifies its Ed25519 signed-note signature, fetches the
tiles a client would (tile/<L>/<N>[.p/<W>], N in x-prefixed 3-digit groups),
recomputes the root from the level-0 tiles, from the entry bundles
(SHA-256(0x00 || entry)) and from the highest tiles, checks each level-L hash
is the tree hash of the full tile below it, and checks inclusion proofs built
from the tiles. The expected layouts are the spec's own examples (a tree of
256, a tree of 70,000). Negative cases: a flipped tile or bundle byte fails
the client; no checkpoint, a directory with other files, another ledger's
export, a fork, a rollback and an event over 65,535 bytes are refused.
Exit 0 when all holds, 1 with the first difference.
"""
import base64
import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from rfc6962 import leaf_hash, node_hash, split  # noqa: E402

EM = "\u2014"


class Fail(Exception):
    pass


def fail(msg):
    print("tiles_check: FAIL: " + msg)
    sys.exit(1)


# ---- RFC 6962 -------------------------------------------------------------


def mth(hashes):
    """RFC 6962 MTH over a list of leaf hashes (iterative, any length)."""
    if not hashes:
        return hashlib.sha256(b"").digest()
    level = list(hashes)
    while len(level) > 1:
        nxt = [node_hash(level[i], level[i + 1]) for i in range(0, len(level) - 1, 2)]
        if len(level) % 2:
            nxt.append(level[-1])   # a lone right node rises as it is (RFC 6962 2.1)
        level = nxt
    return level[0]


def verify_inclusion(index, size, leaf, proof, root):
    """RFC 9162 2.1.3.2."""
    if index >= size:
        return False
    fn, sn, r = index, size - 1, leaf
    for p in proof:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            while not fn & 1 and fn != 0:
                fn >>= 1
                sn >>= 1
        else:
            r = node_hash(r, p)
        fn >>= 1
        sn >>= 1
    return sn == 0 and r == root


# ---- signed note / checkpoint ---------------------------------------------

def raw_public(pub):
    return pub.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def read_checkpoint(data, pub):
    s = data.decode("utf-8")
    cut = s.rfind("\n\n")
    if cut < 0 or not s.endswith("\n"):
        raise Fail("checkpoint is not a signed note")
    text, sigs = s[:cut + 1], s[cut + 2:]
    lines = text.split("\n")
    if len(lines) < 4:
        raise Fail("checkpoint body %r" % text)
    origin, size, root = lines[0], int(lines[1]), base64.b64decode(lines[2], validate=True)
    if str(size) != lines[1] or len(root) != 32:
        raise Fail("checkpoint body %r" % text)
    kid = hashlib.sha256(origin.encode() + b"\n\x01" + raw_public(pub)).digest()[:4]
    good = False
    for line in sigs.splitlines():
        if not line.startswith(EM + " "):
            raise Fail("bad signature line %r" % line)
        name, b64 = line[2:].split(" ")
        raw = base64.b64decode(b64, validate=True)
        if name != origin or raw[:4] != kid:
            continue
        try:
            pub.verify(raw[4:], text.encode())
            good = True
        except InvalidSignature:
            raise Fail("checkpoint signature does not verify")
    if not good:
        raise Fail("no signature by the log key on the checkpoint")
    return origin, size, root


# ---- tlog-tiles -----------------------------------------------------------

def encode_index(n):
    s = "%d" % n
    s = "0" * (-len(s) % 3) + s
    groups = [s[i:i + 3] for i in range(0, len(s), 3)]
    return "/".join(["x" + g for g in groups[:-1]] + [groups[-1]])


def tile_path(level, n, width=256):
    lv = "entries" if level is None else str(level)
    return "tile/%s/%s%s" % (lv, encode_index(n), "" if width == 256 else ".p/%d" % width)


def expected_files(size):
    """The tiles a tree of `size` has (the spec: floor(s / 256**l) mod 256 at
    level l for the partial tile, no empty tile)."""
    out = set()
    level = 0
    while size >> (8 * level):
        nodes = size >> (8 * level)
        for n in range(nodes // 256):
            out.add(tile_path(level, n))
            if level == 0:
                out.add(tile_path(None, n))
        if nodes % 256:
            out.add(tile_path(level, nodes // 256, nodes % 256))
            if level == 0:
                out.add(tile_path(None, nodes // 256, nodes % 256))
        level += 1
    return out


class Client:
    """A tlog-tiles client that fetches from a directory (as from a static
    HTTP server) and trusts nothing but the public key."""

    def __init__(self, root_dir, pubkey_path):
        self.dir = root_dir
        with open(pubkey_path, "rb") as f:
            self.pub = serialization.load_pem_public_key(f.read())
        self.origin, self.size, self.root = read_checkpoint(self.fetch("checkpoint"), self.pub)
        self.tiles = {}

    def fetch(self, path):
        with open(os.path.join(self.dir, path), "rb") as f:
            return f.read()

    def tile(self, level, n):
        """The hashes of tile n at `level` for this checkpoint (full, or the
        partial width the checkpoint size implies)."""
        key = (level, n)
        if key not in self.tiles:
            nodes = self.size >> (8 * level)
            width = 256 if n < nodes // 256 else nodes % 256
            if width == 0 or n > nodes // 256:
                raise Fail("tile %d/%d is not in a tree of %d" % (level, n, self.size))
            data = self.fetch(tile_path(level, n, width))
            if len(data) != 32 * width:
                raise Fail("tile %s is %d bytes, not %d" % (tile_path(level, n, width), len(data), 32 * width))
            self.tiles[key] = [data[i:i + 32] for i in range(0, len(data), 32)]
        return self.tiles[key]

    def bundle(self, n, width):
        data, out, i = self.fetch(tile_path(None, n, width)), [], 0
        while i < len(data):
            if i + 2 > len(data):
                raise Fail("bundle %d: truncated length" % n)
            ln = int.from_bytes(data[i:i + 2], "big")
            if i + 2 + ln > len(data):
                raise Fail("bundle %d: truncated entry" % n)
            out.append(data[i + 2:i + 2 + ln])
            i += 2 + ln
        if len(out) != width:
            raise Fail("bundle %d holds %d entries, not %d" % (n, len(out), width))
        return out

    def node(self, height, k):
        """The hash of the complete subtree of height `height` (2**height
        leaves) with index k, from the tiles: a tile hash when height is a
        multiple of 8, else hashed up inside the tile that holds its leaves."""
        level, rest = divmod(height, 8)
        t = self.tile(level, (k << rest) // 256)
        first = (k << rest) % 256
        return mth(t[first:first + (1 << rest)])

    def subtree(self, lo, hi):
        """MTH(D[lo:hi]) from the tiles (RFC 6962's recursion; aligned
        power-of-two ranges come from node())."""
        n = hi - lo
        if n & (n - 1) == 0 and lo % n == 0:
            return self.node(n.bit_length() - 1, lo // n)
        k = split(n)
        return node_hash(self.subtree(lo, lo + k), self.subtree(lo + k, hi))

    def inclusion(self, index):
        """PATH(index, D[0:size]) built from tiles."""
        def path(m, lo, hi):
            n = hi - lo
            if n <= 1:
                return []
            k = split(n)
            if m < k:
                return path(m, lo, lo + k) + [self.subtree(lo + k, hi)]
            return path(m - k, lo + k, hi) + [self.subtree(lo, lo + k)]
        return path(index, 0, self.size)

    def check(self, proof_leaves):
        s = self.size
        leaves, entries = [], []
        for n in range((s + 255) // 256):
            width = 256 if n < s // 256 else s % 256
            leaves += self.tile(0, n)
            entries += self.bundle(n, width)
        if len(leaves) != s:
            raise Fail("level 0 has %d hashes for a tree of %d" % (len(leaves), s))
        if mth(leaves) != self.root:
            raise Fail("the root of the level-0 tiles is not the checkpoint's")
        if mth([leaf_hash(e) for e in entries]) != self.root:
            raise Fail("the root of the entry bundles is not the checkpoint's")
        for i, e in enumerate(entries):
            if leaf_hash(e) != leaves[i]:
                raise Fail("entry %d does not hash to its level-0 tile hash" % i)
        # each level-L hash is the tree hash of the full tile below it
        level = 1
        while s >> (8 * level):
            nodes = s >> (8 * level)
            for n in range((nodes + 255) // 256):
                for i, h in enumerate(self.tile(level, n)):
                    if h != mth(self.tile(level - 1, n * 256 + i)):
                        raise Fail("tile %d/%d hash %d is not the hash of the tile below" % (level, n, i))
            level += 1
        if self.subtree(0, s) != self.root:
            raise Fail("the root from the highest tiles is not the checkpoint's")
        for i in proof_leaves:
            proof = self.inclusion(i)
            if not verify_inclusion(i, s, leaf_hash(entries[i]), proof, self.root):
                raise Fail("the inclusion proof of leaf %d from the tiles does not verify" % i)
            if len(proof) > 1 and verify_inclusion(i, s, leaf_hash(entries[i] + b"x"), proof, self.root):
                raise Fail("an inclusion proof verified for a changed entry")
        return entries


# ---- docket ---------------------------------------------------------------

def run(docket, ledger, *args):
    env = dict(os.environ, DOCKET_LEDGER=ledger)
    return subprocess.run([docket] + list(args), env=env, capture_output=True, text=True)


def must(docket, ledger, *args):
    p = run(docket, ledger, *args)
    if p.returncode != 0:
        fail("docket %s: exit %d: %s" % (" ".join(args), p.returncode, p.stderr.strip()))
    return p


def refused(p, code, words, what):
    if p.returncode != code or words not in p.stderr:
        fail("%s: want exit %d and %r, got exit %d: %s%s" % (what, code, words, p.returncode,
                                                           p.stdout, p.stderr))


def events(path, start, count, session="s1", big=0, word="echo"):
    with open(path, "w") as f:
        if start == 0:
            f.write(json.dumps({"type": "session.opened", "session": session, "runtime": "codex/0.60.1",
                                "platform": "linux", "cwd": "/home/a",
                                "time": "2025-03-14T09:26:50.000Z"}) + "\n")
            count -= 1
        for i in range(start, start + count):
            f.write(json.dumps({"type": "tool.intent", "session": session, "invocation": "c%d" % i,
                                "turn": "t1", "tool": "shell",
                                "args": {"command": [word, "x" * big if big else str(i)]},
                                "recovery": "replay_safe",
                                "decision": {"verdict": "allowed", "source": "policy",
                                             "reasons": ["known_safe"]},
                                "time": "2025-03-14T09:26:53.120Z"}) + "\n")


def grow(docket, ledger, tmp, start, count, key, **kw):
    path = os.path.join(tmp, "ev.jsonl")
    events(path, start, count, **kw)
    must(docket, ledger, "record", path)
    must(docket, ledger, "checkpoint", "--key", key)


def files(d):
    out = set()
    for base, _, names in os.walk(d):
        for name in names:
            out.add(os.path.relpath(os.path.join(base, name), d))
    return out


def check_modes(d):
    for base, dirs, names in os.walk(d):
        for name in dirs + names:
            mode = stat.S_IMODE(os.lstat(os.path.join(base, name)).st_mode)
            want = 0o700 if name in dirs else 0o600
            if mode != want:
                fail("%s has mode %o, not %o" % (os.path.join(base, name), mode, want))


def flipped(src, tmp, path, what, proof_leaves, pub):
    d = os.path.join(tmp, "flip")
    shutil.rmtree(d, ignore_errors=True)
    shutil.copytree(src, d)
    p = os.path.join(d, path)
    data = bytearray(open(p, "rb").read())
    data[len(data) // 2] ^= 0x01
    with open(p, "wb") as f:
        f.write(bytes(data))
    try:
        Client(d, pub).check(proof_leaves)
    except (Fail, ValueError):   # ValueError: a note no longer UTF-8 or base64
        return
    fail("the client accepted the export with a byte of %s flipped" % what)


def main():
    docket = sys.argv[1]
    tmp = tempfile.mkdtemp(prefix="tiles_check.")
    try:
        ledger, key, out = os.path.join(tmp, "ledger"), os.path.join(tmp, "log.key"), os.path.join(tmp, "out")
        pub = key + ".pub"
        must(docket, ledger, "init")
        must(docket, ledger, "keygen", "-o", key)

        # no checkpoint yet: refused, nothing written
        grow_path = os.path.join(tmp, "ev.jsonl")
        events(grow_path, 0, 256)
        must(docket, ledger, "record", grow_path)
        refused(run(docket, ledger, "export", "--format", "tlog-tiles", out), 2,
                "docket checkpoint --key KEY", "no checkpoint")
        if os.path.exists(out) and os.listdir(out):
            fail("an export without a checkpoint wrote %s" % os.listdir(out))

        # the spec's example: a tree of 256 is a full level-0 tile and a
        # partial level-1 tile of width 1
        must(docket, ledger, "checkpoint", "--key", key)
        must(docket, ledger, "export", "--format", "tlog-tiles", out)
        want = {"checkpoint", "tile/0/000", "tile/entries/000", "tile/1/000.p/1"}
        if files(out) != want:
            fail("tree of 256: files %s, want %s" % (sorted(files(out)), sorted(want)))
        c = Client(out, pub)
        if c.size != 256 or not c.origin.startswith("docket.dev/ledger/"):
            fail("checkpoint %s %d" % (c.origin, c.size))
        c.check([0, 1, 128, 255])
        check_modes(out)
        ino = os.stat(os.path.join(out, "tile/0/000"))

        # a copy of the ledger at 256 events, for the fork and rollback below
        copy = os.path.join(tmp, "copy")
        shutil.copytree(ledger, copy)

        # grow to the spec's second example, 70,000: 273 full level-0 tiles,
        # one partial of width 112, a full level-1 tile, a partial level-1
        # tile of width 17 and a partial level-2 tile of width 1
        grow(docket, ledger, tmp, 256, 70000 - 256, key)
        p = must(docket, ledger, "export", "--format", "tlog-tiles", out)
        if "updated" not in p.stdout:
            fail("the second export did not say it updated: %s" % p.stdout)
        want = {"checkpoint", "tile/0/273.p/112", "tile/entries/273.p/112", "tile/1/000",
                "tile/1/001.p/17", "tile/2/000.p/1", "tile/1/000.p/1"}   # the last: from size 256, kept
        want |= {"tile/0/%03d" % n for n in range(273)} | {"tile/entries/%03d" % n for n in range(273)}
        if files(out) != want or expected_files(70000) | {"tile/1/000.p/1", "checkpoint"} != want:
            fail("tree of 70,000: extra %s, missing %s" % (sorted(files(out) - want)[:8],
                                                         sorted(want - files(out))[:8]))
        again = os.stat(os.path.join(out, "tile/0/000"))
        if (again.st_ino, again.st_mtime_ns) != (ino.st_ino, ino.st_mtime_ns):
            fail("the update rewrote the immutable tile tile/0/000")
        c = Client(out, pub)
        if c.size != 70000:
            fail("checkpoint size %d after the update" % c.size)
        leaves = [0, 1, 255, 256, 65535, 65536, 69887, 69888, 69999, 12345]
        c.check(leaves)
        check_modes(out)
        if "up to date" not in must(docket, ledger, "export", "--format", "tlog-tiles", out).stdout:
            fail("a third export with nothing new did not say up to date")
        if encode_index(1234067) != "x001/x234/067":
            fail("the client's own index encoding")

        # the client fails on any flipped byte
        flipped(out, tmp, "tile/0/100", "a level-0 tile", [25600], pub)
        flipped(out, tmp, "tile/0/273.p/112", "the partial level-0 tile", [69900], pub)
        flipped(out, tmp, "tile/1/000", "a level-1 tile", [1000], pub)
        flipped(out, tmp, "tile/entries/042", "an entry bundle", [10752], pub)
        flipped(out, tmp, "checkpoint", "the checkpoint", [0], pub)

        # a directory holding anything else is refused and left alone
        junk = os.path.join(tmp, "junk")
        os.mkdir(junk)
        open(os.path.join(junk, "index.html"), "w").close()
        refused(run(docket, ledger, "export", "--format", "tlog-tiles", junk), 2, "not empty", "other files")
        if os.listdir(junk) != ["index.html"]:
            fail("the refused export wrote into %s" % junk)

        # another ledger's export is refused
        other, okey = os.path.join(tmp, "other"), os.path.join(tmp, "other.key")
        must(docket, other, "init")
        must(docket, other, "keygen", "-o", okey)
        grow(docket, other, tmp, 0, 300, okey, session="o1")
        refused(run(docket, other, "export", "--format", "tlog-tiles", out), 2, "another log",
                "another ledger's export")

        # the copy (same origin) rolled back to 256: refused; grown with other
        # events to the same size it is a fork: refused
        refused(run(docket, copy, "export", "--format", "tlog-tiles", out), 2, "newer", "rollback")
        grow(docket, copy, tmp, 256, 70000 - 256, key, word="printf")
        refused(run(docket, copy, "export", "--format", "tlog-tiles", out), 2, "a fork", "fork")
        Client(out, pub).check([69999])

        # an event larger than an entry may be: refused before anything is written
        big, bigdir = os.path.join(tmp, "big"), os.path.join(tmp, "bigout")
        must(docket, big, "init")
        events(grow_path, 0, 3, big=70000)
        must(docket, big, "record", grow_path)
        must(docket, big, "checkpoint", "--key", key)
        refused(run(docket, big, "export", "--format", "tlog-tiles", bigdir), 2, "65535 bytes", "big event")
        if os.listdir(bigdir):
            fail("the refused big-event export wrote %s" % os.listdir(bigdir))

        # flags that would change the leaves do not apply
        refused(run(docket, ledger, "export", "--format", "tlog-tiles", "--redact", out), 2,
                "do not apply", "--redact")
        refused(run(docket, ledger, "export", "--format", "tlog-tiles"), 2, "needs the directory", "no DIR")
    finally:
        shutil.rmtree(tmp)
    print("tiles_check: ok")


if __name__ == "__main__":
    main()
