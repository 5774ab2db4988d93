// Package wordnet reads the Princeton WordNet 3.0 database files
// (index.{noun,verb,adj,adv}, data.*, *.exc; Debian package wordnet-base
// installs them under /usr/share/wordnet) and answers the one question EDA
// asks: which words are synonyms of a word.
//
// Lookups follow NLTK's WordNetCorpusReader, which EDA (Wei and Zou, 2019)
// calls: the word is lower-cased, reduced to base forms with NLTK's morphy
// (exception lists first, then its suffix rules, re-applied until a form is
// in the index), and its synsets are gathered for noun, verb, adjective and
// adverb in that order. Synonyms() applies EDA's get_synonyms clean-up on
// top. The whole database is loaded into memory at Open (about a second):
// EDA looks up most words of every sentence, so seeking per lookup would
// only be slower.
package wordnet

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// EnvDir names the environment variable that points at a WordNet dict
// directory; DefaultDir is used when it is unset.
const (
	EnvDir     = "REPRO_WORDNET_DIR"
	DefaultDir = "/usr/share/wordnet"
)

// POS is a WordNet part of speech: 'n', 'v', 'a' (adjectives, satellites
// included) or 'r'.
type POS byte

// Parts of speech in the order NLTK's synsets() visits them.
const (
	Noun POS = 'n'
	Verb POS = 'v'
	Adj  POS = 'a'
	Adv  POS = 'r'
)

var allPOS = []POS{Noun, Verb, Adj, Adv}

var fileName = map[POS]string{Noun: "noun", Verb: "verb", Adj: "adj", Adv: "adv"}

// Synset is one synonym set.
type Synset struct {
	POS    POS
	Offset int64
	Lemmas []string // as in the database: "domestic_dog", "Canis_familiaris"
}

// WordNet is a loaded database. It is read-only after Open and safe for
// concurrent use.
type WordNet struct {
	index   map[POS]map[string][]int64
	synsets map[POS]map[int64]*Synset
	exc     map[POS]map[string][]string
}

// Dir returns the WordNet directory to use: $REPRO_WORDNET_DIR, else
// /usr/share/wordnet, or an error saying how to get one.
func Dir() (string, error) {
	d := os.Getenv(EnvDir)
	if d == "" {
		d = DefaultDir
	}
	if _, err := os.Stat(filepath.Join(d, "index.noun")); err != nil {
		return "", fmt.Errorf("wordnet: no database in %s (install Debian's wordnet-base, or set %s to a WordNet 3.0 dict directory): %v", d, EnvDir, err)
	}
	return d, nil
}

// Open loads the database files in dir.
func Open(dir string) (*WordNet, error) {
	w := &WordNet{
		index:   map[POS]map[string][]int64{},
		synsets: map[POS]map[int64]*Synset{},
		exc:     map[POS]map[string][]string{},
	}
	for _, p := range allPOS {
		var err error
		if w.index[p], err = readIndex(filepath.Join(dir, "index."+fileName[p])); err != nil {
			return nil, err
		}
		if w.synsets[p], err = readData(filepath.Join(dir, "data."+fileName[p]), p); err != nil {
			return nil, err
		}
		if w.exc[p], err = readExc(filepath.Join(dir, fileName[p]+".exc")); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// eachLine calls fn for every line of path that is not part of the licence
// header (header lines start with a space).
func eachLine(path string, fn func(line string, n int) error) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("wordnet: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<16), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if line == "" || line[0] == ' ' {
			continue
		}
		if err := fn(line, n); err != nil {
			return fmt.Errorf("wordnet: %s:%d: %v", path, n, err)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("wordnet: %s:%d: %v", path, n+1, err)
	}
	return nil
}

// readIndex parses "lemma pos synset_cnt p_cnt [ptr...] sense_cnt
// tagsense_cnt offset...".
func readIndex(path string) (map[string][]int64, error) {
	idx := map[string][]int64{}
	err := eachLine(path, func(line string, _ int) error {
		f := strings.Fields(line)
		if len(f) < 6 {
			return fmt.Errorf("index line has %d fields, want at least 6", len(f))
		}
		nSyn, err1 := strconv.Atoi(f[2])
		nPtr, err2 := strconv.Atoi(f[3])
		if err1 != nil || err2 != nil || nSyn < 0 || nPtr < 0 {
			return fmt.Errorf("bad synset or pointer count %q %q", f[2], f[3])
		}
		start := 4 + nPtr + 2
		if len(f) != start+nSyn {
			return fmt.Errorf("index line has %d fields, counts say %d", len(f), start+nSyn)
		}
		offs := make([]int64, nSyn)
		for i := range offs {
			o, err := strconv.ParseInt(f[start+i], 10, 64)
			if err != nil {
				return fmt.Errorf("bad synset offset %q", f[start+i])
			}
			offs[i] = o
		}
		idx[f[0]] = offs
		return nil
	})
	return idx, err
}

// readData parses the lemma part of "offset lex_filenum ss_type w_cnt word
// lex_id ... | gloss" lines.
func readData(path string, p POS) (map[int64]*Synset, error) {
	m := map[int64]*Synset{}
	err := eachLine(path, func(line string, _ int) error {
		f := strings.Fields(line)
		if len(f) < 4 {
			return fmt.Errorf("data line has %d fields", len(f))
		}
		off, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return fmt.Errorf("bad synset offset %q", f[0])
		}
		n, err := strconv.ParseInt(f[3], 16, 32) // w_cnt is two hex digits
		if err != nil || n < 1 || len(f) < 4+2*int(n) {
			return fmt.Errorf("bad word count %q", f[3])
		}
		s := &Synset{POS: p, Offset: off, Lemmas: make([]string, n)}
		for i := 0; i < int(n); i++ {
			w := f[4+2*i]
			// Adjective syntactic markers "(a)", "(p)", "(ip)" are not part
			// of the lemma (NLTK strips them too).
			if j := strings.IndexByte(w, '('); j > 0 && strings.HasSuffix(w, ")") {
				w = w[:j]
			}
			s.Lemmas[i] = w
		}
		m[off] = s
		return nil
	})
	return m, err
}

// readExc parses "inflected base [base...]".
func readExc(path string) (map[string][]string, error) {
	m := map[string][]string{}
	err := eachLine(path, func(line string, _ int) error {
		f := strings.Fields(line)
		if len(f) < 2 {
			return fmt.Errorf("exception line needs an inflected form and a base form")
		}
		m[f[0]] = append(m[f[0]], f[1:]...)
		return nil
	})
	return m, err
}

var substitutions = map[POS][][2]string{
	Noun: {{"s", ""}, {"ses", "s"}, {"ves", "f"}, {"xes", "x"}, {"zes", "z"}, {"ches", "ch"}, {"shes", "sh"}, {"men", "man"}, {"ies", "y"}},
	Verb: {{"s", ""}, {"ies", "y"}, {"es", "e"}, {"es", ""}, {"ed", "e"}, {"ed", ""}, {"ing", "e"}, {"ing", ""}},
	Adj:  {{"er", ""}, {"est", ""}, {"er", "e"}, {"est", "e"}},
	Adv:  nil,
}

// Morphy returns the base forms of form (lower case) that the index lists
// for pos, exactly as NLTK's _morphy computes them.
func (w *WordNet) Morphy(form string, p POS) []string {
	idx := w.index[p]
	filter := func(forms []string) []string {
		var out []string
		seen := map[string]bool{}
		for _, f := range forms {
			if _, ok := idx[f]; ok && !seen[f] {
				out = append(out, f)
				seen[f] = true
			}
		}
		return out
	}
	apply := func(forms []string) []string {
		var out []string
		for _, f := range forms {
			for _, s := range substitutions[p] {
				if strings.HasSuffix(f, s[0]) {
					out = append(out, f[:len(f)-len(s[0])]+s[1])
				}
			}
		}
		return out
	}
	if bases, ok := w.exc[p][form]; ok {
		return filter(append([]string{form}, bases...))
	}
	forms := apply([]string{form})
	if r := filter(append([]string{form}, forms...)); len(r) > 0 {
		return r
	}
	for len(forms) > 0 {
		forms = apply(forms)
		if r := filter(forms); len(r) > 0 {
			return r
		}
	}
	return nil
}

// Synsets returns the synsets of word in NLTK's order (noun, verb,
// adjective, adverb; within a part of speech, by base form then sense
// number).
func (w *WordNet) Synsets(word string) []*Synset {
	word = strings.ToLower(word)
	var out []*Synset
	for _, p := range allPOS {
		for _, form := range w.Morphy(word, p) {
			for _, off := range w.index[p][form] {
				if s, ok := w.synsets[p][off]; ok {
					out = append(out, s)
				}
			}
		}
	}
	return out
}

// Synonyms returns EDA's synonyms of word, sorted: the lemma names of all
// its synsets with "_" and "-" read as spaces, lower-cased, every character
// other than a-z and space dropped, and the word itself removed. (EDA keeps
// them in a Python set; sorting makes a seeded choice reproducible.)
func (w *WordNet) Synonyms(word string) []string {
	word = strings.ToLower(word)
	set := map[string]bool{}
	for _, s := range w.Synsets(word) {
		for _, l := range s.Lemmas {
			set[edaClean(l)] = true
		}
	}
	delete(set, word)
	out := make([]string, 0, len(set))
	for s := range set {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

func edaClean(lemma string) string {
	lemma = strings.ToLower(strings.NewReplacer("_", " ", "-", " ").Replace(lemma))
	var b strings.Builder
	for _, r := range lemma {
		if r == ' ' || (r >= 'a' && r <= 'z') {
			b.WriteRune(r)
		}
	}
	return b.String()
}
