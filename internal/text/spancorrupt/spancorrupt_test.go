package spancorrupt

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func rng(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 15)) }

// spansOf counts maximal runs of noise and checks the interleaving.
func spansOf(t *testing.T, mask []bool) (noise, spans int) {
	t.Helper()
	for i, m := range mask {
		if m {
			noise++
			if i == 0 || !mask[i-1] {
				spans++
			}
		}
	}
	return
}

// TestNoiseMaskCounts: exact noise and span counts, starting with
// non-noise and (for n >= 2) ending with noise, for every length.
func TestNoiseMaskCounts(t *testing.T) {
	t.Parallel()
	for _, o := range []Options{T5, {0.3, 2}, {0.5, 1}, {0.05, 8}} {
		for n := 1; n <= 300; n++ {
			for seed := uint64(0); seed < 5; seed++ {
				mask := NoiseMask(n, o, rng(seed))
				if len(mask) != n {
					t.Fatalf("n=%d: mask of %d", n, len(mask))
				}
				wantNoise, wantSpans := o.Counts(n)
				noise, spans := spansOf(t, mask)
				if n == 1 {
					// T5 masks [plain, noise] and keeps the first.
					if noise != 0 {
						t.Fatalf("n=1: %v", mask)
					}
					continue
				}
				if noise != wantNoise || spans != wantSpans {
					t.Fatalf("%+v n=%d seed %d: %d noise in %d spans, want %d in %d (%v)", o, n, seed, noise, spans, wantNoise, wantSpans, mask)
				}
				if mask[0] || !mask[n-1] {
					t.Fatalf("n=%d: mask must start plain and end noisy: %v", n, mask)
				}
			}
		}
	}
	// T5's numbers: 15% of 100 tokens = 15 in round(15/3) = 5 spans; 10
	// tokens: round(1.5) = 2 noise (half to even), round(2/3) = 1 span.
	if a, b := T5.Counts(100); a != 15 || b != 5 {
		t.Fatalf("Counts(100) = %d, %d", a, b)
	}
	if a, b := T5.Counts(10); a != 2 || b != 1 {
		t.Fatalf("Counts(10) = %d, %d", a, b)
	}
	if a, b := T5.Counts(30); a != 4 || b != 1 {
		t.Fatalf("Counts(30) = %d, %d (4.5 rounds to 4, 4/3 to 1)", a, b)
	}
}

// TestMeanSpanLength: over many draws the spans average the set length
// and every span length occurs (the segmentation is random, not fixed).
func TestMeanSpanLength(t *testing.T) {
	t.Parallel()
	r := rng(7)
	lengths := map[int]int{}
	total, count := 0, 0
	for i := 0; i < 2000; i++ {
		mask := NoiseMask(200, T5, r)
		run := 0
		for j, m := range mask {
			if m {
				run++
			}
			if run > 0 && (!m || j == len(mask)-1) {
				lengths[run]++
				total += run
				count++
				run = 0
			}
		}
	}
	mean := float64(total) / float64(count)
	if mean != 3 {
		t.Fatalf("mean span length %.3f, want exactly 3 (30 noise tokens in 10 spans)", mean)
	}
	if len(lengths) < 6 {
		t.Fatalf("span lengths %v: too few distinct lengths for a random segmentation", lengths)
	}
}

func sentinelWord(k int) string { return fmt.Sprintf("<extra_id_%d>", k) }

func isSentinelWord(s string) (int, bool) {
	var k int
	if _, err := fmt.Sscanf(s, "<extra_id_%d>", &k); err == nil && strings.HasSuffix(s, ">") {
		return k, true
	}
	return 0, false
}

// TestReconstruct: source + target give the original back, sentinels are
// numbered in order, and noise equals the target's non-sentinel tokens.
func TestReconstruct(t *testing.T) {
	t.Parallel()
	r := rng(3)
	for n := 1; n <= 120; n++ {
		words := make([]string, n)
		for i := range words {
			words[i] = fmt.Sprintf("w%d", i)
		}
		for rep := 0; rep < 10; rep++ {
			mask := NoiseMask(n, T5, r)
			src, tgt := Apply(words, mask, sentinelWord)
			back, err := Reconstruct(src, tgt, isSentinelWord)
			if err != nil {
				t.Fatalf("n=%d: %v\nsrc %v\ntgt %v", n, err, src, tgt)
			}
			if !slices.Equal(back, words) {
				t.Fatalf("n=%d: reconstructed %v", n, back)
			}
			noise, spans := spansOf(t, mask)
			sent, plain := 0, 0
			for i, w := range src {
				if k, ok := isSentinelWord(w); ok {
					if k != sent {
						t.Fatalf("source sentinel %d at %d, want %d", k, i, sent)
					}
					sent++
				} else {
					plain++
				}
			}
			if sent != spans || plain != n-noise || len(tgt) != noise+spans+boolInt(n == 1) {
				t.Fatalf("n=%d: source %v target %v for mask %v", n, src, tgt, mask)
			}
		}
	}
	// Reconstruct refuses mismatched halves.
	if _, err := Reconstruct([]string{"a", "<extra_id_0>"}, []string{"x", "<extra_id_0>"}, isSentinelWord); err == nil {
		t.Fatal("target without a leading sentinel accepted")
	}
	if _, err := Reconstruct([]string{"a", "<extra_id_1>"}, []string{"<extra_id_0>", "x"}, isSentinelWord); err == nil {
		t.Fatal("unknown sentinel accepted")
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestDeterminism: the same seed gives the same instance, another seed
// (almost always) another. (With one noise span, 30 tokens or fewer at T5's
// settings, the mask is always the last tokens: T5's own arithmetic,
// which is why T5 corrupts packed 512-token sequences.)
func TestDeterminism(t *testing.T) {
	t.Parallel()
	words := strings.Fields(strings.Repeat("the quick brown fox jumps over the lazy dog while the cat sleeps on the warm mat near the door of the old house ", 4))
	a1, b1 := Corrupt(words, T5, rng(42), sentinelWord)
	a2, b2 := Corrupt(words, T5, rng(42), sentinelWord)
	if !slices.Equal(a1, a2) || !slices.Equal(b1, b2) {
		t.Fatal("same seed, different instances")
	}
	differ := 0
	for s := uint64(0); s < 20; s++ {
		a, _ := Corrupt(words, T5, rng(s), sentinelWord)
		if !slices.Equal(a, a1) {
			differ++
		}
	}
	if differ < 15 {
		t.Fatalf("only %d of 20 seeds gave another instance", differ)
	}
}

// TestShortInputs: the T5 example shapes on tiny inputs.
func TestShortInputs(t *testing.T) {
	t.Parallel()
	src, tgt := Corrupt([]string{"hello"}, T5, rng(1), sentinelWord)
	if !slices.Equal(src, []string{"hello"}) || !slices.Equal(tgt, []string{"<extra_id_0>"}) {
		t.Fatalf("one word: %v / %v", src, tgt)
	}
	src, tgt = Corrupt([]string{"a", "b"}, T5, rng(1), sentinelWord)
	if !slices.Equal(src, []string{"a", "<extra_id_0>"}) || !slices.Equal(tgt, []string{"<extra_id_0>", "b"}) {
		t.Fatalf("two words: %v / %v", src, tgt)
	}
	if src, tgt := Corrupt([]string{}, T5, rng(1), sentinelWord); len(src)+len(tgt) != 0 {
		t.Fatalf("empty: %v / %v", src, tgt)
	}
	// Ids work the same way.
	ids := []int{10, 11, 12, 13, 14, 15, 16, 17, 18, 19}
	s, g := Corrupt(ids, T5, rng(5), func(k int) int { return 1000 - k })
	back, err := Reconstruct(s, g, func(id int) (int, bool) { return 1000 - id, id > 900 })
	if err != nil || !slices.Equal(back, ids) {
		t.Fatalf("ids: %v %v -> %v %v", s, g, back, err)
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	for _, o := range []Options{{0, 3}, {1, 3}, {-0.1, 3}, {0.15, 0.5}, {0.15, 0}} {
		if o.Validate() == nil {
			t.Errorf("%+v accepted", o)
		}
	}
	if T5.Validate() != nil {
		t.Error("T5 rejected")
	}
}

func TestIDs(t *testing.T) {
	t.Parallel()
	ids := make([]int, 200)
	for i := range ids {
		ids[i] = 10 + i
	}
	sent := make([]int, 100)
	for k := range sent {
		sent[k] = 1000 - k
	}
	src, tgt, err := IDs(ids, 0.15, 3, sent, rng(9))
	if err != nil {
		t.Fatal(err)
	}
	back, err := Reconstruct(src, tgt, func(id int) (int, bool) { return 1000 - id, id > 900 })
	if err != nil || !slices.Equal(back, ids) {
		t.Fatalf("%v %v", back, err)
	}
	if len(tgt) != 30+10 || len(src) != 170+10 {
		t.Fatalf("source %d target %d, want 180 and 40", len(src), len(tgt))
	}
	if _, _, err := IDs(ids, 0.15, 3, sent[:5], rng(1)); err == nil || !strings.Contains(err.Error(), "10 noise spans, but there are 5 sentinels") {
		t.Fatalf("too few sentinels: %v", err)
	}
	if _, _, err := IDs(ids, 1.5, 3, sent, rng(1)); err == nil || !strings.Contains(err.Error(), "noise density") {
		t.Fatalf("bad density: %v", err)
	}
	if _, _, err := IDs(nil, 0.15, 3, sent, rng(1)); err == nil {
		t.Fatal("empty sequence accepted")
	}
}

func TestPack(t *testing.T) {
	t.Parallel()
	got := Pack([][]int{{1, 2, 3}, {}, {4, 5, 6, 7, 8}, {9}}, 4)
	want := [][]int{{1, 2, 3, 4}, {5, 6, 7, 8}, {9}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("Pack = %v, want %v", got, want)
	}
	if got := Pack([][]int{{}, {}}, 3); len(got) != 0 {
		t.Fatalf("empty: %v", got)
	}
}

// TestSegmentUniform: T5's random segmentation makes every composition
// of the items into that many non-empty spans equally likely (C(5,2) = 10
// compositions of 6 items into 3 spans).
func TestSegmentUniform(t *testing.T) {
	t.Parallel()
	r := rng(11)
	seen := map[string]int{}
	const draws = 20000
	for i := 0; i < draws; i++ {
		seg := segment(6, 3, r)
		sum := 0
		for _, l := range seg {
			if l < 1 {
				t.Fatalf("empty segment: %v", seg)
			}
			sum += l
		}
		if sum != 6 || len(seg) != 3 {
			t.Fatalf("segmentation %v", seg)
		}
		seen[fmt.Sprint(seg)]++
	}
	if len(seen) != 10 {
		t.Fatalf("%d compositions seen, want 10: %v", len(seen), seen)
	}
	for c, n := range seen {
		if n < draws/10*85/100 || n > draws/10*115/100 {
			t.Errorf("composition %s drawn %d times of %d (want about %d)", c, n, draws, draws/10)
		}
	}
}
