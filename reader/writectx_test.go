package reader

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// An output whose context is cancelled before Close is discarded in every
// format: Close (or an earlier Write) returns the context's error and
// neither the file nor a temporary is left.
func TestWithContextDiscardsOutput(t *testing.T) {
	rows := cacheRows(3000, 4)
	for _, name := range []string{"x.libsvm", "x.libsvm.zst", "x.arrow", "x.arrows", "x.parquet"} {
		dir := t.TempDir()
		ctx, cancel := context.WithCancel(context.Background())
		w, err := CreateBlocks(filepath.Join(dir, name), WithContext(ctx))
		if err != nil {
			t.Fatal(err)
		}
		err = w.Write(rows)
		cancel()
		if err == nil {
			err = w.Close()
		} else {
			w.Abort()
		}
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s: err = %v, want context.Canceled", name, err)
		}
		if es, _ := os.ReadDir(dir); len(es) > 0 {
			t.Errorf("%s: left %s", name, es[0].Name())
		}
	}
}
