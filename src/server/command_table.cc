#include "server/command_table.h"

#include <algorithm>
#include <cctype>
#include <cstdint>

#include "core/ascii.h"

namespace goblin {
const Command* Command::FindSubcommand(std::string_view name) const {
  std::string full = this->name + "|" + AsciiLower(name);
  for (const auto& sub : subcommands) {
    if (sub->name == full) return sub.get();
  }
  return nullptr;
}

std::optional<std::vector<KeyReference>> Command::Keys(const std::vector<std::string_view>& argv,
                                                       bool with_channels) const {
  std::vector<KeyReference> keys;
  // The common row (GET, MGET, HSET): one spec naming a fixed range, whose positions are the
  // legacy range registration derived from it, found without a search. Tracking asks this of
  // every read it remembers.
  if (PlainRange()) {
    const uint32_t key_flags = PlainRangeFlags(argv);
    const int argc = static_cast<int>(argv.size());
    const int last = std::min(last_key < 0 ? argc + last_key : last_key, argc - 1);
    if (last >= first_key) keys.reserve(static_cast<size_t>((last - first_key) / key_step + 1));
    for (int i = first_key; i <= last; i += key_step) {
      keys.push_back({static_cast<size_t>(i), key_flags});
    }
    return keys;
  }
  if (find_keys != nullptr) {
    std::optional<std::vector<size_t>> found = find_keys(argv);
    if (!found) return std::nullopt;
    for (size_t position : *found) {
      keys.push_back({position, KeyFlagsOf(key_specs, argv, position)});
    }
  } else {
    // No call has more keys than arguments: one allocation.
    keys.reserve(argv.size());
    for (const KeySpec& spec : key_specs) {
      if ((spec.flags & kKeyNotKey) && !with_channels) continue;
      KeySpec::Span span;
      if (!spec.Find(argv, &span)) return std::nullopt;
      // A count of no keys is a call without keys, which only a script may make.
      if (span.empty() && spec.find.type == KeyFind::Type::kKeynum &&
          !(flags & kCmdNoMandatoryKeys)) {
        return std::nullopt;
      }
      for (size_t i = span.first; !span.empty() && i <= span.last; i += span.step) {
        keys.push_back({i, spec.flags});
      }
    }
  }
  for (KeyReference& key : keys) {
    if (key.flags & kKeyVariableFlags) key.flags = ResolveVariableFlags(name, argv, key.flags);
  }
  return keys;
}

uint32_t AclCategoryByName(std::string_view name) {
  for (const auto& [category, category_name] : kAclCategoryNames) {
    if (EqualsIgnoreCase(name, category_name)) return category;
  }
  return 0;
}

namespace {

// COMMAND INFO's first key, last key and step, and the movablekeys flag, from the key specs, as
// Redis's populateCommandLegacyRangeSpec derives them: the specs that are plain ranges of
// consecutive keys from a fixed index, merged; any other spec makes the keys movable.
void DeriveLegacyRange(Command* command) {
  const std::vector<KeySpec>& specs = command->key_specs;
  if (specs.empty()) return;
  auto plain = [](const KeySpec& spec) {
    return spec.begin.type == KeyBegin::Type::kIndex && spec.find.type == KeyFind::Type::kRange;
  };
  if (specs.size() == 1 && plain(specs[0])) {
    const KeySpec& spec = specs[0];
    if (spec.flags & kKeyIncomplete) command->flags |= kCmdMovableKeys;
    command->first_key = spec.begin.index;
    command->last_key = spec.find.a < 0 ? spec.find.a : spec.begin.index + spec.find.a;
    command->key_step = spec.find.b;
    return;
  }
  int first = INT32_MAX;
  int last = 0;
  int previous_last = 0;
  for (const KeySpec& spec : specs) {
    if (!plain(spec) || spec.find.b != 1 ||
        (previous_last != 0 && previous_last != spec.begin.index - 1)) {
      command->flags |= kCmdMovableKeys;
      continue;
    }
    if (spec.flags & kKeyIncomplete) command->flags |= kCmdMovableKeys;
    first = std::min(first, spec.begin.index);
    const int spec_last = spec.find.a >= 0 ? spec.begin.index + spec.find.a : spec.find.a;
    // Compared unsigned, as Redis does, so that a count from the end wins over an index.
    last =
        static_cast<int>(std::max(static_cast<unsigned>(last), static_cast<unsigned>(spec_last)));
    previous_last = last;
  }
  if (first == INT32_MAX) {
    command->flags |= kCmdMovableKeys;
    return;
  }
  command->first_key = first;
  command->last_key = last;
  command->key_step = 1;
}

// The categories a row's flags imply, as Redis's setImplicitACLCategories adds them. A container
// (CONFIG, CLIENT, ...) is only @slow: its subcommands carry the real categories.
uint32_t AclCategoriesWithImplied(const Command& command) {
  if (command.handler == nullptr) return kAclSlow;
  uint32_t categories = command.acl_categories;
  if (command.flags & kCmdWrite) categories |= kAclWrite;
  // Scripts may write whatever their flags say: EVAL_RO is not @read.
  if ((command.flags & kCmdReadonly) && !(categories & kAclScripting)) categories |= kAclRead;
  if (command.flags & kCmdAdmin) categories |= kAclAdmin | kAclDangerous;
  if (command.flags & kCmdPubsub) categories |= kAclPubsub;
  if (command.flags & kCmdFast) categories |= kAclFast;
  if (command.flags & kCmdBlocking) categories |= kAclBlocking;
  if (!(categories & kAclFast)) categories |= kAclSlow;
  return categories;
}

// What registration derives from a row's own description.
void CompleteRow(Command* command) {
  command->has_keys = std::any_of(command->key_specs.begin(), command->key_specs.end(),
                                  [](const KeySpec& spec) { return !(spec.flags & kKeyNotKey); });
  DeriveLegacyRange(command);
  command->acl_categories = AclCategoriesWithImplied(*command);
}

}  // namespace

Command* CommandTable::Add(Command command) {
  command.name = AsciiLower(command.name);
  command.acl_id = next_acl_id_++;
  CompleteRow(&command);
  auto owned = std::make_unique<Command>(std::move(command));
  Command* raw = owned.get();
  ordered_.push_back(raw);
  commands_[raw->name] = std::move(owned);
  return raw;
}

Command* CommandTable::AddSubcommand(Command* parent, Command command) {
  command.name = parent->name + "|" + AsciiLower(command.name);
  command.parent = parent;
  command.acl_id = next_acl_id_++;
  CompleteRow(&command);
  parent->subcommands.push_back(std::make_unique<Command>(std::move(command)));
  return parent->subcommands.back().get();
}

const Command* CommandTable::Find(std::string_view name) const {
  // Fast path: clients send lowercase or uppercase names; fold into a small stack buffer.
  char buf[64];
  if (name.empty() || name.size() > sizeof(buf)) return nullptr;
  for (size_t i = 0; i < name.size(); ++i) buf[i] = AsciiToLower(name[i]);
  auto it = commands_.find(std::string_view(buf, name.size()));
  return it == commands_.end() ? nullptr : it->second.get();
}

const Command* CommandTable::FindFullName(std::string_view name) const {
  const size_t bar = name.find('|');
  const Command* command = Find(name.substr(0, bar));
  if (command == nullptr || bar == std::string_view::npos) return command;
  return command->FindSubcommand(name.substr(bar + 1));
}

}  // namespace goblin
