package synth

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"repro/internal/llm/llmtest"
	"repro/internal/llm/local"
	"repro/internal/rows"
	"repro/registry"
)

func nliTriplets(n int) []rows.Triplet {
	out := make([]rows.Triplet, n)
	for i := range out {
		out[i] = rows.Triplet{Anchor: strings.Repeat("the cat sat ", 1+i%3) + "number " + string(rune('a'+i%26)) + string(rune('a'+i/26)),
			Positive: "a cat sat", Negative: "a dog sat on a log"}
	}
	return out
}

// TestAnnotateLocal: synth.annotate with the in-process provider keys its
// requests by the lm artifact's digest, stores them, and a re-run sends
// nothing and writes the same bytes; another model digest is another set
// of requests.
func TestAnnotateLocal(t *testing.T) {
	dir := llmtest.TinyLM(t, 128)
	s := newStage(t, "synth.annotate", nil)
	s.set["provider"] = cty.StringVal("local")
	s.set["max_tokens"] = cty.NumberIntVal(8)
	s.set["pool_size"] = cty.NumberIntVal(6)
	s.set["shots"] = cty.NumberIntVal(2)
	s.input("input", registry.FileSentences, sentences(6, "the dog sat on log %d"))
	s.input("exemplars", registry.FileTriplets, nliTriplets(10))
	s.inputs["lm"] = registry.Artifact{Kind: registry.KindLanguageModel, Dir: dir, Digest: "d1"}
	out, err := s.run()
	if err != nil && !strings.Contains(err.Error(), "no triplet survived") {
		t.Fatal(err)
	}
	store := s.store.(*memStore)
	if len(store.m) != 12 {
		t.Fatalf("%d requests stored, want 6 inputs x 2 labels", len(store.m))
	}
	for _, r := range store.m {
		if r.Provider != local.Kind || r.Model != local.ModelName("d1") || r.CompletionTokens == 0 && r.PromptTokens == 0 {
			t.Fatalf("stored request: provider %q model %q tokens %d/%d", r.Provider, r.Model, r.PromptTokens, r.CompletionTokens)
		}
	}
	if err == nil {
		first := read(t, filepath.Join(out["triplets"], registry.FileTriplets))
		out2 := s.mustRun()
		if len(store.m) != 12 {
			t.Fatalf("re-run: %d requests stored", len(store.m))
		}
		if !bytes.Equal(first, read(t, filepath.Join(out2["triplets"], registry.FileTriplets))) {
			t.Error("re-run wrote other triplets")
		}
		if m := string(read(t, filepath.Join(out2["metrics"], registry.FileMetrics))); !strings.Contains(m, `"cost": 0`) {
			t.Errorf("metrics without a zero cost: %s", m)
		}
	}
	s.inputs["lm"] = registry.Artifact{Kind: registry.KindLanguageModel, Dir: dir, Digest: "d2"}
	s.run()
	if len(store.m) != 24 {
		t.Errorf("another model: %d requests stored, want 24", len(store.m))
	}
	delete(s.inputs, "lm")
	if _, err := s.run(); err == nil || !strings.Contains(err.Error(), "needs the lm input") {
		t.Errorf("local without lm: %v", err)
	}
}

// TestSentencesLocal: synth.sentences through the in-process provider.
func TestSentencesLocal(t *testing.T) {
	dir := llmtest.TinyLM(t, 128)
	s := newStage(t, "synth.sentences", nil)
	s.set["provider"] = cty.StringVal("local")
	s.set["genres"] = strs("fiction")
	s.set["calls_per_genre"] = cty.NumberIntVal(3)
	s.set["sentences_per_call"] = cty.NumberIntVal(2)
	s.set["example_sentences"] = cty.NumberIntVal(2)
	s.set["topics_per_call"] = cty.NumberIntVal(1)
	s.set["prompts"] = strs("Write {count} sentences of {genre} on {topic1}.")
	s.set["caption_prompts"] = cty.ListValEmpty(cty.String)
	s.set["max_tokens"] = cty.NumberIntVal(16)
	s.input("examples", registry.FileSentences, sentences(30, "the cat sat on mat %d"))
	s.inputs["lm"] = registry.Artifact{Kind: registry.KindLanguageModel, Dir: dir, Digest: "d1"}
	if _, err := s.run(); err != nil && !strings.Contains(err.Error(), "no sentence survived") {
		t.Fatal(err)
	}
	if n := len(s.store.(*memStore).m); n != 3 {
		t.Errorf("%d requests stored, want 3", n)
	}
}

// TestChatCorpus: the fine-tuning chats are the annotate calls of the
// non-excluded anchors, fitted to the context, answered with the
// triplet's own labels, and list chats (the scratch calls' and the
// fixed naive calls') answered with corpus sentences.
func TestChatCorpus(t *testing.T) {
	dir := llmtest.TinyLM(t, 256)
	s := newStage(t, "synth.chat_corpus", nil)
	s.set["pool_size"] = cty.NumberIntVal(6)
	s.set["shots"] = cty.NumberIntVal(2)
	s.set["lists"] = cty.NumberIntVal(4)
	s.set["genres"] = strs("fiction", "letters")
	s.set["topics_per_call"] = cty.NumberIntVal(1)
	s.set["sentence_prompts"] = strs("Write {count} sentences of {genre} on {topic1}.")
	s.set["sentences_per_call"] = cty.NumberIntVal(2)
	s.set["example_sentences"] = cty.NumberIntVal(2)
	s.set["list_max_tokens"] = cty.NumberIntVal(64)
	s.set["max_exclude"] = cty.NumberIntVal(2)
	s.set["fixed_prompts"] = strs("Write {count} sentences.", "Never used {count}.")
	s.set["fixed_lists"] = cty.NumberIntVal(3)
	ts := nliTriplets(12)
	s.input("triplets", registry.FileTriplets, ts)
	s.input("exclude", registry.FileSentences, []rows.Sentence{{Text: ts[0].Anchor}, {Text: ts[1].Anchor}, {Text: ts[2].Anchor}})
	s.input("sentences", registry.FileSentences, sentences(30, "the dog sat on log %d"))
	s.inputs["lm"] = registry.Artifact{Kind: registry.KindLanguageModel, Dir: dir, Digest: "d1"}
	out := s.mustRun()
	chats, err := rows.Read[rows.Sentence](filepath.Join(out["sentences"], registry.FileSentences))
	if err != nil {
		t.Fatal(err)
	}
	labels, lists, fixed := 0, 0, 0
	for _, c := range chats {
		switch {
		case strings.HasPrefix(c.Text, "System: "):
			labels++
			if !strings.HasSuffix(c.Text, "\nAssistant: a cat sat") && !strings.HasSuffix(c.Text, "\nAssistant: a dog sat on a log") {
				t.Errorf("label chat without its answer: %q", c.Text)
			}
			for _, ex := range ts[:2] {
				if strings.Contains(c.Text, "User: "+ex.Anchor+"\nAssistant:") && strings.HasSuffix(c.Text, "") {
					last := c.Text[strings.LastIndex(c.Text, "User: "):]
					if strings.HasPrefix(last, "User: "+ex.Anchor+"\n") {
						t.Errorf("an excluded anchor was asked: %q", c.Text)
					}
				}
			}
		case strings.HasPrefix(c.Text, "User: Write 2 sentences of "):
			lists++
			if !strings.Contains(c.Text, "\nAssistant: 1. the dog sat on log ") || !strings.Contains(c.Text, "\n2. the dog sat on log ") {
				t.Errorf("list chat: %q", c.Text)
			}
		case strings.HasPrefix(c.Text, "User: Write 2 sentences.\n"):
			fixed++
			if !strings.Contains(c.Text, "\nAssistant: 1. the dog sat on log ") || !strings.Contains(c.Text, "\n2. the dog sat on log ") {
				t.Errorf("fixed list chat: %q", c.Text)
			}
		default:
			t.Errorf("unexpected chat %q", c.Text)
		}
	}
	// 12 triplets, the first two excluded (max_exclude = 2): 10 x 2 label
	// chats, less those whose prompt does not fit whole.
	var m map[string]float64
	if err := json.Unmarshal(read(t, filepath.Join(out["metrics"], registry.FileMetrics)), &m); err != nil {
		t.Fatal(err)
	}
	if labels+int(m["label_skipped_prompt_too_long"]+m["label_skipped_answer_too_long"]) != 20 || labels == 0 || lists != 4 || fixed != 3 ||
		m["excluded"] != 2 || float64(labels) != m["label_conversations"] || m["list_conversations"] != 7 {
		t.Errorf("%d label chats, %d list chats and %d fixed ones, want 20 (less skipped), 4 and 3; metrics %v", labels, lists, fixed, m)
	}
	// The fixed calls' prompt is checked as synth.sentences checks it, and
	// named as this stage's parameter.
	s.set["fixed_prompts"] = strs("Write some sentences.")
	if _, err := s.run(); err == nil || !strings.Contains(err.Error(), "fixed_prompts") || !strings.Contains(err.Error(), "{count}") {
		t.Errorf("fixed prompt without {count}: %v", err)
	}
	s.set["fixed_prompts"] = cty.ListValEmpty(cty.String)
	if _, err := s.run(); err == nil || !strings.Contains(err.Error(), "fixed_prompts") {
		t.Errorf("fixed_lists without a prompt: %v", err)
	}
	s.set["fixed_lists"] = cty.NumberIntVal(0)
	// A context too small for any chat is an error, not an empty corpus.
	s.inputs["lm"] = registry.Artifact{Kind: registry.KindLanguageModel, Dir: llmtest.TinyLM(t, 40), Digest: "d2"}
	s.set["label_max_tokens"] = cty.NumberIntVal(24)
	s.set["list_max_tokens"] = cty.NumberIntVal(24)
	if _, err := s.run(); err == nil || !strings.Contains(err.Error(), "context window") {
		t.Errorf("tiny context: %v", err)
	}
}
