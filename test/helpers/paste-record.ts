import { encodeContent, type Paste } from '../../src/paste/paste.ts';
import type { CreateInput } from '../../src/paste/validate.ts';

/** A public paste record made at time 0 holding `text`, with `over`'s fields instead, for tests of the stores. */
export const pasteRecord = (hash: string, over: Partial<Paste> = {}): Paste => ({
  v: 1,
  hash,
  title: '',
  content_json: encodeContent('text'),
  language: 'text',
  privacy: 'public',
  highlight: 1,
  burn_after_read: 0,
  burned: false,
  password: null,
  owner_id: 1,
  created_at: 0,
  updated_at: 0,
  expire_at: null,
  view_count: 0,
  receipt: null,
  revision: 1,
  ...over,
});

/** A create as the service takes it: a public paste of 'hello' kept forever, with `over`'s fields instead. */
export const createInput = (over: Partial<CreateInput> = {}): CreateInput => ({
  title: '',
  content: 'hello',
  language: 'text',
  privacy: 'public',
  expiry: 'never',
  password: null,
  highlight: 1,
  burn_after_read: 0,
  ...over,
});
