import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SignatureV4 } from '@smithy/signature-v4';
import { parseConfig } from '../../src/config.ts';
import { S3FileBlobs, s3ClientConfig, s3Key } from '../../src/files/s3.ts';
import { S3Client } from '@aws-sdk/client-s3';

// s3rver checks no signature (test/api/v1/files-s3.test.ts): the signing the client uses is
// checked here against AWS's published SigV4 test suite, case "get-vanilla".
const GET_VANILLA = {
  accessKeyId: 'AKIDEXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
  signature: '5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31',
};

const target = parseConfig({
  FILE_STORE: 's3://bucket/prefix',
  S3_ACCESS_KEY_ID: GET_VANILLA.accessKeyId,
  S3_SECRET_ACCESS_KEY: GET_VANILLA.secretAccessKey,
}).fileStore;

test("the client's SigV4 signer gives AWS's published signature for get-vanilla", async () => {
  assert.ok(target !== null);
  // The hash and the credentials are the client's own, as FILE_STORE configures it.
  const client = new S3Client(s3ClientConfig(target));
  const signer = new SignatureV4({
    service: 'service',
    region: 'us-east-1',
    credentials: await client.config.credentials(),
    sha256: client.config.sha256,
    // The suite's request has no payload hash header; S3 adds its own, outside the signature's rules.
    applyChecksum: false,
  });
  const signed = await signer.sign(
    {
      method: 'GET',
      protocol: 'https:',
      hostname: 'example.amazonaws.com',
      path: '/',
      query: {},
      headers: { host: 'example.amazonaws.com' },
    },
    { signingDate: new Date(Date.UTC(2015, 7, 30, 12, 36, 0)) },
  );
  assert.equal(
    signed.headers['authorization'],
    `AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=${GET_VANILLA.signature}`,
  );
  assert.equal(signed.headers['x-amz-date'], '20150830T123600Z');
  client.destroy();
});

test('the client is set for S3-compatible servers: path style as asked, checksums only when required', async () => {
  assert.ok(target !== null);
  const config = s3ClientConfig({ ...target, endpoint: 'http://127.0.0.1:9000', forcePathStyle: true });
  assert.equal(config.forcePathStyle, true);
  assert.equal(config.endpoint, 'http://127.0.0.1:9000');
  assert.equal(config.region, 'us-east-1');
  assert.equal(config.requestChecksumCalculation, 'WHEN_REQUIRED');
  assert.equal(config.responseChecksumValidation, 'WHEN_REQUIRED');
  assert.equal(s3ClientConfig(target).forcePathStyle, false);
  assert.ok(new S3FileBlobs(target));
});

test('keys are PREFIX/ab/cd/<sha256>, and the bucket top has no leading slash', () => {
  const sha = 'ab'.repeat(32);
  assert.equal(s3Key('pastes/files', sha), `pastes/files/ab/ab/${sha}`);
  assert.equal(s3Key('', sha), `ab/ab/${sha}`);
});
