package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/polyhedral/cpm/cv"
	"github.com/polyhedral/cpm/internal/atomicfile"
	"github.com/polyhedral/cpm/tune"
)

// tuneResult is what a search found.
type tuneResult struct {
	Rows    []tune.Row
	Chosen  int
	Stage1  int // --protocol paper: rows of the C stage
	Seconds float64
}

// tuneMetrics is the --json report of cpm tune.
type tuneMetrics struct {
	Command    string          `json:"command"`
	Learner    string          `json:"learner"`
	Data       string          `json:"data"`
	Seed       uint64          `json:"seed"`
	Grid       string          `json:"grid,omitempty"`
	Protocol   string          `json:"protocol,omitempty"`
	Method     string          `json:"method"`
	Reps       int             `json:"reps,omitempty"`
	Folds      int             `json:"folds,omitempty"`
	Holdout    float64         `json:"holdout,omitempty"`
	Valid      string          `json:"valid,omitempty"`
	Seeds      int             `json:"seeds,omitempty"`
	Rule       string          `json:"rule"`
	RuleText   string          `json:"rule_text"`
	Points     []tunePointJSON `json:"points"`
	Chosen     int             `json:"chosen"` // point number, from 1
	ChosenArgs string          `json:"chosen_flags"`
	Seconds    float64         `json:"seconds"`
}

// tunePointJSON is one row of the table in --json.
type tunePointJSON struct {
	Point            int            `json:"point"`
	Settings         map[string]any `json:"settings"`
	Stage            int            `json:"stage,omitempty"` // --protocol paper: 1 (C) or 2 (h)
	Fits             int            `json:"fits"`
	AccuracyMean     float64        `json:"accuracy_mean"`
	AccuracyStd      float64        `json:"accuracy_std"`
	StdErr           float64        `json:"accuracy_std_err"`
	ErrorMean        float64        `json:"error_mean"`
	TrainSecondsMean float64        `json:"train_seconds_mean"`
	Seconds          float64        `json:"seconds"`
	HyperplanesMean  float64        `json:"hyperplanes_mean"`
	Chosen           bool           `json:"chosen"`
	CV               *cv.Result     `json:"cv,omitempty"`
	Runs             []tuneRunJSON  `json:"runs,omitempty"`
}

// tuneRunJSON is one seed's run on the validation rows.
type tuneRunJSON struct {
	Seed         uint64  `json:"seed"`
	Accuracy     float64 `json:"accuracy"`
	Error        float64 `json:"error"`
	TrainSeconds float64 `json:"train_seconds"`
	Hyperplanes  float64 `json:"hyperplanes"`
}

// flagArgs returns the command-line flags of a point: "-C 0.1 --entropy 0".
func flagArgs(p tune.Point) string {
	parts := make([]string, len(p.Settings))
	for i, s := range p.Settings {
		dash := "--"
		if len(s.Flag) == 1 {
			dash = "-"
		}
		parts[i] = dash + s.Flag + " " + s.Value
	}
	return strings.Join(parts, " ")
}

// axes returns the axis names of the rows, in order of first appearance.
func axes(rows []tune.Row) []string {
	var names []string
	seen := map[string]bool{}
	for _, r := range rows {
		for _, s := range r.Point.Settings {
			if !seen[s.Flag] {
				seen[s.Flag] = true
				names = append(names, s.Flag)
			}
		}
	}
	return names
}

// print writes the table, the chosen point and the rule.
func (o *tuneOptions) print(w io.Writer, d *tuneData, res *tuneResult) {
	what := "--grid '" + o.grid + "'"
	if o.protocol != "" {
		what = "--protocol " + o.protocol
	}
	fmt.Fprintf(w, "%s on %s (%d rows), %s, seed %d: %s, %d points\n", o.lf.describe(), o.data, d.all.Rows(), d.method, o.lf.seed, what, len(res.Rows))
	names := axes(res.Rows)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "\tpoint\t%s\taccuracy %%\tstd\terror %%\ttrain s/fit\thyperplanes\t\n", strings.Join(names, "\t"))
	for i, r := range res.Rows {
		mark := ""
		if i == res.Chosen {
			mark = "*"
		}
		vals := make([]string, len(names))
		for j, n := range names {
			if s, ok := r.Point.Value(n); ok {
				vals[j] = s.Value
			}
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%.3f\t%.3f\t%.3f\t%.4f\t%.1f\t\n", mark, r.Point.Index+1, strings.Join(vals, "\t"),
			r.AccuracyMean, r.AccuracyStd, r.ErrorMean, r.TrainSecondsMean, r.HyperplanesMean)
	}
	tw.Flush()
	c := res.Rows[res.Chosen]
	fmt.Fprintf(w, "chosen: point %d, %s (accuracy %.3f ± %.3f %%)\n", c.Point.Index+1, flagArgs(c.Point), c.AccuracyMean, c.AccuracyStd)
	fmt.Fprintf(w, "rule: %s\n", o.ruleText())
	fmt.Fprintf(w, "wall time %.2fs\n", res.Seconds)
}

// ruleText states how the point was chosen.
func (o *tuneOptions) ruleText() string {
	if o.protocol != "" {
		return "section 5.1: the best C at h = 0, then the best h at that C (h = 0 first); " + tune.Best.Describe()
	}
	return o.rule.Describe()
}

// metrics returns the --json report.
func (o *tuneOptions) metrics(res *tuneResult, d *tuneData) tuneMetrics {
	m := tuneMetrics{Command: "tune", Learner: o.lf.name, Data: o.data, Seed: o.lf.seed, Grid: o.grid, Protocol: o.protocol,
		Method: "cv", Rule: o.rule.String(), RuleText: o.ruleText(), Seconds: res.Seconds,
		Chosen: res.Rows[res.Chosen].Point.Index + 1, ChosenArgs: flagArgs(res.Rows[res.Chosen].Point)}
	switch {
	case o.holdout != 0:
		m.Method, m.Holdout, m.Seeds = "holdout", o.holdout, o.seeds
	case o.valid != "":
		m.Method, m.Valid, m.Seeds = "valid", o.valid, o.seeds
	default:
		m.Reps, m.Folds = o.reps, o.folds
	}
	if o.protocol != "" {
		m.Rule = "paper"
	}
	for i, r := range res.Rows {
		p := tunePointJSON{Point: r.Point.Index + 1, Settings: map[string]any{}, Fits: r.Fits,
			AccuracyMean: r.AccuracyMean, AccuracyStd: r.AccuracyStd, StdErr: r.StdErr, ErrorMean: r.ErrorMean,
			TrainSecondsMean: r.TrainSecondsMean, Seconds: r.Seconds, HyperplanesMean: r.HyperplanesMean,
			Chosen: i == res.Chosen, CV: r.CV}
		if o.protocol != "" {
			p.Stage = 1 + min(i/max(res.Stage1, 1), 1)
		}
		for _, s := range r.Point.Settings {
			p.Settings[s.Flag] = settingJSON(s)
		}
		for _, run := range r.Runs {
			p.Runs = append(p.Runs, tuneRunJSON(run))
		}
		m.Points = append(m.Points, p)
	}
	return m
}

// settingJSON is a setting's value in JSON: the number as set, or text.
func settingJSON(s tune.Setting) any {
	if _, err := strconv.ParseFloat(s.Value, 64); err == nil {
		return json.Number(s.Value)
	}
	return s.Value
}

// writeTables writes --json and --csv.
func (o *tuneOptions) writeTables(res *tuneResult, d *tuneData) error {
	m := o.metrics(res, d)
	if o.jsonOut != "" {
		if err := writeJSON(o.jsonOut, m); err != nil {
			return err
		}
	}
	if o.csvOut == "" {
		return nil
	}
	names := axes(res.Rows)
	err := atomicfile.WriteFile(o.csvOut, func(w io.Writer) error {
		cw := csv.NewWriter(w)
		head := append(append([]string{"point"}, names...), "accuracy_mean", "accuracy_std", "accuracy_std_err",
			"error_mean", "train_seconds_mean", "seconds", "hyperplanes_mean", "fits", "chosen")
		if err := cw.Write(head); err != nil {
			return err
		}
		for _, p := range m.Points {
			rec := []string{strconv.Itoa(p.Point)}
			for _, n := range names {
				v, ok := p.Settings[n]
				if !ok {
					v = ""
				}
				rec = append(rec, fmt.Sprint(v))
			}
			for _, v := range []float64{p.AccuracyMean, p.AccuracyStd, p.StdErr, p.ErrorMean, p.TrainSecondsMean, p.Seconds, p.HyperplanesMean} {
				rec = append(rec, strconv.FormatFloat(v, 'g', -1, 64))
			}
			rec = append(rec, strconv.Itoa(p.Fits), strconv.FormatBool(p.Chosen))
			if err := cw.Write(rec); err != nil {
				return err
			}
		}
		cw.Flush()
		return cw.Error()
	}, atomicfile.Stdout(os.Stdout))
	if err != nil {
		return fmt.Errorf("writing --csv: %w", err)
	}
	return nil
}
