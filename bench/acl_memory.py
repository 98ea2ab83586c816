#!/usr/bin/python3
"""Memory of ACL users, goblin-server against redis-server: INFO's used_memory grown by USERS
users, each with 20 key patterns, 5 channel patterns and 100 command rules, per user.

    bench/acl_memory.py [--users N] GOBLIN_BINARY [REDIS_BINARY]

Both servers start on Unix sockets with persistence off; the users are the same on both.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
from support.resp import RawConnection  # noqa: E402


def used_memory(conn) -> int:
    info = conn.call("INFO", "memory").value.decode()
    return int(next(line.split(":")[1] for line in info.split("\r\n") if line.startswith("used_memory:")))


def measure(binary: str, users: int, rules: list, work: str) -> float:
    sock = os.path.join(work, os.path.basename(binary) + ".sock")
    proc = subprocess.Popen([binary, "--port", "0", "--unixsocket", sock, "--save", "", "--dir", work],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while not os.path.exists(sock):
            if time.monotonic() > deadline:
                raise SystemExit(f"{binary} did not start")
            time.sleep(0.02)
        conn = RawConnection(unix_path=sock)
        before = used_memory(conn)
        for i in range(users):
            reply = conn.call("ACL", "SETUSER", f"user{i:05d}", "on", f">password{i}", *rules)
            assert reply.value == b"OK", reply
        after = used_memory(conn)
        return (after - before) / users
    finally:
        proc.terminate()
        proc.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--users", type=int, default=1000)
    parser.add_argument("goblin")
    parser.add_argument("redis", nargs="?", default="/usr/bin/redis-server")
    args = parser.parse_args()
    commands = ["get", "set", "mget", "mset", "incr", "decr", "incrby", "append", "strlen", "getrange",
                "setrange", "getdel", "getex", "setnx", "setex", "psetex", "del", "unlink", "exists",
                "expire", "pexpire", "ttl", "pttl", "persist", "type", "rename", "renamenx", "scan",
                "keys", "copy", "hget", "hset", "hdel", "hgetall", "hkeys", "hvals", "hlen", "hexists",
                "hincrby", "hmget", "hscan", "hsetnx", "hstrlen", "hrandfield", "lpush", "rpush", "lpop",
                "rpop", "llen", "lrange", "lindex", "lset", "lrem", "ltrim", "linsert", "lpos", "sadd",
                "srem", "smembers", "sismember", "scard", "spop", "srandmember", "sinter", "sunion",
                "sdiff", "sscan", "smismember", "zadd", "zrem", "zscore", "zrank", "zrevrank", "zrange",
                "zcard", "zcount", "zincrby", "zpopmin", "zpopmax", "zscan", "zmscore", "xadd", "xlen",
                "xrange", "xrevrange", "xread", "xdel", "xtrim", "pfadd", "pfcount", "pfmerge",
                "geoadd", "geopos", "geodist", "geosearch", "publish", "ping", "echo", "select", "touch"]
    assert len(commands) == 100
    rules = [f"~app{j}:*" for j in range(20)] + [f"&chan{j}.*" for j in range(5)] + ["-@all"]
    rules += [("+" if j % 4 else "-") + name for j, name in enumerate(commands)]
    with tempfile.TemporaryDirectory() as work:
        goblin = measure(args.goblin, args.users, rules, work)
        redis = measure(args.redis, args.users, rules, work)
    print("| server | bytes per user (20 key patterns, 5 channels, 100 command rules) |")
    print("|---|---:|")
    print(f"| goblin-server | {goblin:.0f} |")
    print(f"| redis-server | {redis:.0f} |")
    print(f"goblin/redis: {goblin / redis:.2f}")


if __name__ == "__main__":
    main()
