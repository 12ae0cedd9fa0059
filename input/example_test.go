package input_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/polyhedral/cpm/input"
	"github.com/polyhedral/cpm/sgd"
)

// Stream a LIBSVM file through a row cache into a double-sided CPM, as
// cpm train --stream --double-sided --cache does: the first run writes the
// cache while it trains, the second reads the cache instead of parsing the
// file, and both train the same model.
func Example() {
	dir, err := os.MkdirTemp("", "input-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	const data = "../testdata/uci/ionosphere.libsvm"
	cfg := input.Config{Cache: filepath.Join(dir, "ionosphere.cpmcache")}
	train := sgd.Config{K: 3, Iterations: 50_000, DoubleSided: true, Seed: 1}
	for range 2 {
		ctx := context.Background()
		in, err := input.Open(data, cfg)
		if err != nil {
			fmt.Println(err)
			return
		}
		m, _, err := sgd.TrainStream(ctx, train, in.Passes(ctx, 2), 1024, [2]float32{1, -1})
		in.Close()
		if err != nil {
			fmt.Println(err)
			return
		}
		rows, _, err := input.Load(data, cfg) // from the cache
		if err != nil {
			fmt.Println(err)
			return
		}
		c, err := sgd.NewClassifier(m)
		if err != nil {
			fmt.Println(err)
			return
		}
		wrong := 0
		for r, y := range rows.Labels {
			if got, _, _ := c.Predict(rows.Row(r)); got != y {
				wrong++
			}
		}
		fmt.Printf("cache %v: training error %d of %d rows\n", in.Cache().Use, wrong, rows.Rows())
	}
	// Output:
	// cache new: training error 12 of 351 rows
	// cache hit: training error 12 of 351 rows
}
