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
test_packages=(libxml2-utils chromium clang-14 libclang-rt-14-dev clang-format dpkg-dev man-db procps sqlite3)

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

# Optimised as a release is, without debug information: on two cores that compiles in two thirds
# of RelWithDebInfo's time (a developer's build dir may use any build type).
build_sonata() {
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null &&
    cmake --build "$build" -j "$(nproc)"
}

# Installs the pinned harnesses and sets harness_bin to the directory holding them. Whether a
# conformance test may skip a pin that is not installed is decided here: when the npm registry
# answers, a pin that could not be installed is an error (SONATA_REQUIRE_HARNESSES=1); when it does
# not, the tests skip, saying why (SONATA_HARNESSES_SKIP_REASON).
install_harnesses() {
  settle_harnesses "$("$root/scripts/install-harnesses")"
}

# Decides as install_harnesses says from the installer's output, empty when it failed.
settle_harnesses() {
  local out="$1"
  harness_bin=""
  if [[ -n "$out" ]]; then
    harness_bin="$(tail -n 1 <<<"$out")"
    export SONATA_REQUIRE_HARNESSES=1
  elif timeout 30 npm ping >/dev/null 2>&1; then
    echo "setup: the npm registry answers but the pinned harnesses could not be installed" >&2
    export SONATA_REQUIRE_HARNESSES=1
  else
    echo "setup: the npm registry is unreachable: the real-harness tests will be skipped" >&2
    export SONATA_HARNESSES_SKIP_REASON="the npm registry was unreachable when setup ran"
  fi
}

# What only the tests need (their Debian packages, the pinned harnesses, bubblewrap) is installed
# while sonata builds: the build needs none of it, and the installs mostly wait on the network.
# Their output goes to a log printed once the build is done, so that the two do not interleave.
start_test_installs() {
  test_installs_dir="$(mktemp -d)"
  (
    install_missing "${test_packages[@]}"
    "$root/scripts/install-harnesses" > "$test_installs_dir/harnesses" || : > "$test_installs_dir/harnesses"
    provide_bubblewrap
  ) > "$test_installs_dir/log" 2>&1 &
  test_installs_pid=$!
}

finish_test_installs() {
  local status=0
  wait "$test_installs_pid" || status=$?
  cat "$test_installs_dir/log"
  if [[ $status -ne 0 ]]; then
    echo "setup: installing what the tests need failed (exit $status)" >&2
    exit "$status"
  fi
  settle_harnesses "$(cat "$test_installs_dir/harnesses")"
  SONATA_BWRAP_DIR="$(bubblewrap_dir)/usr/bin"
  export SONATA_BWRAP_DIR
  rm -rf "$test_installs_dir"
}

# Unpacks Debian's bubblewrap beside the harnesses without installing it, and exports its directory
# as SONATA_BWRAP_DIR: a hardening test runs reasonix with it on PATH, where reasonix's own
# acceptEdits runs shell commands unasked, while every other cell runs on a host without it.
bubblewrap_dir() { echo "${XDG_CACHE_HOME:-$HOME/.cache}/sonata/bubblewrap"; }

provide_bubblewrap() {
  local dir scratch
  dir="$(bubblewrap_dir)"
  if [[ ! -x "$dir/usr/bin/bwrap" ]]; then
    scratch="$(mktemp -d)"
    (cd "$scratch" && { apt-get download -qq bubblewrap 2>/dev/null || { as_root apt-get update -qq && apt-get download -qq bubblewrap; }; })
    mkdir -p "$dir"
    dpkg-deb -x "$scratch"/bubblewrap_*.deb "$dir"
    rm -rf "$scratch"
  fi
  export SONATA_BWRAP_DIR="$dir/usr/bin"
}

# How many real-harness cells the conformance tier probed, from ctest's log.
real_cells_summary() {
  local log="$build/Testing/Temporary/LastTest.log" cells harnesses
  cells=$(sed -n 's/^\[ real cells \] .*: \([0-9]*\) cells probed$/\1/p' "$log" 2>/dev/null | awk '{s+=$1} END {print s+0}')
  harnesses=$(grep -c '^\[ real cells \] ' "$log" 2>/dev/null || true)
  echo "setup: ${cells} real-harness cells probed on ${harnesses:-0} pinned harness(es)${SONATA_HARNESSES_SKIP_REASON:+ (${SONATA_HARNESSES_SKIP_REASON})}"
}

# When tests failed: the end of each failed test's output (from ctest's log), then ctest's summary
# again, so the failure is readable in the last lines of a long CI log.
failed_tests_again() {
  local log="$build/Testing/Temporary/LastTest.log" failed="$build/Testing/Temporary/LastTestsFailed.log" name
  [ -s "$failed" ] || return 0
  cut -d: -f2- "$failed" | sed 's/  # .*$//' | head -n 3 | while IFS= read -r name; do
    echo "setup: the end of the output of the failed test $name:"
    awk -v name="$name" '
      $0 ~ /^[0-9]+\/[0-9]+ Test: / { test = substr($0, index($0, ": ") + 2); sub(/  # .*$/, "", test); inside = (test == name) }
      inside && /^<end of output>$/ { inside = 0 }
      inside' "$log" | tail -n 40
  done
  echo "setup: $(wc -l < "$failed") test(s) failed:"
  cut -d: -f2- "$failed"
}

case "$job" in
  probe)
    install_missing "${debian_packages[@]}"
    build_sonata
    install_harnesses
    PATH="${harness_bin:+$harness_bin:}$PATH" "$build/sonata" probe "$@"
    ;;
  test)
    install_missing "${debian_packages[@]}"
    start_test_installs
    build_sonata || { status=$?; wait "$test_installs_pid" || true; exit "$status"; }
    finish_test_installs
    status=0
    # Every test asks for two of ctest's processors and one that mostly waits for one: 3n+1 runs
    # three tests on two cores, and the waiting ones beside them. Most tests wait on harness
    # processes much of the time: at 2n+1 (one per core) the suite kept 1.3 of two cores busy.
    (cd "$build" && PATH="${harness_bin:+$harness_bin:}$PATH" ctest --output-on-failure \
      -j "$((3 * $(nproc) + 1))" --timeout 900) \
      | tee "$build/ctest-output.log" || status=$? # pipefail: ctest's status
    if [ "$status" -ne 0 ]; then
      failed_tests_again
      grep -E '^[0-9]+% tests passed' "$build/ctest-output.log" || true
    fi
    real_cells_summary
    exit "$status"
    ;;
  *)
    echo "usage: scripts/setup.sh probe [ARGS…] | scripts/setup.sh test" >&2
    exit 2
    ;;
esac
