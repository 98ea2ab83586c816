#!/usr/bin/env bash
# Requests per second over TLS, goblin-server against redis-server in the same run.
#
#   bench/tls_throughput.sh [--rounds R] [--modes 1x16,50x1] [--cpu C] GOBLIN_BINARY [REDIS_BINARY]
#
# A CA, a server and a client certificate are made with openssl in a temporary directory; each
# server listens on tls-port only (mutual TLS, as Redis defaults), pinned with redis-benchmark
# --tls to one CPU. Per command and mode the servers alternate A B B A (ROUNDS runs each) and the
# medians are compared.
set -euo pipefail

ROUNDS=${ROUNDS:-4}
MODES=${MODES:-1x16,50x1}
CPU=${CPU:-1}
N_PIPE=${N_PIPE:-500000}
N_CONC=${N_CONC:-100000}
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) ROUNDS=$2; shift 2 ;;
    --modes) MODES=$2; shift 2 ;;
    --cpu) CPU=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) args+=("$1"); shift ;;
  esac
done
[ ${#args[@]} -ge 1 ] || { echo "usage: $0 GOBLIN_BINARY [REDIS_BINARY]" >&2; exit 2; }
# Absolute paths (the run works in its own directory), symbolic links kept: Debian's
# redis-server is a link whose name says what the binary is to be.
absolute() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
GOBLIN=$(absolute "${args[0]}")
REDIS=$(absolute "${args[1]:-/usr/bin/redis-server}")

WORK=$(mktemp -d /tmp/goblin-tls-bench.XXXXXX)
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT

cd "$WORK"
openssl genrsa -out ca.key 2048 2>/dev/null
openssl req -x509 -new -nodes -sha256 -key ca.key -days 2 -subj "/CN=bench-ca" -out ca.crt 2>/dev/null
for name in server client; do
  openssl genrsa -out $name.key 2048 2>/dev/null
  openssl req -new -sha256 -subj "/CN=$name" -key $name.key |
    openssl x509 -req -sha256 -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 -out $name.crt 2>/dev/null
done
TLS_CLIENT=(--tls --cert "$WORK/client.crt" --key "$WORK/client.key" --cacert "$WORK/ca.crt")

declare -A PORT
port=$((20000 + RANDOM % 20000))
for server in goblin redis; do
  bin=$GOBLIN; [ "$server" = redis ] && bin=$REDIS
  PORT[$server]=$port
  mkdir -p "$WORK/$server"
  taskset -c "$CPU" "$bin" --port 0 --tls-port "$port" --tls-cert-file "$WORK/server.crt" \
    --tls-key-file "$WORK/server.key" --tls-ca-cert-file "$WORK/ca.crt" --save '' \
    --appendonly no --dir "$WORK/$server" >"$WORK/$server.log" 2>&1 </dev/null &
  PIDS+=($!)
  ready=0
  for _ in $(seq 200); do
    [ "$(redis-cli -p "$port" "${TLS_CLIENT[@]}" PING 2>/dev/null)" = PONG ] && { ready=1; break; }
    sleep 0.05
  done
  [ "$ready" = 1 ] || { echo "$bin did not answer over TLS:" >&2; tail -5 "$WORK/$server.log" >&2; exit 1; }
  redis-benchmark -p "$port" "${TLS_CLIENT[@]}" -P 100 -n 200000 -r 100000 -q -t set,lpush >/dev/null 2>&1
  port=$((port + 1))
done

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
run() { # server clients pipeline test
  local n=$N_PIPE
  [ "$3" = 1 ] && n=$N_CONC
  taskset -c "$CPU" redis-benchmark -p "${PORT[$1]}" "${TLS_CLIENT[@]}" -c "$2" -P "$3" -n "$n" -r 100000 \
    -q -t "$4" 2>/dev/null | tr '\r' '\n' | awk '/requests per second/ { v = $(NF-5) } END { print v + 0 }'
}

echo "| mode | command | goblin req/s | redis req/s | goblin/redis |"
echo "|---|---|---:|---:|---:|"
IFS=, read -r -a mode_list <<<"$MODES"
for mode in "${mode_list[@]}"; do
  c=${mode%x*} p=${mode#*x}
  for test in set get lrange_100; do
    : >"$WORK/goblin.rates"; : >"$WORK/redis.rates"
    for ((i = 0; i < ROUNDS; i++)); do
      if ((i % 2 == 0)); then order=(goblin redis); else order=(redis goblin); fi
      for server in "${order[@]}"; do run "$server" "$c" "$p" "$test" >>"$WORK/$server.rates"; done
    done
    g=$(median <"$WORK/goblin.rates") r=$(median <"$WORK/redis.rates")
    awk -v m="-c $c -P $p" -v t="$test" -v g="$g" -v r="$r" \
      'BEGIN { printf "| %s | %s | %.0f | %.0f | %.2f |\n", m, toupper(t), g, r, (r > 0 ? g / r : 0) }'
  done
done
