#!/usr/bin/env bash
# golden.sh: the models and figures that must not change when the code is
# reorganised. It builds cpm, runs a fixed list of commands that covers every
# learner (cpm single- and double-sided, one-vs-one, K chosen by CV, holdout
# with early stopping, warm start, checkpoint and resume, --stream from a
# file, from shards and through the row cache; the perceptron with lifting and
# its multiclass form; the kernel perceptron with each kernel; the online and
# batch Polyceptron; PLUME with each M-step and SPLA1), every input format
# (LIBSVM text, Arrow IPC, Parquet, the row cache) and the text outputs of
# predict, eval, export, inspect and cv, and prints one "sha256  name" line
# per output.
#
#   scripts/golden.sh            print the sums
#   scripts/golden.sh --check    compare them with scripts/golden.sha256
#   scripts/golden.sh --record   rewrite scripts/golden.sha256
#   GOLDEN_FULL=1 ...            also the output of cpm bench seeds (~90 s)
#
# The sums are those of linux/amd64: Go does not fuse multiply-adds there, so
# a model's bytes depend only on the code, the data, the flags and the seed.
# On arm64, ppc64 and s390x the compiler may fuse a*b+c into one rounding and
# models differ in the last bits; --check refuses to run there.
set -Eeuo pipefail # -E: the ERR trap below also fires inside functions
cd "$(dirname "$0")/.."
root=$PWD
mode=${1:-print}
case $mode in print | --check | --record) ;; *)
	echo "usage: scripts/golden.sh [--check|--record]" >&2
	exit 2
	;;
esac
if [[ $mode != print && $(go env GOARCH) != amd64 ]]; then
	echo "golden.sh: the recorded sums are for amd64, this is $(go env GOARCH)" >&2
	exit 2
fi

w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
# Progress lines go to a log, shown if a command fails.
exec 3>&2 2>"$w/log"
trap 'cat "$w/log" >&3; echo "golden.sh: failed at line $LINENO" >&3' ERR
go build -o "$w/cpm" ./cmd/cpm
cpm=$w/cpm
# Relative paths, so that outputs naming their inputs do not depend on $w.
cd "$w"
cp -r "$root/testdata/uci" uci
u=uci
d=data
o=out
mkdir -p "$d" "$o"

# Data: the UCI tables as they are, Dataset 1 of the Polyceptron paper, and a
# small URL-like sparse set, in every format.
"$cpm" gen polyceptron-d1 --rows 400 --seed 3 -o "$d/d1.libsvm"
"$cpm" gen url --rows 3000 --seed 5 -o "$d/url.libsvm.zst"
"$cpm" gen url --rows 1000 --seed 6 --split test -o "$d/url.test.libsvm"
"$cpm" convert "$u/ionosphere.libsvm" -o "$d/iono.arrow"
"$cpm" convert "$u/ionosphere.libsvm" -o "$d/iono.parquet"
"$cpm" convert "$u/ionosphere.libsvm" -o "$d/iono.cpmcache"
"$cpm" shard -n 3 --shuffle --seed 2 "$d/url.libsvm.zst" "$d/url.shards" >/dev/null

t() { "$cpm" train -q "$@"; }
# CPM
t -t "$u/ionosphere.libsvm" -k 4 -i 200000 --seed 1 -o "$o/cpm.model"
t -t "$d/iono.arrow" -k 4 -i 200000 --seed 1 -o "$o/cpm-arrow.model"
t -t "$d/iono.parquet" -k 4 -i 200000 --seed 1 -o "$o/cpm-parquet.model"
t -t "$d/iono.cpmcache" -k 4 -i 200000 --seed 1 -o "$o/cpm-cache.model"
t -t "$u/ionosphere.libsvm" -k 4 -i 200000 --seed 1 --entropy 0.5 --reshuffle --cost_ratio 2 -o "$o/cpm-entropy.model"
t -t "$u/ionosphere.libsvm" -k 4 -i 200000 --seed 2 --double-sided --workers 1 -o "$o/cpm-double.model"
t -t "$u/vowel.libsvm" -k 3 -i 20000 --seed 1 --ovo -o "$o/cpm-ovo.model"
t -t "$u/heart_scale.libsvm" -k 2,3,4 -i 50000 --seed 1 --select-folds 3 -o "$o/cpm-selectk.model"
t -t "$u/breast-cancer.libsvm" -k 4 -i 300000 --seed 1 --holdout 0.2 --early-stop 3 --valid-every 20000 -o "$o/cpm-holdout.model"
t -t "$u/ionosphere.libsvm" -k 4 -i 100000 --lambda 1e-4 --seed 4 --init "$o/cpm.model" -o "$o/cpm-warm.model"
t -t "$u/ionosphere.libsvm" -k 4 -i 300000 --seed 7 --double-sided --checkpoint ck --checkpoint-every 20000 -o "$o/cpm-ck.model"
t -t "$u/ionosphere.libsvm" -k 4 -i 300000 --seed 7 --double-sided --resume ck -o "$o/cpm-resumed.model"
t -t "$d/url.libsvm.zst" -k 4 -i 30000 --seed 1 --stream --buffer 500 -o "$o/cpm-stream.model"
t -t "$d/url.libsvm.zst" -k 4 -i 30000 --seed 1 --stream --buffer 500 --cache url.cpmcache -o "$o/cpm-stream-cache1.model"
t -t "$d/url.libsvm.zst" -k 4 -i 30000 --seed 1 --stream --buffer 500 --cache url.cpmcache -o "$o/cpm-stream-cache2.model"
t -t "$d/url.shards" -k 4 -i 30000 --seed 1 --stream --double-sided --buffer 500 --readers 2 -o "$o/cpm-shards.model"
t -t "$d/url.libsvm.zst" -k 6 -i 30000 --seed 1 -c "$d/url.test.libsvm" -s "$o/url.scores" --valid "$d/url.test.libsvm" -o "$o/cpm-url.model" >/dev/null
# Perceptrons and Polyceptrons
t --learner perceptron -t "$u/ionosphere.libsvm" --seed 1 -o "$o/perceptron.model"
t --learner perceptron -t "$u/ionosphere.libsvm" --seed 1 --lift quadratic -o "$o/perceptron-lift.model"
t --learner perceptron -t "$u/iris.libsvm" --seed 1 -o "$o/perceptron-multi.model"
t --learner kperceptron -t "$u/ionosphere.libsvm" --seed 1 --kernel linear -o "$o/kp-linear.model"
t --learner kperceptron -t "$u/ionosphere.libsvm" --seed 1 --kernel poly --degree 3 --coef0 1 -o "$o/kp-poly.model"
t --learner kperceptron -t "$u/breast-cancer.libsvm" --seed 1 --kernel rbf --sigma 0.5 -o "$o/kp-rbf.model"
t --learner kperceptron -t "$u/iris.libsvm" --seed 1 --kernel rbf --sigma 0.5 -o "$o/kp-multi.model"
t --learner polyceptron-online -t "$d/d1.libsvm" -k 3 --seed 1 -o "$o/poly-online.model"
t --learner polyceptron-batch -t "$d/d1.libsvm" -k 3 --seed 1 --gamma 10 --restarts 3 -o "$o/poly-batch.model"
t --learner polyceptron-batch -t "$d/d1.libsvm" -k 3 --seed 1 --max-iter 50 --pocket --lift quadratic -o "$o/poly-pocket.model"
# PLUME and SPLA1
t --learner plume -t "$u/heart_scale.libsvm" -k 2 --seed 1 -o "$o/plume-ga.model"
t --learner plume -t "$u/heart_scale.libsvm" -k 2 --seed 1 --m-step newton -o "$o/plume-newton.model"
t --learner plume -t "$u/heart_scale.libsvm" -k 3 --seed 1 --m-step bfgs --restarts 2 -o "$o/plume-bfgs.model"
t --learner spla1 -t "$u/heart_scale.libsvm" -k 2 --seed 1 -o "$o/spla1.model"

# Text outputs of the other commands.
"$cpm" predict -m "$o/cpm-double.model" -c "$u/ionosphere.libsvm" -s "$o/predict.txt" >"$o/predict-summary.txt"
"$cpm" eval -m "$o/cpm-ovo.model" --json "$o/eval-ovo.json" "$u/vowel.libsvm" >"$o/eval-ovo.txt"
"$cpm" eval -m "$o/kp-rbf.model" "$u/breast-cancer.libsvm" >"$o/eval-kp.txt"
"$cpm" export -m "$o/cpm-double.model" -o "$o/export.txt"
"$cpm" export -m "$o/plume-bfgs.model" -o "$o/export-plume.txt"
"$cpm" inspect "$o/cpm.model" --data "$u/ionosphere.libsvm" --json "$o/inspect.json" >"$o/inspect.txt"
"$cpm" inspect "$o/poly-batch.model" >"$o/inspect-poly.txt"
for l in cpm perceptron kperceptron polyceptron-online polyceptron-batch plume spla1; do
	case $l in
	cpm) f=(-k 3 -i 20000) ;;
	kperceptron) f=(--kernel rbf --sigma 1 --epochs 20) ;;
	polyceptron-*) f=(-k 2 --epochs 20 --max-iter 50) ;;
	*) f=() ;;
	esac
	"$cpm" cv --learner "$l" "${f[@]}" -r 2 -f 3 --seed 1 --json "$o/cv-$l.json" "$u/ionosphere.libsvm" | grep -v -i 'time\|seconds' >"$o/cv-$l.txt"
done
"$cpm" cv --learner plume -k 2 -r 2 -f 3 --seed 1 --scale01 "$u/breast-cancer.libsvm" | grep -v -i 'time\|seconds' >"$o/cv-plume-scale01.txt"
if [[ ${GOLDEN_FULL:-} == 1 ]]; then
	"$cpm" bench seeds -q --data "$u" --json "$o/bench-seeds.json" >/dev/null
fi

# JSON outputs carry wall times and time per fit; keep only the lines
# without them.
for f in "$o"/*.json; do
	grep -v -i 'seconds\|"wall\|"elapsed\|"time"\|"started\|"finished\|"duration' "$f" >"$f.stable" || true
	mv "$f.stable" "$f"
done
(cd "$o" && sha256sum -- *) >"$w/sums"
cd "$root"
case $mode in
print) cat "$w/sums" ;;
--record)
	cp "$w/sums" scripts/golden.sha256
	echo >&3 "golden.sh: recorded $(wc -l <"$w/sums") sums in scripts/golden.sha256"
	;;
--check)
	want=scripts/golden.sha256
	if [[ ${GOLDEN_FULL:-} != 1 ]]; then
		want=$w/want
		grep -v 'bench-seeds.json$' scripts/golden.sha256 >"$want"
	fi
	if diff -u "$want" "$w/sums"; then
		echo >&3 "golden.sh: $(wc -l <"$w/sums") outputs byte-identical to scripts/golden.sha256"
	else
		echo "golden.sh: outputs differ from scripts/golden.sha256 (above)" >&3
		exit 1
	fi
	;;
esac
