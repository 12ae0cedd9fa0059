package natsd

import (
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/nats-io/nats-server/v2/server"
)

// logger is the nats-server Logger of a node: it writes warnings and
// errors (and notices when verbose) to w, one line each, and keeps the
// first fatal message for Start. It writes nothing after close, so that
// no server goroutine writes to w once Shutdown has returned.
type logger struct {
	mu      sync.Mutex
	w       io.Writer // nil: write nothing
	verbose bool
	closed  bool
	fatal   string
}

var _ server.Logger = (*logger)(nil)

// quiet are warnings that do not apply to an embedded node: its
// passwords come from files and live only in memory.
var quiet = []string{"Plaintext passwords detected"}

func (l *logger) write(level, format string, v ...any) {
	msg := fmt.Sprintf(format, v...)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.w == nil || l.closed {
		return
	}
	fmt.Fprintf(l.w, "nats-server [%s] %s\n", level, strings.TrimRight(msg, "\n"))
}

func (l *logger) Noticef(format string, v ...any) {
	if l.verbose {
		l.write("INF", format, v...)
	}
}

func (l *logger) Warnf(format string, v ...any) {
	for _, q := range quiet {
		if strings.HasPrefix(format, q) {
			return
		}
	}
	l.write("WRN", format, v...)
}

// Fatalf records the message for Start and logs it; nats-server calls it
// when a listener or JetStream cannot start, and then gives up on that
// part without exiting.
func (l *logger) Fatalf(format string, v ...any) {
	l.mu.Lock()
	if l.fatal == "" {
		l.fatal = strings.TrimRight(fmt.Sprintf(format, v...), "\n")
	}
	l.mu.Unlock()
	l.write("FTL", format, v...)
}

func (l *logger) Errorf(format string, v ...any) { l.write("ERR", format, v...) }
func (l *logger) Debugf(string, ...any)          {}
func (l *logger) Tracef(string, ...any)          {}

// fatalMsg returns the first fatal message, or "".
func (l *logger) fatalMsg() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.fatal
}

// close stops all writing.
func (l *logger) close() {
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
}
