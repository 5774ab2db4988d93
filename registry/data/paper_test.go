package data

import (
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"repro/internal/rows"
	"repro/registry"
)

// fixture is a file of internal/dataset's published-layout fixtures.
func fixture(name string) string {
	p, _ := filepath.Abs(filepath.Join("..", "..", "internal", "dataset", "testdata", "paper", name))
	return p
}

// TestPaperSources: each paper source reads its published file from path.
func TestPaperSources(t *testing.T) {
	out, err := run(t, "data.nli", map[string]cty.Value{"source": cty.StringVal("simcse_nli"), "path": cty.StringVal(fixture("nli_for_simcse.csv"))})
	if err != nil {
		t.Fatal(err)
	}
	if ts := mustRead[rows.Triplet](t, filepath.Join(out, registry.FileTriplets)); len(ts) != 4 || ts[3].Negative != "The men are fighting outside a deli." {
		t.Errorf("simcse_nli: %+v", ts)
	}
	for src, want := range map[string]int{"wiki1m": 4, "c4": 6, "mind": 6} {
		file := map[string]string{"wiki1m": "wiki1m_for_simcse.txt", "c4": "c4-train.00000-of-01024.json.gz", "mind": "news.tsv"}[src]
		out, err := run(t, "data.sentences", map[string]cty.Value{"source": cty.StringVal(src), "path": cty.StringVal(fixture(file))})
		if err != nil {
			t.Fatal(src, err)
		}
		if ss := mustRead[rows.Sentence](t, filepath.Join(out, registry.FileSentences)); len(ss) != want {
			t.Errorf("%s: %d sentences, want %d", src, len(ss), want)
		}
	}
	out, err = run(t, "data.documents", map[string]cty.Value{"source": cty.StringVal("mind"), "path": cty.StringVal(fixture("news.tsv"))})
	if err != nil {
		t.Fatal(err)
	}
	// Five articles, one without an abstract.
	if ds := mustRead[rows.Document](t, filepath.Join(out, registry.FileDocuments)); len(ds) != 4 || ds[2].ID != "N61837" || ds[2].Headline == "" || len(ds[2].Sentences) != 2 {
		t.Errorf("mind documents: %+v", ds)
	}
	out, err = run(t, "data.rerank", map[string]cty.Value{"source": cty.StringVal("askubuntu"), "path": cty.StringVal(fixture("askubuntu-test.jsonl.gz"))})
	if err != nil {
		t.Fatal(err)
	}
	if qs := mustRead[rows.RerankQuery](t, filepath.Join(out, registry.FileQueries)); len(qs) != 2 {
		t.Errorf("askubuntu: %+v", qs)
	}
}

// TestPaperSourceNeedsPath: a paper source without a path refuses to start
// with a *MissingDataError naming the variable; the stand-ins start, and
// name themselves as stand-ins; a path beside a stand-in is refused.
func TestPaperSourceNeedsPath(t *testing.T) {
	r := registry.New()
	Register(r)
	decode := func(typ string, set map[string]cty.Value) (*registry.StageType, any) {
		st, _ := r.Lookup(typ)
		ps, _ := st.ParamSchema()
		attrs := map[string]cty.Value{}
		for _, p := range ps {
			attrs[p.Name] = p.Default
			if v, ok := set[p.Name]; ok {
				attrs[p.Name] = v
			}
		}
		v, err := st.DecodeParams(cty.ObjectVal(attrs))
		if err != nil {
			t.Fatal(err)
		}
		return st, v
	}
	for _, c := range []struct {
		typ, param, source, variable string
	}{
		{"data.nli", "source", "simcse_nli", "simcse_nli"},
		{"data.sentences", "source", "wiki1m", "wiki1m"},
		{"data.documents", "source", "mind", "mind"},
		{"data.rerank", "source", "askubuntu", "askubuntu"},
	} {
		st, p := decode(c.typ, map[string]cty.Value{c.param: cty.StringVal(c.source)})
		var me *MissingDataError
		if err := p.(registry.StartChecker).CheckStart(func(string) bool { return false }); !errors.As(err, &me) || me.Variable != c.variable {
			t.Errorf("%s source %s without path: %v", c.typ, c.source, err)
		}
		if got := st.StandIns(p); len(got) != 0 {
			t.Errorf("%s source %s: stand-ins %v", c.typ, c.source, got)
		}
		st, p = decode(c.typ, nil)
		if err := p.(registry.StartChecker).CheckStart(func(string) bool { return false }); err != nil {
			t.Errorf("%s stand-in: %v", c.typ, err)
		}
		if got := st.StandIns(p); len(got) != 1 {
			t.Errorf("%s stand-in: stand-ins %v", c.typ, got)
		}
		st, p = decode(c.typ, map[string]cty.Value{"path": cty.StringVal("x.csv")})
		if err := st.ValidateParams(p); err == nil {
			t.Errorf("%s: a path beside a stand-in source validated", c.typ)
		}
	}
	st, p := decode("data.corpus", map[string]cty.Value{"sources": strs("c4")})
	var me *MissingDataError
	if err := p.(registry.StartChecker).CheckStart(func(string) bool { return false }); !errors.As(err, &me) || me.Variable != "c4" {
		t.Errorf("corpus c4 without path: %v", err)
	}
	if _, p := decode("data.corpus", nil); !slices.Equal(st.StandIns(p), []string{"wiki", "bbc", "brown"}) {
		t.Errorf("corpus stand-ins %v", st.StandIns(p))
	}
}

// TestPaperParamsKeepKeys: at their defaults the added parameters stay out
// of the encoded parameters, so every stage that reads a stand-in keeps
// the cache key it had before they existed.
func TestPaperParamsKeepKeys(t *testing.T) {
	r := registry.New()
	Register(r)
	for typ, added := range map[string][]string{
		"data.nli": {"source", "path"}, "data.sentences": {"path"}, "data.documents": {"path"},
		"data.rerank": {"source", "path"}, "data.corpus": {"path"},
	} {
		st, _ := r.Lookup(typ)
		v, err := st.EncodeParams(st.Params)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range added {
			if v.Type().HasAttribute(a) {
				t.Errorf("%s: %s at its default is in the encoded parameters", typ, a)
			}
		}
	}
}
