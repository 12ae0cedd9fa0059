# Shared by bench/tune-*.sh (source it; it is not run on its own).
#
# tune_setup NAME SRC: builds bench/out/cpm, then splits the LIBSVM file SRC
# (zstd) into its first 50,000 rows (TR, the fit set) and the rest (VA, the
# validation set, 10,000 rows for MNIST), once, under bench/out/tune/.
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
is_less() { python3 -c "import sys; sys.exit(0 if $1 < $2 else 1)"; }
hgrid() {
  python3 -c "import math; print(' '.join(str(round(math.log(i*$1/10), 4)) for i in range(1, 10) if i*$1 > 10))"
}
