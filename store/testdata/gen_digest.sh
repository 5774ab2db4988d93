#!/bin/sh
# Computes the golden digest of the TestDigestDir fixture with the reference
# BLAKE3 implementation (Debian package b3sum), independently of the Go
# code: the manifest is "repro-tree-v1\n", then per entry in byte order of
# its path "d PATH\n" for a directory or "f SIZE BLAKE3 PATH\n" for a file.
# Usage: sh gen_digest.sh > digest_golden.txt
set -eu
a=$(printf 'alpha' | b3sum --no-names)
b=$(printf 'beta' | b3sum --no-names)
printf 'repro-tree-v1\nf 5 %s a.txt\nd sub\nf 4 %s sub/b.txt\n' "$a" "$b" | b3sum --no-names
