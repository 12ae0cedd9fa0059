package compute

import (
	"fmt"

	"github.com/polyhedral/cpm/reader"
	"github.com/polyhedral/cpm/reader/rowcache"
	"github.com/polyhedral/cpm/sparsevec"
)

// blockRows is the number of rows per block of a data file: fixed, so that
// the same rows always give the same bytes and the same digest.
const blockRows = 4096

// WriteData writes the rows of data to path as a row cache with no source
// (package rowcache): the form in which a job's rows travel to workers.
// The bytes depend on the rows alone, so equal rows have equal digests.
// The file appears only complete.
func WriteData(path string, data *sparsevec.CSR) error {
	w, err := rowcache.Create(path, "")
	if err != nil {
		return err
	}
	var b sparsevec.CSR
	for lo := 0; lo < data.Rows(); lo += blockRows {
		b.Reset()
		for r := lo; r < min(lo+blockRows, data.Rows()); r++ {
			b.Append(data.Labels[r], data.Row(r))
		}
		if err := w.Write(&b); err != nil {
			w.Abort()
			return err
		}
	}
	return w.Close()
}

// ReadData loads a file written by WriteData, checking every row as any
// input is checked, and gives it the feature count dim of the data it was
// written from (0: as the rows say). A row beyond dim is an error.
func ReadData(path string, dim int) (*sparsevec.CSR, error) {
	data, err := reader.Load(path)
	if err != nil {
		return nil, err
	}
	if dim > 0 {
		if data.Dim > dim {
			return nil, fmt.Errorf("%s: a feature index %d beyond the task's %d features", path, data.Dim-1, dim-1)
		}
		data.Dim = dim
	}
	return data, nil
}
