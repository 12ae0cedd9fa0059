package shard

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/polyhedral/cpm/internal/budget"
	"github.com/polyhedral/cpm/reader"
)

// ManifestName is the name of the manifest file in a shard directory.
const ManifestName = "SHARDS"

// manifestMagic is the first line of a manifest, with its format version.
const manifestMagic = "cpm-shards 1"

// maxManifestBytes bounds what ReadManifest reads (MaxShards lines of
// well under 200 bytes): it reads at most one byte more, so a manifest
// that is an endless file (/dev/zero) costs no more memory than that.
const maxManifestBytes = 32 << 20

// Manifest describes a complete shard set. It is stored as text:
//
//	cpm-shards 1
//	seed 42
//	shuffled true
//	run-rows 4096
//	shards 2
//	rows 1000
//	nonzeros 150000
//	shard part-00000-of-00002.libsvm.zst 500 74950 123456
//	shard part-00001-of-00002.libsvm.zst 500 75050 123789
//	end
//
// one "key value" per line in this order, then one line per shard in shard
// order (name, rows, nonzeros, file size in bytes), then "end". Totals must
// match the sum of the shard lines.
type Manifest struct {
	// Seed is Config.Seed of a shuffled set, 0 otherwise.
	Seed     uint64
	Shuffled bool
	// RunRows is, without Shuffle, the length of the runs dealt to the
	// shards round-robin (Config.BlockRows); 0 for a shuffled set.
	RunRows int
	Shards  []ShardInfo
}

// ShardInfo is one shard of a Manifest.
type ShardInfo struct {
	Name  string // base name within the shard directory
	Rows  int64
	NNZ   int64
	Bytes int64 // file size
}

// Rows returns the total number of rows.
func (m *Manifest) Rows() int64 {
	var n int64
	for _, s := range m.Shards {
		n += s.Rows
	}
	return n
}

// NNZ returns the total number of nonzeros.
func (m *Manifest) NNZ() int64 {
	var n int64
	for _, s := range m.Shards {
		n += s.NNZ
	}
	return n
}

// Bytes returns the total size of the shard files.
func (m *Manifest) Bytes() int64 {
	var n int64
	for _, s := range m.Shards {
		n += s.Bytes
	}
	return n
}

// ShardName returns the file name of shard i of n with extension ext:
// "part-%05d-of-%05d" followed by ext, e.g. part-00002-of-00004.libsvm.zst.
func ShardName(i, n int, ext string) string {
	return fmt.Sprintf("part-%05d-of-%05d%s", i, n, ext)
}

// shardNameRE matches the names ShardName produces, any extension
// (compiled on first use).
var shardNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^part-[0-9]{5}-of-[0-9]{5}(\..*)?$`) })

// IsShardName reports whether name is a name ShardName produces (any
// extension): a file Split writes before the manifest that completes the
// set.
func IsShardName(name string) bool { return shardNameRE().MatchString(name) }

// encode renders m in the manifest text format.
func (m *Manifest) encode() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s\nseed %d\nshuffled %t\nrun-rows %d\nshards %d\nrows %d\nnonzeros %d\n",
		manifestMagic, m.Seed, m.Shuffled, m.RunRows, len(m.Shards), m.Rows(), m.NNZ())
	for _, s := range m.Shards {
		fmt.Fprintf(&b, "shard %s %d %d %d\n", s.Name, s.Rows, s.NNZ, s.Bytes)
	}
	b.WriteString("end\n")
	return b.Bytes()
}

// writeManifest writes m to dir atomically (reader.CreateCompressed: a
// temporary file, sync, rename, directory sync), which also makes the
// renames of the shards before it durable.
func writeManifest(dir string, m *Manifest) error {
	path := filepath.Join(dir, ManifestName)
	out, err := reader.CreateCompressed(path) // no compression extension: plain
	if err != nil {
		return fmt.Errorf("shard: %w", err)
	}
	defer out.Abort()
	if _, err := out.Write(m.encode()); err != nil {
		return fmt.Errorf("shard: writing %s: %w", path, err)
	}
	if err := out.Close(); err != nil {
		return fmt.Errorf("shard: writing %s: %w", path, err)
	}
	return nil
}

// ReadManifest reads and checks the manifest of the shard directory dir.
// It does not look at the shard files; see Check. A missing or malformed
// manifest gives an error wrapping ErrIncomplete that names the file.
func ReadManifest(dir string) (*Manifest, error) {
	path := filepath.Join(dir, ManifestName)
	data, err := budget.ReadFile(path, maxManifestBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("shard: %s has no %s manifest (not a shard set, or one still being written or whose writing failed): %w", dir, ManifestName, ErrIncomplete)
	}
	if errors.Is(err, budget.ErrTooLarge) {
		return nil, fmt.Errorf("shard: %s: manifest larger than %d bytes: %w", path, maxManifestBytes, ErrIncomplete)
	}
	if err != nil {
		return nil, fmt.Errorf("shard: %w", err)
	}
	m, line, err := parseManifest(data)
	if err != nil {
		return nil, fmt.Errorf("shard: %s:%d: %w: %w", path, line, ErrIncomplete, err)
	}
	return m, nil
}

// parseManifest parses the manifest text format strictly; on error it
// returns the 1-based line at fault.
func parseManifest(data []byte) (*Manifest, int, error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<16)
	line := 0
	next := func() ([]string, bool) {
		if !sc.Scan() {
			return nil, false
		}
		line++
		return strings.Fields(sc.Text()), true
	}
	if f, ok := next(); !ok || strings.Join(f, " ") != manifestMagic {
		return nil, line, fmt.Errorf("first line is not %q", manifestMagic)
	}
	header := []string{"seed", "shuffled", "run-rows", "shards", "rows", "nonzeros"}
	vals := make([]uint64, len(header))
	m := &Manifest{}
	for i, key := range header {
		f, ok := next()
		if !ok || len(f) != 2 || f[0] != key {
			return nil, line + 1, fmt.Errorf("want %q line", key)
		}
		if key == "shuffled" {
			b, err := strconv.ParseBool(f[1])
			if err != nil {
				return nil, line, err
			}
			m.Shuffled = b
			continue
		}
		v, err := strconv.ParseUint(f[1], 10, 64)
		if err != nil {
			return nil, line, err
		}
		vals[i] = v
	}
	m.Seed = vals[0]
	if vals[2] > 1<<31 || vals[3] < 1 || vals[3] > MaxShards || vals[4] > 1<<62 || vals[5] > 1<<62 {
		return nil, line, errors.New("header value out of range")
	}
	m.RunRows = int(vals[2])
	n := int(vals[3])
	seen := make(map[string]bool, n)
	for range n {
		f, ok := next()
		if !ok || len(f) != 5 || f[0] != "shard" {
			return nil, line + 1, errors.New("want a shard line: shard NAME ROWS NONZEROS BYTES")
		}
		s := ShardInfo{Name: f[1]}
		if s.Name != filepath.Base(s.Name) || s.Name == "." || s.Name == ".." || strings.ContainsAny(s.Name, `/\`) || s.Name == ManifestName {
			return nil, line, fmt.Errorf("bad shard name %q", s.Name)
		}
		if seen[s.Name] {
			return nil, line, fmt.Errorf("shard %q listed twice", s.Name)
		}
		seen[s.Name] = true
		for k, p := range []*int64{&s.Rows, &s.NNZ, &s.Bytes} {
			v, err := strconv.ParseInt(f[2+k], 10, 64)
			if err != nil || v < 0 || v > 1<<62 {
				return nil, line, fmt.Errorf("bad count %q", f[2+k])
			}
			*p = v
		}
		m.Shards = append(m.Shards, s)
	}
	if f, ok := next(); !ok || len(f) != 1 || f[0] != "end" {
		return nil, line + 1, errors.New(`want "end" after the shard lines`)
	}
	if sc.Scan() {
		return nil, line + 1, errors.New(`text after "end"`)
	}
	if err := sc.Err(); err != nil {
		return nil, line, err
	}
	if uint64(m.Rows()) != vals[4] || uint64(m.NNZ()) != vals[5] {
		return nil, line, errors.New("totals do not match the shard lines")
	}
	return m, line, nil
}

// Check verifies that every shard the manifest of dir lists exists as a
// regular file of the recorded size, and returns the manifest. Errors wrap
// ErrIncomplete and name the file.
func Check(dir string) (*Manifest, error) {
	m, err := ReadManifest(dir)
	if err != nil {
		return nil, err
	}
	for _, s := range m.Shards {
		p := filepath.Join(dir, s.Name)
		fi, err := os.Stat(p)
		switch {
		case err != nil:
			return nil, fmt.Errorf("shard: %s: %w: %w", p, ErrIncomplete, err)
		case !fi.Mode().IsRegular():
			return nil, fmt.Errorf("shard: %s: %w: not a regular file", p, ErrIncomplete)
		case fi.Size() != s.Bytes:
			return nil, fmt.Errorf("shard: %s: %w: %d bytes, manifest says %d", p, ErrIncomplete, fi.Size(), s.Bytes)
		}
	}
	return m, nil
}

// IsShardSet reports whether path is a directory holding a complete shard
// set: a manifest that reads, and every shard it lists with the recorded
// size (see Check).
func IsShardSet(path string) bool {
	fi, err := os.Stat(path)
	if err != nil || !fi.IsDir() {
		return false
	}
	_, err = Check(path)
	return err == nil
}

// Files returns the shard files pattern names, in shard order:
//
//   - a directory: the shards its manifest lists, in manifest order, after
//     Check (an error wrapping ErrIncomplete if the set is not complete);
//   - anything else: a filepath.Glob pattern (a plain file name is a
//     pattern matching itself). The matches are sorted lexically; matches
//     that are directories, are named ManifestName, or whose names start
//     with "." when the pattern's last element does not (temporary files)
//     are skipped. No match is an error wrapping ErrNoMatch.
func Files(pattern string) ([]string, error) {
	if fi, err := os.Stat(pattern); err == nil && fi.IsDir() {
		files, _, err := dirFiles(pattern)
		return files, err
	}
	matches, err := filepath.Glob(pattern)
	if err != nil {
		return nil, fmt.Errorf("shard: pattern %q: %w", pattern, err)
	}
	hiddenOK := strings.HasPrefix(filepath.Base(pattern), ".")
	var files []string
	for _, p := range matches {
		base := filepath.Base(p)
		if base == ManifestName || (!hiddenOK && strings.HasPrefix(base, ".")) {
			continue
		}
		if fi, err := os.Stat(p); err != nil || fi.IsDir() {
			continue
		}
		files = append(files, p)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("shard: %q: %w", pattern, ErrNoMatch)
	}
	slices.Sort(files)
	return files, nil
}

// dirFiles returns the shard files of the shard directory dir, in manifest
// order, and its manifest, after Check.
func dirFiles(dir string) ([]string, *Manifest, error) {
	m, err := Check(dir)
	if err != nil {
		return nil, nil, err
	}
	files := make([]string, len(m.Shards))
	for i, s := range m.Shards {
		files[i] = filepath.Join(dir, s.Name)
	}
	return files, m, nil
}
