package ptx

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestSourceCurrent fails when kernels.h or kernels.cu changed without
// gen.sh being run: the PTX must be what the C source compiles to.
func TestSourceCurrent(t *testing.T) {
	h := sha256.New()
	for _, name := range []string{"kernels.h", "kernels.cu"} {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		h.Write(b)
	}
	want := hex.EncodeToString(h.Sum(nil))
	got := SourceHash()
	if got == "" {
		t.Fatalf("kernels.ptx has no %q line: regenerate it with gen.sh", strings.TrimSpace(hashPrefix))
	}
	if got != want {
		t.Fatalf("kernels.ptx was generated from other sources (recorded sha256 %s, kernels.h+kernels.cu now %s): run gen.sh", got, want)
	}
}

func TestEntries(t *testing.T) {
	for _, name := range Entries {
		if !strings.Contains(Source, ".visible .entry "+name+"(") {
			t.Errorf("kernels.ptx has no entry %s", name)
		}
	}
	if n := strings.Count(Source, ".visible .entry "); n != len(Entries) {
		t.Errorf("kernels.ptx has %d entries, Entries lists %d", n, len(Entries))
	}
}

// TestParams checks Params against the parameter lists in the PTX.
func TestParams(t *testing.T) {
	kinds := map[string]byte{"u64": 'p', "u32": 'i', "f32": 'f'}
	param := regexp.MustCompile(`^\s*\.param \.(\w+) (\w+)_param_(\d+),?$`)
	for _, name := range Entries {
		_, rest, ok := strings.Cut(Source, ".visible .entry "+name+"(\n")
		if !ok {
			t.Errorf("no entry %s", name)
			continue
		}
		list, _, _ := strings.Cut(rest, ")")
		var got []byte
		for i, line := range strings.Split(strings.TrimSpace(list), "\n") {
			m := param.FindStringSubmatch(line)
			if m == nil || m[2] != name || m[3] != strconv.Itoa(i) || kinds[m[1]] == 0 {
				t.Errorf("%s: unexpected parameter line %q", name, line)
				continue
			}
			got = append(got, kinds[m[1]])
		}
		if string(got) != Params[name] {
			t.Errorf("%s: parameters %q in the PTX, Params says %q", name, got, Params[name])
		}
	}
	if len(Params) != len(Entries) {
		t.Errorf("Params has %d entries, Entries %d", len(Params), len(Entries))
	}
}

// TestSelfContained checks that the PTX needs nothing the driver cannot
// resolve (no libdevice): no external function, no call at all, and none of
// the flush-to-zero or approximate instructions that would break agreement
// with the CPU; no fused multiply-add but the explicit float64 ones.
func TestSelfContained(t *testing.T) {
	if strings.Contains(Source, ".extern .func") {
		t.Error("kernels.ptx declares external functions (.extern .func): kernels.h calls a libm function?")
	}
	// The only fused multiply-adds are math.Exp's FMA path (kernels.h's
	// k_go_exp, __builtin_fma): fma.rn.f64, as the host's VFMADD...SD.
	for _, pat := range []string{`(?m)^\s*call(\.uni)?\s`, `\.ftz\b`, `\.approx\b`, `(?m)^\s*fma\.(rn\.f32|r[zmp]|f)`} {
		if loc := regexp.MustCompile(pat).FindStringIndex(Source); loc != nil {
			line := strings.Count(Source[:loc[0]], "\n") + 1
			t.Errorf("kernels.ptx line %d matches %s", line, pat)
		}
	}
	// Every float add, subtract and multiply carries an explicit rounding
	// mode, so ptxas may not contract them into fused multiply-adds.
	if m := regexp.MustCompile(`(?m)^\s*(add|sub|mul)\.f(32|64)\s`).FindString(Source); m != "" {
		t.Errorf("kernels.ptx has %q without .rn: ptxas could fuse it (was -ffp-contract=off dropped?)", strings.TrimSpace(m))
	}
}
