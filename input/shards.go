package input

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/polyhedral/cpm/shard"
)

// IsShardSet reports whether path names several files rather than one, by
// its form alone: a directory (a shard set or not), or a pattern with glob
// metacharacters. Resolve tells which files.
func IsShardSet(path string) bool {
	if strings.ContainsAny(path, "*?[") {
		return true
	}
	return isDir(path)
}

func isDir(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}

// shardIdentity is the file that identifies a shard directory's contents
// for the cache: its manifest, written last and atomically by shard.Split.
// (CachePath refuses a cache for a glob, which has no manifest.)
func shardIdentity(dir string) string {
	return filepath.Join(dir, shard.ManifestName)
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}
