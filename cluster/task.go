package cluster

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"
)

// SchemaVersion is the version of the task message this build writes and
// the only one it runs. A worker refuses (and terminates) any other.
const SchemaVersion = 1

// Task kinds: what a task computes (package cluster/compute runs them).
const (
	KindTrainPart  = "train-part"  // polytope Part of a CPM model (one-vs-one pairs, sides)
	KindTrainModel = "train-model" // a whole model of a learner that has no parts
	KindCVFold     = "cv-fold"     // fit Part = rep*Folds+fold of a cross-validation
	KindTuneFit    = "tune-fit"    // fit Part of grid point Point of a search
)

// Limits on a task message, checked by Validate before a worker acts on it.
const (
	MaxTaskBytes = 64 << 10 // a whole task message
	MaxParts     = 1 << 24  // Count, Part and Point bounds
	MaxPathBytes = 1024     // a Task.Path
	maxFlags     = 256
	maxDim       = 1 << 32 // one more than the largest uint32 feature index
	maxValue     = 256     // bytes of one flag name or value
)

// Task is one unit of work of a job, a self-describing message: the job,
// the learner with its full configuration (every learner flag's value, as
// cpm train would parse them), which part of the job it computes, and the
// SHA-256 digests of its input data. Running it on any worker gives the
// bytes the same part gives inside a local cpm train, cv or tune run.
type Task struct {
	Version int    `json:"v"`
	Job     string `json:"job"`
	Index   int    `json:"index"` // position in the job, 0..Count-1
	Count   int    `json:"count"` // tasks in the job
	Kind    string `json:"kind"`
	Name    string `json:"name,omitempty"` // for people: "3 vs 5/inner", "rep 2 fold 7"

	Learner string            `json:"learner"`
	Flags   map[string]string `json:"flags"` // learner flag -> value
	Label   *float32          `json:"label,omitempty"`
	Seed    uint64            `json:"seed"`

	Data  string `json:"data"`            // digest of the training rows
	Valid string `json:"valid,omitempty"` // digest of the validation rows (tune --holdout/--valid)
	// Dim and ValidDim are the feature counts (sparsevec.CSR.Dim) of the
	// rows as the submitter loaded them, which may exceed the largest
	// index the rows hold (a held-out split, a file's declared width);
	// 0 means as the rows say.
	Dim      int `json:"dim,omitempty"`
	ValidDim int `json:"valid_dim,omitempty"`
	// Path, if set, names the file of the training rows relative to the
	// worker's data root (WorkerOptions.DataRoot), slash-separated; Data
	// is then the SHA-256 of that file's bytes, which the worker checks
	// before the task reads it. See ValidPath.
	Path string `json:"path,omitempty"`

	Part  int `json:"part"`            // polytope (train-part) or fit (cv-fold, tune-fit)
	Parts int `json:"parts,omitempty"` // polytopes of the model (train-part)
	Point int `json:"point,omitempty"` // grid point (tune-fit)

	// Cross-validation (cv-fold, and tune-fit scored by CV).
	Reps   int    `json:"reps,omitempty"`
	Folds  int    `json:"folds,omitempty"`
	CVSeed uint64 `json:"cv_seed,omitempty"`
	// Validation-set scoring (tune-fit without CV): fit Part trains with
	// learner seed Seed+Part.
	Seeds int `json:"seeds,omitempty"`
}

// ErrInvalidTask is wrapped by every error of Validate and DecodeTask.
var ErrInvalidTask = errors.New("invalid task")

// The patterns of task fields, compiled on first use rather than when
// any cpm command starts.
var (
	digestRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-f]{64}$`) })
	jobRE    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`) })
	nameRE   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`) })
)

// ValidDigest reports whether s is a SHA-256 digest as tasks carry it
// (64 lower-case hex digits).
func ValidDigest(s string) bool { return digestRE().MatchString(s) }

// ValidPath reports whether p may be a Task.Path: 1 to MaxPathBytes bytes
// of UTF-8 without control characters or backslashes, slash-separated
// elements none of which is empty, "." or "..", not starting with a slash
// (so "a/b.svm", not "/a", "a//b", "./a", "a/" or "a/../b"), and local
// as filepath.IsLocal says on this system (no volume name or reserved
// name on Windows). Such a path, joined to a directory, names something
// inside it as far as the path's text goes; symbolic links are the
// worker's to resolve.
func ValidPath(p string) bool {
	if p == "" || len(p) > MaxPathBytes || !utf8.ValidString(p) || strings.ContainsRune(p, '\\') {
		return false
	}
	for _, r := range p {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	for e := range strings.SplitSeq(p, "/") {
		if e == "" || e == "." || e == ".." {
			return false
		}
	}
	return filepath.IsLocal(filepath.FromSlash(p))
}

// ValidJobID reports whether s may name a job: 1 to 64 letters, digits,
// '-' or '_' (it becomes part of NATS subjects and keys).
func ValidJobID(s string) bool { return jobRE().MatchString(s) }

// Validate checks the fields of t that do not depend on a learner: the
// schema version, the kind, sizes, indices and digests. The learner flags
// are checked when compute builds the learner from them.
func (t *Task) Validate() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalidTask, fmt.Sprintf(format, a...))
	}
	switch {
	case t.Version != SchemaVersion:
		return bad("schema version %d, this worker runs version %d", t.Version, SchemaVersion)
	case !ValidJobID(t.Job):
		return bad("job id %q", t.Job)
	case t.Count < 1 || t.Count > MaxParts:
		return bad("count %d out of [1, %d]", t.Count, MaxParts)
	case t.Index < 0 || t.Index >= t.Count:
		return bad("index %d out of [0, %d)", t.Index, t.Count)
	case !nameRE().MatchString(t.Learner):
		return bad("learner %q", t.Learner)
	case !ValidDigest(t.Data):
		return bad("data digest %q is not a SHA-256 hex digest", t.Data)
	case t.Valid != "" && !ValidDigest(t.Valid):
		return bad("validation digest %q is not a SHA-256 hex digest", t.Valid)
	case t.Path != "" && !ValidPath(t.Path):
		return bad("data path %q is not a relative slash-separated path without '..', '.' or empty elements", clip(t.Path, 120))
	case len(t.Flags) > maxFlags:
		return bad("%d flags, at most %d", len(t.Flags), maxFlags)
	case t.Part < 0 || t.Part >= MaxParts || t.Parts < 0 || t.Parts > MaxParts || t.Point < 0 || t.Point >= MaxParts:
		return bad("part %d of %d, point %d out of range", t.Part, t.Parts, t.Point)
	case t.Reps < 0 || t.Reps > 1000 || t.Folds < 0 || t.Folds > 1<<20 || t.Seeds < 0 || t.Seeds > 1<<20:
		return bad("reps %d, folds %d, seeds %d out of range", t.Reps, t.Folds, t.Seeds)
	case t.Dim < 0 || t.Dim > maxDim || t.ValidDim < 0 || t.ValidDim > maxDim:
		return bad("feature counts %d and %d out of [0, %d]", t.Dim, t.ValidDim, int64(maxDim))
	case len(t.Name) > maxValue:
		return bad("name of %d bytes", len(t.Name))
	}
	for k, v := range t.Flags {
		if !nameRE().MatchString(k) || len(v) > maxValue {
			return bad("flag %q=%q", k, v)
		}
	}
	switch t.Kind {
	case KindTrainPart:
		if t.Parts < 1 || t.Part >= t.Parts {
			return bad("train-part %d of %d", t.Part, t.Parts)
		}
	case KindTrainModel:
	case KindCVFold:
		if t.Reps < 1 || t.Folds < 2 || t.Part >= t.Reps*t.Folds {
			return bad("cv-fold %d of %d x %d", t.Part, t.Reps, t.Folds)
		}
	case KindTuneFit:
		cvScored := t.Reps > 0
		switch {
		case cvScored && (t.Folds < 2 || t.Part >= t.Reps*t.Folds):
			return bad("tune-fit %d of %d x %d folds", t.Part, t.Reps, t.Folds)
		case !cvScored && (t.Valid == "" || t.Seeds < 1 || t.Part >= t.Seeds):
			return bad("tune-fit %d of %d seeds on validation rows %q", t.Part, t.Seeds, t.Valid)
		}
	default:
		return bad("kind %q", t.Kind)
	}
	return nil
}

// Encode returns the task's message body (JSON).
func (t *Task) Encode() ([]byte, error) {
	b, err := json.Marshal(t)
	if err != nil {
		return nil, err
	}
	if len(b) > MaxTaskBytes {
		return nil, fmt.Errorf("%w: %d bytes, at most %d", ErrInvalidTask, len(b), MaxTaskBytes)
	}
	return b, nil
}

// DecodeTask parses and validates a task message body. Unknown fields are
// refused: a message of a newer schema must carry a newer version.
func DecodeTask(b []byte) (*Task, error) {
	if len(b) > MaxTaskBytes {
		return nil, fmt.Errorf("%w: %d bytes, at most %d", ErrInvalidTask, len(b), MaxTaskBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	t := new(Task)
	if err := dec.Decode(t); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidTask, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: trailing data after the task", ErrInvalidTask)
	}
	if err := t.Validate(); err != nil {
		return nil, err
	}
	return t, nil
}
