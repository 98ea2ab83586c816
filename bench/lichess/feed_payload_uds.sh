#!/usr/bin/env bash
# Lichess leaderboard replay: feed one chronological ZADD payload into goblin-server and
# redis-server, each on its own Unix socket with persistence off, sampling memory at every date
# boundary, then compare the final leaderboards.  See bench/lichess/README.md.
#
#   feed_payload_uds.sh [--scale tiny|small|full-population] [--mode reply|pipelined]
#                       [--window N] [--payload FILE | --stream] [--goblin BIN] [--redis BIN]
#                       [--out DIR] [--seed N] [--parallel] [--cpu N] [--redis-args "..."]
#                       [--goblin-args "..."] [--tools DIR] [--only goblin|redis --against DIR]
#
# The client is bench/lichess/feed (built on demand into --tools, default OUT/tools, with synth).
# --payload FILE: a payload from synth/pgn2events (`--format resp` or `--format cmd`). Without it
# the scale's synth trace is generated into OUT/payload.resp; --stream instead pipes a fresh synth
# run (same seed) into each server's feed, so no payload touches the disk.
# Output in OUT (default /tmp/lichess-feed-<scale>-<mode>): goblin.csv, redis.csv (one row per date:
# date,elapsed_s,commands,inserts,errors,used_memory,used_memory_rss,os_rss), goblin.result /
# redis.result, summary.txt, goblin.zrange / redis.zrange, and the servers' and feeds' logs.
# --only NAME --against DIR: feed only NAME and compare with the other server's files from an
# earlier run's OUT (DIR), e.g. a new goblin build against a redis run that took an hour.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
SCALE=tiny
MODE=
WINDOW=
PAYLOAD=
STREAM=0
GOBLIN_BIN=${GOBLIN_SERVER:-$REPO/build/goblin-server}
REDIS_BIN=/usr/bin/redis-server
CLI=${REDIS_CLI:-redis-cli}
OUT=
SEED=1
PARALLEL=0
PIN=()   # --cpu N: servers and feeder pinned to one CPU (taskset), as bench/README.md asks
REDIS_ARGS=
GOBLIN_ARGS=
KEY=leaderboard
TOOLS=${LICHESS_TOOLS:-}   # directory holding feed and synth (built on demand)
ONLY=
AGAINST=

die() { echo "feed_payload_uds.sh: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --scale) SCALE=$2; shift 2 ;;
    --mode) MODE=$2; shift 2 ;;
    --pipelined) MODE=pipelined; shift ;;
    --window) WINDOW=$2; shift 2 ;;
    --payload) PAYLOAD=$2; shift 2 ;;
    --stream) STREAM=1; shift ;;
    --goblin) GOBLIN_BIN=$2; shift 2 ;;
    --redis) REDIS_BIN=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --seed) SEED=$2; shift 2 ;;
    --parallel) PARALLEL=1; shift ;;
    --redis-args) REDIS_ARGS=$2; shift 2 ;;
    --goblin-args) GOBLIN_ARGS=$2; shift 2 ;;
    --tools) TOOLS=$2; shift 2 ;;
    --cpu) PIN=(taskset -c "$2"); shift 2 ;;
    --only) ONLY=$2; shift 2 ;;
    --against) AGAINST=$2; shift 2 ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
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
[ -z "$WINDOW" ] || [ "$WINDOW" -gt 0 ] 2>/dev/null || die "--window wants a positive number"
[ "$STREAM" = 0 ] || [ -z "$PAYLOAD" ] || die "--stream and --payload exclude each other"
case "$ONLY" in
  '') [ -z "$AGAINST" ] || die "--against needs --only" ;;
  goblin|redis)
    OTHER=redis; [ "$ONLY" = redis ] && OTHER=goblin
    for f in "$OTHER.csv" "$OTHER.result" "$OTHER.zrange"; do
      [ -r "$AGAINST/$f" ] || die "--against $AGAINST: no $f from an earlier run"
    done ;;
  *) die "--only wants goblin or redis" ;;
esac

# ---- tools and payload ---------------------------------------------------------------------------
TOOLS=${TOOLS:-$OUT/tools}
mkdir -p "$TOOLS"
TOOLS=$(cd "$TOOLS" && pwd)
make -s -C "$HERE" OUT="$TOOLS" "$TOOLS/feed" "$TOOLS/synth" >/dev/null
SYNTH=("$TOOLS/synth" --players "$PLAYERS" --updates "$UPDATES" --days "$DAYS" --seed "$SEED" --format resp)
if [ "$STREAM" = 1 ]; then
  PAYLOAD="stream: ${SYNTH[*]#"$TOOLS/"} -o -"
  echo "payload streamed from synth for each server (--players $PLAYERS --updates $UPDATES --days $DAYS --seed $SEED), mode $MODE"
else
  if [ -z "$PAYLOAD" ]; then
    PAYLOAD=$OUT/payload.resp
    echo "generating $SCALE trace: synth --players $PLAYERS --updates $UPDATES --days $DAYS --seed $SEED --format resp"
    t0=$(date +%s.%N)
    "${SYNTH[@]}" -o "$PAYLOAD"
    echo "synth took $(echo "$(date +%s.%N) - $t0" | bc) s"
  fi
  [ -r "$PAYLOAD" ] || die "cannot read payload $PAYLOAD"
  PFMT=cmd; [ "$(head -c 1 "$PAYLOAD")" = '*' ] && PFMT=resp
  echo "payload: $PAYLOAD ($PFMT, $(stat -c %s "$PAYLOAD") bytes), mode $MODE"
fi

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
  "${PIN[@]}" "$bin" --port 0 --unixsocket "$sock" --save '' --appendonly no --dir "$dir" $extra >"$dir/server.log" 2>&1 &
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

feed_one() {  # name -> OUT/name.csv, OUT/name.result
  local name=$1 sock pid res log=$OUT/$1/feed.log
  sock=$(eval echo "\$${name}_SOCK"); pid=$(eval echo "\$${name}_PID")
  local args=(--socket "$sock" --pid "$pid" --mode "$MODE" --csv "$OUT/$name.csv")
  [ -n "$WINDOW" ] && args+=(--window "$WINDOW")
  if [ "$STREAM" = 1 ]; then
    res=$("${SYNTH[@]}" --quiet -o - | "${PIN[@]}" "$TOOLS/feed" "${args[@]}" 2>"$log") \
      || { cat "$log" >&2; die "$name: feed failed (or synth did)"; }
  else
    res=$("${PIN[@]}" "$TOOLS/feed" "${args[@]}" --payload "$PAYLOAD" 2>"$log") \
      || { cat "$log" >&2; die "$name: feed failed"; }
  fi
  # feed's stderr holds only the first error replies when it succeeds.
  [ -s "$log" ] && sed "s/^/$name: /" "$log" >&2
  echo "$name $res" > "$OUT/$name.result"
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
if [ -n "$ONLY" ]; then
  echo "only $ONLY; $OTHER's side from $AGAINST"
  [ "$ONLY" = goblin ] && start_server goblin "$GOBLIN_BIN" "$GOBLIN_ARGS"
  [ "$ONLY" = redis ] && start_server redis "$REDIS_BIN" "$REDIS_ARGS"
  feed_one "$ONLY"
  cp "$AGAINST/$OTHER.csv" "$AGAINST/$OTHER.result" "$AGAINST/$OTHER.zrange" "$OUT/"
elif [ "$PARALLEL" = 1 ]; then
  start_server goblin "$GOBLIN_BIN" "$GOBLIN_ARGS"
  start_server redis "$REDIS_BIN" "$REDIS_ARGS"
  feed_one goblin & fg=$!
  feed_one redis & fr_=$!
  wait $fg; wait $fr_
else
  start_server goblin "$GOBLIN_BIN" "$GOBLIN_ARGS"
  start_server redis "$REDIS_BIN" "$REDIS_ARGS"
  feed_one goblin
  feed_one redis
fi

NDATES=$(( $(wc -l < "$OUT/goblin.csv") - 2 ))
[ "$NDATES" = $(( $(wc -l < "$OUT/redis.csv") - 2 )) ] || echo "warning: goblin.csv and redis.csv have different numbers of dates" >&2
count_lines() { echo $(( $(wc -l < "$1") / 2 )); }
if [ "$ONLY" = goblin ]; then
  ng=$(export_zset goblin); nr=$(count_lines "$OUT/redis.zrange")
elif [ "$ONLY" = redis ]; then
  ng=$(count_lines "$OUT/goblin.zrange"); nr=$(export_zset redis)
else
  ng=$(export_zset goblin); nr=$(export_zset redis)
fi
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
  echo "scale=$SCALE mode=$MODE${WINDOW:+ window=$WINDOW} payload=$PAYLOAD dates=$NDATES parallel=$PARALLEL${ONLY:+ only=$ONLY against=$AGAINST}"
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
      if (v["redis", "server_cpu_s"] > 0)
        printf "server CPU seconds: goblin %.2f, redis %.2f, ratio %.3f\n", v["goblin", "server_cpu_s"], v["redis", "server_cpu_s"], v["goblin", "server_cpu_s"] / v["redis", "server_cpu_s"]
    }
  }' "$OUT/goblin.result" "$OUT/redis.result" | tee -a "$OUT/summary.txt"
echo "results in $OUT (plot: $HERE/plot $OUT/goblin.csv $OUT/redis.csv -o $OUT/memory.png)"
case "$check" in *MATCHES*) exit 0 ;; *) exit 1 ;; esac
