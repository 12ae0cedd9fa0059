#!/usr/bin/env bash
# cluster3.sh: a three-node NATS JetStream cluster of `cpm cluster serve`
# processes on 127.0.0.1, to try distributed train/cv/tune runs and to
# kill nodes under them.
#
# usage:
#   scripts/cluster3.sh start [DIR]   start the nodes that are not running (all
#                                     three, or one killed earlier); DIR holds
#                                     stores, logs and pid files (default: a new
#                                     mktemp directory, printed on stderr). Waits
#                                     until every node answers and the cluster has
#                                     a JetStream metadata leader, then prints the
#                                     URL list on stdout:
#                                     nats://127.0.0.1:14222,nats://127.0.0.1:14223,nats://127.0.0.1:14224
#   scripts/cluster3.sh stop DIR      stop every node (SIGTERM, SIGKILL after 10 s)
#                                     and remove what start put in DIR
#   scripts/cluster3.sh kill N DIR    SIGKILL node N (1, 2 or 3); start DIR revives it
#   scripts/cluster3.sh urls          print the URL list
#
# Node N listens for clients on 127.0.0.1:1422(N+1) and for routes on
# 127.0.0.1:1622(N+1), is named nN and stores JetStream data in DIR/nN; its
# log (cpm cluster serve -v) is DIR/nN.log. The binary is $CPM, or ./cmd/cpm
# built into DIR/cpm. Everything listens on loopback only, so no
# authentication is needed. Example:
#
#   dir=$(mktemp -d); urls=$(scripts/cluster3.sh start "$dir")
#   cpm worker --nats "$urls" & cpm train --nats "$urls" --nats-replicas 3 ...
#   scripts/cluster3.sh kill 2 "$dir"; ...; scripts/cluster3.sh stop "$dir"
set -euo pipefail

readonly ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
readonly URLS="nats://127.0.0.1:14222,nats://127.0.0.1:14223,nats://127.0.0.1:14224"
readonly ROUTES="nats-route://127.0.0.1:16222,nats-route://127.0.0.1:16223,nats-route://127.0.0.1:16224"
readonly START_WAIT=20  # seconds for a node to listen
readonly LEADER_WAIT=30 # seconds for the metadata leader
readonly STOP_WAIT=10   # seconds from SIGTERM to SIGKILL

usage() {
	sed -n '5,/^set /{/^#/p}' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
}

die() {
	echo "cluster3.sh: $*" >&2
	exit 1
}

# running N DIR: is node N's recorded process alive?
running() {
	local pidfile=$2/n$1.pid
	[[ -f $pidfile ]] && kill -0 "$(cat "$pidfile")" 2>/dev/null
}

# binary DIR: the cpm binary, built into DIR unless $CPM names one.
binary() {
	if [[ -n ${CPM:-} ]]; then
		[[ -x $CPM ]] || die "\$CPM=$CPM is not an executable"
		echo "$CPM"
		return
	fi
	if [[ ! -x $1/cpm ]]; then
		(cd "$ROOT" && go build -o "$1/cpm" ./cmd/cpm) || die "go build ./cmd/cpm failed"
	fi
	echo "$1/cpm"
}

start() {
	local dir=${1:-}
	if [[ -z $dir ]]; then
		dir=$(mktemp -d "${TMPDIR:-/tmp}/cpm-cluster3.XXXXXX")
		echo "cluster3.sh: DIR is $dir" >&2
	fi
	mkdir -p "$dir"
	dir=$(cd "$dir" && pwd)
	local cpm
	cpm=$(binary "$dir")
	local started=()
	for n in 1 2 3; do
		if running "$n" "$dir"; then
			continue
		fi
		# A restarted node's earlier lines must not satisfy the waits below.
		[[ -f $dir/n$n.log ]] && mv "$dir/n$n.log" "$dir/n$n.log.old"
		"$cpm" cluster serve -v --name "n$n" \
			--listen "127.0.0.1:$((14221 + n))" --cluster "127.0.0.1:$((16221 + n))" \
			--routes "$ROUTES" --store "$dir/n$n" >"$dir/n$n.log" 2>&1 </dev/null &
		echo $! >"$dir/n$n.pid"
		started+=("$n")
	done
	local deadline=$((SECONDS + START_WAIT))
	for n in "${started[@]}"; do
		until grep -q "^cpm cluster serve: n$n listening on" "$dir/n$n.log" 2>/dev/null; do
			# jobs -rp: a node that exited is a zombie until reaped, which kill -0 does not tell.
			if ! jobs -rp | grep -qx "$(cat "$dir/n$n.pid")" || ((SECONDS >= deadline)); then
				echo "cluster3.sh: node $n did not start; its log:" >&2
				cat "$dir/n$n.log" >&2 || true
				stop "$dir"
				exit 1
			fi
			sleep 0.1
		done
	done
	deadline=$((SECONDS + LEADER_WAIT))
	until cat "$dir"/n[123].log 2>/dev/null | grep -q "metadata leader\$\|new metadata leader: \|new remote metadata leader"; do
		if ((SECONDS >= deadline)); then
			echo "cluster3.sh: no JetStream metadata leader after ${LEADER_WAIT}s; logs in $dir" >&2
			stop "$dir"
			exit 1
		fi
		sleep 0.1
	done
	echo "$URLS"
}

stop() {
	local dir=$1
	local pids=()
	for n in 1 2 3; do
		if running "$n" "$dir"; then
			pids+=("$(cat "$dir/n$n.pid")")
		fi
	done
	if ((${#pids[@]} > 0)); then
		kill -TERM "${pids[@]}" 2>/dev/null || true
		local deadline=$((SECONDS + STOP_WAIT))
		for pid in "${pids[@]}"; do
			while kill -0 "$pid" 2>/dev/null; do
				if ((SECONDS >= deadline)); then
					echo "cluster3.sh: process $pid still running after ${STOP_WAIT}s: SIGKILL" >&2
					kill -KILL "$pid" 2>/dev/null || true
					break
				fi
				sleep 0.1
			done
		done
	fi
	for n in 1 2 3; do
		rm -rf "${dir:?}/n$n" "$dir/n$n.log" "$dir/n$n.log.old" "$dir/n$n.pid"
	done
	[[ -n ${CPM:-} ]] || rm -f "$dir/cpm"
	rmdir "$dir" 2>/dev/null || true
}

killnode() {
	local n=$1 dir=$2
	[[ $n == [123] ]] || die "node $n: want 1, 2 or 3"
	running "$n" "$dir" || die "node $n is not running"
	local pid
	pid=$(cat "$dir/n$n.pid")
	kill -KILL "$pid"
	while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
	echo "cluster3.sh: node $n (pid $pid) killed" >&2
}

case ${1:-} in
start)
	(($# <= 2)) || usage
	start "${2:-}"
	;;
stop)
	(($# == 2)) || usage
	[[ -d $2 ]] || die "$2: not a directory"
	stop "$2"
	;;
kill)
	(($# == 3)) || usage
	killnode "$2" "$3"
	;;
urls)
	echo "$URLS"
	;;
*)
	usage
	;;
esac
