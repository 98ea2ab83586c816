// The command families. Each src/commands/<family>.cc registers its rows in the command table;
// registry.cc calls them all.
#pragma once

#include "server/command_table.h"

namespace goblin {

// Every family below, in the order COMMAND lists them.
void RegisterAllCommands(CommandTable* table);

void RegisterStringCommands(CommandTable* table);
void RegisterKeyCommands(CommandTable* table);
void RegisterDumpRestoreCommands(CommandTable* table);
void RegisterConnectionCommands(CommandTable* table);
void RegisterServerCommands(CommandTable* table);
void RegisterIntrospectionCommands(CommandTable* table);
void RegisterInfoCommand(CommandTable* table);
void RegisterTransactionCommands(CommandTable* table);
void RegisterZsetCommands(CommandTable* table);
void RegisterGoblinCommands(CommandTable* table);
void RegisterHashCommands(CommandTable* table);
void RegisterHashFieldExpiryCommands(CommandTable* table);
void RegisterSetCommands(CommandTable* table);
void RegisterListCommands(CommandTable* table);
void RegisterSortCommands(CommandTable* table);
void RegisterPersistenceCommands(CommandTable* table);
void RegisterReplicationCommands(CommandTable* table);
void RegisterPubsubCommands(CommandTable* table);
void RegisterBitmapCommands(CommandTable* table);
void RegisterScriptingCommands(CommandTable* table);
void RegisterStreamCommands(CommandTable* table);
void RegisterHyperLogLogCommands(CommandTable* table);
void RegisterGeoCommands(CommandTable* table);
void RegisterLolwutCommand(CommandTable* table);
void RegisterAclCommands(CommandTable* table);
void RegisterClusterCommands(CommandTable* table);

}  // namespace goblin
