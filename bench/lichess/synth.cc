// synth: a deterministic Lichess-shaped rating trace (see bench/lichess/README.md, "synth model").
//
//   synth --players P --updates U [--seed S] [--days D] [--format events|cmd|resp]
//         [--key leaderboard] [-o OUT] [--window-events N]
//
// Emits exactly U rating observations over exactly P distinct players (every player appears at
// least once), dated from 2012-12-31 over D days (default 4656 = through 2025-09-30), in
// chronological order, in the output formats of pgn2events (events TSV, inline `cmd`, or `resp`,
// with an `ECHO lichess-date:YYYY-MM-DD` marker after each date). The same arguments always give
// the same bytes.
//
// Build: see bench/lichess/Makefile, or  g++ -std=c++20 -O2 -o synth synth.cc
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <string>
#include <string_view>
#include <vector>

#include "payload_writer.h"

namespace {

// ---- output: payload_writer.h ----------------------------------------------------------------
using lichess::Format;
using lichess::Writer;

// ---- randomness: splitmix64 streams keyed by (seed, player, purpose) --------------------------
inline uint64_t mix64(uint64_t z) {
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

struct Rng {
    uint64_t s;
    Rng(uint64_t seed, uint64_t a, uint64_t b) : s(mix64(mix64(seed ^ 0x5eed) ^ mix64(a * 0x100000001b3ULL + b))) {}
    uint64_t next() { return mix64(s++); }
    double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
    uint64_t below(uint64_t n) { return static_cast<uint64_t>((static_cast<__uint128_t>(next()) * n) >> 64); }
    double normal() {  // Box-Muller, one value per call (simple and reproducible)
        double u1 = 1.0 - uniform(), u2 = uniform();
        return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
    }
};

// ---- calendar ----------------------------------------------------------------------------------
constexpr int kRealDays = 4656;  // 2012-12-31 .. 2025-09-30 inclusive

// days since 1970-01-01 -> y/m/d (Howard Hinnant's civil_from_days)
void civil(int64_t z, int& y, unsigned& m, unsigned& d) {
    z += 719468;
    const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    const unsigned doe = static_cast<unsigned>(z - era * 146097);
    const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    const int64_t yy = static_cast<int64_t>(yoe) + era * 400;
    const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const unsigned mp = (5 * doy + 2) / 153;
    d = doy - (153 * mp + 2) / 5 + 1;
    m = mp < 10 ? mp + 3 : mp - 9;
    y = static_cast<int>(yy + (m <= 2));
}
constexpr int64_t kStartEpochDay = 15705;  // 2012-12-31

// Approximate standard rated games per month on Lichess (database.lichess.org), log-interpolated
// between these anchors: {year, month, games}.
struct Anchor { int y, m; double games; };
constexpr Anchor kAnchors[] = {
    {2012, 12, 0.10e6}, {2013, 1, 0.12e6}, {2014, 1, 0.7e6},  {2015, 1, 1.5e6},  {2016, 1, 5.0e6},
    {2017, 1, 10.0e6},  {2018, 1, 17.0e6}, {2019, 1, 33.0e6}, {2020, 1, 46.0e6}, {2020, 4, 66.0e6},
    {2021, 1, 90.0e6},  {2022, 1, 87.0e6}, {2023, 1, 100.0e6}, {2024, 1, 95.0e6}, {2025, 1, 100.0e6},
    {2025, 9, 95.0e6},
};

double games_per_day_at(int real_day) {
    int y; unsigned m, d;
    civil(kStartEpochDay + real_day, y, m, d);
    double mi = y * 12.0 + (m - 1) + (d - 1) / 31.0;
    const int na = sizeof kAnchors / sizeof kAnchors[0];
    for (int i = 0; i + 1 < na; ++i) {
        double m0 = kAnchors[i].y * 12.0 + kAnchors[i].m - 1, m1 = kAnchors[i + 1].y * 12.0 + kAnchors[i + 1].m - 1;
        if (mi <= m1 || i + 2 == na) {
            double t = std::clamp((mi - m0) / (m1 - m0), 0.0, 1.0);
            return std::exp(std::log(kAnchors[i].games) * (1 - t) + std::log(kAnchors[i + 1].games) * t) / 30.44;
        }
    }
    return 1.0;
}

// ---- model parameters (documented in README.md) ------------------------------------------------
constexpr double kActivitySigma = 2.0;      // lognormal sigma of a player's share of all games
constexpr double kRateMedian = 2.0;         // games per active day, lognormal median ...
constexpr double kRateSigma = 0.8;          // ... and sigma
constexpr double kMaxRate = 300.0;          // games per day at most
constexpr int kControls = 5;                // bullet, blitz, rapid, classical, correspondence
constexpr double kControlShare[kControls] = {0.30, 0.42, 0.20, 0.05, 0.03};
constexpr double kSkillMean = 1500, kSkillSd = 350, kControlSkillSd = 120;
constexpr double kRd0 = 500, kRdMin = 45, kRdMax = 500, kRdGrowthPerDay = 120;  // RD^2 grows c^2 = 120/day
constexpr double kOppSd = 120, kOppRd = 60, kDrawRate = 0.06, kSkillWalkSd = 4;
constexpr int kMinRating = 400, kMaxRating = 4000;
// Username lengths 2..20 (Lichess-like spread, mean about 10).
constexpr double kLenWeight[21] = {0, 0, 0.1, 0.7, 2.5, 5, 8, 10.5, 12, 12, 11, 9.5, 8, 6, 4.5, 3.5, 2.5, 1.7, 1.2, 0.8, 0.5};

constexpr int kUnitsPerDay = 8640;  // 10-second time units
constexpr int kPlayerBits = 26, kRatingBits = 12;

// ---- usernames -----------------------------------------------------------------------------------
// Names are unique case-insensitively by construction: a player is the k-th of its length class; k
// goes through an affine bijection mod the size of a "core" (first char a letter, up to 4 middle
// chars from [a-z0-9_-], last char from [a-z0-9]); further middle chars come from a per-player
// hash (mostly letters). Letter case is then randomised, which keeps case-insensitive uniqueness.
constexpr char kFirst[] = "abcdefghijklmnopqrstuvwxyz";
constexpr char kMid[] = "abcdefghijklmnopqrstuvwxyz0123456789_-";
constexpr char kLast[] = "abcdefghijklmnopqrstuvwxyz0123456789";

struct NameSpace {
    uint64_t cap[21] = {};
    uint64_t mul[21] = {}, add[21] = {};
    void init(uint64_t seed) {
        for (int len = 2; len <= 20; ++len) {
            int core_mid = std::min(len - 2, 4);
            uint64_t c = 26 * 36;
            for (int i = 0; i < core_mid; ++i) c *= 38;
            cap[len] = c;
            Rng r(seed, 0xa11ce, len);
            uint64_t a = r.below(c - 1) + 1;
            while (std::gcd(a, c) != 1) a = a % (c - 1) + 1;
            mul[len] = a;
            add[len] = r.below(c);
        }
    }
    // writes the name of (len, k) for player id into out, returns its length
    int name(uint64_t seed, uint32_t id, int len, uint64_t k, char* out) const {
        uint64_t v = static_cast<uint64_t>((static_cast<__uint128_t>(k) * mul[len] + add[len]) % cap[len]);
        int core_mid = std::min(len - 2, 4);
        out[0] = kFirst[v % 26]; v /= 26;
        out[len - 1] = kLast[v % 36]; v /= 36;
        for (int i = 0; i < core_mid; ++i) { out[1 + i] = kMid[v % 38]; v /= 38; }
        Rng r(seed, id, 7);
        for (int i = 1 + core_mid; i < len - 1; ++i) {
            double u = r.uniform();
            if (u < 0.85) out[i] = kFirst[r.below(26)];
            else if (u < 0.98) out[i] = static_cast<char>('0' + r.below(10));
            else out[i] = u < 0.99 ? '_' : '-';
        }
        // case: capitalised first letter 40%, other letters 8%
        for (int i = 0; i < len; ++i) {
            if (out[i] >= 'a' && out[i] <= 'z' && r.uniform() < (i == 0 ? 0.40 : 0.08)) out[i] = static_cast<char>(out[i] - 32);
        }
        return len;
    }
};

struct Player {
    uint32_t n;        // observations
    uint16_t a, span;  // activity clock: first possible day, active days [a, a+span)
    uint16_t cal_lo, cal_hi;  // calendar days the history can fall on: [cal_lo, cal_hi)
    uint8_t len;       // name length
    uint32_t k;        // index within the length class
};

struct Config {
    uint64_t players = 0, updates = 0, seed = 1;
    int days = kRealDays;
    Format fmt = Format::Events;
    std::string key = "leaderboard", out = "-";
    uint64_t window_events = 64ull << 20;
};

// The activity clock -> calendar map. Player histories are laid out on an "activity clock" (arrival
// density following Lichess's monthly game counts, uniform play within an active span); the
// cumulative expected volume on that clock is then mapped monotonically onto the cumulative target
// volume of the calendar, so the trace's daily update count follows Lichess's growth while every
// player's updates keep their order.
struct Warp {
    std::vector<double> E, W;  // cumulative fractions at day starts, size D+1
    int D = 0;
    double to_calendar_day(double x) const {  // x, result: fractional days
        if (x <= 0) return 0;
        if (x >= D) return D;
        int d = static_cast<int>(x);
        double ex = E[d] + (x - d) * (E[d + 1] - E[d]);
        int c = static_cast<int>(std::upper_bound(W.begin(), W.end(), ex) - W.begin()) - 1;
        c = std::clamp(c, 0, D - 1);
        double span = W[c + 1] - W[c];
        double frac = span > 0 ? (ex - W[c]) / span : 0;
        return c + std::clamp(frac, 0.0, 1.0);
    }
};

// Generate one player's whole history (deterministic); call sink(minute, rating) in order.
template <class Sink>
void player_history(const Config& cfg, const Warp& warp, uint32_t id, const Player& p, std::vector<uint32_t>& minutes, Sink&& sink) {
    Rng r(cfg.seed, id, 2);
    // Timestamps: n uniform times in [a, a+span) activity days, sorted, mapped to the calendar,
    // then made distinct (10-second units).
    const double lo = p.a, width = p.span;
    std::vector<double> t(p.n);
    for (auto& x : t) x = lo + width * r.uniform();
    std::sort(t.begin(), t.end());
    minutes.resize(p.n);
    for (size_t j = 0; j < t.size(); ++j)
        minutes[j] = static_cast<uint32_t>(std::min<double>(warp.to_calendar_day(t[j]) * kUnitsPerDay, warp.D * double(kUnitsPerDay) - 1));
    for (size_t j = 1; j < minutes.size(); ++j)
        if (minutes[j] <= minutes[j - 1]) minutes[j] = minutes[j - 1] + 1;
    const uint32_t hi = static_cast<uint32_t>(warp.D) * kUnitsPerDay - 1;
    if (!minutes.empty() && minutes.back() > hi) {
        minutes.back() = hi;
        for (size_t j = minutes.size() - 1; j-- > 0;)
            if (minutes[j] >= minutes[j + 1]) minutes[j] = minutes[j + 1] - 1;
    }
    // Player: skill per control, control preferences.
    double skill = kSkillMean + kSkillSd * r.normal();
    double cskill[kControls], pref[kControls], rating[kControls], rd[kControls];
    double last_day[kControls];
    double tot = 0;
    for (int c = 0; c < kControls; ++c) {
        cskill[c] = skill + kControlSkillSd * r.normal();
        pref[c] = kControlShare[c] * std::exp(r.normal());
        tot += pref[c];
        rating[c] = 1500;
        rd[c] = kRd0;
        last_day[c] = -1;
    }
    constexpr double q = 0.0057564627324851;  // ln 10 / 400
    constexpr double pi2 = 9.869604401089358;
    const double g_opp = 1.0 / std::sqrt(1.0 + 3.0 * q * q * kOppRd * kOppRd / pi2);
    for (uint32_t m : minutes) {
        double u = r.uniform() * tot;
        int c = 0;
        while (c + 1 < kControls && u >= pref[c]) { u -= pref[c]; ++c; }
        double day = m / static_cast<double>(kUnitsPerDay);
        if (last_day[c] >= 0) rd[c] = std::min(kRdMax, std::sqrt(rd[c] * rd[c] + kRdGrowthPerDay * (day - last_day[c])));
        last_day[c] = day;
        int observed = static_cast<int>(std::lround(rating[c]));
        sink(m, std::clamp(observed, kMinRating, kMaxRating));
        // One game: opponent near our rating, result drawn from true skill, Glicko update.
        double opp = rating[c] + kOppSd * r.normal();
        double pwin = 1.0 / (1.0 + std::pow(10.0, (opp - cskill[c]) / 400.0));
        double v = r.uniform();
        double s = v < kDrawRate ? 0.5 : (v < kDrawRate + (1 - kDrawRate) * pwin ? 1.0 : 0.0);
        double e = 1.0 / (1.0 + std::pow(10.0, -g_opp * (rating[c] - opp) / 400.0));
        double d2inv = q * q * g_opp * g_opp * e * (1 - e);
        double rd2 = 1.0 / (1.0 / (rd[c] * rd[c]) + d2inv);
        rating[c] = std::clamp(rating[c] + q * rd2 * g_opp * (s - e), double(kMinRating), double(kMaxRating));
        rd[c] = std::max(kRdMin, std::sqrt(rd2));
        cskill[c] += kSkillWalkSd * r.normal();
    }
}

[[noreturn]] void usage(int code) {
    std::fprintf(code ? stderr : stdout,
                 "usage: synth --players P --updates U [--seed S] [--days D] [--format events|cmd|resp]\n"
                 "             [--key leaderboard] [-o OUT] [--window-events N] [--quiet]\n");
    std::exit(code);
}

}  // namespace

int main(int argc, char** argv) {
    Config cfg;
    bool quiet = false;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto need = [&]() -> std::string {
            if (i + 1 >= argc) usage(2);
            return argv[++i];
        };
        auto num = [&]() -> uint64_t {
            std::string v = need();
            char* end;
            errno = 0;
            unsigned long long x = std::strtoull(v.c_str(), &end, 10);
            if (v.empty() || *end || errno || v[0] == '-') { std::fprintf(stderr, "synth: bad number for %s: %s\n", a.c_str(), v.c_str()); std::exit(2); }
            return x;
        };
        if (a == "--players") cfg.players = num();
        else if (a == "--updates") cfg.updates = num();
        else if (a == "--seed") cfg.seed = num();
        else if (a == "--days") cfg.days = static_cast<int>(num());
        else if (a == "--window-events") cfg.window_events = num();
        else if (a == "--key") cfg.key = need();
        else if (a == "-o" || a == "--output") cfg.out = need();
        else if (a == "--quiet") quiet = true;
        else if (a == "--format") {
            std::string f = need();
            if (f == "events") cfg.fmt = Format::Events;
            else if (f == "cmd") cfg.fmt = Format::Cmd;
            else if (f == "resp") cfg.fmt = Format::Resp;
            else { std::fprintf(stderr, "synth: unknown format '%s'\n", f.c_str()); return 2; }
        } else if (a == "-h" || a == "--help") usage(0);
        else { std::fprintf(stderr, "synth: unknown argument %s\n", a.c_str()); usage(2); }
    }
    if (cfg.players == 0 || cfg.updates < cfg.players) { std::fprintf(stderr, "synth: need --players >= 1 and --updates >= --players\n"); return 2; }
    if (cfg.players >= (1ull << kPlayerBits)) { std::fprintf(stderr, "synth: at most %llu players\n", (1ull << kPlayerBits) - 1); return 2; }
    if (cfg.days < 1 || cfg.days > kRealDays) { std::fprintf(stderr, "synth: --days is 1..%d\n", kRealDays); return 2; }
    if (cfg.updates > 0xffffffffull * cfg.players) return 2;
    auto t0 = std::chrono::steady_clock::now();
    const int D = cfg.days;
    const uint64_t P = cfg.players, U = cfg.updates;

    // Day weights: the real calendar compressed into D days when D < 4656.
    std::vector<double> cdf(D);
    double acc = 0;
    for (int d = 0; d < D; ++d) {
        int real = static_cast<int>(static_cast<int64_t>(d) * kRealDays / D);
        acc += games_per_day_at(real);
        cdf[d] = acc;
    }
    for (auto& c : cdf) c /= acc;
    std::vector<std::string> date(D);
    for (int d = 0; d < D; ++d) {
        int y; unsigned m, dd;
        civil(kStartEpochDay + d, y, m, dd);
        char b[16];
        std::snprintf(b, sizeof b, "%04d-%02u-%02u", y, m, dd);
        date[d] = b;
    }
    double len_tot = 0;
    for (double w : kLenWeight) len_tot += w;

    // Pass 1: per-player attributes.
    std::vector<Player> pl(P);
    std::vector<float> weight(P), rate(P);
    double wsum = 0;
    NameSpace names;
    names.init(cfg.seed);
    uint64_t len_count[22] = {};
    for (uint64_t i = 0; i < P; ++i) {
        Rng r(cfg.seed, i, 1);
        weight[i] = static_cast<float>(std::exp(kActivitySigma * r.normal()));
        wsum += weight[i];
        rate[i] = static_cast<float>(std::clamp(kRateMedian * std::exp(kRateSigma * r.normal()), 0.05, kMaxRate));
        double u = r.uniform();
        pl[i].a = static_cast<uint16_t>(std::lower_bound(cdf.begin(), cdf.end(), u) - cdf.begin());
        double lu = r.uniform() * len_tot;
        int len = 2;
        while (len < 20 && lu >= kLenWeight[len]) { lu -= kLenWeight[len]; ++len; }
        while (len < 20 && len_count[len] >= names.cap[len]) ++len;
        pl[i].len = static_cast<uint8_t>(len);
        pl[i].k = static_cast<uint32_t>(len_count[len]++);
    }
    // Observations per player: 1 + a share of the rest proportional to weight (cumulative rounding).
    {
        const double extra = static_cast<double>(U - P);
        double c = 0;
        uint64_t given = 0;
        for (uint64_t i = 0; i < P; ++i) {
            c += weight[i];
            uint64_t upto = (i + 1 == P) ? (U - P) : std::min<uint64_t>(U - P, static_cast<uint64_t>(std::floor(extra * (c / wsum))));
            if (upto < given) upto = given;
            pl[i].n = static_cast<uint32_t>(1 + (upto - given));
            given = upto;
        }
    }
    // Active span: n / rate days, kept inside the calendar (moving arrival earlier if needed).
    std::vector<double> est(D + 1, 0.0);
    for (uint64_t i = 0; i < P; ++i) {
        Player& p = pl[i];
        double need_days = std::ceil(p.n / kMaxRate / 2.0);  // never denser than half the max rate
        int span = static_cast<int>(std::ceil(p.n / static_cast<double>(rate[i])));
        span = std::max<int>(span, static_cast<int>(need_days));
        span = std::clamp(span, 1, D);
        if (p.a + span > D) {
            int room = D - p.a;
            if (room >= need_days && room >= 1) span = room;
            else p.a = static_cast<uint16_t>(D - span);
        }
        p.span = static_cast<uint16_t>(span);
        double per = p.n / static_cast<double>(span);
        est[p.a] += per;
        est[p.a + span] -= per;
    }
    weight.clear(); weight.shrink_to_fit();
    rate.clear(); rate.shrink_to_fit();
    Warp warp;
    warp.D = D;
    warp.E.assign(D + 1, 0.0);
    warp.W.assign(D + 1, 0.0);
    {
        double run = 0, tot = 0;
        for (int d = 0; d < D; ++d) { run += est[d]; tot += run; warp.E[d + 1] = tot; }
        for (int d = 0; d <= D; ++d) warp.E[d] /= tot;
        for (int d = 0; d < D; ++d) warp.W[d + 1] = cdf[d];
        warp.E[D] = 1.0;
        warp.W[D] = 1.0;
    }
    for (uint64_t i = 0; i < P; ++i) {
        Player& p = pl[i];
        int clo = static_cast<int>(std::floor(warp.to_calendar_day(p.a))) - 1;
        int chi = static_cast<int>(std::ceil(warp.to_calendar_day(p.a + p.span))) + 2;
        p.cal_lo = static_cast<uint16_t>(std::clamp(clo, 0, D));
        p.cal_hi = static_cast<uint16_t>(std::clamp(chi, 0, D));
    }
    // Windows of calendar days holding about window_events observations each (target volume).
    std::vector<int> cut{0};
    {
        double in_window = 0;
        for (int d = 0; d < D; ++d) {
            double v = (warp.W[d + 1] - warp.W[d]) * static_cast<double>(U);
            if (in_window > 0 && in_window + v > static_cast<double>(cfg.window_events) * 0.8) {
                cut.push_back(d);
                in_window = 0;
            }
            in_window += v;
        }
        cut.push_back(D);
    }

    FILE* out = stdout;
    if (cfg.out != "-") {
        out = std::fopen(cfg.out.c_str(), "wb");
        if (!out) { std::perror(cfg.out.c_str()); return 1; }
    }
    uint64_t emitted = 0, dates = 0;
    {
        Writer w(out, cfg.fmt, cfg.key);
        std::vector<uint64_t> bucket;
        std::vector<uint32_t> minutes;
        char name[24];
        int cur_day = -1;
        for (size_t wi = 0; wi + 1 < cut.size(); ++wi) {
            const uint32_t lo = static_cast<uint32_t>(cut[wi]) * kUnitsPerDay, hi = static_cast<uint32_t>(cut[wi + 1]) * kUnitsPerDay;
            bucket.clear();
            for (uint64_t i = 0; i < P; ++i) {
                const Player& p = pl[i];
                if (p.cal_lo >= cut[wi + 1] || p.cal_hi <= cut[wi]) continue;
                player_history(cfg, warp, static_cast<uint32_t>(i), p, minutes, [&](uint32_t m, int rating) {
                    if (m >= lo && m < hi)
                        bucket.push_back((static_cast<uint64_t>(m) << (kPlayerBits + kRatingBits)) | (i << kRatingBits) |
                                         static_cast<uint64_t>(rating - kMinRating));
                });
            }
            std::sort(bucket.begin(), bucket.end());
            for (uint64_t e : bucket) {
                int day = static_cast<int>((e >> (kPlayerBits + kRatingBits)) / kUnitsPerDay);
                uint32_t id = static_cast<uint32_t>((e >> kRatingBits) & ((1u << kPlayerBits) - 1));
                int rating = static_cast<int>(e & ((1u << kRatingBits) - 1)) + kMinRating;
                if (day != cur_day) {
                    if (cur_day >= 0) w.marker(date[cur_day]);
                    cur_day = day;
                    ++dates;
                }
                int n = names.name(cfg.seed, id, pl[id].len, pl[id].k, name);
                w.event(date[day], std::string_view(name, n), rating);
                ++emitted;
            }
        }
        if (cur_day >= 0) w.marker(date[cur_day]);
    }
    if (std::fflush(out) != 0) { std::perror("flush"); return 1; }
    if (out != stdout) std::fclose(out);
    if (emitted != U) { std::fprintf(stderr, "synth: internal error: emitted %llu of %llu\n", (unsigned long long)emitted, (unsigned long long)U); return 1; }
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!quiet)
        std::fprintf(stderr, "synth: players=%llu updates=%llu dates=%llu windows=%zu seed=%llu %.1fs\n",
                     (unsigned long long)P, (unsigned long long)U, (unsigned long long)dates, cut.size() - 1,
                     (unsigned long long)cfg.seed, secs);
    return 0;
}
