package generate

import (
	"context"
	"reflect"
	"testing"
)

// TestSeeds: with per-prompt seeds a prompt's samples are the same alone
// and at any position of a larger call.
func TestSeeds(t *testing.T) {
	m := newBigram(20, 3)
	o := Options{Sampling: Sampling{Temperature: 1, TopP: 1}, MaxNewTokens: 8, EOS: -1, Samples: 2}
	alone := o
	alone.Seeds = []uint64{77}
	a, err := Generate(context.Background(), m, [][]int{{4}}, alone)
	if err != nil {
		t.Fatal(err)
	}
	many := o
	many.Seeds = []uint64{5, 6, 77}
	b, err := Generate(context.Background(), m, [][]int{{1}, {2, 3}, {4}}, many)
	if err != nil {
		t.Fatal(err)
	}
	for s := 0; s < 2; s++ {
		if !reflect.DeepEqual(a[s].Tokens, b[2*2+s].Tokens) {
			t.Errorf("sample %d: alone %v, third of three %v", s, a[s].Tokens, b[4+s].Tokens)
		}
	}
	bad := o
	bad.Seeds = []uint64{1}
	if _, err := Generate(context.Background(), m, [][]int{{1}, {2}}, bad); err == nil {
		t.Error("one seed for two prompts: no error")
	}
}
