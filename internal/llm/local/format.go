package local

import (
	"fmt"
	"strings"

	"repro/internal/llm"
)

// Format is the one chat format of the in-process provider: every message
// as "Role: content" on its own line (System, User, Assistant), the
// answer prompted by a final "Assistant:". Plain words rather than special
// tokens, because a small model trained from scratch has no chat tokens
// and a few fine-tuning conversations teach it these; the model ends its
// answer with its end-of-text token. The name enters every request's model
// string: a change to the rendering must come with a new name.
const Format = "chat-v1"

var roles = map[string]string{"system": "System", "user": "User", "assistant": "Assistant"}

// Stops end an answer that runs on into a turn of its own (a model that
// has not learnt to stop at end-of-text).
var Stops = []string{"\nUser:", "\nSystem:", "\nAssistant:"}

// Render writes messages in the chat format, each on its own line(s),
// followed by the "Assistant:" that asks for the answer.
func Render(msgs []llm.Message) (string, error) {
	var b strings.Builder
	for i, m := range msgs {
		tag, ok := roles[m.Role]
		if !ok {
			return "", fmt.Errorf("message %d: role %q is not system, user or assistant", i, m.Role)
		}
		b.WriteString(tag)
		b.WriteString(": ")
		b.WriteString(strings.TrimSpace(m.Content))
		b.WriteByte('\n')
	}
	b.WriteString("Assistant:")
	return b.String(), nil
}

// Conversation is a prompt and its answer as one training text: the
// answer follows "Assistant:" after a space, as a model reading the prompt
// continues it.
func Conversation(prompt, answer string) string {
	return prompt + " " + strings.TrimSpace(answer)
}

// Fitted is a conversation cut to a token budget.
type Fitted struct {
	Text string // the rendered prompt (without the truncated part)
	IDs  []int  // its tokens
	// Dropped counts the exemplar turns left out (user and assistant
	// turns between the leading system message and the last message).
	Dropped int
	// Truncated is set when even the system message and the last message
	// did not fit and the prompt's tokens were cut from the left.
	Truncated bool
}

// Fit renders msgs within budget tokens (as encode counts them): the
// leading system message and the last message are kept, and the earliest
// exemplar turns are left out, a user/assistant pair at a time, until the
// rest fits, so a few-shot chat keeps as many of its most recent shots as
// the model's context window holds. When the two kept messages alone are
// too long, the prompt keeps its last budget tokens (the question and the
// "Assistant:" that asks for the answer); Text is then the rendering
// before the cut.
func Fit(msgs []llm.Message, encode func(string) []int, budget int) (Fitted, error) {
	if len(msgs) == 0 {
		return Fitted{}, fmt.Errorf("no messages")
	}
	if budget < 1 {
		return Fitted{}, fmt.Errorf("a token budget of %d leaves no room for a prompt", budget)
	}
	head := 0
	if msgs[0].Role == "system" && len(msgs) > 1 {
		head = 1
	}
	middle := msgs[head : len(msgs)-1]
	for drop := 0; ; drop += 2 {
		if drop > len(middle) {
			drop = len(middle)
		}
		kept := append(append(append([]llm.Message{}, msgs[:head]...), middle[drop:]...), msgs[len(msgs)-1])
		text, err := Render(kept)
		if err != nil {
			return Fitted{}, err
		}
		ids := encode(text)
		if len(ids) <= budget {
			return Fitted{Text: text, IDs: ids, Dropped: drop}, nil
		}
		if drop == len(middle) {
			return Fitted{Text: text, IDs: ids[len(ids)-budget:], Dropped: drop, Truncated: true}, nil
		}
	}
}
