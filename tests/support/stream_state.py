"""A stream's whole state as XINFO STREAM FULL reports it, as nested dicts that compare."""

from __future__ import annotations


def as_map(flat) -> dict:
    """A flat RESP2 [field, value, field, value, ...] list as a dict."""
    return dict(zip(flat[0::2], flat[1::2]))


def stream_full_state(conn, key) -> dict:
    """XINFO STREAM key FULL COUNT 0 as nested dicts: the stream's fields; per group its fields, its
    PEL as (id, consumer, delivery time, delivery count) and its consumers by name, each with its
    fields and its own PEL as (id, delivery time, delivery count)."""
    reply = conn.call("XINFO", "STREAM", key, "FULL", "COUNT", "0")
    assert not reply.is_error, f"XINFO STREAM {key!r} FULL -> {reply!r}"
    info = as_map(reply.py())
    info[b"entries"] = [(e[0], tuple(e[1])) for e in info[b"entries"]]
    groups = {}
    for flat_group in info.pop(b"groups"):
        group = as_map(flat_group)
        group[b"pending"] = [tuple(p) for p in group[b"pending"]]
        consumers = {}
        for flat_consumer in group.pop(b"consumers"):
            consumer = as_map(flat_consumer)
            consumer[b"pending"] = [tuple(p) for p in consumer[b"pending"]]
            consumers[consumer.pop(b"name")] = consumer
        group[b"consumers"] = consumers
        groups[group.pop(b"name")] = group
    info[b"groups"] = groups
    return info
