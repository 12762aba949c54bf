# SPDX-License-Identifier: Apache-2.0
"""tlog_check: docket's Merkle tree against an independent RFC 6962 / 9162
implementation (python3 + hashlib only, written from the RFC text).

    tlog_check.py TLOG_PROBE

Builds a ledger of ~1,500 events (tlog_probe build), reads the stored event
bytes back (the leaves), computes here every root for sizes 1..N, inclusion
proofs and consistency proofs, and checks docket's (tlog_probe query). Then
feeds this implementation's proofs to docket's verifiers: each must be
accepted, and refused with any one bit flipped, a hash dropped or added, or
the wrong leaf. Exit 0 when all holds, 1 with the first difference.
"""
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from rfc6962 import leaf_hash, node_hash, split  # noqa: E402

EVENTS = 1500


class Tree:
    def __init__(self, leaves):
        self.leaves = [leaf_hash(x) for x in leaves]
        self.memo = {}

    def mth(self, lo, hi):
        n = hi - lo
        if n == 0:
            return hashlib.sha256(b"").digest()
        if n == 1:
            return self.leaves[lo]
        key = (lo, hi)
        if key not in self.memo:
            k = split(n)
            self.memo[key] = node_hash(self.mth(lo, lo + k), self.mth(lo + k, hi))
        return self.memo[key]

    def path(self, m, lo, hi):
        n = hi - lo
        if n <= 1:
            return []
        k = split(n)
        if m < k:
            return self.path(m, lo, lo + k) + [self.mth(lo + k, hi)]
        return self.path(m - k, lo + k, hi) + [self.mth(lo, lo + k)]

    def subproof(self, m, lo, hi, b):
        n = hi - lo
        if m == n:
            return [] if b else [self.mth(lo, hi)]
        k = split(n)
        if m <= k:
            return self.subproof(m, lo, lo + k, b) + [self.mth(lo + k, hi)]
        return self.subproof(m - k, lo + k, hi, False) + [self.mth(lo, lo + k)]


class Probe:
    def __init__(self, exe, ledger):
        self.p = subprocess.Popen([exe, "query", ledger], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True)

    def ask(self, line):
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()
        out = self.p.stdout.readline()
        if not out:
            raise SystemExit(f"tlog_probe died on: {line}")
        return out.rstrip("\n")

    def hashes(self, line):
        return [bytes.fromhex(h) for h in self.ask(line).split()]


def flip(h, bit):
    b = bytearray(h)
    b[bit // 8] ^= 1 << (bit % 8)
    return bytes(b)


def hexes(hs):
    return " ".join(h.hex() for h in hs)


def check_verifier(probe, kind, a, b, x, y, proof):
    """kind vincl (a index, b size, x leaf, y root) or vcons (sizes, roots)."""
    good = probe.ask(f"{kind} {a} {b} {x.hex()} {y.hex()} {hexes(proof)}")
    if good != "ok":
        raise SystemExit(f"{kind} {a} {b}: docket refuses a correct proof: {good}")
    spoiled = []
    for i in range(len(proof)):
        for bit in (0, 77, 255):
            bad = list(proof)
            bad[i] = flip(bad[i], bit)
            spoiled.append(bad)
    if proof:
        spoiled.append(proof[:-1])
    spoiled.append(proof + [bytes(32)])
    for bad in spoiled:
        if probe.ask(f"{kind} {a} {b} {x.hex()} {y.hex()} {hexes(bad)}") == "ok":
            raise SystemExit(f"{kind} {a} {b}: docket accepts a spoiled proof")
    if probe.ask(f"{kind} {a} {b} {flip(x, 3).hex()} {y.hex()} {hexes(proof)}") == "ok":
        raise SystemExit(f"{kind} {a} {b}: docket accepts a proof for another leaf/root")


# The Certificate Transparency reference tree: this implementation must
# agree with the published roots before it may judge docket's.
CT_LEAVES = ["", "00", "10", "2021", "3031", "40414243", "5051525354555657",
             "606162636465666768696a6b6c6d6e6f"]
CT_ROOT8 = "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328"
CT_ROOT3 = "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77"


def self_check():
    t = Tree([bytes.fromhex(x) for x in CT_LEAVES])
    assert t.mth(0, 8).hex() == CT_ROOT8
    assert t.mth(0, 3).hex() == CT_ROOT3
    assert t.path(5, 0, 8)[0].hex().startswith("bc1a0643")
    assert t.subproof(6, 0, 8, True)[0].hex().startswith("0ebc5d34")


def main():
    self_check()
    exe = sys.argv[1]
    tmp = tempfile.mkdtemp(prefix="tlog-check-")
    try:
        subprocess.run([exe, "build", tmp, str(EVENTS)], check=True)
        probe = Probe(exe, tmp)
        leaves = [bytes.fromhex(x) for x in probe.ask("leaves").split()]
        n = len(leaves)
        assert n >= EVENTS, n
        tree = Tree(leaves)
        checked = 0
        for size in range(1, n + 1):
            want = tree.mth(0, size)
            got = bytes.fromhex(probe.ask(f"root {size}"))
            if got != want:
                raise SystemExit(f"root of size {size}: docket {got.hex()}, RFC 6962 {want.hex()}")
            checked += 1
        sizes = [1, 2, 3, 7, 8, 255, 256, 257, 300, 511, 512, 513, 1000, 1024, 1025, n - 1, n]
        for size in sizes:
            root = tree.mth(0, size)
            for seq in sorted(s for s in {1, 2, size // 3 + 1, size // 2 + 1, size - 1, size} if 1 <= s <= size):
                want = tree.path(seq - 1, 0, size)
                got = probe.hashes(f"incl {seq} {size}")
                if got != want:
                    raise SystemExit(f"inclusion of {seq} in {size} differs")
                check_verifier(probe, "vincl", seq - 1, size, tree.leaves[seq - 1], root, want)
                checked += 1
            for m in sorted(s for s in {1, 2, size // 2, size - 1, size} if 1 <= s <= size):
                want = tree.subproof(m, 0, size, True) if m < size else []
                got = probe.hashes(f"cons {m} {size}")
                if got != want:
                    raise SystemExit(f"consistency {m} -> {size} differs")
                if m < size:
                    check_verifier(probe, "vcons", m, size, tree.mth(0, m), root, want)
                checked += 1
        probe.p.stdin.close()
        if probe.p.wait() != 0:
            raise SystemExit("tlog_probe failed")
        print(f"tlog_check: {n} leaves, {checked} roots and proofs agree with RFC 6962")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
