package main

import (
	"os"
	"path/filepath"

	"github.com/polyhedral/cpm/shard"
)

func isDir(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}

// shardIdentity is the file that identifies a shard directory's contents
// for the cache: its manifest, written last and atomically by cpm shard.
// (newInput refuses a cache for a glob, which has no manifest.)
func shardIdentity(dir string) string {
	return filepath.Join(dir, shard.ManifestName)
}
