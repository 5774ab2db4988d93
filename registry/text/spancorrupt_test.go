package text

import (
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"repro/internal/model/tokenizer"
	"repro/internal/rows"
	"repro/internal/text/spancorrupt"
	"repro/registry"
)

func runSpan(t *testing.T, params SpanCorruptParams, inDir string, seed int64) ([]rows.Seq2Seq, error) {
	t.Helper()
	r := registryForTest(t)
	st, _ := r.Lookup("text.span_corrupt")
	if err := params.Validate(); err != nil {
		return nil, err
	}
	out := t.TempDir()
	env := &registry.Env{
		Params:  &params,
		Inputs:  map[string]registry.Artifact{"input": {Kind: registry.KindSentences, Dir: inDir}},
		Outputs: map[string]string{"instances": out},
		Work:    t.TempDir(),
		Seed:    seed,
	}
	if err := st.Call(context.Background(), env); err != nil {
		return nil, err
	}
	return rows.Read[rows.Seq2Seq](filepath.Join(out, registry.FileInstances))
}

// TestSpanCorruptStage: packed STS-B sentences become instances whose
// source and target give the packed words back, with T5's counts; the
// seed fixes them; the T5 tokenizer reads the sentinels as sentinel ids.
func TestSpanCorruptStage(t *testing.T) {
	r := registryForTest(t)
	st, _ := r.Lookup("text.span_corrupt")
	def := st.Params.(SpanCorruptParams)
	if def != (SpanCorruptParams{NoiseDensity: 0.15, MeanSpanLength: 3, PackWords: 64, Copies: 1}) {
		t.Fatalf("defaults %+v", def)
	}
	sents := stsSentences(t, 200)
	in := writeSentences(t, sents)
	var words []string
	for _, s := range sents {
		words = append(words, strings.Fields(s.Text)...)
	}
	p := def
	p.Copies = 2
	got, err := runSpan(t, p, in, 42)
	if err != nil {
		t.Fatal(err)
	}
	nseq := (len(words) + 63) / 64
	if len(got) != 2*nseq {
		t.Fatalf("%d instances from %d words, want %d", len(got), len(words), 2*nseq)
	}
	tok, err := tokenizer.LoadSentencePiece("../../internal/model/tokenizer/testdata/spm/t5like.model", tokenizer.NumT5Sentinels)
	if err != nil {
		t.Fatal(err)
	}
	sentinel := func(w string) (int, bool) {
		if id, ok := tok.ID(w); ok {
			return tok.SentinelIndex(id)
		}
		return 0, false
	}
	for i, inst := range got {
		seq := i / 2
		want := words[seq*64 : min(len(words), seq*64+64)]
		back, err := spancorrupt.Reconstruct(strings.Fields(inst.Source), strings.Fields(inst.Target), sentinel)
		if err != nil || !reflect.DeepEqual(back, want) {
			t.Fatalf("instance %d: %v\n%q\n%q", i, err, inst.Source, inst.Target)
		}
		noise, spans := spancorrupt.T5.Counts(len(want))
		if n := strings.Count(inst.Source, "<extra_id_"); n != spans {
			t.Fatalf("instance %d: %d sentinels, want %d", i, n, spans)
		}
		if n := len(strings.Fields(inst.Target)) - spans; n != noise {
			t.Fatalf("instance %d: %d noise words, want %d", i, n, noise)
		}
		// The tokenizer encodes the written sentinels as sentinel ids.
		ids := tok.Encode(inst.Source, 0)
		k := 0
		for _, id := range ids {
			if j, ok := tok.SentinelIndex(id); ok {
				if j != k {
					t.Fatalf("instance %d: sentinel %d where %d expected", i, j, k)
				}
				k++
			}
		}
		if k != spans || ids[len(ids)-1] != tok.EOS() {
			t.Fatalf("instance %d: %d sentinel ids, want %d; ids %v", i, k, spans, ids)
		}
	}
	if got[0] == got[1] {
		t.Fatal("two copies of a sequence got the same mask")
	}
	again, err := runSpan(t, p, in, 42)
	if err != nil || !reflect.DeepEqual(again, got) {
		t.Fatalf("same seed, other instances (%v)", err)
	}
	other, err := runSpan(t, p, in, 7)
	if err != nil || reflect.DeepEqual(other, got) {
		t.Fatalf("another seed, the same instances (%v)", err)
	}
	// pack_words = 0: one instance per sentence.
	p.PackWords, p.Copies = 0, 1
	single, err := runSpan(t, p, in, 1)
	if err != nil || len(single) != len(sents) {
		t.Fatalf("pack_words 0: %d instances, %v", len(single), err)
	}
}

func TestSpanCorruptBadInput(t *testing.T) {
	in := writeSentences(t, []rows.Sentence{{Text: "fine"}, {Text: "a <extra_id_0> here"}})
	def := SpanCorruptParams{NoiseDensity: 0.15, MeanSpanLength: 3, PackWords: 64, Copies: 1}
	if _, err := runSpan(t, def, in, 1); err == nil || !strings.Contains(err.Error(), "sentences.jsonl:2: the text holds a T5 sentinel") {
		t.Fatalf("sentinel in text: %v", err)
	}
	empty := writeSentences(t, []rows.Sentence{{Text: "  "}})
	if _, err := runSpan(t, def, empty, 1); err == nil || !strings.Contains(err.Error(), "no words") {
		t.Fatalf("no words: %v", err)
	}
	for _, c := range []struct {
		p    SpanCorruptParams
		want string
	}{
		{SpanCorruptParams{NoiseDensity: 1.5, MeanSpanLength: 3, PackWords: 64, Copies: 1}, "noise_density"},
		{SpanCorruptParams{NoiseDensity: 0.15, MeanSpanLength: 0.5, PackWords: 64, Copies: 1}, "mean_noise_span_length"},
		{SpanCorruptParams{NoiseDensity: 0.15, MeanSpanLength: 3, PackWords: 5000, Copies: 1}, "more than T5's 100 sentinels"},
		{SpanCorruptParams{NoiseDensity: 0.15, MeanSpanLength: 3, PackWords: 64, Copies: 0}, "copies"},
	} {
		if err := c.p.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.p, err, c.want)
		}
	}
}
