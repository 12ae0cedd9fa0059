package compute

import (
	"slices"
	"testing"

	"github.com/polyhedral/cpm/cluster"
)

// The lru keeps the keep most recently put or got keys, evicting the
// least recently used first.
func TestLRU(t *testing.T) {
	var l lru[int]
	if _, ok := l.get("a"); ok {
		t.Fatal("the zero lru holds a key")
	}
	l.put("a", 1, 2)
	l.put("b", 2, 2)
	if v, ok := l.get("a"); !ok || v != 1 { // a is now the most recent
		t.Fatalf("get a: %d, %v", v, ok)
	}
	l.put("c", 3, 2) // evicts b
	if _, ok := l.get("b"); ok {
		t.Error("b was kept; it was the least recently used")
	}
	if !slices.Equal(l.keys, []string{"a", "c"}) || len(l.vals) != 2 {
		t.Errorf("keys %v, %d values; want [a c]", l.keys, len(l.vals))
	}
	l.put("a", 10, 2) // replaces, touches
	if v, _ := l.get("a"); v != 10 || len(l.keys) != 2 {
		t.Errorf("a = %d with %d keys after a replacing put", v, len(l.keys))
	}
	l.put("d", 4, 1) // a smaller bound evicts down to it
	if !slices.Equal(l.keys, []string{"d"}) || len(l.vals) != 1 {
		t.Errorf("keys %v, %d values; want [d]", l.keys, len(l.vals))
	}
}

// A plan's key holds everything that defines the run, so that tasks of
// two runs never share a plan, and tasks of one run always do.
func TestPlanKey(t *testing.T) {
	one, two := float32(1), float32(-1)
	base := cluster.Task{Job: "j", Learner: "cpm", Data: "d", Seed: 3, Label: &one, Flags: map[string]string{"k": "2", "C": "1"}}
	same := base
	same.Flags = map[string]string{"C": "1", "k": "2"}
	same.Index, same.Part, same.Name = 5, 1, "inner" // the task's place in the run
	if planKey(&base) != planKey(&same) {
		t.Error("two tasks of one run have different plan keys")
	}
	for what, change := range map[string]func(t *cluster.Task){
		"job":     func(t *cluster.Task) { t.Job = "k" },
		"data":    func(t *cluster.Task) { t.Data = "e" },
		"learner": func(t *cluster.Task) { t.Learner = "plume" },
		"seed":    func(t *cluster.Task) { t.Seed = 4 },
		"label":   func(t *cluster.Task) { t.Label = &two },
		"nolabel": func(t *cluster.Task) { t.Label = nil },
		"flag":    func(t *cluster.Task) { t.Flags = map[string]string{"k": "2", "C": "10"} },
		"noflag":  func(t *cluster.Task) { t.Flags = map[string]string{"k": "2"} },
		"split":   func(t *cluster.Task) { t.Flags = map[string]string{"k": "2/C=1"} },
	} {
		other := base
		change(&other)
		if planKey(&other) == planKey(&base) {
			t.Errorf("a task of another %s has the same plan key", what)
		}
	}
}
