#!/usr/bin/python3
"""Golden synonyms for internal/text/wordnet from NLTK's WordNet reader.

Runs EDA's get_synonyms (Wei and Zou 2019, code/eda.py) on NLTK 3.8's
WordNetCorpusReader over the same database files the Go reader reads
(Debian wordnet-base, /usr/share/wordnet). Debian's directory lacks the
"lexnames" file NLTK insists on, so a temporary directory links the database
files and adds WordNet 3.0's standard lexnames.

Usage: /usr/bin/python3 synonyms_golden.py DATA_DIR [WORDNET_DIR] > synonyms.jsonl
Words: every distinct alphabetic word of the first 150 STS-B test pairs,
plus inflected forms that exercise morphy.
"""
import json
import os
import re
import sys
import tempfile

from nltk.corpus.reader.wordnet import WordNetCorpusReader

LEX = """adj.all adj.pert adv.all noun.Tops noun.act noun.animal noun.artifact
noun.attribute noun.body noun.cognition noun.communication noun.event noun.feeling
noun.food noun.group noun.location noun.motive noun.object noun.person
noun.phenomenon noun.plant noun.possession noun.process noun.quantity
noun.relation noun.shape noun.state noun.substance noun.time verb.body
verb.change verb.cognition verb.communication verb.competition verb.consumption
verb.contact verb.creation verb.emotion verb.motion verb.perception
verb.possession verb.social verb.stative verb.weather adj.ppl""".split()
LEXPOS = {"adj": 3, "adv": 4, "noun": 1, "verb": 2}

EXTRA = ["dogs", "geese", "women", "running", "ran", "better", "best", "happier",
         "boxes", "churches", "wolves", "studies", "played", "makes", "went", "children"]


def reader(wndir):
    tmp = tempfile.mkdtemp()
    for name in os.listdir(wndir):
        if name.startswith(("index.", "data.")) or name.endswith(".exc"):
            os.symlink(os.path.join(wndir, name), os.path.join(tmp, name))
    with open(os.path.join(tmp, "lexnames"), "w") as f:
        for i, n in enumerate(LEX):
            f.write("%02d\t%s\t%d\n" % (i, n, LEXPOS[n.split(".")[0]]))
    return WordNetCorpusReader(tmp, None)


def get_synonyms(wn, word):
    # EDA's get_synonyms, verbatim in behaviour.
    synonyms = set()
    for syn in wn.synsets(word):
        for l in syn.lemmas():
            synonym = l.name().replace("_", " ").replace("-", " ").lower()
            synonym = "".join([c for c in synonym if c in " qwertyuiopasdfghjklzxcvbnm"])
            synonyms.add(synonym)
    if word in synonyms:
        synonyms.remove(word)
    return sorted(synonyms)


def main():
    data = sys.argv[1]
    wn = reader(sys.argv[2] if len(sys.argv) > 2 else "/usr/share/wordnet")
    words = []
    with open(os.path.join(data, "sts/STSB/test.tsv"), encoding="utf-8") as f:
        next(f)
        for i, line in enumerate(f):
            if i == 150:
                break
            for s in line.rstrip("\n").split("\t")[1:]:
                words += re.findall(r"[a-z]+", s.lower())
    words += EXTRA
    out, seen = [], set()
    for w in words:
        if w not in seen:
            seen.add(w)
            out.append({"word": w, "synonyms": get_synonyms(wn, w)})
    for row in out:
        print(json.dumps(row))


if __name__ == "__main__":
    main()
