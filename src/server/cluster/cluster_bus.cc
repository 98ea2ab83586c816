// The cluster bus: links, the messages in and out, and the cron that keeps every node in touch
// (cluster.h explains the protocol's rules; bus_message.h the bytes).
#include <algorithm>
#include <cerrno>
#include <cstring>

#include "net/sockets.h"
#include "server/cluster/cluster.h"
#include "server/log.h"
#include "server/master_link.h"
#include "server/replication.h"
#include "server/server.h"

namespace goblin::cluster {

namespace {

// The IP of an "ip:port" (or "[ip]:port") address.
std::string HostOf(const std::string& address) {
  std::string host = address.substr(0, address.rfind(':'));
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  return host;
}

}  // namespace

// ---- Links ------------------------------------------------------------------------------------

BusLink::~BusLink() {
  if (connection_ != nullptr) connection_->Close();
}

void BusLink::Close() {
  if (closed_) return;
  closed_ = true;
  connection_->Close();
}

void BusLink::Send(std::string bytes) {
  if (closed_) return;
  queued_bytes_ += bytes.size();
  output_.push_back(std::move(bytes));
  if (!connecting_) Flush();
}

void BusLink::Flush() {
  while (!output_.empty()) {
    const std::string& front = output_.front();
    const ssize_t n =
        connection_->Write(front.data() + output_offset_, front.size() - output_offset_);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) {
        connection_->SetWritable(true);
        return;
      }
      cluster_.LinkFailed(*this, std::strerror(errno));
      return;
    }
    output_offset_ += static_cast<size_t>(n);
    if (output_offset_ == front.size()) {
      queued_bytes_ -= front.size();
      output_.pop_front();
      output_offset_ = 0;
    }
  }
  connection_->SetWritable(false);
}

void BusLink::OnReady(uint32_t readiness) {
  if (closed_) return;
  if (connecting_) {
    if ((readiness & (net::kWritable | net::kReadable)) == 0) return;
    const int error = connection_->ConnectError();
    if (error != 0) {
      cluster_.LinkFailed(*this, std::strerror(error));
      return;
    }
    connecting_ = false;
    Flush();
    if (closed_) return;
  }
  if ((readiness & net::kWritable) != 0) {
    Flush();
    if (closed_) return;
  }
  if ((readiness & net::kReadable) != 0) ReadMessages();
}

void BusLink::ReadMessages() {
  char chunk[16 * 1024];
  for (;;) {
    // The header's first 8 bytes say how long the message is; read no further than its end,
    // so that a message is processed as soon as it is whole.
    size_t want = sizeof(chunk);
    if (input_.size() >= 8) {
      std::string error;
      const std::optional<uint32_t> length = AnnouncedLength(input_, &error);
      if (!length) {
        cluster_.LinkFailed(*this, error);
        return;
      }
      want = std::min<size_t>(want, *length - input_.size());
    } else {
      want = 8 - input_.size();
    }
    const ssize_t n = connection_->Read(chunk, want);
    if (n == 0) {
      cluster_.LinkFailed(*this, "connection closed by the peer");
      return;
    }
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN) cluster_.LinkFailed(*this, std::strerror(errno));
      return;
    }
    input_.append(chunk, static_cast<size_t>(n));
    if (input_.size() < 8) continue;
    std::string error;
    const std::optional<uint32_t> length = AnnouncedLength(input_, &error);
    if (!length) {
      cluster_.LinkFailed(*this, error);
      return;
    }
    if (input_.size() < *length) continue;
    std::optional<BusMessage> message = Decode(input_, &error);
    input_.clear();
    input_.shrink_to_fit();
    if (!message) {
      cluster_.LinkFailed(*this, error);
      return;
    }
    cluster_.Process(*this, *message);
    if (closed_) return;
  }
}

void Cluster::Accept(int listener) {
  for (;;) {
    sockaddr_storage peer{};
    std::unique_ptr<net::PlainConnection> connection = net::Accept(listener, &peer);
    if (connection == nullptr) return;
    connection->SetNoDelay();
    auto link = std::make_unique<BusLink>(*this, std::move(connection), /*inbound=*/true, NowMs());
    link->peer_ip = HostOf(net::FormatAddress(peer));
    if (!link->connection().Watch(server_.event_loop, link.get(), false)) continue;
    LogVerbose("Accepting cluster node connection from " + link->peer_ip);
    links_.push_back(std::move(link));
  }
}

void Cluster::Connect(ClusterNode* node) {
  net::ConnectResult result = net::ConnectTcp(node->ip, node->bus_port);
  if (result.connection == nullptr) return;  // tried again at the next cron
  auto link = std::make_unique<BusLink>(*this, std::move(result.connection), false, NowMs());
  link->node = node;
  link->peer_ip = node->ip;
  link->set_connecting(result.in_progress);
  if (!link->connection().Watch(server_.event_loop, link.get(), /*writable=*/true)) return;
  node->link = link.get();
  BusLink& raw = *link;
  links_.push_back(std::move(link));
  // The first message waits in the queue until the connection is made. A MEET goes once: after
  // it the node is met, and a reconnection PINGs.
  const int64_t old_ping_sent = node->ping_sent_ms;
  SendPing(raw, (node->flags & kMeet) != 0 ? MessageType::kMeet : MessageType::kPing);
  if (old_ping_sent != 0) node->ping_sent_ms = old_ping_sent;
  node->flags &= static_cast<uint16_t>(~kMeet);
}

void Cluster::LinkFailed(BusLink& link, std::string_view why) {
  if (link.closed()) return;
  if (link.node != nullptr) {
    LogVerbose("Connection with Node " + link.node->name + " at " + link.peer_ip +
               " failed: " + std::string(why));
  } else {
    LogVerbose("Cluster bus connection from " + link.peer_ip + " closed: " + std::string(why));
  }
  FreeLink(&link);
}

void Cluster::FreeLink(BusLink* link) {
  if (link->node != nullptr) {
    if (link->node->link == link) link->node->link = nullptr;
    if (link->node->inbound_link == link) link->node->inbound_link = nullptr;
    link->node = nullptr;
  }
  link->Close();
}

void Cluster::FreeClosedLinks() {
  std::erase_if(links_, [](const std::unique_ptr<BusLink>& link) { return link->closed(); });
}

// ---- Messages out ---------------------------------------------------------------------------

uint64_t Cluster::ReplicationOffset() const {
  return myself_->is_replica() ? server_.master_link->applied_offset()
                               : server_.replication->offset();
}

BusMessage Cluster::Header(MessageType type) const {
  BusMessage m;
  m.type = type;
  const ClusterNode* master = myself_->is_replica() ? myself_->master : myself_;
  m.sender = myself_->name;
  m.ip = server_.config.cluster.announce_ip;
  m.port = static_cast<uint16_t>(myself_->port);
  m.bus_port = static_cast<uint16_t>(myself_->bus_port);
  m.flags = myself_->flags;
  m.state = state_ == State::kOk ? 0 : 1;
  m.current_epoch = current_epoch_;
  if (master != nullptr) {
    m.slots = master->slots;
    m.config_epoch = master->config_epoch;
  }
  if (myself_->is_replica() && myself_->master != nullptr) m.master = myself_->master->name;
  m.offset = ReplicationOffset();
  if (myself_->is_master() && manual_failover_end_ms_ != 0) m.mflags[0] |= kPaused;
  return m;
}

void Cluster::SendPing(BusLink& link, MessageType type) {
  BusMessage m = Header(type);
  const int64_t now = NowMs();
  // A few random nodes (a tenth of them, at least 3), and every node this node suspects, so
  // that failure reports spread quickly.
  std::vector<ClusterNode*> candidates;
  std::vector<ClusterNode*> suspects;
  for (auto& [name, node] : nodes_) {
    if (node.get() == myself_ || node->in_handshake() || !node->has_address()) continue;
    if (node->possibly_failing()) {
      suspects.push_back(node.get());
    } else if (node->link != nullptr || node->slot_count != 0) {
      candidates.push_back(node.get());
    }
  }
  size_t wanted = std::max<size_t>(3, nodes_.size() / 10);
  wanted = std::min(wanted, nodes_.size() >= 2 ? nodes_.size() - 2 : 0);
  wanted = std::min(wanted, candidates.size());
  for (size_t i = 0; i < wanted; ++i) {
    const size_t pick = i + server_.Random64() % (candidates.size() - i);
    std::swap(candidates[i], candidates[pick]);
  }
  candidates.resize(wanted);
  for (const auto* group : {&candidates, &suspects}) {
    for (const ClusterNode* node : *group) {
      Gossip g;
      g.name = node->name;
      g.ping_sent = static_cast<uint32_t>(node->ping_sent_ms / 1000);
      g.pong_received = static_cast<uint32_t>(node->pong_received_ms / 1000);
      g.ip = node->ip;
      g.port = static_cast<uint16_t>(node->port);
      g.bus_port = static_cast<uint16_t>(node->bus_port);
      g.flags = node->flags;
      g.other_port = static_cast<uint16_t>(node->other_port);
      m.gossip.push_back(std::move(g));
    }
  }
  if (!myself_->hostname.empty()) m.hostname = myself_->hostname;
  if (!myself_->human_nodename.empty()) m.human_nodename = myself_->human_nodename;
  for (const auto& [name, until] : forgotten_) {
    if (until > now) m.forgotten.push_back({name, static_cast<uint64_t>((until - now) / 1000)});
  }
  const ClusterNode* peer = link.node;
  if (peer == nullptr || peer->data_received_ms == 0 || peer->sends_shard_id) {
    m.shard_id = myself_->shard_id;
  }
  if (link.node != nullptr && type == MessageType::kPing) link.node->ping_sent_ms = now;
  CountSent(type);
  link.Send(Encode(m));
}

void Cluster::Broadcast(const BusMessage& message) {
  const std::string bytes = Encode(message);
  for (auto& [name, node] : nodes_) {
    if (node->link == nullptr || node.get() == myself_ || node->in_handshake()) continue;
    CountSent(message.type);
    node->link->Send(bytes);
  }
}

void Cluster::SendFail(const ClusterNode& node) {
  BusMessage m = Header(MessageType::kFail);
  m.about = node.name;
  Broadcast(m);
}

void Cluster::SendUpdate(BusLink& link, const ClusterNode& node) {
  BusMessage m = Header(MessageType::kUpdate);
  m.about = node.name;
  m.update_config_epoch = node.config_epoch;
  m.update_slots = node.slots;
  CountSent(MessageType::kUpdate);
  link.Send(Encode(m));
}

void Cluster::PropagatePublish(bool sharded, std::string_view channel, std::string_view message) {
  BusMessage m = Header(sharded ? MessageType::kPublishShard : MessageType::kPublish);
  m.channel = channel;
  m.payload = message;
  if (!sharded) {
    Broadcast(m);
    return;
  }
  // A shard's message goes to the other nodes of this node's shard only.
  const ClusterNode* master = myself_->is_master() ? myself_ : myself_->master;
  if (master == nullptr) return;
  const std::string bytes = Encode(m);
  std::vector<const ClusterNode*> shard{master};
  for (const ClusterNode* replica : master->replicas) shard.push_back(replica);
  for (const ClusterNode* node : shard) {
    if (node == myself_ || node->link == nullptr) continue;
    CountSent(m.type);
    node->link->Send(bytes);
  }
}

// ---- Messages in ------------------------------------------------------------------------------

bool Cluster::UpdateAddress(ClusterNode* node, BusLink& link, const BusMessage& message) {
  // The address a node uses to reach this one is not the address it can be reached at.
  if (&link == node->link) return false;
  const std::string ip = !message.ip.empty() ? message.ip : link.peer_ip;
  if (node->ip == ip && node->port == message.port && node->bus_port == message.bus_port) {
    return false;
  }
  node->ip = ip;
  node->port = message.port;
  node->bus_port = message.bus_port;
  node->other_port = message.other_port;
  if (node->link != nullptr) FreeLink(node->link);
  node->flags &= static_cast<uint16_t>(~kNoAddress);
  LogWarning("Address updated for node " + node->name + " (" + node->human_nodename + "), now " +
             ip + ":" + std::to_string(node->port));
  if (myself_->is_replica() && myself_->master == node) {
    server_.master_link->SetMaster({ip, node->port});
  }
  return true;
}

void Cluster::Process(BusLink& link, const BusMessage& m) {
  // A node's name is 40 characters; a peer that sends another is not a cluster node.
  if (m.sender.size() != kNameLength) {
    LinkFailed(link, "a sender name that is not a node name");
    return;
  }
  const auto type_index = static_cast<size_t>(m.type);
  if (type_index < kMessageTypes) ++received_[type_index];
  const int64_t now = NowMs();
  ClusterNode* sender = Lookup(m.sender);
  if (sender != nullptr && sender->in_handshake()) sender = nullptr;
  if (sender != nullptr && link.inbound() && link.node == nullptr) {
    // The node's own link to this one: CLUSTER LINKS shows it.
    if (sender->inbound_link != nullptr && sender->inbound_link != &link) {
      FreeLink(sender->inbound_link);
    }
    sender->inbound_link = &link;
    link.node = sender;
  }
  if (sender != nullptr) sender->data_received_ms = now;
  if (sender != nullptr) {
    if (m.current_epoch > current_epoch_) {
      current_epoch_ = m.current_epoch;
      MarkConfigDirty();
    }
    if (m.config_epoch > sender->config_epoch) {
      sender->config_epoch = m.config_epoch;
      MarkConfigDirty();
    }
    sender->repl_offset = m.offset;
    sender->repl_offset_time_ms = now;
    if (manual_failover_end_ms_ != 0 && myself_->is_replica() && myself_->master == sender &&
        (m.mflags[0] & kPaused) != 0 && !manual_failover_offset_known_) {
      manual_failover_master_offset_ = m.offset;
      manual_failover_offset_known_ = true;
      LogWarning("Received replication offset for paused master manual failover: " +
                 std::to_string(m.offset));
    }
  }

  const bool ping_like =
      m.type == MessageType::kPing || m.type == MessageType::kPong || m.type == MessageType::kMeet;
  if (m.type == MessageType::kPing || m.type == MessageType::kMeet) {
    // This node learns its own address from the first node that meets it, unless it announces
    // one.
    if ((m.type == MessageType::kMeet || myself_->ip.empty()) &&
        server_.config.cluster.announce_ip.empty()) {
      const std::string ip = HostOf(link.connection().LocalAddress());
      if (!ip.empty() && ip != "?" && ip != myself_->ip) {
        myself_->ip = ip;
        LogWarning("IP address for this node updated to " + ip);
        MarkConfigDirty();
      }
    }
    if (sender == nullptr && m.type == MessageType::kMeet) {
      ClusterNode* node = CreateNode(RandomName(), kHandshake);
      node->ip = !m.ip.empty() ? m.ip : link.peer_ip;
      node->port = m.port;
      node->bus_port = m.bus_port;
      node->other_port = m.other_port;
      MarkConfigDirty();
    }
    if (sender == nullptr && m.type == MessageType::kMeet) ProcessGossip(m, nullptr);
    SendPing(link, MessageType::kPong);
  }

  if (ping_like) {
    if (!link.inbound() && link.node != nullptr) {
      ClusterNode* node = link.node;
      if (node->in_handshake()) {
        if (sender != nullptr) {
          // Already known by its name: the handshake node was a second address of it.
          UpdateAddress(sender, link, m);
          DeleteNode(node);
          return;
        }
        // Another handshake under that name (only a peer that copies names can make one)
        // gives way: one name, one node.
        if (ClusterNode* twin = Lookup(m.sender); twin != nullptr && twin != node) {
          DeleteNode(twin);
        }
        RenameNode(node, m.sender);
        node->flags &= static_cast<uint16_t>(~kHandshake);
        node->flags |= m.flags & (kMaster | kReplica);
        LogVerbose("Handshake with node " + node->name + " completed.");
        MarkConfigDirty();
        sender = nullptr;  // its epochs and role are read at its next message
      } else if (node->name != m.sender) {
        // Another node now answers at this address: this one's address is unknown until
        // gossip says where it went.
        LogVerbose("PONG contains mismatching sender ID. About node " + node->name + " added " +
                   std::to_string(now - node->created_ms) + " ms ago, having flags " +
                   std::to_string(node->flags));
        node->flags |= kNoAddress;
        node->ip.clear();
        node->port = node->bus_port = 0;
        FreeLink(&link);
        MarkConfigDirty();
        return;
      }
    }
    if (sender != nullptr && m.type == MessageType::kPing) UpdateAddress(sender, link, m);

    if (!link.inbound() && link.node != nullptr && m.type == MessageType::kPong) {
      ClusterNode* node = link.node;
      node->pong_received_ms = now;
      node->ping_sent_ms = 0;
      if (node->possibly_failing()) {
        node->flags &= static_cast<uint16_t>(~kPossiblyFailing);
        state_update_pending_ = true;
      } else if (node->failing()) {
        ClearFailureIfNeeded(node);
      }
    }

    if (sender != nullptr) {
      // Role changes.
      if (m.master.empty()) {
        SetAsMaster(sender);
      } else {
        ClusterNode* master = Lookup(m.master);
        if (sender->is_master()) {
          UnassignAllSlotsOf(sender);
          sender->flags &= static_cast<uint16_t>(~(kMaster | kMigrateTo));
          sender->flags |= kReplica;
          MarkConfigDirty();
          state_update_pending_ = true;
        }
        if (master != nullptr && sender->master != master) {
          AttachReplica(master, sender);
          sender->shard_id = master->shard_id;
          MarkConfigDirty();
        }
      }
      // Slots.
      ClusterNode* sender_master = sender->is_master() ? sender : sender->master;
      bool dirty_slots = false;
      if (sender_master != nullptr) dirty_slots = sender_master->slots != m.slots;
      if (sender->is_master() && dirty_slots) UpdateSlotsFrom(sender, m.config_epoch, m.slots);
      if (dirty_slots) {
        // The sender claims slots whose owner this node knows to have a newer config: it is
        // told (UPDATE), once per message.
        for (int slot = 0; slot < kClusterSlots; ++slot) {
          const auto s = static_cast<size_t>(slot);
          if (!m.slots[s] || slots_[s] == sender || slots_[s] == nullptr) continue;
          if (slots_[s]->config_epoch > m.config_epoch) {
            LogVerbose("Node " + sender->name +
                       " has old slots configuration, sending an "
                       "UPDATE message about " +
                       slots_[s]->name);
            if (sender->link != nullptr) SendUpdate(*sender->link, *slots_[s]);
            break;
          }
        }
      }
      if (myself_->is_master() && sender->is_master() && m.config_epoch == myself_->config_epoch) {
        HandleEpochCollision(sender);
      }
      ProcessGossip(m, sender);
      ProcessExtensions(m, sender);
    }
    return;
  }

  switch (m.type) {
    case MessageType::kFail: {
      if (sender == nullptr) {
        LogVerbose("Ignoring FAIL message from unknown node " + m.sender + " about " + m.about);
        return;
      }
      ClusterNode* failing = Lookup(m.about);
      if (failing != nullptr && (failing->flags & (kFailing | kMyself)) == 0) {
        LogNotice("FAIL message received from " + m.sender + " () about " + m.about + " ()");
        failing->flags |= kFailing;
        failing->flags &= static_cast<uint16_t>(~kPossiblyFailing);
        failing->fail_time_ms = now;
        state_update_pending_ = true;
        MarkConfigDirty();
      }
      return;
    }
    case MessageType::kPublish:
    case MessageType::kPublishShard:
      if (sender == nullptr) return;
      server_.DeliverPublished(m.type == MessageType::kPublishShard, m.channel, m.payload);
      return;
    case MessageType::kFailoverAuthRequest:
      if (sender != nullptr) GrantVoteIfNeeded(sender, m);
      return;
    case MessageType::kFailoverAuthAck:
      // A vote counts from a master serving slots, in the epoch of this node's election.
      if (sender != nullptr && sender->is_master() && sender->slot_count > 0 &&
          m.current_epoch >= election_epoch_ && election_requested_) {
        ++election_votes_;
      }
      return;
    case MessageType::kMfStart:
      if (sender == nullptr || sender->master != myself_) return;
      // A replica of this master starts a manual failover: writes stop, and the replica gets
      // this node's offset in its PINGs (flag kPaused) until it has caught up and wins.
      manual_failover_end_ms_ = now + kManualFailoverTimeoutMs;
      manual_failover_replica_ = sender;
      server_.SetWritePause(WritePause::kClusterFailover, true);
      LogNotice("Manual failover requested by replica " + sender->name + ".");
      // The replica needs the offset now, not at the next PING.
      if (sender->link != nullptr) SendPing(*sender->link, MessageType::kPing);
      return;
    case MessageType::kUpdate: {
      if (sender == nullptr) return;
      ClusterNode* node = Lookup(m.about);
      if (node == nullptr || node->config_epoch >= m.update_config_epoch) return;
      if (node->is_replica()) SetAsMaster(node);
      node->config_epoch = m.update_config_epoch;
      MarkConfigDirty();
      UpdateSlotsFrom(node, m.update_config_epoch, m.update_slots);
      return;
    }
    default:
      return;
  }
}

void Cluster::ProcessGossip(const BusMessage& m, ClusterNode* sender) {
  const int64_t now = NowMs();
  for (const Gossip& g : m.gossip) {
    ClusterNode* node = Lookup(g.name);
    if (node != nullptr) {
      if (sender != nullptr && sender->is_master() && node != myself_) {
        if ((g.flags & (kFailing | kPossiblyFailing)) != 0) {
          if (node->fail_reports.insert_or_assign(sender->name, now).second) {
            LogVerbose("Node " + sender->name + " reported node " + node->name +
                       " as not reachable.");
          }
          MarkFailingIfNeeded(node);
        } else if (node->fail_reports.erase(sender->name) != 0) {
          LogVerbose("Node " + sender->name + " reported node " + node->name + " is back online.");
        }
      }
      // A healthy node's PONG seen by another one is as good as our own, when this node has
      // nothing pending with it.
      if ((g.flags & (kFailing | kPossiblyFailing)) == 0 && node->ping_sent_ms == 0 &&
          node->fail_reports.empty()) {
        const int64_t pong = int64_t{g.pong_received} * 1000;
        if (pong <= now + 500 && pong > node->pong_received_ms) node->pong_received_ms = pong;
      }
      // A failing node that moved: try its new address.
      if (node->timed_out() && (g.flags & (kNoAddress | kFailing | kPossiblyFailing)) == 0 &&
          node != myself_ &&
          (node->ip != g.ip || node->port != g.port || node->bus_port != g.bus_port)) {
        if (node->link != nullptr) FreeLink(node->link);
        node->ip = g.ip;
        node->port = g.port;
        node->bus_port = g.bus_port;
        node->other_port = g.other_port;
        node->flags &= static_cast<uint16_t>(~kNoAddress);
      }
      continue;
    }
    // A node this one does not know yet: met, unless it was just forgotten or the sender is
    // not a member either.
    if (sender == nullptr || (g.flags & kNoAddress) != 0) continue;
    auto forgotten = forgotten_.find(g.name);
    if (forgotten != forgotten_.end() && forgotten->second > now) continue;
    if (g.ip.empty() || g.port == 0) continue;
    bool pending = false;
    for (const auto& [name, known] : nodes_) {
      if (known->in_handshake() && known->ip == g.ip && known->port == g.port &&
          known->bus_port == g.bus_port) {
        pending = true;
      }
    }
    if (pending) continue;
    ClusterNode* fresh = CreateNode(RandomName(), kHandshake);
    fresh->ip = g.ip;
    fresh->port = g.port;
    fresh->bus_port = g.bus_port;
    fresh->other_port = g.other_port;
  }
}

void Cluster::ProcessExtensions(const BusMessage& m, ClusterNode* sender) {
  bool changed = false;
  const std::string hostname = m.hostname.value_or("");
  if (sender->hostname != hostname) {
    sender->hostname = hostname;
    changed = true;
  }
  const std::string human = m.human_nodename.value_or("");
  if (sender->human_nodename != human) {
    sender->human_nodename = human;
    changed = true;
  }
  sender->sends_shard_id = m.shard_id.has_value();
  if (m.shard_id && sender->shard_id != *m.shard_id) {
    sender->shard_id = *m.shard_id;
    // A master's replicas share its shard.
    if (sender->is_replica() && sender->master != nullptr) {
      sender->master->shard_id = *m.shard_id;
    }
    changed = true;
  }
  const int64_t now = NowMs();
  for (const ForgottenNode& f : m.forgotten) {
    ClusterNode* node = Lookup(f.name);
    if (node == nullptr || node == myself_ || (myself_->is_replica() && myself_->master == node)) {
      continue;
    }
    forgotten_[f.name] = now + static_cast<int64_t>(f.ttl_seconds) * 1000;
    LogNotice("Node " + f.name + " was forgotten by " + sender->name);
    DeleteNode(node);
    changed = true;
    state_update_pending_ = true;
  }
  if (changed) MarkConfigDirty();
}

void Cluster::UpdateSlotsFrom(ClusterNode* sender, uint64_t config_epoch, const SlotBits& slots) {
  if (sender == myself_) {
    LogNotice("Discarding UPDATE message about myself.");
    return;
  }
  ClusterNode* current_master = myself_->is_master() ? myself_ : myself_->master;
  ClusterNode* new_master = nullptr;
  int migrated_our_slots = 0;
  std::vector<int> dirty;
  for (int slot = 0; slot < kClusterSlots; ++slot) {
    const auto s = static_cast<size_t>(slot);
    if (!slots[s] || slots_[s] == sender) continue;
    // A slot being imported is this node's to settle (CLUSTER SETSLOT ... NODE).
    if (importing_[s] != nullptr) continue;
    if (slots_[s] != nullptr && slots_[s]->config_epoch >= config_epoch) continue;
    if (slots_[s] == myself_ && server_.db(0).KeysInSlot(slot) != 0) dirty.push_back(slot);
    if (slots_[s] == current_master) {
      new_master = sender;
      ++migrated_our_slots;
    }
    AssignSlot(slot, sender);
    state_update_pending_ = true;
    MarkConfigDirty();
  }
  if (new_master != nullptr && current_master != nullptr && current_master->slot_count == 0 &&
      (server_.config.cluster.allow_replica_migration || myself_->is_replica())) {
    LogWarning("Configuration change detected. Reconfiguring myself as a replica of " +
               sender->name + " ()");
    BecomeReplicaOf(sender);
    return;
  }
  // Keys of slots taken from this node without a migration are no longer this node's.
  for (const int slot : dirty) server_.DeleteKeysInSlot(slot);
}

void Cluster::HandleEpochCollision(ClusterNode* sender) {
  if (sender->config_epoch != myself_->config_epoch || !sender->is_master() ||
      !myself_->is_master()) {
    return;
  }
  // The node with the smaller name takes a new epoch; the other keeps its own.
  if (sender->name <= myself_->name) return;
  ++current_epoch_;
  myself_->config_epoch = current_epoch_;
  MarkConfigDirty();
  LogVerbose("WARNING: configEpoch collision with node " + sender->name +
             " (). configEpoch set to " + std::to_string(myself_->config_epoch));
}

// ---- Failure detection ------------------------------------------------------------------------

int Cluster::FailureReportCount(ClusterNode* node) {
  const int64_t validity = server_.config.cluster.node_timeout * 2;
  const int64_t now = NowMs();
  std::erase_if(node->fail_reports,
                [&](const auto& report) { return now - report.second > validity; });
  return static_cast<int>(node->fail_reports.size());
}

void Cluster::MarkFailingIfNeeded(ClusterNode* node) {
  if (!node->possibly_failing() || node->failing()) return;
  int failures = FailureReportCount(node);
  if (myself_->is_master()) ++failures;
  if (failures < QuorumSize()) return;
  LogNotice("Marking node " + node->name + " () as failing (quorum reached).");
  node->flags &= static_cast<uint16_t>(~kPossiblyFailing);
  node->flags |= kFailing;
  node->fail_time_ms = NowMs();
  // Replicas may lack the masters' links to everyone; the FAIL goes out from masters only.
  if (myself_->is_master()) SendFail(*node);
  state_update_pending_ = true;
  MarkConfigDirty();
}

void Cluster::ClearFailureIfNeeded(ClusterNode* node) {
  const int64_t now = NowMs();
  if (node->is_replica() || node->slot_count == 0) {
    LogNotice("Clear FAIL state for node " + node->name + " ():" +
              (node->is_replica() ? "replica" : "master without slots") + " is reachable again.");
    node->flags &= static_cast<uint16_t>(~kFailing);
    state_update_pending_ = true;
    MarkConfigDirty();
    return;
  }
  // A master with slots: nobody took them over for a while, so it serves them again.
  if (now - node->fail_time_ms > server_.config.cluster.node_timeout * 2) {
    LogNotice("Clear FAIL state for node " + node->name +
              " (): is reachable again and nobody is serving its slots after some time.");
    node->flags &= static_cast<uint16_t>(~kFailing);
    state_update_pending_ = true;
    MarkConfigDirty();
  }
}

// ---- Cron -------------------------------------------------------------------------------------

void Cluster::Cron(int64_t now) {
  if (now - last_cron_ms_ < 100) return;
  last_cron_ms_ = now;
  ++cron_iterations_;
  // What CONFIG SET changed of this node's announced names goes out with the next PING.
  const Config::Cluster& config = server_.config.cluster;
  if (myself_->hostname != config.announce_hostname ||
      myself_->human_nodename != config.announce_human_nodename ||
      (!config.announce_ip.empty() && myself_->ip != config.announce_ip)) {
    myself_->hostname = config.announce_hostname;
    myself_->human_nodename = config.announce_human_nodename;
    if (!config.announce_ip.empty()) myself_->ip = config.announce_ip;
    MarkConfigDirty();
  }
  const int64_t timeout = std::max<int64_t>(server_.config.cluster.node_timeout, 1);
  const int64_t handshake_timeout = std::max<int64_t>(timeout, 1000);

  std::vector<ClusterNode*> nodes;
  for (auto& [name, node] : nodes_) nodes.push_back(node.get());
  for (ClusterNode* node : nodes) {
    if (node == myself_ || !node->has_address()) continue;
    if (node->in_handshake() && now - node->created_ms > handshake_timeout) {
      LogVerbose("Handshake timeout with node " + node->ip + ":" + std::to_string(node->port));
      DeleteNode(node);
      continue;
    }
    if (node->link == nullptr && !node->ip.empty()) Connect(node);
  }

  // Once a second, a PING to the node of five random ones heard from longest ago.
  if (cron_iterations_ % 10 == 0) {
    ClusterNode* oldest = nullptr;
    std::vector<ClusterNode*> all;
    for (auto& [name, node] : nodes_) all.push_back(node.get());
    for (int i = 0; i < 5 && !all.empty(); ++i) {
      ClusterNode* node = all[server_.Random64() % all.size()];
      if (node->link == nullptr || node->ping_sent_ms != 0 || node == myself_ ||
          node->in_handshake()) {
        continue;
      }
      if (oldest == nullptr || node->pong_received_ms < oldest->pong_received_ms) oldest = node;
    }
    if (oldest != nullptr) SendPing(*oldest->link, MessageType::kPing);
  }

  bool update = false;
  for (auto& [name, owned] : nodes_) {
    ClusterNode* node = owned.get();
    if (node == myself_ || !node->has_address() || node->in_handshake()) continue;
    BusLink* link = node->link;
    // A link that stays silent though a PING waits is reconnected: the node may be fine and the
    // connection not.
    if (link != nullptr && now - link->created_ms() > timeout && node->ping_sent_ms != 0 &&
        now - node->ping_sent_ms > timeout / 2 && now - node->data_received_ms > timeout / 2) {
      FreeLink(link);
      link = nullptr;
    }
    if (link != nullptr && node->ping_sent_ms == 0 && now - node->pong_received_ms > timeout / 2) {
      SendPing(*link, MessageType::kPing);
      continue;
    }
    // The master of a manual failover pings the replica often: it needs the offset.
    if (manual_failover_end_ms_ != 0 && myself_->is_master() && manual_failover_replica_ == node &&
        link != nullptr) {
      SendPing(*link, MessageType::kPing);
      continue;
    }
    if (node->ping_sent_ms == 0) continue;
    const int64_t delay = std::min(now - node->ping_sent_ms, now - node->data_received_ms);
    if (delay > timeout && !node->timed_out()) {
      LogVerbose("*** NODE " + node->name + " possibly failing");
      node->flags |= kPossiblyFailing;
      update = true;
    }
  }

  // A replica follows its master as replication goes.
  if (myself_->is_replica() && myself_->master != nullptr && !myself_->master->ip.empty() &&
      !server_.master_link->is_replica()) {
    server_.master_link->SetMaster({myself_->master->ip, myself_->master->port});
  }
  if (manual_failover_end_ms_ != 0 && now > manual_failover_end_ms_) {
    LogWarning("Manual failover timed out.");
    ResetManualFailover();
  }
  if (myself_->is_replica()) {
    HandleManualFailover();
    HandleReplicaFailover();
  }
  RedirectBlockedClients();
  if (update || state_ == State::kFail) state_update_pending_ = true;
  if (state_update_pending_) {
    state_update_pending_ = false;
    UpdateState();
  }
}

}  // namespace goblin::cluster
