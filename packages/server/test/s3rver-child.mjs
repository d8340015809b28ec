// Runs s3rver in its own process for the tests (test/s3-server.ts starts it with
// --openssl-legacy-provider: s3rver 3.7 encrypts ListObjectsV2 continuation tokens with DES, which
// OpenSSL 3 leaves out by default). Prints {"port": N} once listening; exits when stdin closes.
import S3rver from 's3rver';

const [directory, ...buckets] = process.argv.slice(2);
const server = new S3rver({
  address: '127.0.0.1',
  port: 0,
  directory,
  silent: true,
  configureBuckets: buckets.map((name) => ({ name, configs: [] })),
});
const addr = await server.run();
process.stdout.write(`${JSON.stringify({ port: addr.port })}\n`);
process.stdin.resume();
process.stdin.on('end', () => {
  server.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
});
