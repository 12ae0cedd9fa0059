package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/polyhedral/cpm/reader"
	"github.com/polyhedral/cpm/shard"
	"github.com/polyhedral/cpm/sparsevec"
)

// shardRowKeys renders every row of m exactly (float bits), sorted, for
// comparing row multisets.
func shardRowKeys(m *sparsevec.CSR) []string {
	var keys []string
	for r := range m.Rows() {
		var b strings.Builder
		fmt.Fprintf(&b, "%x", m.Labels[r])
		x := m.Row(r)
		for i, j := range x.Idx {
			fmt.Fprintf(&b, " %d:%x", j, x.Val[i])
		}
		keys = append(keys, b.String())
	}
	slices.Sort(keys)
	return keys
}

func TestShardCommand(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "set")
	code, _, errs := cpm(t, "shard", "-n", "3", "--shuffle", "--seed", "5", "--progress", "--block-rows", "16", heart, out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(errs, "shard: 270 rows,") || !strings.Contains(errs, "-> 3 shards in "+out+" (shuffled with seed 5)") {
		t.Fatalf("summary missing from stderr:\n%s", errs)
	}
	if !shard.IsShardSet(out) {
		t.Fatal("no complete shard set written")
	}
	files, err := shard.Files(out)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i, f := range files {
		if want := filepath.Join(out, shard.ShardName(i, 3, ".libsvm.zst")); f != want {
			t.Fatalf("shard %d is %s, want %s", i, f, want)
		}
		m, err := reader.Load(f)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, shardRowKeys(m)...)
	}
	slices.Sort(got)
	in, err := reader.Load(heart)
	if err != nil {
		t.Fatal(err)
	}
	if want := shardRowKeys(in); !slices.Equal(got, want) {
		t.Fatalf("shards hold %d rows that differ from the input's %d", len(got), len(want))
	}

	// The same command again over the same set is fine; another -n is
	// refused, and accepted with --force.
	if code, _, errs := cpm(t, "shard", "-n", "3", heart, out); code != 0 {
		t.Fatalf("rerun: exit %d: %s", code, errs)
	}
	code, _, errs = cpm(t, "shard", "-n", "2", heart, out)
	if code != 1 || !strings.Contains(errs, "--force") {
		t.Fatalf("other set: exit %d, stderr %q; want 1 and a hint at --force", code, errs)
	}
	if code, _, errs := cpm(t, "shard", heart, out, "-n", "2", "--force", "--ext", ".libsvm.gz"); code != 0 {
		t.Fatalf("--force: exit %d: %s", code, errs)
	}
	m, err := shard.ReadManifest(out)
	if err != nil || len(m.Shards) != 2 || m.Shards[0].Name != "part-00000-of-00002.libsvm.gz" {
		t.Fatalf("manifest after --force: %+v, %v", m, err)
	}
	if names, _ := os.ReadDir(out); len(names) != 3 {
		t.Fatalf("after --force the directory holds %d files, want 2 shards and the manifest", len(names))
	}
}

func TestShardCommandErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.libsvm")
	if err := os.WriteFile(bad, []byte("+1 1:0.5\n-1 2:x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{heart, out}, 2, "-n 0"},
		{[]string{"-n", "2", heart}, 2, "want IN and OUTDIR"},
		{[]string{"-n", "2", "--level", "huge", heart, out}, 2, "huge"},
		{[]string{"-n", "2", "--ext", ".cpmcache", heart, out}, 2, "unsupported shard format"},
		{[]string{"-n", "2", "--block-rows", "0", heart, out}, 2, "--block-rows"},
		{[]string{"-n", "2", bad, out}, exitBadInput, bad + ":2:"},
	}
	for _, tc := range tests {
		code, _, errs := cpm(t, append([]string{"shard"}, tc.args...)...)
		if code != tc.code || !strings.Contains(errs, tc.want) {
			t.Errorf("cpm shard %s: exit %d, stderr %q; want exit %d mentioning %q", strings.Join(tc.args, " "), code, errs, tc.code, tc.want)
		}
	}
	if names, _ := os.ReadDir(out); len(names) != 0 {
		t.Errorf("failed runs left %d files in %s", len(names), out)
	}
}
