#!/usr/bin/env bash
# Validation search for one-vs-one CPM on MNIST (10 classes), following
# section 5.1 of Kantchelian et al. (NIPS 2014) as bench/tune-mnist2.sh does
# for MNIST-2: the budget is fixed (K, T), the first 50,000 training rows
# train and the last 10,000 validate; h = 0 and lambda over LAMBDAS, then h
# in {ln(K/10), ln(2K/10), ..., ln(9K/10)} at the best lambda (targets <= 0
# skipped). The test set is never looked at here. One line per setting:
# validation error %, then the flags. Each setting trains 45 double-sided
# pair machines (about 25 s at K=20, T=1M on 2 cores).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/tune-lib.sh
tune_setup mnist10 data/mnist10.train.libsvm.zst
K=${K:-20}
T=${T:-1000000}
LAMBDAS=${LAMBDAS:-"1e-5 1e-4 3e-4"}
val() { # flags... -> validation error %
  $CPM train -q --ovo --double-sided -t "$TR" -c "$VA" -k "$K" -i "$T" --seed 1 "$@" \
    --json bench/out/tune/ovo-last.json >/dev/null
  python3 -c "import json; print(round(100*json.load(open('bench/out/tune/ovo-last.json'))['test_error'], 3))"
}
best_l=; best=100
for l in $LAMBDAS; do
  e=$(val --lambda "$l"); echo "$e  -k $K -i $T --lambda $l --entropy 0"
  if is_less "$e" "$best"; then best=$e; best_l=$l; fi
done
best_h=0
for h in $(hgrid "$K"); do
  e=$(val --lambda "$best_l" --entropy "$h"); echo "$e  -k $K -i $T --lambda $best_l --entropy $h"
  if is_less "$e" "$best"; then best=$e; best_h=$h; fi
done
echo "best: -k $K -i $T --lambda $best_l --entropy $best_h (validation error $best%)"
