#!/usr/bin/env bash
# A cache under maxmemory: goblin-server against redis-server, the same run, as ratios.
#
#   bench/eviction.sh [--cpu C] [--rounds R] [--maxmemory SIZE] [--requests N] [--policy P]
#                     GOBLIN_BINARY [REDIS_BINARY]
#
# Each server starts on a Unix socket (persistence off) with --maxmemory SIZE (default 64mb)
# and --maxmemory-policy P (default allkeys-lru), pinned with redis-benchmark to CPU C.
# redis-benchmark then writes N (default 3000000) SETs of 16-byte values to keys drawn from
# 100M (-r 100000000, -c 1 -P 16), far more than fit, so the server evicts all along. Reported
# per server (medians of R rounds, alternating A B, B A, ...): SET requests/s, the keys it holds
# at the end, evicted_keys, used_memory, and goblin/redis for each. More keys under the same
# limit is the point: every key the cache keeps is a hit it can serve.
set -euo pipefail

CPU=1
ROUNDS=2
MAXMEMORY=64mb
REQUESTS=3000000
POLICY=allkeys-lru
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --cpu) CPU=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    --maxmemory) MAXMEMORY=$2; shift 2 ;;
    --requests) REQUESTS=$2; shift 2 ;;
    --policy) POLICY=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) args+=("$1"); shift ;;
  esac
done
[ ${#args[@]} -ge 1 ] || { echo "usage: $0 [options] GOBLIN_BINARY [REDIS_BINARY]" >&2; exit 2; }
GOBLIN=${args[0]}
REDIS=${args[1]:-/usr/bin/redis-server}
WORK=$(mktemp -d /tmp/goblin-eviction.XXXXXX)
PID=
cleanup() {
  [ -z "$PID" ] || kill "$PID" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

info_field() { redis-cli -s "$WORK/s.sock" info "$1" | tr -d '\r' | sed -n "s/^$2://p"; }

# One run: prints "rps keys evicted used_memory".
run() {
  local binary=$1
  rm -f "$WORK/s.sock"
  taskset -c "$CPU" "$binary" --port 0 --unixsocket "$WORK/s.sock" --save "" --appendonly no \
    --dir "$WORK" --maxmemory "$MAXMEMORY" --maxmemory-policy "$POLICY" >"$WORK/log" 2>&1 &
  PID=$!
  for _ in $(seq 200); do
    redis-cli -s "$WORK/s.sock" ping >/dev/null 2>&1 && break
    sleep 0.05
  done
  local rps
  rps=$(taskset -c "$CPU" redis-benchmark -s "$WORK/s.sock" -c 1 -P 16 -n "$REQUESTS" \
          -r 100000000 -d 16 -t set -q | tr '\r' '\n' | sed -n 's/^SET: \([0-9.]*\) requests per second.*/\1/p' | tail -1)
  echo "$rps $(redis-cli -s "$WORK/s.sock" dbsize) $(info_field stats evicted_keys) $(info_field memory used_memory)"
  redis-cli -s "$WORK/s.sock" shutdown nosave >/dev/null 2>&1 || true
  wait "$PID" 2>/dev/null || true
  PID=
}

median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

declare -A R
for round in $(seq "$ROUNDS"); do
  order="goblin redis"
  [ $((round % 2)) = 0 ] && order="redis goblin"
  for who in $order; do
    [ "$who" = goblin ] && bin=$GOBLIN || bin=$REDIS
    line=$(run "$bin")
    echo "round $round $who: rps keys evicted used_memory = $line" >&2
    R[$who]+="$line"$'\n'
  done
done

echo "# $0 ${args[*]} --maxmemory $MAXMEMORY --policy $POLICY --requests $REQUESTS --rounds $ROUNDS --cpu $CPU  ($(date -u '+%Y-%m-%d %H:%M UTC'))"
printf '| | goblin | redis | goblin/redis |\n|---|---:|---:|---:|\n'
for col in 1 2 3 4; do
  name=$(echo "SET requests/s|keys held at the end|evicted_keys|used_memory" | cut -d'|' -f"$col")
  g=$(printf '%s' "${R[goblin]}" | awk -v c="$col" 'NF {print $c}' | median)
  r=$(printf '%s' "${R[redis]}" | awk -v c="$col" 'NF {print $c}' | median)
  ratio=$(awk -v g="$g" -v r="$r" 'BEGIN {printf (r > 0 ? "%.2f" : "n/a"), (r > 0 ? g / r : 0)}')
  printf '| %s | %.0f | %.0f | %s |\n' "$name" "$g" "$r" "$ratio"
done
