// Geo positions as sorted-set scores, and the searches over them: the arithmetic behind GEOADD,
// GEOPOS, GEODIST, GEOHASH and GEOSEARCH, with no server code. Every function computes what
// Redis computes, operation for operation (the same divisions, the same rounding), so that a
// geo set written by either server reads the same in both and every number in a reply is the
// same double.
//
// A position is a cell of a 2^26 x 2^26 grid over longitude [-180, 180] and latitude
// [-85.05112878, 85.05112878] (Web Mercator's limits: the poles cannot be reached). Its score
// interleaves the two 26-bit cell numbers, longitude in the odd bits and latitude in the even
// ones, so that the cells of any coarser grid (a prefix of the bits) are one score range:
//
//    bit  51   50   49   48         3    2    1    0
//       +----+----+----+----+ ... +----+----+----+----+
//       |x25 |y25 |x24 |y24 |     | x1 | y1 | x0 | y0 |      x = floor((lon + 180) / 360 * 2^26)
//       +----+----+----+----+ ... +----+----+----+----+      y = floor((lat + 85.05112878)
//        \_______/ a step-1 cell: 4 cells cover the earth             / 170.10225756 * 2^26)
//        \_________________/ a step-2 cell
//
// A cell of step s is the first 2s bits (a GeoHash); its members are the scores
// [bits << (52 - 2s), (bits + 1) << (52 - 2s)). The score is an integer below 2^53, exact in a
// double, except at the very edges: longitude 180 or latitude 85.05112878 give x or y = 2^26,
// which sets bit 52 or 53 (Redis stores those too; no search finds them).
//
// Decoding reads any double as Redis does: converted to uint64 the way x86-64 converts (a
// negative score wraps, NaN, infinities and scores past 2^64 give fixed bit patterns), the
// centre of its cell taken, and the result clamped to the limits above.
//
// A search (GeoCellsCovering) picks the step whose cells are about the size of the search
// area, then scans the centre's cell and its eight neighbours, skipping those the shape's
// bounding box does not reach. Neighbours wrap around: east of longitude 180 is -180, and
// north of the top row is the bottom row (the poles are far outside every cell).
//
// Every function is pure: no state, nothing to lock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace goblin {

inline constexpr double kGeoLongitudeMin = -180;
inline constexpr double kGeoLongitudeMax = 180;
inline constexpr double kGeoLatitudeMin = -85.05112878;
inline constexpr double kGeoLatitudeMax = 85.05112878;
// The step of a stored position: 26 bits per coordinate, 52 in the score.
inline constexpr uint8_t kGeoStepMax = 26;
// Redis's earth radius for distances (the quadratic mean radius of WGS-84).
inline constexpr double kEarthRadiusMeters = 6372797.560856;

// The first `step` bits of each coordinate, interleaved (the low 2 * step bits of `bits`).
// step 0 with bits 0 is "no cell" (a neighbour the search skips).
struct GeoHash {
  uint64_t bits = 0;
  uint8_t step = 0;
  bool IsZero() const { return bits == 0 && step == 0; }
  bool operator==(const GeoHash&) const = default;
};

struct GeoRange {
  double min = 0;
  double max = 0;
};

// The ranges stored positions are encoded in, and those of the standard geohash (GEOHASH's
// strings use latitude [-90, 90]).
inline constexpr GeoRange kGeoLongitudeRange{kGeoLongitudeMin, kGeoLongitudeMax};
inline constexpr GeoRange kGeoLatitudeRange{kGeoLatitudeMin, kGeoLatitudeMax};
inline constexpr GeoRange kStandardLatitudeRange{-90, 90};

struct GeoCell {
  GeoHash hash;
  GeoRange longitude;
  GeoRange latitude;
};

// True when the position is within the limits GEOADD accepts. (NaN passes, as Redis's test lets
// it: the argument parsers never produce one.)
inline bool GeoPositionValid(double longitude, double latitude) {
  return !(longitude < kGeoLongitudeMin || longitude > kGeoLongitudeMax ||
           latitude < kGeoLatitudeMin || latitude > kGeoLatitudeMax);
}

// The cell of step `step` (1..32) holding the position in the given ranges. Returns false,
// leaving *hash unset, when the position is outside the stored limits or the ranges.
bool GeoEncode(const GeoRange& longitude_range, const GeoRange& latitude_range, double longitude,
               double latitude, uint8_t step, GeoHash* hash);

// The bounds of a cell in the given ranges. REQUIRES: hash.step >= 1.
GeoCell GeoDecode(const GeoRange& longitude_range, const GeoRange& latitude_range, GeoHash hash);

// The cell's first score: its bits shifted to the top of the 52.
inline uint64_t GeoAlign52(GeoHash hash) { return hash.bits << (52 - hash.step * 2); }

// The sorted-set score of a position (GEOADD). REQUIRES: GeoPositionValid.
uint64_t GeoScore(double longitude, double latitude);

// The position a score stands for (GEOPOS, and every search): the centre of its cell, clamped
// to the limits. Any double decodes (see the top of this file).
void GeoPositionOfScore(double score, double* longitude, double* latitude);

// GEOHASH's text: the standard 11-character base-32 geohash of the score's position (the
// eleventh character is always '0': a score has 52 bits, the text would need 55).
void GeoHashText(double score, char out[11]);

// The eight cells around one, at its step, wrapping at the grid's edges.
struct GeoNeighbors {
  GeoHash north, south, east, west, north_east, north_west, south_east, south_west;
};
GeoNeighbors GeoNeighborsOf(GeoHash hash);

// What a search covers: a circle (BYRADIUS) or an axis-aligned box (BYBOX) around a centre.
// Sizes are in the request's unit; `conversion` is metres per unit (m 1, km 1000, ft 0.3048,
// mi 1609.34).
struct GeoShape {
  enum class Kind { kRadius, kBox };
  Kind kind = Kind::kRadius;
  double longitude = 0;
  double latitude = 0;
  double conversion = 1;
  double radius = 0;
  double width = 0;
  double height = 0;
};

// The longitude and latitude span the shape can reach (its edges bend with latitude; the span
// is taken at the edge nearer the pole).
struct GeoBounds {
  double min_longitude = 0;
  double min_latitude = 0;
  double max_longitude = 0;
  double max_latitude = 0;
};
GeoBounds GeoBoundingBox(const GeoShape& shape);

// The step (1..26) whose cells are about as wide as radius_meters, one coarser near the poles.
int GeoEstimateStep(double radius_meters, double latitude);

// The cells a search scans, in the order it scans them: the centre's cell, then north, south,
// east, west, north-east, north-west, south-east, south-west; a cell the bounding box cannot
// reach is zero.
struct GeoSearchCells {
  GeoHash cells[9];
  GeoCell centre;
};
GeoSearchCells GeoCellsCovering(const GeoShape& shape);

// The great-circle distance in metres (haversine), and its exact form when only the latitudes
// differ.
double GeoDistance(double longitude1, double latitude1, double longitude2, double latitude2);
double GeoLatitudeDistance(double latitude1, double latitude2);

// Whether a position is inside the shape; *distance receives its distance from the centre, in
// metres, when it is. A box holds the positions whose latitude distance from the centre is at
// most half its height and whose distance along their own parallel is at most half its width.
bool GeoWithinShape(const GeoShape& shape, double longitude, double latitude, double* distance);

// A distance as every geo reply writes it: rounded to 4 decimals (Redis 7.2 scales by 10^4
// and rounds to the nearest integer, ties to even) and written with exactly 4. Returns the
// length. REQUIRES: out holds kGeoDistanceTextMax bytes.
inline constexpr size_t kGeoDistanceTextMax = 32;
size_t FormatGeoDistance(double distance, char* out);

// One position a search found.
struct GeoMatch {
  double longitude;
  double latitude;
  double distance;  // metres until the reply converts it
  double score;
  std::string_view member;
};

// ASC / DESC of every match, by distance: the order glibc's qsort gives (a stable top-down
// merge sort), which is what Redis returns when no COUNT cuts the result.
void GeoSortMatches(std::span<GeoMatch> matches, bool descending);

// ASC / DESC when COUNT keeps only the first `count` (< matches.size()): Redis's pqsort, a
// Bentley-McIlroy quicksort that stops sorting partitions outside [0, count). Matches at equal
// distances come out in the order that algorithm leaves them, which is what makes a cut reply
// match Redis's byte for byte. REQUIRES: count >= 1.
void GeoPartialSortMatches(std::span<GeoMatch> matches, size_t count, bool descending);

}  // namespace goblin
