// Talks to a server's tls-port through ioredis or node-redis with a client certificate, as an
// application would, and prints what it got back as one JSON object on stdout.
//
//   node tls_client.js <ioredis|node-redis> <port> <ca.crt> <client.crt> <client.key>
//
// Printed fields: ping; big (whether a 3 MB value came back intact); pipeline (the last of 1,000
// INCRs sent at once); message (what a subscriber received on channel "tls-news").
// Exits 2 when the client library is not installed.
'use strict';

const { load, main } = require('./harness');

const fs = require('fs');
const crypto = require('crypto');

const [lib, port, caFile, certFile, keyFile] = process.argv.slice(2);
const tlsFiles = { ca: fs.readFileSync(caFile), cert: fs.readFileSync(certFile),
                   key: fs.readFileSync(keyFile) };
// The test's certificates name no host; the chain is still checked against the CA.
const tlsOptions = { ...tlsFiles, checkServerIdentity: () => undefined };
const big = crypto.randomBytes(3 * 1024 * 1024);


async function withIoredis() {
  const Redis = load('ioredis');
  const options = { host: '127.0.0.1', port: Number(port), tls: tlsOptions, lazyConnect: true,
                    maxRetriesPerRequest: 0, retryStrategy: () => null };
  const client = new Redis(options);
  const subscriber = new Redis(options);
  await client.connect();
  await subscriber.connect();
  const out = {};
  out.ping = await client.ping();
  await client.set('tls:big', big);
  out.big = big.equals(await client.getBuffer('tls:big'));
  const pipeline = client.pipeline();
  for (let i = 0; i < 1000; i++) pipeline.incr('tls:counter');
  const results = await pipeline.exec();
  out.pipeline = results[results.length - 1][1];
  const received = new Promise((resolve) => subscriber.on('message', (_, text) => resolve(text)));
  await subscriber.subscribe('tls-news');
  await client.publish('tls-news', 'over-tls');
  out.message = await received;
  client.disconnect();
  subscriber.disconnect();
  return out;
}

async function withNodeRedis() {
  const { createClient } = load('redis');
  const socket = { host: '127.0.0.1', port: Number(port), tls: true, ...tlsOptions,
                   reconnectStrategy: false };
  const client = createClient({ socket });
  client.on('error', () => {});
  await client.connect();
  const subscriber = client.duplicate();
  subscriber.on('error', () => {});
  await subscriber.connect();
  const out = {};
  out.ping = await client.ping();
  await client.set('tls:big', big);
  const back = await client.get(client.commandOptions({ returnBuffers: true }), 'tls:big');
  out.big = big.equals(back);
  const pipeline = client.multi();
  for (let i = 0; i < 1000; i++) pipeline.incr('tls:counter');
  const results = await pipeline.execAsPipeline();
  out.pipeline = results[results.length - 1];
  let deliver;
  const received = new Promise((resolve) => { deliver = resolve; });
  // subscribe() resolves once the server confirmed the subscription.
  await subscriber.subscribe('tls-news', (text) => deliver(text));
  await client.publish('tls-news', 'over-tls');
  out.message = await received;
  await client.quit();
  await subscriber.quit();
  return out;
}

main(lib, { 'ioredis': withIoredis, 'node-redis': withNodeRedis });
