// FILE_STORE and the S3_* settings (README, Files; docs/files.md); config.ts reports their
// problems with every other variable's.

/** An S3-compatible bucket the files' bytes go to; `describe` never holds the secret. */
export interface S3Target {
  bucket: string;
  /** The keys' folder, without slashes at either end; '' for the bucket's top. */
  prefix: string;
  /** S3_ENDPOINT; null: AWS's own for the region. */
  endpoint: string | null;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** S3_FORCE_PATH_STYLE: `endpoint/bucket/key` rather than `bucket.endpoint/key` (most S3-compatible servers). */
  forcePathStyle: boolean;
  /** `s3://bucket/prefix at endpoint`, for messages. */
  describe: string;
}

/** A bucket name as S3 allows one: 3 to 63 lower-case letters, digits, dots and hyphens. */
const BUCKET_RE = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

/** `s3://BUCKET/PREFIX` with its S3_* settings, or null when FILE_STORE is unset (the bytes stay with the pastes). */
export function fileStoreOf(
  env: NodeJS.ProcessEnv,
  problems: string[],
  flag: (name: string) => boolean,
): S3Target | null {
  const raw = env['FILE_STORE'];
  if (raw === undefined || raw === '') return null;
  const m = /^s3:\/\/([^/?#]+)(?:\/([^?#]*))?$/.exec(raw);
  if (m === null || !BUCKET_RE.test(m[1] as string)) {
    problems.push(
      'FILE_STORE must be s3://BUCKET/PREFIX (a bucket name of 3 to 63 lower-case letters, digits, dots ' +
        `and hyphens), got "${raw}"`,
    );
    return null;
  }
  const prefix = (m[2] ?? '').replace(/^\/+|\/+$/g, '');
  const endpoint = env['S3_ENDPOINT'] || null;
  if (endpoint !== null) {
    let ok = false;
    try {
      const u = new URL(endpoint);
      ok = (u.protocol === 'http:' || u.protocol === 'https:') && u.username === '' && u.password === '';
    } catch {
      // URL throws a TypeError for anything unparseable: reported below.
    }
    if (!ok) problems.push(`S3_ENDPOINT must be an http(s) URL without credentials, got "${endpoint}"`);
  }
  const region = env['S3_REGION'] || 'us-east-1';
  if (!/^[a-z0-9-]{1,64}$/.test(region))
    problems.push(`S3_REGION must be a region name such as us-east-1, got "${region}"`);
  const accessKeyId = env['S3_ACCESS_KEY_ID'] ?? '';
  const secretAccessKey = env['S3_SECRET_ACCESS_KEY'] ?? '';
  // The secret is never echoed.
  for (const [name, value] of [
    ['S3_ACCESS_KEY_ID', accessKeyId],
    ['S3_SECRET_ACCESS_KEY', secretAccessKey],
  ] as const)
    if (value === '') problems.push(`${name} must be set when FILE_STORE is s3://`);
  const bucket = m[1] as string;
  return {
    bucket,
    prefix,
    endpoint,
    region,
    accessKeyId,
    secretAccessKey,
    forcePathStyle: flag('S3_FORCE_PATH_STYLE'),
    describe: `s3://${bucket}/${prefix}${endpoint === null ? '' : ` at ${endpoint}`}`,
  };
}
