#!/bin/sh
# cuda-headers.sh: make `go build/vet -tags cuda` work on a machine without
# a GPU or a CUDA toolkit, by fetching Debian's non-free nvidia-cuda-dev
# package and unpacking only its headers (/usr/include) and its stub
# libraries (libcuda.so, libcublas.so, ... under /usr/lib/<multiarch>/stubs)
# into $REPO/.cuda/ (git-ignored). The stubs satisfy the linker; at run time
# the real libcuda.so.1 (driver) and libcublas.so.11 must be present.
#
# Usage (as root on Debian 12, or any user who can run apt-get download):
#   eval "$(.ci/cuda-headers.sh)"        # exports CGO_CFLAGS / CGO_LDFLAGS
#   go build -tags cuda ./internal/tensor/...
#   go vet   -tags cuda ./internal/tensor/...
#
# With CUDA_RUNTIME=1 it also unpacks the real cuBLAS 11 runtime
# (libcublas11, libcublaslt11; ~250 MB) and exports LD_LIBRARY_PATH, for a GPU
# machine that has the NVIDIA driver but no cuBLAS 11.
#
# Idempotent: the .deb files are cached in .cuda/debs and the unpacked tree
# is reused while .cuda/stamp names the same package versions. Only the
# export lines go to stdout; progress goes to stderr.
set -eu

REPO=${REPO:-$(cd "$(dirname "$0")/.." && pwd)}
DEST=$REPO/.cuda
ROOT=$DEST/root
DEBS=$DEST/debs
APTDIR=$DEST/apt
PKGS="nvidia-cuda-dev"
if [ "${CUDA_RUNTIME:-0}" = 1 ]; then
	PKGS="$PKGS libcublas11 libcublaslt11"
fi

log() { echo "cuda-headers: $*" >&2; }
die() { log "error: $*"; exit 1; }

command -v apt-get >/dev/null || die "apt-get not found (this script needs a Debian-based system)"
command -v dpkg-deb >/dev/null || die "dpkg-deb not found"

. /etc/os-release
CODENAME=${VERSION_CODENAME:-bookworm}
ARCH=$(dpkg --print-architecture)
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
[ -r "$KEYRING" ] || die "$KEYRING missing (install debian-archive-keyring)"

# A private apt configuration: the system's sources stay untouched, and the
# non-free component is enabled only for these downloads.
mkdir -p "$APTDIR/lists/partial" "$APTDIR/cache/archives/partial" "$DEBS"
echo "deb [signed-by=$KEYRING] $MIRROR $CODENAME main contrib non-free non-free-firmware" >"$APTDIR/sources.list"
apt_opts() {
	echo "-o Dir::Etc::sourcelist=$APTDIR/sources.list -o Dir::Etc::sourceparts=- \
-o Dir::State::Lists=$APTDIR/lists -o Dir::Cache=$APTDIR/cache \
-o APT::Get::List-Cleanup=0 -o APT::Sandbox::User=root -o Debug::NoLocking=1"
}

# Refresh the package index at most once a day (the versions pin the stamp).
if [ -z "$(find "$APTDIR/lists" -maxdepth 1 -name '*Packages*' -mtime -1 2>/dev/null | head -n 1)" ]; then
	log "updating the non-free package index for $CODENAME"
	# shellcheck disable=SC2046
	apt-get -q $(apt_opts) update >&2 || die "apt-get update failed (network?)"
fi

versions=""
for p in $PKGS; do
	# shellcheck disable=SC2046
	v=$(apt-cache $(apt_opts) show --no-all-versions "$p" 2>/dev/null | sed -n 's/^Version: //p' | head -n 1)
	[ -n "$v" ] || die "package $p not found in $CODENAME non-free"
	versions="$versions $p=$v"
done

if [ -f "$DEST/stamp" ] && [ "$(cat "$DEST/stamp")" = "$versions" ] && [ -f "$ROOT/usr/include/cuda.h" ]; then
	log "up to date:$versions"
else
	rm -rf "$ROOT.tmp"
	mkdir -p "$ROOT.tmp"
	for pv in $versions; do
		p=${pv%%=*}
		v=${pv#*=}
		# apt names the file package_version_arch.deb, with ':' as %3a.
		deb=$DEBS/${p}_$(echo "$v" | sed 's/:/%3a/g')_${ARCH}.deb
		if [ -f "$deb" ]; then
			log "cached $(basename "$deb")"
		else
			log "downloading $p $v"
			# shellcheck disable=SC2046
			(cd "$DEBS" && apt-get -q $(apt_opts) download "$p=$v" >&2) || die "download of $p failed"
			[ -f "$deb" ] || die "apt-get download did not produce $deb"
		fi
		# Unpack only what the build needs: nvidia-cuda-dev is 2.8 GB
		# installed, almost all static libraries.
		case $p in
		nvidia-cuda-dev) want="./usr/include ./usr/lib/*/stubs" ;;
		*) want="./usr/lib" ;;
		esac
		log "unpacking $want from $(basename "$deb")"
		# The patterns are for tar, not the shell: no globbing here.
		set -f
		# shellcheck disable=SC2086
		dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$ROOT.tmp" --wildcards $want ||
			die "unpacking $deb failed"
		set +f
	done
	rm -rf "$ROOT"
	mv "$ROOT.tmp" "$ROOT"
	echo "$versions" >"$DEST/stamp"
fi

[ -f "$ROOT/usr/include/cuda.h" ] || die "cuda.h missing after unpacking"
[ -f "$ROOT/usr/include/cublas_v2.h" ] || die "cublas_v2.h missing after unpacking"
STUBS=$(dirname "$(find "$ROOT/usr/lib" -path '*/stubs/libcuda.so' | head -n 1)")
[ -f "$STUBS/libcublas.so" ] || die "stub libcublas.so missing under $ROOT/usr/lib"

echo "export CGO_CFLAGS=\"-I$ROOT/usr/include\""
echo "export CGO_LDFLAGS=\"-L$STUBS\""
if [ "${CUDA_RUNTIME:-0}" = 1 ]; then
	LIBDIR=$(dirname "$STUBS")
	echo "export LD_LIBRARY_PATH=\"$LIBDIR\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}\""
fi
