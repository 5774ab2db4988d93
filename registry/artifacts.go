package registry

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"repro/internal/rows"
)

// One reader, one validator and one writer per artifact kind (kinds.go
// says what each holds), so every stage type reads a kind with the same
// checks and writes it byte for byte alike.

// ReadRows reads the rows of file in the port input, keeping the first max
// (0: all); the kind's reader adds its checks.
func ReadRows[T any](env *Env, port, file string, max int) ([]T, Artifact, error) {
	a, err := env.Input(port)
	if err != nil {
		return nil, a, err
	}
	rs, err := rows.Read[T](a.Path(file))
	if err != nil {
		return nil, a, fmt.Errorf("%s: %w", port, err)
	}
	if max > 0 && len(rs) > max {
		rs = rs[:max]
	}
	return rs, a, nil
}

// ReadSentences reads the port input's sentences (KindSentences), keeping
// the first max (0: all), checked by CheckSentences.
func ReadSentences(env *Env, port string, max int) ([]string, error) {
	ss, a, err := ReadRows[rows.Sentence](env, port, FileSentences, max)
	if err != nil {
		return nil, err
	}
	return CheckSentences(port, a.Path(FileSentences), ss)
}

// CheckSentences returns the texts of a sentences artifact's rows (read
// from path, the port's): an empty sentence is an error naming its row, and
// so is an artifact without sentences.
func CheckSentences(port, path string, ss []rows.Sentence) ([]string, error) {
	out := make([]string, len(ss))
	for i, s := range ss {
		if strings.TrimSpace(s.Text) == "" {
			return nil, fmt.Errorf("%s: %s: row %d: empty sentence", port, path, i+1)
		}
		out[i] = s.Text
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: %s: no sentences", port, path)
	}
	return out, nil
}

// TripletNeeds says what a reader of triplets needs beyond a non-empty
// anchor and positive in every row.
type TripletNeeds struct {
	Max       int  // keep the first Max rows (0: all)
	Negative  bool // every row has a negative (hard negatives)
	AllowNone bool // an artifact without triplets is not an error (mixing, sampling)
}

// ReadTriplets reads the port input's triplets (KindTriplets), checked by
// CheckTriplets.
func ReadTriplets(env *Env, port string, need TripletNeeds) ([]rows.Triplet, error) {
	ts, a, err := ReadRows[rows.Triplet](env, port, FileTriplets, need.Max)
	if err != nil {
		return nil, err
	}
	return ts, CheckTriplets(port, a, ts, need)
}

// CheckTriplets checks a triplets artifact's rows: an empty anchor or
// positive is an error naming its row, and so is an empty negative when
// one is needed. An artifact without triplets is an error (unless allowed)
// that quotes its producer's reason (FileWhyEmpty) when it gives one.
func CheckTriplets(port string, a Artifact, ts []rows.Triplet, need TripletNeeds) error {
	path := a.Path(FileTriplets)
	for i, t := range ts {
		switch {
		case strings.TrimSpace(t.Anchor) == "":
			return fmt.Errorf("%s: %s: row %d: empty anchor", port, path, i+1)
		case strings.TrimSpace(t.Positive) == "":
			return fmt.Errorf("%s: %s: row %d: empty positive", port, path, i+1)
		case need.Negative && strings.TrimSpace(t.Negative) == "":
			return fmt.Errorf("%s: %s: row %d: no negative (hard_negatives = true needs one in every triplet)", port, path, i+1)
		}
	}
	if len(ts) == 0 && !need.AllowNone {
		if why, err := os.ReadFile(a.Path(FileWhyEmpty)); err == nil {
			return fmt.Errorf("%s: %s: no triplets to train on: %s", port, path, strings.TrimSpace(string(why)))
		}
		return fmt.Errorf("%s: %s: no triplets", port, path)
	}
	return nil
}

// WriteMetrics writes m as the metrics.json of the port output (a
// KindMetrics artifact: an object of numbers, keys sorted).
func WriteMetrics(env *Env, port string, m any) error {
	return WriteJSON(filepath.Join(env.Output(port), FileMetrics), m)
}

// WriteJSON writes v as indented JSON with a final newline: how every
// JSON file of an artifact is written (metrics, histories, counts), so the
// same value gives the same bytes whichever stage writes it. JSON cannot
// hold NaN, so a NaN that slipped through is an error, not a file.
func WriteJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("writing %s: %v", filepath.Base(path), err)
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// WritePairSample writes up to n pairs per label, drawn with a generator
// seeded by seed, as a markdown table (the paper's Table 4, for a reader
// to judge the data): the samples.md excerpt of a KindPairs artifact.
func WritePairSample(b *strings.Builder, ps []rows.GeneratedPair, n int, seed uint64) {
	if n == 0 || len(ps) == 0 {
		return
	}
	byLabel := map[float64][]int{}
	for i, p := range ps {
		byLabel[p.Label] = append(byLabel[p.Label], i)
	}
	rng := rand.New(rand.NewPCG(seed, 0x5a3b1e))
	fmt.Fprintf(b, "A seeded sample of %d pairs per label:\n\n| label | x1 | x2 | origin |\n|---|---|---|---|\n", n)
	for _, l := range slices.Backward(slices.Sorted(maps.Keys(byLabel))) { // labels descending
		idx := byLabel[l]
		rng.Shuffle(len(idx), func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })
		for _, i := range idx[:min(n, len(idx))] {
			fmt.Fprintf(b, "| %g | %s | %s | %s |\n", l, MarkdownCell(ps[i].Sentence1), MarkdownCell(ps[i].Sentence2), ps[i].Origin)
		}
	}
}

// MarkdownCell is s as one cell of a markdown table: pipes escaped, line
// breaks as spaces, "(empty)" for nothing.
func MarkdownCell(s string) string {
	s = strings.NewReplacer("|", "\\|", "\n", " ", "\r", " ").Replace(s)
	if strings.TrimSpace(s) == "" {
		return "(empty)"
	}
	return s
}
