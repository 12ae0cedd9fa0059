// Package budget bounds the memory the cpm tool spends before it has
// validated what it reads: files read whole go through a size cap
// (ReadFile, ReadAll), and the default memory budget of a run is derived
// from the machine's memory (Default).
package budget
