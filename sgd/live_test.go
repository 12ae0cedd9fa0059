package sgd

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"runtime"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/polyhedral/cpm/input/shared"
	"github.com/polyhedral/cpm/model"
	"github.com/polyhedral/cpm/reader"
	"github.com/polyhedral/cpm/sparsevec"
)

// watchdog fails the test with a dump of every goroutine if stop is not
// called within d, so that a hang fails CI instead of stalling it.
func watchdog(t *testing.T, d time.Duration) (stop func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		select {
		case <-done:
		case <-time.After(d):
			var b strings.Builder
			pprof.Lookup("goroutine").WriteTo(&b, 2)
			panic("watchdog: " + t.Name() + " still running after " + d.String() + "\n" + b.String())
		}
	}()
	return func() { close(done) }
}

// sharedPasses is the sgd.Input of polytopes sharing each pass of src.
type sharedPasses struct{ p *shared.Passes }

func (s sharedPasses) Open(i int) (Blocks, error) { return s.p.Open(i) }
func (s sharedPasses) Leave(i int)                { s.p.Leave(i) }

// blockSource serves data in blocks of n rows, counting the blocks held.
func blockSource(data *sparsevec.CSR, n int) reader.BlockReader {
	live := 0
	return &fakeBlocks{data: data, n: n, live: &live}
}

// The two polytopes of a double-sided CPM share each pass of a streamed
// input; they train to the end with one worker and one P, and the model is
// the one two workers give.
func TestStreamSharedPassesOneWorker(t *testing.T) {
	data := polytopeData(rand.New(rand.NewPCG(3, 3)), 3000)
	train := func(workers, procs int) []byte {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		defer watchdog(t, 60*time.Second)()
		in := sharedPasses{shared.NewPasses(context.Background(), 2, func(int) (reader.BlockReader, error) {
			return blockSource(data, 64), nil
		})}
		cfg := Config{K: 3, Iterations: 20000, Seed: 4, DoubleSided: true, Workers: workers}
		m, _, err := TrainStream(context.Background(), cfg, in, 256, [2]float32{1, -1})
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := model.Write(&b, m); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	want := train(2, 2)
	for _, c := range [][2]int{{1, 1}, {1, 2}, {2, 1}, {3, 1}} {
		if got := train(c[0], c[1]); !bytes.Equal(got, want) {
			t.Errorf("workers %d, GOMAXPROCS %d: model differs from workers 2, GOMAXPROCS 2", c[0], c[1])
		}
	}
}

// Cancelling a streamed double-sided run ends it with the context's error,
// also while a polytope waits for the other in the shared pass.
func TestStreamCancelEndsSharedPass(t *testing.T) {
	data := polytopeData(rand.New(rand.NewPCG(5, 5)), 3000)
	for _, procs := range []int{1, 2} {
		func() {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			defer watchdog(t, 30*time.Second)()
			ctx, cancel := context.WithCancel(context.Background())
			opened := make(chan struct{}, 100)
			in := sharedPasses{shared.NewPasses(ctx, 2, func(int) (reader.BlockReader, error) {
				opened <- struct{}{}
				return blockSource(data, 64), nil
			})}
			go func() {
				<-opened
				<-opened // the second pass: training is well under way
				cancel()
			}()
			cfg := Config{K: 3, Iterations: 1 << 40, Seed: 4, DoubleSided: true, Workers: 1}
			_, _, err := TrainStream(ctx, cfg, in, 256, [2]float32{1, -1})
			if !errors.Is(err, context.Canceled) {
				t.Errorf("GOMAXPROCS %d: err = %v, want context.Canceled", procs, err)
			}
		}()
	}
}
