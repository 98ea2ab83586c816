// XINFO STREAM / GROUPS / CONSUMERS / HELP.
#include "commands/families.h"
#include "commands/stream_family.h"

namespace goblin {

void RegisterStreamInfoCommand(CommandTable* table) { (void)table; }

}  // namespace goblin
