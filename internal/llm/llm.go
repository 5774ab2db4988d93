// Package llm sends chat requests to language models and never pays for the
// same request twice.
//
// A Provider answers one chat Request (a model, messages and sampling
// parameters): package chatapi speaks the OpenAI chat-completions protocol
// to any compatible server; the project's own small causal LM answers
// in-process. A Client stands between the caller and the provider: it keys
// every request by its content (Key), answers from a Cache when it can, and
// sends the rest with bounded concurrency, requests/min and tokens/min
// limits, per-attempt timeouts and retries (exponential backoff with
// jitter, honouring Retry-After), committing each response to the cache the
// moment it arrives. A request the server refuses for good (a bad key, an
// unknown model, a malformed request) stops the whole batch at once instead
// of being retried by every worker.
//
// # Keys
//
// Key hashes (BLAKE3) the canonical JSON of: the provider kind, the model,
// the messages, every sampling parameter, and the sample index. The sample
// index tells apart requests whose messages are identical but which are
// meant as independent samples (SynCSE's naive generation sends one fixed
// prompt many times). Nothing else enters the key: not the server's address
// (the same model behind another proxy answers the same question), not the
// concurrency or rate limits, never the API key. So a re-run, a change to an
// unrelated parameter or a wider grid finds every request it repeats.
//
// The library knows nothing of HCL, the runner or SQLite: the Cache is an
// interface (the runner implements it on its index; tests use a map).
package llm

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/zeebo/blake3"
)

// Message is one turn of a chat.
type Message struct {
	Role    string `json:"role"` // "system", "user" or "assistant"
	Content string `json:"content"`
}

// Sampling holds the decoding parameters of a request. Every field is sent
// as given (a temperature of 0 means greedy, not "server default"), except
// MaxTokens 0, which leaves the length to the server.
type Sampling struct {
	Temperature      float64 `json:"temperature"`
	TopP             float64 `json:"top_p"`
	PresencePenalty  float64 `json:"presence_penalty"`
	FrequencyPenalty float64 `json:"frequency_penalty"`
	MaxTokens        int     `json:"max_tokens"`
}

// Check reports a sampling parameter outside the range the OpenAI API
// accepts, naming it.
func (s Sampling) Check() error {
	switch {
	case s.Temperature < 0 || s.Temperature > 2:
		return fmt.Errorf("temperature %v is outside [0, 2]", s.Temperature)
	case s.TopP <= 0 || s.TopP > 1:
		return fmt.Errorf("top_p %v is outside (0, 1]", s.TopP)
	case s.PresencePenalty < -2 || s.PresencePenalty > 2:
		return fmt.Errorf("presence_penalty %v is outside [-2, 2]", s.PresencePenalty)
	case s.FrequencyPenalty < -2 || s.FrequencyPenalty > 2:
		return fmt.Errorf("frequency_penalty %v is outside [-2, 2]", s.FrequencyPenalty)
	case s.MaxTokens < 0:
		return fmt.Errorf("max_tokens %d is negative", s.MaxTokens)
	}
	return nil
}

// Request is one chat completion to obtain.
type Request struct {
	Model    string
	Messages []Message
	Sampling
	// Sample numbers independent samples of otherwise identical requests;
	// it is part of the key and never sent.
	Sample int
}

// Usage counts the tokens of one exchange.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	// Estimated is set when the server reported no usage (some compatible
	// servers omit it when streaming) and the counts are EstimateTokens'.
	Estimated bool `json:"estimated,omitempty"`
}

// Response is a model's answer.
type Response struct {
	Content      string `json:"content"`
	FinishReason string `json:"finish_reason"` // "stop", "length", ...
	Usage        Usage  `json:"usage"`
}

// keyVersion changes when the key's preimage changes shape, so old and new
// entries can never be confused.
const keyVersion = 1

// keyDoc is the preimage of a request key, and what the cache stores as the
// request: everything that determines the answer's distribution, nothing
// secret.
type keyDoc struct {
	V        int       `json:"v"`
	Provider string    `json:"provider"`
	Model    string    `json:"model"`
	Messages []Message `json:"messages"`
	Sampling Sampling  `json:"sampling"`
	Sample   int       `json:"sample"`
}

// Canonical returns the request's canonical JSON as sent to provider kind:
// the key's preimage.
func Canonical(kind string, r Request) []byte {
	msgs := r.Messages
	if msgs == nil {
		msgs = []Message{}
	}
	b, err := json.Marshal(keyDoc{V: keyVersion, Provider: kind, Model: r.Model, Messages: msgs, Sampling: r.Sampling, Sample: r.Sample})
	if err != nil {
		panic(err) // strings and numbers only: cannot fail
	}
	return b
}

// Key is the content key of r sent to a provider of the given kind: hex
// BLAKE3 of Canonical.
func Key(kind string, r Request) string {
	sum := blake3.Sum256(Canonical(kind, r))
	return hex.EncodeToString(sum[:])
}

// EstimateTokens approximates the token count of text with the rule of
// thumb of OpenAI's tokenizer for English (about four characters a token);
// used for tokens/min budgeting before a request is sent, for cost
// estimates in plans, and for servers that report no usage.
func EstimateTokens(text string) int {
	n := len(text)
	if n == 0 {
		return 0
	}
	return (n + 3) / 4
}

// PromptTokens estimates the prompt tokens of messages, counting a few
// tokens of chat framing per message as the chat format adds.
func PromptTokens(msgs []Message) int {
	n := 3
	for _, m := range msgs {
		n += 4 + EstimateTokens(m.Content)
	}
	return n
}

// Price is what a model costs, in dollars per 1,000 tokens.
type Price struct {
	InputPer1K  float64 `json:"input_per_1k"`
	OutputPer1K float64 `json:"output_per_1k"`
}

// Cost is the price of the given token counts.
func (p Price) Cost(prompt, completion int64) float64 {
	return (float64(prompt)*p.InputPer1K + float64(completion)*p.OutputPer1K) / 1000
}

// PriceOf finds model's price in a table: the exact name, else the longest
// entry that is a prefix of it followed by "-" (a dated snapshot such as
// gpt-3.5-turbo-0301 priced as gpt-3.5-turbo).
func PriceOf(table map[string]Price, model string) (Price, bool) {
	if p, ok := table[model]; ok {
		return p, true
	}
	best, found := "", false
	for name := range table {
		if strings.HasPrefix(model, name+"-") && len(name) > len(best) {
			best, found = name, true
		}
	}
	if !found {
		return Price{}, false
	}
	return table[best], true
}
