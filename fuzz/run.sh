#!/bin/sh
# Runs fuzz targets from their seed corpora: fuzz/run.sh BUILD_DIR SECONDS [NAME...]
# (every target when no NAME is given; NAME is a target without "_fuzzer").
#
# New inputs libFuzzer finds go to BUILD_DIR/corpus/NAME, so the checked-in seeds stay as they
# are and a later run continues from what earlier ones found; a crash's input goes to
# BUILD_DIR/artifacts/. Each target's output is kept in BUILD_DIR/logs/NAME.log and shown when
# it fails. Exits non-zero when any target found a crash, a leak, a timeout or an out-of-memory.
set -u
build=$1
seconds=$2
shift 2
here=$(dirname "$0")
names=${*:-$(cd "$here" && ls *_fuzzer.cc | sed 's/_fuzzer\.cc$//')}
mkdir -p "$build/corpus" "$build/artifacts" "$build/logs"
failed=""
for name in $names; do
  binary=$build/fuzz/${name}_fuzzer
  log=$build/logs/$name.log
  mkdir -p "$build/corpus/$name"
  # -timeout: an input that takes this long is a hang (FUZZ_TIMEOUT seconds, 20 by default; a
  # long run at low priority beside other work needs more, the clock being the wall's);
  # -rss_limit_mb: one that grows this big is a memory blow-up (a few bytes must not make a
  # parser allocate gigabytes).
  if "$binary" -max_total_time="$seconds" -timeout="${FUZZ_TIMEOUT:-20}" -rss_limit_mb=2560 -print_final_stats=1 \
      -artifact_prefix="$build/artifacts/$name-" "$build/corpus/$name" "$here/corpus/$name" \
      >"$log" 2>&1; then
    echo "fuzz $name: $(grep -E '^#[0-9]+.*(DONE|pulse|NEW|REDUCE|INITED)' "$log" | tail -1)"
  else
    echo "fuzz $name: FAILED (log: $log)"
    tail -n 60 "$log"
    failed="$failed $name"
  fi
done
if [ -n "$failed" ]; then
  echo "fuzz targets that failed:$failed"
  exit 1
fi
