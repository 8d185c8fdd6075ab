#!/usr/bin/env python3
"""Executed SASS instructions per site update by kind, from Nsight Compute's source page.

    ncu ... -o rep --import-source yes --set full <program>
    ncu -i rep.ncu-rep --page source --csv --print-source sass > sass.csv
    sass_categories.py sass.csv UPDATES

UPDATES is the number of site updates the profiled launch made (one colour of 256^3: 8388608).
Counts are warp instructions x 32 / UPDATES, as the bench README's tables count them (lanes that
are predicated off count too). Philox4x32-10's rounds are recognised by their multipliers
(0xD2511F53, 0xCD9E8D57, shown as -0x2daee0ad and -0x326172a9) and its three-way XORs.
"""
import csv
import gzip
import re
import sys


def kind(source):
    op = re.sub(r"^@!?U?P\w+\s+", "", source).split(" ")[0]
    if "0x2daee0ad" in source or "0x326172a9" in source:
        return "Philox multiplies"
    if op.startswith("LOP3") and (", 0x96" in source or ", 0x3c" in source):
        return "Philox XORs (and other XORs)"
    if re.match(r"(LDG|STG|LD|ST)(\.|$)", op):  # LD/ST: generic addresses (opaque_pointer)
        return "global loads and stores"
    if op.startswith("MUFU"):
        return "special functions (MUFU)"
    if op.startswith(("F", "HFMA2")):
        return "floating point"
    if op.startswith(("BRA", "BSSY", "BSYNC", "EXIT", "WARPSYNC")):
        return "branches and reconvergence"
    if op.startswith("U"):
        return "uniform datapath"
    return "integer and other"


def main():
    path, updates = sys.argv[1], int(sys.argv[2])
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        rows = list(csv.reader(f))
    header = rows[1]
    source, executed = header.index("Source"), header.index("Instructions Executed")
    totals = {}
    for row in rows[2:]:
        try:
            n = int(row[executed])
        except (ValueError, IndexError):
            continue
        k = kind(row[source].strip())
        totals[k] = totals.get(k, 0) + n
    print(f"{path}: {sum(totals.values()) * 32 / updates:.1f} instructions per update")
    for k, n in sorted(totals.items(), key=lambda item: -item[1]):
        print(f"  {k:32s} {n * 32 / updates:7.1f}")


if __name__ == "__main__":
    main()
