// goblin geohash: encoding and decoding against values redis-server computed and against
// bit-by-bit reference code, neighbours against cell arithmetic, the area search against a
// brute-force scan of every point (seeded), distances and boxes against long-double formulas,
// the reply texts, and the two sorts against std::stable_sort.

#include "core/geohash.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/string_number.h"

namespace goblin {
namespace {

constexpr double kCells = 67108864.0;  // 2^26

std::string Text(double coordinate) { return FormatLongDoubleHuman(coordinate); }

std::string Hash(double score) {
  char text[11];
  GeoHashText(score, text);
  return std::string(text, sizeof(text));
}

std::string Distance(double metres) {
  char text[kGeoDistanceTextMax];
  return std::string(text, FormatGeoDistance(metres, text));
}

// Interleaving one bit at a time, independent of the library's mask arithmetic.
uint64_t InterleaveSlowly(uint32_t longitude_cell, uint32_t latitude_cell, int bits) {
  uint64_t out = 0;
  for (int i = 0; i < bits; ++i) {
    out |= static_cast<uint64_t>((latitude_cell >> i) & 1) << (2 * i);
    out |= static_cast<uint64_t>((longitude_cell >> i) & 1) << (2 * i + 1);
  }
  return out;
}

void SplitSlowly(uint64_t bits, int step, uint32_t* longitude_cell, uint32_t* latitude_cell) {
  *longitude_cell = 0;
  *latitude_cell = 0;
  for (int i = 0; i < step; ++i) {
    *latitude_cell |= static_cast<uint32_t>((bits >> (2 * i)) & 1) << i;
    *longitude_cell |= static_cast<uint32_t>((bits >> (2 * i + 1)) & 1) << i;
  }
}

// Scores, positions, texts and distances redis-server 7.0.15 gave for the same input
// (GEOADD, ZSCORE, GEOPOS, GEOHASH, GEODIST).
TEST(GeohashTest, MatchesWhatRedisComputed) {
  EXPECT_EQ(GeoScore(13.361389, 38.115556), 3479099956230698u);
  EXPECT_EQ(GeoScore(15.087269, 37.502669), 3479447370796909u);
  EXPECT_EQ(GeoScore(0, 0), 3377699720527872u);
  EXPECT_EQ(GeoScore(-180, -85.05112878), 0u);
  // The far edges set bits 52 and 53.
  EXPECT_EQ(GeoScore(180, 85.05112878), 13510798882111488u);

  struct Case {
    double score;
    const char* longitude;
    const char* latitude;
    const char* hash;
  };
  const Case cases[] = {
      {3479099956230698, "13.36138933897018433", "38.11555639549629859", "sqc8b49rny0"},
      {3479447370796909, "15.08726745843887329", "37.50266842333162032", "sqdtr74hyu0"},
      {3377699720527872, "0.00000268220901489", "0.00000126736058093", "s0000000000"},
      {13510798882111488, "180", "85.0511287799999991", "bp05b5048p0"},
      {0, "-179.99999731779098511", "-85.05112751263942528", "00bh0hbj200"},
      {static_cast<double>(GeoScore(179.99999999, 85.0511287)), "179.99999731779098511",
       "85.05112751263942528", "zzpgzgpfxz0"},
      // Scores no GEOADD writes, read as Redis reads them.
      {-1, "180", "85.0511287799999991", "bp05b5048p0"},
      {1.5, "-179.99999731779098511", "-85.05112497791824921", "00bh0hbj210"},
      {1e20, "-179.99999731779098511", "-85.05112751263942528", "00bh0hbj200"},
      {HUGE_VAL, "-179.99999731779098511", "-85.05112751263942528", "00bh0hbj200"},
      {-HUGE_VAL, "180", "-85.05112751263942528", "00bh0hbj200"},
      {4503599627370496.0, "-179.99999731779098511", "85.0511287799999991", "bp05b5048p0"},
      {9007199254740992.0, "180", "-85.05112751263942528", "00bh0hbj200"},
  };
  for (const Case& c : cases) {
    double longitude;
    double latitude;
    GeoPositionOfScore(c.score, &longitude, &latitude);
    EXPECT_EQ(Text(longitude), c.longitude) << c.score;
    EXPECT_EQ(Text(latitude), c.latitude) << c.score;
    EXPECT_EQ(Hash(c.score), c.hash) << c.score;
  }

  double lon1, lat1, lon2, lat2;
  GeoPositionOfScore(3479099956230698, &lon1, &lat1);
  GeoPositionOfScore(3479447370796909, &lon2, &lat2);
  EXPECT_EQ(Distance(GeoDistance(lon1, lat1, lon2, lat2)), "166274.1516");
  EXPECT_EQ(Distance(GeoDistance(lon1, lat1, lon2, lat2) / 1000), "166.2742");
  EXPECT_EQ(Distance(GeoDistance(lon1, lat1, lon1, lat1)), "0.0000");
  EXPECT_EQ(Distance(GeoDistance(15, 37, lon2, lat2) / 1000), "56.4413");
  EXPECT_EQ(Distance(GeoDistance(15, 37, lon1, lat1) / 1000), "190.4424");
  GeoPositionOfScore(-1, &lon1, &lat1);
  GeoPositionOfScore(1.5, &lon2, &lat2);
  EXPECT_EQ(Distance(GeoDistance(lon1, lat1, lon2, lat2)), "18919844.3072");
}

TEST(GeohashTest, RandomPositionsRoundTripThroughTheirCells) {
  std::mt19937_64 rng(26);
  std::uniform_real_distribution<double> lon(-180, 180);
  std::uniform_real_distribution<double> lat(kGeoLatitudeMin, kGeoLatitudeMax);
  const double cell_width = 360 / kCells;
  const double cell_height = (kGeoLatitudeMax - kGeoLatitudeMin) / kCells;
  for (int i = 0; i < 200000; ++i) {
    const double longitude = lon(rng);
    const double latitude = lat(rng);
    const uint64_t score = GeoScore(longitude, latitude);
    const auto x = static_cast<uint32_t>((longitude + 180) / 360 * kCells);
    const auto y = static_cast<uint32_t>((latitude - kGeoLatitudeMin) /
                                         (kGeoLatitudeMax - kGeoLatitudeMin) * kCells);
    ASSERT_EQ(score, InterleaveSlowly(x, y, 26)) << longitude << "," << latitude;
    double dlon, dlat;
    GeoPositionOfScore(static_cast<double>(score), &dlon, &dlat);
    ASSERT_LE(std::fabs(dlon - longitude), cell_width / 2 * 1.000001);
    ASSERT_LE(std::fabs(dlat - latitude), cell_height / 2 * 1.000001);
    // The centre of a cell encodes to the same cell.
    ASSERT_EQ(GeoScore(dlon, dlat), score);
  }
}

TEST(GeohashTest, EncodeRefusesWhatGeoaddRefuses) {
  GeoHash hash;
  EXPECT_FALSE(GeoEncode(kGeoLongitudeRange, kGeoLatitudeRange, 180.0000001, 0, 26, &hash));
  EXPECT_FALSE(GeoEncode(kGeoLongitudeRange, kGeoLatitudeRange, 0, -85.051128781, 26, &hash));
  EXPECT_FALSE(GeoEncode(kGeoLongitudeRange, kGeoLatitudeRange, 0, 0, 0, &hash));
  EXPECT_FALSE(GeoEncode(kGeoLongitudeRange, kGeoLatitudeRange, 0, 0, 33, &hash));
  // The standard range still refuses latitudes past Web Mercator's.
  EXPECT_FALSE(GeoEncode(kGeoLongitudeRange, kStandardLatitudeRange, 0, 86, 26, &hash));
  EXPECT_FALSE(GeoPositionValid(0, -85.06));
  EXPECT_TRUE(GeoPositionValid(-180, 85.05112878));
  ASSERT_TRUE(GeoEncode(kGeoLongitudeRange, kGeoLatitudeRange, 90, 0, 1, &hash));
  EXPECT_EQ(hash.step, 1);
  EXPECT_EQ(hash.bits, 0b11u);  // the east half (longitude bit 1), the north half
}

// A neighbour is the cell one column or row over, wrapping at the grid's edges; checked
// against cell numbers moved by plain arithmetic.
TEST(GeohashTest, NeighboursAreTheAdjacentCellsAndWrap) {
  std::mt19937_64 rng(8);
  for (int i = 0; i < 20000; ++i) {
    const int step = 1 + static_cast<int>(rng() % 26);
    const uint32_t side = 1u << step;
    uint32_t x = static_cast<uint32_t>(rng() % side);
    uint32_t y = static_cast<uint32_t>(rng() % side);
    if (i % 4 == 0) x = (i % 8 == 0) ? 0 : side - 1;  // the edges, often
    if (i % 3 == 0) y = (i % 6 == 0) ? 0 : side - 1;
    const GeoHash hash{InterleaveSlowly(x, y, step), static_cast<uint8_t>(step)};
    const GeoNeighbors n = GeoNeighborsOf(hash);
    auto expect = [&](GeoHash got, int dx, int dy, const char* name) {
      const uint32_t ex = (x + side + static_cast<uint32_t>(dx)) % side;
      const uint32_t ey = (y + side + static_cast<uint32_t>(dy)) % side;
      uint32_t gx, gy;
      SplitSlowly(got.bits, step, &gx, &gy);
      EXPECT_EQ(got.step, step) << name;
      EXPECT_EQ(got.bits >> (2 * step), 0u) << name;
      EXPECT_EQ(gx, ex) << name << " step " << step << " x " << x << " y " << y;
      EXPECT_EQ(gy, ey) << name << " step " << step << " x " << x << " y " << y;
    };
    expect(n.east, 1, 0, "east");
    expect(n.west, -1, 0, "west");
    expect(n.north, 0, 1, "north");
    expect(n.south, 0, -1, "south");
    expect(n.north_east, 1, 1, "north_east");
    expect(n.north_west, -1, 1, "north_west");
    expect(n.south_east, 1, -1, "south_east");
    expect(n.south_west, -1, -1, "south_west");
    if (HasFailure()) return;
  }
}

TEST(GeohashTest, DecodedCellsTileTheGrid) {
  const GeoHash hash{InterleaveSlowly(5, 9, 4), 4};
  const GeoCell cell = GeoDecode(kGeoLongitudeRange, kGeoLatitudeRange, hash);
  EXPECT_DOUBLE_EQ(cell.longitude.min, -180 + 5 * 360.0 / 16);
  EXPECT_DOUBLE_EQ(cell.longitude.max, -180 + 6 * 360.0 / 16);
  EXPECT_DOUBLE_EQ(cell.latitude.min, kGeoLatitudeMin + 9 * (2 * kGeoLatitudeMax) / 16);
  EXPECT_DOUBLE_EQ(cell.latitude.max, kGeoLatitudeMin + 10 * (2 * kGeoLatitudeMax) / 16);
  const GeoCell east = GeoDecode(kGeoLongitudeRange, kGeoLatitudeRange, GeoNeighborsOf(hash).east);
  EXPECT_EQ(east.longitude.min, cell.longitude.max);
  EXPECT_EQ(GeoAlign52(hash), InterleaveSlowly(5, 9, 4) << 44);
}

// Long-double haversine and the distance along a parallel, computed independently.
long double HaversineLong(long double lon1, long double lat1, long double lon2, long double lat2) {
  const long double k = 3.14159265358979323846264338327950288L / 180;
  const long double u = std::sin((lat2 - lat1) * k / 2);
  const long double v = std::sin((lon2 - lon1) * k / 2);
  const long double a = u * u + std::cos(lat1 * k) * std::cos(lat2 * k) * v * v;
  return 2 * static_cast<long double>(kEarthRadiusMeters) * std::asin(std::sqrt(std::min(a, 1.0L)));
}

TEST(GeohashTest, DistancesAgreeWithALongDoubleHaversine) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> lon(-180, 180);
  std::uniform_real_distribution<double> lat(-85, 85);
  for (int i = 0; i < 100000; ++i) {
    const double a = lon(rng), b = lat(rng);
    const double c = i % 5 == 0 ? a : lon(rng);  // same meridian: the latitude-only path
    const double d = i % 7 == 0 ? b : lat(rng);
    const double got = GeoDistance(a, b, c, d);
    const long double want = HaversineLong(a, b, c, d);
    // Far from the antipode the double formula keeps about 1e-9 relative (plus a few nm).
    if (want > 19.9e6) continue;
    ASSERT_NEAR(got, static_cast<double>(want), 1e-9 * static_cast<double>(want) + 1e-8)
        << a << "," << b << " " << c << "," << d;
    ASSERT_EQ(GeoDistance(c, d, a, b), got) << "symmetric";
  }
  EXPECT_EQ(GeoLatitudeDistance(10, 11), GeoDistance(42, 10, 42, 11));
  EXPECT_EQ(GeoDistance(1, 2, 1, 2), 0);
}

TEST(GeohashTest, BoxesHoldWhatIsWithinHalfTheirSidesAlongMeridianAndParallel) {
  std::mt19937_64 rng(12);
  std::uniform_real_distribution<double> unit(0, 1);
  const long double k = 3.14159265358979323846264338327950288L / 180;
  const long double r = kEarthRadiusMeters;
  int inside = 0;
  for (int i = 0; i < 100000; ++i) {
    GeoShape box;
    box.kind = GeoShape::Kind::kBox;
    box.longitude = unit(rng) * 360 - 180;
    box.latitude = unit(rng) * 160 - 80;
    box.conversion = 1000;
    box.width = 1 + unit(rng) * 2000;
    box.height = 1 + unit(rng) * 2000;
    const double longitude = box.longitude + (unit(rng) - 0.5) * 40;
    const double latitude = std::clamp(box.latitude + (unit(rng) - 0.5) * 30, -85.0, 85.0);
    const long double along_meridian = r * std::fabs((latitude - box.latitude) * k);
    const long double along_parallel =
        2 * r *
        std::asin(std::cos(latitude * k) *
                  std::fabs(std::sin((longitude - box.longitude) * k / 2)));
    const long double half_height = box.height * 500.0L;
    const long double half_width = box.width * 500.0L;
    // Points within a micrometre of an edge could round either way.
    if (std::fabs(along_meridian - half_height) < 1e-6L ||
        std::fabs(along_parallel - half_width) < 1e-6L) {
      continue;
    }
    const bool want = along_meridian <= half_height && along_parallel <= half_width;
    double distance = -1;
    ASSERT_EQ(GeoWithinShape(box, longitude, latitude, &distance), want)
        << box.longitude << "," << box.latitude << " " << box.width << "x" << box.height << " "
        << longitude << "," << latitude;
    if (want) {
      ++inside;
      ASSERT_EQ(distance, GeoDistance(box.longitude, box.latitude, longitude, latitude));
    }
  }
  EXPECT_GT(inside, 1000);
}

// The positions a search of `shape` finds in a sorted score index, cell by cell as the command
// does it (without COUNT).
std::set<size_t> SearchCells(const std::vector<std::pair<uint64_t, size_t>>& index,
                             const std::vector<std::pair<double, double>>& positions,
                             const GeoShape& shape) {
  const GeoSearchCells cover = GeoCellsCovering(shape);
  std::set<size_t> found;
  size_t last = 0;
  for (size_t i = 0; i < 9; ++i) {
    const GeoHash cell = cover.cells[i];
    if (cell.IsZero() || (last != 0 && cell == cover.cells[last])) continue;
    GeoHash next = cell;
    ++next.bits;
    auto it =
        std::lower_bound(index.begin(), index.end(), std::make_pair(GeoAlign52(cell), size_t{0}));
    for (; it != index.end() && it->first < GeoAlign52(next); ++it) {
      double distance;
      const auto& [longitude, latitude] = positions[it->second];
      if (GeoWithinShape(shape, longitude, latitude, &distance)) {
        EXPECT_TRUE(found.insert(it->second).second) << "a position found twice";
      }
    }
    last = i;
  }
  return found;
}

// Every stored position inside the shape, by the distance of each.
std::set<size_t> ScanEverything(const std::vector<std::pair<double, double>>& positions,
                                const GeoShape& shape) {
  std::set<size_t> found;
  for (size_t i = 0; i < positions.size(); ++i) {
    double distance;
    if (GeoWithinShape(shape, positions[i].first, positions[i].second, &distance)) found.insert(i);
  }
  return found;
}

// Positions spread over the globe and packed around the places searches go wrong: the equator
// and prime meridian, the antimeridian, and both latitude limits.
std::vector<std::pair<double, double>> SeededPositions(std::mt19937_64& rng, size_t n) {
  std::uniform_real_distribution<double> unit(0, 1);
  std::vector<std::pair<double, double>> positions;
  const std::pair<double, double> spots[] = {{0, 0},     {179.9, 20},    {-179.95, -35},
                                             {45, 84.9}, {-120, -84.95}, {10, 60}};
  for (size_t i = 0; i < n; ++i) {
    double longitude, latitude;
    if (i % 3 == 0) {
      longitude = unit(rng) * 360 - 180;
      latitude = kGeoLatitudeMin + unit(rng) * (kGeoLatitudeMax - kGeoLatitudeMin);
    } else {
      const auto& [slon, slat] = spots[i % std::size(spots)];
      const double spread = i % 2 == 0 ? 0.2 : 6;
      longitude = slon + (unit(rng) - 0.5) * spread * 4;
      latitude = slat + (unit(rng) - 0.5) * spread;
      if (longitude > 180) longitude -= 360;
      if (longitude < -180) longitude += 360;
      latitude = std::clamp(latitude, kGeoLatitudeMin, kGeoLatitudeMax);
    }
    double dlon, dlat;  // what a stored member decodes to
    GeoPositionOfScore(static_cast<double>(GeoScore(longitude, latitude)), &dlon, &dlat);
    positions.emplace_back(dlon, dlat);
  }
  return positions;
}

// The nine cells find exactly the positions a scan of everything finds, for circles and boxes
// of every size from metres to thousands of kilometres, across the antimeridian and up to the
// latitude limits, except where Redis's own cells miss positions: a centre on the grid's east
// edge (longitude 180 lies in a cell one past the grid, whose neighbours are not the cells
// around it), and a shape whose bounding box runs past a pole (its longitude span turns
// negative). There the search finds no position outside the shape; the differential tests
// check Redis's own answers.
TEST(GeohashTest, TheNineCellsFindWhatAScanOfEveryPositionFinds) {
  std::mt19937_64 rng(52);
  const std::vector<std::pair<double, double>> positions = SeededPositions(rng, 30000);
  std::vector<std::pair<uint64_t, size_t>> index;
  for (size_t i = 0; i < positions.size(); ++i) {
    index.emplace_back(GeoScore(positions[i].first, positions[i].second), i);
  }
  std::sort(index.begin(), index.end());

  std::uniform_real_distribution<double> unit(0, 1);
  const std::pair<double, double> centres[] = {{0, 0},     {179.9, 20},    {-179.95, -35},
                                               {45, 84.9}, {-120, -84.95}, {10, 60},
                                               {180, 0},   {-180, 10}};
  int exact = 0, polar = 0, missed = 0, found_total = 0;
  for (int i = 0; i < 3000; ++i) {
    GeoShape shape;
    const auto& [clon, clat] = centres[static_cast<size_t>(i) % std::size(centres)];
    shape.longitude = std::clamp(clon + (unit(rng) - 0.5) * 2, -180.0, 180.0);
    shape.latitude = std::clamp(clat + (unit(rng) - 0.5) * 2, kGeoLatitudeMin, kGeoLatitudeMax);
    if (i % 10 == 0) {
      shape.longitude = unit(rng) * 360 - 180;
      shape.latitude = unit(rng) * 170 - 85;
    }
    const double size = std::pow(10.0, unit(rng) * 6.5);  // 1 m to 3000 km
    shape.conversion = i % 4 == 0 ? 1000 : 1;
    const double in_unit = size / shape.conversion;
    if (i % 2 == 0) {
      shape.kind = GeoShape::Kind::kRadius;
      shape.radius = in_unit;
    } else {
      shape.kind = GeoShape::Kind::kBox;
      shape.width = in_unit * (0.2 + unit(rng) * 2);
      shape.height = in_unit * (0.2 + unit(rng) * 2);
    }
    const std::set<size_t> cells = SearchCells(index, positions, shape);
    const std::set<size_t> scan = ScanEverything(positions, shape);
    const GeoBounds bounds = GeoBoundingBox(shape);
    found_total += static_cast<int>(cells.size());
    const bool on_the_edge = shape.longitude == 180;
    const bool past_a_pole = bounds.max_latitude > 90 || bounds.min_latitude < -90;
    if (!on_the_edge && !past_a_pole) {
      ++exact;
      ASSERT_EQ(cells, scan) << "shape " << i << " at " << shape.longitude << "," << shape.latitude
                             << " size " << size;
    } else {
      ++polar;
      ASSERT_TRUE(std::includes(scan.begin(), scan.end(), cells.begin(), cells.end()));
      missed += cells != scan;
    }
  }
  EXPECT_GT(exact, 2500);
  EXPECT_GT(polar, 300);
  EXPECT_GT(missed, 50);  // the exceptions are real
  EXPECT_GT(found_total, 100000);
}

TEST(GeohashTest, StepsFollowTheRadius) {
  EXPECT_EQ(GeoEstimateStep(0, 0), 26);
  EXPECT_EQ(GeoEstimateStep(1, 0), 24);  // 1 m: 2^25 doublings pass 20037726 m
  EXPECT_EQ(GeoEstimateStep(5e6, 0), 2);
  EXPECT_EQ(GeoEstimateStep(5e6, 70), 1);
  EXPECT_EQ(GeoEstimateStep(100000, 0), 7);
  EXPECT_EQ(GeoEstimateStep(100000, 70), 6);
  EXPECT_EQ(GeoEstimateStep(100000, -81), 5);
  EXPECT_EQ(GeoEstimateStep(1e9, 0), 1);
  EXPECT_EQ(GeoEstimateStep(HUGE_VAL, 0), 1);
}

TEST(GeohashTest, HugeAreasScanEachCellOnce) {
  GeoShape shape;
  shape.radius = 8000;
  shape.conversion = 1000;
  const GeoSearchCells cover = GeoCellsCovering(shape);
  EXPECT_EQ(cover.cells[0].step, 1);
  // At step 1 the grid is 2 x 2: north and south are the same cell, so are east and west.
  EXPECT_EQ(cover.cells[1], cover.cells[2]);
  EXPECT_EQ(cover.cells[3], cover.cells[4]);
  EXPECT_EQ(cover.cells[5], cover.cells[8]);
}

TEST(GeohashTest, DistanceTextsRoundLikeRedis72) {
  std::mt19937_64 rng(4);
  std::uniform_real_distribution<double> unit(0, 1);
  for (int i = 0; i < 100000; ++i) {
    const double d = std::pow(10.0, unit(rng) * 14 - 6);
    const double scaled = d * 10000;
    if (std::fabs(scaled - std::floor(scaled) - 0.5) < 1e-3) continue;  // ties: below
    char printed[64];
    std::snprintf(printed, sizeof(printed), "%.4f", d);
    ASSERT_EQ(Distance(d), printed);
  }
  EXPECT_EQ(Distance(0), "0.0000");
  EXPECT_EQ(Distance(-0.0), "0.0000");
  EXPECT_EQ(Distance(0.00004), "0.0000");
  EXPECT_EQ(Distance(0.1234), "0.1234");
  EXPECT_EQ(Distance(12.3456), "12.3456");
  EXPECT_EQ(Distance(20037726.37), "20037726.3700");
  // Redis 7.2 rounds the scaled value to even (llrint), where 7.0's "%.4f" rounds the exact
  // decimal: 0.00005 * 10^4 and 0.00025 * 10^4 are exactly 0.5 and 2.5 in doubles.
  EXPECT_EQ(Distance(0.00005), "0.0000");
  EXPECT_EQ(Distance(0.00025), "0.0002");
}

GeoMatch MatchAt(double distance, size_t tag) {
  return GeoMatch{0, 0, distance, static_cast<double>(tag), {}};
}

TEST(GeohashTest, FullSortsAreStableByDistance) {
  std::mt19937_64 rng(99);
  for (int round = 0; round < 300; ++round) {
    const size_t n = rng() % 300;
    std::vector<GeoMatch> matches;
    for (size_t i = 0; i < n; ++i) matches.push_back(MatchAt(static_cast<double>(rng() % 20), i));
    for (bool descending : {false, true}) {
      std::vector<GeoMatch> got = matches;
      GeoSortMatches(got, descending);
      std::vector<GeoMatch> want = matches;
      std::stable_sort(want.begin(), want.end(), [&](const GeoMatch& a, const GeoMatch& b) {
        return descending ? a.distance > b.distance : a.distance < b.distance;
      });
      for (size_t i = 0; i < n; ++i) {
        ASSERT_EQ(got[i].distance, want[i].distance);
        ASSERT_EQ(got[i].score, want[i].score) << "ties keep the scan order";
      }
    }
  }
}

// A GEOSEARCH ... COUNT 7 redis-server answered (the distances its pqsort was given, read from
// the running server, in scan order; twelve members share one coordinate): the tied members come
// out in the order Redis's partitions leave them, m7 m4 m5 m6 m8 m9 m0.
TEST(GeohashTest, PartialSortsLeaveTiesWhereRedisLeavesThem) {
  const std::pair<const char*, double> scanned[] = {
      {"m26", 69292.670270414426}, {"m32", 47892.903436857072}, {"m52", 35603.781239333803},
      {"m43", 32295.25482604963},  {"m14", 29252.832833709585}, {"m58", 27565.104696721577},
      {"m0", 7087.1961615991549},  {"m1", 7087.1961615991549},  {"m10", 7087.1961615991549},
      {"m11", 7087.1961615991549}, {"m2", 7087.1961615991549},  {"m3", 7087.1961615991549},
      {"m4", 7087.1961615991549},  {"m5", 7087.1961615991549},  {"m6", 7087.1961615991549},
      {"m7", 7087.1961615991549},  {"m8", 7087.1961615991549},  {"m9", 7087.1961615991549},
      {"m46", 16762.5038465859},   {"m37", 49567.511048270026}, {"m12", 52276.773516633126},
      {"m42", 15718.393915868126}, {"m22", 9931.6812429366364}, {"m53", 28930.456060741024},
      {"m23", 28778.046615801144}, {"m21", 44705.490745933392}, {"m54", 69651.781287384758},
      {"m50", 80572.501764465313}};
  std::vector<GeoMatch> matches;
  for (const auto& [name, distance] : scanned) matches.push_back(GeoMatch{0, 0, distance, 0, name});
  GeoPartialSortMatches(matches, 7, false);
  std::vector<std::string> first;
  for (size_t i = 0; i < 7; ++i) first.emplace_back(matches[i].member);
  EXPECT_EQ(first, (std::vector<std::string>{"m7", "m4", "m5", "m6", "m8", "m9", "m0"}));
  GeoPartialSortMatches(matches, 1, false);
  EXPECT_EQ(matches[0].distance, 7087.1961615991549);
}

TEST(GeohashTest, PartialSortsOrderTheFirstCountAndKeepEveryMatch) {
  std::mt19937_64 rng(98);
  for (int round = 0; round < 2000; ++round) {
    const size_t n = 2 + rng() % 400;
    const size_t count = 1 + rng() % (n - 1);
    const uint64_t spread = round % 3 == 0 ? 4 : 1000000;  // many ties, or nearly none
    std::vector<GeoMatch> matches;
    for (size_t i = 0; i < n; ++i)
      matches.push_back(MatchAt(static_cast<double>(rng() % spread), i));
    for (bool descending : {false, true}) {
      std::vector<GeoMatch> got = matches;
      GeoPartialSortMatches(got, count, descending);
      std::vector<double> want;
      for (const GeoMatch& m : matches) want.push_back(m.distance);
      std::sort(want.begin(), want.end());
      if (descending) std::reverse(want.begin(), want.end());
      for (size_t i = 0; i < count; ++i) ASSERT_EQ(got[i].distance, want[i]) << n << " " << count;
      std::vector<double> tags;
      for (const GeoMatch& m : got) tags.push_back(m.score);
      std::sort(tags.begin(), tags.end());
      for (size_t i = 0; i < n; ++i) ASSERT_EQ(tags[i], static_cast<double>(i));
    }
  }
}

}  // namespace
}  // namespace goblin
