package input

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/polyhedral/cpm/input/shared"
	"github.com/polyhedral/cpm/reader"
	"github.com/polyhedral/cpm/sgd"
	"github.com/polyhedral/cpm/sparsevec"
)

// Passes returns the sgd.Input of n polytopes (1, or 2 for a double-sided
// CPM) trained by sgd.TrainStream: they share each pass (shared.Passes),
// so the source is read once per pass for all of them, and the time each
// waits for rows is counted in Stats. Cancelling ctx ends every wait.
// Call it once per training run.
func (in *Input) Passes(ctx context.Context, n int) sgd.Input {
	in.mu.Lock()
	in.waits = make([]atomic.Int64, n)
	in.mu.Unlock()
	return &sharedInput{p: shared.NewPasses(ctx, n, in.OpenPass), waits: in.waits}
}

// sharedInput is the sgd.Input of Passes.
type sharedInput struct {
	p     *shared.Passes
	waits []atomic.Int64
}

var _ sgd.Input = (*sharedInput)(nil)

func (s *sharedInput) Open(i int) (sgd.Blocks, error) {
	b, err := s.p.Open(i)
	if err != nil {
		return nil, err
	}
	return &waitTimer{BlockReader: b, wait: &s.waits[i]}, nil
}

func (s *sharedInput) Leave(i int) { s.p.Leave(i) }

// waitTimer adds the time a polytope spends waiting for blocks to wait.
type waitTimer struct {
	reader.BlockReader
	wait *atomic.Int64
}

func (w *waitTimer) Next() (*sparsevec.CSR, error) {
	t := time.Now()
	b, err := w.BlockReader.Next()
	w.wait.Add(int64(time.Since(t)))
	return b, err
}

// CacheUse says what a run does with its cache.
type CacheUse int

// The uses of a cache.
const (
	CacheNone  CacheUse = iota // no cache was asked for
	CacheHit                   // the cache matches the source: every pass reads it
	CacheNew                   // there is no cache file yet: the first pass writes it
	CacheStale                 // the cache is stale or corrupt: the first pass rewrites it
	CacheSpill                 // standard input: the first pass keeps its rows in a temporary spill file for the later passes
	CacheTemp                  // TempCache: the first pass writes a temporary cache for the later passes
)

var cacheUseNames = [...]string{"none", "hit", "new", "stale", "spill", "temp"}

func (u CacheUse) String() string {
	if u < 0 || int(u) >= len(cacheUseNames) {
		return "CacheUse(?)"
	}
	return cacheUseNames[u]
}

// CacheStatus is what Open decided about the cache.
type CacheStatus struct {
	Path   string // the cache file ("" for none)
	Use    CacheUse
	Reason error // with CacheStale: why the cache is rebuilt
}

// Cache returns what Open decided about the cache.
func (in *Input) Cache() CacheStatus {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.status
}

// Stats splits the time of streamed training between reading and
// training.
type Stats struct {
	FirstPass   time.Duration // wall time of pass 1 (read, parse, cache write); 0 until it ends
	CacheWrite  time.Duration // of FirstPass, the time spent encoding and writing the cache
	CacheBuilt  bool          // the first pass completed the cache
	CacheReused bool          // the passes read a cache that an earlier run wrote
	// CacheDropped, with Config.Optional, says why the cache was given
	// up (an error writing it, or putting it in place); nil otherwise.
	CacheDropped error
	Wait         []time.Duration // per polytope of Passes: time blocked waiting for rows
}

// Stats returns the figures of the passes so far.
func (in *Input) Stats() Stats {
	in.mu.Lock()
	defer in.mu.Unlock()
	s := Stats{FirstPass: in.firstPass, CacheWrite: in.cacheWrite, CacheBuilt: in.cacheBuilt, CacheReused: in.status.Use == CacheHit, CacheDropped: in.dropped}
	for i := range in.waits {
		s.Wait = append(s.Wait, time.Duration(in.waits[i].Load()))
	}
	return s
}
