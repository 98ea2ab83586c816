// goblin-server [config-file] [--option value ...]: redis-server's command line.
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>

#include "core/hash.h"
#include "server/cycle_clock.h"
#include "server/log.h"
#include "server/server.h"
#include "server/version.h"

#ifdef GOBLIN_HAVE_JEMALLOC
// jemalloc reads this at startup. Background threads return freed pages to the kernel off
// the serving thread; without them a free inside a command can stall it for milliseconds
// (seen at 4-5 ms while a sorted set grew). Redis enables the same (jemalloc-bg-thread yes).
extern "C" {
const char* malloc_conf = "background_thread:true";
}
#endif

namespace {

void Daemonize() {
  if (fork() != 0) _exit(0);
  setsid();
  int fd = open("/dev/null", O_RDWR);
  if (fd >= 0) {
    dup2(fd, STDIN_FILENO);
    dup2(fd, STDOUT_FILENO);
    dup2(fd, STDERR_FILENO);
    if (fd > STDERR_FILENO) close(fd);
  }
}

}  // namespace

int main(int argc, char** argv) {
  using namespace goblin;
  if (argc == 2 && (std::strcmp(argv[1], "-v") == 0 || std::strcmp(argv[1], "--version") == 0)) {
    std::printf("Goblin server v=%s redis_version=%s bits=64\n", kGoblinVersion, kRedisVersion);
    return 0;
  }
  if (argc == 2 && (std::strcmp(argv[1], "-h") == 0 || std::strcmp(argv[1], "--help") == 0)) {
    std::printf(
        "Usage: goblin-server [/path/to/redis.conf] [--option value ...]\n"
        "Options take redis-server's names, e.g. --port 6380 --unixsocket /tmp/g.sock\n");
    return 0;
  }
  Config config;
  char cwd[4096];
  if (getcwd(cwd, sizeof(cwd)) != nullptr) config.dir = cwd;
  ConfigRegistry registry(&config);
  std::string error = registry.LoadCommandLine(argc, argv);
  if (!error.empty()) {
    std::fprintf(stderr, "\n*** FATAL CONFIG FILE ERROR (Goblin %s) ***\n%s\n", kGoblinVersion,
                 error.c_str());
    return 1;
  }
  SetLogLevel(config.loglevel);
  if (config.daemonize) Daemonize();
  SetLogFile(config.logfile);
  std::random_device entropy;
  SetHashSeed((static_cast<uint64_t>(entropy()) << 32) | entropy());
  CycleClock::Calibrate();

  Server server(std::move(config));
  server.executable = argv[0];
  if (!server.config.pidfile.empty()) {
    std::ofstream(server.config.pidfile) << getpid() << "\n";
  }
  LogNotice(std::string("Goblin Core ") + kGoblinVersion + " (Redis " + kRedisVersion +
            " compatible), pid=" + std::to_string(getpid()));
  int code = server.Run();
  if (!server.config.pidfile.empty()) unlink(server.config.pidfile.c_str());
  return code;
}
