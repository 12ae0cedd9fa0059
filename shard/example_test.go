package shard_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/polyhedral/cpm/shard"
)

// Split a small LIBSVM file into three shards in runs of two rows, then
// read the set back: with the BlockRows it was written with, the rows come
// back in input order.
func Example() {
	dir, err := os.MkdirTemp("", "shard-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	var text strings.Builder
	for i := range 10 {
		fmt.Fprintf(&text, "%d %d:1\n", i, i+1)
	}
	in := filepath.Join(dir, "in.libsvm")
	if err := os.WriteFile(in, []byte(text.String()), 0o644); err != nil {
		log.Fatal(err)
	}

	out := filepath.Join(dir, "set")
	m, err := shard.Split(context.Background(), in, out, shard.Config{Shards: 3, BlockRows: 2})
	if err != nil {
		log.Fatal(err)
	}
	for _, s := range m.Shards {
		fmt.Println(s.Name, s.Rows, "rows")
	}

	br, err := shard.Open(out, shard.ReadConfig{BlockRows: 2})
	if err != nil {
		log.Fatal(err)
	}
	defer br.Close()
	for {
		b, err := br.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			log.Fatal(err)
		}
		fmt.Print(b.Labels, " ")
		br.Release(b)
	}
	fmt.Println()
	// Output:
	// part-00000-of-00003.libsvm.zst 4 rows
	// part-00001-of-00003.libsvm.zst 4 rows
	// part-00002-of-00003.libsvm.zst 2 rows
	// [0 1] [2 3] [4 5] [6 7] [8 9]
}
