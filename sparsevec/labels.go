package sparsevec

import "slices"

// DistinctLabels returns the distinct labels of m in ascending order.
func (m *CSR) DistinctLabels() []float32 { return distinctLabels(m.Labels) }

// distinctLabels returns the distinct values of the label lists in
// ascending order.
func distinctLabels(lists ...[]float32) []float32 {
	seen := map[float32]bool{}
	var out []float32
	for _, labels := range lists {
		for _, y := range labels {
			if !seen[y] {
				seen[y] = true
				out = append(out, y)
			}
		}
	}
	slices.Sort(out)
	return out
}
