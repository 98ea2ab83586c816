#include "scripting/eval_scripts.h"

#include "core/ascii.h"
#include "scripting/script_flags.h"
#include "scripting/sha1.h"

namespace goblin {

EvalScripts::EvalScripts() : vm_(std::make_unique<LuaVm>(LuaVm::Purpose::kEval)) {}

const EvalScript* EvalScripts::Add(std::string_view script, std::string* sha, std::string* error) {
  *sha = Sha1Hex(script);
  if (auto it = scripts_.find(*sha); it != scripts_.end()) return &it->second;
  EvalScript entry;
  size_t body_offset = 0;
  if (!ParseEvalShebang(script, &entry.flags, &body_offset, error)) return nullptr;
  std::string compile_error;
  if (!vm_->Compile(script.substr(body_offset), &compile_error, &entry.handle)) {
    *error = "ERR Error compiling script (new function): " + compile_error;
    return nullptr;
  }
  entry.sha = *sha;
  entry.bytes = script.size();
  text_bytes_ += script.size();
  return &scripts_.emplace(*sha, entry).first->second;
}

const EvalScript* EvalScripts::Find(std::string_view sha) const {
  if (sha.size() != 40) return nullptr;
  char lower[40];
  for (size_t i = 0; i < 40; ++i) lower[i] = AsciiToLower(sha[i]);
  auto it = scripts_.find(std::string_view(lower, sizeof(lower)));
  return it == scripts_.end() ? nullptr : &it->second;
}

void EvalScripts::Flush() {
  scripts_.clear();
  text_bytes_ = 0;
  vm_ = std::make_unique<LuaVm>(LuaVm::Purpose::kEval);
}

size_t EvalScripts::CacheBytes() const {
  // Per entry: the 40-byte name, the entry and the hash node around them.
  constexpr size_t kEntryBytes = 40 + sizeof(EvalScript) + 48;
  return text_bytes_ + scripts_.size() * kEntryBytes;
}

}  // namespace goblin
