#!/usr/bin/env bash
# soak.sh: run cpm commands in random modes, worker counts and GOMAXPROCS
# values, interrupt or kill them at random moments, and report every hang,
# crash, leaked process or temporary file, partial or clobbered output and
# model that differs from the uninterrupted run of the same job.
#
#   scripts/soak.sh [-d SECONDS] [-s SEED] [-w WORKDIR]
#
# -d  how long to run (default 1800 s); -s  seed of the choices (default 1);
# -w  work directory (default a new temporary one, removed on success).
# Needs scripts/get-mnist.sh's outputs in data/ (it runs get-mnist.sh
# when they are missing). Not part of CI: it is meant to run for minutes to
# hours. Exit status 0 when every run behaved, 1 otherwise; the summary is
# printed at the end and written to WORKDIR/summary.txt, one line per
# problem to WORKDIR/problems.txt with the run's stderr kept beside it.
#
# Each run is one of:
#   train in memory, --stream from a file, --stream from a shard set,
#   --stream --cache, in memory from standard input, each single- or
#   double-sided; one-vs-one in memory; train --checkpoint then --resume;
#   convert, shard, cv, eval, predict, inspect
# with --workers 1..3 and GOMAXPROCS 1..2, and one action: let it finish,
# or SIGINT, SIGTERM or SIGKILL after a random delay. What is checked:
#   finish     exit 0, the output a valid file, and for training the model
#              byte-identical to every other finished run of the same job
#              (whatever its workers and GOMAXPROCS);
#   INT/TERM   exit 130 within 5 s of the signal (0 if the job had already
#              finished), and the output either absent or, when it held an
#              older file before the run, that file unchanged;
#   KILL       exit 137; the next run writing the same directory removes
#              the temporaries the killed one left;
#   always     no "panic:", "fatal error:" or "DATA RACE" on stderr, no cpm
#              process left running, no temporary file left by a run that
#              was not killed.
# A run that has not exited 5 s after INT/TERM, or 300 s after it started,
# is a hang: it gets SIGQUIT (a goroutine dump on its stderr), then SIGKILL.
set -euo pipefail
cd "$(dirname "$0")/.."

duration=1800 seed=1 work=""
while getopts "d:s:w:" opt; do
	case $opt in
	d) duration=$OPTARG ;;
	s) seed=$OPTARG ;;
	w) work=$OPTARG ;;
	*) echo "usage: $0 [-d SECONDS] [-s SEED] [-w WORKDIR]" >&2; exit 2 ;;
	esac
done
keep=1
if [ -z "$work" ]; then
	work=$(mktemp -d /tmp/cpm-soak.XXXXXX)
	keep=0
fi
mkdir -p "$work"
work=$(cd "$work" && pwd)
RANDOM=$seed

if [ ! -f data/mnist2.train.libsvm.zst ] || [ ! -f data/mnist10.train.libsvm.zst ]; then
	./scripts/get-mnist.sh
fi
echo "soak: building cpm into $work"
go build -o "$work/cpm" ./cmd/cpm
cpm=$work/cpm

# Data: MNIST-2 train (60,000 rows, 15 blocks a pass when streamed), a
# 10,000-row ten-class subset for one-vs-one, a shard set and a cache.
d=$work/data
mkdir -p "$d"
cp data/mnist2.train.libsvm.zst "$d/train.libsvm.zst"
cp data/mnist2.test.libsvm.zst "$d/test.libsvm.zst"
{ zstd -dc data/mnist10.train.libsvm.zst || true; } | head -n 10000 >"$d/ten.libsvm"
"$cpm" shard -n 4 --shuffle --seed 3 "$d/train.libsvm.zst" "$d/shards" 2>/dev/null
"$cpm" train -q -k 4 -i 100000 -t "$d/train.libsvm.zst" -o "$d/base.model"

runs=0 problems=0
declare -A ref seen
out=$work/out
mkdir -p "$out"
: >"$work/problems.txt"

problem() { # problem RUN WHAT
	problems=$((problems + 1))
	echo "run $1: $2" | tee -a "$work/problems.txt" >&2
	cp "$work/stderr" "$work/problem-$1.stderr" 2>/dev/null || true
}

# pick N: a random number in [0, N).
pick() { echo $((RANDOM % $1)); }

# launch CMD...: starts the command in the background with its stderr in
# $work/stderr and standard input from $stdin (or /dev/null); sets pid.
launch() {
	if [ -n "${stdin:-}" ]; then
		GOMAXPROCS=$procs "$@" <"$stdin" >"$work/stdout" 2>"$work/stderr" &
	else
		GOMAXPROCS=$procs "$@" </dev/null >"$work/stdout" 2>"$work/stderr" &
	fi
	pid=$!
}

# waitfor PID LIMIT: waits up to LIMIT seconds for PID; sets status (the
# exit status, or "hang" after SIGQUIT and SIGKILL) and elapsed (seconds).
waitfor() {
	local p=$1 limit=$2 t0 now
	t0=$(date +%s.%N)
	while kill -0 "$p" 2>/dev/null; do
		now=$(date +%s.%N)
		if awk -v a="$t0" -v b="$now" -v l="$limit" 'BEGIN{exit !(b-a>l)}'; then
			kill -QUIT "$p" 2>/dev/null || true
			sleep 1
			kill -KILL "$p" 2>/dev/null || true
			wait "$p" 2>/dev/null || true
			status=hang
			elapsed=$limit
			return
		fi
		sleep 0.05
	done
	set +e
	wait "$p"
	status=$?
	set -e
	elapsed=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.2f", b-a}')
}

temporaries() { find "$out" -name '.*tmp*' 2>/dev/null; }

end=$(($(date +%s) + duration))
echo "soak: $duration s from $(date -u +%H:%M:%S), seed $seed, work $work"
while [ "$(date +%s)" -lt "$end" ]; do
	runs=$((runs + 1))
	procs=$((1 + $(pick 2)))
	workers=$((1 + $(pick 3)))
	sides=""
	[ "$(pick 2)" = 1 ] && sides="--double-sided"
	stdin=""
	o=$out/result
	rm -f "$o" "$o.parquet"
	kind=train
	case $(pick 13) in
	0) job="memory$sides"; args=(train -q -k 4 -i 300000 $sides -t "$d/train.libsvm.zst" -o "$o") ;;
	1) job="stream$sides"; args=(train -q -k 4 -i 300000 $sides --stream -t "$d/train.libsvm.zst" -o "$o") ;;
	2) job="shards$sides"; args=(train -q -k 4 -i 300000 $sides --stream -t "$d/shards" -o "$o") ;;
	3) job="cache$sides"; args=(train -q -k 4 -i 300000 $sides --stream --cache "$out/train.cpmcache" -t "$d/train.libsvm.zst" -o "$o") ;;
	4) job="stdin$sides"; stdin=$d/ten.libsvm; args=(train -q -k 4 -i 50000 $sides --ovo -t - -o "$o") ;;
	5) job="ovo$sides"; args=(train -q -k 4 -i 50000 $sides --ovo -t "$d/ten.libsvm" -o "$o") ;;
	6) job="resume$sides"; kind=resume; args=(train -q -k 4 -i 600000 $sides -t "$d/train.libsvm.zst" -o "$o" --checkpoint "$out/ck" --checkpoint-every 100000) ;;
	7) job="convert"; kind=file; o=$o.parquet; args=(convert "$d/train.libsvm.zst" -o "$o") ;;
	8) job="shard"; kind=dir; rm -rf "$out/shards"; o=$out/shards; args=(shard -n 3 --shuffle --seed 2 "$d/train.libsvm.zst" "$o") ;;
	9) job="cv"; kind=file; args=(cv -q --ovo -r 2 -f 3 -k 2 -i 20000 "$d/ten.libsvm" --json "$o") ;;
	10) job="predict"; kind=file; args=(predict -m "$d/base.model" -c "$d/test.libsvm.zst" -s "$o") ;;
	11) job="eval"; kind=file; args=(eval -m "$d/base.model" --json "$o" "$d/test.libsvm.zst") ;;
	12) job="inspect"; kind=file; args=(inspect "$d/base.model" --data "$d/test.libsvm.zst" --json "$o") ;;
	esac
	[ "$kind" = dir ] || [ "$kind" = file ] || args+=(--workers "$workers")
	# Half the runs write over an older file, which must survive a failed run.
	old=""
	if [ "$kind" != dir ] && [ "$(pick 2)" = 1 ]; then
		echo "older content $runs" >"$o"
		old=$(sha256sum <"$o")
	fi
	action=$(pick 4) # 0 finish, 1 INT, 2 TERM, 3 KILL
	case $action in 0) sig="" ;; 1) sig=INT ;; 2) sig=TERM ;; 3) sig=KILL ;; esac
	# A random delay in [0.05, 3] s, while these jobs do their work (a signal in
	# the first milliseconds, before the Go runtime runs main, takes its default
	# action instead).
	delay=$(awk -v r="$RANDOM" 'BEGIN{printf "%.2f", 0.05 + r/32768*2.95}')
	before=$(temporaries | sort)
	launch "$cpm" "${args[@]}"
	if [ -n "$sig" ]; then
		sleep "$delay"
		kill -s "$sig" "$pid" 2>/dev/null || true
		if [ "$sig" = KILL ]; then waitfor "$pid" 10; else waitfor "$pid" 5; fi
	else
		waitfor "$pid" 300
	fi
	tag="$job workers=$workers GOMAXPROCS=$procs ${sig:-finish}@${delay}s"
	seen[$job]=$((${seen[$job]:-0} + 1))
	if [ "$status" = hang ]; then
		problem $runs "HANG: $tag (goroutine dump in problem-$runs.stderr)"
		continue
	fi
	if grep -qE '^(panic:|fatal error:)|DATA RACE' "$work/stderr"; then
		problem $runs "CRASH: $tag: $(grep -m1 -E 'panic:|fatal error:|DATA RACE' "$work/stderr")"
	fi
	if pgrep -f "^$cpm " >/dev/null; then
		problem $runs "LEAK: $tag: a cpm process still runs"
		pkill -KILL -f "^$cpm " || true
	fi
	# A resumable run that was stopped continues from its checkpoint; the
	# result must equal the uninterrupted run's.
	if [ "$kind" = resume ] && [ "$status" != 0 ] && [ -f "$out/ck" ]; then
		sig=""
		launch "$cpm" "${args[@]}" --resume "$out/ck"
		waitfor "$pid" 300
		tag="$tag then --resume"
		if [ "$status" = hang ]; then
			problem $runs "HANG: $tag"
			continue
		fi
	fi
	rm -f "$out/ck"
	case "${sig:-}:$status" in
	:0 | INT:0 | TERM:0 | KILL:0 | KILL:137 | INT:130 | TERM:130) ;;
	*)
		problem $runs "STATUS $status: $tag: $(tail -n 2 "$work/stderr" | tr '\n' ' ')"
		continue
		;;
	esac
	if [ "$status" = 0 ]; then
		case $kind in
		train | resume)
			if ! "$cpm" export -m "$o" -o /dev/null 2>>"$work/stderr"; then
				problem $runs "BAD OUTPUT: $tag: the model does not load"
			fi
			sum=$(sha256sum <"$o")
			if [ -z "${ref[$job]:-}" ]; then
				ref[$job]=$sum
			elif [ "${ref[$job]}" != "$sum" ]; then
				problem $runs "NONDETERMINISTIC: $tag: model differs from earlier runs of $job"
			fi
			;;
		file) [ -s "$o" ] || problem $runs "BAD OUTPUT: $tag: $o empty or missing" ;;
		dir) [ -f "$o/SHARDS" ] || problem $runs "BAD OUTPUT: $tag: no SHARDS manifest" ;;
		esac
	elif [ "$kind" != dir ]; then
		if [ -n "$old" ]; then
			if [ ! -f "$o" ] || [ "$(sha256sum <"$o")" != "$old" ]; then
				problem $runs "CLOBBERED: $tag: the older file at the output path changed"
			fi
		elif [ -e "$o" ]; then
			problem $runs "PARTIAL OUTPUT: $tag: $o exists after status $status"
		fi
	fi
	if [ "$status" != 137 ]; then
		# A run that was not killed leaves no temporary and removes the ones
		# killed runs left in the directories it wrote.
		left=$(comm -13 <(echo "$before") <(temporaries | sort))
		if [ -n "$left" ]; then
			problem $runs "LEFT TEMPORARIES: $tag: $(echo "$left" | tr '\n' ' ')"
		fi
	fi
	printf '%5d %-22s %-4s %6ss  %s\n' "$runs" "$job" "$status" "$elapsed" "$tag"
done
stale=$(temporaries)

{
	echo "soak summary: $runs runs in $duration s, seed $seed, $problems problems"
	for j in $(printf '%s\n' "${!seen[@]}" | sort); do printf '  %-22s %d runs\n' "$j" "${seen[$j]}"; done
	[ -z "$stale" ] || echo "temporaries left by killed runs at the end: $(echo "$stale" | wc -l)"
} | tee "$work/summary.txt"
if [ "$problems" -gt 0 ]; then
	echo "problems: $work/problems.txt"
	exit 1
fi
[ "$keep" = 1 ] || rm -rf "$work"
