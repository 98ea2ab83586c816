"""A reliable job queue, an activity log and a rate limiter, written against redis-py as an application
would write them, with threads that each hold their own client.

The queue is the pattern from the RPOPLPUSH/LMOVE documentation: a producer LPUSHes jobs; each worker
moves one job at a time from the queue to its own processing list (BLMOVE, one worker BRPOPLPUSH),
does the work, records the result, and acknowledges with LREM. A worker that dies leaves its jobs in
its processing list; a reaper sees from CLIENT LIST that the worker's connection is gone and moves the
jobs back to the queue. At the end every job was processed exactly once and nothing is left behind.
Threads synchronise on the server's state (counters, CLIENT LIST), never on sleeps.
"""

from __future__ import annotations

import json
import threading

import redis

from support.server import wait_for

QUEUE = "jobs:queue"
JOBS = 600


def processing_list(worker: str) -> str:
    return f"jobs:processing:{worker}"


class Worker(threading.Thread):
    """Takes jobs until told to stop; `mode` is "blmove" or "brpoplpush"."""

    def __init__(self, server, name: str, mode: str, stop: threading.Event):
        super().__init__(daemon=True, name=name)
        self.client = server.client(client_name=name)   # every pooled connection carries the name
        self.client.ping()
        self.mode = mode
        self.stop = stop
        self.done: list[int] = []
        self.error: Exception | None = None

    def take(self):
        if self.mode == "blmove":
            return self.client.blmove(QUEUE, processing_list(self.name), 1, "RIGHT", "LEFT")
        return self.client.brpoplpush(QUEUE, processing_list(self.name), timeout=1)

    def run(self):
        try:
            while not self.stop.is_set():
                raw = self.take()
                if raw is None:
                    continue                    # timed out: look at the stop flag and wait again
                job = json.loads(raw)
                result = sum(range(job["n"]))   # the work
                pipe = self.client.pipeline()
                pipe.hincrby("jobs:times-processed", job["id"], 1)
                pipe.hset("jobs:results", job["id"], result)
                pipe.lrem(processing_list(self.name), 1, raw)
                _, _, removed = pipe.execute()
                if removed != 1:
                    raise AssertionError(f"{self.name}: acknowledging job {job['id']} removed {removed}")
                self.done.append(job["id"])
        except Exception as exc:   # reported by the test
            self.error = exc
        finally:
            self.client.connection_pool.disconnect()


class DyingWorker(threading.Thread):
    """Takes `count` jobs and disconnects without doing or acknowledging any of them."""

    def __init__(self, server, name: str, count: int):
        super().__init__(daemon=True, name=name)
        self.client = server.client(client_name=name)
        self.client.ping()
        self.count = count
        self.taken: list[int] = []

    def run(self):
        try:
            while len(self.taken) < self.count:
                raw = self.client.blmove(QUEUE, processing_list(self.name), 5, "RIGHT", "LEFT")
                if raw is not None:
                    self.taken.append(json.loads(raw)["id"])
        finally:
            self.client.connection_pool.disconnect()   # the process "dies": its connections close


def reap(client: redis.Redis) -> int:
    """Moves the jobs of every worker whose connection is gone back to the queue; returns how many."""
    alive = {c["name"] for c in client.client_list()}
    moved = 0
    for key in client.scan_iter(match=processing_list("*"), _type="list"):
        worker = key.decode().rsplit(":", 1)[1]
        if worker in alive:
            continue
        while client.lmove(key, QUEUE, "RIGHT", "RIGHT") is not None:   # back to the consuming end
            moved += 1
    return moved


def test_reliable_queue_processes_every_job_exactly_once(server, r):
    stop = threading.Event()
    dying = DyingWorker(server, "worker-doomed", count=7)
    workers = [Worker(server, f"worker-{i}", "brpoplpush" if i == 0 else "blmove", stop) for i in range(4)]
    try:
        run_queue(server, r, dying, workers, stop)
    finally:
        stop.set()
        for w in workers:
            w.join(30)


def run_queue(server, r, dying, workers, stop):
    names = {c["name"] for c in r.client_list()}
    assert {"worker-doomed", *(w.name for w in workers)} <= names, names
    dying.start()
    for w in workers:
        w.start()
    # Everyone waits before the first job exists, so the first five jobs go one to each of them.
    wait_for(lambda: int(r.info("clients")["blocked_clients"]) == len(workers) + 1, what="all workers blocked")

    def produce():
        client = server.client()
        pipe = client.pipeline(transaction=False)
        for job_id in range(JOBS):
            pipe.lpush(QUEUE, json.dumps({"id": job_id, "n": job_id % 50}))
            if job_id % 50 == 49:
                pipe.execute()
        pipe.execute()
        client.connection_pool.disconnect()

    producer = threading.Thread(target=produce)
    producer.start()
    producer.join(60)
    dying.join(60)
    assert not producer.is_alive() and not dying.is_alive()
    assert len(dying.taken) == 7
    # The doomed worker's jobs sit in its processing list until the reaper sees its connection gone.
    wait_for(lambda: "worker-doomed" not in {c["name"] for c in r.client_list()},
             what="the dead worker's connection to close")
    assert sorted(int(json.loads(x)["id"]) for x in r.lrange(processing_list("worker-doomed"), 0, -1)) == \
        sorted(dying.taken)
    assert reap(r) == 7
    assert r.exists(processing_list("worker-doomed")) == 0
    wait_for(lambda: r.hlen("jobs:times-processed") == JOBS, timeout=60, what=f"{JOBS} jobs processed")
    stop.set()
    for w in workers:
        w.join(30)
        assert not w.is_alive() and w.error is None, f"{w.name}: {w.error!r}"
    times = {int(k): int(v) for k, v in r.hgetall("jobs:times-processed").items()}
    assert times == {job_id: 1 for job_id in range(JOBS)}
    results = {int(k): int(v) for k, v in r.hgetall("jobs:results").items()}
    assert results == {job_id: sum(range(job_id % 50)) for job_id in range(JOBS)}
    assert sorted(job for w in workers for job in w.done) == list(range(JOBS))
    assert all(w.done for w in workers), "a worker got no job at all"
    assert set(dying.taken) <= {job for w in workers for job in w.done}
    assert r.exists(QUEUE) == 0
    assert list(r.scan_iter(match="jobs:processing:*")) == []
    assert reap(r) == 0


def test_jobs_come_out_in_the_order_they_went_in(server, r):
    for job_id in range(20):
        r.lpush(QUEUE, job_id)
    client = server.client()
    taken = [int(client.blmove(QUEUE, processing_list("solo"), 1, "RIGHT", "LEFT")) for _ in range(20)]
    assert taken == list(range(20))
    assert [int(x) for x in r.lrange(processing_list("solo"), 0, -1)] == list(range(19, -1, -1))
    assert client.blmove(QUEUE, processing_list("solo"), 0.1, "RIGHT", "LEFT") is None
    client.close()


def test_capped_activity_log(server, r):
    """Each writer thread LPUSHes its events and LTRIMs the log to the latest 100, in one transaction."""
    writers, events, cap = 4, 150, 100

    def write(writer: int):
        client = server.client()
        for seq in range(events):
            pipe = client.pipeline()
            pipe.lpush("activity", f"{writer}:{seq}")
            pipe.ltrim("activity", 0, cap - 1)
            pipe.execute()
        client.close()

    threads = [threading.Thread(target=write, args=(w,)) for w in range(writers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
        assert not t.is_alive()
    log = [tuple(map(int, entry.split(b":"))) for entry in r.lrange("activity", 0, -1)]
    assert len(log) == cap
    for writer in range(writers):
        seqs = [seq for w, seq in log if w == writer]
        assert seqs == sorted(seqs, reverse=True), f"writer {writer}'s events out of order: {seqs}"
        if seqs:
            assert seqs[0] == events - 1, "a writer's newest event is missing"
            assert seqs == list(range(events - 1, events - 1 - len(seqs), -1)), "a gap in a writer's events"
    recent = r.lrange("activity", 0, 9)
    assert len(recent) == 10 and recent == r.lrange("activity", 0, -1)[:10]


def test_sliding_window_rate_limiter(server, r):
    """A log of request times per client (LPUSH + LTRIM to the limit); a request is allowed when the log is
    not full or its oldest entry left the window. WATCH makes check-and-record atomic across threads.
    The clock is the test's own, so the outcome does not depend on how fast anything runs."""
    limit, window = 10, 60

    def allow(client: redis.Redis, key: str, now: int) -> bool:
        with client.pipeline() as pipe:
            while True:
                try:
                    pipe.watch(key)
                    if pipe.llen(key) >= limit and now - int(pipe.lindex(key, -1)) < window:
                        pipe.unwatch()
                        return False
                    pipe.multi()
                    pipe.lpush(key, now)
                    pipe.ltrim(key, 0, limit - 1)
                    pipe.execute()
                    return True
                except redis.WatchError:
                    continue

    allowed = []
    lock = threading.Lock()

    def caller(now: int):
        client = server.client()
        verdicts = [allow(client, "rate:alice", now) for _ in range(8)]
        with lock:
            allowed.extend(verdicts)
        client.close()

    threads = [threading.Thread(target=caller, args=(1000,)) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
        assert not t.is_alive()
    assert allowed.count(True) == limit and len(allowed) == 32
    assert r.llen("rate:alice") == limit
    assert not allow(r, "rate:alice", 1000 + window - 1)     # the oldest is still in the window
    assert allow(r, "rate:alice", 1000 + window)              # now it left it
    assert allow(r, "rate:bob", 1000)                         # a separate log per client
    assert [int(x) for x in r.lrange("rate:alice", 0, -1)] == [1000 + window] + [1000] * (limit - 1)
