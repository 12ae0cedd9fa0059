package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/polyhedral/cpm/input"
	"github.com/polyhedral/cpm/internal/atomicfile"
)

// zeroRestarted is the restart function of input.Run for a training run:
// without -q it says on stderr that the run starts again reading the file
// as 0-based (zeroRestartNotice), and it empties --metrics-log of the
// records of the run given up.
func (o *trainOptions) zeroRestarted(stderr io.Writer, z *input.ZeroRestart, mlog *metricsLog) {
	if !o.quiet {
		fmt.Fprintln(stderr, zeroRestartNotice(z))
	}
	mlog.redo()
}

// zeroRestartNotice is the line zeroRestarted prints.
func zeroRestartNotice(z *input.ZeroRestart) string {
	return fmt.Sprintf("cpm: %s; reading as 0-based, restarting", z)
}

// redo starts the log again, empty, for a run that starts again: the
// records written so far are discarded with their temporary file, and the
// clock restarts. A log written straight to a device or FIFO (atomicfile
// writes those in place) cannot take its records back: it goes on, and
// the records of the restarted run follow. It does nothing on a nil log;
// an error creating the new file is the log's error, which commit
// returns.
func (l *metricsLog) redo() {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.start = time.Now()
	path := l.f.Name()
	if st, err := os.Stat(path); l.done || err == nil && !st.Mode().IsRegular() {
		return
	}
	l.f.Abort()
	f, err := atomicfile.Create(path)
	if err != nil {
		l.done, l.err = true, fmt.Errorf("metrics log: %w", err)
		return
	}
	l.f, l.err = f, nil
	l.w.Reset(f)
	l.enc = json.NewEncoder(l.w)
}
