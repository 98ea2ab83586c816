#!/usr/bin/python3
"""Writes the generated part of the seed corpora in fuzz/corpus/ (the rest is written by hand).

Each seed is a small file that exercises one form of the input: RDB files and DUMP payloads
written by Debian's redis-server, snapshots and append-only directories written by
goblin-server, msgpack and struct bytes packed by Redis's own Lua libraries. The encoding
limits are set low so that a few elements already take every encoding (listpack, intset,
hashtable, skiplist, quicklist of several nodes, stream of several nodes).

usage: fuzz/make_seeds.py GOBLIN_SERVER        (run from the repository's top folder)
"""
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

import redis

CORPUS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")
SMALL_LIMITS = {
    "list-max-listpack-size": "4",
    "set-max-intset-entries": "4",
    "set-max-listpack-entries": "4",
    "zset-max-listpack-entries": "4",
    "hash-max-listpack-entries": "4",
    "stream-node-max-entries": "4",
}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, binary, *args):
        self.dir = tempfile.mkdtemp(prefix="goblin-seeds-")
        self.port = free_port()
        self.process = subprocess.Popen(
            [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", self.dir,
             "--save", "", *args],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.client = redis.Redis(port=self.port)
        try:
            self.wait_ready()
            for name, value in SMALL_LIMITS.items():
                try:
                    self.client.config_set(name, value)
                except redis.ResponseError:
                    pass  # a limit this server does not have (Redis 7.0 has no set listpacks)
        except BaseException:
            self.close()
            raise

    def saved(self):
        """SAVE, and the bytes of the file it wrote."""
        self.client.save()
        with open(os.path.join(self.dir, "dump.rdb"), "rb") as f:
            return f.read()

    def wait_ready(self):
        deadline = time.monotonic() + 30
        while True:
            try:
                self.client.ping()
                return
            except redis.ConnectionError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def close(self):
        self.process.terminate()
        self.process.wait()
        shutil.rmtree(self.dir)


def write(target, name, data):
    folder = os.path.join(CORPUS, target)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data)


# Each data set, as the commands that build it; one seed file per set. Key names differ
# across sets, so that one file can hold them all.
DATA_SETS = {
    "strings": [
        ["SET", "text", "hello"], ["SET", "int", "12345"], ["SET", "negative", "-7"],
        ["SET", "big", "9223372036854775807"], ["SET", "lzf", "abcd" * 20],
        ["SET", "empty", ""], ["SET", "ttl", "x", "PX", "100000000"],
    ],
    "lists": [
        ["RPUSH", "list-small", "a", "1", "b"],
        ["RPUSH", "list-nodes", *[str(i) for i in range(10)], "x" * 40, "y" * 40],
    ],
    "sets": [
        ["SADD", "set-ints", "1", "2", "-3"], ["SADD", "set-pack", "a", "b", "7"],
        ["SADD", "set-table", *[f"m{i}" for i in range(6)]],
        ["SADD", "set-bigints", *[str(i * 1000) for i in range(6)]],
    ],
    "zsets": [
        ["ZADD", "zset-small", "1", "a", "2.5", "b", "-inf", "c"],
        ["ZADD", "zset-skip", *sum([[str(i / 3), f"m{i}"] for i in range(6)], [])],
    ],
    "hashes": [
        ["HSET", "hash-small", "f", "v", "n", "1"],
        ["HSET", "hash-table", *sum([[f"f{i}", f"v{i}"] for i in range(6)], [])],
    ],
    "streams": [
        ["XADD", "s", "1-1", "a", "1"], ["XADD", "s", "1-2", "a", "2", "b", "3"],
        ["XADD", "s", "2-0", "c", "4"], ["XADD", "s", "3-0", "a", "5"],
        ["XADD", "s", "4-0", "d", "6"], ["XDEL", "s", "1-2"],
        ["XGROUP", "CREATE", "s", "g", "0"],
        ["XREADGROUP", "GROUP", "g", "alice", "COUNT", "2", "STREAMS", "s", ">"],
        ["XGROUP", "CREATECONSUMER", "s", "g", "bob"],
        ["XADD", "emptied", "5-0", "f", "v"], ["XDEL", "emptied", "5-0"],
    ],
}
EVERYTHING = [command for commands in DATA_SETS.values() for command in commands]
LIBRARY = "#!lua name=seedlib\nredis.register_function('f', function() return 1 end)"


def fill(client, commands):
    client.flushall()
    for command in commands:
        client.execute_command(*command)


def redis_seeds():
    server = Server("/usr/bin/redis-server")
    try:
        client = server.client
        for name, commands in DATA_SETS.items():
            fill(client, commands)
            write("rdb_loader", f"redis-{name}.rdb", server.saved())
            for key in client.keys():
                payload = client.dump(key)
                # mode 1: the target appends the trailer; mode 0: the payload as sent.
                write("restore_payload", f"redis-{name}-{key.decode()}", b"\x01" + payload[:-10])
        fill(client, EVERYTHING)
        client.function_load(LIBRARY)
        client.execute_command("SELECT", "3")
        client.set("in-db-3", "v")
        client.execute_command("SELECT", "0")
        rdb = server.saved()
        write("rdb_loader", "redis-everything.rdb", rdb)
        write("restore_payload", "redis-string-with-trailer", b"\x00" + client.dump("text"))
        # The transfer a master sends: sized and diskless, then a command of the stream.
        mark = b"0123456789abcdef0123456789abcdef01234567"
        line = b"+FULLRESYNC " + b"ab" * 20 + b" 0\n"
        stream = b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n"
        sized = b"$%d\r\n" % len(rdb) + rdb + stream
        write("sync_transfer", "sized", b"\x00" + line + b"\n\n" + sized)
        write("sync_transfer", "sized-in-pieces", b"\x07" + line + sized)
        write("sync_transfer", "diskless", b"\x05" + line + b"$EOF:" + mark + b"\r\n" + rdb + mark + stream)
        # msgpack and struct bytes from Redis's own libraries, for the Lua target.
        packs = {
            "msgpack-table": "return cmsgpack.pack({1, 'two', {a = 3.5, b = {true, false}}, -70000})",
            "msgpack-numbers": "return cmsgpack.pack(0, 127, 128, 65536, 2^40, -1, -33, -40000, 1.5)",
            "msgpack-strings": "return cmsgpack.pack(string.rep('x', 40), string.rep('y', 300), '')",
        }
        for name, script in packs.items():
            write("lua_bridge", name, b"\x03" + client.eval(script, 0))
            write("lua_bridge", name + "-limit", b"\x04" + b"1\x00" + client.eval(script, 0))
        data = client.eval("return struct.pack('>bhiLd', -1, 300, -70000, 4000000000, 2.5)", 0)
        write("lua_bridge", "struct-numbers", b"\x05>bhiLd\x00" + data)
        data = client.eval("return struct.pack('<Bc0s', 3, 'abc', 'zero')", 0)
        write("lua_bridge", "struct-strings", b"\x05<Bc0s\x00" + data)
    finally:
        server.close()


def goblin_seeds(binary):
    server = Server(binary, "--appendonly", "yes")
    try:
        client = server.client
        for name, commands in DATA_SETS.items():
            fill(client, commands)
            write("snapshot_loader", f"goblin-{name}.gsnap", server.saved())
        fill(client, EVERYTHING)
        client.function_load(LIBRARY)
        write("snapshot_loader", "goblin-everything.gsnap", server.saved())
        client.config_set("snapshot-format", "rdb")
        write("rdb_loader", "goblin-everything.rdb", server.saved())
        client.execute_command("MULTI")
        client.execute_command("INCR", "counter")
        client.execute_command("EXPIRE", "counter", "100")
        client.execute_command("EXEC")
        aof_dir = os.path.join(server.dir, "appendonlydir")
        for name in sorted(os.listdir(aof_dir)):
            with open(os.path.join(aof_dir, name), "rb") as f:
                data = f.read()
            if name.endswith(".manifest"):
                write("aof_manifest", "goblin.manifest", data)
            elif name.endswith(".incr.aof"):
                write("aof_replay", "goblin-incr.aof", b"\x00" + data)
    finally:
        server.close()


if __name__ == "__main__":
    redis_seeds()
    goblin_seeds(sys.argv[1])
