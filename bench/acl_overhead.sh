#!/usr/bin/env bash
# What the ACL permission check costs on the command path, for goblin-server and for
# redis-server in the same run: requests/s of a restricted user (`~key:* ~counter:* ~bench:*
# +@all`: every command, only the benchmark's keys, checked key by key) over those of the
# default user (which may run everything), per server, command and mode.
#
#   bench/acl_overhead.sh [--rounds R] [--modes 1x16,50x1] [--cpu C] GOBLIN_BINARY [REDIS_BINARY]
#   bench/acl_overhead.sh --callgrind N GOBLIN_BINARY [REDIS_BINARY]
#
# Each server runs alone on a Unix socket, pinned with redis-benchmark to one CPU; 1M string
# keys are preloaded. Per command and mode the two users alternate D R R D ... (ROUNDS runs
# each) and the medians are compared. A ratio of 1.00 means the check costs nothing
# measurable; the target is >= 0.98.
#
# With --callgrind N each server runs under valgrind's callgrind instead, and for each command
# N requests (-c 1 -P 16) are counted in instructions executed by the server, per request,
# for each user (D R R D, averaged): the difference is the check's cost, free of the machine's
# noise.
set -euo pipefail

ROUNDS=${ROUNDS:-4}
MODES=${MODES:-1x16,50x1}
CPU=${CPU:-1}
CALLGRIND=0
N_PIPE=${N_PIPE:-1000000}
N_CONC=${N_CONC:-200000}
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) ROUNDS=$2; shift 2 ;;
    --modes) MODES=$2; shift 2 ;;
    --cpu) CPU=$2; shift 2 ;;
    --callgrind) CALLGRIND=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) args+=("$1"); shift ;;
  esac
done
[ ${#args[@]} -ge 1 ] || { echo "usage: $0 GOBLIN_BINARY [REDIS_BINARY]" >&2; exit 2; }
GOBLIN=${args[0]}
REDIS=${args[1]:-/usr/bin/redis-server}

V16=vvvvvvvvvvvvvvvv
declare -A CMD=(
  [SET]="SET key:__rand_int__ $V16"
  [GET]="GET key:__rand_int__"
  [INCR]="INCR counter:__rand_int__"
  [HSET]="HSET bench:hash f:__rand_int__ $V16"
  [ZADD]="ZADD bench:zset __rand_int__ m:__rand_int__"
  [MGET]="MGET key:__rand_int__ key:__rand_int__ key:__rand_int__"
)
ORDER=(SET GET INCR HSET ZADD MGET)

WORK=$(mktemp -d /tmp/goblin-acl-overhead.XXXXXX)
PID=""
cleanup() { [ -n "$PID" ] && kill "$PID" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT

# Starts server $1 (goblin or redis) under the launcher words that follow (taskset, valgrind),
# waits for it, and creates the restricted user; sets SOCK and PID.
start() {
  local server=$1 bin=$GOBLIN; shift
  [ "$server" = redis ] && bin=$REDIS
  SOCK="$WORK/$server.sock"
  mkdir -p "$WORK/$server"
  "$@" "$bin" --port 0 --unixsocket "$SOCK" --save '' --appendonly no --dir "$WORK/$server" \
    >"$WORK/$server.log" 2>&1 </dev/null &
  PID=$!
  for _ in $(seq 600); do [ "$(redis-cli -s "$SOCK" PING 2>/dev/null)" = PONG ] && break; sleep 0.1; done
  redis-cli -s "$SOCK" ACL SETUSER bench on '>bench' '~key:*' '~counter:*' '~bench:*' +@all >/dev/null
}

# Instructions per request the server executes for N requests of one command as one user.
instructions() { # sock pid user command...
  local sock=$1 pid=$2 user=$3 auth=(); shift 3
  [ "$user" = restricted ] && auth=(--user bench -a bench)
  callgrind_control -z "$pid" >/dev/null 2>&1 && callgrind_control -i on "$pid" >/dev/null 2>&1
  redis-benchmark -s "$sock" "${auth[@]}" -c 1 -P 16 -n "$CALLGRIND" -r 1000000 -q "$@" >/dev/null 2>&1
  callgrind_control -i off "$pid" >/dev/null 2>&1 && callgrind_control -d "$pid" >/dev/null 2>&1
  awk -v n="$CALLGRIND" '/^totals:/ { print int($2 / n) }' "$(ls -t "$WORK"/callgrind.out* | head -1)"
}

if [ "$CALLGRIND" != 0 ]; then
  echo "| server | command | default instructions/request | restricted | difference |"
  echo "|---|---|---:|---:|---:|"
  for server in goblin redis; do
    start "$server" valgrind --tool=callgrind --instr-atstart=no \
      --callgrind-out-file="$WORK/callgrind.out"
    sock=$SOCK
    for name in "${ORDER[@]}"; do
      read -r -a words <<<"${CMD[$name]}"
      d1=$(instructions "$sock" "$PID" default "${words[@]}")
      r1=$(instructions "$sock" "$PID" restricted "${words[@]}")
      r2=$(instructions "$sock" "$PID" restricted "${words[@]}")
      d2=$(instructions "$sock" "$PID" default "${words[@]}")
      d=$(((d1 + d2) / 2)) r=$(((r1 + r2) / 2))
      echo "| $server | $name | $d | $r | +$((r - d)) ($(awk -v d="$d" -v r="$r" 'BEGIN { printf "%.1f%%", 100 * (r - d) / d }')) |"
    done
    kill "$PID"; wait "$PID" 2>/dev/null || true; PID=""
  done
  exit 0
fi

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

run() { # sock clients pipeline user command... -> requests/s
  local sock=$1 c=$2 p=$3 user=$4; shift 4
  local n=$N_PIPE auth=()
  [ "$p" = 1 ] && n=$N_CONC
  [ "$user" = restricted ] && auth=(--user bench -a bench)
  taskset -c "$CPU" redis-benchmark -s "$sock" "${auth[@]}" -c "$c" -P "$p" -n "$n" -r 1000000 -q \
    "$@" 2>/dev/null | tr '\r' '\n' | awk '/requests per second/ { v = $(NF-5) } END { print v + 0 }'
}

echo "| server | mode | command | default req/s | restricted req/s | restricted/default |"
echo "|---|---|---|---:|---:|---:|"
for server in goblin redis; do
  start "$server" taskset -c "$CPU"
  sock=$SOCK
  redis-benchmark -s "$sock" -P 100 -n 2000000 -r 1000000 -q SET key:__rand_int__ $V16 >/dev/null 2>&1
  IFS=, read -r -a mode_list <<<"$MODES"
  for mode in "${mode_list[@]}"; do
    c=${mode%x*} p=${mode#*x}
    for name in "${ORDER[@]}"; do
      read -r -a words <<<"${CMD[$name]}"
      : >"$WORK/default" ; : >"$WORK/restricted"
      for ((i = 0; i < ROUNDS; i++)); do
        if ((i % 2 == 0)); then order=(default restricted); else order=(restricted default); fi
        for user in "${order[@]}"; do run "$sock" "$c" "$p" "$user" "${words[@]}" >>"$WORK/$user"; done
      done
      d=$(median <"$WORK/default") r=$(median <"$WORK/restricted")
      awk -v s="$server" -v m="-c $c -P $p" -v n="$name" -v d="$d" -v r="$r" \
        'BEGIN { printf "| %s | %s | %s | %.0f | %.0f | %.3f |\n", s, m, n, d, r, (d > 0 ? r / d : 0) }'
    done
  done
  kill "$PID"; wait "$PID" 2>/dev/null || true; PID=""
done
