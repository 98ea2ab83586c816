#include "server/supervision.h"

#include <signal.h>

#include <cstdlib>

#include "net/sockets.h"
#include "server/log.h"

namespace goblin {

namespace {

bool HasEnvironment(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && value[0] != '\0';
}

}  // namespace

Supervision::Supervision(std::string_view mode) {
  if (mode == "auto") {
    if (HasEnvironment("UPSTART_JOB")) {
      manager_ = Manager::kUpstart;
    } else if (HasEnvironment("NOTIFY_SOCKET")) {
      manager_ = Manager::kSystemd;
    }
  } else if (mode == "upstart") {
    manager_ = Manager::kUpstart;
    if (!HasEnvironment("UPSTART_JOB")) {
      LogWarning("upstart supervision requested, but UPSTART_JOB not found!");
      manager_ = Manager::kNone;
    }
  } else if (mode == "systemd") {
    manager_ = Manager::kSystemd;
    if (!HasEnvironment("NOTIFY_SOCKET")) {
      LogWarning(
          "systemd supervision requested or auto-detected, but NOTIFY_SOCKET environment "
          "variable not found!");
      manager_ = Manager::kNone;
    }
  }
  if (manager_ == Manager::kSystemd)
    LogNotice(
        "Supervised by systemd. Please make sure you set appropriate values for TimeoutStartSec "
        "and TimeoutStopSec in your service unit.");
  if (manager_ == Manager::kUpstart)
    LogNotice("Supervised by upstart, will stop to signal readiness.");
}

void Supervision::Ready() {
  switch (manager_) {
    case Manager::kNone:
      break;
    case Manager::kSystemd:
      net::NotifyServiceManager("STATUS=Ready to accept connections\nREADY=1\n");
      break;
    case Manager::kUpstart:
      // upstart's "expect stop" waits for the process to stop itself; its job variable must
      // not reach the children.
      raise(SIGSTOP);
      unsetenv("UPSTART_JOB");
      break;
  }
}

void Supervision::Stopping() {
  if (manager_ == Manager::kSystemd) net::NotifyServiceManager("STOPPING=1\n");
}

}  // namespace goblin
