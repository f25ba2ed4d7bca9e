#!/usr/bin/env bash
# Sets a fresh Debian 12 machine up for sonata and runs its main job or its test suite:
#   scripts/setup.sh probe [sonata probe arguments…]   install, build, install the pinned harnesses, probe them
#   scripts/setup.sh test                              install, build, run the whole test suite (ctest)
# Installs only what is missing: Debian packages with apt-get, harness CLIs from the npm registry.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${SONATA_BUILD_DIR:-$root/build}"
job="${1:-}"
[[ $# -gt 0 ]] && shift

debian_packages=(
  g++ cmake ninja-build git tmux
  libboost1.81-dev libboost-filesystem1.81-dev nlohmann-json3-dev libtomlplusplus-dev libfmt-dev
  libcli11-dev libexpected-dev libgtest-dev libgmock-dev
)
test_packages=(libxml2-utils chromium clang-14 libclang-rt-14-dev clang-format)

as_root() {
  if [[ $(id -u) -eq 0 ]]; then "$@"; else sudo "$@"; fi
}

install_missing() {
  local missing=() package
  for package in "$@"; do
    if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed'; then
      missing+=("$package")
    fi
  done
  if [[ ${#missing[@]} -gt 0 ]]; then
    echo "setup: installing ${missing[*]}"
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
  fi
  if ! command -v npm >/dev/null; then
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nodejs npm
  fi
}

build_sonata() {
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build "$build" -j "$(nproc)"
}

harness_path() {
  # The last line install-harnesses prints is the directory holding every pinned harness binary.
  # Without the npm registry nothing is installed: probe then finds what is on PATH, and the
  # conformance tests skip the missing harnesses, each saying so.
  local out
  if out="$("$root/scripts/install-harnesses")"; then
    tail -n 1 <<<"$out"
  else
    echo "setup: the pinned harnesses could not be installed (is the npm registry reachable?)" >&2
  fi
}

case "$job" in
  probe)
    install_missing "${debian_packages[@]}"
    build_sonata
    bin="$(harness_path)"
    PATH="${bin:+$bin:}$PATH" "$build/sonata" probe "$@"
    ;;
  test)
    install_missing "${debian_packages[@]}" "${test_packages[@]}"
    build_sonata
    bin="$(harness_path)"
    cd "$build"
    PATH="${bin:+$bin:}$PATH" ctest --output-on-failure -j 2 --timeout 900
    ;;
  *)
    echo "usage: scripts/setup.sh probe [ARGS…] | scripts/setup.sh test" >&2
    exit 2
    ;;
esac
