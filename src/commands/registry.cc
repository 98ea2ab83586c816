#include "commands/families.h"

namespace goblin {

void RegisterAllCommands(CommandTable* table) {
  RegisterStringCommands(table);
  RegisterKeyCommands(table);
  RegisterDumpRestoreCommands(table);
  RegisterConnectionCommands(table);
  RegisterServerCommands(table);
  RegisterIntrospectionCommands(table);
  RegisterInfoCommand(table);
  RegisterTransactionCommands(table);
  RegisterZsetCommands(table);
  RegisterGoblinCommands(table);
  RegisterHashCommands(table);
  RegisterHashFieldExpiryCommands(table);
  RegisterSetCommands(table);
  RegisterListCommands(table);
  RegisterSortCommands(table);
  RegisterPersistenceCommands(table);
  RegisterReplicationCommands(table);
  RegisterPubsubCommands(table);
  RegisterBitmapCommands(table);
  RegisterScriptingCommands(table);
  RegisterStreamCommands(table);
  RegisterHyperLogLogCommands(table);
  RegisterGeoCommands(table);
  RegisterLolwutCommand(table);
  RegisterAclCommands(table);
  RegisterClusterCommands(table);
}

}  // namespace goblin
