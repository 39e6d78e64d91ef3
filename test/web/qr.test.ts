import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { qrSvg } from '../../src/web/qr.ts';
import { scanQrSvg } from '../helpers/qr-scan.ts';

describe('qrSvg', () => {
  test('draws one rectangle run per row segment of dark modules, inside the quiet zone', () => {
    const svg = qrSvg('https://paste.example/s/AbCdEf', 'QR code');
    assert.match(svg, /^<svg xmlns="http:\/\/www.w3.org\/2000\/svg" /, 'an SVG document of its own');
    assert.match(svg, /<rect fill="#fff" [^>]*\/><path fill="#000" d="/, "dark on white, whatever the page's colours");
    const n = Number(/data-modules="(\d+)"/.exec(svg)?.[1]);
    assert.ok(n >= 21 && (n - 17) % 4 === 0, 'a valid QR version size');
    assert.match(svg, new RegExp(`viewBox="0 0 ${n + 4} ${n + 4}"`));
    // The three finder patterns start with a 7-module dark run at the corners.
    assert.match(svg, /d="M2 2h7v1h-7z/);
    assert.ok(svg.includes(`M${n - 5} 2h7v1h-7z`));
    assert.ok(svg.includes(`M2 ${n - 5}h7v1h-7z`));
    assert.doesNotMatch(svg, /style=|<script/);
  });

  test('scans back to the text it encodes, short links of every length a BASE_URL gives', () => {
    for (const text of [
      'http://localhost:8080/s/AbCdEf',
      'https://paste.example/s/Zz09aB',
      `https://${'sub.'.repeat(20)}example.org/s/q1W2e3`,
    ]) {
      assert.equal(scanQrSvg(qrSvg(text, 'QR code')), text);
    }
    assert.equal(scanQrSvg(qrSvg('x', 'QR code').replace(/d="[^"]*"/, 'd=""')), null, 'a blank image scans to nothing');
  });

  test('escapes its label', () => {
    assert.match(qrSvg('x', '<b>"'), /<title>&lt;b&gt;&quot;<\/title>/);
  });
});
