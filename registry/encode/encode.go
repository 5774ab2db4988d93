// Package encode holds the encode.* stage types, which build the non-neural
// encoder artifacts of repro/internal/encoder/nonneural: averaged GloVe vectors,
// TF-IDF fitted on a corpus, and vectors read from a user's file. Each
// writes one KindEncoder artifact that evaluate.* opens with encoder.Open.
//
// encode.file reads a path outside the store, so its cache key cannot see
// the file's content; its optional sha256 parameter pins the content (and,
// being a parameter, changes the key when the file changes). Without it a
// changed file at the same path keeps the old cached artifact.
package encode

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"repro/internal/dataset"
	"repro/internal/encoder/nonneural"
	"repro/internal/rows"
	"repro/registry"
)

// Register adds the encode.* stage types to r and registers the encoder
// types they write with package encoder (so the artifacts open in this process).
func Register(r *registry.Registry) {
	nonneural.Register()
	r.Add(gloveType())
	r.Add(tfidfType())
	r.Add(fileType())
	r.Add(poolingType())
}

// catalogue is a variable so tests can point it at a temporary directory.
var catalogue = dataset.Default

func encoderPort() []registry.Port {
	return []registry.Port{{Name: "encoder", Kind: registry.KindEncoder, Doc: "encoder.json and the encoder's files"}}
}

// GloVeParams are encode.glove_avg's parameters.
type GloVeParams struct {
	Vectors string `cty:"vectors" doc:"word-vector dataset of the catalogue"`
}

func gloveType() *registry.StageType {
	return &registry.StageType{
		Name:    "encode.glove_avg",
		Version: 1,
		Doc: "Sentence = mean of its words' GloVe vectors (lower-cased PTB-style tokens; unknown words skipped; " +
			"no known word gives the zero vector). Stores the full table as float32.",
		Params:   GloVeParams{Vectors: "glove.6B.100d"},
		Outputs:  encoderPort(),
		Datasets: func(p any) []string { return []string{p.(*GloVeParams).Vectors} },
		Run: func(ctx context.Context, env *registry.Env) error {
			p := env.Params.(*GloVeParams)
			v, err := catalogue().GloVe(p.Vectors)
			if err != nil {
				return fmt.Errorf("vectors: %v", err)
			}
			return nonneural.WriteGloVeAvg(env.Output("encoder"), v, p.Vectors)
		},
	}
}

// TFIDFParams are encode.tfidf's parameters.
type TFIDFParams struct {
	MaxFeatures int `cty:"max_features" doc:"keep the N most frequent terms of the corpus (vector size); 0 keeps all"`
}

func tfidfType() *registry.StageType {
	return &registry.StageType{
		Name:    "encode.tfidf",
		Version: 1,
		Doc: "TF-IDF bag of words fitted on a sentence corpus, as scikit-learn's TfidfVectorizer defaults " +
			"(smooth idf, L2 norm), limited to max_features terms; dense vectors.",
		Params:  TFIDFParams{MaxFeatures: 20000},
		Inputs:  []registry.Port{{Name: "corpus", Kind: registry.KindSentences, Doc: "sentences the vocabulary and idf are fitted on"}},
		Outputs: encoderPort(),
		Run: func(ctx context.Context, env *registry.Env) error {
			p := env.Params.(*TFIDFParams)
			in, err := env.Input("corpus")
			if err != nil {
				return err
			}
			ss, err := rows.Read[rows.Sentence](in.Path(registry.FileSentences))
			if err != nil {
				return fmt.Errorf("corpus: %v", err)
			}
			texts := make([]string, len(ss))
			for i, s := range ss {
				texts[i] = s.Text
			}
			m, err := nonneural.FitTFIDF(texts, p.MaxFeatures)
			if err != nil {
				return fmt.Errorf("corpus %s: %v", in.Path(registry.FileSentences), err)
			}
			return m.Write(env.Output("encoder"))
		},
	}
}

// FileParams are encode.file's parameters.
type FileParams struct {
	Path   string `cty:"path" required:"true" path:"file" doc:"JSONL (or .jsonl.gz) file of {\"text\": ..., \"vector\": [...]} rows; a relative path resolves against the directory of the file that writes it (the working directory for -var and --set)"`
	SHA256 string `cty:"sha256" doc:"expected sha256 of the file, checked before it is read (the file's content is in the cache key either way)"`
}

func fileType() *registry.StageType {
	return &registry.StageType{
		Name:    "encode.file",
		Version: 2, // 2: encoder.json names the source file by its base name, not the path given
		Doc: "Sentence vectors computed elsewhere: the file is validated and copied into the artifact; " +
			"encoding a sentence the file lacks is an error naming it.",
		Params:  FileParams{},
		Outputs: encoderPort(),
		// The file's content is in the key (a changed file re-runs the
		// stage, a missing one fails it), whether or not sha256 is given.
		Externals: func(params any) ([]registry.External, error) {
			return []registry.External{{Name: "path", Path: params.(*FileParams).Path}}, nil
		},
		Run: func(ctx context.Context, env *registry.Env) error {
			p := env.Params.(*FileParams)
			if p.SHA256 != "" {
				got, err := fileSHA256(p.Path)
				if err != nil {
					return fmt.Errorf("path: %v", err)
				}
				if want := strings.ToLower(p.SHA256); got != want {
					return fmt.Errorf("path: %s has sha256 %s, the sha256 parameter says %s", p.Path, got, want)
				}
			}
			return nonneural.WriteFileVectors(env.Output("encoder"), p.Path)
		},
	}
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(filepath.Clean(path))
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("%s: %v", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
