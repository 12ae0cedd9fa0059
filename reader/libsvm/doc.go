// Package libsvm reads and writes sparse rows as LIBSVM text.
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
//   - "#" begins a comment that runs to the end of the line, at the start
//     of a token or glued to the end of a label, value or qid ("1 1:2#c"
//     is the row 1 1:2, "1#c" a row with no features), as scikit-learn's
//     load_svmlight_file reads it. A "#" where a value is due ("1 1:#")
//     leaves the value empty, a syntax error there as in scikit-learn.
//     Blank and comment-only lines are skipped but counted, so line
//     numbers in errors match the file.
//   - A line may hold at most MaxLineBytes bytes, not counting the newline
//     (reader.WithMaxLineBytes, default 64 MiB). No buffer grows beyond that.
//
// Input is opened with reader.Open's rules: gzip, zstd and bzip2 are
// detected from the first bytes of the file, not from its name, and "-" is
// standard input. Malformed lines are *reader.ParseError values holding the
// path, line, column and one of reader's sentinel errors.
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
package libsvm
