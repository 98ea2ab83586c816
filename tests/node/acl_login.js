// Logs in to a server with a username and password through ioredis or node-redis, as an
// application would, and prints what the server answered as one JSON object on stdout.
//
//   node acl_login.js <ioredis|node-redis> <port> <username> <password> <allowed-key> <denied-key>
//
// Printed fields: whoami (ACL WHOAMI), set and get (on the allowed key), denied (the error of
// a GET of the denied key), wrongpass (the error of a login with the password reversed).
// Exits 2 when the client library is not installed.
'use strict';

const { load, errorText, main } = require('./harness');

const [lib, port, username, password, allowedKey, deniedKey] = process.argv.slice(2);



async function withIoredis() {
  const Redis = load('ioredis');
  const options = { host: '127.0.0.1', port: Number(port), username, password,
                    lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false,
                    retryStrategy: () => null };
  const client = new Redis(options);
  await client.connect();
  const out = {};
  out.whoami = await client.call('ACL', 'WHOAMI');
  out.set = await client.set(allowedKey, 'from-ioredis');
  out.get = await client.get(allowedKey);
  try {
    await client.get(deniedKey);
  } catch (err) {
    out.denied = errorText(err);
  }
  client.disconnect();

  // ioredis reports the refused AUTH as an 'error' event, then rejects connect() with its own
  // "Connection is closed.": the event carries the server's text.
  const wrong = new Redis({ ...options, password: password.split('').reverse().join('') });
  let refusal = null;
  wrong.on('error', (err) => { refusal = refusal || err; });
  try {
    await wrong.connect();
    out.wrongpass = 'connected';
  } catch (err) {
    out.wrongpass = errorText(refusal || err);
  }
  wrong.disconnect();
  return out;
}

async function withNodeRedis() {
  const { createClient } = load('redis');
  const socket = { host: '127.0.0.1', port: Number(port), reconnectStrategy: false };
  const client = createClient({ socket, username, password });
  client.on('error', () => {});
  await client.connect();
  const out = {};
  out.whoami = await client.sendCommand(['ACL', 'WHOAMI']);
  out.set = await client.set(allowedKey, 'from-node-redis');
  out.get = await client.get(allowedKey);
  try {
    await client.get(deniedKey);
  } catch (err) {
    out.denied = errorText(err);
  }
  await client.quit();

  const wrong = createClient({ socket, username,
                               password: password.split('').reverse().join('') });
  wrong.on('error', () => {});
  try {
    await wrong.connect();
    out.wrongpass = 'connected';
    await wrong.quit();
  } catch (err) {
    out.wrongpass = errorText(err);
    await wrong.disconnect().catch(() => {});
  }
  return out;
}

main(lib, { 'ioredis': withIoredis, 'node-redis': withNodeRedis });
