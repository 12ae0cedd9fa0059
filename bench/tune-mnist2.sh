#!/usr/bin/env bash
# Hyperparameter search for double-sided CPM on MNIST-2, following the
# protocol of Kantchelian et al. (NIPS 2014), section 5.1: fix the budget
# (K, T), hold out a validation subset of the training set (the last 10,000
# rows), pick lambda = 1/(C*T) over C in {1, 0.1, 0.01} with h = 0, then h in
# {0, ln(K/10), ln(2K/10), ..., ln(9K/10)} (the paper's "log K/10, ...,
# log 9K/10"; targets <= 0 skipped, as cpm bench cpm-table --tune does);
# the test set is never looked at here.
# Prints one line per setting: validation error %, then the flags.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/tune-lib.sh
tune_setup mnist2 data/mnist2.train.libsvm.zst
K=${K:-40}
T=${T:-32000000}
val() { # flags... -> validation error %
  $CPM train -q -t "$TR" -c "$VA" -k "$K" -i "$T" --double-sided --seed 1 "$@" \
    --json bench/out/tune/last.json >/dev/null
  python3 -c "import json; print(round(100*json.load(open('bench/out/tune/last.json'))['test_error'], 3))"
}
best_c=1; best=100
for c in 1 0.1 0.01; do
  e=$(val -C "$c"); echo "$e  -k $K -i $T -C $c --entropy 0"
  if is_less "$e" "$best"; then best=$e; best_c=$c; fi
done
best_h=0
for h in $(hgrid "$K"); do
  e=$(val -C "$best_c" --entropy "$h"); echo "$e  -k $K -i $T -C $best_c --entropy $h"
  if is_less "$e" "$best"; then best=$e; best_h=$h; fi
done
echo "best: -k $K -i $T -C $best_c --entropy $best_h (validation error $best%)"
