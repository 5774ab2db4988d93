#!/usr/bin/env bash
# Installs the system packages repro needs (Debian 12; as root, or with sudo):
# WordNet's database for PaSeR's synonym replacement, OpenBLAS's headers for
# the openblas backend, Debian's archive keys (.ci/cuda-headers.sh checks the
# CUDA packages it fetches against them), and Slurm (slurmctld, slurmd, munge,
# the client tools) for the cluster executor's tests, which start their own
# throwaway single-node cluster. gcc (cgo, for SQLite) and Go are expected on
# the machine. .ci/run calls it (make setup); `make test` does not.
set -euo pipefail
need=()
[ -f /usr/share/wordnet/data.noun ] || need+=(wordnet-base)
command -v gcc >/dev/null || need+=(gcc)
[ -f /usr/include/x86_64-linux-gnu/cblas.h ] || [ -f /usr/include/cblas.h ] || need+=(libopenblas-dev)
dpkg -s debian-archive-keyring >/dev/null 2>&1 || need+=(debian-archive-keyring)
[ -x /usr/sbin/slurmctld ] && [ -x /usr/sbin/slurmd ] && [ -x /usr/sbin/munged ] && [ -x /usr/bin/sbatch ] \
  || need+=(slurmctld slurmd munge slurm-client)
if [ ${#need[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  echo "setup: installing ${need[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
fi
