// Package dataset is the catalogue of the datasets repro reads, and their
// readers.
//
// Each dataset is declared once (catalogue.go): its files (paths relative
// to a data directory), their sha256 and row counts, the official source,
// the release archives the files derive from and the licence. Files are
// looked up in the data directories of repro/internal/datadir
// (REPRO_DATA_DIR, then the per-user cache), and every file is checked
// against its sha256 the first time it is used. Hashes are cached by
// (absolute path, size, mtime) in os.UserCacheDir()/repro/verified.json, so
// a second process does not hash the 33 MB of GloVe again; the cache is only
// an optimisation, and a missing, damaged or read-only cache just means
// hashing again.
//
// Readers report the file, the 1-based line and the reason for every bad
// row. TSV files are split on TAB only, never parsed as CSV: the STS and
// NLI sentences contain bare double quotes.
//
// Licences (see each Dataset.Licence and the readme/licence files kept
// beside the data, which List verifies too):
//
//   - sts12..sts16: SemEval/*SEM STS test sets; per-subset terms (MSRpar
//     and MSRvid under Microsoft Research licence terms; STS14/15 image
//     captions and Stack Exchange answers CC BY-SA; STS16 CC BY-SA 3.0 / CC
//     BY 4.0 / CC BY-NC-SA 2.0 UK).
//   - stsb: scores CC BY-SA 4.0, sentence text per source.
//   - sickr: CC BY-NC-SA 3.0.
//   - nli: SNLI CC BY-SA 4.0; MultiNLI OANC-derived (fiction CC BY-SA 3.0).
//   - wiki: Wikipedia text, CC BY-SA 3.0.
//   - bbc: content (c) BBC, research use only (UCD release).
//   - semeval2016_cqa: free for general research use.
//   - brown: redistribution permitted by the copyright holder.
//   - glove.6B.100d: PDDL 1.0.  bert-base-uncased: Apache-2.0.  gpt2: MIT.
//
// Pull fetches a dataset for users with network access. Files that exist
// byte-for-byte upstream (the tokenizer files) are installed directly and
// verified. The other files are conversions of official release archives
// (SemEval zips, SICK, SNLI/MNLI, BBC, GloVe); Pull downloads those archives
// next to the data and says that the conversion must be run, rather than
// installing anything unverified.
package dataset
