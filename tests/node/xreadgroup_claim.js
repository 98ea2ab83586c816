// A worker of a job queue that reads with Redis 8.4's XREADGROUP CLAIM, as an application on
// ioredis or node-redis would: one call returns the jobs a dead worker left idle, then new jobs;
// the worker acknowledges what it got. Neither library has a CLAIM helper yet, so the read goes
// through ioredis's call() and node-redis's sendCommand(). Prints one JSON object on stdout.
//
//   node xreadgroup_claim.js <ioredis|node-redis> <port> <min-idle-ms>
//
// Printed fields: read (the reply as the library returns it), acked (XACK's count of the ids
// read), again (the same read once more: nothing left to claim or read).
// Exits 2 when the client library is not installed.
'use strict';

const { connectIoredis, connectNodeRedis, main } = require('./harness');

const [lib, port, minIdle] = process.argv.slice(2);
const READ = ['XREADGROUP', 'GROUP', 'workers', 'live', 'COUNT', '10', 'CLAIM', String(minIdle),
              'STREAMS', 'jobs', '>'];

// The ids of a reply: [[key, [[id, fields, ...], ...]], ...].
function idsOf(reply) {
  return reply[0][1].map((entry) => entry[0]);
}

async function withIoredis() {
  const client = await connectIoredis(port);
  const out = {};
  out.read = await client.call(...READ);
  out.acked = await client.xack('jobs', 'workers', ...idsOf(out.read));
  out.again = await client.call(...READ);
  client.disconnect();
  return out;
}

async function withNodeRedis() {
  const client = await connectNodeRedis(port);
  const out = {};
  out.read = await client.sendCommand(READ);
  out.acked = await client.xAck('jobs', 'workers', idsOf(out.read));
  out.again = await client.sendCommand(READ);
  await client.quit();
  return out;
}

main(lib, { 'ioredis': withIoredis, 'node-redis': withNodeRedis });
