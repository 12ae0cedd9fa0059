package interop_test

import "github.com/polyhedral/cpm/reader"

// caseOptions returns the reader options a user gives cpm for a case.
// Files with 0-based indices are read with the defaults: cpm takes a
// Parquet file's cpm.index_base metadata, and a LIBSVM text file whose
// indices start at 0, as 0-based.
func caseOptions(c genCase) []reader.Option {
	return nil
}
