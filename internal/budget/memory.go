package budget

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
)

// fallbackMemory is what Physical assumes when the machine's memory cannot
// be read (a platform other than Linux, or a failing sysinfo call).
const fallbackMemory = 8 << 30

// Physical returns the memory available to this process in bytes: the
// machine's physical memory (sysinfo on Linux), lowered to the cgroup v2
// limit (/sys/fs/cgroup/memory.max) when one is set, as in a container.
// Where it cannot be read it returns 8 GiB. ok says whether the figure
// was read rather than assumed.
func Physical() (bytes int64, ok bool) {
	physOnce.Do(func() {
		physBytes, physOK = physical()
		if c, ok := cgroupLimit(); ok && (!physOK || c < physBytes) {
			physBytes, physOK = c, true
		}
		if !physOK {
			physBytes = fallbackMemory
		}
	})
	return physBytes, physOK
}

var (
	physOnce  sync.Once
	physBytes int64
	physOK    bool
)

// Default returns the default memory budget of a run: half of Physical.
func Default() int64 {
	b, _ := Physical()
	return b / 2
}

// cgroupLimit reads the cgroup v2 memory limit of the process's cgroup
// when it is mounted at the usual place and is not "max".
func cgroupLimit() (int64, bool) {
	b, err := os.ReadFile("/sys/fs/cgroup/memory.max")
	if err != nil {
		return 0, false
	}
	v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil || v <= 0 {
		return 0, false
	}
	return v, true
}

// ErrMemoryLimit means that a run or a model would need more memory than
// the limit it was given. Packages export it under their own names
// (sgd.ErrMemoryLimit, model.ErrMemoryLimit), all the same value.
var ErrMemoryLimit = errors.New("memory limit exceeded")
