package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// cv writes a CPU profile with --cpuprofile, and refuses a directory for
// it before reading anything (exit 2).
func TestCVCPUProfile(t *testing.T) {
	dir := t.TempDir()
	prof := filepath.Join(dir, "cv.prof")
	code, _, stderr := cpm(t, "cv", "-q", "-r", "2", "-f", "3", "--learner", "kperceptron", "--cpuprofile", prof, heart)
	if strings.Contains(stderr, "already in use") {
		t.Skip("the test binary is profiling:", stderr)
	}
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if st, err := os.Stat(prof); err != nil || st.Size() == 0 {
		t.Errorf("cv --cpuprofile: %v", err)
	}
	dirHolds(t, dir, "cv.prof")
	if code, _, _ := cpm(t, "cv", "-q", "--cpuprofile", dir, "no-such-file"); code != 2 {
		t.Errorf("cv --cpuprofile DIR: exit %d, want 2", code)
	}
}
