// Package reader reads sparse training data in LIBSVM text format, plain or
// compressed, into sparsevec rows and CSR blocks.
//
// # Format
//
// One example per line:
//
//	label [qid:N] index:value index:value ... [# comment]
//
// where:
//
//   - label is a decimal float ("+1", "-1", "2", "0.5", "1e-3"); it must be
//     finite. A line that starts with an index:value pair has no label and is
//     an error (ErrNoLabel).
//   - qid:N, if present, must directly follow the label; N is an unsigned
//     decimal integer. It is validated and ignored.
//   - index is a 1-based decimal uint32, at most MaxIndex (WithMaxIndex,
//     default 1<<32-1). Indices within a line are strictly ascending.
//   - value is a float32 written in decimal (anything strconv.ParseFloat
//     accepts) and must be finite. Explicit zeros are kept, so a row reads
//     back exactly as written.
//   - Tokens are separated by spaces or tabs; trailing whitespace and a
//     carriage return before the newline (CRLF files) are tolerated.
//   - "#" at the start of a token begins a comment that runs to the end of
//     the line. Blank and comment-only lines are skipped but counted, so
//     line numbers in errors match the file. A "#" inside a token is a
//     syntax error, as in LIBSVM's own reader.
//   - A line may hold at most MaxLineBytes bytes, not counting the newline
//     (WithMaxLineBytes, default 64 MiB). No buffer grows beyond that.
//
// # Input
//
// Open detects gzip, zstd and bzip2 from the first bytes of the file, not
// from its name, and otherwise reads plain text; "-" is standard input.
//
// # Reading
//
// Three ways to read, by data size:
//
//   - Scanner reads one row at a time in the shape of bufio.Scanner; Row's
//     buffers are reused and Scan allocates nothing per row.
//   - Load and LoadReader read a whole file into one CSR, parsing chunks of
//     the input on every core (GOMAXPROCS) while one goroutine reads and
//     decompresses; the result does not depend on scheduling.
//   - Stream hands out CSR blocks of a fixed number of rows for data that
//     does not fit in memory, with the same parallel pipeline running ahead
//     and a fixed pool of reusable blocks, so memory stays bounded.
//
// # Errors
//
// Malformed input is reported as a *ParseError holding the path, the 1-based
// line and byte column, and one of the sentinel errors (ErrSyntax,
// ErrIndexZero, ...), which errors.Is finds. Truncated or corrupt
// compressed input is an error wrapping ErrCorrupt, never a silent early end.
// Nothing in this package panics on bad data.
package reader
