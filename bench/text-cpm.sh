#!/usr/bin/env bash
# What cpm does on the "Hashed text" benchmark (bench/RESULTS.md): the
# hashed SpamAssassin split of scripts/get-text.sh, spam (1) outside the
# polytope, single-sided, -i 10000000, seed 1 unless said otherwise.
#
#   1. cpm train with its defaults, and with the CPM paper's -C 1
#      (lambda = 1/(C*T) = 1e-7);
#   2. -k 1 --lambda 1e-4 (a linear SVM trained by Pegasos);
#   3. cpm tune over -k {1,5,10} x --lambda {1e-7..1e-3}, each point
#      trained on the first 80% of the training rows and validated on the
#      last 20% (--valid; the rows are in a fixed pseudo-random order, see
#      get-text.sh); the chosen point (best validation accuracy, ties to the
#      simpler model) is retrained on all the training rows with seeds
#      1..5 and scored on the test file.
#
# The test file is only used to score the settings fixed beforehand. Run
# from the repository root after
# scripts/get-text.sh. Prints Markdown tables; models go to bench/out/text/.
set -euo pipefail
cd "$(dirname "$0")/.."
TR=data/text/spamassassin.train.libsvm
TE=data/text/spamassassin.test.libsvm
OUT=bench/out/text
for f in "$TR" "$TE"; do
	[[ -f $f ]] || { echo "missing $f: run scripts/get-text.sh first" >&2; exit 1; }
done
command -v bc >/dev/null || { echo "bc not found" >&2; exit 1; }
mkdir -p "$OUT"
CPM=$OUT/cpm
go build -o "$CPM" ./cmd/cpm

# The holdout: the last 20% of the training rows.
FIT=$OUT/spamassassin.fit.libsvm
VA=$OUT/spamassassin.valid.libsvm
n=$(wc -l <"$TR")
nva=$((n / 5))
head -n $((n - nva)) "$TR" >"$FIT"
tail -n "$nva" "$TR" >"$VA"

now() { date +%s.%N; }
secs() { printf '%.2f' "$(echo "$2 - $1" | bc)"; }

# run NAME TRAIN DATA flags... -> "error% errors/rows train_seconds":
# cpm train -t TRAIN -o MODEL flags..., then cpm eval -m MODEL DATA.
run() {
	local name=$1 train=$2 data=$3
	shift 3
	local t0 t1
	t0=$(now)
	"$CPM" train -q -t "$train" -o "$OUT/$name.model" "$@" >/dev/null
	t1=$(now)
	"$CPM" eval -m "$OUT/$name.model" "$data" |
		awk -v s="$(secs "$t0" "$t1")" '/^rows/ {sub(/%/, "", $6); printf "%.2f %d/%d %s\n", $6, $4, $2, s}'
}

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(go version | cut -d' ' -f3)"
echo "train: $TR ($n rows; fit = first $((n - nva)), valid = last $nva), test: $TE ($(wc -l <"$TE") rows)"
echo
echo "### Fixed settings, trained on all of the training file, scored on the test file"
echo
echo "| flags | test error % | errors | train s (incl. load) |"
echo "|---|---|---|---|"
read -r e c s <<<"$(run default "$TR" "$TE")"
echo "| (defaults: -k 10, lambda = 1/n, 100 passes) | $e | $c | $s |"
read -r e c s <<<"$(run c1 "$TR" "$TE" -C 1)"
echo "| -C 1 (the paper's lambda = 1/(C*T) = 1e-7, T = 10M) | $e | $c | $s |"
read -r e c s <<<"$(run k1-l1e-4 "$TR" "$TE" -k 1 --lambda 1e-4)"
echo "| -k 1 --lambda 1e-4 | $e | $c | $s |"

echo
echo "### cpm tune: trained on the first 80% of the training file, scored on the last 20%"
echo
echo '```'
"$CPM" tune -q -i 10000000 --valid "$VA" --grid 'k=1,5,10 lambda=1e-7..1e-3x5' --json "$OUT/tune.json" "$FIT"
echo '```'
read -r best_k best_l best_e <<<"$(python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
p = next(p for p in j["points"] if p["point"] == j["chosen"])
print(p["settings"]["k"], p["settings"]["lambda"], "%.3f" % p["error_mean"])' "$OUT/tune.json")"
echo
echo "### Chosen: -k $best_k --lambda $best_l (validation error $best_e%), trained on all of the training file"
echo
echo "| seed | test error % | errors | train s |"
echo "|---|---|---|---|"
sum=0
for seed in 1 2 3 4 5; do
	read -r e c s <<<"$(run "best-seed$seed" "$TR" "$TE" -k "$best_k" --lambda "$best_l" --seed "$seed")"
	echo "| $seed | $e | $c | $s |"
	sum=$(echo "$sum + $e" | bc)
done
echo
echo "mean test error over seeds 1-5: $(printf '%.2f' "$(echo "scale=6; $sum / 5" | bc)")%"
