#!/usr/bin/env bash
# Hyperparameter search for double-sided CPM on MNIST-2, following the
# protocol of Kantchelian et al. (NIPS 2014), section 5.1: fix the budget
# (K, T), hold out a validation subset of the training set (the last 10,000
# rows), pick lambda = 1/(C*T) over C in {1, 0.1, 0.01} with h = 0, then h in
# {0, ln(K/10), ln(2K/10), ..., ln(9K/10)} (the paper's "log K/10, ...,
# log 9K/10"; targets <= 0 skipped, as cpm bench cpm-table --tune does) at
# the best C; ties go to the earlier point (h = 0 first). Both stages are one
# cpm tune each; the test set is never looked at here.
# Prints each stage's table (validation error % per point) and the choice.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/tune-lib.sh
tune_setup mnist2 data/mnist2.train.libsvm.zst
K=${K:-40}
T=${T:-32000000}
J=bench/out/tune/mnist2
flags=(-k "$K" -i "$T" --double-sided)
tune_grid "$J-c.json" "C=1,0.1,0.01 entropy=0" "${flags[@]}"
best_c=$(chosen "$J-c.json" C)
tune_grid "$J-h.json" "C=$best_c entropy=0,$(hgrid "$K" | tr ' ' ,)" "${flags[@]}"
best_h=$(chosen "$J-h.json" entropy)
best=$(python3 -c "import json; m = json.load(open('$J-h.json')); print(round(m['points'][m['chosen'] - 1]['error_mean'], 3))")
echo "best: -k $K -i $T -C $best_c --entropy $best_h (validation error $best%)"
