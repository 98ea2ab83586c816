#include "persist/aof_manifest.h"

#include <sys/stat.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <utility>

#include "core/ascii.h"
#include "persist/file_util.h"
#include "resp/request_parser.h"

namespace goblin {
namespace {

// Redis writes a name raw unless sdsneedsrepr says otherwise. A "'" is quoted as well: Redis
// writes it raw, and sdssplitargs then reads it as an unbalanced single quote.
bool NeedsQuoting(std::string_view name) {
  if (name.empty()) return true;
  for (char c : name) {
    auto u = static_cast<unsigned char>(c);
    if (c == '\\' || c == '"' || c == '\'' || u <= 0x20 || u >= 0x7f) return true;
  }
  return false;
}

void AppendLine(std::string* out, const AofFile& file) {
  *out += "file ";
  if (NeedsQuoting(file.name)) {
    AppendRepr(out, file.name);
  } else {
    *out += file.name;
  }
  *out += " seq ";
  *out += std::to_string(file.seq);
  *out += " type ";
  *out += file.type;
  *out += '\n';
}

bool ParsePositiveSeq(std::string_view text, int64_t* seq) {
  if (text.empty()) return false;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *seq);
  return ec == std::errc() && end == text.data() + text.size() && *seq > 0;
}

std::string_view TrimBlanks(std::string_view line) {
  // sdstrim(line, " \t\r\n")
  constexpr std::string_view kBlanks = " \t\r\n";
  size_t first = line.find_first_not_of(kBlanks);
  if (first == std::string_view::npos) return {};
  size_t last = line.find_last_not_of(kBlanks);
  return line.substr(first, last - first + 1);
}

std::string Printable(std::string_view text) {
  std::string out;
  AppendRepr(&out, text.substr(0, 64));
  if (text.size() > 64) out += "...";
  return out;
}

}  // namespace

AofManifest::AofManifest(std::string filename) : filename_(std::move(filename)) {}

bool AofManifest::Parse(std::string_view text, AofManifest* out, std::string* error,
                        AofManifestRefusal* refusal) {
  if (text.empty()) {
    *error = "Found an empty AOF manifest";
    if (refusal != nullptr) *refusal = AofManifestRefusal{*error, 0, false, ""};
    return false;
  }
  AofManifest result(out->filename_);
  size_t line_number = 0;
  size_t line_start = 0;
  std::vector<std::string> fields;
  while (line_start < text.size()) {
    ++line_number;
    size_t newline = text.find('\n', line_start);
    const bool terminated = newline != std::string_view::npos;
    std::string_view raw = text.substr(line_start, terminated ? newline - line_start : text.size());
    line_start = terminated ? newline + 1 : text.size();
    if (!raw.empty() && raw[0] == '#') continue;

    auto fail = [&](std::string_view headline, std::string_view why) {
      std::string reason(headline);
      if (!why.empty()) reason += " (" + std::string(why) + ")";
      *error = std::string(headline) + " at line " + std::to_string(line_number);
      if (!why.empty()) *error += " (" + std::string(why) + ")";
      *error += ": " + Printable(raw);
      if (refusal != nullptr) {
        // Redis shows the line only once it has read it whole.
        const bool whole = terminated && raw.size() <= kMaxLineLength;
        *refusal = AofManifestRefusal{std::move(reason), line_number, whole,
                                      whole ? std::string(TrimBlanks(raw)) : std::string()};
      }
      return false;
    };
    constexpr std::string_view kInvalid = "Invalid AOF manifest file format";
    // Redis reads a line into a buffer of 1024 bytes: a longer line, or a last line without
    // its newline, leaves the buffer without one.
    constexpr std::string_view kTooLong = "The AOF manifest file contains too long line";

    if (!terminated) return fail(kTooLong, "the last line has no newline; truncated?");
    if (raw.size() > kMaxLineLength) return fail(kTooLong, "longer than 1023 bytes");
    if (raw.find('\0') != std::string_view::npos) return fail(kInvalid, "NUL byte in line");
    std::string_view line = TrimBlanks(raw);
    if (line.empty()) return fail(kInvalid, "empty line");
    if (!SplitInlineArgs(line, &fields)) return fail(kInvalid, "unbalanced quotes");
    if (fields.size() < 6 || fields.size() % 2 != 0) {
      return fail(kInvalid, "expected key/value pairs file, seq and type; got " +
                                std::to_string(fields.size()) + " fields");
    }

    AofFile file;
    bool have_name = false, have_seq = false, have_type = false;
    for (size_t i = 0; i < fields.size(); i += 2) {
      const std::string& key = fields[i];
      const std::string& value = fields[i + 1];
      bool* have = nullptr;
      if (EqualsIgnoreCase(key, "file")) {
        have = &have_name;
        if (value.empty()) return fail(kInvalid, "empty file name");
        if (value.find_first_of("/\\") != std::string::npos) {
          return fail("File can't be a path, just a filename", "");
        }
        file.name = value;
      } else if (EqualsIgnoreCase(key, "seq")) {
        have = &have_seq;
        if (!ParsePositiveSeq(value, &file.seq)) {
          return fail(kInvalid, "seq must be a positive integer, got " + Printable(value));
        }
      } else if (EqualsIgnoreCase(key, "type")) {
        have = &have_type;
        if (value.size() != 1) return fail("Unknown AOF file type", Printable(value));
        file.type = value[0];
      } else {
        continue;  // a key from a newer version
      }
      if (*have) return fail(kInvalid, "key " + Printable(key) + " appears twice");
      *have = true;
    }
    if (!have_name) return fail(kInvalid, "missing key \"file\"");
    if (!have_seq) return fail(kInvalid, "missing key \"seq\"");
    if (!have_type) return fail(kInvalid, "missing key \"type\"");
    // The line must stay readable when the manifest is written again: a name of raw bytes is
    // written quoted, each odd byte as \xHH, four times as long, and could pass the limit.
    std::string rewritten;
    AppendLine(&rewritten, file);
    if (rewritten.size() - 1 > kMaxLineLength) {
      return fail(kInvalid, "file name too long once quoted");
    }
    if (result.Lists(file.name)) return fail("Found a file name listed twice", "");

    switch (file.type) {
      case AofFile::kBase:
        if (result.base_) return fail("Found duplicate base file information", "");
        result.base_seq_ = file.seq;
        result.base_ = std::move(file);
        break;
      case AofFile::kHistory:
        result.history_.push_back(std::move(file));
        break;
      case AofFile::kIncr:
        if (!result.incrs_.empty() && file.seq <= result.incrs_.back().seq) {
          return fail(
              "Found a non-monotonic sequence number",
              std::to_string(file.seq) + " after " + std::to_string(result.incrs_.back().seq));
        }
        result.incr_seq_ = file.seq;
        result.incrs_.push_back(std::move(file));
        break;
      default:
        return fail("Unknown AOF file type", Printable(std::string_view(&file.type, 1)));
    }
  }
  *out = std::move(result);
  return true;
}

std::string AofManifest::Serialize() const {
  std::string out;
  if (base_) AppendLine(&out, *base_);
  for (const AofFile& file : history_) AppendLine(&out, file);
  for (const AofFile& file : incrs_) AppendLine(&out, file);
  return out;
}

bool AofManifest::Load(const std::string& aof_dir, const std::string& filename, std::string* error,
                       AofManifestRefusal* refusal) {
  *this = AofManifest(filename);
  error->clear();
  const std::string path = JoinPath(aof_dir, manifest_name());
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return false;
    *error = "stat " + path + ": " + std::strerror(errno);
    return false;
  }
  std::string text;
  if (!ReadWholeFile(path, &text, error)) return false;
  std::string parse_error;
  if (!Parse(text, this, &parse_error, refusal)) {
    *error = path + ": " + parse_error;
    return false;
  }
  return true;
}

bool AofManifest::Persist(const std::string& aof_dir, std::string* error) const {
  return WriteFileAtomically(JoinPath(aof_dir, manifest_name()), Serialize(), error);
}

std::string AofManifest::NextBaseName() {
  std::string name;
  do {
    name = filename_ + "." + std::to_string(++base_seq_) + ".base.gsnap";
  } while (Lists(name));
  return name;
}

std::string AofManifest::NextIncrName() {
  std::string name;
  do {
    name = filename_ + "." + std::to_string(++incr_seq_) + ".incr.aof";
  } while (Lists(name));
  return name;
}

void AofManifest::AddIncr(const std::string& name) {
  if (!incrs_.empty() && incr_seq_ <= incrs_.back().seq) incr_seq_ = incrs_.back().seq + 1;
  if (incr_seq_ == 0) incr_seq_ = 1;
  incrs_.push_back(AofFile{name, incr_seq_, AofFile::kIncr});
}

void AofManifest::SetBase(const std::string& name) {
  FinishRewrite(name, incrs_.empty() ? std::string() : incrs_.back().name);
}

bool AofManifest::FinishRewrite(const std::string& new_base,
                                const std::string& first_incr_after_start) {
  size_t keep_from = incrs_.size();
  if (!first_incr_after_start.empty()) {
    keep_from = 0;
    while (keep_from < incrs_.size() && incrs_[keep_from].name != first_incr_after_start) {
      ++keep_from;
    }
    if (keep_from == incrs_.size()) return false;
  }
  if (Lists(new_base)) return false;

  if (base_ && base_seq_ <= base_->seq) base_seq_ = base_->seq + 1;
  if (base_seq_ == 0) base_seq_ = 1;
  MoveBaseToHistory();
  for (size_t i = 0; i < keep_from; ++i) {
    incrs_[i].type = AofFile::kHistory;
    history_.push_back(std::move(incrs_[i]));
  }
  incrs_.erase(incrs_.begin(), incrs_.begin() + static_cast<ptrdiff_t>(keep_from));
  base_ = AofFile{new_base, base_seq_, AofFile::kBase};
  return true;
}

std::vector<std::string> AofManifest::TakeHistory() {
  std::vector<std::string> names;
  names.reserve(history_.size());
  for (AofFile& file : history_) names.push_back(std::move(file.name));
  history_.clear();
  return names;
}

bool AofManifest::Lists(std::string_view name) const {
  if (base_ && base_->name == name) return true;
  for (const AofFile& file : incrs_) {
    if (file.name == name) return true;
  }
  for (const AofFile& file : history_) {
    if (file.name == name) return true;
  }
  return false;
}

void AofManifest::MoveBaseToHistory() {
  if (!base_) return;
  base_->type = AofFile::kHistory;
  history_.push_back(std::move(*base_));
  base_.reset();
}

}  // namespace goblin
