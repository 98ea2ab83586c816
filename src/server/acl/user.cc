#include "server/acl/user.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <algorithm>

#include "core/ascii.h"
#include "resp/request_parser.h"

namespace goblin::acl {

namespace {

constexpr size_t kHashLength = 64;

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;  // upper case too: Redis takes only lower-case hashes
}

// A `#<hash>` or `!<hash>` rule's hash: exactly 64 lower-case hex digits.
bool ParseHash(std::string_view hex, PasswordHash* hash) {
  if (hex.size() != kHashLength) return false;
  for (size_t i = 0; i < hash->size(); ++i) {
    const int high = HexDigit(hex[2 * i]);
    const int low = HexDigit(hex[2 * i + 1]);
    if (high < 0 || low < 0) return false;
    (*hash)[i] = static_cast<unsigned char>(high << 4 | low);
  }
  return true;
}

}  // namespace

PasswordHash Sha256(std::string_view text) {
  PasswordHash digest;
  unsigned int length = 0;
  EVP_Digest(text.data(), text.size(), digest.data(), &length, EVP_sha256(), nullptr);
  return digest;
}

std::string HashHex(const PasswordHash& hash) {
  return LowerHex(std::string_view(reinterpret_cast<const char*>(hash.data()), hash.size()));
}

bool MergeSelectorArguments(std::span<const std::string_view> words, std::vector<std::string>* out,
                            size_t* unmatched) {
  out->clear();
  std::string selector;
  size_t open = words.size();  // none
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string_view word = words[i];
    if (open == words.size() && !word.empty() && word.front() == '(' && word.back() != ')') {
      selector = std::string(word);
      open = i;
      continue;
    }
    if (open != words.size()) {
      selector += ' ';
      selector += word;
      if (!word.empty() && word.back() == ')') {
        out->push_back(std::move(selector));
        open = words.size();
      }
      continue;
    }
    out->emplace_back(word);
  }
  if (open != words.size()) {
    *unmatched = open;
    return false;
  }
  return true;
}

User::User(std::string name, uint32_t pubsub_default) : name_(std::move(name)) {
  selectors_.emplace_back(Selector::kRoot | pubsub_default);
}

RuleError User::Apply(std::string_view rule, const RuleContext& context) {
  RuleError error = RuleError::kNone;
  if (rule.empty()) return error;  // an empty rule changes nothing
  if (EqualsIgnoreCase(rule, "on")) {
    flags_ = (flags_ | kEnabled) & ~kDisabled;
  } else if (EqualsIgnoreCase(rule, "off")) {
    flags_ = (flags_ | kDisabled) & ~kEnabled;
  } else if (EqualsIgnoreCase(rule, "skip-sanitize-payload")) {
    flags_ = (flags_ | kSkipSanitizePayload) & ~kSanitizePayload;
  } else if (EqualsIgnoreCase(rule, "sanitize-payload")) {
    flags_ = (flags_ | kSanitizePayload) & ~kSkipSanitizePayload;
  } else if (EqualsIgnoreCase(rule, "nopass")) {
    flags_ |= kNoPass;
    passwords_.clear();
  } else if (EqualsIgnoreCase(rule, "resetpass")) {
    flags_ &= ~kNoPass;
    passwords_.clear();
  } else if (rule[0] == '>' || rule[0] == '#') {
    error = AddPassword(rule);
  } else if (rule[0] == '<' || rule[0] == '!') {
    error = RemovePassword(rule);
  } else if (rule.size() >= 2 && rule.front() == '(' && rule.back() == ')') {
    Selector selector(context.pubsub_default);
    std::vector<std::string> inner;
    // Unbalanced quotes leave no rules, and so an empty selector, as Redis's sdssplitargs.
    if (!SplitInlineArgs(rule.substr(1, rule.size() - 2), &inner)) inner.clear();
    for (const std::string& selector_rule : inner) {
      error = selector.Apply(selector_rule, *context.commands);
      if (error != RuleError::kNone) return error;
    }
    selectors_.push_back(std::move(selector));
  } else if (EqualsIgnoreCase(rule, "clearselectors")) {
    selectors_.erase(selectors_.begin() + 1, selectors_.end());
  } else if (EqualsIgnoreCase(rule, "reset")) {
    for (std::string_view step : {"resetpass", "resetkeys", "resetchannels"}) {
      Apply(step, context);
    }
    if (context.pubsub_default & Selector::kAllChannels) Apply("allchannels", context);
    for (std::string_view step : {"off", "sanitize-payload", "clearselectors", "-@all"}) {
      Apply(step, context);
    }
  } else {
    error = selectors_.front().Apply(rule, *context.commands);
  }
  Refresh();
  return error;
}

RuleError User::AddPassword(std::string_view rule) {
  PasswordHash hash;
  if (rule[0] == '>') {
    hash = Sha256(rule.substr(1));
  } else if (!ParseHash(rule.substr(1), &hash)) {
    return RuleError::kBadHash;
  }
  if (std::find(passwords_.begin(), passwords_.end(), hash) == passwords_.end()) {
    passwords_.push_back(hash);
  }
  flags_ &= ~kNoPass;
  return RuleError::kNone;
}

RuleError User::RemovePassword(std::string_view rule) {
  PasswordHash hash;
  if (rule[0] == '<') {
    hash = Sha256(rule.substr(1));
  } else if (!ParseHash(rule.substr(1), &hash)) {
    return RuleError::kBadHash;
  }
  auto found = std::find(passwords_.begin(), passwords_.end(), hash);
  if (found == passwords_.end()) return RuleError::kNoSuchPassword;
  passwords_.erase(found);
  return RuleError::kNone;
}

void User::Refresh() {
  unrestricted_ = std::any_of(selectors_.begin(), selectors_.end(),
                              [](const Selector& selector) { return selector.unrestricted(); });
}

void User::TakeRulesOf(const User& other) {
  flags_ = other.flags_;
  passwords_ = other.passwords_;
  selectors_ = other.selectors_;
  unrestricted_ = other.unrestricted_;
}

std::string User::Describe() const {
  std::string text;
  for (const auto& [flag, name] : kFlagNames) {
    if (flags_ & flag) {
      text += name;
      text += ' ';
    }
  }
  for (const PasswordHash& hash : passwords_) text += '#' + HashHex(hash) + ' ';
  for (const Selector& selector : selectors_) {
    if (selector.root()) {
      text += selector.Describe();
    } else {
      text += " (" + selector.Describe() + ")";
    }
  }
  return text;
}

Denial User::Check(const Command& command, const std::vector<std::string_view>& argv,
                   size_t* position) const {
  // When no selector allows the call, the refusal reported is the highest kind (a channel over
  // a key over the command), and among equal kinds the one furthest in argv.
  if (selectors_.size() == 1) return selectors_[0].Check(command, argv, position);
  Denial relevant = Denial::kCommand;
  size_t relevant_position = 0;
  for (const Selector& selector : selectors_) {
    size_t at = 0;
    const Denial denial = selector.Check(command, argv, &at);
    if (denial == Denial::kNone) return Denial::kNone;
    if (denial > relevant || (denial == relevant && at > relevant_position)) {
      relevant = denial;
      relevant_position = at;
    }
  }
  *position = relevant_position;
  return relevant;
}

bool User::AllowsWithEveryKey(const Command& command, const std::vector<std::string_view>& argv,
                              uint32_t key_spec_flags) const {
  return std::any_of(selectors_.begin(), selectors_.end(), [&](const Selector& selector) {
    size_t at = 0;
    return selector.Check(command, argv, &at) == Denial::kNone &&
           selector.AllowsAnyKey(key_spec_flags);
  });
}

bool User::AllowsChannel(std::string_view channel, bool is_pattern) const {
  return std::any_of(selectors_.begin(), selectors_.end(), [&](const Selector& selector) {
    return selector.AllowsChannel(channel, is_pattern);
  });
}

bool User::Accepts(std::string_view password) const {
  if (!enabled()) return false;
  if (nopass()) return true;
  const PasswordHash hash = Sha256(password);
  bool match = false;
  // Every stored hash is compared in full, in constant time.
  for (const PasswordHash& stored : passwords_) {
    match |= CRYPTO_memcmp(stored.data(), hash.data(), hash.size()) == 0;
  }
  return match;
}

std::vector<std::string> User::passwords() const {
  std::vector<std::string> hex;
  for (const PasswordHash& hash : passwords_) hex.push_back(HashHex(hash));
  return hex;
}

}  // namespace goblin::acl
