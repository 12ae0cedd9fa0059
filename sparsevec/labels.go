package sparsevec

import "slices"

// DistinctLabels returns the distinct labels of m in ascending order.
func (m *CSR) DistinctLabels() []float32 {
	seen := map[float32]bool{}
	var out []float32
	for _, y := range m.Labels {
		if !seen[y] {
			seen[y] = true
			out = append(out, y)
		}
	}
	slices.Sort(out)
	return out
}
