// Package llmtest is a loopback server speaking the OpenAI chat-completions
// protocol, for tests: JSON answers and server-sent-event streams exactly as
// the API sends them, and on demand the failures a real server produces --
// 429 with Retry-After, 5xx, 401/404 error objects, malformed JSON, streams
// cut short, answers slower than the client's timeout.
package llmtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ChatRequest is the part of a chat-completions request body the server
// reads.
type ChatRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"messages"`
	Temperature      *float64 `json:"temperature"`
	TopP             *float64 `json:"top_p"`
	PresencePenalty  *float64 `json:"presence_penalty"`
	FrequencyPenalty *float64 `json:"frequency_penalty"`
	MaxTokens        *int     `json:"max_tokens"`
	Stream           bool     `json:"stream"`
	StreamOptions    *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

// Last is the content of the last message.
func (r *ChatRequest) Last() string {
	if len(r.Messages) == 0 {
		return ""
	}
	return r.Messages[len(r.Messages)-1].Content
}

// Received is one request as the server saw it.
type Received struct {
	N             int // 1-based arrival number
	Body          ChatRequest
	Raw           []byte
	Authorization string
	Path          string
}

// Reply says how to answer one request. The zero Reply answers 200 with
// Content (or the server's Answer function when Content is "").
type Reply struct {
	Status     int    // 0: 200
	RetryAfter string // Retry-After header value
	Error      string // error message for Status >= 400 (an OpenAI error object)
	Code       string // its code ("model_not_found"); "": null
	RawBody    string // sent verbatim instead of a JSON answer (malformed bodies)
	// ContentType of a RawBody (default application/json; text/event-stream
	// for a hand-made stream).
	ContentType string
	// Header holds further response headers (Retry-After-Ms, a lying
	// Content-Length).
	Header  map[string]string
	Content string
	Delay   time.Duration // before the headers (a slow server)
	// Truncate (streaming only) closes the stream after half the content,
	// before any finish_reason or [DONE].
	Truncate bool
	// NoUsage leaves usage out of the answer.
	NoUsage bool
}

// Server is the loopback server. Its zero Script answers every request.
type Server struct {
	*httptest.Server
	// Script decides the reply to the n-th request (1-based); nil: the
	// zero Reply.
	Script func(n int, r *ChatRequest) Reply
	// Answer makes the content of a zero Reply; nil: "echo: " + the last
	// message.
	Answer func(r *ChatRequest) string

	mu       sync.Mutex
	received []Received
	answered int
}

// New starts a server; Close it when done.
func New() *Server {
	s := &Server{}
	s.Server = httptest.NewServer(http.HandlerFunc(s.handle))
	return s
}

// BaseURL is the API root to give a client: URL + "/v1".
func (s *Server) BaseURL() string { return s.URL + "/v1" }

// Received returns the requests so far.
func (s *Server) Received() []Received {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Received(nil), s.received...)
}

// Answered is the number of successful answers written out in full.
func (s *Server) Answered() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.answered
}

func (s *Server) answer() {
	s.mu.Lock()
	s.answered++
	s.mu.Unlock()
}

// Count is the number of requests so far.
func (s *Server) Count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.received)
}

func (s *Server) handle(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost || req.URL.Path != "/v1/chat/completions" {
		writeError(w, http.StatusNotFound, "no route "+req.Method+" "+req.URL.Path)
		return
	}
	var raw []byte
	buf := make([]byte, 4096)
	for {
		n, err := req.Body.Read(buf)
		raw = append(raw, buf[:n]...)
		if err != nil {
			break
		}
	}
	var body ChatRequest
	if err := json.Unmarshal(raw, &body); err != nil {
		writeError(w, http.StatusBadRequest, "invalid JSON body: "+err.Error())
		return
	}
	s.mu.Lock()
	n := len(s.received) + 1
	s.received = append(s.received, Received{N: n, Body: body, Raw: raw, Authorization: req.Header.Get("Authorization"), Path: req.URL.Path})
	script, answer := s.Script, s.Answer
	s.mu.Unlock()

	var rep Reply
	if script != nil {
		rep = script(n, &body)
	}
	if rep.Delay > 0 {
		select {
		case <-time.After(rep.Delay):
		case <-req.Context().Done():
			return
		}
	}
	if rep.RetryAfter != "" {
		w.Header().Set("Retry-After", rep.RetryAfter)
	}
	for k, v := range rep.Header {
		w.Header().Set(k, v)
	}
	if rep.Status >= 400 {
		writeCodedError(w, rep.Status, rep.Error, rep.Code)
		return
	}
	if rep.RawBody != "" {
		ct := rep.ContentType
		if ct == "" {
			ct = "application/json"
		}
		w.Header().Set("Content-Type", ct)
		w.WriteHeader(http.StatusOK)
		fmt.Fprint(w, rep.RawBody)
		return
	}
	content := rep.Content
	if content == "" {
		if answer != nil {
			content = answer(&body)
		} else {
			content = "echo: " + body.Last()
		}
	}
	prompt := 0
	for _, m := range body.Messages {
		prompt += len(strings.Fields(m.Content)) + 4
	}
	completion := len(strings.Fields(content))
	if body.Stream {
		s.stream(w, body, rep, content, prompt, completion)
		if !rep.Truncate {
			s.answer()
		}
		return
	}
	out := map[string]any{
		"id": "chatcmpl-" + strconv.Itoa(n), "object": "chat.completion", "created": 1700000000, "model": body.Model,
		"choices": []map[string]any{{
			"index": 0, "message": map[string]any{"role": "assistant", "content": content}, "finish_reason": "stop", "logprobs": nil,
		}},
	}
	if !rep.NoUsage {
		out["usage"] = map[string]any{"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(out)
	if fl, ok := w.(http.Flusher); ok {
		fl.Flush()
	}
	s.answer()
}

func (s *Server) stream(w http.ResponseWriter, body ChatRequest, rep Reply, content string, prompt, completion int) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	send := func(v any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "data: %s\n\n", b)
		if fl != nil {
			fl.Flush()
		}
	}
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{
			"id": "chatcmpl-s", "object": "chat.completion.chunk", "created": 1700000000, "model": body.Model,
			"choices": []map[string]any{{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": nil}},
		}
	}
	send(chunk(map[string]any{"role": "assistant", "content": ""}, nil))
	words := strings.SplitAfter(content, " ")
	if rep.Truncate {
		words = words[:len(words)/2]
	}
	for _, wd := range words {
		send(chunk(map[string]any{"content": wd}, nil))
	}
	if rep.Truncate {
		return // the connection closes: no finish_reason, no [DONE]
	}
	send(chunk(map[string]any{}, "stop"))
	if body.StreamOptions != nil && body.StreamOptions.IncludeUsage && !rep.NoUsage {
		send(map[string]any{
			"id": "chatcmpl-s", "object": "chat.completion.chunk", "created": 1700000000, "model": body.Model,
			"choices": []any{}, "usage": map[string]any{"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
		})
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
	if fl != nil {
		fl.Flush()
	}
}

func writeError(w http.ResponseWriter, status int, msg string) { writeCodedError(w, status, msg, "") }

// writeCodedError writes an OpenAI error object with code (null when "").
func writeCodedError(w http.ResponseWriter, status int, msg, code string) {
	if msg == "" {
		msg = http.StatusText(status)
	}
	var c any
	if code != "" {
		c = code
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": "test_error", "param": nil, "code": c}})
}
