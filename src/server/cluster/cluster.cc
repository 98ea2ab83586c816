// The cluster's state: nodes, slots, epochs, nodes.conf and what the CLUSTER commands report
// and change. The bus is cluster_bus.cc's, redirections cluster_routing.cc's.
#include "server/cluster/cluster.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>
#include <sstream>

#include "core/ascii.h"
#include "core/string_number.h"
#include "persist/file_util.h"
#include "resp/reply_builder.h"
#include "server/log.h"
#include "server/master_link.h"
#include "server/server.h"

namespace goblin::cluster {

namespace {

// How long a forgotten node stays forgotten (CLUSTER FORGET), as Redis keeps it.
constexpr int64_t kForgetMs = 60'000;

// The flags as CLUSTER NODES writes them, in Redis's order.
std::string FlagsText(uint16_t flags) {
  static const std::pair<uint16_t, const char*> kNames[] = {
      {kMyself, "myself"},         {kMaster, "master"},        {kReplica, "slave"},
      {kPossiblyFailing, "fail?"}, {kFailing, "fail"},         {kHandshake, "handshake"},
      {kNoAddress, "noaddr"},      {kNoFailover, "nofailover"}};
  std::string text;
  for (const auto& [flag, name] : kNames) {
    if ((flags & flag) == 0) continue;
    if (!text.empty()) text += ',';
    text += name;
  }
  return text.empty() ? "noflags" : text;
}

uint16_t FlagsFromText(std::string_view text) {
  uint16_t flags = 0;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view word = text.substr(start, end - start);
    if (word == "myself") flags |= kMyself;
    if (word == "master") flags |= kMaster;
    if (word == "slave") flags |= kReplica;
    if (word == "fail?") flags |= kPossiblyFailing;
    if (word == "fail") flags |= kFailing;
    if (word == "handshake") flags |= kHandshake;
    if (word == "noaddr") flags |= kNoAddress;
    if (word == "nofailover") flags |= kNoFailover;
    start = end + 1;
  }
  return flags;
}

// "a-b" or "a" for each run of set slots, space-separated with a leading space.
std::string SlotRanges(const SlotBits& slots) {
  std::string text;
  int slot = 0;
  while (slot < kClusterSlots) {
    if (!slots[static_cast<size_t>(slot)]) {
      ++slot;
      continue;
    }
    const int start = slot;
    while (slot + 1 < kClusterSlots && slots[static_cast<size_t>(slot + 1)]) ++slot;
    text += ' ' + std::to_string(start);
    if (slot != start) text += '-' + std::to_string(slot);
    ++slot;
  }
  return text;
}

std::vector<std::string> SplitSpaces(std::string_view line) {
  std::vector<std::string> words;
  std::istringstream in{std::string(line)};
  std::string word;
  while (in >> word) words.push_back(word);
  return words;
}

}  // namespace

Cluster::Cluster(Server& server) : server_(server) {}

Cluster::~Cluster() {
  links_.clear();
  for (const auto& listener : listeners_) {
    server_.event_loop.Unwatch(listener->fd);
    close(listener->fd);
  }
  if (config_lock_fd_ >= 0) close(config_lock_fd_);
}

int64_t Cluster::NowMs() const { return server_.NowMs(); }

std::string Cluster::RandomName() { return server_.RandomHexId(); }

ClusterNode* Cluster::CreateNode(std::string name, uint16_t flags) {
  auto node = std::make_unique<ClusterNode>();
  node->name = std::move(name);
  node->flags = flags;
  node->created_ms = NowMs();
  node->shard_id = RandomName();
  ClusterNode* raw = node.get();
  nodes_[raw->name] = std::move(node);
  return raw;
}

ClusterNode* Cluster::Lookup(std::string_view name) const {
  auto it = nodes_.find(name);
  return it == nodes_.end() ? nullptr : it->second.get();
}

void Cluster::DeleteNode(ClusterNode* node) {
  // Its slots are no longer known to be anyone's, and its reports against others go.
  for (int slot = 0; slot < kClusterSlots; ++slot) {
    const auto s = static_cast<size_t>(slot);
    if (importing_[s] == node) importing_[s] = nullptr;
    if (migrating_[s] == node) migrating_[s] = nullptr;
    if (slots_[s] == node) UnassignSlot(slot);
  }
  for (auto& [name, other] : nodes_) other->fail_reports.erase(node->name);
  if (node->is_replica()) DetachReplica(node);
  for (ClusterNode* replica : node->replicas) replica->master = nullptr;
  if (node->link != nullptr) FreeLink(node->link);
  if (node->inbound_link != nullptr) FreeLink(node->inbound_link);
  if (manual_failover_replica_ == node) manual_failover_replica_ = nullptr;
  nodes_.erase(node->name);
}

void Cluster::RenameNode(ClusterNode* node, const std::string& name) {
  LogVerbose("Renaming node " + node->name + " into " + name);
  auto it = nodes_.find(node->name);
  std::unique_ptr<ClusterNode> owned = std::move(it->second);
  nodes_.erase(it);
  owned->name = name;
  nodes_[name] = std::move(owned);
}

void Cluster::AttachReplica(ClusterNode* master, ClusterNode* replica) {
  if (replica->master == master) return;
  DetachReplica(replica);
  replica->master = master;
  if (master != nullptr) {
    master->replicas.push_back(replica);
    master->flags |= kMigrateTo;
  }
}

void Cluster::DetachReplica(ClusterNode* replica) {
  ClusterNode* master = replica->master;
  if (master == nullptr) return;
  auto& list = master->replicas;
  list.erase(std::remove(list.begin(), list.end(), replica), list.end());
  if (list.empty()) master->flags &= static_cast<uint16_t>(~kMigrateTo);
  replica->master = nullptr;
}

void Cluster::SetAsMaster(ClusterNode* node) {
  if (node->is_master()) return;
  DetachReplica(node);
  node->flags &= static_cast<uint16_t>(~kReplica);
  node->flags |= kMaster;
  MarkConfigDirty();
  state_update_pending_ = true;
}

void Cluster::AssignSlot(int slot, ClusterNode* node) {
  const auto s = static_cast<size_t>(slot);
  if (slots_[s] == node) return;
  if (slots_[s] != nullptr) UnassignSlot(slot);
  slots_[s] = node;
  node->slots[s] = true;
  ++node->slot_count;
}

void Cluster::UnassignSlot(int slot) {
  const auto s = static_cast<size_t>(slot);
  ClusterNode* owner = slots_[s];
  if (owner == nullptr) return;
  owner->slots[s] = false;
  --owner->slot_count;
  slots_[s] = nullptr;
}

void Cluster::UnassignAllSlotsOf(ClusterNode* node) {
  for (int slot = 0; slot < kClusterSlots; ++slot) {
    if (slots_[static_cast<size_t>(slot)] == node) UnassignSlot(slot);
  }
}

void Cluster::BecomeReplicaOf(ClusterNode* master) {
  if (myself_->is_master()) {
    myself_->flags &= static_cast<uint16_t>(~(kMaster | kMigrateTo));
    myself_->flags |= kReplica;
    UnassignAllSlotsOf(myself_);
    for (int slot = 0; slot < kClusterSlots; ++slot) {
      migrating_[static_cast<size_t>(slot)] = nullptr;
      importing_[static_cast<size_t>(slot)] = nullptr;
    }
  }
  AttachReplica(master, myself_);
  myself_->shard_id = master->shard_id;
  if (!master->ip.empty()) server_.master_link->SetMaster({master->ip, ClientPort(*master)});
  ResetManualFailover();
  MarkConfigDirty();
  state_update_pending_ = true;
}

int Cluster::ClientPort(const ClusterNode& node) const { return node.port; }

std::string Cluster::EndpointHost(const ClusterNode& node) const {
  const std::string& type = server_.config.cluster.preferred_endpoint_type;
  if (type == "hostname") return node.hostname.empty() ? "?" : node.hostname;
  if (type == "unknown-endpoint") return "?";
  return node.ip;
}

std::string Cluster::Endpoint(const ClusterNode& node) const {
  return EndpointHost(node) + ":" + std::to_string(ClientPort(node));
}

// ---- Startup and nodes.conf ------------------------------------------------------------------

bool Cluster::Start(std::string* error) {
  const Config& config = server_.config;
  config_path_ = config.cluster.config_file;
  if (!config_path_.empty() && config_path_[0] != '/')
    config_path_ = config.dir + "/" + config_path_;
  // One server per nodes.conf: a second one would make two nodes of one name.
  config_lock_fd_ = open(config_path_.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (config_lock_fd_ < 0) {
    *error = "Can't open " + config_path_ + " in order to acquire a lock: " + std::strerror(errno);
    return false;
  }
  if (flock(config_lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    *error = errno == EWOULDBLOCK
                 ? "Sorry, the cluster configuration file " + config_path_ +
                       " is already used by a different Redis Cluster node. Please make sure "
                       "that different nodes use different cluster configuration files."
                 : "Impossible to lock " + config_path_ + ": " + std::strerror(errno);
    return false;
  }
  std::string contents, read_error;
  if (ReadWholeFile(config_path_, &contents, &read_error) && !contents.empty()) {
    if (!LoadConfig(contents, error)) return false;
  } else {
    myself_ = CreateNode(RandomName(), kMyself | kMaster);
    LogNotice("No cluster configuration found, I'm " + myself_->name);
    if (!SaveConfig(error)) return false;
  }
  myself_->port = static_cast<int>(config.port != 0 ? config.port : config.tls.port);
  myself_->bus_port =
      static_cast<int>(config.cluster.port != 0 ? config.cluster.port : myself_->port + 10000);
  if (!config.cluster.announce_ip.empty()) myself_->ip = config.cluster.announce_ip;
  if (config.cluster.announce_port != 0)
    myself_->port = static_cast<int>(config.cluster.announce_port);
  if (config.cluster.announce_bus_port != 0) {
    myself_->bus_port = static_cast<int>(config.cluster.announce_bus_port);
  }
  myself_->hostname = config.cluster.announce_hostname;
  myself_->human_nodename = config.cluster.announce_human_nodename;

  // The bus port, on the same addresses as the client port.
  const int bus_port = static_cast<int>(
      config.cluster.port != 0 ? config.cluster.port
                               : (config.port != 0 ? config.port : config.tls.port) + 10000);
  if (bus_port > 65535) {
    *error =
        "Redis port number too high. Cluster communication port is 10,000 port numbers "
        "higher than your Redis port. Your Redis port number must be 55535 or less.";
    return false;
  }
  std::vector<int> fds;
  if (!server_.OpenBusListeners(bus_port, &fds, error)) return false;
  for (const int fd : fds) {
    listeners_.push_back(std::make_unique<ListenerHandler>(this, fd));
    server_.event_loop.Watch(fd, listeners_.back().get(), false);
  }
  first_state_update_ms_ = 0;
  return true;
}

bool Cluster::LoadConfig(const std::string& contents, std::string* error) {
  std::istringstream lines(contents);
  std::string line;
  int number = 0;
  auto fail = [&](const std::string& why) {
    *error = "Unrecoverable error: corrupted cluster config file \"" + line + "\"." +
             (why.empty() ? "" : " " + why);
    return false;
  };
  // Masters are linked to their replicas once every node is known.
  std::vector<std::pair<ClusterNode*, std::string>> replica_of;
  while (std::getline(lines, line)) {
    ++number;
    std::vector<std::string> words = SplitSpaces(line);
    if (words.empty()) continue;
    if (words[0] == "vars") {
      for (size_t i = 1; i + 1 < words.size(); i += 2) {
        int64_t value = 0;
        if (!ParseInt64(words[i + 1], &value) || value < 0) return fail("");
        if (words[i] == "currentEpoch") current_epoch_ = static_cast<uint64_t>(value);
        if (words[i] == "lastVoteEpoch") last_vote_epoch_ = static_cast<uint64_t>(value);
      }
      continue;
    }
    if (words.size() < 8 || words[0].size() != kNameLength) return fail("");
    ClusterNode* node = Lookup(words[0]);
    if (node == nullptr) node = CreateNode(words[0], 0);
    // ip:port@cport[,hostname[,aux=value...]]
    std::string address = words[1];
    std::vector<std::string> aux;
    for (size_t comma; (comma = address.rfind(',')) != std::string::npos;) {
      aux.insert(aux.begin(), address.substr(comma + 1));
      address.resize(comma);
    }
    for (size_t i = 0; i < aux.size(); ++i) {
      const size_t eq = aux[i].find('=');
      if (eq == std::string::npos) {
        if (i == 0) node->hostname = aux[i];
        continue;
      }
      const std::string key = aux[i].substr(0, eq), value = aux[i].substr(eq + 1);
      if (key == "shard-id" && value.size() == kNameLength) node->shard_id = value;
      if (key == "hostname") node->hostname = value;
      if (key == "nodename") node->human_nodename = value;
    }
    const size_t colon = address.rfind(':');
    const size_t at = address.find('@');
    if (colon == std::string::npos) return fail("");
    node->ip = address.substr(0, colon);
    int64_t port = 0, bus_port = 0;
    const std::string port_text =
        address.substr(colon + 1, at == std::string::npos ? std::string::npos : at - colon - 1);
    if (!ParseInt64(port_text, &port)) return fail("");
    node->port = static_cast<int>(port);
    if (at != std::string::npos && ParseInt64(address.substr(at + 1), &bus_port)) {
      node->bus_port = static_cast<int>(bus_port);
    } else {
      node->bus_port = node->port + 10000;
    }
    node->flags = FlagsFromText(words[2]);
    if ((node->flags & kMyself) != 0) {
      if (myself_ != nullptr) return fail("");
      myself_ = node;
    }
    // A node not heard of since the restart is not yet known to be failing, nor in handshake.
    node->flags &= static_cast<uint16_t>(~(kPossiblyFailing | kHandshake | kMeet));
    if (words[3] != "-") replica_of.emplace_back(node, words[3]);
    int64_t epoch = 0;
    if (!ParseInt64(words[6], &epoch) || epoch < 0) return fail("");
    node->config_epoch = static_cast<uint64_t>(epoch);
    if ((node->flags & kFailing) != 0) node->fail_time_ms = NowMs();
    for (size_t i = 8; i < words.size(); ++i) {
      const std::string& word = words[i];
      if (word[0] == '[') {
        // [slot->-name] migrating, [slot-<-name] importing: this node's own open slots.
        const size_t dash = word.find('-');
        int64_t slot = 0;
        if (dash == std::string::npos || word.size() < dash + 3 + kNameLength ||
            !ParseInt64(word.substr(1, dash - 1), &slot) || slot < 0 || slot >= kClusterSlots) {
          return fail("");
        }
        const bool migrating = word[dash + 1] == '>';
        const std::string other = word.substr(dash + 3, kNameLength);
        ClusterNode* peer = Lookup(other);
        if (peer == nullptr) peer = CreateNode(other, 0);
        (migrating ? migrating_ : importing_)[static_cast<size_t>(slot)] = peer;
        continue;
      }
      const size_t dash = word.find('-');
      int64_t first = 0, last = 0;
      if (!ParseInt64(word.substr(0, dash), &first)) return fail("");
      last = first;
      if (dash != std::string::npos && !ParseInt64(word.substr(dash + 1), &last)) return fail("");
      if (first < 0 || last >= kClusterSlots || first > last) return fail("");
      for (int64_t slot = first; slot <= last; ++slot) AssignSlot(static_cast<int>(slot), node);
    }
  }
  if (myself_ == nullptr) {
    *error = "Unrecoverable error: corrupted cluster config file: no node is myself";
    return false;
  }
  for (auto& [replica, master_name] : replica_of) {
    ClusterNode* master = Lookup(master_name);
    if (master == nullptr) master = CreateNode(master_name, 0);
    AttachReplica(master, replica);
  }
  // Every node of a shard shares its master's id.
  for (auto& [name, node] : nodes_) {
    if (node->master != nullptr) node->shard_id = node->master->shard_id;
  }
  // Nodes created for a name seen only as a master or a peer of an open slot have no address.
  for (auto& [name, node] : nodes_) {
    if (node->flags == 0) node->flags = kNoAddress | kMaster;
  }
  if (myself_->is_replica() && myself_->master != nullptr) {
    ClusterNode* master = myself_->master;
    if (!master->ip.empty()) server_.master_link->SetMaster({master->ip, master->port});
  }
  LogNotice("Node configuration loaded, I'm " + myself_->name);
  // A node coming back takes the highest epoch it knows, so that its next vote or election is
  // not in an epoch already used.
  for (auto& [name, node] : nodes_) current_epoch_ = std::max(current_epoch_, node->config_epoch);
  return true;
}

uint64_t Cluster::EpochsFingerprint() const {
  uint64_t fingerprint = current_epoch_ * 0x9e3779b97f4a7c15ULL ^ last_vote_epoch_;
  for (const auto& [name, node] : nodes_) fingerprint = fingerprint * 31 + node->config_epoch;
  return fingerprint;
}

bool Cluster::SaveConfig(std::string* error) {
  std::string contents = NodesDescription(/*for_file=*/true);
  contents += "vars currentEpoch " + std::to_string(current_epoch_) + " lastVoteEpoch " +
              std::to_string(last_vote_epoch_) + "\n";
  save_pending_ = false;
  // An epoch or a vote must survive a crash of the machine (a node must never vote twice in an
  // epoch, nor reuse one): those saves are fsynced. The others (slots being moved, a peer's
  // address) are what the cluster tells a node again when it comes back, and Redis does not
  // fsync them either; resharding saves the file twice per slot.
  const uint64_t fingerprint = EpochsFingerprint();
  const bool durable = fingerprint != durable_fingerprint_;
  if (!WriteFileAtomically(config_path_, contents, error, durable)) return false;
  if (durable) durable_fingerprint_ = fingerprint;
  // The lock held the file that was just replaced: it moves to the new one.
  const int fd = open(config_path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0) {
    if (config_lock_fd_ >= 0) close(config_lock_fd_);
    config_lock_fd_ = fd;
  } else if (fd >= 0) {
    close(fd);
  }
  return true;
}

void Cluster::BeforeSleep() {
  FreeClosedLinks();
  if (state_update_pending_) {
    state_update_pending_ = false;
    UpdateState();
  }
  if (save_pending_) {
    std::string error;
    if (!SaveConfig(&error)) LogWarning("Could not save the cluster configuration: " + error);
  }
}

// ---- Descriptions ----------------------------------------------------------------------------

std::string Cluster::NodeDescription(const ClusterNode& node, bool for_file) const {
  std::string line = node.name + ' ' + node.ip + ':' + std::to_string(node.port) + '@' +
                     std::to_string(node.bus_port);
  if (for_file) {
    line += ',' + node.hostname + ",shard-id=" + node.shard_id;
    if (!node.human_nodename.empty()) line += ",nodename=" + node.human_nodename;
  } else if (!node.hostname.empty()) {
    line += ',' + node.hostname;
  }
  line += ' ' + FlagsText(node.flags);
  line += ' ' + (node.master != nullptr ? node.master->name : std::string("-"));
  int64_t pong = node.pong_received_ms;
  if (node.myself() && !for_file) pong = NowMs() / 1000 * 1000;
  line += ' ' + std::to_string(node.ping_sent_ms) + ' ' + std::to_string(pong);
  const uint64_t epoch =
      node.is_replica() && node.master != nullptr ? node.master->config_epoch : node.config_epoch;
  line += ' ' + std::to_string(epoch);
  line += (node.myself() || node.link != nullptr) ? " connected" : " disconnected";
  if (node.is_master()) line += SlotRanges(node.slots);
  if (node.myself()) {
    for (int slot = 0; slot < kClusterSlots; ++slot) {
      const auto s = static_cast<size_t>(slot);
      if (migrating_[s] != nullptr) {
        line += " [" + std::to_string(slot) + "->-" + migrating_[s]->name + "]";
      } else if (importing_[s] != nullptr) {
        line += " [" + std::to_string(slot) + "-<-" + importing_[s]->name + "]";
      }
    }
  }
  return line;
}

std::string Cluster::NodesDescription(bool for_file) const {
  std::string text;
  for (const auto& [name, node] : nodes_) {
    // A node in handshake is not yet a member: not in CLUSTER NODES nor in the file.
    if (for_file && node->in_handshake()) continue;
    text += NodeDescription(*node, for_file) + '\n';
  }
  return text;
}

void Cluster::Info(ReplyBuilder& reply) const {
  int assigned = 0, ok = 0, pfail = 0, fail = 0;
  for (const ClusterNode* owner : slots_) {
    if (owner == nullptr) continue;
    ++assigned;
    if (owner->failing()) {
      ++fail;
    } else if (owner->possibly_failing()) {
      ++pfail;
    } else {
      ++ok;
    }
  }
  const uint64_t my_epoch = myself_->is_replica() && myself_->master != nullptr
                                ? myself_->master->config_epoch
                                : myself_->config_epoch;
  std::string text = std::string("cluster_state:") + (state_ == State::kOk ? "ok" : "fail") +
                     "\r\ncluster_slots_assigned:" + std::to_string(assigned) +
                     "\r\ncluster_slots_ok:" + std::to_string(ok) +
                     "\r\ncluster_slots_pfail:" + std::to_string(pfail) +
                     "\r\ncluster_slots_fail:" + std::to_string(fail) +
                     "\r\ncluster_known_nodes:" + std::to_string(nodes_.size()) +
                     "\r\ncluster_size:" + std::to_string(size_) +
                     "\r\ncluster_current_epoch:" + std::to_string(current_epoch_) +
                     "\r\ncluster_my_epoch:" + std::to_string(my_epoch) + "\r\n";
  // Redis lists the message counts in this order of types.
  static constexpr MessageType kOrder[] = {MessageType::kPing,
                                           MessageType::kPong,
                                           MessageType::kMeet,
                                           MessageType::kFail,
                                           MessageType::kPublish,
                                           MessageType::kPublishShard,
                                           MessageType::kFailoverAuthRequest,
                                           MessageType::kFailoverAuthAck,
                                           MessageType::kUpdate,
                                           MessageType::kMfStart,
                                           MessageType::kModule};
  for (const auto* counts : {&sent_, &received_}) {
    const char* way = counts == &sent_ ? "sent" : "received";
    uint64_t total = 0;
    for (const MessageType type : kOrder) {
      const uint64_t n = (*counts)[static_cast<size_t>(type)];
      total += n;
      if (n == 0) continue;
      text += std::string("cluster_stats_messages_") + TypeName(type) + "_" + way + ":" +
              std::to_string(n) + "\r\n";
    }
    text += std::string("cluster_stats_messages_") + way + ":" + std::to_string(total) + "\r\n";
  }
  text += "total_cluster_links_buffer_limit_exceeded:" + std::to_string(links_over_limit_) + "\r\n";
  reply.Verbatim(text);
}

namespace {

// A node's entry of CLUSTER SLOTS: endpoint, port, name, and the other ways to reach it.
void NodeEntry(ReplyBuilder& reply, const Cluster& cluster, const ClusterNode& node,
               const std::string& endpoint_type) {
  reply.Array(4);
  reply.Bulk(cluster.EndpointHost(node));
  reply.Integer(cluster.ClientPort(node));
  reply.Bulk(node.name);
  size_t pairs = 0;
  const bool ip_extra = endpoint_type != "ip";
  const bool hostname_extra = endpoint_type != "hostname" && !node.hostname.empty();
  pairs = (ip_extra ? 1 : 0) + (hostname_extra ? 1 : 0);
  reply.Map(pairs);
  if (ip_extra) {
    reply.Bulk("ip");
    reply.Bulk(node.ip);
  }
  if (hostname_extra) {
    reply.Bulk("hostname");
    reply.Bulk(node.hostname);
  }
}

}  // namespace

void Cluster::Slots(ReplyBuilder& reply) const {
  struct Range {
    int first, last;
    const ClusterNode* owner;
  };
  std::vector<Range> ranges;
  for (int slot = 0; slot < kClusterSlots; ++slot) {
    const ClusterNode* owner = slots_[static_cast<size_t>(slot)];
    if (owner == nullptr) continue;
    if (!ranges.empty() && ranges.back().owner == owner && ranges.back().last == slot - 1) {
      ranges.back().last = slot;
    } else {
      ranges.push_back({slot, slot, owner});
    }
  }
  const std::string& type = server_.config.cluster.preferred_endpoint_type;
  reply.Array(ranges.size());
  for (const Range& range : ranges) {
    std::vector<const ClusterNode*> replicas;
    for (const ClusterNode* replica : range.owner->replicas) {
      if (!replica->failing()) replicas.push_back(replica);
    }
    reply.Array(3 + replicas.size());
    reply.Integer(range.first);
    reply.Integer(range.last);
    NodeEntry(reply, *this, *range.owner, type);
    for (const ClusterNode* replica : replicas) NodeEntry(reply, *this, *replica, type);
  }
}

void Cluster::Shards(ReplyBuilder& reply) const {
  // A shard: a master and its replicas.
  std::vector<const ClusterNode*> masters;
  for (const auto& [name, node] : nodes_) {
    if (node->is_master() && !node->in_handshake()) masters.push_back(node.get());
  }
  reply.Array(masters.size());
  for (const ClusterNode* master : masters) {
    reply.Map(2);
    reply.Bulk("slots");
    std::vector<std::pair<int, int>> ranges;
    for (int slot = 0; slot < kClusterSlots; ++slot) {
      if (!master->slots[static_cast<size_t>(slot)]) continue;
      if (!ranges.empty() && ranges.back().second == slot - 1) {
        ranges.back().second = slot;
      } else {
        ranges.emplace_back(slot, slot);
      }
    }
    reply.Array(ranges.size() * 2);
    for (const auto& [first, last] : ranges) {
      reply.Integer(first);
      reply.Integer(last);
    }
    reply.Bulk("nodes");
    std::vector<const ClusterNode*> members{master};
    for (const ClusterNode* replica : master->replicas) members.push_back(replica);
    reply.Array(members.size());
    for (const ClusterNode* node : members) {
      const bool hostname = !node->hostname.empty();
      reply.Map(7 + (hostname ? 1 : 0));
      reply.Bulk("id");
      reply.Bulk(node->name);
      reply.Bulk("port");
      reply.Integer(ClientPort(*node));
      reply.Bulk("ip");
      reply.Bulk(node->ip);
      reply.Bulk("endpoint");
      reply.Bulk(EndpointHost(*node));
      if (hostname) {
        reply.Bulk("hostname");
        reply.Bulk(node->hostname);
      }
      reply.Bulk("role");
      reply.Bulk(node->is_master() ? "master" : "replica");
      reply.Bulk("replication-offset");
      reply.Integer(static_cast<int64_t>(node->myself() ? ReplicationOffset() : node->repl_offset));
      reply.Bulk("health");
      const bool loading = node->myself() && server_.loading();
      reply.Bulk(node->failing() ? "fail" : (loading ? "loading" : "online"));
    }
  }
}

void Cluster::Links(ReplyBuilder& reply) const {
  std::vector<const BusLink*> links;
  for (const auto& link : links_) {
    if (link->node != nullptr && !link->closed()) links.push_back(link.get());
  }
  reply.Array(links.size());
  for (const BusLink* link : links) {
    reply.Map(6);
    reply.Bulk("direction");
    reply.Bulk(link->inbound() ? "from" : "to");
    reply.Bulk("node");
    reply.Bulk(link->node->name);
    reply.Bulk("create-time");
    reply.Integer(link->created_ms());
    reply.Bulk("events");
    reply.Bulk(link->inbound() ? "r" : "rw");
    reply.Bulk("send-buffer-allocated");
    reply.Integer(static_cast<int64_t>(link->send_queue_bytes()));
    reply.Bulk("send-buffer-used");
    reply.Integer(static_cast<int64_t>(link->send_queue_bytes()));
  }
}

// ---- Commands that change the configuration --------------------------------------------------

std::string Cluster::Meet(const std::string& ip, int port, int bus_port) {
  // The address must be a numeric one, as Redis requires; a node is known by the address its
  // peers can reach it at.
  in6_addr v6{};
  in_addr v4{};
  if (inet_pton(AF_INET, ip.c_str(), &v4) != 1 && inet_pton(AF_INET6, ip.c_str(), &v6) != 1) {
    return "ERR Invalid node address specified: " + ip + ":" + std::to_string(port);
  }
  if (port <= 0 || port > 65535 || bus_port <= 0 || bus_port > 65535) {
    return "ERR Invalid node address specified: " + ip + ":" + std::to_string(port);
  }
  // A handshake already going on with this address is enough.
  for (const auto& [name, node] : nodes_) {
    if (node->in_handshake() && node->ip == ip && node->port == port &&
        node->bus_port == bus_port) {
      return "";
    }
  }
  ClusterNode* node = CreateNode(RandomName(), kHandshake | kMeet);
  node->ip = ip;
  node->port = port;
  node->bus_port = bus_port;
  return "";
}

std::string Cluster::Forget(std::string_view name) {
  ClusterNode* node = Lookup(name);
  if (node == nullptr) return "ERR Unknown node " + std::string(name);
  if (node == myself_) return "ERR I tried hard but I can't forget myself...";
  if (myself_->is_replica() && myself_->master == node) return "ERR Can't forget my master!";
  forgotten_[std::string(name)] = NowMs() + kForgetMs;
  DeleteNode(node);
  MarkConfigDirty();
  state_update_pending_ = true;
  return "";
}

std::string Cluster::AddSlots(const std::vector<int>& slots) {
  std::vector<bool> seen(kClusterSlots);
  for (const int slot : slots) {
    if (slots_[static_cast<size_t>(slot)] != nullptr) {
      return "ERR Slot " + std::to_string(slot) + " is already busy";
    }
    if (seen[static_cast<size_t>(slot)]) {
      return "ERR Slot " + std::to_string(slot) + " specified multiple times";
    }
    seen[static_cast<size_t>(slot)] = true;
  }
  for (const int slot : slots) {
    // A slot this node now serves is no longer being imported.
    importing_[static_cast<size_t>(slot)] = nullptr;
    AssignSlot(slot, myself_);
  }
  MarkConfigDirty();
  state_update_pending_ = true;
  return "";
}

std::string Cluster::DeleteSlots(const std::vector<int>& slots) {
  std::vector<bool> seen(kClusterSlots);
  for (const int slot : slots) {
    if (slots_[static_cast<size_t>(slot)] == nullptr) {
      return "ERR Slot " + std::to_string(slot) + " is already unassigned";
    }
    if (seen[static_cast<size_t>(slot)]) {
      return "ERR Slot " + std::to_string(slot) + " specified multiple times";
    }
    seen[static_cast<size_t>(slot)] = true;
  }
  for (const int slot : slots) {
    UnassignSlot(slot);
    importing_[static_cast<size_t>(slot)] = nullptr;
    migrating_[static_cast<size_t>(slot)] = nullptr;
  }
  MarkConfigDirty();
  state_update_pending_ = true;
  return "";
}

void Cluster::FlushSlots() {
  UnassignAllSlotsOf(myself_);
  MarkConfigDirty();
  state_update_pending_ = true;
}

std::string Cluster::SetSlot(int slot, std::string_view action, std::string_view node_name) {
  const auto s = static_cast<size_t>(slot);
  if (myself_->is_replica()) return "ERR Please use SETSLOT only with masters.";
  if (EqualsIgnoreCase(action, "stable")) {
    migrating_[s] = importing_[s] = nullptr;
  } else if (EqualsIgnoreCase(action, "migrating")) {
    if (slots_[s] != myself_) return "ERR I'm not the owner of hash slot " + std::to_string(slot);
    ClusterNode* node = Lookup(node_name);
    if (node == nullptr) return "ERR I don't know about node " + std::string(node_name);
    if (node->is_replica()) return "ERR Target node is not a master";
    migrating_[s] = node;
  } else if (EqualsIgnoreCase(action, "importing")) {
    if (slots_[s] == myself_) {
      return "ERR I'm already the owner of hash slot " + std::to_string(slot);
    }
    ClusterNode* node = Lookup(node_name);
    if (node == nullptr) return "ERR I don't know about node " + std::string(node_name);
    if (node->is_replica()) return "ERR Target node is not a master";
    importing_[s] = node;
  } else if (EqualsIgnoreCase(action, "node")) {
    ClusterNode* node = Lookup(node_name);
    if (node == nullptr) return "ERR Unknown node " + std::string(node_name);
    if (node->is_replica()) return "ERR Target node is not a master";
    if (slots_[s] == myself_ && node != myself_ && server_.db(0).KeysInSlot(slot) != 0) {
      return "ERR Can't assign hashslot " + std::to_string(slot) +
             " to a different node while I still hold keys for this hash slot.";
    }
    // The last key moved away: the migration is over.
    if (migrating_[s] != nullptr && server_.db(0).KeysInSlot(slot) == 0) migrating_[s] = nullptr;
    bool bump = false;
    if (node == myself_ && importing_[s] != nullptr) {
      // The import is over. This node takes the slot with a config epoch of its own, so that
      // its claim wins over the old owner's wherever the two meet.
      importing_[s] = nullptr;
      bump = true;
    }
    AssignSlot(slot, node);
    if (bump && BumpEpoch().starts_with("BUMPED")) {
      LogNotice("configEpoch updated after importing slot " + std::to_string(slot));
    }
  } else {
    return "ERR Invalid CLUSTER SETSLOT action or number of arguments. Try CLUSTER HELP";
  }
  MarkConfigDirty();
  state_update_pending_ = true;
  return "";
}

std::string Cluster::Replicate(std::string_view name) {
  ClusterNode* node = Lookup(name);
  if (node == nullptr) return "ERR Unknown node " + std::string(name);
  if (node == myself_) return "ERR Can't replicate myself";
  if (node->is_replica()) return "ERR I can only replicate a master, not a replica.";
  if (myself_->is_master() && (myself_->slot_count != 0 || server_.db(0).size() != 0)) {
    return "ERR To set a master the node must be empty and without assigned slots.";
  }
  BecomeReplicaOf(node);
  return "";
}

std::string Cluster::SetConfigEpoch(uint64_t epoch) {
  if (nodes_.size() > 1) {
    return "ERR The user can assign a config epoch only when the node does not know any other "
           "node.";
  }
  if (myself_->config_epoch != 0) return "ERR Node config epoch is already non-zero";
  myself_->config_epoch = epoch;
  LogWarning("configEpoch set to " + std::to_string(epoch) + " via CLUSTER SET-CONFIG-EPOCH");
  current_epoch_ = std::max(current_epoch_, epoch);
  MarkConfigDirty();
  state_update_pending_ = true;
  return "";
}

std::string Cluster::BumpEpoch() {
  uint64_t max_epoch = current_epoch_;
  for (const auto& [name, node] : nodes_) max_epoch = std::max(max_epoch, node->config_epoch);
  if (myself_->config_epoch == 0 || myself_->config_epoch != max_epoch) {
    ++current_epoch_;
    myself_->config_epoch = current_epoch_;
    MarkConfigDirty();
    LogWarning("New configEpoch set to " + std::to_string(myself_->config_epoch));
    return "BUMPED " + std::to_string(myself_->config_epoch);
  }
  return "STILL " + std::to_string(myself_->config_epoch);
}

std::string Cluster::Reset(bool hard) {
  if (myself_->is_master() && server_.db(0).size() != 0) {
    return "ERR CLUSTER RESET can't be called with master nodes containing keys";
  }
  if (myself_->is_replica()) {
    DetachReplica(myself_);
    myself_->flags &= static_cast<uint16_t>(~kReplica);
    myself_->flags |= kMaster;
    server_.master_link->SetMaster({});
    server_.FlushAll();
  }
  for (int slot = 0; slot < kClusterSlots; ++slot) {
    UnassignSlot(slot);
    migrating_[static_cast<size_t>(slot)] = importing_[static_cast<size_t>(slot)] = nullptr;
  }
  std::vector<ClusterNode*> others;
  for (auto& [name, node] : nodes_) {
    if (node.get() != myself_) others.push_back(node.get());
  }
  for (ClusterNode* node : others) DeleteNode(node);
  if (hard) {
    current_epoch_ = 0;
    last_vote_epoch_ = 0;
    myself_->config_epoch = 0;
    LogWarning("configEpoch set to 0 via CLUSTER RESET HARD");
    const std::string old = myself_->name;
    RenameNode(myself_, RandomName());
    myself_->shard_id = RandomName();
    LogNotice("Node hard reset, now I'm " + myself_->name);
  }
  MarkConfigDirty();
  state_update_pending_ = true;
  return "";
}

int Cluster::CountFailureReports(std::string_view name, bool* found) {
  ClusterNode* node = Lookup(name);
  *found = node != nullptr;
  return node == nullptr ? 0 : FailureReportCount(node);
}

bool Cluster::ReplicasOf(std::string_view name, std::vector<std::string>* lines,
                         std::string* error) {
  ClusterNode* node = Lookup(name);
  if (node == nullptr) {
    *error = "ERR Unknown node " + std::string(name);
    return false;
  }
  if (node->is_replica()) {
    *error = "ERR The specified node is not a master";
    return false;
  }
  for (const ClusterNode* replica : node->replicas) {
    lines->push_back(NodeDescription(*replica, false));
  }
  return true;
}

// ---- State -----------------------------------------------------------------------------------

void Cluster::UpdateState() {
  constexpr int64_t kWritableDelayMs = 2000;
  const int64_t now = NowMs();
  if (first_state_update_ms_ == 0) first_state_update_ms_ = now;
  // A master that just started waits a little for the others' view before serving: its own
  // file may be stale.
  if (myself_->is_master() && state_ == State::kFail &&
      now - first_state_update_ms_ < kWritableDelayMs) {
    state_update_pending_ = true;
    return;
  }
  State next = State::kOk;
  if (server_.config.cluster.require_full_coverage) {
    for (const ClusterNode* owner : slots_) {
      if (owner == nullptr || owner->failing()) {
        next = State::kFail;
        break;
      }
    }
  }
  size_ = 0;
  int reachable = 0;
  for (const auto& [name, node] : nodes_) {
    if (node->is_master() && node->slot_count > 0) {
      ++size_;
      if (!node->timed_out()) ++reachable;
    }
  }
  if (reachable < QuorumSize()) {
    next = State::kFail;
    among_minority_since_ms_ = now;
  }
  if (next == state_) return;
  // A master back from the minority side of a partition waits before accepting writes, so
  // that the majority's failover has time to reach it.
  const int64_t rejoin_delay = std::clamp<int64_t>(server_.config.cluster.node_timeout, 500, 5000);
  if (next == State::kOk && myself_->is_master() && now - among_minority_since_ms_ < rejoin_delay) {
    return;
  }
  LogWarning(std::string("Cluster state changed: ") + (next == State::kOk ? "ok" : "fail"));
  state_ = next;
}

}  // namespace goblin::cluster
