package gense

import (
	"reflect"
	"testing"
)

func TestSentencesOf(t *testing.T) {
	t.Parallel()
	got := sentencesOf("Best Bank Hi Guys; I need to open a new account.  Which is the best?? 3 banks... or more! thanks", true)
	want := []string{"Best Bank Hi Guys; I need to open a new account.", "Which is the best??", "3 banks... or more! thanks"} // a lower-case start does not split
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q\nwant %q", got, want)
	}
	if got := sentencesOf(" a. B ", false); !reflect.DeepEqual(got, []string{"a. B"}) {
		t.Fatalf("unsplit %q", got)
	}
}

func TestInDomainSentences(t *testing.T) {
	t.Parallel()
	texts := []string{
		"Good bank in Doha? Which bank is good as per your experience here.",
		"Driving license validity. If you hold a Qatar license it is valid.",
		"Visa question. Which bank is good as per your experience here.",
		"Medical exam info? I finished my medical exam here in Doha today.",
	}
	exclude := []string{
		"Driving license validity. If you hold a Qatar license it is valid.", // the same question in the evaluation split
		"Other question. I finished my medical exam here in Doha today.",     // a shared sentence
	}
	got, c := InDomainSentences(texts, exclude, InDomainOptions{Split: true, MinWords: 3, MaxWords: 6})
	want := []string{"Good bank in Doha?", "Which bank is good as per", "Medical exam info?"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q\nwant %q", got, want)
	}
	wantC := InDomainCounts{Texts: 4, Sentences: 8, Short: 1, Excluded: 3, Repeated: 1, Kept: 3, Truncated: 1}
	if c != wantC {
		t.Fatalf("counts %+v\nwant %+v", c, wantC)
	}
	// Nothing left when every text is an evaluation text.
	if got, c := InDomainSentences(exclude, exclude, InDomainOptions{Split: true}); len(got) != 0 || c.Excluded != 4 {
		t.Fatalf("%q %+v", got, c)
	}
}
