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
//   - qid:N, if present, must directly follow the label; N is a decimal
//     integer with an optional sign, within int64, as svmlight and
//     scikit-learn's dump_svmlight_file write it. Rows hand it out
//     (sparsevec.CSR.Qid, Scanner.Qid); learners ignore it. A file has
//     qid:N on every row or on none: a row that breaks the rule set by the
//     first row is an error at that row (ErrSyntax), in file order, however
//     the file is cut into chunks.
//   - index is a decimal feature index. Rows hold 1-based indices;
//     WithZeroBased says how the file's indices map to them (below). The
//     index after that mapping is at most MaxIndex (WithMaxIndex, default
//     1<<32-1). Indices within a line are strictly ascending.
//   - value is a float32 written in decimal (anything strconv.ParseFloat
//     accepts) and must be finite. Explicit zeros are kept, so a row reads
//     back exactly as written.
//   - Tokens are separated by spaces or tabs (and the carriage return,
//     vertical tab and form feed of C's isspace); leading and trailing
//     whitespace and a carriage return before the newline (CRLF files) are
//     accepted.
//   - "#" begins a comment that runs to the end of the line, at the start
//     of a token or glued to the end of a label, value or qid ("1 1:2#c"
//     is the row 1 1:2, "1#c" a row with no features), as scikit-learn's
//     load_svmlight_file reads it; its text is ignored. A "#" where a value
//     is due ("1 1:#") leaves the value empty, a syntax error there as in
//     scikit-learn. Blank and comment-only lines (such as the header that
//     dump_svmlight_file writes) are skipped but counted, so line numbers
//     in errors match the file.
//   - A line may hold at most MaxLineBytes bytes, not counting the newline
//     (reader.WithMaxLineBytes, default 64 MiB). No buffer grows beyond that.
//
// # Zero-based indices
//
// LIBSVM and svmlight number features from 1; scikit-learn's
// dump_svmlight_file writes them from 0 by default. WithZeroBased maps the
// indices of a file to the 1-based indices every row holds, so that a
// model trained from a 0-based file equals the one trained from the same
// data written 1-based:
//
//   - ZeroBasedNo keeps the indices; an index 0 is ErrIndexZero.
//   - ZeroBasedYes adds 1 to every index; MaxIndex applies after the
//     shift, so a 0-based index equal to MaxIndex is ErrIndexRange.
//   - ZeroBasedAuto (the default), as scikit-learn's
//     load_svmlight_file(zero_based="auto"): a file is 0-based, and read
//     as with ZeroBasedYes, if any of its feature indices is 0. Load reads
//     a regular file, compressed or not, in one pass with the indices as
//     written and decides at the end: if one was 0 it adds 1 to every
//     index in memory and applies MaxIndex to the shifted indices. Its
//     rows and errors (line, column and text) are those of a read with
//     the decision made ahead. NewStream, which hands out rows before the
//     end, scans a regular file for a separator followed by "0:" (or
//     "00:", ...) outside a comment before reading its rows
//     (IsZeroBased), unless the file is a .zst that cpm wrote, whose
//     closing note (reader.CreateCompressed) says the text holds no
//     index 0. Load's decision and the scan's are remembered per
//     file identity, so later passes over an unchanged file do not scan.
//     WithZeroBasedNotice reports each file found 0-based. Input that
//     cannot be read twice, standard input, a pipe or FIFO, and the
//     io.Reader of NewScanner or LoadReader, is read as 1-based, and an
//     index 0 in it is ErrIndexZero saying to use ZeroBasedYes.
//
// With the decision made ahead the shift is one addition per index in the
// parser; Load's decision at the end costs one pass over the indices of a
// 0-based file. Neither allocates per row.
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
