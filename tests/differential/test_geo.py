"""Geo commands side by side with redis-server, in RESP2 and RESP3: GEOADD (NX, XX, CH, every
error, the coordinate limits), GEOPOS, GEOHASH and GEODIST (units, missing keys and members,
sorted-set scores no GEOADD writes), every GEOSEARCH and GEORADIUS* parse error in Redis's order,
every option combination of the searches, STORE / STOREDIST read back with ZRANGE WITHSCORES and
OBJECT ENCODING, seeded random positions over the whole globe (the latitude limits, the
antimeridian, repeated coordinates whose equal distances show the order of Redis's two sorts),
seeded random streams where geo commands are most of the traffic, COMMAND INFO and GETKEYS.

Replies are compared byte for byte, except where Redis 7.2 changed a distance (GEO_DISTANCES and
GEO_STORED_SCORES in support/differ.py); test_geo_distances_follow_redis_72 asserts 7.2's texts
themselves. Each Op resets its keys, so a failure shrinks to one Op.

Environment: GOBLIN_GEO_SEEDS=5,9 (replace the RESP2 stream seeds), GOBLIN_DIFF_RANDOM_SEEDS=n,
GOBLIN_DIFF_OPS (stream length, default 3000).
"""

import itertools
import math
import os
import random

import pytest

from support.differ import EXACT, GEO_DISTANCES, GEO_STORED_SCORES, OBJECT_ENCODING, Op, Step
from support.types import supported_commands

from .generators import GEO_GENERATORS, GEO_STREAM_GENERATORS, make_stream
from .streams import run_stream, stream_seeds, supported_rows

KEYS = ["g", "h", "d", "str", "nokey"]
GEO_COMMANDS = """geoadd geodist geohash geopos geosearch geosearchstore georadius georadius_ro
georadiusbymember georadiusbymember_ro""".split()


def S(*args, compare=GEO_DISTANCES):
    return Step(tuple(a if isinstance(a, bytes) else str(a).encode() for a in args), compare)


def op(name, *steps):
    return Op([S("DEL", *KEYS, compare=EXACT), S("SET", "str", "x", compare=EXACT)] + list(steps), name)


def dump(key):
    return [S("ZRANGE", key, 0, -1, "WITHSCORES", compare=GEO_STORED_SCORES),
            S("OBJECT", "ENCODING", key, compare=OBJECT_ENCODING), S("TYPE", key, compare=EXACT)]


@pytest.fixture
def check(corpus):
    return lambda name, ops, protocols=(2, 3): corpus("geo", name, ops, protocols)


SICILY = [("13.361389", "38.115556", "Palermo"), ("15.087269", "37.502669", "Catania"),
          ("13.583333", "37.316667", "Agrigento"), ("12.758489", "38.788135", "edge1"),
          ("17.241510", "38.222246", "edge2")]


def sicily(key="g"):
    return S("GEOADD", key, *[x for place in SICILY for x in place])


# --- GEOADD ----------------------------------------------------------------------------------

def test_geoadd_options(check):
    words = ["NX", "XX", "CH"]
    ops = []
    for n in range(0, 4):
        for flags in itertools.permutations(words, n):
            for existing in (None, "same", "moved"):
                steps = []
                if existing == "same":
                    steps.append(S("GEOADD", "g", "13.361389", "38.115556", "a"))
                elif existing == "moved":
                    steps.append(S("GEOADD", "g", "1", "2", "a", "3", "4", "b"))
                steps += [S("GEOADD", "g", *flags, "13.361389", "38.115556", "a"),
                          S("GEOADD", "g", *flags, "13.361389", "38.115556", "a", "5", "6", "c"),
                          S("GEOADD", "g", *[f.lower() for f in flags], "-7", "-8", "b")]
                ops.append(op(f"geoadd {' '.join(flags)} {existing}", *steps, *dump("g")))
    ops.append(op("repeated flags", S("GEOADD", "g", "CH", "CH", "NX", "NX", "1", "1", "a"), *dump("g")))
    check("geoadd_options", ops, protocols=(2,))


def test_geoadd_errors(check):
    cases = [["GEOADD", "g"], ["GEOADD", "g", "1", "2"], ["GEOADD", "g", "1", "2", "a", "3"],
             ["GEOADD", "g", "NX", "XX", "1", "2", "a"], ["GEOADD", "g", "XX", "NX", "1", "2", "a"],
             ["GEOADD", "g", "GT", "1", "2", "a"], ["GEOADD", "g", "INCR", "1", "2", "a"],
             ["GEOADD", "g", "CH", "NX", "CH"], ["GEOADD", "g", "NX", "CH", "XX"], ["GEOADD", "g", "ch", "nx", "ch"],
             ["GEOADD", "g", "1", "2", "a", "NX", "1", "2", "b"], ["GEOADD", "g", "x", "2", "a"],
             ["GEOADD", "g", "1", "y", "a"], ["GEOADD", "g", "1", "2", "a", "1", "nan", "b"],
             ["GEOADD", "g", "181", "2", "a"], ["GEOADD", "g", "1", "86", "a"], ["GEOADD", "g", "-180.5", "-86", "a"],
             ["GEOADD", "g", "1e300", "0", "a"], ["GEOADD", "g", "inf", "0", "a"], ["GEOADD", "g", "0", "-inf", "a"],
             ["GEOADD", "g", "1.123456789", "85.0511287801", "a"], ["GEOADD", "g", "0", "-85.051128781", "a"],
             ["GEOADD", "g", "", "0", "a"], ["GEOADD", "g", " 1", "0", "a"], ["GEOADD", "g", "1", "2", "a", "5", "200", "b"],
             ["GEOADD", "g", "nx\x00junk", "1", "2", "a"]]
    ops = [op(" ".join(c), S("GEOADD", "g", "9", "9", "z"), S(*c), *dump("g")) for c in cases]
    ops += [op("wrongtype " + " ".join(c), S(*[("str" if a == "g" else a) for a in c]), S("GET", "str"))
            for c in cases + [["GEOADD", "g", "1", "2", "a"], ["GEOADD", "g", "XX", "1", "2", "a"]]]
    check("geoadd_errors", ops, protocols=(2,))


LIMIT_TEXTS = ["180", "-180", "179.99999999", "-179.99999999", "0", "-0", "1e-300", "90", "-0.0000001",
               "85.05112878", "-85.05112878", "85.0511287", "-85.0511287799", "85.051128", "1.5e1", "0x1p3"]


def test_coordinate_limits(check):
    ops = []
    for lon, lat in itertools.product(LIMIT_TEXTS, repeat=2):
        ops.append(op(f"limits {lon} {lat}", S("GEOADD", "g", lon, lat, "p", "13.361389", "38.115556", "q"),
                      S("ZSCORE", "g", "p", compare=EXACT), S("GEOPOS", "g", "p", "q", "nope"), S("GEOHASH", "g", "p"),
                      S("GEODIST", "g", "p", "q"), S("GEODIST", "g", "p", "q", "km"),
                      S("GEOSEARCH", "g", "FROMMEMBER", "p", "BYRADIUS", "20000", "km", "WITHCOORD", "WITHDIST",
                        "WITHHASH", "ASC")))
    check("coordinate_limits", ops)


# --- GEOPOS GEOHASH GEODIST --------------------------------------------------------------------

def test_reads(check):
    ops = [
        op("missing key", S("GEOPOS", "nokey", "a", "b"), S("GEOPOS", "nokey"), S("GEOHASH", "nokey", "a"),
           S("GEOHASH", "nokey"), S("GEODIST", "nokey", "a", "b"), S("GEODIST", "nokey", "a", "b", "km"),
           S("GEODIST", "nokey", "a", "b", "parsec"), S("GEODIST", "nokey", "a", "b", "km", "x")),
        op("members", sicily(), S("GEOPOS", "g", "Palermo", "nope", "Catania", ""), S("GEOPOS", "g"),
           S("GEOHASH", "g", "Palermo", "nope", "edge1", "edge2"), S("GEOHASH", "g"),
           S("GEODIST", "g", "Palermo", "Catania"), S("GEODIST", "g", "Palermo", "nope"),
           S("GEODIST", "g", "nope", "Catania", "mi"), S("GEODIST", "g", "Palermo", "Palermo"),
           *[S("GEODIST", "g", "Palermo", "edge2", unit)
             for unit in ["m", "km", "ft", "mi", "M", "KM", "Ft", "mI", "cm", "", "m\x00", "kilometers"]],
           S("GEODIST", "g", "Palermo", "Catania", "km", "extra"), S("GEODIST", "g", "Palermo")),
        op("wrong type", S("GEOPOS", "str", "a"), S("GEOHASH", "str", "a"), S("GEODIST", "str", "a", "b"),
           S("GEODIST", "str", "a", "b", "parsec"), S("RPUSH", "h", "x", compare=EXACT), S("GEOPOS", "h"),
           S("GEOHASH", "h"), S("GEODIST", "h", "a", "b", "km")),
    ]
    check("reads", ops)


def test_sorted_set_scores_no_geoadd_writes(check):
    scores = ["-1", "1.5", "0", "1e20", "inf", "-inf", "4503599627370496", "4503599627370495", "9007199254740992",
              "13510798882111488", "18446744073709551616", "9223372036854775808", "-9223372036854775809",
              "3479099956230698.5", "-0", "1e-300", "123456789012345"]
    members = [f"s{i}" for i in range(len(scores))]
    zadd = S("ZADD", "g", *[x for pair in zip(scores, members) for x in pair], compare=EXACT)
    ops = [op("scores", zadd, S("GEOPOS", "g", *members), S("GEOHASH", "g", *members),
              *[S("GEODIST", "g", a, b) for a, b in zip(members, members[1:] + members[:1])],
              S("GEOSEARCH", "g", "FROMLONLAT", "0", "0", "BYRADIUS", "20037", "km", "WITHHASH", "WITHCOORD", "ASC"),
              S("GEOSEARCH", "g", "FROMMEMBER", "s1", "BYBOX", "40000", "40000", "km", "WITHDIST", "DESC"),
              S("GEORADIUSBYMEMBER", "g", "s0", "100", "km", "STOREDIST", "d"), *dump("d"))]
    check("bogus_scores", ops)


# --- search errors, in Redis's order -----------------------------------------------------------

SEARCH_ERRORS = [
    # GEOSEARCH
    ["GEOSEARCH", "g"], ["GEOSEARCH", "g", "FROMMEMBER", "Palermo"], ["GEOSEARCH", "g", "BYRADIUS", "10", "km"],
    ["GEOSEARCH", "g", "FROMMEMBER", "Palermo", "BYRADIUS", "10"],
    ["GEOSEARCH", "g", "FROMMEMBER", "Palermo", "FROMLONLAT", "1", "2", "BYRADIUS", "10", "km"],
    ["GEOSEARCH", "g", "FROMLONLAT", "1", "2", "FROMMEMBER", "Palermo", "BYRADIUS", "10", "km"],
    ["GEOSEARCH", "g", "FROMMEMBER", "Palermo", "FROMMEMBER", "Catania", "BYRADIUS", "200", "km"],
    ["GEOSEARCH", "g", "FROMMEMBER", "nope", "BYRADIUS", "10", "km"],
    ["GEOSEARCH", "g", "FROMMEMBER", "nope", "BYRADIUS", "x", "km"],
    ["GEOSEARCH", "g", "FROMLONLAT", "200", "2", "BYRADIUS", "10", "km"],
    ["GEOSEARCH", "g", "FROMLONLAT", "x", "2", "BYRADIUS", "10", "km"],
    ["GEOSEARCH", "g", "FROMLONLAT", "1", "2", "BYRADIUS", "x", "km"],
    ["GEOSEARCH", "g", "FROMLONLAT", "1", "2", "BYRADIUS", "-1", "km"],
    ["GEOSEARCH", "g", "FROMLONLAT", "1", "2", "BYRADIUS", "-1", "parsec"],
    ["GEOSEARCH", "g", "FROMLONLAT", "1", "2", "BYRADIUS", "1", "parsec"],
    ["GEOSEARCH", "g", "FROMLONLAT", "1", "2", "BYRADIUS", "nan", "km"],
    ["GEOSEARCH", "g", "FROMLONLAT", "1", "2", "BYBOX", "1", "2"],
    ["GEOSEARCH", "g", "FROMLONLAT", "1", "2", "BYBOX", "x", "y", "km"],
    ["GEOSEARCH", "g", "FROMLONLAT", "1", "2", "BYBOX", "1", "y", "km"],
    ["GEOSEARCH", "g", "FROMLONLAT", "1", "2", "BYBOX", "-1", "y", "km"],
    ["GEOSEARCH", "g", "FROMLONLAT", "1", "2", "BYBOX", "1", "-2", "km"],
    ["GEOSEARCH", "g", "FROMLONLAT", "1", "2", "BYBOX", "1", "2", "yd"],
    ["GEOSEARCH", "g", "FROMLONLAT", "1", "2", "BYRADIUS", "1", "km", "BYBOX", "1", "2", "km"],
    ["GEOSEARCH", "g", "FROMLONLAT", "1", "2", "BYBOX", "1", "2", "km", "BYRADIUS", "1", "km"],
    ["GEOSEARCH", "g", "FROMLONLAT", "1", "2", "BYRADIUS", "1", "km", "BYRADIUS", "2", "m"],
    ["GEOSEARCH", "g", "FROMLONLAT", "1", "2", "BYRADIUS", "1", "km", "COUNT"],
    ["GEOSEARCH", "g", "FROMLONLAT", "1", "2", "BYRADIUS", "1", "km", "COUNT", "0"],
    ["GEOSEARCH", "g", "FROMLONLAT", "1", "2", "BYRADIUS", "1", "km", "COUNT", "-3"],
    ["GEOSEARCH", "g", "FROMLONLAT", "1", "2", "BYRADIUS", "1", "km", "COUNT", "x"],
    ["GEOSEARCH", "g", "FROMLONLAT", "1", "2", "BYRADIUS", "1", "km", "COUNT", "1.5"],
    ["GEOSEARCH", "g", "FROMLONLAT", "1", "2", "BYRADIUS", "1", "km", "ANY"],
    ["GEOSEARCH", "g", "FROMLONLAT", "1", "2", "BYRADIUS", "1", "km", "ANY", "COUNT", "1"],
    ["GEOSEARCH", "g", "FROMLONLAT", "1", "2", "BYRADIUS", "1", "km", "STORE", "d"],
    ["GEOSEARCH", "g", "FROMLONLAT", "1", "2", "BYRADIUS", "1", "km", "STOREDIST"],
    ["GEOSEARCH", "g", "FROMLONLAT", "1", "2", "BYRADIUS", "1", "km", "WITHDIST", "FOO"],
    ["GEOSEARCH", "g", "ANY", "FROMLONLAT", "1", "2"], ["GEOSEARCH", "g", "COUNT", "0", "FROMLONLAT", "1", "2"],
    ["GEOSEARCH", "g", "WITHDIST", "BYRADIUS", "1", "km"], ["GEOSEARCH", "g", "FROMLONLAT", "1", "2", "FOO", "x"],
    ["GEOSEARCH", "g", "FROMLONLAT", "1"], ["GEOSEARCH", "g", "FROMMEMBER"],
    ["GEOSEARCH", "g", "BYBOX", "1", "2", "km", "FROMLONLAT", "200", "1"],
    ["geosearch", "g", "withcoord", "byradius", "1", "km", "count", "2"],
    ["GeoSearch", "g", "fromlonlat", "1", "2", "withhash"],
    # GEOSEARCHSTORE
    ["GEOSEARCHSTORE", "d", "g", "FROMLONLAT", "1", "2", "BYRADIUS", "1", "km", "WITHDIST"],
    ["GEOSEARCHSTORE", "d", "g", "FROMLONLAT", "1", "2", "BYRADIUS", "1", "km", "WITHCOORD", "COUNT", "0"],
    ["GEOSEARCHSTORE", "d", "g", "FROMLONLAT", "1", "2", "BYRADIUS", "1", "km", "STORE", "x"],
    ["GEOSEARCHSTORE", "d", "g", "FROMLONLAT", "1", "2", "BYRADIUS", "1", "km", "STOREDIST", "x"],
    ["GEOSEARCHSTORE", "d", "g", "FROMLONLAT", "1", "2", "BYRADIUS", "1", "km", "ANY"],
    ["GEOSEARCHSTORE", "d", "g", "BYRADIUS", "1", "km", "STOREDIST"],
    ["GEOSEARCHSTORE", "d", "g", "FROMMEMBER", "nope", "BYRADIUS", "1", "km"],
    ["geosearchstore", "d", "g", "storedist", "frommember", "Palermo"],
    # GEORADIUS and GEORADIUSBYMEMBER, and their _RO forms
    ["GEORADIUS", "g", "x", "2", "10", "km"], ["GEORADIUS", "g", "1", "100", "10", "km"],
    ["GEORADIUS", "g", "1", "2", "x", "km"], ["GEORADIUS", "g", "1", "2", "-1", "km"],
    ["GEORADIUS", "g", "1", "2", "10", "parsec"], ["GEORADIUS", "g", "1", "2", "10", "km", "FROMLONLAT", "1", "2"],
    ["GEORADIUS", "g", "1", "2", "10", "km", "BYRADIUS", "1", "km"],
    ["GEORADIUS", "g", "1", "2", "10", "km", "STORE"], ["GEORADIUS", "g", "1", "2", "10", "km", "STOREDIST"],
    ["GEORADIUS", "g", "1", "2", "10", "km", "STORE", "d", "WITHDIST"],
    ["GEORADIUS", "g", "1", "2", "10", "km", "WITHHASH", "STOREDIST", "d"],
    ["GEORADIUS", "g", "1", "2", "10", "km", "ANY"], ["GEORADIUS", "g", "1", "2", "10", "km", "COUNT", "0", "STORE", "d"],
    ["GEORADIUS_RO", "g", "1", "2", "10", "km", "STORE", "d"],
    ["GEORADIUS_RO", "g", "1", "2", "10", "km", "STOREDIST", "d"],
    ["GEORADIUS_RO", "g", "1", "2", "10", "km", "WITHDIST", "ANY"],
    ["GEORADIUSBYMEMBER", "g", "nope", "10", "km"], ["GEORADIUSBYMEMBER", "g", "nope", "x", "km"],
    ["GEORADIUSBYMEMBER", "g", "Palermo", "x", "km"], ["GEORADIUSBYMEMBER", "g", "Palermo", "10", "parsec"],
    ["GEORADIUSBYMEMBER", "g", "Palermo", "10", "km", "STORE", "d", "WITHCOORD"],
    ["GEORADIUSBYMEMBER", "g", "Palermo", "10", "km", "FROMMEMBER", "Catania"],
    ["GEORADIUSBYMEMBER_RO", "g", "Palermo", "10", "km", "STORE", "d"],
    ["GEORADIUSBYMEMBER_RO", "g", "Palermo", "10", "km", "COUNT", "x"],
]


def test_search_errors(check):
    ops = []
    for case in SEARCH_ERRORS:
        for key in ("g", "nokey", "str"):
            call = [key if a == "g" else a for a in case]
            ops.append(op(f"{key}: {' '.join(case)}", sicily(), S("SET", "d", "keep", compare=EXACT), S(*call),
                          S("GET", "d", compare=EXACT), S("TYPE", "d", compare=EXACT)))
    check("search_errors", ops)


# --- every option combination --------------------------------------------------------------------

def crowd(key, n, seed, around=(13.5, 37.8), spread=1.5, repeats=0):
    """GEOADDs of n seeded positions around a point, `repeats` of them sharing one coordinate."""
    rng = random.Random(seed)
    steps, args = [], []
    for i in range(n):
        if i < repeats:
            lon, lat = around[0] + 0.05, around[1] + 0.05
        else:
            lon = around[0] + rng.uniform(-spread, spread)
            lat = around[1] + rng.uniform(-spread, spread) / 2
        args += ["%.6f" % lon, "%.6f" % lat, f"m{i}"]
        if len(args) >= 300:
            steps.append(S("GEOADD", key, *args, compare=EXACT))
            args = []
    if args:
        steps.append(S("GEOADD", key, *args, compare=EXACT))
    return steps


WITHS = ["WITHCOORD", "WITHDIST", "WITHHASH"]
SORTS = [[], ["ASC"], ["DESC"]]
COUNTS = [[], ["COUNT", "1"], ["COUNT", "7"], ["COUNT", "3", "ANY"], ["COUNT", "1000"], ["COUNT", "40", "ANY"]]


def with_sets():
    return [list(c) for n in range(4) for c in itertools.combinations(WITHS, n)]


@pytest.mark.parametrize("size", [60, 400])
def test_geosearch_option_combinations(check, size):
    fill = crowd("g", size, seed=size, repeats=12)
    froms = [["FROMMEMBER", "m20"], ["FROMMEMBER", "m0"], ["FROMLONLAT", "13.5", "37.8"]]
    bys = [["BYRADIUS", "60", "km"], ["BYRADIUS", "37282", "mi"], ["BYBOX", "150", "80", "km"],
           ["BYBOX", "500000", "300000", "ft"]]
    ops = []
    for frm, by in itertools.product(froms, bys):
        steps = [S("GEOSEARCH", "g", *frm, *by, *sort, *count, *w)
                 for sort, count, w in itertools.product(SORTS, COUNTS, with_sets())]
        # The same request with its options in another order.
        steps.append(S("GEOSEARCH", "g", "WITHHASH", *by, "COUNT", "5", *frm, "DESC", "WITHDIST"))
        ops.append(Op(fill + steps, f"geosearch {size} {' '.join(frm)} {' '.join(by)}"))
    check(f"geosearch_options_{size}", ops)


@pytest.mark.parametrize("size", [60, 400])
def test_georadius_option_combinations(check, size):
    fill = crowd("g", size, seed=size + 1, repeats=9)
    ops = []
    for name, centre in [("GEORADIUS", ["13.5", "37.8"]), ("GEORADIUS_RO", ["13.1", "38"]),
                         ("GEORADIUSBYMEMBER", ["m30"]), ("GEORADIUSBYMEMBER_RO", ["m0"])]:
        for radius in (["50", "km"], ["200000", "ft"], ["3000", "mi"]):
            steps = [S(name, "g", *centre, *radius, *w, *sort, *count)
                     for sort, count, w in itertools.product(SORTS, COUNTS, with_sets())]
            ops.append(Op(fill + steps, f"{name} {size} {' '.join(radius)}"))
    check(f"georadius_options_{size}", ops)


# --- STORE and STOREDIST ------------------------------------------------------------------------

def test_store_and_storedist(check):
    ops = []
    for size, count in itertools.product([20, 300], [[], ["COUNT", "5"], ["COUNT", "200"], ["COUNT", "4", "ANY"]]):
        fill = crowd("g", size, seed=7, repeats=5)
        for sort in SORTS:
            for store in (["STORE", "d"], ["STOREDIST", "d"], ["STORE", "d", "STOREDIST", "h"],
                          ["STOREDIST", "h", "STORE", "d"], ["STORE", "g"]):
                ops.append(Op(fill + [S("GEORADIUS", "g", "13.5", "37.8", "80", "km", *sort, *count, *store)] +
                              dump("d") + dump("h") + dump("g"), f"georadius {size} {sort} {count} {store}"))
                ops.append(Op(fill + [S("GEORADIUSBYMEMBER", "g", "m7", "80", "km", *store, *count, *sort)] +
                              dump("d") + dump("h"), f"georadiusbymember {size} {sort} {count} {store}"))
            for dist in ([], ["STOREDIST"]):
                ops.append(Op(fill + [S("GEOSEARCHSTORE", "d", "g", "FROMMEMBER", "m2", "BYBOX", "200", "90", "km",
                                        *sort, *count, *dist)] + dump("d"),
                              f"geosearchstore {size} {sort} {count} {dist}"))
    ops += [
        op("nothing found deletes the destination", *crowd("g", 10, seed=1), S("SET", "d", "x", compare=EXACT),
           S("GEORADIUS", "g", "-50", "-50", "1", "km", "STORE", "d"), S("EXISTS", "d", compare=EXACT),
           S("SET", "d", "x", compare=EXACT), S("GEOSEARCHSTORE", "d", "g", "FROMLONLAT", "0", "0", "BYRADIUS", "1", "m"),
           S("EXISTS", "d", compare=EXACT), S("GEOSEARCHSTORE", "d", "g", "FROMLONLAT", "0", "0", "BYRADIUS", "1", "m"),
           S("EXISTS", "d", compare=EXACT)),
        op("a missing source deletes the destination", S("RPUSH", "d", "x", compare=EXACT),
           S("GEOSEARCHSTORE", "d", "nokey", "FROMMEMBER", "a", "BYRADIUS", "1", "m"), S("EXISTS", "d", compare=EXACT),
           S("SET", "d", "x", compare=EXACT), S("GEORADIUSBYMEMBER", "nokey", "a", "not-a-radius", "parsec", "STORE", "d"),
           S("EXISTS", "d", compare=EXACT), S("SET", "d", "x", compare=EXACT),
           S("GEORADIUS", "nokey", "1", "1", "1", "km", "STOREDIST", "d"), S("EXISTS", "d", compare=EXACT),
           S("GEORADIUSBYMEMBER", "nokey", "a", "1", "km", "WITHDIST"), S("GEORADIUSBYMEMBER", "nokey", "a", "1", "km"),
           S("GEOSEARCH", "nokey", "FROMMEMBER", "a", "BYRADIUS", "1", "m"),
           S("GEOSEARCH", "nokey", "FROMMEMBER", "a", "BYBOX", "1", "1", "m", "COUNT", "2", "ANY", "WITHDIST")),
        op("the destination's type and deadline do not matter", *crowd("g", 30, seed=2), S("SET", "str", "v", "EX", "100", compare=EXACT),
           S("GEOSEARCHSTORE", "str", "g", "FROMMEMBER", "m1", "BYRADIUS", "100", "km"), S("TTL", "str", compare=EXACT),
           *dump("str"), S("GEOSEARCHSTORE", "str", "nokey", "FROMMEMBER", "m1", "BYRADIUS", "100", "km"),
           S("GEOSEARCHSTORE", "d", "str", "FROMMEMBER", "m1", "BYRADIUS", "100", "km"), S("EXISTS", "d", compare=EXACT)),
        op("long members make a large set", S("GEOADD", "g", "1", "1", "x" * 65, "1.01", "1", "y", compare=EXACT),
           S("GEORADIUS", "g", "1", "1", "10", "km", "STORE", "d"), *dump("d")),
        op("listpack limits", S("CONFIG", "SET", "zset-max-listpack-entries", "3", compare=EXACT),
           *crowd("g", 5, seed=3, spread=0.01), S("OBJECT", "ENCODING", "g", compare=OBJECT_ENCODING),
           S("GEORADIUS", "g", "13.5", "37.8", "10", "km", "STORE", "d"), *dump("d"),
           S("GEORADIUS", "g", "13.5", "37.8", "10", "km", "COUNT", "3", "STOREDIST", "h"), *dump("h"),
           S("CONFIG", "SET", "zset-max-listpack-entries", "128", compare=EXACT)),
    ]
    check("store", ops)


# --- seeded random positions over the whole globe ------------------------------------------------

def globe_positions(rng, n):
    """Positions everywhere, and many at the latitude limits, on the antimeridian and repeated."""
    out = []
    for i in range(n):
        kind = i % 6
        if kind == 0:
            lon, lat = rng.uniform(-180, 180), rng.uniform(-85.05112878, 85.05112878)
        elif kind == 1:  # the antimeridian
            lon = rng.choice([180, -180, 179.9999, -179.9999, rng.uniform(179, 180), rng.uniform(-180, -179)])
            lat = rng.uniform(-60, 60)
        elif kind == 2:  # the latitude limits
            lon = rng.uniform(-180, 180)
            lat = rng.choice([85.05112878, -85.05112878, rng.uniform(84, 85.05112878), rng.uniform(-85.05112878, -84)])
        elif kind == 3:  # a crowd on one spot, repeated coordinates included
            lon, lat = (2.35, 48.85) if rng.random() < 0.3 else (2.35 + rng.uniform(-1, 1), 48.85 + rng.uniform(-1, 1))
        elif kind == 4:
            lon, lat = rng.uniform(-1, 1), rng.uniform(-1, 1)
        else:
            lon, lat = rng.uniform(-180, 180), rng.uniform(-30, 30)
        out.append(("%.7f" % lon, "%.8f" % min(85.05112878, max(-85.05112878, lat)), f"p{i}"))
    return out


def random_search(rng, names):
    centres = [["FROMMEMBER", rng.choice(names)],
               ["FROMLONLAT", "%.5f" % rng.uniform(-180, 180), "%.5f" % rng.uniform(-85, 85)],
               ["FROMLONLAT", rng.choice(["180", "-180", "179.99", "-179.999"]), "%.3f" % rng.uniform(-60, 60)],
               ["FROMLONLAT", "%.4f" % rng.uniform(-180, 180), rng.choice(["85.05112878", "-85.05112878", "84.5", "-84"])],
               ["FROMLONLAT", "%.4f" % (2.35 + rng.uniform(-0.5, 0.5)), "%.4f" % (48.85 + rng.uniform(-0.5, 0.5))]]
    unit = rng.choice(["m", "km", "mi", "ft"])
    per = {"m": 1, "km": 1000, "mi": 1609.34, "ft": 0.3048}[unit]
    size = lambda: "%.3f" % (10 ** rng.uniform(2, 7.1) / per)  # noqa: E731
    by = rng.choice([["BYRADIUS", size(), unit], ["BYBOX", size(), size(), unit]])
    opts = [*rng.choice(SORTS), *rng.choice(COUNTS)] + [w for w in WITHS if rng.random() < 0.6]
    return ["GEOSEARCH", "g", *rng.choice(centres), *by, *opts]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_positions_over_the_globe(check, seed):
    rng = random.Random(seed)
    positions = globe_positions(rng, 1500)
    names = [p[2] for p in positions]
    fill = [S("GEOADD", "g", *[x for p in positions[i:i + 100] for x in p], compare=EXACT)
            for i in range(0, len(positions), 100)]
    reads = [S("GEOPOS", "g", *names[i:i + 50]) for i in range(0, len(names), 50)]
    reads += [S("GEOHASH", "g", *names[i:i + 50]) for i in range(0, len(names), 50)]
    reads += [S("GEODIST", "g", rng.choice(names), rng.choice(names), rng.choice(["m", "km", "mi", "ft"]))
              for _ in range(300)]
    searches = [S(*random_search(rng, names)) for _ in range(400)]
    radius = [S("GEORADIUSBYMEMBER", "g", rng.choice(names), "%.1f" % (10 ** rng.uniform(0, 4)), "km", "WITHDIST",
                "WITHCOORD", rng.choice(["ASC", "DESC"]), *rng.choice(COUNTS)) for _ in range(100)]
    stores = [S("GEORADIUSBYMEMBER", "g", rng.choice(names), "%.1f" % (10 ** rng.uniform(0, 4)), "km", "STOREDIST",
                "d"), *dump("d")]
    ops = [Op(fill + reads[i::4] + searches[i::4] + radius[i::4] + stores, f"globe {seed} part {i}") for i in range(4)]
    check(f"globe_{seed}", ops)


def test_equal_distances_keep_redis_order(check):
    """Members at one coordinate tie on distance: the full sort (glibc's merge sort) keeps them in
    scan order, COUNT's partial sort (pqsort) leaves them as its partitions do."""
    ops = []
    for size, ties in [(20, 20), (50, 30), (200, 150), (400, 60)]:
        fill = crowd("g", size, seed=size, spread=0.2, repeats=ties)
        steps = []
        for sort in (["ASC"], ["DESC"], []):
            for n in [1, 2, 3, 6, 7, 8, 15, 40, 41, 100, 199, 399]:
                steps.append(S("GEOSEARCH", "g", "FROMLONLAT", "13.55", "37.85", "BYRADIUS", "100", "km", *sort,
                               "COUNT", n, "WITHDIST"))
            steps.append(S("GEOSEARCH", "g", "FROMLONLAT", "13.55", "37.85", "BYRADIUS", "100", "km", *sort))
            steps.append(S("GEOSEARCH", "g", "FROMMEMBER", "m0", "BYBOX", "30", "30", "km", *sort, "COUNT", "10"))
        ops.append(Op(fill + steps, f"ties {size} {ties}"))
    check("ties", ops)


# --- 7.2's own distances ----------------------------------------------------------------------------

def redis72_distance(lon1, lat1, lon2, lat2):
    """Redis 7.2's geohashGetDistance, in Python's IEEE doubles and glibc's libm."""
    d_r = math.pi / 180.0
    radius = 6372797.560856
    v = math.sin((lon2 * d_r - lon1 * d_r) / 2)
    if v == 0.0:
        return radius * abs(lat2 * d_r - lat1 * d_r)
    u = math.sin((lat2 * d_r - lat1 * d_r) / 2)
    a = u * u + math.cos(lat1 * d_r) * math.cos(lat2 * d_r) * v * v
    return 2.0 * radius * math.asin(math.sqrt(a))


def redis70_distance(lon1, lat1, lon2, lat2):
    d_r = math.pi / 180.0
    u = math.sin((lat2 * d_r - lat1 * d_r) / 2)
    v = math.sin((lon2 * d_r - lon1 * d_r) / 2)
    return 2.0 * 6372797.560856 * math.asin(math.sqrt(u * u + math.cos(lat1 * d_r) * math.cos(lat2 * d_r) * v * v))


def redis72_text(d):
    """fixedpoint_d2string(d, 4): llrint(d * 10^4), written with four decimals."""
    n = round(d * 10000.0)
    return "0.0000" if d == 0 else "%s%d.%04d" % ("-" if n < 0 else "", abs(n) // 10000, abs(n) % 10000)


# Positions on one meridian far apart (found by a seeded search) where 7.0's full haversine and
# 7.2's R * |dlat| print different distances.
SAME_MERIDIAN = [("-163.431953407056", "83.15694641018177", "-75.62000303401487"),
                 ("-72.60554782587685", "-40.214786416731", "62.047585473064686"),
                 ("140.45871504993858", "79.21185977368197", "-45.335185915618766"),
                 ("-88.0377631531458", "-58.90533315980254", "3.458214151153939")]


@pytest.mark.redis72
def test_geo_distances_follow_redis_72(diff_goblin):
    with diff_goblin.raw() as g:
        for lon, lat1, lat2 in SAME_MERIDIAN:
            g.call("DEL", "g")
            g.call("GEOADD", "g", lon, lat1, "a", lon, lat2, "b")
            pos = g.call("GEOPOS", "g", "a", "b").value
            (x1, y1), (x2, y2) = [[float(c.value) for c in p.value] for p in pos]
            assert x1 == x2
            want = redis72_distance(x1, y1, x2, y2)
            assert redis72_text(want) != "%.4f" % redis70_distance(x1, y1, x2, y2)  # the case tells them apart
            assert g.call("GEODIST", "g", "a", "b").value == redis72_text(want).encode()
            reply = g.call("GEOSEARCH", "g", "FROMMEMBER", "a", "BYRADIUS", "20000", "km", "WITHDIST", "ASC").value
            assert [(e.value[0].value, e.value[1].value) for e in reply] == \
                [(b"a", b"0.0000"), (b"b", redis72_text(want / 1000).encode())]
            g.call("GEOSEARCHSTORE", "d", "g", "FROMMEMBER", "a", "BYRADIUS", "20000", "km", "STOREDIST")
            assert float(g.call("ZSCORE", "d", "b").value) == want / 1000


# --- seeded streams ------------------------------------------------------------------------------

LENGTH = int(os.environ.get("GOBLIN_DIFF_OPS", "3000"))
DEFAULT_SEEDS = [21, 22, 23, 24]
RESP3_SEEDS = [321]


@pytest.fixture(scope="module")
def geo_generators(pair):
    return supported_rows(pair, GEO_STREAM_GENERATORS)


@pytest.mark.parametrize("protocol,seed", stream_seeds("GOBLIN_GEO_SEEDS", DEFAULT_SEEDS, RESP3_SEEDS),
                         ids=lambda x: str(x))
def test_geo_stream(pair, geo_generators, shrink_budget, reported_mismatches, protocol, seed):
    ops = make_stream(seed, LENGTH, geo_generators, protocol=protocol)
    run_stream(pair, ops, family="geo", seed=seed, protocol=protocol, seeds_env="GOBLIN_GEO_SEEDS",
               test_path="tests/differential/test_geo.py", selector=f"{protocol}-{seed}",
               shrink_budget=shrink_budget, reported_mismatches=reported_mismatches)


def test_geo_streams_draw_every_row(geo_generators):
    drawn = {op.source for seed in DEFAULT_SEEDS for op in make_stream(seed, LENGTH, geo_generators)}
    assert {gen.command for gen in geo_generators} - drawn == set()


def test_server_under_test_has_every_geo_command(pair):
    with pair.goblin_server.raw() as g:
        have = supported_commands(g, GEO_COMMANDS)
    assert sorted(set(GEO_COMMANDS) - have) == []


def test_geo_generators_cover_every_geo_command():
    assert sorted(set(GEO_COMMANDS) - {gen.command for gen in GEO_GENERATORS}) == []


# --- the command table -------------------------------------------------------------------------

@pytest.mark.parametrize("name", GEO_COMMANDS)
def test_geo_command_info_matches_reference(pair, name):
    from .test_command_table import command_info, summary
    with pair.goblin_server.raw() as g, pair.reference_server.raw() as r:
        assert summary(command_info(g, name)) == summary(command_info(r, name))


GEO_GETKEYS_CALLS = [
    ("GEOADD", "k", "1", "2", "m"), ("GEODIST", "k", "a", "b"), ("GEOPOS", "k"), ("GEOHASH", "k", "a"),
    ("GEOSEARCH", "k", "FROMMEMBER", "a", "BYRADIUS", "1", "m"),
    ("GEOSEARCHSTORE", "d", "k", "FROMMEMBER", "a", "BYRADIUS", "1", "m"),
    ("GEORADIUS", "k", "0", "0", "1", "km"), ("GEORADIUS", "k", "0", "0", "1", "km", "STORE", "d"),
    ("GEORADIUS", "k", "0", "0", "1", "km", "withdist", "storedist", "e", "store", "d"),
    ("GEORADIUS", "k", "0", "0", "store", "km", "store", "d", "store", "e"),
    ("GEORADIUS", "k", "0", "0", "1", "km", "COUNT", "1", "STORE"),
    ("GEORADIUS_RO", "k", "0", "0", "1", "km", "STORE", "d"),
    ("GEORADIUSBYMEMBER", "k", "m", "1", "km", "STOREDIST", "d"), ("GEORADIUSBYMEMBER", "k", "m", "1", "store", "d"),
    ("GEORADIUSBYMEMBER_RO", "k", "m", "1", "km"),
]


@pytest.mark.parametrize("call", GEO_GETKEYS_CALLS, ids=lambda c: " ".join(c))
def test_geo_command_getkeys_matches_reference(pair, call):
    with pair.goblin_server.raw() as g, pair.reference_server.raw() as r:
        assert g.call("COMMAND", "GETKEYS", *call).raw == r.call("COMMAND", "GETKEYS", *call).raw
