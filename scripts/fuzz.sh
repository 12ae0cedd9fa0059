#!/usr/bin/env bash
# Runs every fuzz target of the module, one at a time, for a fixed time each.
#
#   scripts/fuzz.sh [-fuzztime D] [-fuzzminimizetime D] [-cachedir DIR] [REGEXP]
#
# -fuzztime is go test's (a duration such as 10s or 2m, or Nx iterations);
# the default is 10s. -fuzzminimizetime is go test's too, default 0 here: no
# minimizing, since go's 60s would spend a short budget minimizing every new
# input; give 60s to long runs, to get small failing inputs. REGEXP, if
# given, keeps only the targets whose name matches it (awk).
#
# -cachedir DIR keeps the corpus that fuzzing generates under DIR instead of
# go's cache ($GOCACHE/fuzz), so a run starts from testdata/fuzz alone. CI
# uses a fresh temporary DIR: the generated corpus of earlier long runs on
# the same machine grows to thousands of inputs, and go test fails with
# "context deadline exceeded" when -fuzztime ends before it has replayed them
# all as its baseline.
#
# Targets are found by grepping the *_test.go files for "func FuzzXxx(", so
# new ones are picked up without editing this script. Each runs with
# -parallel 1 (one fuzzing worker: the CI machine has two cores). A failing
# input is written to the target's testdata/fuzz/FuzzXxx/ directory by go
# test, and the script stops there with go test's status.
set -euo pipefail
cd "$(dirname "$0")/.."

fuzztime=10s
minimize=0
cachedir=
filter=
while [ $# -gt 0 ]; do
	case "$1" in
	-fuzztime | --fuzztime) fuzztime=$2; shift 2 ;;
	-fuzztime=* | --fuzztime=*) fuzztime=${1#*=}; shift ;;
	-fuzzminimizetime | --fuzzminimizetime) minimize=$2; shift 2 ;;
	-fuzzminimizetime=* | --fuzzminimizetime=*) minimize=${1#*=}; shift ;;
	-cachedir | --cachedir) cachedir=$2; shift 2 ;;
	-cachedir=* | --cachedir=*) cachedir=${1#*=}; shift ;;
	-h | --help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
	-*) echo "fuzz.sh: unknown flag $1" >&2; exit 2 ;;
	*) filter=$1; shift ;;
	esac
done

# "dir name" for every fuzz target, in a stable order.
targets=$(grep -r --include='*_test.go' -E -o '^func Fuzz[A-Za-z0-9_]*\(' . |
	sed -E 's|^\./(.*)/[^/]*_test\.go:func (Fuzz[A-Za-z0-9_]*)\($|\1 \2|; s|^\./[^/]*_test\.go:func (Fuzz[A-Za-z0-9_]*)\($|. \1|' |
	sort -u)
if [ -n "$filter" ]; then
	targets=$(printf '%s\n' "$targets" | awk -v re="$filter" '$2 ~ re')
fi
if [ -z "$targets" ]; then
	echo "fuzz.sh: no fuzz targets${filter:+ matching $filter}" >&2
	exit 1
fi

n=$(printf '%s\n' "$targets" | wc -l)
echo "fuzz.sh: $n targets, $fuzztime each"
while read -r dir name; do
	echo "== ./$dir $name"
	# go test passes -test.fuzzcachedir=$GOCACHE/fuzz/PKG to the test binary
	# before the arguments after -args, so the binary's flag parsing (the
	# last value wins) takes ours.
	extra=()
	if [ -n "$cachedir" ]; then
		extra=(-args "-test.fuzzcachedir=$cachedir/$dir")
	fi
	go test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" -fuzzminimizetime "$minimize" -parallel 1 "./$dir" "${extra[@]}"
done <<<"$targets"
