# SPDX-License-Identifier: Apache-2.0
"""abi_exports: libdocket.so exports exactly the functions include/docket/ declares.

    abi_exports.py NM LIBDOCKET_SO INCLUDE_DIR [STATIC_ARCHIVE]

Both ways: every declared function must be in the dynamic symbol table
(else: its declaration lacks DOCKET_EXTERN, or nothing defines it), and
every exported symbol must be declared in a public header (else: an
internal function leaks into the ABI). Each failure names the symbol. And
every public header is included by the umbrella docket/docket.h.
"""
import os
import re
import subprocess
import sys

from public_api import declarations

# symbols the linker itself defines in every shared object
LINKER = {"_init", "_fini", "_edata", "_end", "__bss_start"}


def symbols(nm, path, dynamic):
    args = [nm, "--defined-only"] + (["-D"] if dynamic else []) + [path]
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    names = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "TDBRVWGSi" and parts[2] not in LINKER:
            names.add(parts[2].split("@")[0])
    return names


def main():
    nm, so, include_dir = sys.argv[1:4]
    archive = sys.argv[4] if len(sys.argv) > 4 else None
    decls = declarations(include_dir)
    declared = {fn: h for h, fn, _ in decls}
    exported = symbols(nm, so, True)
    defined = symbols(nm, archive, False) if archive else None
    problems = []
    for h, fn, marked in decls:
        if not marked:
            problems.append(f"include/docket/{h}: {fn} is declared without DOCKET_EXTERN "
                            f"(a public function needs the marker; see docs/api.md)")
        elif fn not in exported:
            if defined is not None and fn not in defined:
                problems.append(f"include/docket/{h}: {fn} is declared but nothing in "
                                f"libdocket defines it")
            else:
                problems.append(f"include/docket/{h}: {fn} is not exported by {so}: does the "
                                f".c file that defines it include the header?")
    with open(os.path.join(include_dir, "docket.h"), encoding="utf-8") as f:
        umbrella = set(re.findall(r'#include "docket/([\w.]+\.h)"', f.read()))
    for h in sorted(os.listdir(include_dir)):
        if h.endswith(".h") and h != "docket.h" and h not in umbrella:
            problems.append(f"include/docket/{h} is not included by the umbrella docket/docket.h")
    for sym in sorted(exported - set(declared)):
        problems.append(f"{so} exports {sym}, which no include/docket/*.h declares: make it "
                        f"static or drop DOCKET_EXTERN (internal functions stay hidden)")
    for p in problems:
        print("abi_exports: FAIL: " + p, file=sys.stderr)
    if problems:
        return 1
    print(f"abi_exports: ok: {len(declared)} declared functions, {len(exported)} exported symbols")
    return 0


if __name__ == "__main__":
    sys.exit(main())
