#!/usr/bin/env bash
# Lichess leaderboard replay: feed one chronological ZADD payload into goblin-server and
# redis-server, each on its own Unix socket with persistence off, sampling memory at every date
# boundary, then compare the final leaderboards.  See bench/lichess/README.md.
#
#   feed_payload_uds.sh [--scale tiny|small|full-population] [--mode reply|pipelined]
#                       [--payload FILE] [--goblin BIN] [--redis BIN] [--out DIR]
#                       [--seed N] [--parallel] [--redis-args "..."] [--goblin-args "..."]
#
# --payload FILE: a payload from synth/pgn2events (`--format cmd` for reply mode, `--format resp`
# for pipelined). Without it the scale's synth trace is generated into OUT.
# Output in OUT (default /tmp/lichess-feed-<scale>-<mode>): goblin.csv, redis.csv (one row per date:
# date,elapsed_s,commands,inserts,errors,used_memory,used_memory_rss,os_rss), summary.txt,
# goblin.zrange / redis.zrange, and the servers' logs.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
SCALE=tiny
MODE=
PAYLOAD=
GOBLIN_BIN=${GOBLIN_SERVER:-$REPO/build/goblin-server}
REDIS_BIN=/usr/bin/redis-server
CLI=${REDIS_CLI:-redis-cli}
OUT=
SEED=1
PARALLEL=0
REDIS_ARGS=
GOBLIN_ARGS=
KEY=leaderboard
TOOLS=${LICHESS_TOOLS:-}   # directory holding synth/pgn2events (built on demand)

die() { echo "feed_payload_uds.sh: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --scale) SCALE=$2; shift 2 ;;
    --mode) MODE=$2; shift 2 ;;
    --pipelined) MODE=pipelined; shift ;;
    --payload) PAYLOAD=$2; shift 2 ;;
    --goblin) GOBLIN_BIN=$2; shift 2 ;;
    --redis) REDIS_BIN=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --seed) SEED=$2; shift 2 ;;
    --parallel) PARALLEL=1; shift ;;
    --redis-args) REDIS_ARGS=$2; shift 2 ;;
    --goblin-args) GOBLIN_ARGS=$2; shift 2 ;;
    --tools) TOOLS=$2; shift 2 ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) die "unknown argument $1" ;;
  esac
done

case "$SCALE" in
  tiny)            PLAYERS=300;      UPDATES=20000;     DAYS=40;   DEFMODE=reply ;;
  small)           PLAYERS=20000;    UPDATES=13000000;  DAYS=4656; DEFMODE=reply ;;
  full-population) PLAYERS=21598007; UPDATES=300000000; DAYS=4656; DEFMODE=pipelined ;;
  *) die "unknown scale '$SCALE' (tiny, small, full-population)" ;;
esac
MODE=${MODE:-$DEFMODE}
case "$MODE" in reply|pipelined) ;; *) die "unknown mode '$MODE' (reply, pipelined)" ;; esac
OUT=${OUT:-/tmp/lichess-feed-$SCALE-$MODE}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
[ -x "$GOBLIN_BIN" ] || die "goblin binary not found: $GOBLIN_BIN"
[ -x "$REDIS_BIN" ] || die "redis binary not found: $REDIS_BIN"
command -v "$CLI" >/dev/null || die "redis-cli not found"

# ---- payload -------------------------------------------------------------------------------------
if [ -z "$PAYLOAD" ]; then
  if [ -z "$TOOLS" ]; then TOOLS=$OUT/tools; fi
  mkdir -p "$TOOLS"
  make -s -C "$HERE" OUT="$TOOLS" >/dev/null
  FMT=cmd; [ "$MODE" = pipelined ] && FMT=resp
  PAYLOAD=$OUT/payload.$FMT
  echo "generating $SCALE trace: synth --players $PLAYERS --updates $UPDATES --days $DAYS --seed $SEED --format $FMT"
  t0=$(date +%s.%N)
  "$TOOLS/synth" --players "$PLAYERS" --updates "$UPDATES" --days "$DAYS" --seed "$SEED" --format "$FMT" -o "$PAYLOAD"
  echo "synth took $(echo "$(date +%s.%N) - $t0" | bc) s"
fi
[ -r "$PAYLOAD" ] || die "cannot read payload $PAYLOAD"
first=$(head -c 1 "$PAYLOAD")
if [ "$first" = '*' ]; then PFMT=resp; else PFMT=cmd; fi
if [ "$MODE" = reply ] && [ "$PFMT" = resp ]; then
  die "reply mode feeds redis-cli line by line: give a '--format cmd' payload"
fi
[ "$MODE" = pipelined ] && [ "$PFMT" = cmd ] && echo "note: pipelining an inline-command payload (RESP payloads are preferred)"

# Date index: "date end_offset" for every marker (the end of the marker's bytes).
INDEX=$OUT/index.txt
EOL=1; [ "$PFMT" = resp ] && EOL=2
LC_ALL=C grep -a -b -o 'lichess-date:[0-9-]*' "$PAYLOAD" \
  | awk -F: -v eol="$EOL" '{ print $3, $1 + length($2 ":" $3) + eol }' > "$INDEX"
NDATES=$(wc -l < "$INDEX")
[ "$NDATES" -gt 0 ] || die "payload has no date markers"
echo "payload: $PAYLOAD ($PFMT, $(stat -c %s "$PAYLOAD") bytes, $NDATES dates), mode $MODE"

# ---- servers -------------------------------------------------------------------------------------
PIDS=()
cleanup() {
  for p in "${PIDS[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null || true; done
}
trap cleanup EXIT

start_server() {  # name bin extra-args -> sets ${name}_PID, ${name}_SOCK
  local name=$1 bin=$2 extra=$3 dir=$OUT/$1
  rm -rf "$dir"; mkdir -p "$dir"
  local sock=$dir/s.sock
  # shellcheck disable=SC2086
  "$bin" --port 0 --unixsocket "$sock" --save '' --appendonly no --dir "$dir" $extra >"$dir/server.log" 2>&1 &
  local pid=$!
  PIDS+=("$pid")
  for _ in $(seq 1 200); do
    if [ "$("$CLI" -s "$sock" PING 2>/dev/null)" = PONG ]; then break; fi
    kill -0 "$pid" 2>/dev/null || { cat "$dir/server.log" >&2; die "$name ($bin) exited at startup"; }
    sleep 0.05
  done
  [ "$("$CLI" -s "$sock" PING 2>/dev/null)" = PONG ] || die "$name did not answer PING"
  eval "${name}_PID=$pid; ${name}_SOCK=$sock"
}

sample() {  # sock pid -> "used_memory,used_memory_rss,os_rss_bytes"
  local info um rss os
  info=$("$CLI" -s "$1" INFO memory | tr -d '\r')
  um=$(awk -F: '$1=="used_memory"{print $2}' <<<"$info")
  rss=$(awk -F: '$1=="used_memory_rss"{print $2}' <<<"$info")
  os=$(( $(ps -o rss= -p "$2") * 1024 ))
  echo "$um,$rss,$os"
}

now() { date +%s.%N; }
# The reply filter must not block-buffer its input (mawk does unless told otherwise).
LINE_AWK=(awk)
if awk -W version 2>&1 | grep -q mawk; then LINE_AWK=(awk -W interactive); fi

feed_one() {  # name
  local name=$1 sock pid csv=$OUT/$1.csv
  sock=$(eval echo "\$${name}_SOCK"); pid=$(eval echo "\$${name}_PID")
  local base; base=$(sample "$sock" "$pid")
  echo "date,elapsed_s,commands,inserts,errors,used_memory,used_memory_rss,os_rss" > "$csv"
  echo "start,0,0,0,0,$base" >> "$csv"
  local t0 tsample=0 prev=0 date end line cmds=0 ins=0 errs=0 ts te
  t0=$(now)
  if [ "$MODE" = reply ]; then
    local fin=$OUT/$name/in.fifo fout=$OUT/$name/out.fifo
    rm -f "$fin" "$fout"; mkfifo "$fin" "$fout"
    # redis-cli in its normal reply-per-command mode; awk counts replies and passes date marks on.
    ( stdbuf -oL "$CLI" -s "$sock" < "$fin" | "${LINE_AWK[@]}" -v errlog="$OUT/$name/errors.txt" '
        index($0, "lichess-date:") == 1 { print $0, n0 + n1 + ne, n1 + 0, ne + 0; fflush(); next }
        $0 == "1" { n1++; next }
        $0 == "0" { n0++; next }
        { ne++; if (ne <= 20) print > errlog }' > "$fout" ) &
    local cpid=$! fw fr
    exec {fw}>"$fin" {fr}<"$fout"
    while read -r date end; do
      dd if="$PAYLOAD" iflag=skip_bytes,count_bytes skip="$prev" count=$((end - prev)) bs=1M status=none >&"$fw"
      prev=$end
      read -r line cmds ins errs <&"$fr" || die "$name: redis-cli stopped (server died?)"
      ts=$(now)
      echo "${date},$(echo "$ts - $t0" | bc),$cmds,$ins,$errs,$(sample "$sock" "$pid")" >> "$csv"
      te=$(now); tsample=$(echo "$tsample + $te - $ts" | bc)
    done < "$INDEX"
    exec {fw}>&-
    wait "$cpid"
    exec {fr}<&-
  else
    local out r e
    while read -r date end; do
      out=$(dd if="$PAYLOAD" iflag=skip_bytes,count_bytes skip="$prev" count=$((end - prev)) bs=1M status=none \
            | "$CLI" -s "$sock" --pipe 2>&1) || { echo "$out" >&2; die "$name: redis-cli --pipe failed"; }
      prev=$end
      r=$(sed -n 's/.*errors: \([0-9]*\), replies: \([0-9]*\).*/\2/p' <<<"$out")
      e=$(sed -n 's/.*errors: \([0-9]*\), replies: \([0-9]*\).*/\1/p' <<<"$out")
      cmds=$((cmds + r - 1)); errs=$((errs + e))  # minus the date marker's ECHO
      ts=$(now)
      echo "${date},$(echo "$ts - $t0" | bc),$cmds,,$errs,$(sample "$sock" "$pid")" >> "$csv"
      te=$(now); tsample=$(echo "$tsample + $te - $ts" | bc)
    done < "$INDEX"
  fi
  local tend; tend=$(now)
  local total; total=$(echo "$tend - $t0" | bc)
  local final; final=$(sample "$sock" "$pid")
  echo "$name elapsed_s=$total feed_s=$(echo "$total - $tsample" | bc) sample_s=$tsample commands=$cmds inserts=${ins:-} errors=$errs start=$base final=$final" > "$OUT/$name.result"
  cat "$OUT/$name.result"
}

export_zset() {  # name -> OUT/name.zrange (member and score lines, rank order)
  local name=$1 sock n i step=100000
  sock=$(eval echo "\$${name}_SOCK")
  n=$("$CLI" -s "$sock" ZCARD "$KEY")
  : > "$OUT/$name.zrange"
  for ((i = 0; i < n; i += step)); do
    "$CLI" -s "$sock" ZRANGE "$KEY" "$i" $((i + step - 1)) WITHSCORES >> "$OUT/$name.zrange"
  done
  echo "$n"
}

echo "goblin: $GOBLIN_BIN   redis: $REDIS_BIN"
start_server goblin "$GOBLIN_BIN" "$GOBLIN_ARGS"
start_server redis "$REDIS_BIN" "$REDIS_ARGS"
if [ "$PARALLEL" = 1 ]; then
  feed_one goblin & fg=$!
  feed_one redis & fr_=$!
  wait $fg; wait $fr_
else
  feed_one goblin
  feed_one redis
fi

ng=$(export_zset goblin); nr=$(export_zset redis)
# Members compared as strings, scores as numbers (redis 7.0 prints 17 digits, 7.2 the shortest text).
check=$(paste -d '\t' "$OUT/goblin.zrange" "$OUT/redis.zrange" | awk -F '\t' -v key="$KEY" -v ng="$ng" -v nr="$nr" '
  { odd = (NR % 2 == 1)
    if (odd ? (($1 "") != ($2 "")) : (($1 + 0) != ($2 + 0))) {
      printf "zset check: goblin %c%s%c DIFFERS from redis at rank %d (%s): goblin %s, redis %s\n", 39, key, 39, int((NR - 1) / 2), odd ? "member" : "score", $1, $2
      bad = 1; exit
    } }
  END { if (!bad) { if (ng != nr) printf "zset check: goblin %c%s%c DIFFERS from redis: %d members vs %d\n", 39, key, 39, ng, nr
                    else printf "zset check: goblin %c%s%c MATCHES redis (%d members)\n", 39, key, 39, ng } }')
echo "$check"
{
  echo "scale=$SCALE mode=$MODE payload=$PAYLOAD dates=$NDATES parallel=$PARALLEL"
  echo "goblin_bin=$GOBLIN_BIN redis_bin=$REDIS_BIN"
  cat "$OUT/goblin.result" "$OUT/redis.result"
  echo "$check"
} > "$OUT/summary.txt"
# Ratios: growth over the empty server, and final OS RSS.
awk '
  { for (i = 1; i <= NF; i++) { split($i, kv, "="); v[$1, kv[1]] = kv[2] } }
  END {
    split(v["goblin", "start"], gs, ","); split(v["goblin", "final"], gf, ",")
    split(v["redis", "start"], rs, ","); split(v["redis", "final"], rf, ",")
    if (rf[3] > 0 && rf[1] - rs[1] > 0 && rf[3] - rs[3] > 0) {
      printf "final os_rss: goblin %.1f MB, redis %.1f MB, ratio %.3f\n", gf[3] / 1048576, rf[3] / 1048576, gf[3] / rf[3]
      printf "growth used_memory ratio %.3f, growth os_rss ratio %.3f\n", (gf[1] - gs[1]) / (rf[1] - rs[1]), (gf[3] - gs[3]) / (rf[3] - rs[3])
      printf "completion time ratio (elapsed) %.3f, (feed only) %.3f\n", v["goblin", "elapsed_s"] / v["redis", "elapsed_s"], v["goblin", "feed_s"] / v["redis", "feed_s"]
    }
  }' "$OUT/goblin.result" "$OUT/redis.result" | tee -a "$OUT/summary.txt"
echo "results in $OUT (plot: $HERE/plot $OUT/goblin.csv $OUT/redis.csv -o $OUT/memory.png)"
case "$check" in *MATCHES*) exit 0 ;; *) exit 1 ;; esac
