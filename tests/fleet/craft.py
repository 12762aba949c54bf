# SPDX-License-Identifier: Apache-2.0
# craft.py: batches made by hand for the fleet tests, independent of the
# code under test: a docket.v1.Event encoded here from schema/docket.proto
# (protobuf wire format), its chain hash (hashlib), and the row of
# docket_batch_row the ingest function reads, with the columns and the
# event JSON written here as DESIGN/docs/fleet.md say they must be. Rows are
# written as the text format of COPY (psql's \copy).
import hashlib
import json


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def field(num, payload):
    """A length-delimited field (wire type 2)."""
    return varint(num << 3 | 2) + varint(len(payload)) + payload


def session_closed(time, session, reason=""):
    """Event{time: 1, session: 3, session_closed: 24 {reason: 1}}."""
    body = field(1, reason.encode()) if reason else b""
    return field(1, time.encode()) + field(3, session.encode()) + field(24, body)


def event_json(seq, time, session, h, reason=""):
    """What `docket log --json` prints for session_closed(...)."""
    ev = {"seq": seq, "type": "session.closed", "time": time, "epoch": 0, "session": session}
    if reason:
        ev["reason"] = reason
    ev["hash"] = h.hex()
    return ev


def chain(rows, h=bytes(32)):
    """[(seq, payload)] -> [(seq, payload, hash)], hashes chained from h."""
    out = []
    for seq, payload in rows:
        h = hashlib.sha256(h + seq.to_bytes(8, "big") + payload).digest()
        out.append((seq, payload, h))
    return out


def tsv_field(v):
    if v is None:
        return "\\N"
    if isinstance(v, bytes):
        return "\\\\x" + v.hex()
    if isinstance(v, (dict, list)):
        v = json.dumps(v, separators=(",", ":"))
    return str(v).replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")


def row(seq, time, type_, session, invocation, tool, verdict, status, actor, revision, event, payload, h):
    return "\t".join(tsv_field(v) for v in (seq, time, type_, session, invocation, tool, verdict, status,
                                            actor, revision, event, payload, h)) + "\n"


def closed_rows(events, start=bytes(32)):
    """[(seq, time, session)] -> rows of genuine session.closed events
    (payload, hash, columns and event JSON all agreeing)."""
    out = []
    h = start
    for seq, time, session in events:
        payload = session_closed(time, session)
        h = hashlib.sha256(h + seq.to_bytes(8, "big") + payload).digest()
        out.append(dict(seq=seq, time=time, type="session.closed", session=session, payload=payload, hash=h,
                        event=event_json(seq, time, session, h)))
    return out


def write_rows(name, rows):
    with open(name, "w") as f:
        for r in rows:
            f.write(row(r["seq"], r["time"], r["type"], r["session"], r.get("invocation"), r.get("tool"),
                        r.get("verdict"), r.get("status"), r.get("actor"), r.get("policy_revision"),
                        r["event"], r["payload"], r["hash"]))
