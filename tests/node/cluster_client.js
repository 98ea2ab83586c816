// A Redis Cluster application on ioredis's Cluster or node-redis's createCluster, steered by the
// test while the test moves slots under it: the client is given the cluster's nodes and finds the
// rest itself; every redirection it meets (MOVED, ASK) it must follow on its own.
//
//   node cluster_client.js <ioredis|node-redis> <port> [<port> ...]
//
// Requests, one JSON array a line on stdin, each answered with one JSON object a line on stdout:
//   ["basics", prefix]    the slot map the client found ({ranges: [[first, last, port], ...]}),
//                         keys <prefix>:0..299 set at once and read back ({wrong}), a pipeline
//                         on the hash tag {<prefix>p} ({pipeline}), a MULTI on {<prefix>m}
//                         ({multi})
//   ["load"]              starts writers that set load:<n> to v<n> and read back a key written
//                         before, without pause, until "stop"
//   ["progress"]          {written}: writes acknowledged so far
//   ["stop"]              ends the load and reads every acknowledged key once more: {written,
//                         reads, wrong, errors} (wrong: reads that returned another value,
//                         errors: commands that ended in an error, both the first 20)
//   ["get", key, ...]     {values}, read one after the other
//   ["set", key, value]   {reply}
// Exits 2 when the client library is not installed.
'use strict';

const { load, errorText, answerRequests } = require('./harness');

const [lib, ...ports] = process.argv.slice(2);
const SLOTS = 16384;
// node-redis follows ASK with two calls on the target's shared connection, ASKING and then the
// command, so commands sent meanwhile to that node can take the ASKING meant for another (then
// each is sent on again, eight times at most, and fails): its load has one writer, and the reads
// of ["get"] go one at a time for both libraries. ioredis writes ASKING and the command together.
const WRITERS = { 'ioredis': 4, 'node-redis': 1 }[lib];

// The calls the requests need, on one library's cluster client.
async function ioredisCluster() {
  const Redis = load('ioredis');
  const client = new Redis.Cluster(ports.map((port) => ({ host: '127.0.0.1', port: Number(port) })),
                                   { lazyConnect: true, clusterRetryStrategy: () => null });
  await client.connect();
  const results = (replies) => replies.map(([err, value]) => (err ? errorText(err) : value));
  return {
    ownerPort: (slot) => Number(client.slots[slot][0].split(':').pop()),
    set: (key, value) => client.set(key, value),
    get: (key) => client.get(key),
    pipeline: async (a, b) => results(await client.pipeline().set(a, 'one').incr(b).get(a).exec()),
    multi: async (a, b) => results(await client.multi().set(a, 'two').incr(b).get(a).exec()),
    close: () => client.quit(),
  };
}

async function nodeRedisCluster() {
  const { createCluster } = load('redis');
  const client = createCluster({
    rootNodes: ports.map((port) => ({ socket: { host: '127.0.0.1', port: Number(port) } })),
    defaults: { socket: { reconnectStrategy: false } },
  });
  client.on('error', () => {});
  await client.connect();
  return {
    ownerPort: (slot) => Number(client.slots[slot].master.port),
    set: (key, value) => client.set(key, value),
    get: (key) => client.get(key),
    pipeline: (a, b) => client.multi().set(a, 'one').incr(b).get(a).execAsPipeline(),
    multi: (a, b) => client.multi().set(a, 'two').incr(b).get(a).exec(),
    close: () => client.quit(),
  };
}

// [[first, last, port], ...] of the client's slot map.
function ranges(cluster) {
  const out = [];
  for (let slot = 0; slot < SLOTS; slot++) {
    const port = cluster.ownerPort(slot);
    const last = out[out.length - 1];
    if (last && last[2] === port && last[1] === slot - 1) last[1] = slot;
    else out.push([slot, slot, port]);
  }
  return out;
}

function firstOf(list) {
  return list.slice(0, 20);
}

async function start() {
  const connect = { 'ioredis': ioredisCluster, 'node-redis': nodeRedisCluster }[lib];
  if (!connect) {
    process.stderr.write(`unknown client library ${lib}\n`);
    process.exit(1);
  }
  const cluster = await connect();
  let running = null;

  async function basics(prefix) {
    const keys = Array.from({ length: 300 }, (_, i) => `${prefix}:${i}`);
    await Promise.all(keys.map((key) => cluster.set(key, key)));
    const values = await Promise.all(keys.map((key) => cluster.get(key)));
    return {
      ranges: ranges(cluster),
      wrong: keys.filter((key, i) => values[i] !== key),
      pipeline: await cluster.pipeline(`{${prefix}p}a`, `{${prefix}p}n`),
      multi: await cluster.multi(`{${prefix}m}a`, `{${prefix}m}n`),
    };
  }

  function startLoad() {
    const state = { next: 0, keys: [], reads: 0, wrong: [], errors: [], stopping: false };
    const writer = async () => {
      while (!state.stopping) {
        const n = state.next++;
        try {
          await cluster.set(`load:${n}`, `v${n}`);
          state.keys.push(n);
        } catch (err) {
          state.errors.push(`SET load:${n}: ${errorText(err)}`);
        }
        if (state.keys.length === 0) continue;
        const earlier = state.keys[Math.floor(Math.random() * state.keys.length)];
        try {
          const value = await cluster.get(`load:${earlier}`);
          state.reads++;
          if (value !== `v${earlier}`) state.wrong.push(`load:${earlier}=${value}`);
        } catch (err) {
          state.errors.push(`GET load:${earlier}: ${errorText(err)}`);
        }
      }
    };
    state.writers = Array.from({ length: WRITERS }, writer);
    return state;
  }

  async function stopLoad() {
    const state = running;
    running = null;
    state.stopping = true;
    await Promise.all(state.writers);
    const values = await Promise.all(state.keys.map((n) => cluster.get(`load:${n}`)));
    state.keys.forEach((n, i) => {
      if (values[i] !== `v${n}`) state.wrong.push(`load:${n}=${values[i]}`);
    });
    return { written: state.keys.length, reads: state.reads + values.length,
             wrong: firstOf(state.wrong), errors: firstOf(state.errors) };
  }

  answerRequests({
    basics,
    load: async () => {
      if (running) throw new Error('a load is already running');
      running = startLoad();
      return { started: true };
    },
    progress: async () => ({ written: running ? running.keys.length : 0 }),
    stop: stopLoad,
    get: async (...keys) => {
      const values = [];
      for (const key of keys) values.push(await cluster.get(key));
      return { values };
    },
    set: async (key, value) => ({ reply: await cluster.set(key, value) }),
  }, async () => {
    if (running) await stopLoad();
    await cluster.close();
  });
}

start().catch((err) => {
  process.stdout.write(JSON.stringify({ failed: errorText(err) }) + '\n');
  process.exit(1);
});
