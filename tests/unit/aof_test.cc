// The AOF building blocks: the Redis 7 manifest (aof_manifest.h), the incr-file writer and
// replayer (aof_log.h) and the file helpers under them (file_util.h). Manifest texts follow
// what redis-server 7.0 writes into appendonlydir; malformed ones follow the checks of its
// aofLoadManifestFromFile. Files go to a fresh directory under /tmp per test.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "persist/aof_log.h"
#include "persist/aof_manifest.h"
#include "persist/file_util.h"

namespace goblin {
namespace {

using namespace std::literals;
using Args = std::vector<std::string>;
using Status = AofReplayResult::Status;

// A directory under /tmp, removed with its contents at the end of the test.
class TempDir {
 public:
  TempDir() {
    char pattern[] = "/tmp/goblin-aof-test-XXXXXX";
    const char* made = ::mkdtemp(pattern);
    EXPECT_NE(made, nullptr);
    path_ = made != nullptr ? made : "/tmp";
  }
  ~TempDir() {
    if (path_ != "/tmp") std::filesystem::remove_all(path_);
  }
  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return JoinPath(path_, name); }
  std::vector<std::string> List() const {
    std::vector<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(path_)) {
      names.push_back(entry.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
  }

 private:
  std::string path_;
};

std::string ReadOrDie(const std::string& path) {
  std::string data, error;
  EXPECT_TRUE(ReadWholeFile(path, &data, &error)) << error;
  return data;
}

std::string Resp(const Args& args) {
  std::vector<std::string_view> views(args.begin(), args.end());
  std::string out;
  AppendRespCommand(&out, views);
  return out;
}

void Append(AofWriter& writer, int db, const Args& args) {
  std::vector<std::string_view> views(args.begin(), args.end());
  writer.Append(db, views);
}

// Replays data, copying out every argv that execute receives.
AofReplayResult Replay(std::string_view data, std::vector<Args>* executed) {
  executed->clear();
  return ReplayAof(data, [&](std::span<const std::string_view> argv, std::string*) {
    executed->emplace_back(argv.begin(), argv.end());
    return true;
  });
}

// ------------------------------------------------------------------------------------------
// Manifest

constexpr std::string_view kRedisManifest =
    "file appendonly.aof.2.base.rdb seq 2 type b\n"
    "file appendonly.aof.1.base.rdb seq 1 type h\n"
    "file appendonly.aof.3.incr.aof seq 3 type h\n"
    "file appendonly.aof.4.incr.aof seq 4 type i\n"
    "file appendonly.aof.5.incr.aof seq 5 type i\n";

TEST(AofManifestTest, ParseSerializeRoundTrip) {
  AofManifest manifest;
  std::string error;
  ASSERT_TRUE(AofManifest::Parse(kRedisManifest, &manifest, &error)) << error;
  ASSERT_TRUE(manifest.base().has_value());
  EXPECT_EQ(*manifest.base(), (AofFile{"appendonly.aof.2.base.rdb", 2, 'b'}));
  EXPECT_EQ(manifest.history(), (std::vector<AofFile>{{"appendonly.aof.1.base.rdb", 1, 'h'},
                                                      {"appendonly.aof.3.incr.aof", 3, 'h'}}));
  EXPECT_EQ(manifest.incrs(), (std::vector<AofFile>{{"appendonly.aof.4.incr.aof", 4, 'i'},
                                                    {"appendonly.aof.5.incr.aof", 5, 'i'}}));
  EXPECT_EQ(manifest.Serialize(), kRedisManifest);
  EXPECT_FALSE(manifest.empty());
}

TEST(AofManifestTest, AcceptsWhatRedisAccepts) {
  // Comments, CRLF, surrounding blanks, keys in any order and case, unknown keys (forward
  // compatibility), quoted names; Serialize writes the canonical form.
  const std::string text =
      "# written by hand\n"
      "  type b seq 7 file base.rdb  \r\n"
      "FILE 'incr one.aof' SEQ 8 TYPE i future-key future-value\n"
      "#\n"
      "file \"incr\\x20two.aof\" seq 00012 type i\n";
  AofManifest manifest;
  std::string error;
  ASSERT_TRUE(AofManifest::Parse(text, &manifest, &error)) << error;
  EXPECT_EQ(*manifest.base(), (AofFile{"base.rdb", 7, 'b'}));
  EXPECT_EQ(manifest.incrs(),
            (std::vector<AofFile>{{"incr one.aof", 8, 'i'}, {"incr two.aof", 12, 'i'}}));
  EXPECT_EQ(manifest.Serialize(),
            "file base.rdb seq 7 type b\n"
            "file \"incr one.aof\" seq 8 type i\n"
            "file \"incr two.aof\" seq 12 type i\n");
  // Only comments: an empty manifest, as in Redis (the file itself is not empty).
  ASSERT_TRUE(AofManifest::Parse("# nothing\n", &manifest, &error)) << error;
  EXPECT_TRUE(manifest.empty());
}

TEST(AofManifestTest, OddNamesRoundTripThroughQuoting) {
  const std::vector<std::string> names = {
      "with space", "quote\"inside",      "single'quote", "new\nline",
      "tab\there",  "\x01\x7f\xff bytes", "bell\a\b",     "x",
  };
  AofManifest manifest;
  for (const std::string& name : names) manifest.AddIncr(name);
  const std::string text = manifest.Serialize();
  EXPECT_NE(text.find("file \"with space\" seq 1 type i\n"), std::string::npos) << text;
  EXPECT_NE(text.find("file \"\\x01\\x7f\\xff bytes\" seq 6 type i\n"), std::string::npos);
  EXPECT_NE(text.find("file x seq 8 type i\n"), std::string::npos);
  AofManifest parsed;
  std::string error;
  ASSERT_TRUE(AofManifest::Parse(text, &parsed, &error)) << error << "\n" << text;
  EXPECT_EQ(parsed.incrs(), manifest.incrs());
  EXPECT_EQ(parsed.Serialize(), text);
}

struct BadManifest {
  std::string text;
  std::string expected;  // a substring of the error
};

TEST(AofManifestTest, RejectsEveryMalformedManifest) {
  const std::string long_name(1100, 'a');
  const std::vector<BadManifest> cases = {
      {"", "Found an empty AOF manifest"},
      {"\n", "Invalid AOF manifest file format at line 1 (empty line)"},
      {" \t \r\n", "Invalid AOF manifest file format at line 1 (empty line)"},
      {"file a seq 1 type b", "too long line at line 1 (the last line has no newline"},
      {"file a seq 1 type b\nfile b seq 1 type i",
       "The AOF manifest file contains too long line at line 2 (the last line has no newline"},
      {"file a seq 1 type\n", "at line 1 (expected key/value pairs file, seq and type; got 5"},
      {"file a seq 1\n", "at line 1 (expected key/value pairs file, seq and type; got 4"},
      {"file a seq 1 type b x\n", "got 7 fields"},
      {"file a seq 1 kind b\n", "at line 1 (missing key \"type\")"},
      {"name a seq 1 type b\n", "at line 1 (missing key \"file\")"},
      {"file a sequence 1 type b\n", "at line 1 (missing key \"seq\")"},
      {"file a seq 1 type x\n", "Unknown AOF file type at line 1 (\"x\")"},
      {"file a seq 1 type base\n", "Unknown AOF file type at line 1 (\"base\")"},
      {"file a seq 1 type \"\"\n", "Unknown AOF file type at line 1"},
      {"file a seq 0 type i\n", "at line 1 (seq must be a positive integer, got \"0\")"},
      {"file a seq -1 type i\n", "seq must be a positive integer, got \"-1\""},
      {"file a seq 1x type i\n", "seq must be a positive integer, got \"1x\""},
      {"file a seq 99999999999999999999 type i\n", "seq must be a positive integer"},
      {"file dir/a seq 1 type b\n", "File can't be a path, just a filename at line 1"},
      {"file dir\\a seq 1 type b\n", "File can't be a path, just a filename at line 1"},
      {"file \"\" seq 1 type i\n", "at line 1 (empty file name)"},
      {"file a seq 1 type b\nfile b seq 2 type b\n",
       "Found duplicate base file information at line 2"},
      {"file a seq 1 type b\nfile b seq 2 type i\nfile c seq 2 type i\n",
       "Found a non-monotonic sequence number at line 3 (2 after 2)"},
      {"file b seq 3 type i\nfile c seq 2 type i\n",
       "Found a non-monotonic sequence number at line 2 (2 after 3)"},
      {"file a seq 1 type i\nfile a seq 2 type h\n", "Found a file name listed twice at line 2"},
      {"file a file b seq 1 type i\n", "at line 1 (key \"file\" appears twice)"},
      {"file \"a seq 1 type b\n", "at line 1 (unbalanced quotes)"},
      {"file \"a\"b seq 1 type b\n", "at line 1 (unbalanced quotes)"},
      {"file 'a seq 1 type b\n", "at line 1 (unbalanced quotes)"},
      {"file a\0b seq 1 type b\n"s, "at line 1 (NUL byte in line)"},
      {"file " + long_name + " seq 1 type i\n",
       "contains too long line at line 1 (longer than 1023 bytes)"},
      // Short as read, too long as written back (each byte quoted as \xff): found by the
      // aof_manifest fuzz target, whose corpus keeps the input.
      {"file \"" + std::string(300, '\xff') + "\" seq 1 type i\n",
       "at line 1 (file name too long once quoted)"},
      // Comment lines count, as Redis counts them.
      {"# one\n# two\nfile a seq 1 type q\n", "Unknown AOF file type at line 3"},
  };
  for (const BadManifest& bad : cases) {
    AofManifest manifest("keep.aof");
    manifest.AddIncr("untouched");
    std::string error;
    EXPECT_FALSE(AofManifest::Parse(bad.text, &manifest, &error)) << bad.text;
    EXPECT_NE(error.find(bad.expected), std::string::npos)
        << "text: " << testing::PrintToString(bad.text) << "\nerror: " << error
        << "\nexpected: " << bad.expected;
    // A failed parse leaves the manifest as it was.
    EXPECT_EQ(manifest.Serialize(), "file untouched seq 1 type i\n");
    EXPECT_EQ(manifest.filename(), "keep.aof");
  }
}

TEST(AofManifestTest, RefusalNamesTheLineAsRedisShowsIt) {
  AofManifest manifest;
  std::string error;
  AofManifestRefusal refusal;
  EXPECT_FALSE(AofManifest::Parse("file a seq 1 type b\n  filx b seq 2 type i \r\n", &manifest,
                                  &error, &refusal));
  EXPECT_EQ(refusal.reason, "Invalid AOF manifest file format (missing key \"file\")");
  EXPECT_EQ(refusal.line_number, 2u);
  EXPECT_TRUE(refusal.line_shown);
  EXPECT_EQ(refusal.line, "filx b seq 2 type i");

  // Redis never holds a line it could not read whole: it shows none.
  EXPECT_FALSE(AofManifest::Parse("file a seq 1 type b\n" + std::string(2000, 'x') + "\n",
                                  &manifest, &error, &refusal));
  EXPECT_EQ(refusal.line_number, 2u);
  EXPECT_FALSE(refusal.line_shown);
  EXPECT_EQ(refusal.reason.rfind("The AOF manifest file contains too long line", 0), 0u);
  EXPECT_FALSE(AofManifest::Parse("", &manifest, &error, &refusal));
  EXPECT_EQ(refusal.reason, "Found an empty AOF manifest");
  EXPECT_EQ(refusal.line_number, 0u);
  EXPECT_FALSE(refusal.line_shown);
}

TEST(AofManifestTest, ALineOf1023BytesIsAccepted) {
  const std::string prefix = "file ";
  const std::string suffix = " seq 1 type i";
  const std::string name(AofManifest::kMaxLineLength - prefix.size() - suffix.size(), 'n');
  AofManifest manifest;
  std::string error;
  EXPECT_TRUE(AofManifest::Parse(prefix + name + suffix + "\n", &manifest, &error)) << error;
  EXPECT_FALSE(AofManifest::Parse(prefix + name + "n" + suffix + "\n", &manifest, &error));
}

TEST(AofManifestTest, NextNamesUseSeparateCounters) {
  AofManifest fresh("appendonly.aof");
  EXPECT_EQ(fresh.NextIncrName(), "appendonly.aof.1.incr.aof");
  EXPECT_EQ(fresh.NextIncrName(), "appendonly.aof.2.incr.aof");
  EXPECT_EQ(fresh.NextBaseName(), "appendonly.aof.1.base.gsnap");

  AofManifest manifest("my file.aof");
  std::string error;
  ASSERT_TRUE(
      AofManifest::Parse("file b seq 3 type b\nfile i5 seq 5 type i\n"
                         "file i6 seq 6 type i\nfile old seq 9 type h\n",
                         &manifest, &error))
      << error;
  EXPECT_EQ(manifest.filename(), "my file.aof");  // Parse keeps the filename
  EXPECT_EQ(manifest.NextBaseName(), "my file.aof.4.base.gsnap");
  EXPECT_EQ(manifest.NextIncrName(), "my file.aof.7.incr.aof");
  EXPECT_EQ(manifest.NextBaseName(), "my file.aof.5.base.gsnap");
}

TEST(AofManifestTest, NextNamesSkipNamesAlreadyListed) {
  // History seqs do not move the counters (as in Redis), so a listed name must be skipped.
  AofManifest manifest;
  std::string error;
  ASSERT_TRUE(
      AofManifest::Parse("file appendonly.aof.1.incr.aof seq 1 type h\n"
                         "file appendonly.aof.1.base.gsnap seq 1 type h\n",
                         &manifest, &error))
      << error;
  EXPECT_EQ(manifest.NextIncrName(), "appendonly.aof.2.incr.aof");
  EXPECT_EQ(manifest.NextBaseName(), "appendonly.aof.2.base.gsnap");
}

TEST(AofManifestTest, AddIncrKeepsSeqsIncreasing) {
  AofManifest manifest;
  const std::string first = manifest.NextIncrName();
  manifest.AddIncr(first);
  manifest.AddIncr("without-next-name");  // not from NextIncrName: still a higher seq
  manifest.NextIncrName();                // abandoned
  const std::string fourth = manifest.NextIncrName();
  manifest.AddIncr(fourth);
  EXPECT_EQ(manifest.incrs(), (std::vector<AofFile>{{"appendonly.aof.1.incr.aof", 1, 'i'},
                                                    {"without-next-name", 2, 'i'},
                                                    {"appendonly.aof.4.incr.aof", 4, 'i'}}));
  AofManifest parsed;
  std::string error;
  EXPECT_TRUE(AofManifest::Parse(manifest.Serialize(), &parsed, &error)) << error;
}

TEST(AofManifestTest, RewriteProtocolStartFinishHistory) {
  TempDir dir;
  std::string error;
  AofManifest manifest("appendonly.aof");
  manifest.SetBase(manifest.NextBaseName());
  manifest.AddIncr(manifest.NextIncrName());
  ASSERT_TRUE(manifest.Persist(dir.path(), &error)) << error;
  EXPECT_EQ(ReadOrDie(dir.File("appendonly.aof.manifest")),
            "file appendonly.aof.1.base.gsnap seq 1 type b\n"
            "file appendonly.aof.1.incr.aof seq 1 type i\n");

  // A rewrite that failed left its incr file behind; the next rewrite opens another.
  manifest.AddIncr(manifest.NextIncrName());
  const std::string incr = manifest.NextIncrName();
  manifest.AddIncr(incr);
  ASSERT_TRUE(manifest.Persist(dir.path(), &error)) << error;
  AofManifest loaded;
  ASSERT_TRUE(loaded.Load(dir.path(), "appendonly.aof", &error)) << error;
  EXPECT_EQ(loaded.Serialize(), manifest.Serialize());

  const std::string base = manifest.NextBaseName();
  EXPECT_EQ(base, "appendonly.aof.2.base.gsnap");
  ASSERT_TRUE(manifest.FinishRewrite(base, incr));
  EXPECT_EQ(*manifest.base(), (AofFile{base, 2, 'b'}));
  EXPECT_EQ(manifest.incrs(), (std::vector<AofFile>{{"appendonly.aof.3.incr.aof", 3, 'i'}}));
  EXPECT_EQ(manifest.history(), (std::vector<AofFile>{{"appendonly.aof.1.base.gsnap", 1, 'h'},
                                                      {"appendonly.aof.1.incr.aof", 1, 'h'},
                                                      {"appendonly.aof.2.incr.aof", 2, 'h'}}));
  ASSERT_TRUE(manifest.Persist(dir.path(), &error)) << error;
  ASSERT_TRUE(loaded.Load(dir.path(), "appendonly.aof", &error)) << error;
  EXPECT_EQ(loaded.history(), manifest.history());

  EXPECT_EQ(manifest.TakeHistory(),
            (std::vector<std::string>{"appendonly.aof.1.base.gsnap", "appendonly.aof.1.incr.aof",
                                      "appendonly.aof.2.incr.aof"}));
  EXPECT_TRUE(manifest.history().empty());
  EXPECT_TRUE(manifest.TakeHistory().empty());
  ASSERT_TRUE(manifest.Persist(dir.path(), &error)) << error;
  EXPECT_EQ(ReadOrDie(dir.File("appendonly.aof.manifest")),
            "file appendonly.aof.2.base.gsnap seq 2 type b\n"
            "file appendonly.aof.3.incr.aof seq 3 type i\n");
  // Persist leaves no temporary behind.
  EXPECT_EQ(dir.List(), (std::vector<std::string>{"appendonly.aof.manifest"}));
}

TEST(AofManifestTest, FinishRewriteRejectsUnknownIncrAndListedBase) {
  AofManifest manifest;
  manifest.SetBase("b1");
  manifest.AddIncr("i1");
  const std::string before = manifest.Serialize();
  EXPECT_FALSE(manifest.FinishRewrite("b2", "no-such-incr"));
  EXPECT_EQ(manifest.Serialize(), before);
  EXPECT_FALSE(manifest.FinishRewrite("i1", "i1"));
  EXPECT_EQ(manifest.Serialize(), before);
  EXPECT_FALSE(manifest.FinishRewrite("b1", ""));
  EXPECT_EQ(manifest.Serialize(), before);
}

TEST(AofManifestTest, FinishRewriteWithoutNewIncrMovesEveryIncr) {
  AofManifest manifest;
  manifest.SetBase("b1");
  manifest.AddIncr("i1");
  manifest.AddIncr("i2");
  ASSERT_TRUE(manifest.FinishRewrite("b2", ""));
  EXPECT_EQ(manifest.base()->name, "b2");
  EXPECT_EQ(manifest.base()->seq, 2);
  EXPECT_TRUE(manifest.incrs().empty());
  EXPECT_EQ(manifest.TakeHistory(), (std::vector<std::string>{"b1", "i1", "i2"}));
}

TEST(AofManifestTest, SetBaseKeepsOnlyTheNewestIncr) {
  AofManifest manifest;
  manifest.SetBase("b1");  // no incrs yet: nothing but the base
  EXPECT_EQ(*manifest.base(), (AofFile{"b1", 1, 'b'}));
  EXPECT_TRUE(manifest.history().empty());
  manifest.AddIncr("i1");
  manifest.AddIncr("i2");
  manifest.AddIncr("i3");
  manifest.SetBase("b2");
  EXPECT_EQ(*manifest.base(), (AofFile{"b2", 2, 'b'}));
  EXPECT_EQ(manifest.incrs(), (std::vector<AofFile>{{"i3", 3, 'i'}}));
  EXPECT_EQ(manifest.TakeHistory(), (std::vector<std::string>{"b1", "i1", "i2"}));
}

TEST(AofManifestTest, LoadTellsMissingFromBroken) {
  TempDir dir;
  std::string error = "stale";
  AofManifest manifest;
  manifest.AddIncr("stale");
  EXPECT_FALSE(manifest.Load(dir.path(), "appendonly.aof", &error));
  EXPECT_EQ(error, "");
  EXPECT_TRUE(manifest.empty());

  ASSERT_TRUE(WriteFileAtomically(dir.File("appendonly.aof.manifest"),
                                  "file a seq 1 type b\nfile b seq 1 type z\n", &error))
      << error;
  EXPECT_FALSE(manifest.Load(dir.path(), "appendonly.aof", &error));
  EXPECT_NE(error.find(dir.File("appendonly.aof.manifest")), std::string::npos) << error;
  EXPECT_NE(error.find("Unknown AOF file type at line 2"), std::string::npos) << error;
  EXPECT_TRUE(manifest.empty());

  EXPECT_FALSE(manifest.Load(dir.File("no-such-dir"), "x.aof", &error));
  EXPECT_EQ(error, "");
}

// ------------------------------------------------------------------------------------------
// File helpers

TEST(AofFileUtilTest, JoinPath) {
  EXPECT_EQ(JoinPath("dir", "f"), "dir/f");
  EXPECT_EQ(JoinPath("dir/", "f"), "dir/f");
  EXPECT_EQ(JoinPath("", "f"), "f");
  EXPECT_EQ(JoinPath("/", "f"), "/f");
  EXPECT_EQ(DirectoryOf("a/b/c"), "a/b");
  EXPECT_EQ(DirectoryOf("c"), ".");
  EXPECT_EQ(DirectoryOf("/c"), "/");
}

TEST(AofFileUtilTest, WriteFileAtomicallyReplacesWholeFiles) {
  TempDir dir;
  const std::string path = dir.File("f");
  std::string error;
  ASSERT_TRUE(WriteFileAtomically(path, "first\0version"s, &error)) << error;
  EXPECT_EQ(ReadOrDie(path), "first\0version"s);
  ASSERT_TRUE(WriteFileAtomically(path, "2", &error)) << error;
  EXPECT_EQ(ReadOrDie(path), "2");
  ASSERT_TRUE(WriteFileAtomically(path, "", &error)) << error;
  EXPECT_EQ(ReadOrDie(path), "");
  EXPECT_EQ(dir.List(), (std::vector<std::string>{"f"}));

  const std::string missing = dir.File("missing/f");
  EXPECT_FALSE(WriteFileAtomically(missing, "x", &error));
  EXPECT_NE(error.find(missing + ".tmp-"), std::string::npos) << error;
  EXPECT_NE(error.find("No such file or directory"), std::string::npos) << error;
}

TEST(AofFileUtilTest, ErrorsNameThePathAndTheCause) {
  TempDir dir;
  std::string out = "stale", error;
  EXPECT_FALSE(ReadWholeFile(dir.File("nope"), &out, &error));
  EXPECT_EQ(error, "open " + dir.File("nope") + ": No such file or directory");
  EXPECT_FALSE(FsyncDirectory(dir.File("nope"), &error));
  EXPECT_NE(error.find(dir.File("nope")), std::string::npos) << error;
  EXPECT_TRUE(FsyncDirectory(dir.path(), &error)) << error;

  int fd = ::open("/dev/full", O_WRONLY);
  ASSERT_GE(fd, 0);
  size_t written = 99;
  EXPECT_FALSE(WriteAll(fd, "abc", 3, &written, &error));
  EXPECT_EQ(written, 0u);
  EXPECT_NE(error.find("No space left on device"), std::string::npos) << error;
  ::close(fd);
}

TEST(AofFileUtilTest, CreateDirectoryIfMissing) {
  TempDir dir;
  std::string error;
  EXPECT_TRUE(CreateDirectoryIfMissing(dir.File("sub"), &error)) << error;
  EXPECT_TRUE(std::filesystem::is_directory(dir.File("sub")));
  EXPECT_TRUE(CreateDirectoryIfMissing(dir.File("sub"), &error)) << error;
  ASSERT_TRUE(WriteFileAtomically(dir.File("file"), "x", &error)) << error;
  EXPECT_FALSE(CreateDirectoryIfMissing(dir.File("file"), &error));
  EXPECT_NE(error.find("not a directory"), std::string::npos) << error;
}

// ------------------------------------------------------------------------------------------
// Encoding and policy names

TEST(AofLogTest, AppendRespCommand) {
  std::string out = "keep:";
  const std::vector<std::string_view> argv = {"SET", "", "a\r\nb\0c"sv};
  AppendRespCommand(&out, argv);
  EXPECT_EQ(out, "keep:*3\r\n$3\r\nSET\r\n$0\r\n\r\n$6\r\na\r\nb\0c\r\n"s);
}

TEST(AofLogTest, ParseAppendFsync) {
  AppendFsync policy = AppendFsync::kNo;
  EXPECT_TRUE(ParseAppendFsync("always", &policy));
  EXPECT_EQ(policy, AppendFsync::kAlways);
  EXPECT_TRUE(ParseAppendFsync("EverySec", &policy));
  EXPECT_EQ(policy, AppendFsync::kEverySec);
  EXPECT_TRUE(ParseAppendFsync("NO", &policy));
  EXPECT_EQ(policy, AppendFsync::kNo);
  EXPECT_FALSE(ParseAppendFsync("sometimes", &policy));
  EXPECT_EQ(policy, AppendFsync::kNo);  // untouched on failure
  EXPECT_FALSE(ParseAppendFsync("", &policy));
  EXPECT_EQ(ParseAppendFsync("always"), AppendFsync::kAlways);
  EXPECT_EQ(ParseAppendFsync("no"), AppendFsync::kNo);
  EXPECT_EQ(ParseAppendFsync("bogus"), AppendFsync::kEverySec);
  for (AppendFsync p : {AppendFsync::kAlways, AppendFsync::kEverySec, AppendFsync::kNo}) {
    EXPECT_EQ(ParseAppendFsync(AppendFsyncName(p)), p);
  }
}

// ------------------------------------------------------------------------------------------
// AofWriter

TEST(AofWriterTest, BuffersUntilFlushAndSelectsOnDbChange) {
  TempDir dir;
  const std::string path = dir.File("a.aof");
  AofWriter writer;
  std::string error;
  ASSERT_TRUE(writer.Open(path, &error)) << error;
  EXPECT_TRUE(writer.is_open());
  EXPECT_EQ(writer.size(), 0u);
  Append(writer, 0, {"SET", "k", "v"});
  Append(writer, 0, {"INCR", "n"});
  Append(writer, 3, {"DEL", "k"});
  Append(writer, 0, {"PING"});
  const std::string expected = Resp({"SELECT", "0"}) + Resp({"SET", "k", "v"}) +
                               Resp({"INCR", "n"}) + Resp({"SELECT", "3"}) + Resp({"DEL", "k"}) +
                               Resp({"SELECT", "0"}) + Resp({"PING"});
  EXPECT_TRUE(writer.has_pending());
  EXPECT_EQ(writer.pending_bytes(), expected.size());
  EXPECT_EQ(writer.size(), expected.size());
  EXPECT_EQ(ReadOrDie(path), "");  // nothing before Flush

  ASSERT_TRUE(writer.Flush(AppendFsync::kNo, &error)) << error;
  EXPECT_FALSE(writer.has_pending());
  EXPECT_EQ(ReadOrDie(path), expected);
  EXPECT_EQ(writer.size(), expected.size());
  EXPECT_TRUE(writer.last_write_ok());
  writer.Close();
  EXPECT_FALSE(writer.is_open());

  // Reopened, the writer counts the existing bytes and selects again before the first command.
  ASSERT_TRUE(writer.Open(path, &error)) << error;
  EXPECT_EQ(writer.size(), expected.size());
  Append(writer, 0, {"PING"});
  ASSERT_TRUE(writer.Flush(AppendFsync::kAlways, &error)) << error;
  EXPECT_GT(writer.last_fsync_unix_ms(), 0);
  const std::string all = expected + Resp({"SELECT", "0"}) + Resp({"PING"});
  EXPECT_EQ(ReadOrDie(path), all);
  EXPECT_EQ(writer.size(), all.size());
  std::string close_error;
  EXPECT_TRUE(writer.Close(&close_error)) << close_error;
  EXPECT_TRUE(writer.Close(&close_error));  // closing twice is a no-op
}

TEST(AofWriterTest, SwitchToFlushesTheOldFileAndSelectsInTheNew) {
  TempDir dir;
  AofWriter writer;
  std::string error;
  ASSERT_TRUE(writer.Open(dir.File("1.aof"), &error)) << error;
  Append(writer, 5, {"SET", "a", "1"});
  ASSERT_TRUE(writer.SwitchTo(dir.File("2.aof"), &error)) << error;
  EXPECT_EQ(writer.path(), dir.File("2.aof"));
  EXPECT_FALSE(writer.has_pending());
  EXPECT_EQ(writer.size(), 0u);
  Append(writer, 5, {"SET", "b", "2"});

  // A switch that cannot open the new file changes nothing and loses nothing.
  EXPECT_FALSE(writer.SwitchTo(dir.File("missing/3.aof"), &error));
  EXPECT_NE(error.find(dir.File("missing/3.aof")), std::string::npos) << error;
  EXPECT_EQ(writer.path(), dir.File("2.aof"));
  EXPECT_TRUE(writer.has_pending());
  ASSERT_TRUE(writer.Flush(AppendFsync::kNo, &error)) << error;
  writer.Close();

  EXPECT_EQ(ReadOrDie(dir.File("1.aof")), Resp({"SELECT", "5"}) + Resp({"SET", "a", "1"}));
  EXPECT_EQ(ReadOrDie(dir.File("2.aof")), Resp({"SELECT", "5"}) + Resp({"SET", "b", "2"}));
}

TEST(AofWriterTest, FailedWriteKeepsTheTailAndReportsIt) {
  AofWriter writer;
  std::string error;
  ASSERT_TRUE(writer.Open("/dev/full", &error)) << error;
  Append(writer, 0, {"SET", "k", "v"});
  const size_t pending = writer.pending_bytes();
  EXPECT_FALSE(writer.Flush(AppendFsync::kNo, &error));
  EXPECT_NE(error.find("/dev/full"), std::string::npos) << error;
  EXPECT_NE(error.find("No space left on device"), std::string::npos) << error;
  EXPECT_TRUE(writer.has_pending());
  EXPECT_EQ(writer.pending_bytes(), pending);
  EXPECT_EQ(writer.size(), pending);
  EXPECT_FALSE(writer.last_write_ok());
  EXPECT_EQ(writer.last_error(), error);
  EXPECT_FALSE(writer.Close(&error));
  EXPECT_NE(error.find("buffered bytes lost"), std::string::npos) << error;
}

TEST(AofWriterTest, EverySecFsyncsInTheBackground) {
  TempDir dir;
  AofWriter writer(std::chrono::milliseconds(0));
  std::string error;
  ASSERT_TRUE(writer.Open(dir.File("a.aof"), &error)) << error;
  EXPECT_EQ(writer.background_fsyncs(), 0u);
  Append(writer, 0, {"SET", "a", "1"});
  ASSERT_TRUE(writer.Flush(AppendFsync::kEverySec, &error)) << error;
  writer.WaitForBackgroundFsync();
  EXPECT_EQ(writer.background_fsyncs(), 1u);
  EXPECT_GT(writer.last_fsync_unix_ms(), 0);
  EXPECT_FALSE(writer.background_fsync_pending());

  Append(writer, 0, {"SET", "a", "2"});
  ASSERT_TRUE(writer.Flush(AppendFsync::kEverySec, &error)) << error;
  writer.WaitForBackgroundFsync();
  EXPECT_EQ(writer.background_fsyncs(), 2u);

  // Nothing written since: no fsync requested.
  ASSERT_TRUE(writer.Flush(AppendFsync::kEverySec, &error)) << error;
  writer.WaitForBackgroundFsync();
  EXPECT_EQ(writer.background_fsyncs(), 2u);
  EXPECT_TRUE(writer.last_write_ok());
}

TEST(AofWriterTest, EverySecWaitsOutTheIntervalAndStopsCleanly) {
  TempDir dir;
  // An interval no test outlives: the second fsync can only happen if the limit is broken, and
  // Close must not wait for it.
  AofWriter writer(std::chrono::hours(1));
  std::string error;
  ASSERT_TRUE(writer.Open(dir.File("a.aof"), &error)) << error;
  Append(writer, 1, {"SET", "a", "1"});
  ASSERT_TRUE(writer.Flush(AppendFsync::kEverySec, &error)) << error;
  writer.WaitForBackgroundFsync();  // the first fsync is not delayed
  EXPECT_EQ(writer.background_fsyncs(), 1u);

  Append(writer, 1, {"SET", "a", "2"});
  ASSERT_TRUE(writer.Flush(AppendFsync::kEverySec, &error)) << error;
  EXPECT_TRUE(writer.background_fsync_pending());
  EXPECT_EQ(writer.background_fsyncs(), 1u);

  // The switch fsyncs the old file itself; the waiting thread then belongs to the new one.
  ASSERT_TRUE(writer.SwitchTo(dir.File("b.aof"), &error)) << error;
  Append(writer, 1, {"SET", "b", "3"});
  EXPECT_TRUE(writer.Close(&error)) << error;
  EXPECT_EQ(writer.background_fsyncs(), 1u);
  EXPECT_FALSE(writer.background_fsync_pending());
  EXPECT_EQ(ReadOrDie(dir.File("a.aof")),
            Resp({"SELECT", "1"}) + Resp({"SET", "a", "1"}) + Resp({"SET", "a", "2"}));
  EXPECT_EQ(ReadOrDie(dir.File("b.aof")), Resp({"SELECT", "1"}) + Resp({"SET", "b", "3"}));

  // Reopened after Close, the writer starts a new thread on demand.
  ASSERT_TRUE(writer.Open(dir.File("b.aof"), &error)) << error;
  Append(writer, 1, {"PING"});
  ASSERT_TRUE(writer.Flush(AppendFsync::kEverySec, &error)) << error;
  writer.WaitForBackgroundFsync();
  EXPECT_EQ(writer.background_fsyncs(), 2u);
}

// ------------------------------------------------------------------------------------------
// ReplayAof

TEST(AofReplayTest, CompleteStream) {
  const std::vector<Args> commands = {
      {"SELECT", "0"}, {"SET", "k", "v"}, {"SET", "bin", "a\r\n$3\r\n\0"s}, {"DEL", ""}};
  std::string data;
  for (const Args& c : commands) data += Resp(c);
  std::vector<Args> executed;
  const AofReplayResult result = Replay(data, &executed);
  EXPECT_EQ(result.status, Status::kOk) << result.error;
  EXPECT_EQ(result.valid_bytes, data.size());
  EXPECT_EQ(result.commands, commands.size());
  EXPECT_EQ(executed, commands);

  EXPECT_EQ(Replay("", &executed).status, Status::kOk);
  EXPECT_TRUE(executed.empty());
}

TEST(AofReplayTest, TruncationAtEveryOffset) {
  const std::vector<Args> commands = {
      {"SELECT", "0"}, {"SET", "key", "a\r\nb"}, {"MULTI"}, {"INCR", "n"}, {"SET", "e", ""},
      {"EXEC"},        {"DEL", "key"},           {"multi"}, {"PING"},      {"exec"},
  };
  // Offsets a valid file may end at, and how many commands are executed up to each.
  std::string data;
  std::vector<std::pair<size_t, size_t>> committed = {{0, 0}};
  bool in_multi = false;
  for (size_t i = 0; i < commands.size(); ++i) {
    data += Resp(commands[i]);
    if (commands[i][0] == "MULTI" || commands[i][0] == "multi") in_multi = true;
    if (commands[i][0] == "EXEC" || commands[i][0] == "exec") in_multi = false;
    if (!in_multi) committed.emplace_back(data.size(), i + 1);
  }
  ASSERT_EQ(committed.back().first, data.size());

  for (size_t cut = 0; cut <= data.size(); ++cut) {
    std::pair<size_t, size_t> last = committed.front();
    for (const auto& c : committed) {
      if (c.first <= cut) last = c;
    }
    std::vector<Args> executed;
    const AofReplayResult result = Replay(std::string_view(data).substr(0, cut), &executed);
    SCOPED_TRACE("cut at " + std::to_string(cut));
    EXPECT_EQ(result.status, last.first == cut ? Status::kOk : Status::kTruncated);
    EXPECT_EQ(result.valid_bytes, last.first);
    EXPECT_EQ(result.commands, last.second);
    EXPECT_EQ(executed, std::vector<Args>(commands.begin(), commands.begin() + last.second));
    if (result.status == Status::kTruncated) {
      EXPECT_EQ(result.error_offset, cut);
      EXPECT_FALSE(result.error.empty());
    }
  }
}

TEST(AofReplayTest, TransactionIsPassedWholeOnlyAtExec) {
  const std::string before = Resp({"SET", "a", "1"});
  const std::string multi = Resp({"MULTI"});
  const std::string body = Resp({"INCR", "a"}) + Resp({"INCR", "a"});
  const std::string exec = Resp({"EXEC"});
  std::vector<Args> executed;

  AofReplayResult result = Replay(before + multi + body, &executed);
  EXPECT_EQ(result.status, Status::kTruncated);
  EXPECT_EQ(result.valid_bytes, before.size());
  EXPECT_NE(result.error.find("MULTI at offset " + std::to_string(before.size())),
            std::string::npos)
      << result.error;
  EXPECT_EQ(executed, (std::vector<Args>{{"SET", "a", "1"}}));

  result = Replay(before + multi + body + exec, &executed);
  EXPECT_EQ(result.status, Status::kOk) << result.error;
  EXPECT_EQ(result.commands, 5u);
  EXPECT_EQ(executed, (std::vector<Args>{
                          {"SET", "a", "1"}, {"MULTI"}, {"INCR", "a"}, {"INCR", "a"}, {"EXEC"}}));

  // Redis never writes these; they mean the file is not what Goblin or Redis wrote.
  result = Replay(before + multi + multi, &executed);
  EXPECT_EQ(result.status, Status::kCorrupt);
  EXPECT_EQ(result.error_offset, before.size() + multi.size());
  result = Replay(before + exec, &executed);
  EXPECT_EQ(result.status, Status::kCorrupt);
  EXPECT_EQ(result.error_offset, before.size());
  EXPECT_EQ(result.valid_bytes, before.size());
}

struct CorruptCase {
  std::string data;
  uint64_t offset;
  std::string expected;  // a substring of the error
};

TEST(AofReplayTest, CorruptionReportsTheOffendingByte) {
  const std::string good = Resp({"SET", "k", "v"});  // 29 bytes
  const size_t g = good.size();
  const std::vector<CorruptCase> cases = {
      {"x", 0, "expected '*', found byte 0x78 'x'"},
      {good + "+OK\r\n", g, "expected '*', found byte 0x2b '+'"},
      {good + "\r\n", g, "expected '*', found byte 0x0d"},
      {"*1\r\n:1\r\n", 4, "expected '$', found byte 0x3a ':'"},
      {"*\r\n", 1, "expected a digit of the argument count"},
      {"*1x\r\n", 2, "expected '\\r' after the argument count"},
      {"*1\rx", 3, "expected '\\n' after '\\r'"},
      {"*-1\r\n", 1, "expected a digit of the argument count, found byte 0x2d '-'"},
      {"*0\r\n", 1, "argument count 0 is below 1"},
      {"*1048577\r\n", 1, "argument count exceeds 1048576"},
      {"*99999999999999999999999\r\n", 1, "argument count exceeds"},
      {"*1\r\n$-1\r\n", 5, "expected a digit of the bulk length"},
      {"*1\r\n$1x\r\n", 6, "expected '\\r' after the bulk length"},
      {"*1\r\n$536870913\r\n", 5, "bulk length exceeds 536870912"},
      {"*1\r\n$1\r\nab\r\n", 9, "expected '\\r' after a 1-byte bulk, found byte 0x62 'b'"},
      {"*1\r\n$1\r\na\rx", 10, "expected '\\n' after '\\r', found byte 0x78 'x'"},
      {"*1\r\n$1\r\na\n\r", 9, "expected '\\r' after a 1-byte bulk"},
      {good + "*2\r\n$1\r\na\r\n*", g + 11, "expected '$', found byte 0x2a '*'"},
  };
  for (const CorruptCase& c : cases) {
    std::vector<Args> executed;
    const AofReplayResult result = Replay(c.data, &executed);
    SCOPED_TRACE(testing::PrintToString(c.data));
    EXPECT_EQ(result.status, Status::kCorrupt);
    EXPECT_EQ(result.error_offset, c.offset);
    EXPECT_NE(result.error.find(c.expected), std::string::npos) << result.error;
    EXPECT_NE(result.error.find("at offset " + std::to_string(c.offset)), std::string::npos)
        << result.error;
    const bool after_good = c.data.compare(0, g, good) == 0;
    EXPECT_EQ(result.valid_bytes, after_good ? g : 0u);
    EXPECT_EQ(result.commands, after_good ? 1u : 0u);
  }
}

TEST(AofReplayTest, LargeClaimedLengthsAreTruncationNotAllocation) {
  // In range but absent: the bytes are checked before anything of that size is made.
  for (const std::string& data : {"*1048576\r\n"s, "*1\r\n$536870912\r\n"s, "*1\r\n$5\r\nab"s}) {
    std::vector<Args> executed;
    const AofReplayResult result = Replay(data, &executed);
    EXPECT_EQ(result.status, Status::kTruncated) << testing::PrintToString(data);
    EXPECT_EQ(result.valid_bytes, 0u);
  }
}

TEST(AofReplayTest, ExecuteFailureStopsAtThatCommand) {
  const std::string first = Resp({"SET", "a", "1"});
  const std::string data = first + Resp({"BOGUS"}) + Resp({"SET", "b", "2"});
  size_t calls = 0;
  const AofReplayResult result =
      ReplayAof(data, [&](std::span<const std::string_view> argv, std::string* error) {
        ++calls;
        if (argv[0] != "BOGUS") return true;
        *error = "Unknown command 'BOGUS' reading the append only file";
        return false;
      });
  EXPECT_EQ(result.status, Status::kCorrupt);
  EXPECT_EQ(result.error, "Unknown command 'BOGUS' reading the append only file");
  EXPECT_EQ(result.error_offset, first.size());
  EXPECT_EQ(result.valid_bytes, first.size());
  EXPECT_EQ(result.commands, 1u);
  EXPECT_EQ(calls, 2u);
}

TEST(AofReplayTest, AnnotationsAreSkipped) {
  const std::string cmd = Resp({"SET", "a", "1"});
  std::vector<Args> executed;
  AofReplayResult result = Replay("#TS:1700000000\r\n" + cmd + "#TS:1700000001\r\n", &executed);
  EXPECT_EQ(result.status, Status::kOk) << result.error;
  EXPECT_EQ(executed, (std::vector<Args>{{"SET", "a", "1"}}));
  result = Replay(cmd + "#TS:17000", &executed);
  EXPECT_EQ(result.status, Status::kTruncated);
  EXPECT_EQ(result.valid_bytes, cmd.size());
  // Inside a transaction an annotation does not move valid_bytes past the MULTI.
  const std::string multi = Resp({"MULTI"});
  result = Replay(cmd + multi + "#TS:1\n" + Resp({"INCR", "n"}) + "+", &executed);
  EXPECT_EQ(result.status, Status::kCorrupt);
  EXPECT_EQ(result.valid_bytes, cmd.size());
  EXPECT_EQ(result.commands, 1u);
}

// Random commands (binary arguments with CR, LF, NUL, '*' and '$' inside, db changes,
// transactions) written with AofWriter across a SwitchTo, replayed back identically; then
// random truncations of the files replay to a prefix at a command boundary.
TEST(AofReplayTest, RandomizedWriterRoundTrip) {
  TempDir dir;
  std::mt19937_64 rng(20240611);
  auto uniform = [&](size_t n) { return static_cast<size_t>(rng() % n); };
  const std::string alphabet = "ab\r\n\0*$:-+0123456789"s;
  auto random_arg = [&] {
    const size_t length = uniform(8) == 0 ? uniform(600) : uniform(12);
    std::string arg;
    for (size_t i = 0; i < length; ++i) {
      arg += uniform(4) == 0 ? static_cast<char>(rng()) : alphabet[uniform(alphabet.size())];
    }
    return arg;
  };
  const std::vector<std::string> names = {"SET", "DEL", "HSET", "ZADD", "SADD", "EXPIRE"};

  AofWriter writer;
  std::string error;
  const std::vector<std::string> paths = {dir.File("1.incr.aof"), dir.File("2.incr.aof")};
  ASSERT_TRUE(writer.Open(paths[0], &error)) << error;
  std::vector<std::vector<Args>> expected(2);
  size_t file = 0;
  int file_db = -1;
  int db = 0;
  auto write = [&](const Args& args) {
    if (db != file_db) expected[file].push_back({"SELECT", std::to_string(db)});
    file_db = db;
    expected[file].push_back(args);
    Append(writer, db, args);
  };
  for (int step = 0; step < 3000; ++step) {
    if (uniform(10) == 0) db = static_cast<int>(uniform(4));
    if (uniform(25) == 0) {
      write({"MULTI"});
      for (size_t i = uniform(4); i > 0; --i) write({names[uniform(names.size())], random_arg()});
      write({"EXEC"});
    } else {
      Args args = {names[uniform(names.size())]};
      for (size_t i = uniform(5); i > 0; --i) args.push_back(random_arg());
      write(args);
    }
    if (uniform(7) == 0) {
      ASSERT_TRUE(writer.Flush(AppendFsync::kNo, &error)) << error;
    }
    if (step == 1500) {
      ASSERT_TRUE(writer.SwitchTo(paths[1], &error)) << error;
      file = 1;
      file_db = -1;
    }
  }
  ASSERT_TRUE(writer.Close(&error)) << error;

  for (size_t f = 0; f < 2; ++f) {
    const std::string data = ReadOrDie(paths[f]);
    std::vector<Args> executed;
    const AofReplayResult result = Replay(data, &executed);
    ASSERT_EQ(result.status, Status::kOk) << result.error;
    EXPECT_EQ(result.valid_bytes, data.size());
    EXPECT_EQ(executed, expected[f]);

    for (int trial = 0; trial < 200; ++trial) {
      const size_t cut = uniform(data.size() + 1);
      std::vector<Args> partial;
      const AofReplayResult truncated = Replay(std::string_view(data).substr(0, cut), &partial);
      ASSERT_NE(truncated.status, Status::kCorrupt) << truncated.error;
      ASSERT_LE(partial.size(), expected[f].size());
      EXPECT_TRUE(std::equal(partial.begin(), partial.end(), expected[f].begin()));
      EXPECT_EQ(truncated.commands, partial.size());
      // valid_bytes is a boundary: replaying exactly that much gives the same commands, cleanly.
      std::vector<Args> again;
      const AofReplayResult clean =
          Replay(std::string_view(data).substr(0, truncated.valid_bytes), &again);
      EXPECT_EQ(clean.status, Status::kOk);
      EXPECT_EQ(again, partial);
      EXPECT_EQ(truncated.status == Status::kOk, truncated.valid_bytes == cut);
    }
  }
}

}  // namespace
}  // namespace goblin
