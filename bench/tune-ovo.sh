#!/usr/bin/env bash
# Validation search for one-vs-one CPM on MNIST (10 classes), following
# section 5.1 of Kantchelian et al. (NIPS 2014) as bench/tune-mnist2.sh does
# for MNIST-2: the budget is fixed (K, T), the first 50,000 training rows
# train and the last 10,000 validate; h = 0 and lambda over LAMBDAS, then h
# in {0, ln(K/10), ln(2K/10), ..., ln(9K/10)} at the best lambda (targets
# <= 0 skipped; ties go to the earlier point, h = 0 first). Both stages are
# one cpm tune each; the test set is never looked at here. Prints each
# stage's table (validation error % per point) and the choice. Each setting
# trains 45 double-sided pair machines (about 25 s at K=20, T=1M on 2 cores).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/tune-lib.sh
tune_setup mnist10 data/mnist10.train.libsvm.zst
K=${K:-20}
T=${T:-1000000}
LAMBDAS=${LAMBDAS:-"1e-5 1e-4 3e-4"}
J=bench/out/tune/ovo
flags=(--ovo --double-sided -k "$K" -i "$T")
tune_grid "$J-l.json" "lambda=$(echo $LAMBDAS | tr ' ' ,) entropy=0" "${flags[@]}"
best_l=$(chosen "$J-l.json" lambda)
tune_grid "$J-h.json" "lambda=$best_l entropy=0,$(hgrid "$K" | tr ' ' ,)" "${flags[@]}"
best_h=$(chosen "$J-h.json" entropy)
best=$(python3 -c "import json; m = json.load(open('$J-h.json')); print(round(m['points'][m['chosen'] - 1]['error_mean'], 3))")
echo "best: -k $K -i $T --lambda $best_l --entropy $best_h (validation error $best%)"
