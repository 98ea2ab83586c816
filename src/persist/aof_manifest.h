// AofManifest: the list of files that make up a multi-part append-only file, in Redis 7's
// manifest format, so that a Redis 7 appendonlydir can be read and vice versa.
//
// On disk, <dir>/<appenddirname>/ holds (appendfilename "appendonly.aof"):
//
//   appendonly.aof.manifest        this list, replaced atomically (file_util.h)
//   appendonly.aof.3.base.gsnap    the base: a Goblin snapshot of the whole dataset
//   appendonly.aof.4.incr.aof      commands written after the base, RESP multibulk (aof_log.h)
//   appendonly.aof.5.incr.aof      ... opened at the start of a rewrite that has not finished
//
// and the manifest is one line per file, base first, then history, then incrs in order:
//
//   file appendonly.aof.3.base.gsnap seq 3 type b\n
//   file appendonly.aof.4.incr.aof seq 4 type i\n
//   file appendonly.aof.5.incr.aof seq 5 type i\n
//
// type b = base, i = incremental, h = history (replaced, to be deleted). A line is key/value
// pairs split with Redis's sdssplitargs rules (a name with spaces or odd bytes is written
// "double quoted" with \n, \xHH, ... escapes); unknown keys are ignored for forward
// compatibility; a line starting with '#' is a comment. Redis names its base ".base.rdb" (or
// ".base.aof"); Goblin's base is a Goblin snapshot, so it is ".base.gsnap". The loader replays a
// ".aof" base as commands and tells a Goblin snapshot from an RDB file by its first bytes.
//
// Invariants (Parse rejects text that breaks them; the operations keep them):
//  1. At most one base. Every name is a plain file name (no '/' or '\'), and no name appears
//     twice: a name listed both live and as history would have a live file deleted.
//  2. Incr seqs strictly increase in list order; replaying base then incrs in order rebuilds
//     the dataset.
//  3. Base seqs and incr seqs are separate counters. NextBaseName/NextIncrName return one more
//     than the highest seq seen of their kind (skipping a name already listed), as Redis does.
//
// The rewrite protocol (BGREWRITEAOF), all in the server's main thread:
//  1. incr = NextIncrName(); open it (AofWriter::SwitchTo creates it); AddIncr(incr);
//     Persist(). New writes go only to incr from here on. If Persist fails, switch back and
//     abandon the rewrite (copy the manifest first to undo, as Redis does with its temp copy).
//  2. The forked child writes the snapshot of the fork point to a temporary file.
//  3. When the child succeeds: rename the temporary to NextBaseName() in the AOF directory
//     and fsync the directory; FinishRewrite(base, incr) (the old base and every incr before
//     incr become history); Persist().
//  4. Only after that Persist succeeded: for each name in TakeHistory() unlink it (ENOENT is
//     fine: a crash may have deleted it already), then Persist() again to drop the h lines.
//     A crash before step 4 completes leaves h lines; the next start repeats step 4.
// A crash anywhere leaves a manifest that lists a complete, consistent set of files: before
// step 3's Persist the old base and all incrs, after it the new base and the incrs from incr on.
//
// Not thread-safe; a plain value type (copy it to try a change and keep the original on error).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace goblin {

// Why Parse refused a manifest, in the pieces Redis logs them: its reason (Redis's text first,
// e.g. "Invalid AOF manifest file format (empty line)"), and the line it was reading, if any.
struct AofManifestRefusal {
  std::string reason;
  size_t line_number = 0;   // 1-based; 0 when no line was read (an empty manifest)
  bool line_shown = false;  // false when the line was not read whole (too long, or torn)
  std::string line;         // blanks trimmed, as read
};

struct AofFile {
  static constexpr char kBase = 'b';
  static constexpr char kHistory = 'h';
  static constexpr char kIncr = 'i';

  std::string name;  // a file name inside the AOF directory, not a path
  int64_t seq = 0;   // > 0
  char type = kIncr;

  bool operator==(const AofFile&) const = default;
};

class AofManifest {
 public:
  // Redis's MANIFEST_MAX_LINE: a longer line is rejected (Redis could not read it back), as
  // read and as Serialize would write it again.
  static constexpr size_t kMaxLineLength = 1023;

  explicit AofManifest(std::string filename = "appendonly.aof");

  // Replaces out's files and counters with the manifest in text; out->filename() is kept. On
  // error returns false, leaves *out unchanged, and *error names the line and the reason, e.g.
  // "Invalid AOF manifest file format at line 2: expected key/value pairs, got 5 fields";
  // *refusal, when given, gets the same in pieces.
  static bool Parse(std::string_view text, AofManifest* out, std::string* error,
                    AofManifestRefusal* refusal = nullptr);

  // The manifest text: base, then history, then incrs; Parse(Serialize()) gives *this back.
  std::string Serialize() const;

  // Reads "<aof_dir>/<filename>.manifest" and sets filename. Returns false with an empty
  // *error when there is no manifest (a fresh start), false with *error set when it cannot be
  // read or parsed (and *refusal, when given, what Parse said). On any false *this is an empty
  // manifest for filename.
  bool Load(const std::string& aof_dir, const std::string& filename, std::string* error,
            AofManifestRefusal* refusal = nullptr);

  // Writes the manifest durably (WriteFileAtomically) as "<aof_dir>/<filename>.manifest".
  bool Persist(const std::string& aof_dir, std::string* error) const;

  const std::string& filename() const { return filename_; }
  std::string manifest_name() const { return filename_ + ".manifest"; }
  const std::optional<AofFile>& base() const { return base_; }
  const std::vector<AofFile>& incrs() const { return incrs_; }
  const std::vector<AofFile>& history() const { return history_; }
  bool empty() const { return !base_ && incrs_.empty() && history_.empty(); }

  // "<filename>.<seq>.base.gsnap" with the next base seq; bumps the base counter even if the
  // name is never used (Redis does the same; a gap is harmless).
  std::string NextBaseName();
  // "<filename>.<seq>.incr.aof" with the next incr seq; bumps the incr counter.
  std::string NextIncrName();

  // Appends name as the newest incr file, with the seq of the latest NextIncrName() (or one
  // more than the newest incr, if that would not increase).
  // REQUIRES: name is a plain file name (invariant 1) not already listed.
  void AddIncr(const std::string& name);

  // Makes name the base as Redis's rewrite completion does: the old base and every incr file
  // but the newest (the one opened when the rewrite started) become history. With no incr
  // files only the old base moves. REQUIRES: name is a plain file name not already listed.
  void SetBase(const std::string& name);

  // The explicit form of SetBase for the rewrite protocol above: new_base becomes the base;
  // the old base and the incr files listed before first_incr_after_start become history;
  // first_incr_after_start and later incrs stay. An empty first_incr_after_start moves every
  // incr to history (the base covers everything, e.g. appendonly turned on at runtime).
  // Returns false and changes nothing if first_incr_after_start is not an incr file or
  // new_base is already listed.
  bool FinishRewrite(const std::string& new_base, const std::string& first_incr_after_start);

  // Returns the history file names and forgets them (step 4 of the protocol).
  std::vector<std::string> TakeHistory();

 private:
  bool Lists(std::string_view name) const;
  void MoveBaseToHistory();

  std::string filename_;
  std::optional<AofFile> base_;
  std::vector<AofFile> incrs_;
  std::vector<AofFile> history_;
  int64_t base_seq_ = 0;  // highest base seq handed out or read
  int64_t incr_seq_ = 0;  // highest incr seq handed out or read
};

}  // namespace goblin
