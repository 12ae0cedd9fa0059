package shard

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/polyhedral/cpm/input/shared"
	"github.com/polyhedral/cpm/model"
	"github.com/polyhedral/cpm/reader"
	"github.com/polyhedral/cpm/sgd"
	"github.com/polyhedral/cpm/sparsevec"
)

// interleave concatenates whole shards in the order Reader documents,
// computed here independently of Reader: round k takes rows
// [k·blockRows, (k+1)·blockRows) of every shard that has them, in shard
// order.
func interleave(shards []*sparsevec.CSR, blockRows int) *sparsevec.CSR {
	out := &sparsevec.CSR{}
	for k := 0; ; k++ {
		any := false
		for _, s := range shards {
			for r := k * blockRows; r < min(s.Rows(), (k+1)*blockRows); r++ {
				out.Append(s.Labels[r], s.Row(r))
				any = true
			}
		}
		if !any {
			return out
		}
	}
}

// trainBytes trains a binary CPM with sgd.TrainStream from open and
// returns the model file's bytes.
func trainBytes(t *testing.T, cfg sgd.Config, in sgd.Input) []byte {
	t.Helper()
	m, _, err := sgd.TrainStream(context.Background(), cfg, in, 300, [2]float32{1, -1})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := model.Write(&b, m); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// The key property: a model trained from a shard set is byte-identical to
// the model trained from one file holding the same rows in the same order
// (the interleave order), and differs from the one trained on the input in
// its original order, so the check can tell orders apart.
func TestTrainFromShardsEqualsSingleFile(t *testing.T) {
	in := genRows(21, 2500, 80, 30)
	dir := t.TempDir()
	src := filepath.Join(dir, "in.libsvm.zst")
	writeRows(t, src, in)
	const blockRows = 64
	for _, ext := range []string{".libsvm.zst", ".arrow"} {
		t.Run(ext, func(t *testing.T) {
			set := filepath.Join(dir, "set"+ext)
			man, err := Split(context.Background(), src, set, Config{Shards: 3, Shuffle: true, Seed: 17, Ext: ext, BlockRows: blockRows})
			if err != nil {
				t.Fatal(err)
			}
			var shards []*sparsevec.CSR
			for _, p := range shardPaths(set, man) {
				shards = append(shards, load(t, p))
			}
			single := filepath.Join(dir, "single"+ext+".libsvm.zst")
			want := interleave(shards, blockRows)
			writeRows(t, single, want)

			// The shard set reads back in exactly that order.
			br, err := Open(set, ReadConfig{BlockRows: blockRows})
			if err != nil {
				t.Fatal(err)
			}
			got, _ := readAll(t, br)
			sameRows(t, got, want)

			for _, cfg := range []sgd.Config{
				{K: 3, Iterations: 12000, Seed: 5},                   // about 5 passes, reopening the set each time
				{K: 2, Iterations: 6000, Seed: 6, DoubleSided: true}, // two polytopes reading concurrently
			} {
				fromShards := trainBytes(t, cfg, sgd.OpenFunc(func() (sgd.Blocks, error) {
					return Open(set, ReadConfig{BlockRows: blockRows})
				}))
				fromSingle := trainBytes(t, cfg, sgd.OpenFunc(func() (sgd.Blocks, error) {
					return reader.OpenBlocks(single, 1000)
				}))
				if !bytes.Equal(fromShards, fromSingle) {
					t.Fatalf("%+v: model from the shard set differs from the model from the single file", cfg)
				}
				// The polytopes sharing each pass over the shard set
				// (shared.Passes holds several blocks at once).
				shared := trainBytes(t, cfg, passes{shared.NewPasses(context.Background(), 1+b2i(cfg.DoubleSided), func(int) (reader.BlockReader, error) {
					return Open(set, ReadConfig{BlockRows: blockRows})
				})})
				if !bytes.Equal(shared, fromSingle) {
					t.Fatalf("%+v: model from shared passes over the shard set differs from the model from the single file", cfg)
				}
				fromInput := trainBytes(t, cfg, sgd.OpenFunc(func() (sgd.Blocks, error) {
					return reader.OpenBlocks(src, 1000)
				}))
				if bytes.Equal(fromShards, fromInput) {
					t.Fatalf("%+v: model from the input order equals the shard model: the test cannot tell orders apart", cfg)
				}
			}
		})
	}
}

// passes adapts shared.Passes to sgd.Input.
type passes struct{ p *shared.Passes }

func (p passes) Open(i int) (sgd.Blocks, error) { return p.p.Open(i) }
func (p passes) Leave(i int)                    { p.p.Leave(i) }

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
