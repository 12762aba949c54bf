# SPDX-License-Identifier: Apache-2.0
"""RFC 6962 hashing for the Python tests that check docket independently.

Written from the RFC alone (hashlib only), shared by tests/unit/tlog_check.py
and tests/cli/tiles_check.py so both check docket against one reference.
"""
import hashlib


def leaf_hash(data):
    return hashlib.sha256(b"\x00" + data).digest()


def node_hash(left, right):
    return hashlib.sha256(b"\x01" + left + right).digest()


def split(n):
    """The largest power of two smaller than n (RFC 9162 2.1.1)."""
    k = 1
    while k * 2 < n:
        k *= 2
    return k
