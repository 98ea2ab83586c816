#!/usr/bin/env bash
# Throughput of goblin-server against redis-server, the same run, as a ratio.
#
#   bench/throughput.sh [options] GOBLIN_BINARY [REDIS_BINARY]
#
# Both servers start on Unix sockets (persistence off), pinned with the
# benchmark client to one CPU (taskset -c $CPU).  Each gets the same 1M-element
# preload: strings key:%012d, zset bench:zset, hash bench:hash, set bench:set,
# whose member names match redis-benchmark's __rand_int__ expansion with
# -r 1000000 (12 digits), so reads hit.  Then, for each mode (-c 1 -P 16 and
# -c 50 -P 1) and each command, redis-benchmark runs ROUNDS times per server,
# alternating A B, B A, A B, ... (the first run of a pair is penalised up to 9%),
# and the median requests/s per server and goblin/redis are reported.
# Commands a server does not know are n/a.  See bench/README.md.
#
# Options (or environment variables of the same name):
#   --rounds R        runs per server per command and mode (ROUNDS, default 4)
#   --commands LIST   comma-separated subset of: PING,SET,GET,INCR,ZADD,ZSCORE,
#                     ZRANK,HSET,HGET,SADD,SISMEMBER (COMMANDS, default these), and
#                     APPEND (one key growing to N x 16 bytes), SETBIT (bit 1,000,000 of one
#                     key: __rand_int__'s zero padding is not a valid bit offset),
#                     PUBLISH (a channel nobody listens to), LPUSH,RPUSH,LPOP,RPOP,LRANGE_100
#                     (one list preloaded with 1M elements; give pushes before pops, so the
#                     pops never drain it), XADD (auto ids), XRANGE_10 (COUNT 10 from the middle
#                     of one stream preloaded with 1M entries), BITFIELD_INCRBY, BITFIELD_GET (a u8
#                     counter at #0 of one of 1M preloaded 1-byte strings bf:%012d: __rand_int__'s
#                     zero padding is not a valid offset, so the key is the random part), PFADD
#                     (one HyperLogLog preloaded with the 1M members m:%012d, so an add mostly
#                     changes no register), PFCOUNT (of that key, whose cardinality is then
#                     cached), GEOADD (new members g:* at 13.<rand> 38.<rand>, outside the
#                     preloaded area) and GEOSEARCH_100 (BYRADIUS 6.26 km around 5,5 in a geo set
#                     of 1M members spread uniformly over longitude and latitude [0, 10): about
#                     100 results)
#   --modes LIST      comma-separated CxP, e.g. 1x16,50x1 (MODES, default that)
#   --requests N      requests per run with pipelining (N_PIPE, default 1000000);
#                     runs without pipelining use N_CONC (default 200000)
#   --cpu C           the CPU for servers and client (CPU, default 1)
#   --markdown        print a markdown table for docs/BENCHMARKS.md
set -euo pipefail
set -f  # commands are split into words unquoted (XADD ... * ...): no filename globbing

ROUNDS=${ROUNDS:-4}
COMMANDS=${COMMANDS:-PING,SET,GET,INCR,ZADD,ZSCORE,ZRANK,HSET,HGET,SADD,SISMEMBER}
MODES=${MODES:-1x16,50x1}
N_PIPE=${N_PIPE:-1000000}
N_CONC=${N_CONC:-200000}
CPU=${CPU:-1}
KEYSPACE=1000000
MARKDOWN=0
PY=${PY:-/usr/bin/python3}
CMDLINE="$0 $*"

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit "${1:-2}"; }

args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) ROUNDS=$2; shift 2 ;;
    --commands) COMMANDS=$2; shift 2 ;;
    --modes) MODES=$2; shift 2 ;;
    --requests) N_PIPE=$2; shift 2 ;;
    --cpu) CPU=$2; shift 2 ;;
    --markdown) MARKDOWN=1; shift ;;
    -h|--help) usage 0 ;;
    -*) echo "unknown option $1" >&2; usage ;;
    *) args+=("$1"); shift ;;
  esac
done
if [ ${#args[@]} -lt 1 ] || [ ${#args[@]} -gt 2 ]; then usage; fi
GOBLIN=${args[0]}
REDIS=${args[1]:-/usr/bin/redis-server}
for b in "$GOBLIN" "$REDIS"; do
  [ -x "$b" ] || { echo "not an executable: $b" >&2; exit 2; }
done
for t in redis-benchmark redis-cli taskset "$PY"; do
  command -v "$t" >/dev/null || { echo "missing tool: $t (apt-get install redis-tools util-linux python3)" >&2; exit 2; }
done

# Progress goes to stderr in markdown mode so stdout is only the table.
log() { if [ "$MARKDOWN" = 1 ]; then echo "$*" >&2; else echo "$*"; fi; }

declare -A CMD
V16=vvvvvvvvvvvvvvvv
CMD[PING]="PING"
CMD[SET]="SET key:__rand_int__ $V16"
CMD[GET]="GET key:__rand_int__"
CMD[INCR]="INCR counter:__rand_int__"
CMD[ZADD]="ZADD bench:zset __rand_int__ m:__rand_int__"
CMD[ZSCORE]="ZSCORE bench:zset m:__rand_int__"
CMD[ZRANK]="ZRANK bench:zset m:__rand_int__"
CMD[HSET]="HSET bench:hash f:__rand_int__ $V16"
CMD[HGET]="HGET bench:hash f:__rand_int__"
CMD[SADD]="SADD bench:set m:__rand_int__"
CMD[SISMEMBER]="SISMEMBER bench:set m:__rand_int__"
CMD[APPEND]="APPEND bench:log $V16"
CMD[SETBIT]="SETBIT bench:bits 1000000 1"
CMD[PUBLISH]="PUBLISH bench:channel $V16"
CMD[LPUSH]="LPUSH bench:list $V16"
CMD[RPUSH]="RPUSH bench:list $V16"
CMD[LPOP]="LPOP bench:list"
CMD[RPOP]="RPOP bench:list"
CMD[LRANGE_100]="LRANGE bench:list 0 99"
CMD[XADD]="XADD bench:stream * f $V16"
CMD[XRANGE_10]="XRANGE bench:stream 500000 + COUNT 10"
CMD[BITFIELD_INCRBY]="BITFIELD bf:__rand_int__ INCRBY u8 #0 1"
CMD[BITFIELD_GET]="BITFIELD bf:__rand_int__ GET u8 #0"
CMD[PFADD]="PFADD bench:hll m:__rand_int__"
CMD[PFCOUNT]="PFCOUNT bench:hll"
CMD[GEOADD]="GEOADD bench:geo 13.__rand_int__ 38.__rand_int__ g:__rand_int__"
CMD[GEOSEARCH_100]="GEOSEARCH bench:geo FROMLONLAT 5 5 BYRADIUS 6.26 km"
# The preload each command reads (the writes run over it too, as updates).
declare -A NEEDS=([GET]=string [SET]=string [ZADD]=zset [ZSCORE]=zset [ZRANK]=zset
                  [HSET]=hash [HGET]=hash [SADD]=set [SISMEMBER]=set
                  [LPUSH]=list [RPUSH]=list [LPOP]=list [RPOP]=list [LRANGE_100]=list
                  [XADD]=stream [XRANGE_10]=stream [BITFIELD_INCRBY]=bitfield [BITFIELD_GET]=bitfield
                  [PFADD]=hll [PFCOUNT]=hll [GEOADD]=geo [GEOSEARCH_100]=geo)

IFS=, read -r -a CMDS <<<"$COMMANDS"
IFS=, read -r -a MODE_LIST <<<"$MODES"
for c in "${CMDS[@]}"; do
  [ -n "${CMD[$c]:-}" ] || { echo "unknown command $c (known: ${!CMD[*]})" >&2; exit 2; }
done
# Only the collections the chosen commands read are preloaded; strings first, since their
# check is DBSIZE, which would count the collections' keys too.
KINDS=$(for c in "${CMDS[@]}"; do [ -n "${NEEDS[$c]:-}" ] && echo "${NEEDS[$c]}"; done | sort -u |
        awk '$0 == "string" { print; next } { rest = rest $0 "\n" } END { printf "%s", rest }' | paste -sd,)
KINDS=${KINDS:-string}

WORK=$(mktemp -d /tmp/goblin-throughput.XXXXXX)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The preloader: seeded RESP streamed over the socket, replies counted.  Prints
# "<kind> ok <count>" or "<kind> n/a <reason>" per collection.
cat >"$WORK/preload.py" <<'EOF'
import random, socket, sys, threading
path, n = sys.argv[1], int(sys.argv[2])
kinds = sys.argv[3].split(",")
B = 1000
def bulk(b): return b"$%d\r\n%s\r\n" % (len(b), b)
def gen(kind):
    rng = random.Random(7)
    for s in range(0, n, B):
        r = range(s, min(n, s + B))
        if kind == "string":
            yield b"*%d\r\n$4\r\nMSET\r\n" % (1 + 2 * len(r)) + b"".join(
                b"$16\r\nkey:%012d\r\n$16\r\nvvvvvvvvvvvvvvvv\r\n" % i for i in r)
        elif kind == "zset":
            yield b"*%d\r\n$4\r\nZADD\r\n$10\r\nbench:zset\r\n" % (2 + 2 * len(r)) + b"".join(
                bulk(b"%d" % rng.randrange(n)) + b"$14\r\nm:%012d\r\n" % i for i in r)
        elif kind == "hash":
            yield b"*%d\r\n$4\r\nHSET\r\n$10\r\nbench:hash\r\n" % (2 + 2 * len(r)) + b"".join(
                b"$14\r\nf:%012d\r\n$16\r\nvvvvvvvvvvvvvvvv\r\n" % i for i in r)
        elif kind == "set":
            yield b"*%d\r\n$4\r\nSADD\r\n$9\r\nbench:set\r\n" % (2 + len(r)) + b"".join(
                b"$14\r\nm:%012d\r\n" % i for i in r)
        elif kind == "list":
            yield b"*%d\r\n$5\r\nRPUSH\r\n$10\r\nbench:list\r\n" % (2 + len(r)) + b"".join(
                b"$16\r\nvvvvvvvvvvvvvvvv\r\n" for i in r)
        elif kind == "geo":  # uniform over longitude and latitude [0, 10), 6 decimals
            yield b"*%d\r\n$6\r\nGEOADD\r\n$9\r\nbench:geo\r\n" % (2 + 3 * len(r)) + b"".join(
                bulk(b"%.6f" % (rng.randrange(10000000) / 1e6)) + bulk(b"%.6f" % (rng.randrange(10000000) / 1e6)) +
                b"$14\r\nm:%012d\r\n" % i for i in r)
        elif kind == "bitfield":  # 1-byte strings, the u8 counters BITFIELD_* update and read
            yield b"*%d\r\n$4\r\nMSET\r\n" % (1 + 2 * len(r)) + b"".join(
                b"$15\r\nbf:%012d\r\n$1\r\n\x01\r\n" % i for i in r)
        elif kind == "hll":
            yield b"*%d\r\n$5\r\nPFADD\r\n$9\r\nbench:hll\r\n" % (2 + len(r)) + b"".join(
                b"$14\r\nm:%012d\r\n" % i for i in r)
        elif kind == "stream":  # one XADD per entry (one reply each), ids 1-0 .. n-0
            for i in r:
                entry_id = b"%d-0" % (i + 1)
                yield b"*5\r\n$4\r\nXADD\r\n$12\r\nbench:stream\r\n" + bulk(entry_id) + \
                    b"$1\r\nf\r\n$16\r\nvvvvvvvvvvvvvvvv\r\n"
COUNT = {"string": b"DBSIZE", "zset": b"ZCARD bench:zset", "hash": b"HLEN bench:hash", "set": b"SCARD bench:set",
         "list": b"LLEN bench:list", "stream": b"XLEN bench:stream", "bitfield": b"EXISTS bf:%012d" % (n - 1),
         "hll": b"PFCOUNT bench:hll", "geo": b"ZCARD bench:geo"}
EXPECTED = {"bitfield": b":1"}  # the last key exists; DBSIZE would count the string preload too
sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
sock.connect(path)
buf = b""
in_bulk = False  # the next line is a bulk reply's payload (XADD's id)
def replies(k):
    """Read k replies, each one line (:n, +OK or -ERR) or a short bulk string; return the
    error lines."""
    global buf, in_bulk
    errs = []
    while k > 0:
        if b"\r\n" not in buf:
            d = sock.recv(1 << 20)
            if not d:
                raise SystemExit("server closed the connection")
            buf += d
            continue
        parts = buf.split(b"\r\n")
        buf = parts.pop()
        for x in parts:
            if in_bulk:
                in_bulk = False
                continue
            if x.startswith(b"-"):
                errs.append(x)
            elif x.startswith(b"$") and x != b"$-1":
                in_bulk = True
            k -= 1
    return errs
def count(kind):
    global buf
    sock.sendall(b"*%d\r\n" % len(COUNT[kind].split()) + b"".join(bulk(a) for a in COUNT[kind].split()))
    while b"\r\n" not in buf:
        buf += sock.recv(1 << 16)
    line, buf = buf.split(b"\r\n", 1)
    return line
for kind in kinds:
    cmds = list(gen(kind))
    sock.sendall(cmds[0])  # alone, so an unknown command is seen before the stream
    e = replies(1)
    if e:
        print(kind, "n/a", e[0][1:].decode(errors="replace").split(", with args")[0], flush=True)
        continue
    t = threading.Thread(target=lambda: [sock.sendall(c) for c in cmds[1:]], daemon=True)
    t.start()
    e = replies(len(cmds) - 1)
    t.join()
    c = count(kind)
    if e:
        print(kind, "n/a", "%d errors, first: %s" % (len(e), e[0][1:].decode(errors="replace")[:60]), flush=True)
    elif kind == "hll" and not (c.startswith(b":") and abs(int(c[1:]) - n) <= 0.02 * n):
        print(kind, "n/a", "estimates %r after preload, expected %d within 2%%" % (c, n), flush=True)
    elif kind != "hll" and not c.startswith(b"-") and c != EXPECTED.get(kind, b":%d" % n):  # a server without the count command is not failed
        print(kind, "n/a", "holds %r after preload, expected %d" % (c, n), flush=True)
    else:
        print(kind, "ok", c.decode(errors="replace"), flush=True)
EOF

start_server() { # name binary -> sets PID_<name>
  local name=$1 bin=$2 sock="$WORK/$1.sock"
  mkdir -p "$WORK/$name"
  taskset -c "$CPU" "$bin" --port 0 --unixsocket "$sock" --save '' --appendonly no --dir "$WORK/$name" \
    >"$WORK/$name.log" 2>&1 </dev/null &
  local pid=$!
  PIDS+=("$pid")
  for _ in $(seq 200); do
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "$bin exited at startup:" >&2; tail -20 "$WORK/$name.log" >&2; exit 1
    fi
    [ "$(redis-cli -s "$sock" PING 2>/dev/null)" = PONG ] && return 0
    sleep 0.05
  done
  echo "$bin did not answer PING on $sock" >&2; tail -20 "$WORK/$name.log" >&2; exit 1
}

server_version() {
  redis-cli -s "$WORK/$1.sock" INFO server 2>/dev/null | tr -d '\r' |
    awk -F: '$1=="goblin_version"{g=$2} $1=="redis_version"{r=$2} END{print (g!="" ? g : (r!="" ? r : "?"))}'
}

declare -A STATE   # "<server>|<command>" -> "" (runs) or a reason for n/a
declare -A RES     # "<server>|<command>|<mode>" -> space-separated req/s
declare -A HAVE    # "<server>|<kind>" -> 1 when preloaded

log "# $CMDLINE"
log "# $(date -u '+%Y-%m-%d %H:%M UTC'), cpu $CPU, rounds $ROUNDS, keyspace $KEYSPACE, -n $N_PIPE (pipelined) / $N_CONC"
for s in goblin redis; do
  bin=$GOBLIN; [ $s = redis ] && bin=$REDIS
  start_server $s "$bin"
  t0=$SECONDS
  while read -r kind status rest; do
    if [ "$status" = ok ]; then HAVE[$s|$kind]=1; else log "# $s: preload $kind n/a: $rest"; fi
  done < <(taskset -c "$CPU" "$PY" "$WORK/preload.py" "$WORK/$s.sock" $KEYSPACE "$KINDS")
  log "# $s ($bin, $(server_version $s)): preloaded in $((SECONDS - t0)) s"
  for c in "${CMDS[@]}"; do
    # shellcheck disable=SC2086  # word splitting of the command is intended
    out=$(redis-cli -s "$WORK/$s.sock" ${CMD[$c]//__rand_int__/000000000000} 2>&1 || true)
    need=${NEEDS[$c]:-}
    if echo "$out" | grep -qi 'unknown command'; then
      STATE[$s|$c]="unknown command"
    elif [ -n "$need" ] && [ -z "${HAVE[$s|$need]:-}" ]; then
      # it would run, but on an empty structure: not comparable
      STATE[$s|$c]="no $need preload"
    else
      STATE[$s|$c]=""
    fi
  done
done
VERSION_goblin=$(server_version goblin)
VERSION_redis=$(server_version redis)

run_one() { # server command clients pipeline requests -> prints req/s or "err"
  local s=$1 c=$2 cl=$3 p=$4 n=$5 out
  # shellcheck disable=SC2086
  if out=$(timeout 600 taskset -c "$CPU" redis-benchmark -s "$WORK/$s.sock" -c "$cl" -P "$p" -n "$n" \
             -r $KEYSPACE --csv ${CMD[$c]} 2>>"$WORK/bench.err"); then
    # printf: awk's print writes rates over a million as 1.6e+06
    echo "$out" | awk -F'","' 'NR==2{printf "%.0f\n", $2}'
  else
    echo err
  fi
}

median() { tr ' ' '\n' | grep -E '^[0-9.]+$' | sort -g |
  awk '{v[NR]=$1} END{if(NR==0){print "n/a"} else if(NR%2){print v[(NR+1)/2]} else {print (v[NR/2]+v[NR/2+1])/2}}'; }

for m in "${MODE_LIST[@]}"; do
  cl=${m%x*}; p=${m#*x}
  n=$N_CONC; [ "$p" -gt 1 ] && n=$N_PIPE
  for c in "${CMDS[@]}"; do
    for r in $(seq "$ROUNDS"); do
      if [ $((r % 2)) = 1 ]; then order="goblin redis"; else order="redis goblin"; fi
      for s in $order; do
        [ -z "${STATE[$s|$c]}" ] || continue
        v=$(run_one "$s" "$c" "$cl" "$p" "$n")
        RES[$s|$c|$m]="${RES[$s|$c|$m]:-} $v"
      done
    done
    log "# -c $cl -P $p $c: goblin [${RES[goblin|$c|$m]:-${STATE[goblin|$c]}} ] redis [${RES[redis|$c|$m]:-${STATE[redis|$c]}} ]"
  done
done

cell() { # server command mode -> median or n/a
  local s=$1 c=$2 m=$3
  if [ -n "${STATE[$s|$c]}" ]; then echo n/a; return; fi
  local v; v=$(echo "${RES[$s|$c|$m]:-}" | median)
  if [ "$v" = n/a ]; then echo err; else printf '%.0f' "$v"; fi
}
ratio() { awk -v g="$1" -v r="$2" 'BEGIN{ if (g ~ /^[0-9.]+$/ && r ~ /^[0-9.]+$/ && r > 0) printf "%.2f", g / r; else print "n/a" }'; }
mode_label() { echo "-c ${1%x*} -P ${1#*x}"; }

notes=()
for s in goblin redis; do  # one note per server and reason
  declare -A WHY=()
  for c in "${CMDS[@]}"; do
    [ -z "${STATE[$s|$c]}" ] || WHY[${STATE[$s|$c]}]="${WHY[${STATE[$s|$c]}]:-}${WHY[${STATE[$s|$c]}]:+, }$c"
  done
  for w in "${!WHY[@]}"; do notes+=("$s: n/a ($w): ${WHY[$w]}"); done
  unset WHY
done
for c in "${CMDS[@]}"; do
  for s in goblin redis; do
    for m in "${MODE_LIST[@]}"; do
      case " ${RES[$s|$c|$m]:-} " in *" err "*) notes+=("$s $c $(mode_label "$m"): some runs failed, see redis-benchmark errors");; esac
    done
  done
done

if [ "$MARKDOWN" = 1 ]; then
  echo "Throughput, requests/s, median of $ROUNDS runs per server alternated A B B A (\`$CMDLINE\`, $(date -u '+%Y-%m-%d %H:%M UTC'); goblin-server $VERSION_goblin, redis-server $VERSION_redis; Unix socket, server and redis-benchmark pinned to CPU $CPU, -r $KEYSPACE over a 1M-element preload)."
  echo
  hdr="| command |"; sep="|---|"
  for m in "${MODE_LIST[@]}"; do
    l=$(mode_label "$m"); hdr+=" goblin $l | redis $l | ratio |"; sep+="---:|---:|---:|"
  done
  echo "$hdr"; echo "$sep"
  for c in "${CMDS[@]}"; do
    line="| $c |"
    for m in "${MODE_LIST[@]}"; do
      g=$(cell goblin "$c" "$m"); r=$(cell redis "$c" "$m")
      line+=" $g | $r | $(ratio "$g" "$r") |"
    done
    echo "$line"
  done
  if [ ${#notes[@]} -gt 0 ]; then echo; for nt in "${notes[@]}"; do echo "- $nt"; done; fi
else
  for m in "${MODE_LIST[@]}"; do
    echo
    echo "$(mode_label "$m"), median req/s of $ROUNDS runs"
    printf '%-10s %12s %12s %7s\n' command goblin redis ratio
    for c in "${CMDS[@]}"; do
      g=$(cell goblin "$c" "$m"); r=$(cell redis "$c" "$m")
      printf '%-10s %12s %12s %7s\n' "$c" "$g" "$r" "$(ratio "$g" "$r")"
    done
  done
  for nt in "${notes[@]}"; do echo "note: $nt"; done
  echo "# goblin-server $VERSION_goblin ($GOBLIN), redis-server $VERSION_redis ($REDIS)"
fi
