// Package chatapi is the llm.Provider for any server that speaks the OpenAI
// chat-completions API (OpenAI itself, vLLM, llama.cpp's server, Ollama, LM
// Studio), through OpenAI's official Go client (github.com/openai/openai-go).
//
// Three choices keep it predictable:
//   - The client is built from explicit options only. openai-go's NewClient
//     reads OPENAI_API_KEY, OPENAI_BASE_URL and OPENAI_ORG_ID from the
//     environment; a key the user did not name could then be sent to
//     whatever base_url the experiment points at. Here the key is exactly
//     the one passed in Config (the caller reads it from the variable the
//     experiment names), and none is sent when it is empty.
//   - The SDK's own retries are off: llm.Client owns retries, backoff and
//     rate limits for the whole batch.
//   - A middleware records each HTTP response's status and Retry-After
//     headers, so a failure is classified by its status even when the body
//     is not the JSON error object the SDK expects (a proxy's HTML page, an
//     empty 502): a 401 is never mistaken for a transient error and retried.
//     It also bounds the body read (Config.MaxBodyBytes): a server cannot
//     make the process hold an answer of any size.
//   - Every text that comes from the server -- error messages, bodies that
//     do not parse, the answers themselves -- is passed through
//     llm.Redact with the key before it leaves the provider: a 401 that
//     echoes the key, whole or masked, puts it on no console, in no log
//     and in no cache.
//
// Streaming (Config.Stream) reads the SSE events, asks for usage in the last
// one (stream_options.include_usage) and treats a stream that ends before
// any choice has a finish_reason as truncated: a retryable failure, never a
// half answer.
package chatapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/openai/openai-go"
	"github.com/openai/openai-go/option"

	"repro/internal/llm"
)

// Kind is the provider kind in request keys.
const Kind = "openai"

// Config configures a Provider.
type Config struct {
	// BaseURL is the API root, e.g. https://api.openai.com/v1 or
	// http://localhost:8000/v1; requests go to BaseURL/chat/completions.
	BaseURL string
	// APIKey is sent as a bearer token when not empty. It is never logged
	// nor part of any error message.
	APIKey string
	// Stream asks for server-sent events instead of one JSON body.
	Stream bool
	// HTTPClient is used when set (tests); else http.DefaultClient's
	// transport without a client-wide timeout (llm.Client times each
	// attempt).
	HTTPClient *http.Client
	// MaxBodyBytes bounds the bytes read of one response body, a stream's
	// included (default DefaultMaxBodyBytes); past it the answer is an
	// *llm.TooLargeError.
	MaxBodyBytes int64
}

// DefaultMaxBodyBytes is Config.MaxBodyBytes' default: room for a streamed
// answer well past llm.DefaultMaxAnswerBytes (each streamed token costs a
// JSON event of a hundred-odd bytes), far below what would strain memory.
const DefaultMaxBodyBytes = 8 << 20

// Provider sends chat requests to one server.
type Provider struct {
	svc     openai.ChatCompletionService
	stream  bool
	url     string // base URL for messages, without credentials
	key     string // for redaction only
	maxBody int64
}

// New checks cfg and returns a provider.
func New(cfg Config) (*Provider, error) {
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("base_url %q is not an http(s) URL such as https://api.openai.com/v1", cfg.BaseURL)
	}
	if u.User != nil {
		return nil, fmt.Errorf("base_url must not hold credentials; name the environment variable with the key in api_key_env")
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	maxBody := cfg.MaxBodyBytes
	if maxBody <= 0 {
		maxBody = DefaultMaxBodyBytes
	}
	opts := []option.RequestOption{
		option.WithBaseURL(cfg.BaseURL),
		option.WithHTTPClient(hc),
		option.WithMaxRetries(0),
		option.WithMiddleware(func(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
			return recordStatus(req, next, maxBody)
		}),
	}
	if cfg.APIKey != "" {
		opts = append(opts, option.WithAPIKey(cfg.APIKey))
	}
	clean := *u
	clean.RawQuery, clean.Fragment = "", ""
	return &Provider{svc: openai.NewChatCompletionService(opts...), stream: cfg.Stream, url: strings.TrimRight(clean.String(), "/") + "/chat/completions",
		key: cfg.APIKey, maxBody: maxBody}, nil
}

// Kind implements llm.Provider.
func (p *Provider) Kind() string { return Kind }

// Redact implements llm.Redactor: text without the key or a masked
// fragment of it.
func (p *Provider) Redact(text string) string { return llm.Redact(text, p.key) }

// exchange is what the middleware saw of the last HTTP response of one
// call (each call has its own, through the context).
type exchange struct {
	mu       sync.Mutex
	status   int
	header   http.Header
	tooLarge bool // the body ran past the bound
}

type exchangeKey struct{}

func recordStatus(req *http.Request, next option.MiddlewareNext, maxBody int64) (*http.Response, error) {
	res, err := next(req)
	x, ok := req.Context().Value(exchangeKey{}).(*exchange)
	if !ok || res == nil {
		return res, err
	}
	x.mu.Lock()
	x.status, x.header = res.StatusCode, res.Header.Clone()
	x.mu.Unlock()
	if res.Body != nil {
		if res.ContentLength > maxBody {
			// Declared too long: not one byte of it is read.
			res.Body.Close()
			x.mu.Lock()
			x.tooLarge = true
			x.mu.Unlock()
			return nil, &llm.TooLargeError{What: "response body", Limit: maxBody}
		}
		res.Body = &boundedBody{rc: res.Body, left: maxBody, x: x}
	}
	return res, err
}

// boundedBody reads at most left bytes of a body, then fails and marks the
// exchange: the SDK reads bodies whole, so the bound must be in the read.
type boundedBody struct {
	rc   io.ReadCloser
	left int64
	x    *exchange
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// One byte more tells a body of exactly the bound from a longer one.
		var one [1]byte
		n, err := b.rc.Read(one[:])
		if n == 0 {
			return 0, err
		}
		b.x.mu.Lock()
		b.x.tooLarge = true
		b.x.mu.Unlock()
		return 0, errBodyTooLarge
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *boundedBody) Close() error { return b.rc.Close() }

var errBodyTooLarge = errors.New("response body past the bound")

func (p *Provider) params(r llm.Request) openai.ChatCompletionNewParams {
	msgs := make([]openai.ChatCompletionMessageParamUnion, len(r.Messages))
	for i, m := range r.Messages {
		switch m.Role {
		case "system":
			msgs[i] = openai.SystemMessage(m.Content)
		case "assistant":
			msgs[i] = openai.AssistantMessage(m.Content)
		default:
			msgs[i] = openai.UserMessage(m.Content)
		}
	}
	ps := openai.ChatCompletionNewParams{
		Model:            r.Model,
		Messages:         msgs,
		Temperature:      openai.Float(r.Temperature),
		TopP:             openai.Float(r.TopP),
		PresencePenalty:  openai.Float(r.PresencePenalty),
		FrequencyPenalty: openai.Float(r.FrequencyPenalty),
	}
	if r.MaxTokens > 0 {
		ps.MaxTokens = openai.Int(int64(r.MaxTokens))
	}
	if p.stream {
		ps.StreamOptions.IncludeUsage = openai.Bool(true)
	}
	return ps
}

// Complete implements llm.Provider.
func (p *Provider) Complete(ctx context.Context, r llm.Request) (llm.Response, error) {
	for _, m := range r.Messages {
		if m.Role != "system" && m.Role != "user" && m.Role != "assistant" {
			return llm.Response{}, llm.Fatal(fmt.Errorf("message role %q is not system, user or assistant", m.Role))
		}
	}
	x := &exchange{}
	ctx = context.WithValue(ctx, exchangeKey{}, x)
	var resp llm.Response
	var err error
	if p.stream {
		resp, err = p.completeStream(ctx, r)
	} else {
		resp, err = p.complete(ctx, r)
	}
	if err != nil {
		return llm.Response{}, p.classify(ctx, x, err)
	}
	resp.Content = p.Redact(resp.Content)
	resp.FinishReason = p.Redact(resp.FinishReason)
	return resp, nil
}

func (p *Provider) complete(ctx context.Context, r llm.Request) (llm.Response, error) {
	c, err := p.svc.New(ctx, p.params(r))
	if err != nil {
		return llm.Response{}, err
	}
	if c == nil { // a body of "null" decodes to no completion and no error
		return llm.Response{}, llm.Transient("malformed response: null", nil)
	}
	if len(c.Choices) == 0 {
		return llm.Response{}, llm.Transient("malformed response: no choices", nil)
	}
	ch := c.Choices[0]
	if ch.FinishReason == "" && !ch.JSON.Message.Valid() {
		return llm.Response{}, llm.Transient("malformed response: the choice has no message", nil)
	}
	return llm.Response{
		Content:      ch.Message.Content,
		FinishReason: ch.FinishReason,
		Usage:        llm.Usage{PromptTokens: int(c.Usage.PromptTokens), CompletionTokens: int(c.Usage.CompletionTokens)},
	}, nil
}

func (p *Provider) completeStream(ctx context.Context, r llm.Request) (llm.Response, error) {
	st := p.svc.NewStreaming(ctx, p.params(r))
	defer st.Close()
	var b strings.Builder
	var out llm.Response
	for st.Next() {
		ch := st.Current()
		if ch.JSON.Usage.Valid() && (ch.Usage.PromptTokens > 0 || ch.Usage.CompletionTokens > 0) {
			out.Usage = llm.Usage{PromptTokens: int(ch.Usage.PromptTokens), CompletionTokens: int(ch.Usage.CompletionTokens)}
		}
		for _, c := range ch.Choices {
			if c.Index != 0 {
				continue
			}
			b.WriteString(c.Delta.Content)
			if c.FinishReason != "" {
				out.FinishReason = c.FinishReason
			}
		}
	}
	if err := st.Err(); err != nil {
		return llm.Response{}, err
	}
	if out.FinishReason == "" {
		return llm.Response{}, llm.Transient(fmt.Sprintf("truncated stream: it ended after %d characters without a finish_reason", b.Len()), nil)
	}
	out.Content = b.String()
	return out, nil
}

// classify turns a failed call into llm's error kinds, by the HTTP status
// the middleware recorded when there was one.
func (p *Provider) classify(ctx context.Context, x *exchange, err error) error {
	var te *llm.TransientError
	var fe *llm.FatalError
	if errors.As(err, &te) || errors.As(err, &fe) {
		return err
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	x.mu.Lock()
	status, header, tooLarge := x.status, x.header, x.tooLarge
	x.mu.Unlock()
	if tooLarge {
		return &llm.TooLargeError{What: "response body", Limit: p.maxBody}
	}
	if status >= 400 {
		msg, code := "", ""
		var oe *openai.Error
		if errors.As(err, &oe) {
			msg, code = oe.Message, oe.Code
		}
		return &llm.APIError{Status: status, Message: p.text(msg), Code: p.text(code), RetryAfter: llm.ParseRetryAfter(header, time.Now()), URL: p.url}
	}
	// The SDK's message may quote the body: keep its text only, redacted
	// and shortened.
	cause := errors.New(p.text(err.Error()))
	if status >= 200 && status < 300 {
		// The server answered but the body did not decode (or a stream
		// event was not JSON, or carried an error object).
		return llm.Transient("malformed response from "+p.url, cause)
	}
	return llm.Transient("no response from "+p.url, cause)
}

// text is server text fit for a message: redacted (before shortening, so
// no cut leaves a piece of the key too short to recognise), valid UTF-8,
// and at most 300 bytes.
func (p *Provider) text(s string) string {
	s = strings.ToValidUTF8(p.Redact(s), "?")
	if len(s) > 300 {
		cut := 300
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "..."
	}
	return s
}
