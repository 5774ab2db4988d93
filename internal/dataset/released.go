package dataset

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"repro/internal/rows"
)

// The synthetic datasets the papers' authors released, read in the
// layouts they published, so that "train on the authors' data" is one path
// away from "train on ours". Like the readers in paper.go they have no
// pinned checksum: the reading stage hashes the file into its key.

// ReadDINOPairs reads a DINO dataset as the DINO repository writes it
// (timoschick/dino, utils.DatasetEntry.save_list; the released STS-🦕-x2
// and STS-🦕-x1x2 files): JSON lines {"text_a": str, "text_b": str,
// "label": number}, exactly those keys. label is the similarity (0, 0.5, 1
// before post-processing, smoothed values after); a numeric string is
// taken too, as the task specification's label keys are strings. Rows come
// back as generated pairs with Origin "released", Instruction the label,
// X1 the index of text_a among the distinct text_a in file order, and
// Sample the row's count among earlier rows of that text_a and label.
func ReadDINOPairs(path string) ([]rows.GeneratedPair, error) {
	var out []rows.GeneratedPair
	x1 := map[string]int{}
	seen := map[string]int{}
	err := scanLines(path, func(n int, b []byte) error {
		if len(bytes.TrimSpace(b)) == 0 {
			return &RowError{Path: path, Line: n, Reason: "blank line (want one JSON object a line)"}
		}
		if !utf8.Valid(b) {
			return &RowError{Path: path, Line: n, Reason: "not UTF-8"}
		}
		var raw map[string]json.RawMessage
		if err := json.Unmarshal(b, &raw); err != nil {
			return &RowError{Path: path, Line: n, Reason: fmt.Sprintf("not a DINO JSON line {\"text_a\", \"text_b\", \"label\"}: %v", err)}
		}
		for k := range raw {
			if k != "text_a" && k != "text_b" && k != "label" {
				return &RowError{Path: path, Line: n, Reason: fmt.Sprintf("key %q: a DINO line has exactly text_a, text_b and label", k)}
			}
		}
		var a, b2 *string
		if err := unmarshalField(raw, "text_a", &a); err != nil || a == nil {
			return &RowError{Path: path, Line: n, Reason: "text_a missing or not a string"}
		}
		if err := unmarshalField(raw, "text_b", &b2); err != nil || b2 == nil {
			return &RowError{Path: path, Line: n, Reason: "text_b missing or not a string (a pair needs both texts)"}
		}
		if strings.TrimSpace(*a) == "" || strings.TrimSpace(*b2) == "" {
			return &RowError{Path: path, Line: n, Reason: "empty text_a or text_b"}
		}
		label, err := dinoLabel(raw["label"])
		if err != nil {
			return &RowError{Path: path, Line: n, Reason: err.Error()}
		}
		if _, ok := x1[*a]; !ok {
			x1[*a] = len(x1)
		}
		key := *a + "\x00" + strconv.FormatFloat(label, 'g', -1, 64)
		out = append(out, rows.GeneratedPair{Sentence1: *a, Sentence2: *b2, Label: label, Instruction: label,
			Origin: "released", X1: x1[*a], Sample: seen[key]})
		seen[key]++
		return nil
	})
	return out, err
}

// unmarshalField decodes raw[key] into v; an absent key leaves v nil.
func unmarshalField(raw map[string]json.RawMessage, key string, v any) error {
	m, ok := raw[key]
	if !ok {
		return nil
	}
	return json.Unmarshal(m, v)
}

// dinoLabel reads a label: a finite number in [0, 1], or a string holding one.
func dinoLabel(m json.RawMessage) (float64, error) {
	if m == nil {
		return 0, fmt.Errorf("label missing")
	}
	var v float64
	if err := json.Unmarshal(m, &v); err != nil {
		var s string
		if json.Unmarshal(m, &s) != nil {
			return 0, fmt.Errorf("label %s is not a number", m)
		}
		if v, err = strconv.ParseFloat(strings.TrimSpace(s), 64); err != nil {
			return 0, fmt.Errorf("label %q is not a number", s)
		}
	}
	if math.IsNaN(v) || v < 0 || v > 1 {
		return 0, fmt.Errorf("label %v is outside [0, 1]", v)
	}
	return v, nil
}

// ReadSynCSETriplets reads SynCSE's released triplets (hkust-nlp/SynCSE:
// SynCSE-partial-NLI and SynCSE-scratch-NLI), a CSV in SimCSE's
// nli_for_simcse.csv layout: header sent0,sent1,hard_neg, RFC 4180
// quoting, one anchor, positive and hard negative a row.
func ReadSynCSETriplets(path string) ([]rows.Triplet, error) { return ReadSimCSENLI(path) }

// GenSETSVHeaders are the headers ReadGenSETriplets accepts: the names of
// GenSE's roles, or SimCSE's column names (what a CSV export of the
// dataset with those columns becomes as TSV).
var GenSETSVHeaders = [][]string{{"premise", "entailment", "contradiction"}, {"sent0", "sent1", "hard_neg"}}

// ReadGenSETriplets reads GenSE's released synthetic triplets (SyNLI,
// distributed on the Hugging Face hub as mattymchen/synli, about 61M rows).
// The hub's storage format is not documented in the paper or the
// repository, so this reads the layout a user exports it to: a TSV with a
// header premise<TAB>entailment<TAB>contradiction (or sent0<TAB>sent1
// <TAB>hard_neg), then one triplet a row, no quoting (fields hold no TAB
// or newline), as the data directory's nli/*.tsv.
func ReadGenSETriplets(path string) ([]rows.Triplet, error) {
	var out []rows.Triplet
	err := scanLines(path, func(n int, b []byte) error {
		if !utf8.Valid(b) {
			return &RowError{Path: path, Line: n, Reason: "not UTF-8"}
		}
		f := strings.Split(string(b), "\t")
		if n == 1 {
			f[0] = strings.TrimPrefix(f[0], "\ufeff")
			for _, h := range GenSETSVHeaders {
				if strings.Join(f, "\t") == strings.Join(h, "\t") {
					return nil
				}
			}
			if len(f) == 1 && strings.Count(string(b), ",") >= 2 {
				return &RowError{Path: path, Line: 1, Reason: "no TAB on the header line: a CSV, not GenSE's TSV (SynCSE's and SimCSE's CSV have their own readers)"}
			}
			return &RowError{Path: path, Line: 1, Reason: fmt.Sprintf("header is %q, want premise<TAB>entailment<TAB>contradiction (or sent0<TAB>sent1<TAB>hard_neg)", string(b))}
		}
		if len(f) != 3 {
			return &RowError{Path: path, Line: n, Reason: fmt.Sprintf("%d TAB-separated fields, want 3 (premise, entailment, contradiction)", len(f))}
		}
		for i, s := range f {
			if strings.TrimSpace(s) == "" {
				return &RowError{Path: path, Line: n, Reason: "empty " + GenSETSVHeaders[0][i]}
			}
		}
		out = append(out, rows.Triplet{Anchor: f[0], Positive: f[1], Negative: f[2]})
		return nil
	})
	if err == nil && len(out) == 0 {
		err = &RowError{Path: path, Reason: "no rows after the header"}
	}
	return out, err
}
