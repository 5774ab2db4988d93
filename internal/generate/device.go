package generate

import (
	"fmt"

	"repro/internal/tensor/backend"
)

// Generation on a device. When the current tensor backend has a device
// (cuda, or the emulated "emu": backend.NewDeviceOf) and the model can
// decode there (DeviceModel), Generate places the weights once for the
// call and every chunk's session keeps its caches and logits in device
// memory. Without logits processors and penalties (which rewrite the
// logits on the host) the session draws each step's tokens there too
// (DeviceSession.Draw: package generate's sampler, bit for bit, from each
// sequence's stream, uploaded once), so a step copies only token ids: the
// drawn ids down, the ids appended up, and, at a step where sequences end,
// the kept rows' indices up for the Select. With processors or penalties
// the logits come down every step (Session.Logits) and the host draws, as
// on the CPU. Either way the outputs are the CPU's: the device computes
// the CPU's arithmetic (on a GPU, cuBLAS's GEMMs differ in the last bits,
// which can change a draw).

// DeviceModel is a Model that can decode on a device.
type DeviceModel interface {
	Model
	// OnDevice places the weights on dev and returns the model whose
	// sessions decode there (each a DeviceSession) and the function that
	// frees the weights' device copies, to call when the generation is
	// over. Calls on one model are serialised: a second OnDevice waits
	// for the first one's release.
	OnDevice(dev backend.Device) (Model, func())
}

// DeviceSession is a Session whose caches and logits live in device
// memory. Logits downloads them (counted) when the host needs them.
type DeviceSession interface {
	Session
	// Device is where the session's memory lives.
	Device() backend.Device
	// Streams gives sequence i the random stream whose math/rand/v2 PCG
	// state is states[i] (uploaded once; Select keeps the streams with
	// their sequences).
	Streams(states [][2]uint64) error
	// Draw chooses every sequence's next token from its logits with s,
	// each drawing from its stream as sampler.choose does on the host,
	// and returns them (only they come down); -1 marks a row whose logits
	// hold a NaN. It needs Streams unless s is greedy.
	Draw(s backend.Sampling) ([]int, error)
	// Close frees the session's device memory.
	Close()
}

// DeviceReport is what a generation on a device copied between host and
// device (Options.Report).
type DeviceReport struct {
	Device string
	// Total is every copy of the call: placing the weights, reading the
	// prompts, the steps.
	Total backend.Copies
	// Steps are the decoding steps of every chunk, in order: a step draws
	// the next token of every live sequence, keeps those that go on
	// (Select, when some ended) and appends their tokens.
	Steps []StepCopies
}

// StepCopies is one step's copies.
type StepCopies struct {
	Drawn    int  // sequences whose next token was chosen
	Kept     int  // sequences a Select kept (0: no Select)
	Appended int  // sequences given their token (0 on a chunk's last step)
	OnDevice bool // drawn on the device (else from downloaded logits)
	Copies   backend.Copies
}

// Tokens is the number of tokens drawn over the steps.
func (r *DeviceReport) Tokens() int {
	n := 0
	for _, s := range r.Steps {
		n += s.Drawn
	}
	return n
}

// StepBytes is the bytes the steps copied up and down, in all.
func (r *DeviceReport) StepBytes() (up, down int64) {
	for _, s := range r.Steps {
		up += s.Copies.UpBytes
		down += s.Copies.DownBytes
	}
	return up, down
}

// String summarises the report in a line.
func (r *DeviceReport) String() string {
	up, down := r.StepBytes()
	tok := max(r.Tokens(), 1)
	return fmt.Sprintf("%s: %d steps, %d tokens; steps copied %d B up, %d B down (%.1f B per token); in all %d B up, %d B down",
		r.Device, len(r.Steps), r.Tokens(), up, down, float64(up+down)/float64(tok), r.Total.UpBytes, r.Total.DownBytes)
}

// onDevice returns m on the current backend's device when it has one and
// m can decode there, with the function that ends it (frees the weights
// and fills rep); otherwise m and nil.
func onDevice(m Model, rep *DeviceReport) (Model, func()) {
	dm, ok := m.(DeviceModel)
	if !ok {
		return m, nil
	}
	dev, ok := backend.NewDeviceOf(backend.Current())
	if !ok {
		return m, nil
	}
	before := dev.Copies()
	dmodel, release := dm.OnDevice(dev)
	if rep != nil {
		*rep = DeviceReport{Device: dev.Name()}
	}
	return dmodel, func() {
		release()
		if rep != nil {
			rep.Total = dev.Copies().Since(before)
		}
	}
}

// deviceDraws reports whether a chunk's tokens are drawn on the device:
// its session can, and nothing rewrites the logits on the host.
func (c *chunk) deviceDraws() (DeviceSession, bool) {
	ds, ok := c.sess.(DeviceSession)
	if !ok || len(c.o.Processors) > 0 || c.o.PresencePenalty != 0 || c.o.FrequencyPenalty != 0 {
		return ds, false
	}
	return ds, true
}

// deviceSampling is s as the device's sampler takes it.
func (s Sampling) deviceSampling() backend.Sampling {
	if s.Greedy() {
		return backend.Sampling{Greedy: true}
	}
	return backend.Sampling{InvT: float32(1 / s.Temperature), TopK: s.TopK, TopP: s.TopP}
}

// drawDevice is draw on the device: every row's token is drawn there (in
// lockstep the followers' too, from their own streams, which nothing else
// reads; they then take their leader's, as on the host).
func (c *chunk) drawDevice(step int, ds DeviceSession) error {
	toks, err := ds.Draw(c.o.deviceSampling())
	if err != nil {
		return err
	}
	if len(toks) != len(c.seqs) {
		return fmt.Errorf("generate: the device drew %d tokens for %d sequences", len(toks), len(c.seqs))
	}
	c.chosen = c.chosen[:len(c.seqs)]
	at := map[*seq]int{}
	for i, sq := range c.seqs {
		at[sq] = i
		if c.o.Lockstep && sq.member > 0 {
			continue
		}
		if toks[i] < 0 {
			return fmt.Errorf("step %d: the logits of prompt %d, sample %d are NaN", step, sq.out.Prompt, sq.out.Sample)
		}
		c.chosen[i] = toks[i]
	}
	if c.o.Lockstep {
		for i, sq := range c.seqs {
			if sq.member > 0 {
				c.chosen[i] = c.chosen[at[c.units[sq.group].seqs[0]]]
			}
		}
	}
	return nil
}
