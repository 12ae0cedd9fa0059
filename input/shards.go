package input

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/polyhedral/cpm/shard"
)

// IsShardSet reports whether path names a shard set rather than a file: a
// directory, or a pattern with glob metacharacters.
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
