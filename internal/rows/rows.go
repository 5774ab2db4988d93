// Package rows defines the JSONL row types that artifacts hold (see
// registry/kinds.go) and reads and writes them. Readers report the file and
// line of a malformed row.
package rows

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// Sentence is a row of a sentences artifact.
type Sentence struct {
	Text string `json:"text"`
}

// STSPair is a gold-scored sentence pair of an STS task.
type STSPair struct {
	Task      string  `json:"task"`   // "sts12".."sts16", "stsb", "sickr"
	Subset    string  `json:"subset"` // "MSRpar", ..., or the split for stsb/sickr
	Sentence1 string  `json:"sentence1"`
	Sentence2 string  `json:"sentence2"`
	Score     float64 `json:"score"`
}

// Triplet is an NLI-style training triplet; Negative may be empty.
type Triplet struct {
	Anchor   string `json:"anchor"`
	Positive string `json:"positive"`
	Negative string `json:"negative,omitempty"`
}

// Pair is a generic training pair with a label (1 = positive, or a score).
type Pair struct {
	Sentence1 string  `json:"sentence1"`
	Sentence2 string  `json:"sentence2"`
	Label     float64 `json:"label"`
}

// Seq2Seq is a text-to-text training instance: the model reads Source
// and learns to write Target.
type Seq2Seq struct {
	Source string `json:"source"`
	Target string `json:"target"`
}

// Document is a document of sentences (BBC News, Brown).
type Document struct {
	ID        string   `json:"id"`
	Category  string   `json:"category,omitempty"`
	Headline  string   `json:"headline,omitempty"`
	Sentences []string `json:"sentences"`
}

// DocPair is a positive pair of sentences drawn from one document
// (InfoCSE's training instances: IDC clusters, CONPONO neighbours, ICT
// sentence and context). Doc names the document, so that pairs of one
// document are never each other's in-batch negatives.
type DocPair struct {
	Doc      string `json:"doc"`
	Anchor   string `json:"anchor"`
	Positive string `json:"positive"`
}

// RerankQuery is one reranking query with its positive and negative candidates.
type RerankQuery struct {
	ID       string   `json:"id"`
	Query    string   `json:"query"`
	Positive []string `json:"positive"`
	Negative []string `json:"negative"`
}

// Completion is one generated continuation with its provenance: which
// prompt (and input row) it continues, which of that prompt's samples it
// is, the seed and sampling parameters it was drawn with, and why it
// stopped. With the model artifact's digest (the stage's key) it is enough
// to regenerate the row.
type Completion struct {
	PromptIndex int      `json:"prompt_index"`
	Input       string   `json:"input,omitempty"` // the input row's text, when prompts come from a corpus
	Prompt      string   `json:"prompt"`
	Sample      int      `json:"sample"`
	Seed        int64    `json:"seed"`
	Text        string   `json:"text"`
	StopReason  string   `json:"stop_reason"` // eos | stop | length | context
	StopString  string   `json:"stop_string,omitempty"`
	Tokens      int      `json:"tokens"` // generated tokens (EOS excluded)
	Sampling    Sampling `json:"sampling"`
	// TokenIDs are the generated token ids (EOS excluded; Tokens of them)
	// and PromptIDs the prompt's as the model read it (a causal model's
	// <|endoftext|> first where it was framed so; a T5's encoder input,
	// </s> last). Written only when the stage's token_ids is on (absent
	// otherwise, so rows written before them are unchanged; an empty list,
	// a completion that ended at once, is left out too). The text is
	// decode(TokenIDs), cut before the stop string when one ended it.
	TokenIDs  []int `json:"token_ids,omitempty"`
	PromptIDs []int `json:"prompt_ids,omitempty"`
}

// Sampling records the decoding parameters of a Completion.
type Sampling struct {
	Temperature      float64  `json:"temperature"`
	TopK             int      `json:"top_k"`
	TopP             float64  `json:"top_p"`
	PresencePenalty  float64  `json:"presence_penalty"`
	FrequencyPenalty float64  `json:"frequency_penalty"`
	MaxNewTokens     int      `json:"max_new_tokens"`
	Stop             []string `json:"stop,omitempty"`
	StopAtEOS        bool     `json:"stop_at_eos"`
}

// Write writes rows as JSONL to path (creating or truncating it).
func Write[T any](path string, rs []T) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<16)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for i := range rs {
		if err := enc.Encode(&rs[i]); err != nil {
			f.Close()
			return fmt.Errorf("%s: row %d: %w", path, i+1, err)
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Read reads a JSONL file of T. Unknown fields are an error, so a row of the
// wrong kind is caught at its line.
func Read[T any](path string) ([]T, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Decode[T](f, path)
}

// Decode reads JSONL of T from r; name is used in error messages.
func Decode[T any](r io.Reader, name string) ([]T, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 1<<28)
	var out []T
	line := 0
	for sc.Scan() {
		line++
		b := sc.Bytes()
		if len(b) == 0 {
			continue
		}
		var v T
		if err := strictUnmarshal(b, &v); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", name, line, err)
		}
		out = append(out, v)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s:%d: %v", name, line+1, err)
	}
	return out, nil
}

func strictUnmarshal(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}
