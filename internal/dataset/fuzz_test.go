package dataset

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzReaders feeds arbitrary bytes to every reader of the catalogue's
// formats (gzip-compressed for the gzip formats, so the fuzzer explores
// their content): none may panic, and an error must name the file (and,
// past the header, its line) so that a damaged row is found.
// Run: go test ./internal/dataset -run '^$' -fuzz FuzzReaders -fuzztime 30s
func FuzzReaders(f *testing.F) {
	f.Add([]byte("score\tsentence1\tsentence2\n4.5\tA cat.\tA dog.\n"))
	f.Add([]byte("sent0\tentailment\tcontradiction\nA man.\tA person.\tA woman.\n"))
	f.Add([]byte(`{"id":"business/001","category":"business","headline":"H","sentences":["S."],"dup_of":""}` + "\n"))
	f.Add([]byte(`{"id":"q1","query":"q","positive":["p"],"negative":["n"]}` + "\n"))
	f.Add([]byte(`{"id":"ca01","category":"news","sentences":[{"tokens":["The","cat"],"tags":["at","nn"]}]}` + "\n"))
	f.Add([]byte("the 0.1 0.2\ncat 0.3 0.4\n"))
	f.Add([]byte("a sentence\nanother one\n"))
	f.Add([]byte("score\tsentence1\tsentence2\n\xff\t\t\n"))
	f.Add([]byte("sent0,sent1,hard_neg\n\"A, b\",\"c \"\"d\"\"\",e\n"))
	f.Add([]byte(`{"text": "A line.\nAnother.", "timestamp": "2019-04-25T12:57:54Z", "url": "https://x"}` + "\n"))
	f.Add([]byte("N1\tnews\tnewsus\tTitle\tOne. Two.\thttps://x\t[]\t[]\n"))
	f.Add([]byte(`{"query":"q","positive":["p"],"negative":["n"]}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		plain := filepath.Join(dir, "in.tsv")
		if err := os.WriteFile(plain, data, 0o644); err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zw.Write(data)
		zw.Close()
		gz := filepath.Join(dir, "in.gz")
		if err := os.WriteFile(gz, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		check := func(reader string, path string, err error) {
			if err != nil && !strings.Contains(err.Error(), path) {
				t.Errorf("%s: error does not name the file: %v", reader, err)
			}
		}
		_, err := ReadSTS(plain, "stsb", "test")
		check("ReadSTS", plain, err)
		_, err = ReadNLI(plain)
		check("ReadNLI", plain, err)
		_, err = ReadBBC(gz)
		check("ReadBBC", gz, err)
		_, err = ReadRerank(gz)
		check("ReadRerank", gz, err)
		_, err = ReadBrown(gz)
		check("ReadBrown", gz, err)
		_, err = ReadLines(gz)
		check("ReadLines", gz, err)
		_, err = ReadGloVe(gz)
		check("ReadGloVe", gz, err)
		// The papers' published formats, plain and gzip-compressed.
		for _, p := range []string{plain, gz} {
			_, err = ReadSimCSENLI(p)
			check("ReadSimCSENLI", p, err)
			_, err = ReadWiki1M(p)
			check("ReadWiki1M", p, err)
			_, err = ReadC4(p)
			check("ReadC4", p, err)
			_, err = ReadMINDNews(p)
			check("ReadMINDNews", p, err)
			_, err = ReadMTEBRerank(p)
			check("ReadMTEBRerank", p, err)
			_, err = ReadUSEBTrain(p)
			check("ReadUSEBTrain", p, err)
		}
		SplitSentences(string(data))
	})
}
