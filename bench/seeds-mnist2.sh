#!/usr/bin/env bash
# Test error of double-sided CPM on MNIST-2 over seeds 1..5 (the paper's
# Table 1 reports means and standard deviations over 5 shuffles), for the
# issue's default setting and the validation-tuned ones (bench/tune-mnist2.sh);
# pass quoted flag sets as arguments to run others.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p bench/out
go build -o bench/out/cpm ./cmd/cpm
settings=("$@")
[ ${#settings[@]} -gt 0 ] || settings=("-k 10 -i 10000000 -C 1" "-k 40 -i 32000000 -C 0.1" "-k 100 -i 32000000 -C 0.01 --entropy 0.921")
for flags in "${settings[@]}"; do
  errs=()
  for seed in 1 2 3 4 5; do
    bench/out/cpm train -q --double-sided $flags --seed $seed -t data/mnist2.train.libsvm.zst \
      -c data/mnist2.test.libsvm.zst --json bench/out/seed.json -o bench/out/seed.model >/dev/null
    errs+=("$(python3 -c "import json; print(100*json.load(open('bench/out/seed.json'))['test_error'])")")
  done
  python3 - "$flags" "${errs[@]}" <<'PY'
import statistics, sys
f = [float(x) for x in sys.argv[2:]]
print(f"{sys.argv[1]} --double-sided: test error % per seed {f}, mean {statistics.mean(f):.3f} ± {statistics.stdev(f):.3f}")
PY
done
