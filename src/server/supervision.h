// supervised: telling the service manager that started the server where it stands, as
// redis-server does. systemd (a unit of Type=notify, as Debian's redis-server.service is)
// hears READY=1 once the data is loaded and STOPPING=1 at shutdown on $NOTIFY_SOCKET; upstart
// (expect stop) sees the process stop itself once ready. "auto" picks whichever started it.
#pragma once

#include <string>
#include <string_view>

namespace goblin {

class Supervision {
 public:
  // mode: supervised's value (no, upstart, systemd, auto).
  explicit Supervision(std::string_view mode);

  void Ready();
  void Stopping();

 private:
  enum class Manager { kNone, kUpstart, kSystemd };
  Manager manager_ = Manager::kNone;
};

}  // namespace goblin
