# SPDX-License-Identifier: Apache-2.0
"""note_check: docket's signed notes and cosignatures against an independent
implementation of C2SP signed-note, tlog-checkpoint and tlog-cosignature/v1
(python3-cryptography and hashlib, written from the spec text).

    note_check.py DOCKET SOURCE_ROOT

Docket to Python: `docket checkpoint -o` writes a note; here its text is
parsed, the key ID recomputed as SHA-256(name || 0x0A || 0x01 || raw key)[:4]
and the Ed25519 signature verified with the PEM public key docket wrote.
`docket witness --key` co-signs; here the cosignature's key ID (type 0x04)
and its signature over "cosignature/v1\\ntime <t>\\n" || text are verified.

Python to docket: a log key made here signs a checkpoint note; `docket
witness --pubkey` must accept it (trust on first use) and refuse the same
note signed by another key, with a changed byte, or with the key ID of
another key. Exit 0 when all holds, 1 with the first difference.
"""
import base64
import hashlib
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

EM = "\u2014"


def fail(msg):
    print("note_check: FAIL: " + msg)
    sys.exit(1)


def raw_public(pub):
    return pub.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def key_id(name, sig_type, pub):
    return hashlib.sha256(name.encode() + b"\n" + bytes([sig_type]) + raw_public(pub)).digest()[:4]


def split_note(data):
    """(text, [(name, raw signature bytes)]) of a signed note, strictly."""
    s = data.decode("utf-8")
    cut = s.rfind("\n\n")
    if cut < 0 or not s.endswith("\n"):
        fail("not a signed note: %r" % s[:80])
    text, sigs = s[:cut + 1], s[cut + 2:]
    out = []
    for line in sigs.splitlines():
        if not line.startswith(EM + " "):
            fail("bad signature line %r" % line)
        name, b64 = line[2:].split(" ")
        out.append((name, base64.b64decode(b64, validate=True)))
    return text, out


def load_pub(path):
    with open(path, "rb") as f:
        return serialization.load_pem_public_key(f.read())


def run(docket, ledger, *args, check=True):
    env = dict(os.environ, DOCKET_LEDGER=ledger)
    p = subprocess.run([docket] + list(args), env=env, capture_output=True, text=True)
    if check and p.returncode != 0:
        fail("docket %s: exit %d: %s" % (" ".join(args), p.returncode, p.stderr.strip()))
    return p


def docket_to_python(docket, root, tmp):
    ledger = os.path.join(tmp, "ledger")
    run(docket, ledger, "init")
    run(docket, ledger, "record", os.path.join(root, "fixtures", "sessions", "demo-basic.jsonl"))
    key = os.path.join(tmp, "log.key")
    wkey = os.path.join(tmp, "witness.key")
    run(docket, ledger, "keygen", "-o", key)
    run(docket, ledger, "keygen", "-o", wkey)
    note = os.path.join(tmp, "cp.note")
    run(docket, ledger, "checkpoint", "--key", key, "-o", note)
    with open(note, "rb") as f:
        text, sigs = split_note(f.read())
    lines = text.split("\n")
    ledger_id = run(docket, ledger, "stats", "--json").stdout
    origin, size, root_b64 = lines[0], lines[1], lines[2]
    if not origin.startswith("docket.dev/ledger/") or origin[18:] not in ledger_id:
        fail("origin %r does not name the ledger" % origin)
    if size != "24" or len(base64.b64decode(root_b64, validate=True)) != 32 or lines[3:] != [""]:
        fail("checkpoint body %r" % text)
    pub = load_pub(key + ".pub")
    if len(sigs) != 1 or sigs[0][0] != origin:
        fail("the log's signature line must be by the origin: %r" % sigs)
    raw = sigs[0][1]
    if len(raw) != 68 or raw[:4] != key_id(origin, 0x01, pub):
        fail("key ID %s, want %s" % (raw[:4].hex(), key_id(origin, 0x01, pub).hex()))
    try:
        pub.verify(raw[4:], text.encode())
    except InvalidSignature:
        fail("docket's note signature does not verify in Python")
    try:
        pub.verify(raw[4:], text.replace("24", "25", 1).encode())
        fail("a changed note verified")
    except InvalidSignature:
        pass

    before = int(time.time())
    out = run(docket, ledger, "witness", "--state", os.path.join(tmp, "state"), "--pubkey",
              key + ".pub", "--key", wkey, "--name", "witness.example/w1", note).stdout
    text2, sigs2 = split_note(out.encode())
    if text2 != text or len(sigs2) != 2 or sigs2[1][0] != "witness.example/w1":
        fail("co-signed note %r" % out)
    wpub = load_pub(wkey + ".pub")
    raw = sigs2[1][1]
    if len(raw) != 4 + 8 + 64 or raw[:4] != key_id("witness.example/w1", 0x04, wpub):
        fail("cosignature key ID %s" % raw[:4].hex())
    (ts,) = struct.unpack(">Q", raw[4:12])
    if not before <= ts <= int(time.time()) + 1:
        fail("cosignature time %d" % ts)
    msg = ("cosignature/v1\ntime %d\n" % ts + text).encode()
    try:
        wpub.verify(raw[12:], msg)
    except InvalidSignature:
        fail("docket's cosignature does not verify in Python")
    return origin


def sign_note(priv, name, text, kid=None):
    pub = priv.public_key()
    kid = key_id(name, 0x01, pub) if kid is None else kid
    sig = base64.b64encode(kid + priv.sign(text.encode())).decode()
    return "%s\n%s %s %s\n" % (text, EM, name, sig)


def write_pem(path, priv):
    with open(path, "wb") as f:
        f.write(priv.public_key().public_bytes(serialization.Encoding.PEM,
                                               serialization.PublicFormat.SubjectPublicKeyInfo))


def python_to_docket(docket, tmp):
    log, other = Ed25519PrivateKey.generate(), Ed25519PrivateKey.generate()
    pub = os.path.join(tmp, "py-log.pub")
    write_pem(pub, log)
    origin = "example.com/python-log"
    text = "%s\n7\n%s\n" % (origin, base64.b64encode(hashlib.sha256(b"root").digest()).decode())

    def witness(note_text, state):
        path = os.path.join(tmp, "py.note")
        with open(path, "w", encoding="utf-8") as f:
            f.write(note_text)
        return run(docket, os.path.join(tmp, "unused"), "witness", "--state",
                   os.path.join(tmp, state), "--pubkey", pub, path, check=False)

    p = witness(sign_note(log, origin, text), "s1")
    if p.returncode != 0 or "trusted on first use" not in p.stderr:
        fail("docket refused a note Python signed: %s" % p.stderr.strip())
    bad = {
        "another key": sign_note(other, origin, text),
        "a changed byte": sign_note(log, origin, text).replace("\n7\n", "\n8\n"),
        "another key's ID": sign_note(log, origin, text, key_id(origin, 0x01, other.public_key())),
        "another key name": sign_note(log, "example.com/other", text),
    }
    for what, note_text in bad.items():
        p = witness(note_text, "s2")
        if p.returncode != 1 or "refused" not in p.stderr:
            fail("docket accepted a note with %s (exit %d): %s" % (what, p.returncode, p.stderr))


def main():
    docket, root = sys.argv[1], sys.argv[2]
    tmp = tempfile.mkdtemp(prefix="note_check.")
    try:
        docket_to_python(docket, root, tmp)
        python_to_docket(docket, tmp)
    finally:
        shutil.rmtree(tmp)
    print("note_check: ok")


if __name__ == "__main__":
    main()
