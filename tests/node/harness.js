// What every script here shares: loading a client library (exit status 2, and {"missing": name},
// when it is not installed), connecting it to a local server, and running the function of the
// library named on the command line, whose result is printed as one JSON object on stdout
// ({"failed": message} and status 1 when it throws). A script that the test steers while it runs
// answers requests instead (answerRequests): one JSON array a line on stdin, one JSON object a
// line on stdout for each.
'use strict';

function load(name) {
  try {
    return require(name);
  } catch (err) {
    if (err.code === 'MODULE_NOT_FOUND') {
      process.stdout.write(JSON.stringify({ missing: name }) + '\n');
      process.exit(2);
    }
    throw err;
  }
}

function errorText(err) {
  return err && err.message ? err.message : String(err);
}

function main(lib, runs) {
  const run = runs[lib];
  if (!run) {
    process.stderr.write(`unknown client library ${lib}\n`);
    process.exit(1);
  }
  run().then((out) => {
    process.stdout.write(JSON.stringify(out) + '\n');
    process.exit(0);
  }, (err) => {
    process.stdout.write(JSON.stringify({ failed: errorText(err) }) + '\n');
    process.exit(1);
  });
}

// A client of the named library connected to the server on this machine's port, that fails
// rather than retries (the scripts test one server run).
async function connectIoredis(port) {
  const Redis = load('ioredis');
  const client = new Redis({ host: '127.0.0.1', port: Number(port), lazyConnect: true,
                             maxRetriesPerRequest: 0, retryStrategy: () => null });
  await client.connect();
  return client;
}

async function connectNodeRedis(port) {
  const { createClient } = load('redis');
  const client = createClient({ socket: { host: '127.0.0.1', port: Number(port),
                                          reconnectStrategy: false } });
  client.on('error', () => {});
  await client.connect();
  return client;
}

// Reads requests, one JSON array a line ([name, ...arguments]), from stdin, and answers each in
// turn with the JSON object that requests[name](...arguments) resolves to, or {"failed": message}
// when it throws. Exits when stdin closes, after close() resolves.
function answerRequests(requests, close) {
  const lines = require('readline').createInterface({ input: process.stdin });
  let queue = Promise.resolve();
  lines.on('line', (line) => {
    queue = queue.then(async () => {
      let out;
      try {
        const [name, ...args] = JSON.parse(line);
        if (!requests[name]) throw new Error(`unknown request ${name}`);
        out = await requests[name](...args);
      } catch (err) {
        out = { failed: errorText(err) };
      }
      process.stdout.write(JSON.stringify(out) + '\n');
    });
  });
  lines.on('close', () => {
    queue.then(close).then(() => process.exit(0), (err) => {
      process.stderr.write(`closing: ${errorText(err)}\n`);
      process.exit(1);
    });
  });
}

module.exports = { load, errorText, main, answerRequests, connectIoredis, connectNodeRedis };
