// An ACL user: whether it may log in, its passwords (kept only as SHA-256 hex), and its
// selectors, the first of which is the root selector (server/acl/selector.h). Rules are applied
// one at a time, left to right, as Redis's ACLSetUser applies them.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "server/acl/selector.h"

namespace goblin::acl {

// A password's SHA-256: all a user keeps of it.
using PasswordHash = std::array<unsigned char, 32>;
PasswordHash Sha256(std::string_view text);
// Lowercase hex, as ACL LIST, ACL GETUSER and `#<hash>` rules write a hash.
std::string HashHex(const PasswordHash& hash);

// Arguments holding one selector spread over several words ("(~a:*", "+get)") joined back into
// one, as Redis's ACLMergeSelectorArguments joins them. False when a parenthesis is left open;
// *unmatched is then the index of the word that opened it.
bool MergeSelectorArguments(std::span<const std::string_view> words, std::vector<std::string>* out,
                            size_t* unmatched);

// What a rule applies against: the command table (for command names and categories) and
// acl-pubsub-default (Selector::kAllChannels or 0), which new selectors start from.
struct RuleContext {
  const CommandTable* commands;
  uint32_t pubsub_default;
};

class User {
 public:
  // Redis's user flags, in the order ACL LIST and ACL GETUSER show them.
  enum Flag : uint32_t {
    kEnabled = 1,
    kDisabled = 2,
    kNoPass = 4,
    kSkipSanitizePayload = 8,
    kSanitizePayload = 16,
  };
  static constexpr std::pair<Flag, std::string_view> kFlagNames[] = {
      {kEnabled, "on"},
      {kDisabled, "off"},
      {kNoPass, "nopass"},
      {kSkipSanitizePayload, "skip-sanitize-payload"},
      {kSanitizePayload, "sanitize-payload"}};

  // A new user: off, no password, no keys, channels as acl-pubsub-default says, no commands.
  User(std::string name, uint32_t pubsub_default);

  // Applies one rule (Redis's ACLSetUser): a user rule (on, off, >password, <password, #hash,
  // !hash, nopass, resetpass, (selector), clearselectors, reset, sanitize-payload,
  // skip-sanitize-payload) or a rule of the root selector. On error the user may be half
  // changed: callers work on a copy.
  RuleError Apply(std::string_view rule, const RuleContext& context);

  // The rules that recreate the user, as ACL LIST and the ACL file write them (without
  // "user <name> ").
  std::string Describe() const;

  // Whether the call is allowed: one selector must allow all of it. On refusal, *position is
  // argv's index of the key or channel refused, 0 for the command, chosen as Redis chooses.
  Denial Check(const Command& command, const std::vector<std::string_view>& argv,
               size_t* position) const;
  // Whether some selector allows the call and every key with key_spec_flags access (SORT's
  // BY and GET patterns may name any key).
  bool AllowsWithEveryKey(const Command& command, const std::vector<std::string_view>& argv,
                          uint32_t key_spec_flags) const;
  bool AllowsChannel(std::string_view channel, bool is_pattern) const;

  // Whether password opens this user: it is enabled and nopass or holds the password.
  bool Accepts(std::string_view password) const;

  const std::string& name() const { return name_; }
  uint32_t flags() const { return flags_; }
  bool enabled() const { return !(flags_ & kDisabled); }
  bool nopass() const { return flags_ & kNoPass; }
  // The password hashes in hex, in the order they were added.
  std::vector<std::string> passwords() const;
  const std::vector<Selector>& selectors() const { return selectors_; }
  // Some selector allows every command, key and channel: the command path skips the check.
  bool unrestricted() const { return unrestricted_; }

  // The rules of `other`, under this user's name (ACL SETUSER's staged copy going live).
  void TakeRulesOf(const User& other);

 private:
  RuleError AddPassword(std::string_view rule);
  RuleError RemovePassword(std::string_view rule);
  void Refresh();

  std::string name_;
  uint32_t flags_ = kDisabled | kSanitizePayload;
  std::vector<PasswordHash> passwords_;
  std::vector<Selector> selectors_;
  bool unrestricted_ = false;
};

}  // namespace goblin::acl
