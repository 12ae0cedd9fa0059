#!/usr/bin/env bash
# The linear SVM reference of the "Hashed text" benchmark (bench/RESULTS.md):
# LIBLINEAR (Debian's liblinear-tools) on the hashed SpamAssassin split of
# scripts/get-text.sh, with C chosen by 5-fold cross-validation on the
# training file only, then trained on all of it and scored once on the test
# file.
#
#   -s 1  L2-regularised squared hinge loss, dual: the solver and loss of
#         scikit-learn's LinearSVC (its defaults loss='squared_hinge',
#         dual=True; -B 1 is its intercept_scaling=1, a regularised bias)
#   -s 3  L2-regularised hinge loss, dual: the loss cpm minimises
#
# Both with -B 1 and LIBLINEAR's default tolerance (-e 0.1). C runs over
# 2^-5 .. 2^10; the chosen C has the highest CV accuracy, the smallest such
# C on a tie. liblinear-train -v assigns folds with rand() unseeded, so the
# folds are the same on every run with the same C library.
#
# Run from the repository root after scripts/get-text.sh; needs
# liblinear-tools (apt-get install liblinear-tools) and bc. Prints Markdown
# tables; models and predictions go to bench/out/text/.
set -euo pipefail
cd "$(dirname "$0")/.."
TR=data/text/spamassassin.train.libsvm
TE=data/text/spamassassin.test.libsvm
OUT=bench/out/text
for f in "$TR" "$TE"; do
	[[ -f $f ]] || { echo "missing $f: run scripts/get-text.sh first" >&2; exit 1; }
done
for tool in liblinear-train liblinear-predict bc; do
	command -v "$tool" >/dev/null || { echo "$tool not found (apt-get install liblinear-tools bc)" >&2; exit 1; }
done
mkdir -p "$OUT"

now() { date +%s.%N; }
secs() { printf '%.2f' "$(echo "$2 - $1" | bc)"; }

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)," \
	"$(dpkg-query -W -f='liblinear-tools ${Version}' liblinear-tools 2>/dev/null || echo liblinear-tools)"
echo "train: $TR ($(wc -l <"$TR") rows), test: $TE ($(wc -l <"$TE") rows)"

summary=()
for s in 1 3; do
	echo
	echo "### liblinear-train -s $s -B 1: 5-fold CV on the training file"
	echo
	echo "| log2 C | C | CV accuracy % | CV s |"
	echo "|---|---|---|---|"
	best_acc=-1 best_c= best_lc= cv_total=0
	for lc in $(seq -5 10); do
		c=$(awk -v l="$lc" 'BEGIN { printf "%.10g", 2^l }')
		t0=$(now)
		acc=$(liblinear-train -q -s "$s" -B 1 -c "$c" -v 5 "$TR" | awk -F'= ' '/Cross Validation Accuracy/ {sub(/%/, "", $2); print $2}')
		t1=$(now)
		[[ -n $acc ]] || { echo "liblinear-train -v 5 printed no accuracy" >&2; exit 1; }
		cv_total=$(echo "$cv_total + $t1 - $t0" | bc)
		echo "| $lc | $c | $acc | $(secs "$t0" "$t1") |"
		if (($(echo "$acc > $best_acc" | bc))); then
			best_acc=$acc best_c=$c best_lc=$lc
		fi
	done
	model=$OUT/liblinear-s$s.model
	t0=$(now)
	liblinear-train -q -s "$s" -B 1 -c "$best_c" "$TR" "$model"
	t1=$(now)
	acc=$(liblinear-predict "$TE" "$model" "$OUT/liblinear-s$s.pred" | awk -F'[=%(/)]' '/Accuracy/ {print $2, $4, $5}')
	t2=$(now)
	read -r test_acc right total <<<"$acc"
	err=$(echo "scale=6; 100 * ($total - $right) / $total" | bc)
	summary+=("| \`-s $s -B 1\` | 2^$best_lc = $best_c | $best_acc | $(printf '%.2f' "$err") ($((total - right))/$total) | $(printf '%.2f' "$cv_total") | $(secs "$t0" "$t1") | $(secs "$t1" "$t2") |")
done

echo
echo "### Chosen C, trained on all of $TR, scored on $TE"
echo
echo "| solver | chosen C | CV accuracy % | test error % | grid CV s (16 C) | train s | predict s |"
echo "|---|---|---|---|---|---|---|"
printf '%s\n' "${summary[@]}"
