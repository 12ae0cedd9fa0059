#!/usr/bin/env bash
# versus-authors.sh: cpm against the authors' C++ CPM on the same jobs,
# whole process, runs alternating (ours, theirs, ours, ...).
#
#   AUTHORS_CPM=/path/to/their/bin/cpm bench/versus-authors.sh [ROUNDS]
#
# Their tool is not part of this repository: build it by hand from its
# public source (github.com/alkant/cpm: `make cmdapp`, g++ -O3) and point
# AUTHORS_CPM at bin/cpm. It reads plain LIBSVM text only, so both tools
# read the same decompressed file from a temporary directory. CPM (ours)
# is ./cpm or $CPM. Needs data/mnist2.train.libsvm.zst (scripts/get-mnist.sh);
# the URL-like file is generated (cpm gen url --rows 400000 --seed 1).
#
# Prints one line per run: job, tool, CPU seconds (user+sys), wall
# seconds and peak RSS (/usr/bin/time), and the peak anonymous memory in MB
# of a second run (bench/peakmem.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
ours=${CPM:-./cpm}
theirs=${AUTHORS_CPM:?set AUTHORS_CPM to the bin/cpm of the authors tool}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
zstd -dq data/mnist2.train.libsvm.zst -o "$tmp/mnist2.libsvm"
"$ours" gen url --rows 400000 --seed 1 -o "$tmp/url.libsvm" 2>/dev/null

run() { # job tool cmd...: CPU, wall and peak RSS from one run, the
	# anonymous peak from a second one under bench/peakmem.sh (whose
	# sampling would add to the CPU figure)
	local job=$1 tool=$2
	shift 2
	local u s e rss anon
	read -r u s e rss < <(/usr/bin/time -f '%U %S %e %M' "$@" 2>&1 >/dev/null | tail -1)
	anon=$(bench/peakmem.sh "$@" 2>&1 >/dev/null | grep -o 'peak_anon_kb [0-9]*' | awk '{print $2}')
	printf '%-22s %-7s cpu %6.2f s  wall %6.2f s  rss %6.1f MB  anon %6.1f MB\n' \
		"$job" "$tool" "$(echo "$u + $s" | bc)" "$e" "$(echo "$rss/1024" | bc -l)" "$(echo "$anon/1024" | bc -l)"
}

job() { # name data iterations k
	local name=$1 data=$2 iters=$3 k=$4
	for _ in $(seq "$rounds"); do
		run "$name" cpm "$ours" train -q -k "$k" -i "$iters" -C 1 --seed 1 -t "$data" -o "$tmp/ours.model"
		run "$name" authors "$theirs" -q -k "$k" -i "$iters" -C 1 --seed 1 -t "$data" -o "$tmp/theirs.model"
	done
}

job "MNIST-2 K=10 T=10M" "$tmp/mnist2.libsvm" 10000000 10
job "MNIST-2 K=40 T=3M" "$tmp/mnist2.libsvm" 3000000 40
job "MNIST-2 K=100 T=3M" "$tmp/mnist2.libsvm" 3000000 100
job "URL-like K=10 T=4M" "$tmp/url.libsvm" 4000000 10
