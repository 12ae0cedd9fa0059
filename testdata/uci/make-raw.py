#!/usr/bin/python3
"""Writes pima.libsvm and german.libsvm (raw values) from Debian's R packages.

Usage (Debian bookworm; needs python3-rdata and python3-pandas, no R):

    apt-get download r-cran-mlbench r-cran-caret
    dpkg -x r-cran-mlbench_2.1-3-1_amd64.deb mlbench
    dpkg -x r-cran-caret_6.0-93+dfsg-1_amd64.deb caret
    testdata/uci/make-raw.py mlbench caret testdata/uci

pima.libsvm: mlbench's PimaIndiansDiabetes (768 x 9), the 8 attributes in
their column order as indices 1..8, values as stored (zeros, which stand for
missing values in 5 of the columns, are kept as 0 and so omitted); label
diabetes: pos = +1, neg = -1.

german.libsvm: caret's GermanCredit (1000 x 62), the 61 columns other than
Class in their column order as indices 1..61: 7 integer attributes (Duration,
Amount, ...), Telephone and ForeignWorker (0/1), and caret's one-hot
(dummy) columns of the categorical attributes, as caret ships them; label
Class: Bad = +1, Good = -1.

Rows in the source order; zero values omitted; a value is written as an
integer when it is one, otherwise as Python's shortest repr of the float64.
"""
import hashlib
import os
import sys

import rdata


def load(path, name):
    conv = rdata.conversion.convert(rdata.parser.parse_file(path))
    return conv[name]


def fmt(v):
    if v == int(v):
        return str(int(v))
    return repr(float(v))


def write(df, label_col, positive, out):
    cols = [c for c in df.columns if c != label_col]
    lines = []
    for _, row in df.iterrows():
        y = "+1" if row[label_col] == positive else "-1"
        feats = [f"{j}:{fmt(row[c])}" for j, c in enumerate(cols, 1) if row[c] != 0]
        lines.append(" ".join([y] + feats) + "\n")
    data = "".join(lines).encode()
    with open(out, "wb") as f:
        f.write(data)
    print(out, len(lines), "rows", len(cols), "features", "sha256", hashlib.sha256(data).hexdigest()[:16])
    for j, c in enumerate(cols, 1):
        print(f"  {j}: {c}")


def main():
    mlbench, caret, outdir = sys.argv[1:4]
    for p in (os.path.join(mlbench, "usr/lib/R/site-library/mlbench/data/PimaIndiansDiabetes.rda"),
              os.path.join(caret, "usr/lib/R/site-library/caret/data/GermanCredit.RData")):
        print(p, "sha256", hashlib.sha256(open(p, "rb").read()).hexdigest()[:16])
    pima = load(os.path.join(mlbench, "usr/lib/R/site-library/mlbench/data/PimaIndiansDiabetes.rda"), "PimaIndiansDiabetes")
    write(pima, "diabetes", "pos", os.path.join(outdir, "pima.libsvm"))
    german = load(os.path.join(caret, "usr/lib/R/site-library/caret/data/GermanCredit.RData"), "GermanCredit")
    write(german, "Class", "Bad", os.path.join(outdir, "german.libsvm"))


if __name__ == "__main__":
    main()
