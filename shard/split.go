package shard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/polyhedral/cpm/internal/rng"
	"github.com/polyhedral/cpm/reader"
	"github.com/polyhedral/cpm/reader/libsvm"
	"github.com/polyhedral/cpm/sparsevec"
)

// bucketPrefix starts the names of Split's temporary bucket files.
const bucketPrefix = ".cpm-shard-bucket-"

// maxSplitDepth bounds the re-scattering of a bucket that exceeds
// MaxBucketBytes; each level divides the expected size by at least two.
const maxSplitDepth = 6

// maxSubBuckets bounds the fan-out of one re-scattering step.
const maxSubBuckets = 1024

// Split reads the input file in, in any format reader.OpenBlocks reads (the
// options apply to reading it), and writes its rows to cfg.Shards shard
// files in outDir, then the manifest, which it returns. See the package
// documentation for the two passes and Config for the row-to-shard rule.
// Every row of the input is in exactly one shard, exactly once, bit for
// bit.
//
// outDir is created if needed. It must be empty, or hold only files of the
// shard set being written (the same names: an earlier or interrupted run
// with the same Shards and Ext, whose files are replaced) and Split's own
// temporary files (which are removed); anything else is refused with an
// error wrapping ErrNotEmpty unless cfg.Force. An existing manifest is
// removed before anything else is written, so outDir never passes for a
// complete set while Split runs.
//
// On error or cancellation of ctx, Split removes its bucket files and every
// shard it wrote, and outDir if it created it and left it empty; it leaves
// no manifest. Bad input is reported as the
// reader reports it; for LIBSVM text a *reader.ParseError naming the file
// and line.
func Split(ctx context.Context, in, outDir string, cfg Config, opts ...reader.Option) (*Manifest, error) {
	return split(ctx, in, outDir, cfg, hooks{open: func(path string, blockRows int) (reader.BlockReader, error) {
		return reader.OpenBlocks(path, blockRows, opts...)
	}})
}

// hooks are the seams tests use to watch Split.
type hooks struct {
	open   func(path string, blockRows int) (reader.BlockReader, error)
	onLoad func(rows, nnz int64) // a bucket is loaded into memory
}

// splitter holds the state of one Split.
type splitter struct {
	ctx     context.Context
	cfg     Config
	dir     string
	names   []string
	hooks   hooks
	buckets []*bucket // the N buckets of pass 1
	temps   []*bucket // every bucket file created, for cleanup
	written []string  // shard files in place, removed on failure
	shards  []ShardInfo

	phase     Phase
	phaseRows int64
	nextTick  int64
	phaseT0   time.Time

	// qids is 0 before the first row, then 1 if the input's rows have no
	// query ids, 2 if they have; the buckets and shards carry them.
	qids int8
}

// hasQid reports whether the input's rows carry query ids.
func (s *splitter) hasQid() bool { return s.qids == 2 }

// qidAt returns the query id of row r of m, or 0 if it has none.
func qidAt(m *sparsevec.CSR, r int) int64 {
	if m.HasQid() {
		return m.Qid[r]
	}
	return 0
}

func split(ctx context.Context, in, outDir string, cfg Config, h hooks) (_ *Manifest, err error) {
	cfg, err = cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	n := cfg.Shards
	names := make([]string, n)
	for i := range names {
		names[i] = ShardName(i, n, cfg.Ext)
	}
	_, statErr := os.Stat(outDir)
	created := errors.Is(statErr, fs.ErrNotExist)
	stale, err := prepareDir(outDir, names, cfg.Force)
	if err != nil {
		return nil, err
	}
	s := &splitter{ctx: ctx, cfg: cfg, dir: outDir, names: names, hooks: h}
	defer func() {
		for _, b := range s.temps {
			b.remove()
		}
		if err != nil {
			for _, p := range s.written {
				os.Remove(p)
			}
			if created {
				os.Remove(outDir) // only if empty
			}
		}
	}()
	if err := s.scatter(in); err != nil {
		return nil, err
	}
	s.startPhase(WriteShards)
	for i := range n {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := s.write(i); err != nil {
			return nil, err
		}
	}
	for _, name := range stale {
		if err := os.Remove(filepath.Join(outDir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("shard: removing a file of the earlier shard set: %w", err)
		}
	}
	m := &Manifest{Shuffled: cfg.Shuffle, Shards: s.shards}
	if cfg.Shuffle {
		m.Seed = cfg.Seed
	} else {
		m.RunRows = cfg.BlockRows
	}
	if err := writeManifest(outDir, m); err != nil {
		return nil, err
	}
	return m, nil
}

// isSplitTemp reports whether name is a temporary file of Split or of
// reader.CreateCompressed writing a shard or the manifest.
func isSplitTemp(name string) bool {
	if strings.HasPrefix(name, bucketPrefix) {
		return true
	}
	i := strings.Index(name, ".tmp-")
	if !strings.HasPrefix(name, ".") || i < 0 {
		return false
	}
	target := name[1:i]
	return target == ManifestName || shardNameRE().MatchString(target)
}

// prepareDir creates dir if needed and checks what it holds (see Split).
// It removes Split's stale temporary files and any manifest, and returns
// the names of an earlier shard set's files to remove once the new set is
// written (with force).
func prepareDir(dir string, names []string, force bool) (stale []string, err error) {
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, fmt.Errorf("shard: %w", err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("shard: %w", err)
	}
	ours := make(map[string]bool, len(names)+1)
	for _, name := range names {
		ours[name] = true
	}
	ours[ManifestName] = true
	listed := map[string]bool{}
	if m, err := ReadManifest(dir); err == nil {
		for _, s := range m.Shards {
			listed[s.Name] = true
		}
	}
	var temps, foreign []string
	for _, e := range entries {
		name := e.Name()
		switch {
		case ours[name]:
		case isSplitTemp(name):
			temps = append(temps, name)
		case listed[name] || shardNameRE().MatchString(name):
			stale = append(stale, name)
		default:
			foreign = append(foreign, name)
		}
	}
	if !force && len(stale)+len(foreign) > 0 {
		others := append(stale, foreign...)
		more := ""
		if len(others) > 3 {
			more = fmt.Sprintf(" and %d more", len(others)-3)
			others = others[:3]
		}
		return nil, fmt.Errorf("shard: %s holds %s%s: %w (choose an empty directory, or force)", dir, strings.Join(others, ", "), more, ErrNotEmpty)
	}
	for _, name := range append(temps, ManifestName) {
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("shard: %w", err)
		}
	}
	return stale, nil
}

// startPhase resets the progress counters for phase p.
func (s *splitter) startPhase(p Phase) {
	s.phase, s.phaseRows, s.nextTick, s.phaseT0 = p, 0, s.cfg.ProgressEvery, time.Now()
}

// tick counts rows done and calls Progress every ProgressEvery rows.
func (s *splitter) tick(rows int64, shard int) {
	s.phaseRows += rows
	if s.cfg.Progress == nil || s.phaseRows < s.nextTick {
		return
	}
	for s.nextTick <= s.phaseRows {
		s.nextTick += s.cfg.ProgressEvery
	}
	s.cfg.Progress(Progress{Phase: s.phase, Rows: s.phaseRows, Shard: shard, Elapsed: time.Since(s.phaseT0)})
}

// inputErr names the input in err unless it already does.
func inputErr(in string, err error) error {
	if strings.Contains(err.Error(), in) {
		return err
	}
	return fmt.Errorf("shard: reading %s: %w", in, err)
}

// checkRow refuses a row LIBSVM text cannot hold, with the sentinels of
// libsvm.Writer. Rows read from LIBSVM text always pass.
func checkRow(label float32, x sparsevec.Vector) error {
	if math.IsNaN(float64(label)) || math.IsInf(float64(label), 0) {
		return fmt.Errorf("%w: label %v", reader.ErrNonFinite, label)
	}
	var prev uint32
	for i, j := range x.Idx {
		switch {
		case j == 0:
			return reader.ErrIndexZero
		case i > 0 && j == prev:
			return fmt.Errorf("%w: index %d", reader.ErrDuplicate, j)
		case i > 0 && j < prev:
			return fmt.Errorf("%w: index %d after %d", reader.ErrUnsorted, j, prev)
		}
		prev = j
	}
	if !x.IsFinite() {
		return reader.ErrNonFinite
	}
	return nil
}

// scatter is pass 1: it streams the input into the N bucket files, holding
// one input block at a time.
func (s *splitter) scatter(in string) error {
	s.startPhase(Scatter)
	n := s.cfg.Shards
	bufSize := min(max((32<<20)/n, 16<<10), 1<<20)
	s.buckets = make([]*bucket, n)
	for i := range n {
		b, err := newBucket(s.dir, fmt.Sprintf("%s%05d", bucketPrefix, i), bufSize)
		if err != nil {
			return err
		}
		s.buckets[i], s.temps = b, append(s.temps, b)
	}
	br, err := s.hooks.open(in, s.cfg.BlockRows)
	if err != nil {
		return inputErr(in, err)
	}
	defer br.Close()
	var ord uint64
	run := uint64(s.cfg.BlockRows)
	for {
		if err := s.ctx.Err(); err != nil {
			return err
		}
		blk, err := br.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return inputErr(in, err)
		}
		if err := s.noteQid(in, blk, ord); err != nil {
			br.Release(blk)
			return err
		}
		for r := range blk.Rows() {
			label, x := blk.Labels[r], blk.Row(r)
			if err := checkRow(label, x); err != nil {
				br.Release(blk)
				return fmt.Errorf("shard: %s: row %d: %w", in, ord+1, err)
			}
			var k int
			if s.cfg.Shuffle {
				k = bucketOf(s.cfg.Seed, ord, n)
			} else {
				k = int(ord / run % uint64(n))
			}
			if err := s.buckets[k].add(label, qidAt(blk, r), x); err != nil {
				br.Release(blk)
				return err
			}
			ord++
		}
		rows := blk.Rows()
		br.Release(blk)
		s.tick(int64(rows), 0)
	}
	if err := br.Close(); err != nil {
		return inputErr(in, err)
	}
	for _, b := range s.buckets {
		if err := b.finish(); err != nil {
			return err
		}
	}
	return nil
}

// noteQid records, from the first block with rows, whether the input's
// rows carry query ids, and refuses a later block that disagrees (rows
// follows the rows before blk), and query ids for shards of a format
// without them (Arrow, Parquet), which would drop them.
func (s *splitter) noteQid(in string, blk *sparsevec.CSR, rows uint64) error {
	if blk.Rows() == 0 {
		return nil
	}
	q := int8(1)
	if blk.HasQid() {
		q = 2
	}
	if s.qids == 0 {
		if q == 2 && reader.FormatForOutput(s.cfg.Ext) != reader.LIBSVM {
			return fmt.Errorf("shard: %s: the rows have query ids (qid:N), which %s shards cannot hold; write LIBSVM text shards (Ext %s)", in, reader.FormatForOutput(s.cfg.Ext), DefaultExt)
		}
		s.qids = q
		for _, b := range s.buckets {
			b.qid = q == 2
		}
	}
	if q != s.qids {
		return fmt.Errorf("shard: %s: row %d: %w", in, rows+1, libsvm.ErrMixedQID)
	}
	return nil
}

// sink is the file a shard's rows go to.
type sink interface {
	// add writes a row; qid is its query id when the input has them.
	add(label float32, qid int64, x sparsevec.Vector) error
	// close puts the file in place and returns its size.
	close() (int64, error)
	// abort discards the file; a no-op after close.
	abort()
}

// textSink writes LIBSVM text through reader.CreateCompressed, at the
// configured zstd level.
type textSink struct {
	out *reader.OutputFile
	w   *libsvm.Writer
	qid bool
}

func (t *textSink) add(label float32, qid int64, x sparsevec.Vector) error {
	if t.qid {
		return t.w.WriteQid(label, qid, x)
	}
	return t.w.Write(label, x)
}

func (t *textSink) close() (int64, error) {
	if err := t.w.Flush(); err != nil {
		return 0, err
	}
	if err := t.out.Close(); err != nil {
		return 0, err
	}
	return t.out.Written(), nil
}

func (t *textSink) abort() { t.out.Abort() }

// blockSink gathers rows into blocks of n rows for a reader.BlockWriter
// (Arrow, Parquet).
type blockSink struct {
	path string
	w    reader.BlockWriter
	blk  sparsevec.CSR
	n    int
	qid  bool
}

func (b *blockSink) add(label float32, qid int64, x sparsevec.Vector) error {
	if b.qid {
		b.blk.AppendQid(label, qid, x)
	} else {
		b.blk.Append(label, x)
	}
	if b.blk.Rows() < b.n {
		return nil
	}
	return b.flush()
}

func (b *blockSink) flush() error {
	if b.blk.Rows() == 0 {
		return nil
	}
	err := b.w.Write(&b.blk)
	b.blk.Reset()
	return err
}

func (b *blockSink) close() (int64, error) {
	if err := b.flush(); err != nil {
		return 0, err
	}
	if err := b.w.Close(); err != nil {
		return 0, err
	}
	fi, err := os.Stat(b.path)
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

func (b *blockSink) abort() { b.w.Abort() }

// createSink creates the shard file at path in the format of its
// extension.
func (s *splitter) createSink(path string) (sink, error) {
	if reader.FormatForOutput(path) == reader.LIBSVM {
		out, err := reader.CreateCompressed(path, reader.WithZstdLevel(s.cfg.ZstdLevel))
		if err != nil {
			return nil, err
		}
		return &textSink{out: out, w: libsvm.NewWriter(out), qid: s.hasQid()}, nil
	}
	w, err := reader.CreateBlocks(path, reader.WithBatchRows(s.cfg.BlockRows))
	if err != nil {
		return nil, err
	}
	return &blockSink{path: path, w: w, n: s.cfg.BlockRows, qid: s.hasQid()}, nil
}

// pathErr names path in err unless err names it already.
func pathErr(path string, err error) error {
	if strings.Contains(err.Error(), path) {
		return fmt.Errorf("shard: %w", err)
	}
	return fmt.Errorf("shard: %s: %w", path, err)
}

// shardWriter writes rows to one shard's sink and counts them.
type shardWriter struct {
	s         *splitter
	shard     int
	path      string
	out       sink
	rows, nnz int64
}

func (sw *shardWriter) write(label float32, qid int64, x sparsevec.Vector) error {
	if err := sw.out.add(label, qid, x); err != nil {
		return pathErr(sw.path, err)
	}
	sw.rows++
	sw.nnz += int64(len(x.Idx))
	if sw.rows&1023 == 0 {
		sw.s.tick(1024, sw.shard)
	}
	return nil
}

// write is pass 2 for shard i: bucket i, shuffled or as it is, becomes the
// shard file, which is put in place complete.
func (s *splitter) write(i int) error {
	path := filepath.Join(s.dir, s.names[i])
	out, err := s.createSink(path)
	if err != nil {
		return pathErr(path, err)
	}
	defer out.abort()
	sw := &shardWriter{s: s, shard: i, path: path, out: out}
	b := s.buckets[i]
	if s.cfg.Shuffle {
		err = s.shuffleBucket(sw, b, uint64(i), 0)
	} else {
		err = copyBucket(sw, b)
	}
	if err != nil {
		return err
	}
	size, err := out.close()
	if err != nil {
		return pathErr(path, err)
	}
	s.written = append(s.written, path)
	s.tick(sw.rows&1023, i)
	s.shards = append(s.shards, ShardInfo{Name: s.names[i], Rows: sw.rows, NNZ: sw.nnz, Bytes: size})
	b.remove()
	return nil
}

// copyBucket writes the rows of b in the order they were scattered.
func copyBucket(sw *shardWriter, b *bucket) error {
	rd := b.reader(1 << 20)
	row := &sparsevec.CSR{}
	for {
		row.Reset()
		row.Ptr = append(row.Ptr[:0], 0)
		err := rd.next(row)
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if err := sw.write(row.Labels[0], qidAt(row, 0), row.Row(0)); err != nil {
			return err
		}
	}
	if sw.rows != b.rows {
		return fmt.Errorf("shard: bucket file %s: %w: %d rows, want %d", b.path, errBucketCorrupt, sw.rows, b.rows)
	}
	return nil
}

// shuffleBucket writes the rows of b in a uniformly random order drawn from
// a PCG seeded by (Seed, key). A bucket over MaxBucketBytes is first
// scattered into sub-buckets by a hash keyed by (Seed, key), which are
// shuffled in turn with derived keys.
func (s *splitter) shuffleBucket(sw *shardWriter, b *bucket, key uint64, depth int) error {
	mem := memBytes(b.rows, b.nnz)
	if mem > s.cfg.MaxBucketBytes && b.rows > 1 && depth < maxSplitDepth {
		return s.splitBucket(sw, b, key, depth, mem)
	}
	if b.rows > math.MaxInt32 {
		return fmt.Errorf("shard: bucket of %d rows (more than 2^31-1): use more shards or a smaller MaxBucketBytes", b.rows)
	}
	rows, nnz := int(b.rows), int(b.nnz)
	m := &sparsevec.CSR{
		Labels: make([]float32, 0, rows),
		Ptr:    append(make([]int, 0, rows+1), 0),
		Idx:    make([]uint32, 0, nnz),
		Val:    make([]float32, 0, nnz),
	}
	rd := b.reader(1 << 20)
	for {
		err := rd.next(m)
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if m.Rows() > rows || len(m.Idx) > nnz {
			return fmt.Errorf("shard: bucket file %s: %w: more rows than written", b.path, errBucketCorrupt)
		}
	}
	if m.Rows() != rows || len(m.Idx) != nnz {
		return fmt.Errorf("shard: bucket file %s: %w: %d rows, want %d", b.path, errBucketCorrupt, m.Rows(), rows)
	}
	if s.hooks.onLoad != nil {
		s.hooks.onLoad(b.rows, b.nnz)
	}
	perm := make([]int32, rows)
	for i := range perm {
		perm[i] = int32(i)
	}
	rng.ShuffleMod(rand.NewPCG(s.cfg.Seed, key), perm)
	for _, r := range perm {
		if err := sw.write(m.Labels[r], qidAt(m, int(r)), m.Row(int(r))); err != nil {
			return err
		}
	}
	return nil
}

// splitBucket scatters b into sub-buckets, each expected to fit in half
// of MaxBucketBytes, and shuffles them in turn into sw. The j-th row of b
// goes to sub-bucket bucketOf(rng.SplitMix64Finalizer(Seed ^ subKey(key,
// 0)), j, k); rows are assigned independently and uniformly, so shuffling
// each sub-bucket and concatenating them is a uniform permutation of b.
func (s *splitter) splitBucket(sw *shardWriter, b *bucket, key uint64, depth int, mem int64) error {
	k := int(min((mem+s.cfg.MaxBucketBytes-1)/s.cfg.MaxBucketBytes*2, maxSubBuckets))
	hk := rng.SplitMix64Finalizer(s.cfg.Seed ^ subKey(key, 0))
	subs := make([]*bucket, k)
	for j := range subs {
		sb, err := newBucket(s.dir, fmt.Sprintf("%s%05d-%d-%d", bucketPrefix, sw.shard, depth+1, j), 64<<10)
		if err != nil {
			return err
		}
		sb.qid = b.qid
		subs[j], s.temps = sb, append(s.temps, sb)
	}
	rd := b.reader(1 << 20)
	row := &sparsevec.CSR{}
	for ord := uint64(0); ; ord++ {
		row.Reset()
		row.Ptr = append(row.Ptr[:0], 0)
		err := rd.next(row)
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if err := subs[bucketOf(hk, ord, k)].add(row.Labels[0], qidAt(row, 0), row.Row(0)); err != nil {
			return err
		}
	}
	b.remove() // free its disk space before the sub-buckets are shuffled
	for j, sb := range subs {
		if err := s.ctx.Err(); err != nil {
			return err
		}
		if err := sb.finish(); err != nil {
			return err
		}
		if err := s.shuffleBucket(sw, sb, subKey(key, j+1), depth+1); err != nil {
			return err
		}
		sb.remove()
	}
	return nil
}
