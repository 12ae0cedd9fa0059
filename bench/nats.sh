#!/usr/bin/env bash
# nats.sh: distributed runs on NATS JetStream against local ones, the
# acceptance figures of bench/RESULTS.md ("Beyond one machine").
#
# usage: bench/nats.sh ovo [ROUNDS]   one-vs-one MNIST (double-sided, K = 10,
#                                     T = 2 M per polytope, C = 1: 90 polytopes):
#                                     local --workers 2 against --nats with 2
#                                     cpm worker processes on one cpm cluster
#                                     serve node, alternating, ROUNDS (3) each;
#                                     every model compared byte for byte
#        bench/nats.sh faults         the same job on a 3-node cluster (R3
#                                     streams, scripts/cluster3.sh) with 3
#                                     workers; node 2 and one worker are killed
#                                     with SIGKILL mid-job; model compared
#        bench/nats.sh tune           cpm tune --protocol paper of the CPM on
#                                     MNIST-2 (validation on the test split)
#                                     locally and with --nats: tables compared
#
# Needs data/mnist*.libsvm.zst (scripts/get-mnist.sh). Writes bench/out/nats/.
# Everything listens on 127.0.0.1.
set -euo pipefail
cd "$(dirname "$0")/.."
out=bench/out/nats
mkdir -p "$out"
if [[ -z ${CPM:-} ]]; then
	export CPM=$PWD/bench/out/cpm
	go build -o "$CPM" ./cmd/cpm
fi
train10=data/mnist10.train.libsvm.zst
ovo=(train -q --ovo --double-sided -k 10 -i 2000000 -C 1 --seed 1 -t "$train10")
tmp=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	if [[ -f $tmp/cluster3 ]]; then scripts/cluster3.sh stop "$tmp/c3" >/dev/null 2>&1 || true; fi
	rm -rf "$tmp"
}
trap cleanup EXIT

# timed NAME CMD...: runs CMD, appends "NAME wall user sys maxrss_kb" to $out/times.txt
timed() {
	local name=$1
	shift
	/usr/bin/time -f "$name %e %U %S %M" -a -o "$out/times.txt" "$@"
}

worker() { # worker URL NAME [flags]: a cpm worker in the background
	local url=$1 name=$2
	shift 2
	"$CPM" worker --nats "$url" --name "$name" --cache-dir "$tmp/cache-$name" "$@" 2>"$out/worker-$name.log" &
	pids+=($!)
}

case ${1:-} in
ovo)
	rounds=${2:-3}
	"$CPM" cluster serve --listen 127.0.0.1:14250 --store "$tmp/store" 2>"$out/serve.log" &
	pids+=($!)
	sleep 1
	url=nats://127.0.0.1:14250
	worker "$url" w1
	worker "$url" w2
	: >"$out/times.txt"
	for r in $(seq "$rounds"); do
		timed local "$CPM" "${ovo[@]}" --workers 2 -o "$out/ovo-local.model"
		timed nats "$CPM" "${ovo[@]}" --nats "$url" -o "$out/ovo-nats-$r.model" 2>"$out/ovo-nats-$r.log"
		cmp "$out/ovo-local.model" "$out/ovo-nats-$r.model"
		echo "round $r: models identical"
	done
	cat "$out/times.txt"
	;;
faults)
	mkdir -p "$tmp/c3"
	touch "$tmp/cluster3"
	urls=$(scripts/cluster3.sh start "$tmp/c3")
	for w in a b c; do worker "$urls" "$w" --nats-replicas 3; done
	"$CPM" "${ovo[@]}" --workers 2 -o "$out/ovo-local.model"
	"$CPM" "${ovo[@]}" --nats "$urls" --nats-replicas 3 -o "$out/ovo-faults.model" 2>"$out/ovo-faults.log" &
	sub=$!
	# Kill node 2 and worker b once a third of the 90 tasks are done.
	until [[ $(grep -c '^worker .*: finished' "$out"/worker-[abc].log 2>/dev/null | awk -F: '{s+=$2} END {print s+0}') -ge 30 ]]; do sleep 0.5; done
	scripts/cluster3.sh kill 2 "$tmp/c3"
	kill -9 "${pids[1]}"
	echo "killed node 2 and worker b at $(date +%T)"
	wait "$sub"
	cmp "$out/ovo-local.model" "$out/ovo-faults.model"
	echo "faults: model identical to the local one"
	grep -h 'delivery [2-9]' "$out"/worker-[ac].log || true
	;;
tune)
	"$CPM" cluster serve --listen 127.0.0.1:14250 --store "$tmp/store" 2>"$out/serve.log" &
	pids+=($!)
	sleep 1
	url=nats://127.0.0.1:14250
	worker "$url" w1
	worker "$url" w2
	args=(tune -q --protocol paper -k 10 --seed 1 --valid data/mnist2.test.libsvm.zst data/mnist2.train.libsvm.zst)
	: >"$out/times.txt"
	timed tune-local "$CPM" "${args[@]}" --workers 2 --json "$out/tune-local.json" >"$out/tune-local.txt"
	timed tune-nats "$CPM" "${args[@]}" --nats "$url" --json "$out/tune-nats.json" >"$out/tune-nats.txt"
	diff <(grep -v seconds "$out/tune-local.json") <(grep -v seconds "$out/tune-nats.json") && echo "tune: JSON identical but for times"
	diff <(awk "{\$(NF-1)=\"\"; print}" "$out/tune-local.txt" | grep -v "s elapsed\|wall") <(awk "{\$(NF-1)=\"\"; print}" "$out/tune-nats.txt" | grep -v "s elapsed\|wall") && echo "tune: tables identical but for times"
	cat "$out/times.txt"
	;;
*)
	sed -n '2,/^set /{/^#/p}' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
	;;
esac
