// Gives hash fields deadlines through ioredis's or node-redis's own helpers for Redis 7.4's
// commands, as an application would, and prints what came back as one JSON object on stdout.
//
//   node hash_field_expiry.js <ioredis|node-redis> <port>
//
// Printed fields: set (HEXPIRE's codes for an existing and a missing field), nx (HEXPIRE NX on a
// field that has a deadline), ttl (HTTL of both fields and one without a deadline), persist
// (HPERSIST's codes), after (HTTL after HPERSIST), gone (HPEXPIRE 0's code), left (HGETALL).
// Exits 2 when the client library is not installed.
'use strict';

const { connectIoredis, connectNodeRedis, main } = require('./harness');

const [lib, port] = process.argv.slice(2);


async function withIoredis() {
  const client = await connectIoredis(port);
  await client.del('session');
  await client.hset('session', 'token', 't', 'user', 'u', 'theme', 'dark');
  const out = {};
  out.set = await client.hexpire('session', 3600, 'FIELDS', 2, 'token', 'nosuch');
  out.nx = await client.hexpire('session', 60, 'NX', 'FIELDS', 1, 'token');
  // ioredis 5.9 has helpers for HEXPIRE and HPEXPIRE only; the others go through call().
  out.ttl = await client.call('HTTL', 'session', 'FIELDS', 2, 'token', 'user');
  out.persist = await client.call('HPERSIST', 'session', 'FIELDS', 2, 'token', 'user');
  out.after = await client.call('HTTL', 'session', 'FIELDS', 1, 'token');
  out.gone = await client.hpexpire('session', 0, 'FIELDS', 1, 'theme');
  out.left = await client.hgetall('session');
  client.disconnect();
  return out;
}

async function withNodeRedis() {
  const client = await connectNodeRedis(port);
  await client.del('session');
  await client.hSet('session', { token: 't', user: 'u', theme: 'dark' });
  const out = {};
  out.set = await client.hExpire('session', ['token', 'nosuch'], 3600);
  out.nx = await client.hExpire('session', 'token', 60, 'NX');
  out.ttl = await client.hTTL('session', ['token', 'user']);
  out.persist = await client.hPersist('session', ['token', 'user']);
  out.after = await client.hTTL('session', 'token');
  out.gone = await client.hpExpire('session', 'theme', 0);
  out.left = await client.hGetAll('session');
  await client.quit();
  return out;
}

main(lib, { 'ioredis': withIoredis, 'node-redis': withNodeRedis });
