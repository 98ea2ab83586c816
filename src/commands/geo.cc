// Geo commands: GEOADD GEODIST GEOHASH GEOPOS GEOSEARCH GEOSEARCHSTORE GEORADIUS GEORADIUS_RO
// GEORADIUSBYMEMBER GEORADIUSBYMEMBER_RO.
//
// A geo set is a sorted set whose scores are 52-bit geohashes (core/geohash.h), so the zset
// commands read and change it and it moves between Redis and Goblin unchanged. GEOADD is ZADD
// of the encoded positions (zset.cc's ZaddElements); a search asks the sorted set for the score
// ranges of the nine cells around its centre, keeps the members inside the shape, sorts them
// as Redis sorts them, and replies or stores. Arguments are checked in Redis's order (for the
// searches: the source key's type first, then every option left to right, then the options'
// conflicts), so a failing command answers Redis's error.
//
// Keyspace events, as Redis sends them: GEOADD's are ZADD's ("zadd"); a STORE sends
// "georadiusstore" (GEORADIUS*) or "geosearchstore" (GEOSEARCHSTORE) for the destination, or
// "del" when an empty result or a missing source deletes it.
//
// Effects: every command here replays to the same state as it arrived (the encoding and the
// search are deterministic), so none records a replacement. Redis logs GEOADD as the ZADD it
// turns into; both rebuild the same set.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "commands/families.h"
#include "commands/zset_family.h"
#include "core/geohash.h"
#include "core/string_number.h"
#include "server/errors.h"

namespace goblin {
namespace {

// --- Arguments -------------------------------------------------------------------------------

// A longitude and latitude, each a float, together within the limits GEOADD accepts.
bool ParsePosition(CommandContext& ctx, std::string_view longitude_text,
                   std::string_view latitude_text, double* longitude, double* latitude) {
  if (!ParseDouble(longitude_text, longitude) || !ParseDouble(latitude_text, latitude)) {
    ctx.reply.Error(errors::kNotFloat);
    return false;
  }
  if (!GeoPositionValid(*longitude, *latitude)) {
    // printf's %f, as Redis formats it: every integer digit, six decimals, "inf".
    constexpr const char* kFormat = "ERR invalid longitude,latitude pair %f,%f";
    const int length = std::snprintf(nullptr, 0, kFormat, *longitude, *latitude);
    std::string text(static_cast<size_t>(length), '\0');
    std::snprintf(text.data(), text.size() + 1, kFormat, *longitude, *latitude);
    ctx.reply.Error(text);
    return false;
  }
  return true;
}

// A distance unit: metres per unit, or 0 after replying the error.
double ParseUnit(CommandContext& ctx, std::string_view unit) {
  if (WordIs(unit, "m")) return 1;
  if (WordIs(unit, "km")) return 1000;
  if (WordIs(unit, "ft")) return 0.3048;
  if (WordIs(unit, "mi")) return 1609.34;
  ctx.reply.Error("ERR unsupported unit provided. please use M, KM, FT, MI");
  return 0;
}

// A size of the search area as a float; `error` is the reply when it is none.
bool ParseSize(CommandContext& ctx, std::string_view text, std::string_view error, double* value) {
  if (!ParseDouble(text, value)) {
    ctx.reply.Error(error);
    return false;
  }
  return true;
}

// BYRADIUS radius unit (and GEORADIUS's radius unit).
bool ParseRadius(CommandContext& ctx, size_t first, GeoShape* shape) {
  double radius;
  if (!ParseSize(ctx, ctx.arg(first), "ERR need numeric radius", &radius)) return false;
  if (radius < 0) {
    ctx.reply.Error("ERR radius cannot be negative");
    return false;
  }
  const double conversion = ParseUnit(ctx, ctx.arg(first + 1));
  if (conversion == 0) return false;
  shape->kind = GeoShape::Kind::kRadius;
  shape->radius = radius;
  shape->conversion = conversion;
  return true;
}

// BYBOX width height unit.
bool ParseBox(CommandContext& ctx, size_t first, GeoShape* shape) {
  double width;
  double height;
  if (!ParseSize(ctx, ctx.arg(first), "ERR need numeric width", &width) ||
      !ParseSize(ctx, ctx.arg(first + 1), "ERR need numeric height", &height)) {
    return false;
  }
  if (height < 0 || width < 0) {
    ctx.reply.Error("ERR height or width cannot be negative");
    return false;
  }
  const double conversion = ParseUnit(ctx, ctx.arg(first + 2));
  if (conversion == 0) return false;
  shape->kind = GeoShape::Kind::kBox;
  shape->width = width;
  shape->height = height;
  shape->conversion = conversion;
  return true;
}

// The position of a member as the centre of a search; replies the error when it is missing.
bool MemberPosition(CommandContext& ctx, const SortedSet& set, std::string_view member,
                    GeoShape* shape) {
  const std::optional<double> score = set.Score(member);
  if (!score) {
    ctx.reply.Error("ERR could not decode requested zset member");
    return false;
  }
  GeoPositionOfScore(*score, &shape->longitude, &shape->latitude);
  return true;
}

// --- Replies ---------------------------------------------------------------------------------

// A coordinate as Redis's addReplyHumanLongDouble writes it: "%.17Lf" trimmed, a bulk string
// in RESP2 and a double in RESP3.
void ReplyCoordinate(ReplyBuilder& reply, double value) {
  const std::string text = FormatLongDoubleHuman(value);
  if (!reply.resp3()) {
    reply.Bulk(text);
    return;
  }
  reply.Raw(",");
  reply.Raw(text);
  reply.Raw("\r\n");
}

void ReplyDistance(ReplyBuilder& reply, double distance) {
  char text[kGeoDistanceTextMax];
  reply.Bulk(std::string_view(text, FormatGeoDistance(distance, text)));
}

// --- GEOADD ----------------------------------------------------------------------------------

void GeoaddCommand(CommandContext& ctx) {
  ZaddOptions options;
  const size_t first = ParseZaddFlags(ctx, 2, /*geoadd=*/true, &options);
  const size_t rest = ctx.argc() - first;
  // No triple at all is ZADD's syntax error once GEOADD has become ZADD.
  if (rest % 3 != 0 || rest == 0 || (options.nx && options.xx)) {
    ctx.reply.Error(errors::kSyntax);
    return;
  }
  const size_t elements = rest / 3;
  ScoreList scores(elements);
  for (size_t j = 0; j < elements; ++j) {
    double longitude;
    double latitude;
    if (!ParsePosition(ctx, ctx.arg(first + 3 * j), ctx.arg(first + 3 * j + 1), &longitude,
                       &latitude)) {
      return;
    }
    scores[j] = static_cast<double>(GeoScore(longitude, latitude));
  }
  ZaddElements(ctx, options, scores.data(), elements, first + 2, 3);
}

// --- GEODIST GEOHASH GEOPOS ------------------------------------------------------------------

void GeodistCommand(CommandContext& ctx) {
  double conversion = 1;
  if (ctx.argc() == 5) {
    conversion = ParseUnit(ctx, ctx.arg(4));
    if (conversion == 0) return;
  } else if (ctx.argc() > 5) {
    ctx.reply.Error(errors::kSyntax);
    return;
  }
  SortedSet* set;
  if (!LookupZset(ctx, ctx.arg(1), &set, true)) return;
  std::optional<double> first;
  std::optional<double> second;
  if (set != nullptr && (first = set->Score(ctx.arg(2))) && (second = set->Score(ctx.arg(3)))) {
    double lon1, lat1, lon2, lat2;
    GeoPositionOfScore(*first, &lon1, &lat1);
    GeoPositionOfScore(*second, &lon2, &lat2);
    ReplyDistance(ctx.reply, GeoDistance(lon1, lat1, lon2, lat2) / conversion);
    return;
  }
  ctx.reply.Null();
}

void GeohashCommand(CommandContext& ctx) {
  ReplyPerMember(ctx, /*null_array=*/false, [&](double score) {
    char text[11];
    GeoHashText(score, text);
    ctx.reply.Bulk(std::string_view(text, sizeof(text)));
  });
}

void GeoposCommand(CommandContext& ctx) {
  ReplyPerMember(ctx, /*null_array=*/true, [&](double score) {
    double longitude;
    double latitude;
    GeoPositionOfScore(score, &longitude, &latitude);
    ctx.reply.Array(2);
    ReplyCoordinate(ctx.reply, longitude);
    ReplyCoordinate(ctx.reply, latitude);
  });
}

// --- The searches ----------------------------------------------------------------------------

// Which search a handler runs (Redis's georadiusGeneric flags).
enum SearchFlags : uint32_t {
  kAroundPosition = 1 << 0,  // GEORADIUS key longitude latitude radius unit
  kAroundMember = 1 << 1,    // GEORADIUSBYMEMBER key member radius unit
  kNoStore = 1 << 2,         // the _RO forms: STORE and STOREDIST are syntax errors
  kSearch = 1 << 3,          // GEOSEARCH's FROM* and BY* options
  kSearchStore = 1 << 4,     // GEOSEARCHSTORE destination source ...: STOREDIST takes no key
};

enum class SortOrder { kNone, kAscending, kDescending };

struct SearchRequest {
  GeoShape shape;
  std::optional<std::string_view> store_key;
  bool store_distance = false;
  bool with_distance = false;
  bool with_hash = false;
  bool with_coordinates = false;
  SortOrder sort = SortOrder::kNone;
  bool any = false;
  int64_t count = 0;  // 0: no COUNT
};

// Parses everything after the key (and, for GEORADIUS*, the centre and radius), replying the
// first error. `set` is the source, or nullptr when it is missing: FROMMEMBER is then not
// looked up, so the reply can say which shape the empty result has.
bool ParseSearchOptions(CommandContext& ctx, size_t first, uint32_t flags, const SortedSet* set,
                        SearchRequest* request) {
  bool from_member = false;
  bool from_position = false;
  bool by_radius = false;
  bool by_box = false;
  const size_t argc = ctx.argc();
  for (size_t i = first; i < argc; ++i) {
    const std::string_view arg = ctx.arg(i);
    const size_t after = argc - i - 1;  // arguments after this one
    const bool search = flags & kSearch;
    if (WordIs(arg, "withdist")) {
      request->with_distance = true;
    } else if (WordIs(arg, "withhash")) {
      request->with_hash = true;
    } else if (WordIs(arg, "withcoord")) {
      request->with_coordinates = true;
    } else if (WordIs(arg, "any")) {
      request->any = true;
    } else if (WordIs(arg, "asc")) {
      request->sort = SortOrder::kAscending;
    } else if (WordIs(arg, "desc")) {
      request->sort = SortOrder::kDescending;
    } else if (WordIs(arg, "count") && after >= 1) {
      if (!ParseIntegerArg(ctx, ctx.arg(i + 1), &request->count)) return false;
      if (request->count <= 0) {
        ctx.reply.Error(errors::kCountMustBePositive);
        return false;
      }
      ++i;
    } else if ((WordIs(arg, "store") || WordIs(arg, "storedist")) && after >= 1 &&
               !(flags & kNoStore) && !search) {
      request->store_key = ctx.arg(i + 1);
      request->store_distance = WordIs(arg, "storedist");
      ++i;
    } else if (WordIs(arg, "storedist") && search && (flags & kSearchStore)) {
      request->store_distance = true;
    } else if (WordIs(arg, "frommember") && after >= 1 && search && !from_position) {
      if (set != nullptr && !MemberPosition(ctx, *set, ctx.arg(i + 1), &request->shape)) {
        return false;
      }
      from_member = true;
      ++i;
    } else if (WordIs(arg, "fromlonlat") && after >= 2 && search && !from_member) {
      if (!ParsePosition(ctx, ctx.arg(i + 1), ctx.arg(i + 2), &request->shape.longitude,
                         &request->shape.latitude)) {
        return false;
      }
      from_position = true;
      i += 2;
    } else if (WordIs(arg, "byradius") && after >= 2 && search && !by_box) {
      if (!ParseRadius(ctx, i + 1, &request->shape)) return false;
      by_radius = true;
      i += 2;
    } else if (WordIs(arg, "bybox") && after >= 3 && search && !by_radius) {
      if (!ParseBox(ctx, i + 1, &request->shape)) return false;
      by_box = true;
      i += 3;
    } else {
      ctx.reply.Error(errors::kSyntax);
      return false;
    }
  }

  if (request->store_key &&
      (request->with_distance || request->with_hash || request->with_coordinates)) {
    ctx.reply.Error((flags & kSearchStore) ? "ERR GEOSEARCHSTORE is not compatible with WITHDIST, "
                                             "WITHHASH and WITHCOORD options"
                                           : "ERR STORE option in GEORADIUS is not compatible "
                                             "with WITHDIST, WITHHASH and WITHCOORD options");
    return false;
  }
  if ((flags & kSearch) && !(from_member || from_position)) {
    ctx.reply.Error("ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for " +
                    std::string(ctx.arg(0)));
    return false;
  }
  if ((flags & kSearch) && !(by_radius || by_box)) {
    ctx.reply.Error("ERR exactly one of BYRADIUS and BYBOX can be specified for " +
                    std::string(ctx.arg(0)));
    return false;
  }
  if (request->any && request->count == 0) {
    ctx.reply.Error("ERR the ANY argument requires COUNT argument");
    return false;
  }
  return true;
}

// The members inside the shape, cell by cell in Redis's order; with a limit (COUNT n ANY) the
// scan stops at the limit-th match.
void CollectMatches(const SortedSet& set, const GeoShape& shape, size_t limit,
                    std::vector<GeoMatch>* matches) {
  const GeoSearchCells cover = GeoCellsCovering(shape);
  auto reached = [&] { return limit > 0 && matches->size() >= limit; };
  size_t last_scanned = 0;
  for (size_t i = 0; i < 9; ++i) {
    const GeoHash cell = cover.cells[i];
    if (cell.IsZero()) continue;
    // With a very large area neighbouring cells can be the same cell: scanned once. (Redis
    // compares with the last scanned neighbour only, never with the centre.)
    if (last_scanned != 0 && cell == cover.cells[last_scanned]) continue;
    if (reached()) break;
    GeoHash next = cell;
    ++next.bits;
    const size_t begin = set.ScoreLowerBound(static_cast<double>(GeoAlign52(cell)), false);
    const size_t end = set.ScoreUpperBound(static_cast<double>(GeoAlign52(next)), true);
    set.ForEachInRankRange(begin, end, false, [&](double score, std::string_view member) {
      GeoMatch match;
      match.score = score;
      match.member = member;
      GeoPositionOfScore(score, &match.longitude, &match.latitude);
      if (GeoWithinShape(shape, match.longitude, match.latitude, &match.distance)) {
        matches->push_back(match);
      }
      return !reached();
    });
    last_scanned = i;
  }
}

void ReplyMatches(CommandContext& ctx, const SearchRequest& request,
                  std::span<const GeoMatch> matches) {
  const double conversion = request.shape.conversion;
  const size_t options = request.with_distance + request.with_hash + request.with_coordinates;
  ReplyBuilder& reply = ctx.reply;
  reply.Array(matches.size());
  if (options == 0) {
    ZsetElementWriter writer(reply, /*with_scores=*/false);
    for (const GeoMatch& match : matches) writer.Add(match.member, 0);
    return;
  }
  for (const GeoMatch& match : matches) {
    reply.Array(options + 1);
    reply.Bulk(match.member);
    if (request.with_distance) ReplyDistance(reply, match.distance / conversion);
    if (request.with_hash) reply.Integer(static_cast<int64_t>(match.score));
    if (request.with_coordinates) {
      reply.Array(2);
      ReplyCoordinate(reply, match.longitude);
      ReplyCoordinate(reply, match.latitude);
    }
  }
}

// STORE / STOREDIST: the matches as a sorted set of their scores or distances, replacing the
// destination (deleted when nothing matched).
void StoreMatches(CommandContext& ctx, const SearchRequest& request,
                  std::span<const GeoMatch> matches, std::string_view event) {
  size_t longest = 0;
  for (const GeoMatch& match : matches) longest = std::max(longest, match.member.size());
  const ZsetLimits limits = ZsetLimitsOf(ctx);
  SortedSet set(matches.size(), longest, limits);
  for (const GeoMatch& match : matches) {
    const double score =
        request.store_distance ? match.distance / request.shape.conversion : match.score;
    // A NaN distance (rounding at two exactly antipodal cells) is no score; Redis asserts.
    if (std::isnan(score)) continue;
    ZsetObject::Insert(set, score, match.member, limits);
  }
  StoreZsetResult(ctx, *request.store_key, std::move(set), event);
}

void SearchGeneric(CommandContext& ctx, size_t source_index, uint32_t flags) {
  SortedSet* set;
  if (!LookupZset(ctx, ctx.arg(source_index), &set, /*for_read=*/true)) return;

  SearchRequest request;
  size_t first_option;
  if (flags & kAroundPosition) {
    first_option = 6;
    if (!ParsePosition(ctx, ctx.arg(2), ctx.arg(3), &request.shape.longitude,
                       &request.shape.latitude) ||
        !ParseRadius(ctx, 4, &request.shape)) {
      return;
    }
  } else if (flags & kAroundMember) {
    // Without the source the member and radius go unread, as in Redis: the options still
    // decide between an empty array and a stored nothing.
    first_option = 5;
    if (set != nullptr && (!MemberPosition(ctx, *set, ctx.arg(2), &request.shape) ||
                           !ParseRadius(ctx, 3, &request.shape))) {
      return;
    }
  } else {
    first_option = source_index + 1;
    if (flags & kSearchStore) request.store_key = ctx.arg(1);
  }
  if (!ParseSearchOptions(ctx, first_option, flags, set, &request)) return;

  if (set == nullptr) {
    if (request.store_key) {
      if (ctx.db().Delete(*request.store_key)) {
        MarkDirty(ctx);
        Notify(ctx, kNotifyGeneric, "del", *request.store_key);
      }
      ctx.reply.Integer(0);
    } else {
      ctx.reply.Array(0);
    }
    return;
  }
  // COUNT without an order means the nearest ones (but ANY means the first found).
  if (request.count != 0 && request.sort == SortOrder::kNone && !request.any) {
    request.sort = SortOrder::kAscending;
  }

  std::vector<GeoMatch> matches;
  CollectMatches(*set, request.shape, request.any ? static_cast<size_t>(request.count) : 0,
                 &matches);
  if (matches.empty() && !request.store_key) {
    ctx.reply.Array(0);
    return;
  }
  const size_t returned = request.count == 0 || matches.size() < static_cast<size_t>(request.count)
                              ? matches.size()
                              : static_cast<size_t>(request.count);
  if (request.sort != SortOrder::kNone) {
    const bool descending = request.sort == SortOrder::kDescending;
    if (returned == matches.size()) {
      GeoSortMatches(matches, descending);
    } else {
      GeoPartialSortMatches(matches, returned, descending);
    }
  }
  const std::span<const GeoMatch> result(matches.data(), returned);
  if (request.store_key) {
    StoreMatches(ctx, request, result, (flags & kSearch) ? "geosearchstore" : "georadiusstore");
  } else {
    ReplyMatches(ctx, request, result);
  }
}

void GeoradiusCommand(CommandContext& ctx) { SearchGeneric(ctx, 1, kAroundPosition); }
void GeoradiusRoCommand(CommandContext& ctx) { SearchGeneric(ctx, 1, kAroundPosition | kNoStore); }
void GeoradiusbymemberCommand(CommandContext& ctx) { SearchGeneric(ctx, 1, kAroundMember); }
void GeoradiusbymemberRoCommand(CommandContext& ctx) {
  SearchGeneric(ctx, 1, kAroundMember | kNoStore);
}
void GeosearchCommand(CommandContext& ctx) { SearchGeneric(ctx, 1, kSearch); }
void GeosearchstoreCommand(CommandContext& ctx) { SearchGeneric(ctx, 2, kSearch | kSearchStore); }

// COMMAND GETKEYS of GEORADIUS (options from argument 6) and GEORADIUSBYMEMBER (from 5), as
// Redis's key specs find them: the source, then the argument after the first STORE and the one
// after the first STOREDIST from there on (a keyword in the last place names nothing).
template <size_t kFirstOption>
std::optional<std::vector<size_t>> StoreKeys(const std::vector<std::string_view>& argv) {
  std::vector<size_t> keys{1};
  for (std::string_view keyword : {"store", "storedist"}) {
    for (size_t i = kFirstOption; i + 1 < argv.size(); ++i) {
      if (WordIs(argv[i], keyword)) {
        keys.push_back(i + 1);
        break;
      }
    }
  }
  return keys;
}

}  // namespace

void RegisterGeoCommands(CommandTable* table) {
  constexpr uint32_t kWrite = kCmdWrite | kCmdDenyOom;
  constexpr const char* kRadiusComplexity =
      "O(N+log(M)) where N is the number of elements inside the bounding box of the circular "
      "area delimited by center and radius and M is the number of items inside the index.";
  constexpr const char* kSearchComplexity =
      "O(N+log(M)) where N is the number of elements in the grid-aligned bounding box area "
      "around the shape provided as the filter and M is the number of items inside the shape";
  CommandAdder add{table, "geo", kAclGeo};
  add("geoadd", -5, kWrite, {KeyAt(1, kKeyRW | kKeyUpdate)}, GeoaddCommand,
      "Adds one or more members to a geospatial index. The key is created if it doesn't exist.",
      "3.2.0",
      "O(log(N)) for each item added, where N is the number of elements in the sorted set.",
      "key [NX | XX] [CH] longitude latitude member [longitude latitude member ...]");
  add("geodist", -4, kCmdReadonly, {KeyAt(1, kKeyRO | kKeyAccess)}, GeodistCommand,
      "Returns the distance between two members of a geospatial index.", "3.2.0", "O(log(N))",
      "key member1 member2 [M | KM | FT | MI]");
  add("geohash", -2, kCmdReadonly, {KeyAt(1, kKeyRO | kKeyAccess)}, GeohashCommand,
      "Returns members from a geospatial index as geohash strings.", "3.2.0",
      "O(log(N)) for each member requested, where N is the number of elements in the sorted "
      "set.",
      "key [member [member ...]]");
  add("geopos", -2, kCmdReadonly, {KeyAt(1, kKeyRO | kKeyAccess)}, GeoposCommand,
      "Returns the longitude and latitude of members from a geospatial index.", "3.2.0",
      "O(N) where N is the number of members requested.", "key [member [member ...]]");
  Command* georadius = add(
      "georadius", -6, kWrite,
      {KeyAt(1, kKeyRO | kKeyAccess),
       KeySpec{kKeyOW | kKeyUpdate, KeyBegin::Keyword("STORE", 6), KeyFind::Range(0, 1, 0)},
       KeySpec{kKeyOW | kKeyUpdate, KeyBegin::Keyword("STOREDIST", 6), KeyFind::Range(0, 1, 0)}},
      GeoradiusCommand,
      "Queries a geospatial index for members within a distance from a coordinate, "
      "optionally stores the result.",
      "3.2.0", kRadiusComplexity,
      "key longitude latitude radius <M | KM | FT | MI> [WITHCOORD] [WITHDIST] [WITHHASH] "
      "[COUNT count [ANY]] [ASC | DESC] [STORE key | STOREDIST key]");
  georadius->find_keys = StoreKeys<6>;
  add("georadius_ro", -6, kCmdReadonly, {KeyAt(1, kKeyRO | kKeyAccess)}, GeoradiusRoCommand,
      "Returns members from a geospatial index that are within a distance from a coordinate.",
      "3.2.10", kRadiusComplexity,
      "key longitude latitude radius <M | KM | FT | MI> [WITHCOORD] [WITHDIST] [WITHHASH] "
      "[COUNT count [ANY]] [ASC | DESC]");
  Command* georadiusbymember = add(
      "georadiusbymember", -5, kWrite,
      {KeyAt(1, kKeyRO | kKeyAccess),
       KeySpec{kKeyOW | kKeyUpdate, KeyBegin::Keyword("STORE", 5), KeyFind::Range(0, 1, 0)},
       KeySpec{kKeyOW | kKeyUpdate, KeyBegin::Keyword("STOREDIST", 5), KeyFind::Range(0, 1, 0)}},
      GeoradiusbymemberCommand,
      "Queries a geospatial index for members within a distance from a member, optionally "
      "stores the result.",
      "3.2.0", kRadiusComplexity,
      "key member radius <M | KM | FT | MI> [WITHCOORD] [WITHDIST] [WITHHASH] "
      "[COUNT count [ANY]] [ASC | DESC] [STORE key | STOREDIST key]");
  georadiusbymember->find_keys = StoreKeys<5>;
  add("georadiusbymember_ro", -5, kCmdReadonly, {KeyAt(1, kKeyRO | kKeyAccess)},
      GeoradiusbymemberRoCommand,
      "Returns members from a geospatial index that are within a distance from a member.", "3.2.10",
      kRadiusComplexity,
      "key member radius <M | KM | FT | MI> [WITHCOORD] [WITHDIST] [WITHHASH] "
      "[COUNT count [ANY]] [ASC | DESC]");
  add("geosearch", -7, kCmdReadonly, {KeyAt(1, kKeyRO | kKeyAccess)}, GeosearchCommand,
      "Queries a geospatial index for members inside an area of a box or a circle.", "6.2.0",
      kSearchComplexity,
      "key <FROMMEMBER member | FROMLONLAT longitude latitude> <BYRADIUS radius <M | KM | FT | "
      "MI> | BYBOX width height <M | KM | FT | MI>> [ASC | DESC] [COUNT count [ANY]] "
      "[WITHCOORD] [WITHDIST] [WITHHASH]");
  add("geosearchstore", -8, kWrite, {KeyAt(1, kKeyOW | kKeyUpdate), KeyAt(2, kKeyRO | kKeyAccess)},
      GeosearchstoreCommand,
      "Queries a geospatial index for members inside an area of a box or a circle, optionally "
      "stores the result.",
      "6.2.0", kSearchComplexity,
      "destination source <FROMMEMBER member | FROMLONLAT longitude latitude> <BYRADIUS radius "
      "<M | KM | FT | MI> | BYBOX width height <M | KM | FT | MI>> [ASC | DESC] "
      "[COUNT count [ANY]] [STOREDIST]");
}

}  // namespace goblin
