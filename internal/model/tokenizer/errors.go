package tokenizer

import "errors"

// ErrVocab marks a vocabulary file no tokenizer can be built from: an id
// outside the vocabulary, a merge into a missing token, a size that
// overflows. Such files come from outside; they are refused with an error
// naming the file, never indexed or allocated by.
var ErrVocab = errors.New("invalid vocabulary")
