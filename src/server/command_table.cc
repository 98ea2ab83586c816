#include "server/command_table.h"

#include <algorithm>
#include <cctype>

#include "core/ascii.h"
#include "core/string_number.h"
#include "server/key_specs.h"

namespace goblin {
const Command* Command::FindSubcommand(std::string_view name) const {
  std::string full = this->name + "|" + AsciiLower(name);
  for (const auto& sub : subcommands) {
    if (sub->name == full) return sub.get();
  }
  return nullptr;
}

std::optional<std::vector<size_t>> Command::KeyPositions(
    const std::vector<std::string_view>& argv) const {
  if (find_keys != nullptr) return find_keys(argv);
  std::vector<size_t> keys;
  if (flags & kCmdPubsub) return keys;
  const int argc = static_cast<int>(argv.size());
  if (first_key > 0) {
    int last = last_key >= 0 ? last_key : argc + last_key;
    for (int i = first_key; i <= last && i < argc; i += std::max(key_step, 1)) {
      keys.push_back(static_cast<size_t>(i));
    }
  }
  if (keynum_index > 0) {
    int64_t count;
    if (keynum_index >= argc || !ParseInt64(argv[static_cast<size_t>(keynum_index)], &count) ||
        count < 0 || (count == 0 && !(flags & kCmdNoMandatoryKeys)) ||
        count > argc - keynum_index - 1) {
      return std::nullopt;
    }
    for (int64_t i = 1; i <= count; ++i) keys.push_back(static_cast<size_t>(keynum_index + i));
  }
  if (!keys_after_keyword.empty()) {
    for (size_t i = 1; i < argv.size(); ++i) {
      if (!EqualsIgnoreCase(argv[i], keys_after_keyword)) continue;
      const size_t rest = argv.size() - i - 1;
      if (rest == 0 || rest % 2 != 0) return std::nullopt;
      for (size_t k = 0; k < rest / 2; ++k) keys.push_back(i + 1 + k);
      break;
    }
  }
  return keys;
}

Command* CommandTable::Add(Command command) {
  command.name = AsciiLower(command.name);
  command.key_specs = FindKeySpecs(command.name);
  auto owned = std::make_unique<Command>(std::move(command));
  Command* raw = owned.get();
  ordered_.push_back(raw);
  commands_[raw->name] = std::move(owned);
  return raw;
}

Command* CommandTable::AddSubcommand(Command* parent, Command command) {
  command.name = parent->name + "|" + AsciiLower(command.name);
  command.parent = parent;
  command.key_specs = FindKeySpecs(command.name);
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
