// Package generate is repro's one text-generation engine. A model exposes
// "the logits of the next position given what each sequence has read"
// (Model, Session: GPT-2 with a key/value cache per layer; an
// encoder-decoder model with its cross-attention keys and values computed
// once per input); the engine owns everything else: batching, forking a
// prompt into n samples, samplers, logits processors, stop conditions and
// continuation scoring.
//
// Design choices:
//
//   - Batched and incremental: a chunk of prompts (of any lengths) is read
//     in one Start, each prompt once, then forked into its samples with
//     Select; every step appends one token to every live sequence and
//     finished sequences are dropped with Select, so the batch shrinks as
//     sequences end.
//   - Reproducible: every sequence draws from its own PCG stream seeded
//     from (seed, prompt index, sample index) (Stream), and the model's
//     rows do not depend on each other, so the same seed and inputs give
//     the same text bit for bit, run after run on the CPU, whatever else is
//     in the batch.
//   - Order of the logits' transformations at each step, per sequence:
//     presence/frequency penalties, then the Processors in order (each sees
//     one group of related sequences), then temperature, top-k, top-p and
//     the draw (transformers' order of processors and warpers).
//   - Groups: Options.Groups gathers prompts whose sequences a processor
//     must see together (DINO's self-debiasing compares a label's prompt
//     with its counter-label prompts at every step). With Lockstep the
//     group's first prompt leads: only its token is drawn and every member
//     is given it, so all share one continuation and stop together.
//   - Stops: the EOS token (not part of the output), a stop string found in
//     the DECODED text (so a closing quote that BPE merged into a longer
//     token is still found; the text is cut before it), MaxNewTokens, and
//     the model's context window.
package generate

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"

	"repro/internal/tensor/backend"
)

// StopReason says why a sequence ended.
type StopReason string

// Stop reasons.
const (
	StopEOS     StopReason = "eos"     // the EOS token was drawn (not in the output)
	StopString  StopReason = "stop"    // a stop string appeared in the decoded text
	StopLength  StopReason = "length"  // MaxNewTokens were generated
	StopContext StopReason = "context" // prompt + output filled the model's context window
)

// Options configure Generate.
type Options struct {
	Sampling
	// MaxNewTokens is the most tokens generated per sequence (>= 1).
	MaxNewTokens int
	// Samples is the number of sequences per prompt (default 1).
	Samples int
	// EOS is the token that ends a sequence; < 0: none.
	EOS int
	// Stop strings end a sequence when one appears in its decoded output;
	// they need Decode.
	Stop []string
	// Decode turns token ids into text (the tokenizer's); it fills
	// Output.Text and finds the stop strings. Optional without Stop.
	Decode func(ids []int) string
	// Seed seeds every sequence's stream (see Stream).
	Seed uint64
	// Seeds, when set, holds one seed per prompt instead (see streamOf).
	Seeds []uint64
	// Processors rewrite the logits of each group at each step, in order.
	Processors []Processor
	// Groups are sets of prompt indices that processors see together
	// (each prompt in at most one group; prompts in none form their own).
	Groups [][]int
	// Lockstep gives every member of a group its first member's token.
	Lockstep bool
	// BatchSize is the most sequences decoded at once (default 64); a
	// group's sequences are never split across batches.
	BatchSize int
	// Progress, when not nil, is told how many prompts are finished.
	Progress func(done, total int)
	// Report, when not nil, receives what a generation on a device copied
	// (see device.go); it is left alone on the host.
	Report *DeviceReport
}

// Output is one generated sequence.
type Output struct {
	Prompt int // index of its prompt
	Sample int // index among its prompt's samples
	// Tokens are the generated ids, the EOS token excluded.
	Tokens []int
	// Text is Decode(Tokens), cut before the stop string when one ended
	// the sequence ("" without Decode).
	Text       string
	Stop       StopReason
	StopString string // the stop string found (Stop == StopString)
}

// Step is what a Processor sees: one group's live sequences at one step.
type Step struct {
	Index  int // 0 for the first generated token
	Group  int // index into the groups (Options.Groups, then one per ungrouped prompt)
	Sample int
	// Prompts[i] is the prompt index of member i, in group order.
	Prompts []int
	// Logits[i] is member i's next-token logits after the penalties and
	// the earlier processors; a processor rewrites them in place.
	Logits [][]float32
	// Tokens[i] is what member i generated so far (read only).
	Tokens [][]int
}

// Processor rewrites next-token logits, seeing a group of related
// sequences at a time.
type Processor interface {
	Process(s *Step) error
}

// ProcessorFunc adapts a function to Processor.
type ProcessorFunc func(s *Step) error

// Process calls f.
func (f ProcessorFunc) Process(s *Step) error { return f(s) }

// Stream returns the generator of the sequence of sample `sample` of
// prompt `prompt` under seed: a PCG seeded with seed and a splitmix64 hash
// of both indices, so streams never depend on batching or on each other.
func Stream(seed uint64, prompt, sample int) *rand.Rand {
	st := streamSeeds(seed, prompt, sample)
	return rand.New(rand.NewPCG(st[0], st[1]))
}

// streamSeeds are Stream's PCG seeds, which are its initial state (hi, lo).
func streamSeeds(seed uint64, prompt, sample int) [2]uint64 {
	return [2]uint64{seed, splitmix64(splitmix64(uint64(prompt)) ^ uint64(sample) ^ 0x9e3779b97f4a7c15)}
}

func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// Validate reports the first bad option.
func (o *Options) Validate() error {
	if err := o.Sampling.Validate(); err != nil {
		return err
	}
	switch {
	case o.MaxNewTokens < 1:
		return fmt.Errorf("max_new_tokens %d must be at least 1", o.MaxNewTokens)
	case o.Samples < 0:
		return fmt.Errorf("samples %d must be at least 1", o.Samples)
	case o.BatchSize < 0:
		return fmt.Errorf("batch_size %d must be at least 1", o.BatchSize)
	case len(o.Stop) > 0 && o.Decode == nil:
		return fmt.Errorf("stop strings need a Decode function")
	}
	for _, s := range o.Stop {
		if s == "" {
			return fmt.Errorf("stop: an empty stop string would end every sequence at once")
		}
	}
	return nil
}

// seq is one sequence being generated.
type seq struct {
	out    *Output
	group  int // index into units
	member int // position in its group
	rng    *rand.Rand
	plen   int
	done   bool
}

// unit is one (group, sample): the sequences a processor sees together.
type unit struct {
	group, sample int
	prompts       []int
	seqs          []*seq
}

// Generate continues every prompt Samples times and returns the outputs
// ordered by prompt, then sample. Prompts longer than the model's context
// window are an error before anything runs.
func Generate(ctx context.Context, m Model, prompts [][]int, o Options) ([]Output, error) {
	if o.Samples == 0 {
		o.Samples = 1
	}
	if o.BatchSize == 0 {
		o.BatchSize = 64
	}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if maxLen := m.MaxLength(); maxLen > 0 {
		for i, p := range prompts {
			if len(p) >= maxLen {
				return nil, fmt.Errorf("prompt %d has %d tokens: the model's context window of %d leaves no room to generate", i, len(p), maxLen)
			}
		}
	}
	if err := o.checkSeeds(len(prompts)); err != nil {
		return nil, err
	}
	groups, err := groupPrompts(len(prompts), o.Groups)
	if err != nil {
		return nil, err
	}
	m, end := onDevice(m, o.Report)
	if end != nil {
		defer end()
	}
	outs := make([]Output, len(prompts)*o.Samples)
	done := 0
	for start := 0; start < len(groups); {
		// A chunk of whole groups with at most BatchSize sequences (or
		// one group, however large).
		end, n := start, 0
		for end < len(groups) && (end == start || n+len(groups[end])*o.Samples <= o.BatchSize) {
			n += len(groups[end]) * o.Samples
			end++
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := generateChunk(m, prompts, groups[start:end], start, o, outs); err != nil {
			return nil, err
		}
		for _, g := range groups[start:end] {
			done += len(g)
		}
		if o.Progress != nil {
			o.Progress(done, len(prompts))
		}
		start = end
	}
	return outs, nil
}

// groupPrompts checks the declared groups and adds a singleton group for
// every prompt in none.
func groupPrompts(n int, declared [][]int) ([][]int, error) {
	seen := make([]bool, n)
	var groups [][]int
	for gi, g := range declared {
		if len(g) == 0 {
			return nil, fmt.Errorf("group %d is empty", gi)
		}
		for _, p := range g {
			if p < 0 || p >= n {
				return nil, fmt.Errorf("group %d names prompt %d of %d", gi, p, n)
			}
			if seen[p] {
				return nil, fmt.Errorf("prompt %d is in two groups", p)
			}
			seen[p] = true
		}
		groups = append(groups, g)
	}
	for p := 0; p < n; p++ {
		if !seen[p] {
			groups = append(groups, []int{p})
		}
	}
	return groups, nil
}

// chunk is one batch of prompt groups being decoded: the session, its
// (group, sample) units and the sequences still running, in session order.
type chunk struct {
	o        *Options
	sess     Session
	units    []*unit
	seqs     []*seq
	maxLen   int
	V        int
	samplers []sampler
	chosen   []int
}

func generateChunk(m Model, prompts [][]int, groups [][]int, firstGroup int, o Options, outs []Output) error {
	c, err := startChunk(m, prompts, groups, firstGroup, &o, outs)
	if err != nil {
		return err
	}
	ds, onDev := c.deviceDraws()
	if ds != nil {
		defer ds.Close()
	}
	for step := 0; len(c.seqs) > 0; step++ {
		var before backend.Copies
		if ds != nil && o.Report != nil {
			before = ds.Device().Copies()
		}
		n := len(c.seqs)
		if onDev {
			if err := c.drawDevice(step, ds); err != nil {
				return err
			}
		} else if err := c.drawHost(step); err != nil {
			return err
		}
		done, err := c.advance()
		if ds != nil && o.Report != nil {
			sc := StepCopies{Drawn: n, OnDevice: onDev, Copies: ds.Device().Copies().Since(before)}
			if !done && err == nil {
				sc.Appended = len(c.seqs)
				if len(c.seqs) < n {
					sc.Kept = len(c.seqs)
				}
			}
			o.Report.Steps = append(o.Report.Steps, sc)
		}
		if done || err != nil {
			return c.finish(err)
		}
	}
	return c.finish(nil)
}

// drawHost is one step's choice on the host: the logits (downloaded from
// a device session), the penalties, the processors, the draw.
func (c *chunk) drawHost(step int) error {
	logits := c.sess.Logits()
	if len(logits) != len(c.seqs)*c.V {
		return fmt.Errorf("generate: the model returned %d logits for %d sequences of %d", len(logits), len(c.seqs), c.V)
	}
	at := map[*seq]int{}
	for i, sq := range c.seqs {
		at[sq] = i
		c.o.penalize(c.row(logits, i), sq.out.Tokens)
	}
	if err := c.process(step, logits, at); err != nil {
		return err
	}
	return c.draw(step, logits, at)
}

// startChunk reads each prompt of the chunk once, then forks the session
// into the samples: sequence order is group, sample, member.
func startChunk(m Model, prompts [][]int, groups [][]int, firstGroup int, o *Options, outs []Output) (*chunk, error) {
	var read [][]int
	row := map[int]int{} // prompt index -> row of the started session
	capacity := 0
	for _, g := range groups {
		for _, p := range g {
			row[p] = len(read)
			read = append(read, prompts[p])
			capacity = max(capacity, len(prompts[p])+o.MaxNewTokens)
		}
	}
	c := &chunk{o: o, maxLen: m.MaxLength(), V: m.VocabSize()}
	if c.maxLen > 0 {
		capacity = min(capacity, c.maxLen)
	}
	var err error
	if c.sess, err = m.Start(read, capacity); err != nil {
		return nil, err
	}
	var fork []int
	for gi, g := range groups {
		for s := 0; s < o.Samples; s++ {
			u := &unit{group: firstGroup + gi, sample: s, prompts: g}
			for mi, p := range g {
				out := &outs[p*o.Samples+s]
				*out = Output{Prompt: p, Sample: s}
				sq := &seq{out: out, group: len(c.units), member: mi, rng: o.streamOf(p, s), plen: len(prompts[p])}
				u.seqs = append(u.seqs, sq)
				c.seqs = append(c.seqs, sq)
				fork = append(fork, row[p])
			}
			c.units = append(c.units, u)
		}
	}
	if err := c.sess.Select(fork); err != nil {
		closeSession(c.sess)
		return nil, err
	}
	if ds, ok := c.deviceDraws(); ok && !o.Greedy() {
		states := make([][2]uint64, len(c.seqs))
		for i, sq := range c.seqs {
			states[i] = o.streamState(sq.out.Prompt, sq.out.Sample)
		}
		if err := ds.Streams(states); err != nil {
			closeSession(c.sess)
			return nil, err
		}
	}
	c.samplers = make([]sampler, runtime.GOMAXPROCS(0))
	for i := range c.samplers {
		c.samplers[i] = sampler{s: o.Sampling}
	}
	c.chosen = make([]int, len(c.seqs))
	return c, nil
}

// closeSession frees a device session's memory.
func closeSession(s Session) {
	if ds, ok := s.(DeviceSession); ok {
		ds.Close()
	}
}

// row is sequence i's logits.
func (c *chunk) row(logits []float32, i int) []float32 { return logits[i*c.V : (i+1)*c.V] }

// process runs the logits processors over each unit's running sequences.
func (c *chunk) process(step int, logits []float32, at map[*seq]int) error {
	if len(c.o.Processors) == 0 {
		return nil
	}
	for _, u := range c.units {
		st := &Step{Index: step, Group: u.group, Sample: u.sample}
		for mi, sq := range u.seqs {
			if sq.done {
				continue
			}
			st.Prompts = append(st.Prompts, u.prompts[mi])
			st.Logits = append(st.Logits, c.row(logits, at[sq]))
			st.Tokens = append(st.Tokens, sq.out.Tokens)
		}
		if len(st.Logits) == 0 {
			continue
		}
		for _, p := range c.o.Processors {
			if err := p.Process(st); err != nil {
				return fmt.Errorf("step %d, group %d, sample %d: %w", step, u.group, u.sample, err)
			}
		}
	}
	return nil
}

// draw chooses every leader's (or free sequence's) token, rows in
// parallel: each row uses only its own stream. In lockstep the followers
// take their leader's.
func (c *chunk) draw(step int, logits []float32, at map[*seq]int) error {
	seqs := c.seqs
	c.chosen = c.chosen[:len(seqs)]
	var bad error
	var badMu sync.Mutex
	parallelRows(len(seqs), len(c.samplers), func(w, i int) {
		sq := seqs[i]
		if c.o.Lockstep && sq.member > 0 {
			return
		}
		r := c.row(logits, i)
		for _, v := range r {
			if v != v {
				badMu.Lock()
				bad = fmt.Errorf("step %d: the logits of prompt %d, sample %d are NaN", step, sq.out.Prompt, sq.out.Sample)
				badMu.Unlock()
				return
			}
		}
		c.chosen[i] = c.samplers[w].choose(r, sq.rng)
	})
	if bad != nil {
		return bad
	}
	if c.o.Lockstep {
		for i, sq := range seqs {
			if sq.member > 0 {
				c.chosen[i] = c.chosen[at[c.units[sq.group].seqs[0]]]
			}
		}
	}
	return nil
}

// advance records the chosen tokens, decides who continues, and narrows
// the session to them and appends their tokens; done when none is left.
func (c *chunk) advance() (done bool, err error) {
	o := c.o
	for i, sq := range c.seqs {
		if o.Lockstep && sq.member > 0 {
			continue // decided with its leader below
		}
		o.advance(sq, c.chosen[i], c.maxLen)
		if o.Lockstep {
			for _, f := range c.units[sq.group].seqs[1:] {
				if sq.out.Stop != StopEOS {
					f.out.Tokens = append(f.out.Tokens, c.chosen[i])
				}
				f.done, f.out.Stop, f.out.StopString, f.out.Text = sq.done, sq.out.Stop, sq.out.StopString, sq.out.Text
			}
		}
	}
	var keep, next []int
	var live []*seq
	for i, sq := range c.seqs {
		if !sq.done {
			keep = append(keep, i)
			next = append(next, c.chosen[i])
			live = append(live, sq)
		}
	}
	if len(live) == 0 {
		return true, nil
	}
	if len(live) < len(c.seqs) {
		if err := c.sess.Select(keep); err != nil {
			return false, err
		}
	}
	c.seqs = live
	return false, c.sess.Append(next)
}

// finish decodes each output's text (a string stop has set it already),
// unless err.
func (c *chunk) finish(err error) error {
	if err != nil || c.o.Decode == nil {
		return err
	}
	for _, u := range c.units {
		for _, sq := range u.seqs {
			if sq.out.Stop != StopString {
				sq.out.Text = c.o.Decode(sq.out.Tokens)
			}
		}
	}
	return nil
}

// advance records token t for sq and sets sq.done with the reason when
// the sequence ends here.
func (o *Options) advance(sq *seq, t int, maxLen int) {
	out := sq.out
	if o.EOS >= 0 && t == o.EOS {
		sq.done, out.Stop = true, StopEOS
		return
	}
	out.Tokens = append(out.Tokens, t)
	if len(o.Stop) > 0 {
		text := o.Decode(out.Tokens)
		cut, which := -1, ""
		for _, s := range o.Stop {
			if i := strings.Index(text, s); i >= 0 && (cut < 0 || i < cut) {
				cut, which = i, s
			}
		}
		if cut >= 0 {
			sq.done, out.Stop, out.StopString, out.Text = true, StopString, which, text[:cut]
			return
		}
	}
	switch {
	case len(out.Tokens) >= o.MaxNewTokens:
		sq.done, out.Stop = true, StopLength
	case maxLen > 0 && sq.plen+len(out.Tokens) >= maxLen:
		sq.done, out.Stop = true, StopContext
	}
}

// parallelRows calls f(worker, i) for i in [0, n) on up to workers
// goroutines; each index is handled by exactly one call.
func parallelRows(n, workers int, f func(w, i int)) {
	workers = min(workers, n)
	if workers <= 1 {
		for i := 0; i < n; i++ {
			f(0, i)
		}
		return
	}
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += workers {
				f(w, i)
			}
		}()
	}
	wg.Wait()
}

// Score returns, for each i, the natural-log probability of every token of
// conts[i] given prompts[i] and the tokens before it, in batches of
// batchSize pairs. A model with the Scorer fast path scores each batch in
// one pass; otherwise the continuation is fed one token at a time through
// a Session (the path generation takes).
func Score(ctx context.Context, m Model, prompts, conts [][]int, batchSize int) ([][]float64, error) {
	if len(prompts) != len(conts) {
		return nil, fmt.Errorf("score: %d prompts and %d continuations", len(prompts), len(conts))
	}
	if batchSize < 1 {
		return nil, fmt.Errorf("score: batch size %d must be at least 1", batchSize)
	}
	maxLen := m.MaxLength()
	for i := range prompts {
		if maxLen > 0 && len(prompts[i])+len(conts[i]) > maxLen {
			return nil, fmt.Errorf("score: prompt %d and its continuation have %d tokens, more than the model's context window of %d", i, len(prompts[i])+len(conts[i]), maxLen)
		}
	}
	out := make([][]float64, len(prompts))
	for lo := 0; lo < len(prompts); lo += batchSize {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		hi := min(lo+batchSize, len(prompts))
		var lp [][]float64
		var err error
		if sc, ok := m.(Scorer); ok {
			lp, err = sc.ScoreTokens(prompts[lo:hi], conts[lo:hi])
		} else {
			lp, err = scoreIncremental(m, prompts[lo:hi], conts[lo:hi])
		}
		if err != nil {
			return nil, err
		}
		copy(out[lo:hi], lp)
	}
	return out, nil
}

func scoreIncremental(m Model, prompts, conts [][]int) ([][]float64, error) {
	capacity := 0
	for i := range prompts {
		capacity = max(capacity, len(prompts[i])+len(conts[i]))
	}
	out := make([][]float64, len(prompts))
	sess, err := m.Start(prompts, max(capacity, 1))
	if err != nil {
		return nil, err
	}
	V := m.VocabSize()
	live := make([]int, len(prompts)) // pair index of each session row
	for i := range live {
		live[i] = i
		out[i] = make([]float64, len(conts[i]))
	}
	for t := 0; ; t++ {
		logits := sess.Logits()
		var keep, next, still []int
		for r, i := range live {
			if t >= len(conts[i]) {
				continue
			}
			tok := conts[i][t]
			if tok < 0 || tok >= V {
				return nil, fmt.Errorf("score: token %d of continuation %d outside the vocabulary of %d", tok, i, V)
			}
			out[i][t] = LogProb(logits[r*V:(r+1)*V], tok)
			if t+1 < len(conts[i]) {
				keep, next, still = append(keep, r), append(next, tok), append(still, i)
			}
		}
		if len(still) == 0 {
			return out, nil
		}
		if len(still) < len(live) {
			if err := sess.Select(keep); err != nil {
				return nil, err
			}
		}
		live = still
		if err := sess.Append(next); err != nil {
			return nil, err
		}
	}
}

// Sum is the total of a sequence's log-probabilities.
func Sum(lp []float64) float64 {
	var s float64
	for _, v := range lp {
		s += v
	}
	return s
}
