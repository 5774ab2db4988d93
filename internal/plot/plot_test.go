package plot

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"testing"
)

// decoded is what the image tests check about a written figure.
type decoded struct {
	img      image.Image
	nonWhite int
}

// readPNG decodes path, checks the figure size and counts non-white pixels.
func readPNG(t *testing.T, path string) decoded {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s does not decode as PNG: %v", path, err)
	}
	b := img.Bounds()
	if b.Dx() != WidthInches*DPI || b.Dy() != HeightInches*DPI {
		t.Fatalf("%s is %dx%d, want %dx%d", path, b.Dx(), b.Dy(), WidthInches*DPI, HeightInches*DPI)
	}
	d := decoded{img: img}
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if r != 0xffff || g != 0xffff || bl != 0xffff {
				d.nonWhite++
			}
		}
	}
	// Axes, labels and one curve cover well over 0.5% of 240,000 pixels;
	// a blank or text-only canvas would not.
	if d.nonWhite < 1200 {
		t.Fatalf("%s looks blank: %d non-white pixels", path, d.nonWhite)
	}
	return d
}

// countNear counts pixels within a small distance of c: stroke centres are
// drawn in the exact series colour, antialiased edges blend towards white.
func countNear(img image.Image, c color.RGBA) int {
	n := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			dr := int(r>>8) - int(c.R)
			dg := int(g>>8) - int(c.G)
			db := int(bl>>8) - int(c.B)
			if dr*dr+dg*dg+db*db < 20*20 {
				n++
			}
		}
	}
	return n
}

// sameBytes renders twice and checks the files are identical.
func sameBytes(t *testing.T, write func(path string) error) {
	t.Helper()
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.png"), filepath.Join(dir, "b.png")
	if err := write(a); err != nil {
		t.Fatal(err)
	}
	if err := write(b); err != nil {
		t.Fatal(err)
	}
	ba, _ := os.ReadFile(a)
	bb, _ := os.ReadFile(b)
	if len(ba) == 0 || !bytes.Equal(ba, bb) {
		t.Fatalf("two renderings of the same input differ (%d vs %d bytes)", len(ba), len(bb))
	}
}

// noTempLeft checks that the atomic write left only the final files behind.
func noTempLeft(t *testing.T, dir string, want int) {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != want {
		var names []string
		for _, e := range es {
			names = append(names, e.Name())
		}
		t.Fatalf("%s holds %v, want %d file(s)", dir, names, want)
	}
}
