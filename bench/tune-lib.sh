# Shared by bench/tune-*.sh (source it; it is not run on its own).
#
# tune_setup NAME SRC: builds bench/out/cpm, then splits the LIBSVM file SRC
# (zstd) into its first 50,000 rows (TR, the fit set) and the rest (VA, the
# validation set, 10,000 rows for MNIST), once, under bench/out/tune/.
# tune_grid JSON GRID FLAGS...: runs cpm tune on TR, scored on VA with seed 1,
# over GRID with the learner FLAGS, prints its table and writes JSON.
# chosen JSON FLAG: prints the value of FLAG at the point tune chose.
# is_less A B: succeeds if the number A is smaller than B.
# hgrid K: prints section 5.1's entropy targets ln(iK/10), i = 1..9, that
# are positive (the same grid as cpm bench cpm-table --tune).
tune_setup() {
  mkdir -p bench/out/tune
  go build -o bench/out/cpm ./cmd/cpm
  CPM=bench/out/cpm
  TR=bench/out/tune/$1.tr50k.libsvm.zst
  VA=bench/out/tune/$1.val10k.libsvm.zst
  if [ ! -f "$VA" ]; then
    zstd -dc "$2" | awk "NR <= 50000" | zstd -q -o "$TR"
    zstd -dc "$2" | awk "NR > 50000" | zstd -q -o "$VA"
  fi
}
tune_grid() {
  local json=$1 grid=$2
  shift 2
  $CPM tune -q --valid "$VA" --seed 1 --grid "$grid" --json "$json" "$@" "$TR"
}
chosen() {
  python3 -c "import json, sys; m = json.load(open(sys.argv[1])); print(m['points'][m['chosen'] - 1]['settings'][sys.argv[2]])" "$1" "$2"
}
is_less() { python3 -c "import sys; sys.exit(0 if $1 < $2 else 1)"; }
hgrid() {
  python3 -c "import math; print(' '.join(str(round(math.log(i*$1/10), 4)) for i in range(1, 10) if i*$1 > 10))"
}
