package main

import (
	"bufio"
	"encoding/json"
	"strings"
	"testing"
)

// validate --json gives each diagnostic's file, line, column, summary and
// detail: what an editor or a CI annotation reads.
func TestValidateJSON(t *testing.T) {
	code, out, errs := repro(t, "validate", "--json", "testdata/values.hcl", "testdata/tfidf.hcl")
	if code != 1 || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	var v struct {
		FormatVersion string `json:"format_version"`
		Valid         bool
		ErrorCount    int `json:"error_count"`
		Files         []struct {
			File        string
			Valid       bool
			Diagnostics []struct {
				Severity, Summary, Detail string
				Range                     *struct {
					Filename   string
					Start, End struct{ Line, Column, Byte int }
				}
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if v.Valid || v.ErrorCount != 6 || len(v.Files) != 2 || !v.Files[1].Valid || len(v.Files[1].Diagnostics) != 0 {
		t.Fatalf("validate JSON: %+v", v)
	}
	d := v.Files[0].Diagnostics[0]
	if d.Severity != "error" || d.Summary != "Invalid value for parameter" || d.Range == nil ||
		d.Range.Filename != "testdata/values.hcl" || d.Range.Start.Line != 7 || d.Range.Start.Column != 11 ||
		!strings.Contains(d.Detail, `unknown STS task "stsx"`) {
		t.Errorf("first diagnostic: %+v", d)
	}
}

// run --json is a stream of one JSON object per line: stage events with
// keys and outputs, then the cells and a summary.
func TestRunJSONStream(t *testing.T) {
	file := workspace(t)
	code, out, errs := repro(t, "run", file, "--json")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	var kinds []string
	var finished, cells int
	var summary map[string]any
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var ev map[string]any
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		if ev["time"] == nil {
			t.Errorf("no time: %s", sc.Text())
		}
		switch ev["type"] {
		case "stage":
			kinds = append(kinds, ev["event"].(string))
			if ev["event"] == "finished" {
				finished++
				if len(ev["key"].(string)) != 64 || ev["outputs"] == nil || ev["seconds"] == nil {
					t.Errorf("finished event lacks key, outputs or duration: %s", sc.Text())
				}
			}
		case "cell":
			cells++
			if ev["name"] != "stsb" || ev["verdict"] != "ok" || ev["mode"] != "paper" {
				t.Errorf("cell: %s", sc.Text())
			}
		case "summary":
			summary = ev
		default:
			t.Errorf("unknown object: %s", sc.Text())
		}
	}
	if finished != 4 || cells != 1 || summary == nil || summary["ran"] != 4.0 || summary["stages"] != 4.0 {
		t.Errorf("stream: %d finished, %d cells, summary %v\n%s", finished, cells, summary, out)
	}
	// Again: every stage cached, with its outputs.
	_, out, _ = repro(t, "run", file, "--json")
	if n := strings.Count(out, `"event":"cached"`); n != 4 || !strings.Contains(out, `"cached":4`) {
		t.Errorf("second run: %d cached events\n%s", n, out)
	}
	// cache ls --json lists the four runs with their provenance.
	code, out, _ = repro(t, "cache", "ls", "--json")
	var ls struct {
		Runs []struct {
			Key, Stage, Type, Backend string
			Outputs                   map[string]string
			Params                    json.RawMessage
		}
	}
	if err := json.Unmarshal([]byte(out), &ls); code != 0 || err != nil || len(ls.Runs) != 4 {
		t.Fatalf("cache ls --json: exit %d, %v\n%s", code, err, out)
	}
	for _, r := range ls.Runs {
		if len(r.Key) != 64 || r.Stage == "" || len(r.Outputs) == 0 || len(r.Params) == 0 {
			t.Errorf("run %+v", r)
		}
	}
}

// stages --json documents a type as `repro stages TYPE` does.
func TestStagesJSON(t *testing.T) {
	code, out, _ := repro(t, "stages", "encode.file", "--json")
	var doc struct {
		Types []struct {
			Name    string
			Version int
			Params  []struct {
				Name, Type, Path string
				Required         bool
				Default          json.RawMessage
			}
			Outputs []struct{ Name, Kind string }
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); code != 0 || err != nil || len(doc.Types) != 1 {
		t.Fatalf("exit %d, %v\n%s", code, err, out)
	}
	st := doc.Types[0]
	if st.Name != "encode.file" || st.Version != 2 || len(st.Params) != 2 || st.Params[0].Name != "path" ||
		!st.Params[0].Required || st.Params[0].Path != "file" || string(st.Params[1].Default) != `""` || st.Outputs[0].Kind != "encoder" {
		t.Errorf("encode.file: %+v", st)
	}
	code, out, _ = repro(t, "stages", "--json")
	if err := json.Unmarshal([]byte(out), &doc); code != 0 || err != nil || len(doc.Types) < 40 {
		t.Errorf("all types: exit %d, %v, %d types", code, err, len(doc.Types))
	}
}
