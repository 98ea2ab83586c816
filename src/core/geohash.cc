#include "core/geohash.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace goblin {
namespace {

// Degrees to radians and back as Redis writes them: a multiplication by, and a division by,
// the double nearest pi / 180 (not pi then 180, which rounds differently).
constexpr double kRadiansPerDegree = M_PI / 180.0;
double ToRadians(double degrees) { return degrees * kRadiansPerDegree; }
double ToDegrees(double radians) { return radians / kRadiansPerDegree; }

// Half the earth's circumference in Web Mercator metres: the span a step-0 cell would have.
constexpr double kMercatorMax = 20037726.37;

// Spreads the 32 bits of v to the even bit positions of the result.
uint64_t SpreadBits(uint32_t v) {
  uint64_t x = v;
  x = (x | (x << 16)) & 0x0000FFFF0000FFFFULL;
  x = (x | (x << 8)) & 0x00FF00FF00FF00FFULL;
  x = (x | (x << 4)) & 0x0F0F0F0F0F0F0F0FULL;
  x = (x | (x << 2)) & 0x3333333333333333ULL;
  x = (x | (x << 1)) & 0x5555555555555555ULL;
  return x;
}

// Gathers the even bit positions of x into 32 bits (SpreadBits backwards).
uint32_t GatherBits(uint64_t x) {
  x &= 0x5555555555555555ULL;
  x = (x | (x >> 1)) & 0x3333333333333333ULL;
  x = (x | (x >> 2)) & 0x0F0F0F0F0F0F0F0FULL;
  x = (x | (x >> 4)) & 0x00FF00FF00FF00FFULL;
  x = (x | (x >> 8)) & 0x0000FFFF0000FFFFULL;
  x = (x | (x >> 16)) & 0x00000000FFFFFFFFULL;
  return static_cast<uint32_t>(x);
}

// A score as Redis's (uint64_t) cast of it gives on x86-64: below 2^63 the truncating
// conversion to int64 (cvttsd2si: 0x8000000000000000 for anything it cannot represent, NaN
// included), from 2^63 on the same conversion of score - 2^63 with the top bit flipped.
uint64_t ScoreBits(double score) {
  constexpr double kTwo63 = 9223372036854775808.0;
  constexpr uint64_t kIndefinite = 0x8000000000000000ULL;
  auto truncate = [](double v) -> uint64_t {
    if (v >= -kTwo63 && v < kTwo63) return static_cast<uint64_t>(static_cast<int64_t>(v));
    return kIndefinite;
  };
  if (score >= kTwo63) return truncate(score - kTwo63) ^ kIndefinite;
  return truncate(score);
}

// Moves a cell one column east (+1) or west (-1), or one row north or south, wrapping at the
// edge of the grid: the coordinate's bits are incremented in place, the carry running through
// the other coordinate's positions (filled with ones first when decrementing).
void MoveCell(GeoHash* hash, int direction, bool longitude) {
  const uint64_t own = longitude ? 0xAAAAAAAAAAAAAAAAULL : 0x5555555555555555ULL;
  const uint64_t other = ~own;
  const int shift = 64 - hash->step * 2;
  uint64_t mine = hash->bits & own;
  const uint64_t theirs = hash->bits & other;
  const uint64_t filler = other >> shift;
  if (direction > 0) {
    mine = mine + (filler + 1);
  } else {
    mine = (mine | filler) - (filler + 1);
  }
  mine &= own >> shift;
  hash->bits = mine | theirs;
}

GeoHash Moved(GeoHash hash, int east, int north) {
  if (east != 0) MoveCell(&hash, east, /*longitude=*/true);
  if (north != 0) MoveCell(&hash, north, /*longitude=*/false);
  return hash;
}

// The cell at `step` around the centre, with its neighbours.
struct CellAndNeighbors {
  GeoHash hash;
  GeoNeighbors neighbors;
  GeoCell cell;
};

CellAndNeighbors CellAt(double longitude, double latitude, int step) {
  CellAndNeighbors result;
  GeoEncode(kGeoLongitudeRange, kGeoLatitudeRange, longitude, latitude, static_cast<uint8_t>(step),
            &result.hash);
  result.neighbors = GeoNeighborsOf(result.hash);
  result.cell = GeoDecode(kGeoLongitudeRange, kGeoLatitudeRange, result.hash);
  return result;
}

// Redis's qsort comparator for geo matches: 1, 0 or -1 by distance (a NaN distance compares
// below everything, and everything below it, exactly as there).
int CompareAscending(const GeoMatch& a, const GeoMatch& b) {
  if (a.distance > b.distance) return 1;
  if (a.distance == b.distance) return 0;
  return -1;
}

template <bool kDescending>
int Compare(const GeoMatch& a, const GeoMatch& b) {
  const int c = CompareAscending(a, b);
  return kDescending ? -c : c;
}

// glibc's msort: halves of n / 2 and n - n / 2, sorted, then merged taking from the left half
// while it compares <= 0.
template <bool kDescending>
void MergeSort(GeoMatch* items, size_t n, GeoMatch* scratch) {
  if (n <= 1) return;
  size_t left = n / 2;
  size_t right = n - left;
  GeoMatch* a = items;
  GeoMatch* b = items + left;
  MergeSort<kDescending>(a, left, scratch);
  MergeSort<kDescending>(b, right, scratch);
  GeoMatch* out = scratch;
  while (left > 0 && right > 0) {
    if (Compare<kDescending>(*a, *b) <= 0) {
      *out++ = *a++;
      --left;
    } else {
      *out++ = *b++;
      --right;
    }
  }
  out = std::copy(a, a + left, out);
  std::copy(scratch, out, items);  // what is left of the right half is already in place
}

// Redis's pqsort (NetBSD's qsort, from Bentley and McIlroy's "Engineering a Sort Function",
// without NetBSD's switch to insertion sort when a pass swaps nothing, and with partitions
// entirely outside [first, last] left unsorted), over indexes into v.
template <bool kDescending>
class PartialQuicksort {
 public:
  PartialQuicksort(GeoMatch* v, size_t first, size_t last) : v_(v), first_(first), last_(last) {}

  void Sort(ptrdiff_t a, ptrdiff_t n) {
    for (;;) {
      if (n < 7) {
        InsertionSort(a, n);
        return;
      }
      ptrdiff_t pm = a + n / 2;
      if (n > 7) {
        ptrdiff_t pl = a;
        ptrdiff_t pn = a + n - 1;
        if (n > 40) {
          const ptrdiff_t d = n / 8;
          pl = Median3(pl, pl + d, pl + 2 * d);
          pm = Median3(pm - d, pm, pm + d);
          pn = Median3(pn - 2 * d, pn - d, pn);
        }
        pm = Median3(pl, pm, pn);
      }
      Swap(a, pm);
      ptrdiff_t pa = a + 1;
      ptrdiff_t pb = a + 1;
      ptrdiff_t pc = a + n - 1;
      ptrdiff_t pd = a + n - 1;
      for (;;) {
        int c;
        while (pb <= pc && (c = Cmp(pb, a)) <= 0) {
          if (c == 0) Swap(pa++, pb);
          ++pb;
        }
        while (pb <= pc && (c = Cmp(pc, a)) >= 0) {
          if (c == 0) Swap(pc, pd--);
          --pc;
        }
        if (pb > pc) break;
        Swap(pb++, pc--);
      }
      const ptrdiff_t pn = a + n;
      ptrdiff_t r = std::min(pa - a, pb - pa);
      SwapRuns(a, pb - r, r);
      r = std::min(pd - pc, pn - pd - 1);
      SwapRuns(pb, pn - r, r);
      if ((r = pb - pa) > 1 && Overlaps(a, r)) Sort(a, r);
      if ((r = pd - pc) > 1) {
        a = pn - r;
        n = r;
        if (Overlaps(a, n)) continue;
      }
      return;
    }
  }

 private:
  int Cmp(ptrdiff_t i, ptrdiff_t j) const { return Compare<kDescending>(v_[i], v_[j]); }
  void Swap(ptrdiff_t i, ptrdiff_t j) { std::swap(v_[i], v_[j]); }
  void SwapRuns(ptrdiff_t i, ptrdiff_t j, ptrdiff_t n) {
    for (ptrdiff_t k = 0; k < n; ++k) Swap(i + k, j + k);
  }
  ptrdiff_t Median3(ptrdiff_t a, ptrdiff_t b, ptrdiff_t c) const {
    if (Cmp(a, b) < 0) return Cmp(b, c) < 0 ? b : (Cmp(a, c) < 0 ? c : a);
    return Cmp(b, c) > 0 ? b : (Cmp(a, c) < 0 ? a : c);
  }
  void InsertionSort(ptrdiff_t a, ptrdiff_t n) {
    for (ptrdiff_t pm = a + 1; pm < a + n; ++pm) {
      for (ptrdiff_t pl = pm; pl > a && Cmp(pl - 1, pl) > 0; --pl) Swap(pl, pl - 1);
    }
  }
  // Whether the partition [a, a + n) holds a rank of [first_, last_], as pqsort decides it:
  // only a partition with both ends of the range on one side of it is skipped.
  bool Overlaps(ptrdiff_t a, ptrdiff_t n) const {
    const size_t lo = static_cast<size_t>(a);
    const size_t end = static_cast<size_t>(a + n);
    return !((first_ < lo && last_ < lo) || (first_ >= end && last_ >= end));
  }

  GeoMatch* v_;
  size_t first_;
  size_t last_;
};

}  // namespace

bool GeoEncode(const GeoRange& longitude_range, const GeoRange& latitude_range, double longitude,
               double latitude, uint8_t step, GeoHash* hash) {
  if (step > 32 || step == 0) return false;
  if (latitude_range.min == 0 && latitude_range.max == 0) return false;
  if (longitude_range.min == 0 && longitude_range.max == 0) return false;
  if (!GeoPositionValid(longitude, latitude)) return false;
  if (latitude < latitude_range.min || latitude > latitude_range.max ||
      longitude < longitude_range.min || longitude > longitude_range.max) {
    return false;
  }
  double latitude_offset =
      (latitude - latitude_range.min) / (latitude_range.max - latitude_range.min);
  double longitude_offset =
      (longitude - longitude_range.min) / (longitude_range.max - longitude_range.min);
  const double cells = static_cast<double>(1ULL << step);
  latitude_offset *= cells;
  longitude_offset *= cells;
  hash->step = step;
  hash->bits = SpreadBits(static_cast<uint32_t>(latitude_offset)) |
               (SpreadBits(static_cast<uint32_t>(longitude_offset)) << 1);
  return true;
}

GeoCell GeoDecode(const GeoRange& longitude_range, const GeoRange& latitude_range, GeoHash hash) {
  GeoCell cell;
  cell.hash = hash;
  const uint32_t y = GatherBits(hash.bits);
  const uint32_t x = GatherBits(hash.bits >> 1);
  const double cells = static_cast<double>(1ULL << hash.step);
  const double latitude_scale = latitude_range.max - latitude_range.min;
  const double longitude_scale = longitude_range.max - longitude_range.min;
  // (x + 1) is 32-bit arithmetic, as in Redis: it wraps for the all-ones cell of a bogus score.
  cell.latitude.min = latitude_range.min + (y * 1.0 / cells) * latitude_scale;
  cell.latitude.max =
      latitude_range.min + (static_cast<uint32_t>(y + 1) * 1.0 / cells) * latitude_scale;
  cell.longitude.min = longitude_range.min + (x * 1.0 / cells) * longitude_scale;
  cell.longitude.max =
      longitude_range.min + (static_cast<uint32_t>(x + 1) * 1.0 / cells) * longitude_scale;
  return cell;
}

uint64_t GeoScore(double longitude, double latitude) {
  GeoHash hash;
  GeoEncode(kGeoLongitudeRange, kGeoLatitudeRange, longitude, latitude, kGeoStepMax, &hash);
  return GeoAlign52(hash);
}

void GeoPositionOfScore(double score, double* longitude, double* latitude) {
  const GeoCell cell =
      GeoDecode(kGeoLongitudeRange, kGeoLatitudeRange, GeoHash{ScoreBits(score), kGeoStepMax});
  *longitude =
      std::clamp((cell.longitude.min + cell.longitude.max) / 2, kGeoLongitudeMin, kGeoLongitudeMax);
  *latitude =
      std::clamp((cell.latitude.min + cell.latitude.max) / 2, kGeoLatitudeMin, kGeoLatitudeMax);
}

void GeoHashText(double score, char out[11]) {
  static constexpr char kAlphabet[] = "0123456789bcdefghjkmnpqrstuvwxyz";
  double longitude;
  double latitude;
  GeoPositionOfScore(score, &longitude, &latitude);
  GeoHash hash;
  GeoEncode(kGeoLongitudeRange, kStandardLatitudeRange, longitude, latitude, kGeoStepMax, &hash);
  for (int i = 0; i < 10; ++i) out[i] = kAlphabet[(hash.bits >> (52 - (i + 1) * 5)) & 0x1F];
  out[10] = '0';
}

GeoNeighbors GeoNeighborsOf(GeoHash hash) {
  GeoNeighbors n;
  n.east = Moved(hash, 1, 0);
  n.west = Moved(hash, -1, 0);
  n.south = Moved(hash, 0, -1);
  n.north = Moved(hash, 0, 1);
  n.north_west = Moved(hash, -1, 1);
  n.north_east = Moved(hash, 1, 1);
  n.south_east = Moved(hash, 1, -1);
  n.south_west = Moved(hash, -1, -1);
  return n;
}

GeoBounds GeoBoundingBox(const GeoShape& shape) {
  const bool circle = shape.kind == GeoShape::Kind::kRadius;
  const double height = shape.conversion * (circle ? shape.radius : shape.height / 2);
  const double width = shape.conversion * (circle ? shape.radius : shape.width / 2);
  const double latitude_delta = ToDegrees(height / kEarthRadiusMeters);
  const double longitude_delta_top =
      ToDegrees(width / kEarthRadiusMeters / std::cos(ToRadians(shape.latitude + latitude_delta)));
  const double longitude_delta_bottom =
      ToDegrees(width / kEarthRadiusMeters / std::cos(ToRadians(shape.latitude - latitude_delta)));
  // The edge nearer the pole is the wider one in degrees.
  const double longitude_delta = shape.latitude < 0 ? longitude_delta_bottom : longitude_delta_top;
  GeoBounds bounds;
  bounds.min_longitude = shape.longitude - longitude_delta;
  bounds.max_longitude = shape.longitude + longitude_delta;
  bounds.min_latitude = shape.latitude - latitude_delta;
  bounds.max_latitude = shape.latitude + latitude_delta;
  return bounds;
}

int GeoEstimateStep(double radius_meters, double latitude) {
  if (radius_meters == 0) return kGeoStepMax;
  int step = 1;
  while (radius_meters < kMercatorMax) {
    radius_meters *= 2;
    ++step;
  }
  step -= 2;  // a cell twice the radius or more: the area fits the nine cells in most cases
  if (latitude > 66 || latitude < -66) {
    --step;
    if (latitude > 80 || latitude < -80) --step;
  }
  return std::clamp(step, 1, static_cast<int>(kGeoStepMax));
}

GeoSearchCells GeoCellsCovering(const GeoShape& shape) {
  const GeoBounds bounds = GeoBoundingBox(shape);
  double radius_meters = shape.kind == GeoShape::Kind::kRadius
                             ? shape.radius
                             : std::sqrt((shape.width / 2) * (shape.width / 2) +
                                         (shape.height / 2) * (shape.height / 2));
  radius_meters *= shape.conversion;
  int step = GeoEstimateStep(radius_meters, shape.latitude);
  CellAndNeighbors at = CellAt(shape.longitude, shape.latitude, step);

  // Near a cell's edge the estimated step can leave the area poking out past a neighbour:
  // then one step coarser.
  const GeoNeighbors& n = at.neighbors;
  const bool too_fine =
      GeoDecode(kGeoLongitudeRange, kGeoLatitudeRange, n.north).latitude.max <
          bounds.max_latitude ||
      GeoDecode(kGeoLongitudeRange, kGeoLatitudeRange, n.south).latitude.min >
          bounds.min_latitude ||
      GeoDecode(kGeoLongitudeRange, kGeoLatitudeRange, n.east).longitude.max <
          bounds.max_longitude ||
      GeoDecode(kGeoLongitudeRange, kGeoLatitudeRange, n.west).longitude.min > bounds.min_longitude;
  if (step > 1 && too_fine) {
    --step;
    at = CellAt(shape.longitude, shape.latitude, step);
  }

  // Neighbours on a side the area does not reach are skipped.
  GeoNeighbors& kept = at.neighbors;
  if (step >= 2) {
    if (at.cell.latitude.min < bounds.min_latitude) {
      kept.south = kept.south_west = kept.south_east = GeoHash{};
    }
    if (at.cell.latitude.max > bounds.max_latitude) {
      kept.north = kept.north_east = kept.north_west = GeoHash{};
    }
    if (at.cell.longitude.min < bounds.min_longitude) {
      kept.west = kept.south_west = kept.north_west = GeoHash{};
    }
    if (at.cell.longitude.max > bounds.max_longitude) {
      kept.east = kept.south_east = kept.north_east = GeoHash{};
    }
  }
  GeoSearchCells result;
  result.cells[0] = at.hash;
  result.cells[1] = kept.north;
  result.cells[2] = kept.south;
  result.cells[3] = kept.east;
  result.cells[4] = kept.west;
  result.cells[5] = kept.north_east;
  result.cells[6] = kept.north_west;
  result.cells[7] = kept.south_east;
  result.cells[8] = kept.south_west;
  result.centre = at.cell;
  return result;
}

double GeoLatitudeDistance(double latitude1, double latitude2) {
  return kEarthRadiusMeters * std::fabs(ToRadians(latitude2) - ToRadians(latitude1));
}

double GeoDistance(double longitude1, double latitude1, double longitude2, double latitude2) {
  const double lon1 = ToRadians(longitude1);
  const double lon2 = ToRadians(longitude2);
  const double v = std::sin((lon2 - lon1) / 2);
  // Same meridian: the haversine reduces to the latitude difference (Redis 7.2 takes this
  // path, exactly, whenever the sine is 0).
  if (v == 0.0) return GeoLatitudeDistance(latitude1, latitude2);
  const double lat1 = ToRadians(latitude1);
  const double lat2 = ToRadians(latitude2);
  const double u = std::sin((lat2 - lat1) / 2);
  const double a = u * u + std::cos(lat1) * std::cos(lat2) * v * v;
  return 2.0 * kEarthRadiusMeters * std::asin(std::sqrt(a));
}

bool GeoWithinShape(const GeoShape& shape, double longitude, double latitude, double* distance) {
  if (shape.kind == GeoShape::Kind::kRadius) {
    *distance = GeoDistance(shape.longitude, shape.latitude, longitude, latitude);
    return !(*distance > shape.radius * shape.conversion);
  }
  const double width = shape.width * shape.conversion;
  const double height = shape.height * shape.conversion;
  // The latitude test is the cheap one, so it goes first.
  if (GeoLatitudeDistance(latitude, shape.latitude) > height / 2) return false;
  if (GeoDistance(longitude, latitude, shape.longitude, latitude) > width / 2) return false;
  *distance = GeoDistance(shape.longitude, shape.latitude, longitude, latitude);
  return true;
}

size_t FormatGeoDistance(double distance, char* out) {
  if (distance == 0) {
    std::copy_n("0.0000", 6, out);
    return 6;
  }
  // llrint of NaN is x86's "integer indefinite", INT64_MIN, as Redis then prints it.
  const long long scaled = std::llrint(distance * 10000.0);
  char* p = out;
  unsigned long long magnitude = static_cast<unsigned long long>(scaled);
  if (scaled < 0) {
    *p++ = '-';
    magnitude = 0ULL - magnitude;
  }
  char digits[24];
  size_t n = 0;
  do {
    digits[n++] = static_cast<char>('0' + magnitude % 10);
    magnitude /= 10;
  } while (magnitude > 0 || n < 5);  // at least one integer digit and four decimals
  for (size_t i = n; i > 4; --i) *p++ = digits[i - 1];
  *p++ = '.';
  for (size_t i = 4; i > 0; --i) *p++ = digits[i - 1];
  return static_cast<size_t>(p - out);
}

void GeoSortMatches(std::span<GeoMatch> matches, bool descending) {
  if (matches.size() <= 1) return;
  std::vector<GeoMatch> scratch(matches.size());
  if (descending) {
    MergeSort<true>(matches.data(), matches.size(), scratch.data());
  } else {
    MergeSort<false>(matches.data(), matches.size(), scratch.data());
  }
}

void GeoPartialSortMatches(std::span<GeoMatch> matches, size_t count, bool descending) {
  const auto n = static_cast<ptrdiff_t>(matches.size());
  if (descending) {
    PartialQuicksort<true>(matches.data(), 0, count - 1).Sort(0, n);
  } else {
    PartialQuicksort<false>(matches.data(), 0, count - 1).Sort(0, n);
  }
}

}  // namespace goblin
